"""The IDX format of the MNIST family: a big-endian header, then the raw array.

    2 bytes   zero
    1 byte    element type (0x08 unsigned byte, 0x09 signed byte, 0x0B int16, 0x0C int32,
              0x0D float32, 0x0E float64)
    1 byte    number of dims
    4 bytes   per dim: its size (unsigned, big-endian)
    the rest  the elements, row-major, big-endian

Files may be gzipped (the usual .gz distribution). The reader treats a file as untrusted: it
checks the magic bytes, the element type and the rank it expects, and that the data is exactly
as long as the header says, reading in chunks so that a forged size costs no more memory than
the file really holds. Anything wrong raises ValueError naming the file.
"""

import gzip
import os
import zlib

import numpy as np

__all__ = ["read_idx"]

_TYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}
_CHUNK = 1 << 20


def _open(path):
    with open(path, "rb") as f:
        gzipped = f.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rb") if gzipped else open(path, "rb")


def _read(f, n, path, what):
    """Exactly n bytes, read in chunks: a truncated file fails having allocated what it holds."""
    parts, got = [], 0
    while got < n:
        part = f.read(min(_CHUNK, n - got))
        if not part:
            raise ValueError(f"{path}: truncated: {what} needs {n} bytes, the file has {got}")
        parts.append(part)
        got += len(part)
    return b"".join(parts)


def read_idx(path, dtype=np.uint8, ndim=None):
    """The array stored in the IDX file at path, which must hold `dtype` elements in `ndim` dims."""
    path = os.fspath(path)
    code = next(c for c, stored in _TYPES.items() if np.dtype(stored).newbyteorder("=") == np.dtype(dtype))
    try:
        with _open(path) as f:
            header = _read(f, 4, path, "the magic number")
            if header[:3] != bytes([0, 0, code]) or (ndim is not None and header[3] != ndim):
                expected = f"0x{(code << 8) | ndim:08X}" if ndim is not None else f"0x0000{code:02X}xx"
                raise ValueError(f"{path}: wrong magic number 0x{int.from_bytes(header, 'big'):08X}, expected "
                                 f"{expected} (IDX of {np.dtype(dtype).name}"
                                 + (f", {ndim} dims)" if ndim is not None else ")"))
            shape = tuple(int.from_bytes(_read(f, 4, path, "the dims"), "big") for _ in range(header[3]))
            stored = np.dtype(_TYPES[code])
            size = int(np.prod(shape, dtype=object)) * stored.itemsize
            data = _read(f, size, path, f"an array of shape {shape}")
            if f.read(1):
                raise ValueError(f"{path}: an array of shape {shape} takes {size} bytes, but the file has more")
    except (OSError, EOFError, zlib.error) as e:
        if isinstance(e, FileNotFoundError):
            raise
        raise ValueError(f"{path}: not a readable IDX file ({e})") from e
    return np.frombuffer(data, dtype=stored).astype(np.dtype(dtype)).reshape(shape)
