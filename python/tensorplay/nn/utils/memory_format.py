"""Converting convolution weights to a memory format (channels_last), so that a model whose inputs
are channels-last keeps its convolutions' operands in one layout."""

from tensorplay import nn

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module, memory_format, conv_types):
    if isinstance(module, conv_types):
        weight = module.weight.detach().clone(memory_format=memory_format)
        module.weight.data = weight.resize_(weight.size(), memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, conv_types)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """Lays out the weight of every Conv2d and ConvTranspose2d in module (itself included) in
    memory_format, and returns module."""
    return _convert(module, memory_format, (nn.Conv2d, nn.ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    """Lays out the weight of every Conv3d and ConvTranspose3d in module (itself included) in
    memory_format (channels_last_3d), and returns module."""
    return _convert(module, memory_format, (nn.Conv3d, nn.ConvTranspose3d))
