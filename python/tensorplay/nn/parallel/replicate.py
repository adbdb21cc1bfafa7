"""replicate, as torch.nn.parallel's on a machine without GPUs: copying a module's parameters to
GPUs is PyTorch's error for tensors on the CPU."""

__all__ = ["replicate"]


def replicate(network, devices, detach=False):
    """One copy of `network` per device in `devices`, sharing its parameters' gradients."""
    if not devices:
        return []
    raise AssertionError("Broadcast function not implemented for CPU tensors")
