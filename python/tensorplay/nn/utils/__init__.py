"""tensorplay.nn.utils: gradient clipping, flattening parameters, and padded batches of sequences (rnn)."""

from tensorplay.nn.utils.clip_grad import clip_grad_norm_, clip_grad_value_
from tensorplay.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters
from tensorplay.nn.utils import rnn
