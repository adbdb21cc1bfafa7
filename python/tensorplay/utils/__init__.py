"""tensorplay.utils: helpers outside the tensor core, mirroring torch.utils."""

from tensorplay.utils import data

__all__ = ["data"]
