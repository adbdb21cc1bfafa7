"""tensorplay.utils.tensorboard: SummaryWriter, which logs scalars, histograms, images, text,
hyperparameters and model graphs for TensorBoard, as torch.utils.tensorboard does.

It is built on the tensorboard package (``pip install tensorboard``): the event files are written by
tensorboard's own EventFileWriter, in its protocol buffers, so TensorBoard and its EventAccumulator
read them as PyTorch's. Importing this module without the package raises the ImportError that names
it, as PyTorch's does.

>>> from tensorplay.utils.tensorboard import SummaryWriter  # doctest: +SKIP
>>> with SummaryWriter("runs/demo") as writer:  # doctest: +SKIP
...     for step in range(3):
...         writer.add_scalar("loss", 1.0 / (step + 1), step)
"""

import tensorboard

if tuple(int(part) for part in tensorboard.__version__.split(".")[:2] if part.isdigit()) < (1, 15):
    raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above")

del tensorboard

from tensorboard.summary.writer.record_writer import RecordWriter  # noqa: E402

from tensorplay.utils.tensorboard.writer import FileWriter, SummaryWriter  # noqa: E402

__all__ = ["FileWriter", "RecordWriter", "SummaryWriter"]
