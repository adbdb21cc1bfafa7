"""Fold and Unfold."""

__all__ = []
