"""python -m tensorplay.distributed.run, the torchrun launcher: the environment each worker is given,
how the program is run (script, -m module, --no-python), a failing or killed worker stopping the
others, restarts, forwarded signals, OMP_NUM_THREADS, --standalone and the refused options.

Every launch has a hard time limit; the workers are small scripts that print what they see."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import tomllib

import pytest

TIMEOUT = 60  # seconds, for any one launch
LAUNCHER = [sys.executable, "-m", "tensorplay.distributed.run"]
WORKER_KEYS = ["LOCAL_RANK", "RANK", "GROUP_RANK", "ROLE_RANK", "ROLE_NAME", "LOCAL_WORLD_SIZE", "WORLD_SIZE",
               "GROUP_WORLD_SIZE", "ROLE_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RESTART_COUNT",
               "TORCHELASTIC_MAX_RESTARTS", "TORCHELASTIC_RUN_ID", "OMP_NUM_THREADS"]
PRINT_ENV = f"""
import json, os, sys
keys = {WORKER_KEYS!r}
report = {{"env": {{key: os.environ.get(key) for key in keys}}, "argv": sys.argv[1:]}}
os.write(1, (json.dumps(report) + "\\n").encode())  # one write: print's two could interleave with a sibling's
"""


def environment(**changes):
    """os.environ without OMP_NUM_THREADS, with changes."""
    env = {key: value for key, value in os.environ.items() if key != "OMP_NUM_THREADS"}
    env.update(changes)
    return env


def write(tmp_path, name, source):
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return str(path)


def launch(tmp_path, *args, env=None):
    return subprocess.run([*LAUNCHER, *map(str, args)], cwd=tmp_path, env=environment() if env is None else env,
                          capture_output=True, text=True, timeout=TIMEOUT)


def reports(result):
    """What each worker printed, in rank order."""
    assert result.returncode == 0, result.stderr
    printed = [json.loads(line) for line in result.stdout.splitlines()]
    return sorted(printed, key=lambda report: int(report["env"]["RANK"]))


def expected_env(local_rank, nproc, nnodes=1, node_rank=0, master_addr="127.0.0.1", omp=None):
    rank = node_rank * nproc + local_rank
    return {"LOCAL_RANK": str(local_rank), "RANK": str(rank), "GROUP_RANK": str(node_rank), "ROLE_RANK": str(rank),
            "ROLE_NAME": "default", "LOCAL_WORLD_SIZE": str(nproc), "WORLD_SIZE": str(nnodes * nproc),
            "GROUP_WORLD_SIZE": str(nnodes), "ROLE_WORLD_SIZE": str(nnodes * nproc), "MASTER_ADDR": master_addr,
            "TORCHELASTIC_RESTART_COUNT": "0", "TORCHELASTIC_MAX_RESTARTS": "0", "TORCHELASTIC_RUN_ID": "none",
            "OMP_NUM_THREADS": omp}


def without_port(env):
    return {key: value for key, value in env.items() if key != "MASTER_PORT"}


def ports(printed):
    """The one MASTER_PORT all workers were given."""
    found = {report["env"]["MASTER_PORT"] for report in printed}
    assert len(found) == 1, found
    return int(found.pop())


# ---- the workers' environment ----

@pytest.mark.parametrize("nproc", [1, 2, 3])
def test_each_worker_gets_torchruns_environment(tmp_path, nproc):
    printed = reports(launch(tmp_path, "--nproc-per-node", nproc, write(tmp_path, "env.py", PRINT_ENV)))
    omp = "1" if nproc > 1 else None
    assert [without_port(report["env"]) for report in printed] == [
        without_port(expected_env(local_rank, nproc, omp=omp)) for local_rank in range(nproc)]
    assert 0 < ports(printed) < 65536


def test_a_second_node_counts_its_ranks_after_the_first(tmp_path):
    printed = reports(launch(tmp_path, "--nnodes=2", "--node-rank", 1, "--nproc-per-node", 2, "--master-addr",
                             "10.0.0.7", write(tmp_path, "env.py", PRINT_ENV)))
    assert [without_port(report["env"]) for report in printed] == [
        without_port(expected_env(local_rank, 2, nnodes=2, node_rank=1, master_addr="10.0.0.7", omp="1"))
        for local_rank in range(2)]
    assert ports(printed) == 29500  # torchrun's default when there are several nodes


def test_underscore_spellings_are_accepted(tmp_path):
    printed = reports(launch(tmp_path, "--nnodes", 2, "--node_rank", 1, "--nproc_per_node", 2, "--master_addr",
                             "10.0.0.7", "--master_port", 1234, "--max_restarts", 0,
                             write(tmp_path, "env.py", PRINT_ENV)))
    assert [report["env"]["RANK"] for report in printed] == ["2", "3"]
    assert ports(printed) == 1234 and printed[0]["env"]["MASTER_ADDR"] == "10.0.0.7"


def test_a_single_node_meets_on_a_free_port_unless_given_one(tmp_path):
    script = write(tmp_path, "env.py", PRINT_ENV)
    for options in (["--standalone"], []):
        printed = reports(launch(tmp_path, *options, "--nproc-per-node", 2, script))
        assert [without_port(report["env"]) for report in printed] == [
            without_port(expected_env(local_rank, 2, omp="1")) for local_rank in range(2)]
        assert ports(printed) != 29500
    assert ports(reports(launch(tmp_path, "--master-port", 29501, script))) == 29501


def test_cpu_and_auto_start_one_worker_per_cpu(tmp_path):
    cpus = len(os.sched_getaffinity(0))
    for value in ("cpu", "auto"):
        result = launch(tmp_path, "--nproc-per-node", value, "--no-python", "sh", "-c", "echo $LOCAL_WORLD_SIZE")
        assert result.returncode == 0, result.stderr
        assert result.stdout.split() == [str(cpus)] * cpus


# ---- how the program is run ----

def test_the_programs_arguments_are_passed_through(tmp_path):
    args = ["a", "--nproc-per-node", "5", "-m", "with space", "--flag=1"]
    printed = reports(launch(tmp_path, "--nproc-per-node", 2, write(tmp_path, "env.py", PRINT_ENV), *args))
    assert [report["argv"] for report in printed] == [args, args]


def test_a_module_runs_as_python_m(tmp_path):
    write(tmp_path, "env_module.py", PRINT_ENV + "assert __name__ == '__main__'\n")
    printed = reports(launch(tmp_path, "--nproc_per_node", 2, "-m", "env_module", "x", "-y"))
    assert [(report["env"]["RANK"], report["argv"]) for report in printed] == [("0", ["x", "-y"]),
                                                                              ("1", ["x", "-y"])]


def test_no_python_runs_the_program_itself(tmp_path):
    script = write(tmp_path, "env.py", PRINT_ENV)
    printed = reports(launch(tmp_path, "--nproc-per-node", 2, "--no-python", sys.executable, script, "z"))
    assert [report["argv"] for report in printed] == [["z"], ["z"]]
    result = launch(tmp_path, "--no-python", str(tmp_path / "missing"))
    assert result.returncode == 1 and "cannot run" in result.stderr


# ---- failures ----

SIBLING_WAITS = """
import os, signal, sys, time
pids = sys.argv[1]
if os.environ["LOCAL_RANK"] == "0":
    with open(pids, "w") as file:
        file.write(str(os.getpid()))
    time.sleep(120)
else:
    deadline = time.monotonic() + 30
    while not os.path.exists(pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    {fail}
"""


def assert_stopped(pid_file):
    """The worker whose pid is in pid_file is gone (the launcher reaped it)."""
    with pytest.raises(ProcessLookupError):
        os.kill(int(open(pid_file).read()), 0)


def test_a_failing_worker_stops_the_others_and_is_named(tmp_path):
    script = write(tmp_path, "fail.py", SIBLING_WAITS.format(fail="sys.exit(3)"))
    start = time.monotonic()
    result = launch(tmp_path, "--nnodes", 2, "--node-rank", 1, "--nproc-per-node", 2, script, tmp_path / "pid")
    assert time.monotonic() - start < 30  # the sibling sleeps for 120 s
    assert result.returncode == 1
    assert "rank 3 (local_rank 1) exited with code 3" in result.stderr
    assert_stopped(tmp_path / "pid")


def test_a_killed_worker_is_named_with_its_signal(tmp_path):
    script = write(tmp_path, "kill.py", SIBLING_WAITS.format(fail="os.kill(os.getpid(), signal.SIGKILL)"))
    result = launch(tmp_path, "--nproc-per-node", 2, script, tmp_path / "pid")
    assert result.returncode == 1
    assert "rank 1 (local_rank 1) was killed by signal SIGKILL" in result.stderr
    assert_stopped(tmp_path / "pid")


def test_a_worker_ignoring_sigterm_is_killed_after_the_shutdown_timeout(tmp_path):
    script = write(tmp_path, "stubborn.py", "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                   + SIBLING_WAITS.format(fail="sys.exit(4)"))
    start = time.monotonic()
    result = launch(tmp_path, "--nproc-per-node", 2, "--shutdown-timeout", 1, script, tmp_path / "pid")
    assert time.monotonic() - start < 30
    assert result.returncode == 1 and "rank 1 (local_rank 1) exited with code 4" in result.stderr
    assert_stopped(tmp_path / "pid")


FAILS_FIRST = """
import os, sys
count = os.environ["TORCHELASTIC_RESTART_COUNT"]
with open(sys.argv[1], "a") as log:
    log.write(f"{count} {os.environ['RANK']} {os.environ['TORCHELASTIC_MAX_RESTARTS']}\\n")
if os.environ["RANK"] == "1" and (count == "0" or sys.argv[2] == "always"):
    sys.exit(7)
"""


def test_max_restarts_restarts_the_workers_after_a_failure(tmp_path):
    script = write(tmp_path, "fails_first.py", FAILS_FIRST)
    result = launch(tmp_path, "--nproc-per-node", 2, "--max-restarts", 1, script, tmp_path / "log", "once")
    assert result.returncode == 0, result.stderr
    assert "rank 1 (local_rank 1) exited with code 7" in result.stderr
    assert sorted((tmp_path / "log").read_text().split("\n")[:-1]) == ["0 0 1", "0 1 1", "1 0 1", "1 1 1"]


def test_a_failure_after_the_last_restart_fails_the_launch(tmp_path):
    script = write(tmp_path, "fails_first.py", FAILS_FIRST)
    result = launch(tmp_path, "--nproc-per-node", 2, "--max-restarts", 2, script, tmp_path / "log", "always")
    assert result.returncode == 1
    assert result.stderr.count("rank 1 (local_rank 1) exited with code 7") == 3
    assert sorted({line.split()[0] for line in (tmp_path / "log").read_text().split("\n")[:-1]}) == ["0", "1", "2"]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_signals_to_the_launcher_are_forwarded_to_the_workers(tmp_path, signum):
    script = write(tmp_path, "waits.py", """
        import os, signal, sys, time
        def record(number, frame):
            with open(os.path.join(sys.argv[1], "got" + os.environ["RANK"]), "w") as file:
                file.write(signal.Signals(number).name)
            sys.exit(0)
        signal.signal(signal.SIGINT, record)
        signal.signal(signal.SIGTERM, record)
        open(os.path.join(sys.argv[1], "ready" + os.environ["RANK"]), "w").close()
        time.sleep(120)
    """)
    launcher = subprocess.Popen([*LAUNCHER, "--nproc-per-node", "2", script, str(tmp_path)], cwd=tmp_path,
                                env=environment(), stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + TIMEOUT
        while not all((tmp_path / f"ready{rank}").exists() for rank in range(2)):
            assert time.monotonic() < deadline and launcher.poll() is None
            time.sleep(0.05)
        launcher.send_signal(signum)
        _, stderr = launcher.communicate(timeout=TIMEOUT)
    finally:
        launcher.kill()
    assert launcher.returncode == 1
    assert f"received {signum.name}" in stderr
    assert [(tmp_path / f"got{rank}").read_text() for rank in range(2)] == [signum.name] * 2


# ---- OMP_NUM_THREADS ----

def test_omp_num_threads_defaults_to_1_with_torchruns_warning_once(tmp_path):
    script = write(tmp_path, "env.py", PRINT_ENV)
    result = launch(tmp_path, "--nproc-per-node", 3, script)
    assert [report["env"]["OMP_NUM_THREADS"] for report in reports(result)] == ["1"] * 3
    assert result.stderr.count("Setting OMP_NUM_THREADS environment variable for each process to be 1") == 1

    result = launch(tmp_path, "--nproc-per-node", 2, script, env=environment(OMP_NUM_THREADS="4"))
    assert [report["env"]["OMP_NUM_THREADS"] for report in reports(result)] == ["4"] * 2
    assert "OMP_NUM_THREADS" not in result.stderr

    result = launch(tmp_path, script)
    assert reports(result)[0]["env"]["OMP_NUM_THREADS"] is None and "OMP_NUM_THREADS" not in result.stderr


# ---- refused options ----

@pytest.mark.parametrize("args, message", [
    (["--rdzv-backend", "c10d", "--rdzv_endpoint", "h:1"], "--rdzv-backend, --rdzv-endpoint: unsupported"),
    (["--rdzv-id", "job"], "--rdzv-id: unsupported"),
    (["--nnodes", "1:4"], "--nnodes=1:4: elastic ranges of nodes (MIN:MAX) are not supported"),
    (["--nnodes", "2", "--node-rank", "2"], "--node-rank=2: expected a rank in [0, 1]"),
    (["--standalone", "--nnodes", "2"], "--standalone runs a single node"),
    (["--nproc-per-node", "gpu"], "--nproc-per-node=gpu: expected a number of workers, 'cpu' or 'auto'"),
    (["-m", "--no-python"], "Don't use both the '--no-python' flag and the '--module' flag"),
])
def test_unsupported_options_are_refused_clearly(tmp_path, args, message):
    result = launch(tmp_path, *args, "prog.py")
    assert result.returncode == 2 and message in result.stderr


def test_nnodes_as_torchruns_fixed_range_is_accepted(tmp_path):
    printed = reports(launch(tmp_path, "--nnodes", "1:1", write(tmp_path, "env.py", PRINT_ENV)))
    assert printed[0]["env"]["WORLD_SIZE"] == "1"


def test_the_console_script_names_main():
    with open(os.path.join(os.path.dirname(__file__), "..", "..", "pyproject.toml"), "rb") as file:
        scripts = tomllib.load(file)["project"]["scripts"]
    assert scripts["tensorplay-run"] == "tensorplay.distributed.run:main"
    from tensorplay.distributed.run import main
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
