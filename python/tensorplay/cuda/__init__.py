"""tensorplay.cuda: this build has no CUDA backend, so no device is ever available."""


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0
