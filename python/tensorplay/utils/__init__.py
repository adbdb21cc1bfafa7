"""tensorplay.utils: helpers outside the tensor core, mirroring torch.utils."""

from tensorplay.utils import checkpoint, data, dlpack

__all__ = ["checkpoint", "data", "dlpack"]
