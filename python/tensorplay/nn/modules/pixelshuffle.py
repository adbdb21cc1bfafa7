"""PixelShuffle and PixelUnshuffle."""

__all__ = []
