"""tensorplay.nn.functional: PyTorch's functional API, written by family in tensorplay/nn/_functional/
(over the C++ ops in tensorplay._C._nn, or as composites of tensor ops)."""

from tensorplay.nn._functional.activation import *  # noqa: F401,F403
from tensorplay.nn._functional.attention import *  # noqa: F401,F403
from tensorplay.nn._functional.conv import *  # noqa: F401,F403
from tensorplay.nn._functional.distance import *  # noqa: F401,F403
from tensorplay.nn._functional.dropout import *  # noqa: F401,F403
from tensorplay.nn._functional.linear import *  # noqa: F401,F403
from tensorplay.nn._functional.loss import *  # noqa: F401,F403
from tensorplay.nn._functional.normalization import *  # noqa: F401,F403
from tensorplay.nn._functional.pooling import *  # noqa: F401,F403
from tensorplay.nn._functional.scripting import *  # noqa: F401,F403
from tensorplay.nn._functional.sparse import *  # noqa: F401,F403
from tensorplay.nn._functional.vision import *  # noqa: F401,F403
from tensorplay.nn._functional._utils import _pair, _reduction, _single  # noqa: F401  (used by the modules)
