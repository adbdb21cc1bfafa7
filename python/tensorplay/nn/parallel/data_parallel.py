"""DataParallel without devices to split over: it forwards to the wrapped module."""

from tensorplay.nn.modules.module import Module

__all__ = ["DataParallel"]


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
