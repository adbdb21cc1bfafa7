"""Where ranks meet: an ``init_method`` URL turned into a store, this process's rank and the world
size, as PyTorch's rendezvous handlers do: ``env://`` (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE),
``tcp://host:port`` and ``file:///path``, with rank and world_size from the arguments or from the
URL's query (``?rank=0&world_size=2``)."""

import os
from datetime import timedelta
from urllib.parse import parse_qs, urlencode, urlparse

from tensorplay.distributed.store import FileStore, TCPStore

__all__ = ["rendezvous", "register_rendezvous_handler"]

_handlers = {}  # scheme -> the user's handler (register_rendezvous_handler)


def register_rendezvous_handler(scheme, handler):
    if scheme in _handlers or scheme in ("env", "tcp", "file"):
        raise RuntimeError(f"Rendezvous handler for {scheme}:// already registered")
    _handlers[scheme] = handler


def _query_int(query, name, given):
    if given is not None and given >= 0:
        return given
    if name in query:
        return int(query[name][0])
    return None


def _env(name, method):
    value = os.environ.get(name)
    if value is None:
        raise ValueError(f"Error initializing torch.distributed using {method} rendezvous: environment variable "
                         f"{name} expected, but not set")
    return value


def rendezvous(url, rank=-1, world_size=-1, timeout=None):
    """(store, rank, world_size, master address) for url."""
    parsed = urlparse(url)
    query = parse_qs(parsed.query)
    rank = _query_int(query, "rank", rank)
    world_size = _query_int(query, "world_size", world_size)
    if parsed.scheme in _handlers:
        # PyTorch's protocol: rank and world_size travel in the URL's query, the handler yields.
        given = {name: value for name, value in (("rank", rank), ("world_size", world_size))
                 if value is not None and name not in query}
        if given:
            url += ("&" if parsed.query else "?") + urlencode(given)
        store, rank, world_size = next(_handlers[parsed.scheme](url, timeout=timeout or timedelta(seconds=300)))
        return store, rank, world_size, ""
    if parsed.scheme == "env":
        rank = int(_env("RANK", "env://")) if rank is None else rank
        world_size = int(_env("WORLD_SIZE", "env://")) if world_size is None else world_size
        host, port = _env("MASTER_ADDR", "env://"), int(_env("MASTER_PORT", "env://"))
    elif parsed.scheme == "tcp":
        if rank is None or world_size is None:
            raise ValueError("Error initializing torch.distributed using tcp:// rendezvous: rank and world_size "
                             "must be given, as arguments or in the URL's query")
        if parsed.hostname is None or parsed.port is None:
            raise ValueError(f"Error initializing torch.distributed using tcp:// rendezvous: port number missing "
                             f"in {url!r}")
        host, port = parsed.hostname, parsed.port
    elif parsed.scheme == "file":
        if rank is None or world_size is None:
            raise ValueError("Error initializing torch.distributed using file:// rendezvous: rank and world_size "
                             "must be given, as arguments or in the URL's query")
        path = parsed.path
        if not path:
            raise ValueError(f"Error initializing torch.distributed using file:// rendezvous: no path in {url!r}")
        store = FileStore(path, world_size)
        if timeout is not None:
            store.set_timeout(timeout)
        return store, rank, world_size, ""
    else:
        raise RuntimeError(f"No rendezvous handler for {parsed.scheme}://")
    if not 0 <= rank < world_size:
        raise ValueError(f"Invalid rank {rank} for world size {world_size}: the rank must be in [0, world_size)")
    # The process group's own rendezvous names the ranks that do not arrive; the store's would only
    # count them.
    store = TCPStore(host, port, world_size, rank == 0, timeout or timedelta(seconds=300), wait_for_workers=False)
    return store, rank, world_size, host
