"""Upsampling layers."""

__all__ = []
