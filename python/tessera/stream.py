"""The spec's streams: stream.new(), stream.memcpy_async(dst=, src=, stream=), stream.synchronize().

Launches go to a stream by `kernel[grid, group, s](...)`, `kernel.launch(stream=s)(...)`, or every
launch of a block: `with stream.use(s): ...`. Without one, a call on PyTorch CUDA tensors runs on
PyTorch's current stream, and any other call on the default stream.
"""
import contextlib

from . import _tessera

Stream = _tessera.Stream
Event = _tessera.Event


def new():
    """A new stream of the runtime."""
    return _tessera.Stream()


def memcpy_async(dst, src, stream=None):
    """dst[:] = src, ordered on `stream`: host to device, device to host or either way within one
    device (two dense tensors of the same dtype and element count). A copy from host memory has
    read it when the call returns."""
    _tessera.memcpy(dst, src, stream, True)


def memcpy(dst, src):
    """dst[:] = src, synchronously."""
    _tessera.memcpy(dst, src, None, False)


def synchronize(stream=None):
    """Waits for `stream`'s work, or for all the device's work when None (reporting a kernel fault
    of earlier work)."""
    if stream is None:
        _tessera.synchronize()
    else:
        stream.synchronize()


@contextlib.contextmanager
def use(stream):
    """Every launch and host function call of this thread inside the block runs on `stream` (a
    tessera stream, a torch.cuda.Stream or a CUstream as an int)."""
    _tessera._push_stream(stream)
    try:
        yield stream
    finally:
        _tessera._pop_stream()
