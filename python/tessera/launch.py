"""The spec's launch.grid(blocks=(...), threads=(...))(kernel)(args...): a launch with an
explicit grid of groups and tiles per group (docs/abi.md section 3)."""


def grid(blocks=None, threads=None, stream=None, shared=0):
    """launch.grid(blocks=(g,), threads=(t,))(kernel)(args...)."""

    def with_kernel(kernel):
        return kernel.launch(grid=blocks, group=threads, dynamic_shared_bytes=shared, stream=stream)

    return with_kernel
