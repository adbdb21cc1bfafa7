"""tensorplay.backends.mkl, as torch.backends.mkl: tensorplay is not built with Intel MKL (its
LAPACK and BLAS come from OpenBLAS, its matmuls from oneDNN), so ``is_available()`` is False where
PyTorch's x86 wheel says True."""

VERBOSE_OFF = 0
VERBOSE_ON = 1


def is_available():
    return False


class verbose:
    """``with verbose(VERBOSE_ON):`` makes MKL print each call in the block; without MKL, entering
    with any level but VERBOSE_OFF fails as PyTorch's does when MKL refuses."""

    def __init__(self, enable):
        self.enable = enable

    def __enter__(self):
        if self.enable == VERBOSE_OFF:
            return None
        raise AssertionError("Failed to set MKL into verbose mode. Please consider to disable this verbose scope.")

    def __exit__(self, exc_type, exc_val, exc_tb):
        return False
