"""SummaryWriter and FileWriter, as torch.utils.tensorboard's: a SummaryWriter turns values into
summaries (summary.py) and hands them to a FileWriter, which stamps each with its step and wall time
and queues it on tensorboard's EventFileWriter, whose thread writes the event file."""

import os
import socket
import time
from datetime import datetime

from tensorboard.compat.proto.event_pb2 import Event, SessionLog, TaggedRunMetadata
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from tensorplay.utils.tensorboard import summary
from tensorplay.utils.tensorboard._graph import graph

__all__ = ["FileWriter", "SummaryWriter"]


class FileWriter:
    """Writes Event protos to one event file in `log_dir`, asynchronously: they reach the disk every
    `flush_secs` seconds, when `max_queue` are pending, or on flush() and close()."""

    def __init__(self, log_dir, max_queue=10, flush_secs=120, filename_suffix=""):
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs, filename_suffix)

    def get_logdir(self):
        return self.event_writer.get_logdir()

    def add_event(self, event, step=None, walltime=None):
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(self, summary, global_step=None, walltime=None):
        self.add_event(Event(summary=summary), global_step, walltime)

    def add_graph(self, graph_profile, walltime=None):
        """Writes a (GraphDef, RunMetadata) pair: the graph, then its run metadata under "step1"."""
        graph_def, run_metadata = graph_profile
        self.add_event(Event(graph_def=graph_def.SerializeToString()), None, walltime)
        tagged = TaggedRunMetadata(tag="step1", run_metadata=run_metadata.SerializeToString())
        self.add_event(Event(tagged_run_metadata=tagged), None, walltime)

    def flush(self):
        self.event_writer.flush()

    def close(self):
        self.event_writer.close()


class SummaryWriter:
    """Logs values for TensorBoard to an event file in `log_dir` (default:
    ``runs/<month><day>_<hour>-<minute>-<second>_<hostname><comment>``).

    Tensors are read through NumPy (detached, copied to the CPU). `purge_step` makes TensorBoard
    drop the events at or after that step that an earlier, crashed run left in the directory.

    >>> writer = SummaryWriter("runs/exp1")  # doctest: +SKIP
    >>> writer.add_scalar("loss", 0.5, global_step=10)  # doctest: +SKIP
    >>> writer.close()  # doctest: +SKIP
    """

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120, filename_suffix=""):
        if not log_dir:
            log_dir = os.path.join("runs", datetime.now().strftime("%b%d_%H-%M-%S") + "_" + socket.gethostname()
                                   + comment)
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer = self.all_writers = None
        self._get_file_writer()

    def _get_file_writer(self):
        """The writer of log_dir's event file, made again after close()."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                self.file_writer.add_event(Event(step=self.purge_step, file_version="brain.Event:2"))
                self.file_writer.add_event(Event(step=self.purge_step,
                                                 session_log=SessionLog(status=SessionLog.START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self):
        return self.log_dir

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        """Logs one number (a Python number or a one-element tensor) under `tag` at `global_step`."""
        self._get_file_writer().add_summary(summary.scalar(tag, scalar_value, new_style, double_precision),
                                            global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Logs several numbers into one chart `main_tag`: each goes to its own run, the subdirectory
        ``<log_dir>/<main_tag>_<tag>`` (a "/" in main_tag becomes "_"), under the tag `main_tag`."""
        walltime = time.time() if walltime is None else walltime
        log_dir = self._get_file_writer().get_logdir()
        for tag, scalar_value in tag_scalar_dict.items():
            run_dir = log_dir + "/" + main_tag.replace("/", "_") + "_" + tag
            if run_dir not in self.all_writers:
                self.all_writers[run_dir] = FileWriter(run_dir, self.max_queue, self.flush_secs, self.filename_suffix)
            self.all_writers[run_dir].add_summary(summary.scalar(main_tag, scalar_value), global_step, walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None, max_bins=None):
        """Logs the distribution of `values`. `bins` is "tensorflow" (buckets about 10% wide at every
        magnitude) or anything numpy.histogram takes; `max_bins` merges neighbouring buckets down
        to at most that many."""
        self._get_file_writer().add_summary(summary.histogram(tag, values, bins, max_bins), global_step, walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        """Logs one image, laid out as `dataformats` (CHW, HWC, HW, ...): uint8 pixels as they are,
        floats read as [0, 1]."""
        self._get_file_writer().add_summary(summary.image(tag, img_tensor, dataformats), global_step, walltime)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"):
        """Logs a batch of images as one grid of up to eight per row."""
        self._get_file_writer().add_summary(summary.image(tag, img_tensor, dataformats), global_step, walltime)

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None):
        """Logs a matplotlib figure (or a list of them, as a batch) as an image."""
        import numpy as np

        figures = figure if isinstance(figure, list) else [figure]
        images = []
        for fig in figures:
            fig.canvas.draw()
            images.append(np.asarray(fig.canvas.buffer_rgba())[:, :, :3].transpose(2, 0, 1))
            if close:
                import matplotlib.pyplot as plt

                plt.close(fig)
        if isinstance(figure, list):
            self.add_images(tag, np.stack(images), global_step, walltime, dataformats="NCHW")
        else:
            self.add_image(tag, images[0], global_step, walltime, dataformats="CHW")

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        """Logs a string (Markdown) for TensorBoard's text tab."""
        self._get_file_writer().add_summary(summary.text(tag, text_string), global_step, walltime)

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None, run_name=None, global_step=None):
        """Logs one run's hyperparameters with its final metrics for TensorBoard's HParams tab, into
        the subdirectory `run_name` (default: the current time); the metrics are logged there as
        scalars too."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        records = summary.hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        log_dir = os.path.join(self._get_file_writer().get_logdir(), run_name or str(time.time()))
        with SummaryWriter(log_dir=log_dir) as run:
            for record in records:
                run.file_writer.add_summary(record, global_step)
            for k, v in metric_dict.items():
                run.add_scalar(k, v, global_step)

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        """Logs the op graph of one run of the module `model` on `input_to_model` (a tensor or a tuple
        of them) for TensorBoard's Graphs tab; `verbose` prints the GraphDef.

        PyTorch records the graph with torch.jit.trace. tensorplay has no tracer: it runs the model
        once in eval mode, on copies of the inputs that require grad, and reads the graph off autograd
        (_graph.py says what that shows and what it leaves out), so `use_strict_trace` has no effect.
        """
        self._get_file_writer().add_graph(graph(model, input_to_model, verbose))

    def flush(self):
        """Writes the pending events of every run to disk."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()

    def close(self):
        """Flushes and closes every event file; a later add_* call opens a new one."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()
