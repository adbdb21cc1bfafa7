"""python -m tensorplay.distributed.run (or tensorplay-run): torchrun for tensorplay. It starts
nproc_per_node workers on this node, tells each its place in the job through the environment torchrun
sets (RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, ...), and watches them.

    python -m tensorplay.distributed.run [options] script.py [args ...]
    python -m tensorplay.distributed.run [options] -m module [args ...]
    python -m tensorplay.distributed.run [options] --no-python program [args ...]

Options keep torchrun's names, spelt with dashes or underscores. Rendezvous is static: each node is
started with the same --nnodes, --nproc-per-node, --master-addr and --master-port and its own
--node-rank, and the workers meet at MASTER_ADDR:MASTER_PORT (init_process_group's env:// method). On
a single node, the port defaults to a free one, as torchrun's does. Elastic ranges (--nnodes MIN:MAX)
and the --rdzv-* options are refused.

A worker that exits non-zero or by a signal stops the others (SIGTERM to each worker's process group,
SIGKILL after --shutdown-timeout seconds) and is named on stderr (one killed by a signal before the
ones that failed within the next second, whose errors are usually its consequence); the launcher then
exits with 1, as torchrun does. With --max-restarts N this node's workers are restarted instead, up to N times
(TORCHELASTIC_RESTART_COUNT counts them). Unlike torchrun, nothing tells the other nodes: on several
nodes a restart can only rejoin the job if every node's workers fail and restart together.
SIGINT, SIGTERM, SIGHUP and SIGQUIT are forwarded to the workers, which are then stopped the same way,
and the launcher exits with 1.

A PyTorch program runs unedited with ``-m tensorplay.run script.py`` as the program.
Only the standard library is imported here: the launcher itself runs no tensorplay code.
"""

import argparse
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time

__all__ = ["main"]

_PROG = "python -m tensorplay.distributed.run"
_POLL_SECONDS = 0.1  # torchrun's default --monitor-interval
_SETTLE_SECONDS = 1.0  # how long after a first failure others still count as its peers
_FORWARDED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
_RDZV_OPTIONS = ("rdzv-backend", "rdzv-endpoint", "rdzv-id", "rdzv-conf")
_OMP_WARNING = ("\n*****************************************\n"
                "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your "
                "system being overloaded, please further tune the variable for optimal performance in your "
                "application as needed. \n"
                "*****************************************")


def _option(parser, name, **kwargs):
    """--name, in both of torchrun's spellings: --nproc-per-node and --nproc_per_node."""
    parser.add_argument(*dict.fromkeys([f"--{name}", f"--{name.replace('-', '_')}"]), **kwargs)


def _parser():
    parser = argparse.ArgumentParser(
        prog=_PROG, usage=f"{_PROG} [options] (script.py | -m module | --no-python program) [args ...]",
        description="Starts the workers of a distributed job on this node, as torchrun does.")
    _option(parser, "nnodes", default="1", help="number of nodes (a fixed number: MIN:MAX is not supported)")
    _option(parser, "nproc-per-node", default="1",
            help="workers on this node: a number, or 'cpu' or 'auto' for the number of CPUs this process may use")
    _option(parser, "node-rank", type=int, default=0, help="this node's rank, from 0 to nnodes - 1")
    _option(parser, "master-addr", default="127.0.0.1", help="address of node 0, where the workers meet")
    _option(parser, "master-port", type=int, default=None,
            help="port on node 0 where the workers meet (default: 29500, or a free port on a single node)")
    _option(parser, "standalone", action="store_true", help="a single-node job, on a free port")
    _option(parser, "max-restarts", type=int, default=0,
            help="times this node's workers are all restarted after a failure (default: 0)")
    _option(parser, "shutdown-timeout", type=float, default=30.0,
            help="seconds stopped workers get to exit before SIGKILL (default: 30)")
    _option(parser, "role", default="default", help="the workers' ROLE_NAME")
    for name in _RDZV_OPTIONS:
        _option(parser, name, default=None, help=argparse.SUPPRESS)
    parser.add_argument("-m", "--module", action="store_true", help="run the program as a module, as python -m")
    _option(parser, "no-python", action="store_true", help="run the program itself, not with python")
    parser.add_argument("training_script", help="the program: a script, a module (-m) or an executable (--no-python)")
    parser.add_argument("training_script_args", nargs=argparse.REMAINDER, help="the program's arguments")
    return parser


def _parse(argv):
    """The options, checked, with nnodes and nproc_per_node as numbers."""
    parser = _parser()
    options = parser.parse_args(argv)
    given = [f"--{name}" for name in _RDZV_OPTIONS if getattr(options, name.replace("-", "_")) is not None]
    if given:
        parser.error(f"{', '.join(given)}: unsupported; rendezvous is static only "
                     "(--nnodes, --node-rank, --master-addr, --master-port)")
    options.nnodes = _nnodes(parser, options.nnodes)
    options.nproc_per_node = _nproc_per_node(parser, options.nproc_per_node)
    if not 0 <= options.node_rank < options.nnodes:
        parser.error(f"--node-rank={options.node_rank}: expected a rank in [0, {options.nnodes - 1}]")
    if options.standalone and options.nnodes != 1:
        parser.error(f"--standalone runs a single node, but --nnodes={options.nnodes}")
    if options.max_restarts < 0:
        parser.error(f"--max-restarts={options.max_restarts}: expected a number >= 0")
    if options.module and options.no_python:
        parser.error("Don't use both the '--no-python' flag and the '--module' flag at the same time.")
    if options.master_port is None and options.nnodes > 1:
        options.master_port = 29500
    return options


def _nnodes(parser, text):
    """--nnodes N, or MIN:MAX with MIN == MAX (torchrun's default is 1:1)."""
    try:
        sizes = {int(size) for size in text.split(":", 1)}
    except ValueError:
        parser.error(f"--nnodes={text}: expected a number of nodes")
    if len(sizes) != 1:
        parser.error(f"--nnodes={text}: elastic ranges of nodes (MIN:MAX) are not supported; give one number")
    nnodes = sizes.pop()
    if nnodes < 1:
        parser.error(f"--nnodes={text}: expected at least 1 node")
    return nnodes


def _nproc_per_node(parser, text):
    if text in ("cpu", "auto"):  # as torch._utils.cpu_count: the CPUs this process may run on
        return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    try:
        nproc = int(text)
    except ValueError:
        parser.error(f"--nproc-per-node={text}: expected a number of workers, 'cpu' or 'auto'")
    if nproc < 1:
        parser.error(f"--nproc-per-node={text}: expected at least 1 worker")
    return nproc


def _free_port():
    # The port is free now; the job's rank 0 binds it moments later.
    with socket.socket() as probe:
        probe.bind(("", 0))
        return probe.getsockname()[1]


def _command(options):
    if options.no_python:
        return [options.training_script, *options.training_script_args]
    module = ["-m"] if options.module else []
    return [sys.executable, "-u", *module, options.training_script, *options.training_script_args]


def _worker_env(options, local_rank, restart_count, master_port, base_env):
    """base_env plus what torchrun tells a worker about its place in the job."""
    rank = options.node_rank * options.nproc_per_node + local_rank
    world_size = options.nnodes * options.nproc_per_node
    return {
        **base_env,
        "LOCAL_RANK": str(local_rank),
        "RANK": str(rank),
        "GROUP_RANK": str(options.node_rank),
        "ROLE_RANK": str(rank),
        "ROLE_NAME": options.role,
        "LOCAL_WORLD_SIZE": str(options.nproc_per_node),
        "WORLD_SIZE": str(world_size),
        "GROUP_WORLD_SIZE": str(options.nnodes),
        "ROLE_WORLD_SIZE": str(world_size),
        "MASTER_ADDR": options.master_addr,
        "MASTER_PORT": str(master_port),
        "TORCHELASTIC_RESTART_COUNT": str(restart_count),
        "TORCHELASTIC_MAX_RESTARTS": str(options.max_restarts),
        "TORCHELASTIC_RUN_ID": "none",
    }


def _signal_name(number):
    try:
        return signal.Signals(number).name
    except ValueError:  # a real-time signal has no name of its own
        return str(number)


def _describe(options, local_rank, code):
    rank = options.node_rank * options.nproc_per_node + local_rank
    how = f"was killed by signal {_signal_name(-code)}" if code < 0 else f"exited with code {code}"
    return f"rank {rank} (local_rank {local_rank}) {how}"


def _signal_group(worker, signum):
    try:
        os.killpg(worker.pid, signum)
    except ProcessLookupError:
        pass  # the worker and everything it started are gone


def _stop(workers, signum, timeout):
    """Sends signum to each worker's process group (so what a worker started stops too), then SIGKILL to
    the workers still running after timeout seconds."""
    for worker in workers:
        _signal_group(worker, signum)
    deadline = time.monotonic() + timeout
    for worker in workers:
        try:
            worker.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            _signal_group(worker, signal.SIGKILL)
            worker.wait()


def _watch(workers, received):
    """(local_rank, exit status) of the worker whose failure stopped the job; None once all exited
    cleanly, or as soon as a signal is in received.

    When one rank dies the others fail soon after it, on their broken connections. So the failures of
    the next second are gathered too, and a worker killed by a signal is named before the workers that
    exited with an error (their errors are usually the consequence); among equals, the first to exit."""
    exits = queue.Queue()  # in the order the workers exit: a thread waits for each
    for local_rank, worker in enumerate(workers):
        threading.Thread(target=lambda r=local_rank, w=worker: exits.put((r, w.wait())), daemon=True).start()
    running, failures, deadline = len(workers), [], None
    while running and not received and (deadline is None or time.monotonic() < deadline):
        try:
            local_rank, code = exits.get(timeout=_POLL_SECONDS)
        except queue.Empty:
            continue
        running -= 1
        if code != 0:
            failures.append((local_rank, code))
            deadline = deadline or time.monotonic() + _SETTLE_SECONDS
    if not failures:
        return None
    return min(failures, key=lambda failure: failure[1] >= 0)  # stable: the first killed, else the first


def _run(options, received):
    """Runs the workers, restarting them up to max_restarts times; the launcher's exit status."""
    base_env = dict(os.environ)
    if "OMP_NUM_THREADS" not in base_env and options.nproc_per_node > 1:
        print(_OMP_WARNING, file=sys.stderr, flush=True)
        base_env["OMP_NUM_THREADS"] = "1"
    command = _command(options)
    for restart_count in range(options.max_restarts + 1):
        master_port = _free_port() if options.master_port is None else options.master_port
        workers = []
        try:
            for local_rank in range(options.nproc_per_node):
                env = _worker_env(options, local_rank, restart_count, master_port, base_env)
                # A session of its own: the terminal's Ctrl-C reaches the launcher, which forwards it once.
                workers.append(subprocess.Popen(command, env=env, start_new_session=True))
        except OSError as error:
            print(f"{_PROG}: cannot run {command[0]}: {error.strerror}", file=sys.stderr, flush=True)
            _stop(workers, signal.SIGTERM, options.shutdown_timeout)
            return 1
        failure = _watch(workers, received)
        if received:
            print(f"{_PROG}: received {_signal_name(received[0])}, stopping the workers", file=sys.stderr,
                  flush=True)
            _stop(workers, received[0], options.shutdown_timeout)
            return 1
        if failure is None:
            return 0
        print(f"{_PROG}: {_describe(options, *failure)}", file=sys.stderr, flush=True)
        _stop(workers, signal.SIGTERM, options.shutdown_timeout)
        if restart_count < options.max_restarts:
            print(f"{_PROG}: restarting the workers (restart {restart_count + 1} of {options.max_restarts})",
                  file=sys.stderr, flush=True)
    return 1


def main(argv=None):
    options = _parse(argv)
    received = []
    handlers = {signum: signal.signal(signum, lambda number, frame: received.append(number))
                for signum in _FORWARDED_SIGNALS}
    try:
        return _run(options, received)
    finally:
        for signum, handler in handlers.items():
            signal.signal(signum, handler)


if __name__ == "__main__":
    sys.exit(main())
