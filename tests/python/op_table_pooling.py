"""The op-table rows of nn.functional's pooling family (see op_table.py)."""

from op_table import Op, S  # noqa: F401

ROWS = []
