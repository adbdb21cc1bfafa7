"""tensorplay.optim: optimizers (SGD, Adam, AdamW, RMSprop and Adagrad step in C++ over whole parameter groups;
Adamax, NAdam, RAdam, Adadelta, Rprop, ASGD, Adafactor, Muon, LBFGS and SparseAdam in Python), learning-rate
schedulers and swa_utils."""

from tensorplay.optim.adadelta import Adadelta
from tensorplay.optim.adafactor import Adafactor
from tensorplay.optim.adagrad import Adagrad
from tensorplay.optim.adam import Adam, AdamW
from tensorplay.optim.adamax import Adamax
from tensorplay.optim.asgd import ASGD
from tensorplay.optim.lbfgs import LBFGS
from tensorplay.optim.muon import Muon
from tensorplay.optim.nadam import NAdam
from tensorplay.optim.optimizer import Optimizer
from tensorplay.optim.radam import RAdam
from tensorplay.optim.rmsprop import RMSprop
from tensorplay.optim.rprop import Rprop
from tensorplay.optim.sgd import SGD
from tensorplay.optim.sparse_adam import SparseAdam
from tensorplay.optim import lr_scheduler, swa_utils
