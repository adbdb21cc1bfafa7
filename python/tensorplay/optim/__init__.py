"""tensorplay.optim: optimizers (their steps run in C++ over whole parameter groups),
learning-rate schedulers and weight averaging (swa_utils)."""

from tensorplay.optim.adagrad import Adagrad
from tensorplay.optim.adam import Adam, AdamW
from tensorplay.optim.optimizer import Optimizer
from tensorplay.optim.rmsprop import RMSprop
from tensorplay.optim.sgd import SGD
from tensorplay.optim import lr_scheduler, swa_utils
