"""The lazy modules, whose parameters take their shapes from the first input."""

__all__ = []
