"""tensorplay.nn.parallel: DataParallel and the functions it is made of, for code written for several
devices, as torch.nn.parallel answers on a machine without GPUs: DataParallel runs the module in
this process, and the functions that split work across devices raise PyTorch's errors for tensors.
DistributedDataParallel trains one replica per process (tensorplay.distributed)."""

from tensorplay.nn.parallel.data_parallel import DataParallel, data_parallel
from tensorplay.nn.parallel.distributed import DistributedDataParallel
from tensorplay.nn.parallel.parallel_apply import parallel_apply
from tensorplay.nn.parallel.replicate import replicate
from tensorplay.nn.parallel.scatter_gather import gather, scatter

__all__ = ["replicate", "scatter", "parallel_apply", "gather", "data_parallel", "DataParallel",
           "DistributedDataParallel"]
