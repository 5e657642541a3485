"""The package's exceptions. Every failure of the runtime arrives as one of them, carrying the
runtime's message (which names the kernel or function, the parameter and the problem) and the
status name (TESSERA_ERROR_...)."""


class Error(RuntimeError):
    """A failure the runtime reported: a launch refused by its checks, a kernel fault, a driver
    error. `status` is the runtime's status name, `message` its message."""

    def __init__(self, message, status="TESSERA_ERROR_INTERNAL"):
        super().__init__(message)
        self.message = message
        self.status = status

    def __str__(self):
        return self.message


class DTypeError(Error, TypeError):
    """A tensor or scalar of another dtype than the parameter declares."""


class ShapeError(Error, ValueError):
    """A tensor whose rank or extents disagree with the parameter's shape."""


class CompileError(Error):
    """tesserac refused the source; `diagnostics` is its output."""

    def __init__(self, message, diagnostics=""):
        super().__init__(message, "TESSERA_COMPILE_ERROR")
        self.diagnostics = diagnostics
