from tensorplay.nn.modules.activation import GELU, LeakyReLU, LogSoftmax, PReLU, ReLU, Sigmoid, SiLU, Softmax, Tanh
from tensorplay.nn.modules.attention import MultiheadAttention
from tensorplay.nn.modules.container import ModuleDict, ModuleList, Sequential
from tensorplay.nn.modules.conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d
from tensorplay.nn.modules.dropout import Dropout
from tensorplay.nn.modules.linear import Bilinear, Flatten, Identity, Linear, Unflatten
from tensorplay.nn.modules.loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, KLDivLoss, L1Loss,
                                        MSELoss, NLLLoss, SmoothL1Loss)
from tensorplay.nn.modules.module import Module
from tensorplay.nn.modules.distance import CosineSimilarity, PairwiseDistance
from tensorplay.nn.modules.normalization import BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm
from tensorplay.nn.modules.pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d
from tensorplay.nn.modules.rnn import GRUCell, LSTMCell, RNNCell
from tensorplay.nn.modules.sparse import Embedding
from tensorplay.nn.modules.transformer import TransformerEncoderLayer
