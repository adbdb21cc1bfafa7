"""Two machines, as far as the network goes: two network namespaces joined by a veth pair, each with
its own address, and the launcher started in each with --nnodes 2. The job trains the MLP of
test_ddp.py to the parameters one process reaches on the whole batch. Needs root (ip netns)."""

import json
import os
import subprocess
import sys

import pytest

import tensorplay.distributed as dist
from distributed_helpers import free_port
from test_ddp import COMMON, assert_close, one_process

pytestmark = pytest.mark.skipif(not dist.is_available(), reason="tensorplay was built without Gloo")

ADDRESSES = ("10.77.0.1", "10.77.0.2")


def ip(*args):
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)


@pytest.fixture
def namespaces():
    """Two namespaces, tp<pid>a and tp<pid>b, joined by a veth pair; removed afterwards."""
    if os.geteuid() != 0:
        pytest.skip("network namespaces need root (ip netns add)")
    names = [f"tp{os.getpid()}{side}" for side in "ab"]
    created = [name for name in names if ip("netns", "add", name).returncode == 0]
    try:
        if len(created) < 2:
            pytest.skip("ip netns add failed: this machine does not allow network namespaces")
        links = [f"v{os.getpid()}{side}" for side in "ab"]
        steps = [("link", "add", links[0], "type", "veth", "peer", "name", links[1])]
        for name, link, address in zip(names, links, ADDRESSES):
            steps += [("link", "set", link, "netns", name),
                      ("-n", name, "addr", "add", f"{address}/24", "dev", link),
                      ("-n", name, "link", "set", link, "up"), ("-n", name, "link", "set", "lo", "up")]
        for step in steps:
            result = ip(*step)
            assert result.returncode == 0, f"ip {' '.join(step)}: {result.stderr}"
        yield names
    finally:
        for name in created:
            ip("netns", "del", name)  # takes the veth pair with it


def test_the_launcher_on_two_machines_trains_as_one_process(tmp_path, namespaces):
    script = tmp_path / "train.py"
    script.write_text(COMMON + """
tp.distributed.init_process_group("gloo")
rank, world = tp.distributed.get_rank(), tp.distributed.get_world_size()
parameters = train(make(), "sgd", rank, world, wrap=DDP)
if rank == 0:
    print(json.dumps(parameters))
""")
    port = str(free_port())
    nodes = [subprocess.Popen(["ip", "netns", "exec", name, sys.executable, "-m", "tensorplay.distributed.run",
                               "--nnodes", "2", "--node-rank", str(node), "--nproc-per-node", "1", "--master-addr",
                               ADDRESSES[0], "--master-port", port, str(script)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": ":".join(sys.path)})
             for node, name in enumerate(namespaces)]
    outputs = []
    try:
        outputs = [node.communicate(timeout=120) for node in nodes]
    finally:
        for node in nodes:
            node.kill()
    for node, (out, err) in zip(nodes, outputs):
        assert node.returncode == 0, err
    assert_close(one_process(optimizer_name="sgd"), json.loads(outputs[0][0].splitlines()[-1]), 1e-5)
