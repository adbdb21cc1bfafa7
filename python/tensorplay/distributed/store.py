"""The stores ranks meet through (torch.distributed's Store classes), from tensorplay's C++ core, with
PyTorch's constructor signatures."""

from datetime import timedelta

from tensorplay._C import _distributed as _dist

__all__ = ["Store", "TCPStore", "FileStore", "HashStore", "PrefixStore"]

Store = _dist.Store
HashStore = _dist.HashStore
PrefixStore = _dist.PrefixStore
FileStore = _dist.FileStore


class TCPStore(_dist.TCPStore):
    """A store served over TCP by the rank with ``is_master=True``; the others connect to it.
    ``multi_tenant``, ``master_listen_fd`` and ``use_libuv`` are accepted for PyTorch's signature;
    one server per port is all tensorplay runs."""

    def __init__(self, host_name, port, world_size=None, is_master=False, timeout=timedelta(seconds=300),
                 wait_for_workers=True, multi_tenant=False, master_listen_fd=None, use_libuv=True):
        if master_listen_fd is not None:
            raise NotImplementedError("TCPStore: master_listen_fd is not supported by tensorplay")
        super().__init__(host_name, port, world_size, is_master, timeout, wait_for_workers)
