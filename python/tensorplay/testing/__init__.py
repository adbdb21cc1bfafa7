"""tensorplay.testing (PyTorch's torch.testing): assert_close to compare results within dtype-aware tolerances,
make_tensor to create random test inputs, and the deprecated assert_allclose."""

from tensorplay.testing._comparison import assert_allclose, assert_close
from tensorplay.testing._creation import make_tensor

__all__ = ["assert_close", "make_tensor", "assert_allclose"]
