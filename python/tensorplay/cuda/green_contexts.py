"""CUDA green contexts (a share of a GPU's multiprocessors), as torch.cuda.green_contexts in a build
without them: the class exists and creating a context raises PyTorch's RuntimeError."""

__all__ = ["GreenContext"]


def _unbuilt():
    raise RuntimeError("PyTorch was not built with Green Context support!")


class GreenContext:
    """A context that runs on part of a GPU. Make one with GreenContext.create(...); this build
    cannot."""

    @staticmethod
    def create(*, num_sms=None, workqueue_scope=None, workqueue_concurrency_limit=None, device_id=None):
        _unbuilt()

    @staticmethod
    def max_workqueue_concurrency(device_id=None):
        _unbuilt()
