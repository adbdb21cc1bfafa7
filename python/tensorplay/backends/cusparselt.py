"""tensorplay.backends.cusparselt, as torch.backends.cusparselt in a build without CUDA."""

__all__ = ["version", "is_available", "get_max_alg_id"]


def version():
    """cuSPARSELt's version, or None without it."""
    return None


def is_available():
    return False


def get_max_alg_id():
    return None
