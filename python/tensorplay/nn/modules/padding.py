"""Padding layers."""

__all__ = []
