"""DataParallel and data_parallel without devices to split over: the module forwards to the wrapped
module, and the function, which needs the devices' type, raises PyTorch's error."""

from tensorplay.nn.modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


class DataParallel(Module):
    """Wraps `module` as torch.nn.DataParallel does, so that its parameters are `module.<name>` and
    `.module` is the model. tensorplay has no set of accelerators to scatter a batch over, which is
    torch's case with no GPU: device_ids is empty and the forward is the module's own."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = []

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    """DataParallel's forward as a function: needs the devices' type, which there is none of."""
    raise RuntimeError("device type could not be determined")
