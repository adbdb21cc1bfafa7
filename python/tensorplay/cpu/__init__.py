"""tensorplay.cpu: CPU-specific pieces, as in torch.cpu."""

from tensorplay.cpu import amp

__all__ = ["amp"]
