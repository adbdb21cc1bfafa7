"""tensorplay.backends.kleidiai, as torch.backends.kleidiai: Arm's KleidiAI kernels are not built."""


def is_available():
    return False
