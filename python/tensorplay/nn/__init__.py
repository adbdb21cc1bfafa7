"""tensorplay.nn: modules, parameters, the functional API, initialisation and utilities."""

from tensorplay.nn import functional, init
from tensorplay.nn.modules import *  # noqa: F401,F403
from tensorplay.nn.parameter import Buffer, Parameter
from tensorplay.nn import utils
