"""A local package that itself imports torch."""

from toydata.blobs import Blobs

__all__ = ["Blobs"]
