"""From what SummaryWriter is given to the arrays its summaries are made of: tensors and numbers to
NumPy arrays, images in any layout to one HWC uint8 array (a batch laid out as a grid), and that
array to PNG bytes."""

import numbers
import struct
import zlib

import numpy as np

from tensorplay import _C


def to_numpy(x):
    """`x` (a tensorplay tensor, a NumPy array or a Python number) as a NumPy array; a tensor is
    detached and copied from its device, and bfloat16 and float16 become float32."""
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, numbers.Number):
        return np.array([x])
    if isinstance(x, _C.Tensor):
        if x.dtype in (_C.bfloat16, _C.float16):
            x = x.float()
        return x.detach().cpu().numpy()
    raise NotImplementedError(f"Got {type(x)}, but numpy array or tensorplay tensor are expected.")


def make_grid(images, ncols=8):
    """A batch of NCHW images (C 1 or 3) as one 3HW image, laid out in rows of up to `ncols`."""
    if images.shape[1] == 1:
        images = np.concatenate([images] * 3, axis=1)
    if images.ndim != 4 or images.shape[1] != 3:
        raise AssertionError("a batch of images needs 1 or 3 channels")
    count, _, height, width = images.shape
    ncols = min(count, ncols)
    nrows = -(-count // ncols)
    canvas = np.zeros((3, height * nrows, width * ncols), dtype=images.dtype)
    for i in range(count):
        row, col = divmod(i, ncols)
        canvas[:, row * height:(row + 1) * height, col * width:(col + 1) * width] = images[i]
    return canvas


def to_hwc(array, dataformats):
    """`array` laid out as `dataformats` (a permutation of some of N, C, H, W) as an HWC image with
    three (or, given four, four) channels; a batch becomes a grid, one channel or none becomes gray."""
    if len(set(dataformats)) != len(dataformats):
        raise AssertionError(f"You can not use the same dimension shordhand twice. input_format: {dataformats}")
    if array.ndim != len(dataformats):
        raise AssertionError(f"size of input tensor and input format are different. tensor shape: {array.shape}, "
                             f"input_format: {dataformats}")
    dataformats = dataformats.upper()
    if len(dataformats) == 4:
        return make_grid(array.transpose([dataformats.find(c) for c in "NCHW"])).transpose(1, 2, 0)
    if len(dataformats) == 3:
        hwc = array.transpose([dataformats.find(c) for c in "HWC"])
        return np.concatenate([hwc] * 3, axis=2) if hwc.shape[2] == 1 else hwc
    if len(dataformats) == 2:
        return np.stack([array.transpose([dataformats.find(c) for c in "HW"])] * 3, axis=2)
    raise AssertionError(f"dataformats must have 2, 3 or 4 dimensions, got {dataformats}")


def to_uint8(image):
    """Pixels as bytes: uint8 as they are, anything else read as [0, 1] and scaled to [0, 255]."""
    scale = 1 if image.dtype == np.uint8 else 255
    return (image.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)


def encode_png(image):
    """An HWC uint8 image with 1, 3 or 4 channels as the bytes of a PNG file."""
    height, width, channels = image.shape
    color_type = {1: 0, 3: 2, 4: 6}[channels]
    rows = np.concatenate([np.zeros((height, 1), np.uint8), image.reshape(height, width * channels)], axis=1)

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, color_type, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows.tobytes(), 6))
            + chunk(b"IEND", b""))
