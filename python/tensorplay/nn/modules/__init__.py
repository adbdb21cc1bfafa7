"""The module classes of tensorplay.nn, one family per file; each file's __all__ is exported."""

from tensorplay.nn.modules.module import Module  # noqa: F401  (first: every family builds on it)
from tensorplay.nn.modules.activation import *  # noqa: F401,F403
from tensorplay.nn.modules.attention import *  # noqa: F401,F403
from tensorplay.nn.modules.channelshuffle import *  # noqa: F401,F403
from tensorplay.nn.modules.container import *  # noqa: F401,F403
from tensorplay.nn.modules.conv import *  # noqa: F401,F403
from tensorplay.nn.modules.distance import *  # noqa: F401,F403
from tensorplay.nn.modules.dropout import *  # noqa: F401,F403
from tensorplay.nn.modules.fold import *  # noqa: F401,F403
from tensorplay.nn.modules.lazy import *  # noqa: F401,F403
from tensorplay.nn.modules.linear import *  # noqa: F401,F403
from tensorplay.nn.modules.loss import *  # noqa: F401,F403
from tensorplay.nn.modules.normalization import *  # noqa: F401,F403
from tensorplay.nn.modules.padding import *  # noqa: F401,F403
from tensorplay.nn.modules.pixelshuffle import *  # noqa: F401,F403
from tensorplay.nn.modules.pooling import *  # noqa: F401,F403
from tensorplay.nn.modules.rnn import *  # noqa: F401,F403
from tensorplay.nn.modules.sparse import *  # noqa: F401,F403
from tensorplay.nn.modules.transformer import *  # noqa: F401,F403
from tensorplay.nn.modules.upsampling import *  # noqa: F401,F403
