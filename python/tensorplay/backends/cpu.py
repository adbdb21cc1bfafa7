"""tensorplay.backends.cpu, as torch.backends.cpu."""

from tensorplay import _C

__all__ = ["get_cpu_capability"]


def get_cpu_capability():
    """The instruction sets the CPU kernels run: "AVX512", "AVX2" or "DEFAULT". The best this CPU
    has, unless the environment variable TP_CPU_CAPABILITY (read once, before the first kernel;
    PyTorch's is ATEN_CPU_CAPABILITY) caps them at "avx2" or "default".

    >>> tensorplay.backends.cpu.get_cpu_capability()  # doctest: +SKIP
    'AVX512'
    """
    return _C._cpu_capability()
