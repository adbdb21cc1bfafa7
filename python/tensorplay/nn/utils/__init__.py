"""tensorplay.nn.utils: gradient clipping, flattening parameters, folding batch norm into the layer
before it, convolution weights in a memory format, weight and spectral normalisation (as hooks, or
as parametrizations), functional_call (stateless), skip_init, and padded batches of sequences (rnn)."""

from tensorplay.nn.utils.clip_grad import (clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_,
                                           get_total_norm)
from tensorplay.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters
from tensorplay.nn.utils.fusion import (fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval,
                                        fuse_linear_bn_weights)
from tensorplay.nn.utils.init import skip_init
from tensorplay.nn.utils.memory_format import convert_conv2d_weight_memory_format, convert_conv3d_weight_memory_format
from tensorplay.nn.utils.spectral_norm import remove_spectral_norm, spectral_norm
from tensorplay.nn.utils.weight_norm import remove_weight_norm, weight_norm
from tensorplay.nn.utils import parametrizations, parametrize, rnn, stateless
