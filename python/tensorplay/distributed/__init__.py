"""tensorplay.distributed: processes that train together, as torch.distributed.

Ranks meet through a store (``init_process_group``'s ``init_method``: ``env://``, ``tcp://host:port``
or ``file:///path``), then run collectives on Gloo, PyTorch's CPU engine, through tensorplay's C++
process group (csrc/tensorplay/distributed). docs/distributed.md describes the whole package. In a
build without Gloo, ``is_available()`` is False and every entry point raises a RuntimeError."""

from tensorplay._C import _distributed as _dist


def is_available():
    """Whether this build has the distributed package (it needs Gloo when it is built)."""
    return _dist.has_gloo


if is_available():
    from tensorplay.distributed.distributed_c10d import *  # noqa: F401,F403
    from tensorplay.distributed.distributed_c10d import __all__ as _c10d_all
    from tensorplay.distributed.store import FileStore, HashStore, PrefixStore, Store, TCPStore
    from tensorplay.distributed.buckets import GradBucket, _compute_bucket_assignment_by_size
    # RuntimeErrors: a store's timeouts raise DistStoreError, a lost store connection DistNetworkError.
    from tensorplay._C import (_DistBackendError as DistBackendError, _DistError as DistError,
                               _DistNetworkError as DistNetworkError, _DistStoreError as DistStoreError)

    __all__ = ["is_available", "Store", "TCPStore", "FileStore", "HashStore", "PrefixStore", "GradBucket",
               "DistError", "DistBackendError", "DistNetworkError", "DistStoreError", *_c10d_all]
else:
    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise RuntimeError(f"tensorplay.distributed.{name}: this build of tensorplay has no distributed package "
                           "(it was built without Gloo: install libgloo-dev and rebuild)")

    __all__ = ["is_available"]
