"""Property-based fuzzing of the autograd engine against PyTorch: random programs of graphs, hooks,
backward passes and threads must behave in tensorplay as they do in torch.

    .venv/bin/python tests/fuzz/fuzz_autograd.py [--cases N] [--seed S] [--max-depth D] [--jobs J]
                                                 (or TP_FUZZ_CASES=N)
    .venv/bin/python tests/fuzz/fuzz_autograd.py --seed S --case N    (one case, shown and run here)

Each case writes one program, Python source taking the module `m`, from a random.Random seeded
with the seed and the case number, and runs it with m = tensorplay and with m = torch. Three kinds:
  - graphs: 1-4 float32/float64 leaves, elementwise ops, reductions, matmul, views, in-place ops on
    results and on views of them, with fan-in and fan-out; hooks on leaves and results that read
    the gradient, replace it, register or remove hooks during backward, raise, or return a wrong
    shape, dtype or type; retain_grad and post-accumulate-grad hooks; then backward (once, twice
    with or without retain_graph, with inputs=), autograd.grad (allow_unused, retain_graph) or a
    double backward through create_graph=True;
  - deep chains of up to --max-depth nodes, run backward or not, then freed: checked against torch
    up to 10**5 nodes, above that against the gradient the chain's arithmetic gives;
  - threads: two threads run backward through graphs on a shared leaf while a third registers and
    removes hooks on it.
A program notes what it sees: gradients, hook calls in order, what autograd.grad returns. The runs
must note the same things (tensors of the same dtype and shape, values within 1e-5) and end
alike: neither raises, or both raise the same built-in exception class (messages may differ).

The cases run in worker processes, many each; a worker that crashes or is silent for --timeout
seconds fails its case and is replaced. Exit status 0 when every case passed; otherwise the first
failure is printed with its case number, seed and program. The last line gives the number of
cases tried.
"""

import argparse
import json
import math
import os
import pathlib
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass

import numpy as np

HERE = pathlib.Path(__file__).resolve()
CASE_TIMEOUT_S = 120        # a chain of 10**6 nodes takes ~10 s, several times that under ASan
STARTUP_TIMEOUT_S = 120     # importing torch on a loaded machine
MAX_DEPTH = 10 ** 6
TORCH_MAX_DEPTH = 10 ** 5   # deeper chains take torch too long: checked against their arithmetic
TOLERANCE = dict(rtol=1e-5, atol=1e-5)
EXCEPTIONS = ("RuntimeError", "TypeError", "ValueError", "IndexError")  # what torch may raise here
LEAF_SHAPES = [(3,), (2, 3), (2, 3), (3, 2), ()]

# KNOWN BUG rules: what tensorplay gets wrong today, left out until fixed (delete the rule then):
#   none now.
# TORCH CRASH rules: what makes torch 2.13 itself crash (SIGSEGV).


# ---------------------------------------------------------------------------------------------
# Programs. A Gen writes one program's source and tracks what it knows of each value.

@dataclass
class Val:
    name: str
    shape: tuple
    grad: bool                       # requires grad
    deps: frozenset                  # the leaves requiring grad it is computed from
    root: str                        # the value whose memory it is (itself unless a view)
    leaf: bool = False
    contiguous: bool = True
    expanded: bool = False


@dataclass
class Case:
    kind: str
    source: str
    expected: list = None            # the notes to expect where torch is not asked


class Gen:
    def __init__(self, rng):
        self.rng = rng
        self.lines = ["handles = {}"]
        self.values = []
        self.hooks = []              # names of the handles registered
        self.retained = []           # values retain_grad was called on
        self.modified = set()        # roots written in place

    def emit(self, *lines):
        self.lines.extend(lines)

    def source(self):
        return "def program(m, note):\n" + "".join(f"    {line}\n" for line in self.lines)

    def tensor_literal(self, shape, dtype, requires_grad=True):
        data = np.array([round(self.rng.uniform(-1, 1), 2) for _ in range(math.prod(shape))]).reshape(shape)
        return f"m.tensor({data.tolist()}, dtype=m.{dtype}, requires_grad={requires_grad})"

    def leaf(self, shape, dtype, requires_grad):
        name = f"x{len(self.values)}"
        self.emit(f"{name} = {self.tensor_literal(shape, dtype, requires_grad)}")
        deps = frozenset([name]) if requires_grad else frozenset()
        self.values.append(Val(name, shape, requires_grad, deps, name, leaf=True))

    def new(self, expr, shape, inputs, view_of=None, **flags):
        name = f"v{len(self.values)}"
        self.emit(f"{name} = {expr}")
        deps = frozenset().union(*(v.deps for v in inputs))
        root = view_of.root if view_of else name
        self.values.append(Val(name, tuple(shape), any(v.grad for v in inputs), deps, root, **flags))

    def pick(self, values=None):
        """Mostly one of the latest values, so that chains grow; any earlier one makes fan-out."""
        values = values or self.values
        return self.rng.choice(values[-3:] if self.rng.random() < 0.6 else values)

    def loose(self):
        """Now and then an op is written whatever the shapes: both libraries must then raise alike."""
        return self.rng.random() < 0.04


def broadcast(a, b):
    try:
        return np.broadcast_shapes(a, b)
    except ValueError:
        return None


def matmul_shape(a, b):
    if not (1 <= len(a) <= 2 and 1 <= len(b) <= 2) or a[-1] != b[0 if len(b) == 1 else -2]:
        return None
    return a[:-1] + b[1:]


def op_unary(g):
    a = g.pick()
    form = g.rng.choice(["{}.exp()", "{}.tanh()", "{}.sin()", "{} * 2.0", "{} * -0.5"])
    g.new(form.format(a.name), a.shape, [a])


def op_binary(g):
    a, b = g.pick(), g.pick()
    shape = broadcast(a.shape, b.shape)
    if shape is None and not g.loose():
        return False
    g.new(f"{a.name} {g.rng.choice('+-*')} {b.name}", shape or a.shape, [a, b])


def op_sum(g):
    a = g.pick()
    if a.shape and g.rng.random() < 0.5:
        dim = g.rng.randrange(-len(a.shape), len(a.shape))
        g.new(f"{a.name}.sum({dim})", a.shape[:dim % len(a.shape)] + a.shape[dim % len(a.shape) + 1:], [a])
    else:
        g.new(f"{a.name}.sum()", (), [a])


def op_matmul(g):
    pairs = [(a, b) for a in g.values for b in g.values if matmul_shape(a.shape, b.shape) is not None]
    if not pairs and not g.loose():
        return False
    a, b = g.rng.choice(pairs) if pairs else (g.pick(), g.pick())
    g.new(f"{a.name} @ {b.name}", matmul_shape(a.shape, b.shape) or (), [a, b])


def op_view(g):
    a = g.pick()
    form = g.rng.choice(["slice", "t", "view", "unsqueeze", "expand"])
    flags = dict(view_of=a, contiguous=a.contiguous, expanded=a.expanded)
    if form == "slice" and (a.shape or g.loose()):
        g.new(f"{a.name}[1:]", (max(a.shape[0] - 1, 0),) + a.shape[1:] if a.shape else (), [a], **flags)
    elif form == "t" and (len(a.shape) <= 2 or g.loose()):
        flags["contiguous"] &= sorted(a.shape)[:-1] in ([], [1])
        g.new(f"{a.name}.t()", a.shape[::-1], [a], **flags)
    elif form == "view" and (a.contiguous or g.loose()):
        g.new(f"{a.name}.view(-1)", (math.prod(a.shape),), [a], **flags)
    elif form == "unsqueeze":
        g.new(f"{a.name}.unsqueeze(0)", (1,) + a.shape, [a], **flags)
    elif form == "expand" and len(a.shape) <= 2:
        shape = (2,) + a.shape
        flags.update(contiguous=False, expanded=True)
        g.new(f"{a.name}.expand({', '.join(map(str, shape))})", shape, [a], **flags)
    else:
        return False


def op_inplace(g):
    """In place on a result or a view of one; on a leaf or an expanded tensor only loosely (torch
    refuses both)."""
    allowed = g.values
    targets = [v for v in allowed if not v.leaf and not v.expanded]
    if not allowed:
        return False
    a = g.rng.choice(allowed if g.loose() or not targets else targets)
    form = g.rng.choice(["mul", "add", "view"])
    if form == "add":
        sources = [b for b in g.values if broadcast(a.shape, b.shape) == a.shape]
        b = g.rng.choice(sources) if sources else g.pick()
        g.emit(f"{a.name}.add_({b.name})")
        a.grad, a.deps = a.grad or b.grad, a.deps | b.deps
    else:
        g.emit(f"{a.name}[0].mul_(3.0)" if form == "view" and a.shape and a.shape[0] else f"{a.name}.mul_(2.0)")
    g.modified.add(a.root)


OPS = [op_unary] * 3 + [op_binary] * 4 + [op_sum] * 2 + [op_matmul] + [op_view] * 2 + [op_inplace] * 2

# Hook bodies, after the hook notes its call: {other} is a value, {handle} a registered handle.
HOOK_BODIES = {
    "read": [],
    "replace": ["return g * 2"],
    "register": ["handles['{name}+'] = {other}.register_hook(lambda g: note('{name}+', g))"],
    "remove": ["handles['{handle}'].remove()"],
    "raise": ["raise ValueError('boom')"],
    "wrong shape": ["return m.ones(5)"],
    "wrong dtype": ["return g.double() if g.dtype == m.float32 else g.float()"],
    "wrong type": ["return 5"],
}
HOOK_WEIGHTS = [6, 4, 2, 2, 1, 1, 1, 1]
# A post-accumulate hook may return its tensor itself: torch 2.13 accepts that, so it returns .grad.
POST_HOOK_BODIES = {"read": [], "remove": ["handles['{handle}'].remove()"], "return": ["return t.grad"],
                    "raise": ["raise ValueError('boom')"], "wrong type": ["return 5"]}
POST_HOOK_WEIGHTS = [6, 2, 1, 1, 1]


def add_hook(g):
    """retain_grad, a tensor hook or a post-accumulate-grad hook on some value."""
    # TORCH CRASH: a hook on a view whose memory was written in place since it was made.
    a = g.pick([v for v in g.values if v.root == v.name or v.root not in g.modified])
    kind = g.rng.random()
    if kind < 0.15:
        g.emit(f"{a.name}.retain_grad()")
        g.retained.append(a)
        return
    post = kind < 0.3 and a.leaf
    bodies, weights = (POST_HOOK_BODIES, POST_HOOK_WEIGHTS) if post else (HOOK_BODIES, HOOK_WEIGHTS)
    body = g.rng.choices(list(bodies), weights)[0]
    name = f"h{len(g.hooks)}"
    g.hooks.append(name)
    # TORCH CRASH: a hook registered during backward on a view (after an in-place op on it).
    fill = dict(name=name, other=g.pick([v for v in g.values if v.root == v.name]).name, handle=g.rng.choice(g.hooks))
    arg, value, register = ("t", "t.grad", "post_accumulate_grad_hook") if post else ("g", "g", "hook")
    body = [f"    {line.format(**fill)}" for line in bodies[body]]
    g.emit(f"def {name}({arg}):", f"    note('{name}', {value})", *body,
           f"handles['{name}'] = {a.name}.register_{register}({name})")


def finale(g):
    """The backward passes, noting what autograd.grad returns."""
    rng = g.rng
    out = rng.choice([v for v in g.values[-3:] if v.grad] or g.values)
    if out.shape and rng.random() < 0.85:
        g.new(f"{out.name}.sum()", (), [out])
        out = g.values[-1]
    o, some = out.name, [v.name for v in rng.sample(g.values, rng.randint(1, min(3, len(g.values))))]
    kinds = ["backward", "backward", "retain", "gradient"]
    kinds += ["twice"]
    kinds += ["inputs", "grad", "grad"]
    kinds += ["create_graph", "double"]
    kind = rng.choice(kinds)
    if kind == "backward":
        g.emit(f"{o}.backward()")
    elif kind in ("retain", "twice"):
        g.emit(f"{o}.backward(retain_graph={kind == 'retain'})", f"{o}.backward()")
    elif kind == "inputs":
        g.emit(f"{o}.backward(inputs=[{', '.join(some)}])")
    elif kind == "grad":
        retain = rng.random() < 0.4
        g.emit(f"grads = m.autograd.grad({o}, [{', '.join(some)}], allow_unused={rng.random() < 0.5}, "
               f"retain_graph={retain})", "for i, grad in enumerate(grads):", "    note(f'grad {i}', grad)",
               *[f"{o}.backward()"] * retain)
    elif kind == "double":
        g.emit(f"(grad,) = m.autograd.grad({o}, [{some[0]}], create_graph=True)", "note('grad', grad)",
               rng.choice(["(grad * grad).sum().backward()", "grad.sum().backward()"]))
    elif kind == "create_graph" and out.deps:
        x = rng.choice(sorted(out.deps))
        g.emit(f"{o}.backward(create_graph=True)", f"note('{x}.grad first', {x}.grad)", f"{x}.grad.sum().backward()")
    else:
        g.emit(f"{o}.backward(m.ones_like({o}))")


def graph_case(rng):
    g = Gen(rng)
    dtype = rng.choice(["float32", "float64"])
    for _ in range(rng.randint(1, 4)):
        g.leaf(rng.choice(LEAF_SHAPES), dtype if rng.random() < 0.9 else "float64", rng.random() < 0.9)
    for _ in range(rng.randint(1, 8)):
        while rng.choice(OPS)(g) is False:
            pass
        if rng.random() < 0.3:
            add_hook(g)
    finale(g)
    g.emit(*[f"note('{v.name}.grad', {v.name}.grad)" for v in g.values if v.leaf],
           *[f"note('{name}.grad', {name}.grad)" for name in dict.fromkeys(v.name for v in g.retained)])
    return Case("graph", g.source())


# A deep chain's steps, and what each adds to d(chain)/dx.
DEEP_STEPS = {"y = y * 1.0": 0, "y = y + x": 1, "y = y - x": -1, "y = y.view(-1).view(x.shape)": 0}


def deep_case(rng, max_depth, full):
    """A chain of max_depth nodes if full, else of fewer (down to a hundredth)."""
    g = Gen(rng)
    shape, dtype = rng.choice([(3,), (2, 3)]), rng.choice(["float32", "float64"])
    steps = rng.sample(list(DEEP_STEPS), rng.randint(1, 3))
    depth = max_depth if full else int(math.exp(rng.uniform(math.log(max(max_depth // 100, 1)), math.log(max_depth))))
    iterations = max(depth // len(steps), 1)
    gradient = (dtype, shape, np.full(shape, 1.0 + iterations * sum(DEEP_STEPS[s] for s in steps)))
    g.emit(f"x = {g.tensor_literal(shape, dtype)}", "y = x", f"for _ in range({iterations}):",
           *[f"    {step}" for step in steps])
    hooked = rng.random() < 0.5
    if hooked:
        g.emit("handles['h'] = x.register_hook(lambda g: note('x hook', g))")
    passes = rng.choice([0, 1, 1, 2])
    notes = [("x hook", gradient)] * passes * hooked
    if passes:
        g.emit(*["y.sum().backward(retain_graph=True)"] * (passes - 1), "y.sum().backward()")
    elif rng.random() < 0.5:
        g.emit("note('grad', m.autograd.grad(y.sum(), [x])[0])")
        notes += [("x hook", gradient)] * hooked + [("grad", gradient)]  # the leaf's hook runs here too
    g.emit("del y", "note('x.grad', x.grad)")
    notes.append(("x.grad", gradient[:2] + (gradient[2] * passes,) if passes else None))
    return Case(f"deep chain of {iterations * len(steps)} steps", g.source(),
                notes if iterations * len(steps) > TORCH_MAX_DEPTH else None)


THREAD_GRAPHS = ["(x * {c}).sin().sum()", "(x.exp() * x * {c}).sum()", "(x * x).tanh().sum() * {c}",
                 "(x @ x.t()).sum() * {c}"]
THREAD_HOOKS = {"identity": "lambda g: g", "read": "lambda g: seen.append(g.sum().item())", "scale": "lambda g: g * 2"}


def thread_case(rng):
    """Two threads run backward through graphs on a shared leaf x (each its own graph, or one they
    share, retained) while a third registers and removes hooks on x. Only identity and read-only
    hooks leave x.grad independent of the timing: it is compared for those."""
    g = Gen(rng)
    hook, graph, shared = rng.choice(list(THREAD_HOOKS)), rng.choice(THREAD_GRAPHS), rng.random() < 0.3
    g.emit(f"x = {g.tensor_literal(rng.choice([(2, 3), (3, 3)]), rng.choice(['float32', 'float64']))}",
           "errors, seen = [], []", *[f"shared = {graph.format(c=0.5)}"] * shared,
           "def backward_loop(c):", "    try:", f"        for _ in range({rng.randint(5, 30)}):",
           f"            {'shared' if shared else graph.format(c='c')}.backward(retain_graph={shared})",
           "    except Exception as e:", "        errors.append(type(e).__name__)",
           "def hook_loop():", "    try:", f"        for _ in range({rng.randint(20, 200)}):",
           f"            pair = [x.register_hook({THREAD_HOOKS[hook]}),",
           "                    x.register_post_accumulate_grad_hook(lambda t: None)]",
           f"            for handle in pair[::{rng.choice([1, -1])}]:", "                handle.remove()",
           "    except Exception as e:", "        errors.append(type(e).__name__)",
           "threads = [threading.Thread(target=backward_loop, args=(0.5,)),",
           "           threading.Thread(target=backward_loop, args=(-1.5,)), threading.Thread(target=hook_loop)]",
           "for thread in threads:", "    thread.start()", "for thread in threads:", "    thread.join()",
           "note('errors', sorted(errors))", *["note('x.grad', x.grad)"] * (hook != "scale"))
    return Case(f"threads ({hook} hooks{', one shared graph' if shared else ''})", g.source())


def make_case(seed, case, max_depth=MAX_DEPTH):
    rng = random.Random(f"{seed}:{case}")  # each case reproduces on its own
    if case % 50 == 25:
        return deep_case(rng, max_depth, full=case % 100 == 25)
    if case % 20 == 10:
        return thread_case(rng)
    return graph_case(rng)


# ---------------------------------------------------------------------------------------------
# Running a program in both libraries and comparing what each noted.

def snapshot(value):
    """What a note keeps: a tensor as (dtype, shape, float64 values) at the time of the note."""
    if not hasattr(value, "detach"):
        return value
    t = value.detach()
    return str(t.dtype).split(".")[-1], tuple(t.shape), np.array(t.double().numpy())


def builtin_class(exc):
    """The nearest built-in exception class: torch raises subclasses such as torch.AcceleratorError."""
    return next(c for c in type(exc).__mro__ if c.__module__ == "builtins")


def observe(case, m):
    """(the exception's built-in class name or None, its message, the notes) of the program run with m."""
    notes = []
    namespace = {"threading": threading}
    exec(case.source, namespace)
    try:
        namespace["program"](m, lambda name, value: notes.append((name, snapshot(value))))
    except Exception as e:  # noqa: BLE001  (compared with torch's)
        return builtin_class(e).__name__, str(e).split("\n")[0], notes
    return None, None, notes


def value_difference(ours, theirs):
    if not (isinstance(ours, tuple) and isinstance(theirs, tuple)):
        return None if ours == theirs else f"{ours!r}, torch {theirs!r}"
    (dtype, shape, values), (their_dtype, their_shape, their_values) = ours, theirs
    if (dtype, shape) != (their_dtype, their_shape):
        return f"{dtype}{list(shape)}, torch {their_dtype}{list(their_shape)}"
    if not np.allclose(values, their_values, equal_nan=True, **TOLERANCE):
        return f"values {values.tolist()}, torch {their_values.tolist()}"
    return None


def difference(ours, theirs):
    """None when tensorplay's run (ours) matches torch's (theirs), else the first difference."""
    (error, message, notes), (their_error, their_message, their_notes) = ours, theirs
    if their_error not in (None, *EXCEPTIONS):
        return f"fuzzer error: torch raised {their_error}: {their_message}"
    for i, ((name, value), (their_name, their_value)) in enumerate(zip(notes, their_notes)):
        if name != their_name:
            return f"note {i}: tensorplay noted {name!r} where torch noted {their_name!r}"
        if (problem := value_difference(value, their_value)) is not None:
            return f"note {i} ({name}): {problem}"
    if error != their_error:
        return (f"tensorplay {f'raised {error}: {message}' if error else 'raised nothing'}; "
                f"torch {f'raised {their_error}: {their_message}' if their_error else 'raised nothing'}")
    if len(notes) != len(their_notes):
        return f"tensorplay noted {[name for name, _ in notes]}, torch {[name for name, _ in their_notes]}"
    return None


def shifted(observation):
    error, message, notes = observation
    return error, message, [(name, v[:2] + (v[2] + 1,) if isinstance(v, tuple) else v) for name, v in notes]


# Faults given to tensorplay's run on purpose, for the tests to see the oracle catch them.
FAULTS = {
    "values": shifted,
    "silent": lambda observation: (None, None, observation[2]),  # raises nothing where it should
    "crash": lambda observation: os.kill(os.getpid(), signal.SIGSEGV),
    "hang": lambda observation: time.sleep(3600),
}


def check(case, fault=None, before_torch=lambda: None):
    """None when the case passes, else what differed."""
    import tensorplay  # here, not at the top: the parent process only writes and hands out cases
    import torch
    ours = observe(case, tensorplay)
    if fault:
        ours = FAULTS[fault](ours)
    if case.expected is not None:
        return difference(ours, (None, None, case.expected))
    before_torch()
    return difference(ours, observe(case, torch))


# ---------------------------------------------------------------------------------------------
# Workers say "ready", then run the cases whose numbers they read on stdin and answer each with a
# JSON line (null when it passed), after a line "torch" once they run torch. The parent's lanes,
# one a job, each feed a worker its share of the cases and replace it when it crashes or hangs.

def worker(seed, max_depth, fault):
    import tensorplay  # noqa: F401  (imported before "ready": a case's timeout is for the case)
    import torch  # noqa: F401
    warnings.simplefilter("ignore")  # torch's warnings about create_graph=True
    print("ready", flush=True)
    for line in sys.stdin:
        try:
            outcome = check(make_case(seed, int(line), max_depth), fault, lambda: print("torch", flush=True))
        except Exception as e:  # noqa: BLE001  (the fuzzer itself broke: reported like a failure)
            outcome = f"fuzzer error: {type(e).__name__}: {e}"
        print(json.dumps(outcome), flush=True)


@dataclass
class Failure:
    case: int                        # None for a worker that failed at its exit
    seed: int
    kind: str
    message: str
    source: str = ""

    def __str__(self):
        where = f"case {self.case}" if self.case is not None else "at exit"
        return f"{where} (seed {self.seed}, {self.kind}): {self.message}\n{self.source}"


class Worker:
    def __init__(self, seed, max_depth, fault):
        self.stderr = tempfile.TemporaryFile()
        command = [sys.executable, str(HERE), "--worker", "--seed", str(seed), "--max-depth", str(max_depth)]
        self.proc = subprocess.Popen(command + (["--fault", fault] if fault else []), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.stderr)
        self.ready = False

    def readline(self, timeout):
        """Its next line, or b"" when it dies or stays silent for timeout seconds (then killed)."""
        timer = threading.Timer(timeout, self.proc.kill)
        timer.start()
        line = self.proc.stdout.readline()
        timer.cancel()
        return line

    def ask(self, case, timeout):
        """(the library it ran last, its answer: b"" when it crashed or was killed for a hang)."""
        if not self.ready and self.readline(STARTUP_TIMEOUT_S) != b"ready\n":
            return "tensorplay", b""
        self.ready = True
        try:
            self.proc.stdin.write(f"{case}\n".encode())
            self.proc.stdin.flush()
        except BrokenPipeError:  # it died
            return "tensorplay", b""
        library = "tensorplay"
        while (line := self.readline(timeout)) == b"torch\n":
            library = "torch"
        return library, line

    def finish(self, timeout):
        """The exit status once stdin is closed (killed if it takes longer than timeout)."""
        try:
            self.proc.stdin.close()
            return self.proc.wait(timeout)
        except (BrokenPipeError, subprocess.TimeoutExpired):
            self.proc.kill()
            return self.proc.wait()

    def stderr_tail(self):
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")[-1500:]


def describe_exit(code):
    return signal.Signals(-code).name if code < 0 else f"exit status {code}"


def run(cases, seed=0, max_depth=MAX_DEPTH, jobs=None, timeout=CASE_TIMEOUT_S, fault=None):
    """Runs cases 0 .. cases-1 of seed in `jobs` workers; returns the failures in case order."""
    failures = []

    def lane(first, step):
        """Runs every step-th case from first, in a worker replaced when one crashes or hangs."""
        w = None
        for case in range(first, cases, step):
            w = w or Worker(seed, max_depth, fault)
            library, line = w.ask(case, timeout)
            if line and (outcome := json.loads(line)) is None:
                continue
            if not line:  # it is dead, or killed by its timer
                code = w.finish(STARTUP_TIMEOUT_S)
                what = f"hung: no answer in {timeout} s" if code == -signal.SIGKILL else \
                    f"crashed the interpreter: {describe_exit(code)}"
                outcome, w = f"{library} {what}\n{w.stderr_tail()}", None
            made = make_case(seed, case, max_depth)
            failures.append(Failure(case, seed, made.kind, outcome, made.source))
        if w and (code := w.finish(STARTUP_TIMEOUT_S)) != 0:  # no crash at interpreter shutdown either
            failures.append(Failure(None, seed, "worker exit", f"{describe_exit(code)}\n{w.stderr_tail()}"))

    jobs = min(jobs or os.cpu_count() or 1, cases)
    lanes = [threading.Thread(target=lane, args=(first, jobs)) for first in range(jobs)]
    for thread in lanes:
        thread.start()
    for thread in lanes:
        thread.join()
    return sorted(failures, key=lambda f: -1 if f.case is None else f.case)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=int(os.environ.get("TP_FUZZ_CASES", "2000")))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-depth", type=int, default=MAX_DEPTH, help="of the deep chains")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=float, default=CASE_TIMEOUT_S, help="seconds a case may take")
    parser.add_argument("--case", type=int, help="run only this case, here, and show its program")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--fault", choices=FAULTS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.seed, args.max_depth, args.fault)
        return 0
    if args.case is not None:
        case = make_case(args.seed, args.case, args.max_depth)
        outcome = check(case, args.fault)
        print(f"{case.kind}:\n{case.source}\n{outcome or 'passed'}")
        return 1 if outcome else 0
    failures = run(args.cases, args.seed, args.max_depth, args.jobs, args.timeout, args.fault)
    if failures:
        print(f"FAIL: {failures[0]}\nfailed cases: {[f.case for f in failures]}", file=sys.stderr)
    print(f"fuzz_autograd: {args.cases} cases, seed {args.seed}, max depth {args.max_depth}: {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
