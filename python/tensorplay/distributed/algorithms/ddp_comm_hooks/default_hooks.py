"""The default communication hooks of DDP, as torch.distributed.algorithms.ddp_comm_hooks.default_hooks:
the plain average, and averages whose gradients travel in 16 bits (float16 or bfloat16: half the
bytes on the wire, rounded once to 16 bits on each rank, summed in float32, and written back to the
full-precision gradient). Each takes (process_group or None for the default group, bucket) and
returns a Future of the bucket's averaged buffer."""

import tensorplay
import tensorplay.distributed as dist

__all__ = ["allreduce_hook", "fp16_compress_hook", "bf16_compress_hook", "fp16_compress_wrapper",
           "bf16_compress_wrapper"]


def _group(process_group):
    return process_group if process_group is not None else dist.group.WORLD


def allreduce_hook(process_group, bucket):
    """The average of the bucket's gradients across ranks (divide, then sum)."""
    group = _group(process_group)
    buffer = bucket.buffer().div_(group.size())
    return dist.all_reduce(buffer, group=group, async_op=True).get_future().then(lambda fut: fut.value()[0])


def _compress_hook(dtype, process_group, bucket):
    group = _group(process_group)
    # Divided in float32, then rounded once (PyTorch rounds, then divides in 16 bits: the same values
    # for a world size that is a power of two, and one rounding fewer for the others).
    compressed = bucket.buffer().div_(group.size()).to(dtype)
    future = dist.all_reduce(compressed, group=group, async_op=True).get_future()

    def decompress(fut):
        buffer = bucket.buffer()
        buffer.copy_(fut.value()[0])
        return buffer

    return future.then(decompress)


def fp16_compress_hook(process_group, bucket):
    """The average, with the gradients sent as float16."""
    return _compress_hook(tensorplay.float16, process_group, bucket)


def bf16_compress_hook(process_group, bucket):
    """The average, with the gradients sent as bfloat16."""
    return _compress_hook(tensorplay.bfloat16, process_group, bucket)


def _compress_wrapper(dtype, hook):
    def wrapped(state, bucket):
        buffer = bucket.buffer()
        bucket.set_buffer(buffer.to(dtype))  # rounded to 16 bits, as the wire would carry it
        future = hook(state, bucket)

        def decompress(fut):
            result = fut.value()
            buffer.copy_(result)
            return buffer

        return future.then(decompress)

    return wrapped


def fp16_compress_wrapper(hook):
    """hook, run on the bucket's gradients rounded to float16."""
    return _compress_wrapper(tensorplay.float16, hook)


def bf16_compress_wrapper(hook):
    """hook, run on the bucket's gradients rounded to bfloat16."""
    return _compress_wrapper(tensorplay.bfloat16, hook)
