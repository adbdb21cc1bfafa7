"""parallel_apply, as torch.nn.parallel's on a machine without GPUs: it checks its arguments, then
asks the accelerator for each device's stream, and there is no accelerator: PyTorch's errors."""

from tensorplay import accelerator

__all__ = ["parallel_apply"]


def parallel_apply(modules, inputs, kwargs_tup=None, devices=None):
    """Runs modules[i] on inputs[i] (with kwargs_tup[i]) on devices[i], one thread per device."""
    if len(modules) != len(inputs):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number of inputs "
                             f"{len(inputs)}")
    if kwargs_tup is not None and len(modules) != len(kwargs_tup):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number of kwargs_tup "
                             f"{len(kwargs_tup)}")
    if devices is not None and len(modules) != len(devices):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number of devices "
                             f"{len(devices)}")
    for _ in modules:
        accelerator.current_stream(None)
    raise AssertionError("No available accelerator found.")
