"""The README example runs as printed."""

import pathlib
import re
import subprocess
import sys

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def test_readme_example_runs_and_prints_what_it_says():
    source = re.search(r"```python\n(.*?)```", README.read_text(), re.S).group(1)
    result = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, check=True)
    lines = result.stdout.splitlines()
    assert lines[0] == "tensorplay.Size([64, 10]) tensor([1.0000, 1.0000, 1.0000])"
    assert lines[1] == "tensorplay.bfloat16"
    assert lines[2] == "tensor([2.5000, 5.0000, 7.5000])"
