"""The backward graph as Python sees it: x.grad_fn is a Node whose class is named after the op
(AddBackward0, MmBackward0, ...), with next_functions pointing at the nodes of its inputs."""

import weakref

_classes = {}
_live = weakref.WeakValueDictionary()  # one Python object per C++ node while it is referenced


class Node:
    __slots__ = ("_cnode", "__weakref__")

    def name(self):
        return self._cnode.name()

    @property
    def next_functions(self):
        return tuple((wrap(node), nr) for node, nr in self._cnode._next_edges())

    @property
    def variable(self):
        """The leaf tensor of an AccumulateGrad node."""
        leaf = self._cnode._variable()
        if leaf is None:
            raise AttributeError(f"'{self.name()}' object has no attribute 'variable'")
        return leaf

    def __repr__(self):
        return f"<{self.name()} object at {hex(id(self))}>"


def wrap(cnode):
    """The Python Node for a C++ node (the same object while it lives)."""
    if cnode is None:
        return None
    key = cnode._id()
    node = _live.get(key)
    if node is None:
        name = cnode.name().split("::")[-1]  # tensorplay::autograd::AccumulateGrad -> AccumulateGrad
        cls = _classes.get(name)
        if cls is None:
            cls = _classes[name] = type(name, (Node,), {"__slots__": ()})
        node = cls.__new__(cls)
        node._cnode = cnode
        _live[key] = node
    return node
