"""Optimizer: parameter groups, per-parameter state, and state_dict, as in torch.optim."""

import copy
from collections import defaultdict

from tensorplay import _C
from tensorplay._C import Tensor
from tensorplay.autograd.grad_mode import no_grad


class _RequiredParameter:
    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


class Optimizer:
    """Base class: subclasses implement step() over self.param_groups, keeping per-parameter
    state in self.state[param]."""

    def __init__(self, params, defaults):
        self.defaults = defaults
        self.state = defaultdict(dict)
        self.param_groups = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, but "
                            f"got {type(params).__name__}")
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group):
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering of "
                            "tensors in sets will change between runs. Please use a list instead.")
        else:
            params = list(params)
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        group = dict(param_group, params=params)
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            group.setdefault(name, default)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none=True):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    p.grad.detach_()
                    p.grad.zero_()

    def step(self, closure=None):
        raise NotImplementedError

    def _closure_loss(self, closure):
        if closure is None:
            return None
        from tensorplay.autograd.grad_mode import enable_grad
        with enable_grad():
            return closure()

    # ---- state_dict ----

    def state_dict(self):
        """Parameters are named by their position across groups, so the state can be loaded into
        an optimizer over other parameter objects with the same layout."""
        index = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = []
            for p in group["params"]:
                index.setdefault(id(p), len(index))
                packed["params"].append(index[id(p)])
            groups.append(packed)
        state = {index[id(p)]: value for p, value in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        state_dict = copy.deepcopy(state_dict)
        groups, saved_groups = self.param_groups, state_dict["param_groups"]
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of optimizer's "
                             "group")
        by_index = {}
        for group, saved in zip(groups, saved_groups):
            for index, p in zip(saved["params"], group["params"]):
                by_index[index] = p
        self.state = defaultdict(dict)
        for index, value in state_dict["state"].items():
            p = by_index.get(int(index))
            if p is None:
                continue
            self.state[p] = {k: self._cast_state(p, k, v) for k, v in value.items()}
        self.param_groups = [dict(saved, params=group["params"]) for group, saved in zip(groups, saved_groups)]

    @staticmethod
    def _cast_state(param, key, value):
        """State tensors follow their parameter's dtype and device, except step counters."""
        if isinstance(value, Tensor) and key != "step" and value.is_floating_point():
            return value.to(device=param.device, dtype=param.dtype)
        return value

    def __repr__(self):
        lines = [type(self).__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(k for k in group if k != "params"):
                lines.append(f"    {key}: {group[key]}")
        lines.append(")")
        return "\n".join(lines)

    # ---- helpers for subclasses ----

    def _params_with_grads(self, group, sparse_step=None):
        """The parameters that have dense gradients, and those gradients. A sparse gradient is refused,
        as in PyTorch, unless the subclass takes them: then sparse_step(param, grad, group) steps on it."""
        params = [p for p in group["params"] if p.grad is not None]
        if any(p.grad.is_sparse for p in params):
            if sparse_step is None:
                raise RuntimeError(self._sparse_refusal)
            for p in params:
                if p.grad.is_sparse:
                    sparse_step(p, p.grad, group)
            params = [p for p in params if not p.grad.is_sparse]
        return params, [p.grad for p in params]

    @property
    def _sparse_refusal(self):
        return f"{type(self).__name__} does not support sparse gradients"

    def _state_list(self, params, key):
        # Looked up without indexing the defaultdict, which would leave an empty entry for every parameter.
        return [self.state[p].get(key) if p in self.state else None for p in params]

    def _store(self, params, key, values):
        for p, v in zip(params, values):
            if v is not None:
                self.state[p][key] = v

    def _advance_steps(self, params):
        """Counts this update in each parameter's state['step'] (a float tensor, as PyTorch keeps it)."""
        steps = []
        for p in params:
            step = self.state[p].get("step")
            step = _C.zeros((), dtype=_C.float32) if step is None else step
            with no_grad():
                step.add_(1)
            self.state[p]["step"] = step
            steps.append(int(step.item()))
        return steps
