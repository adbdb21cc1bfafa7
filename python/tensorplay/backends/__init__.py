"""tensorplay.backends: what the kernels run on, as torch.backends tells."""

from tensorplay.backends import cpu

__all__ = ["cpu"]
