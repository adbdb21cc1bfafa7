"""Running ranks as subprocesses for the distributed tests: each with a hard time limit, so that
nothing can hang the test run."""

import os
import socket
import subprocess
import sys
import textwrap

LIMIT = 60  # seconds a rank may run at most


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(tmp_path, body, world, ranks=None, env=None):
    """Runs body (Python, with tp, dist, rank, world and timedelta in scope, after a prelude) as each of
    ranks (default: all) in its own process, with env's variables (None: unset); returns
    [(returncode, stdout, stderr)] by rank."""
    script = tmp_path / "rank.py"
    script.write_text("import os, sys, time\nfrom datetime import timedelta\nimport tensorplay as tp\n"
                      "import tensorplay.distributed as dist\nrank, world = int(sys.argv[1]), int(sys.argv[2])\n"
                      + textwrap.dedent(body))
    port = free_port()
    def environment(rank):
        # This process's environment carries on (a sanitizer's LD_PRELOAD, for one).
        variables = {**os.environ, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "WORLD_SIZE": str(world),
                     "RANK": str(rank), "PYTHONPATH": ":".join(sys.path), **(env or {})}
        return {name: value for name, value in variables.items() if value is not None}

    procs = [subprocess.Popen([sys.executable, str(script), str(r), str(world)], env=environment(r),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for r in (range(world) if ranks is None else ranks)]
    results = []
    for p in procs:
        try:
            out, err = p.communicate(timeout=LIMIT)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise
        results.append((p.returncode, out, err))
    return results
