"""tensorplay.utils: helpers outside the tensor core, mirroring torch.utils."""

from tensorplay.utils import checkpoint, data

__all__ = ["checkpoint", "data"]
