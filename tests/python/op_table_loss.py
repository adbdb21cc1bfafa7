"""The op-table rows of nn.functional's loss family (see op_table.py)."""

from op_table import Op, S  # noqa: F401

ROWS = []
