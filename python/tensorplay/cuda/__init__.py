"""tensorplay.cuda: this build has no CUDA backend, so no device is ever available."""


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def is_bf16_supported() -> bool:
    return False


from tensorplay.cuda import amp  # noqa: E402  (after is_available, which amp reads)
