"""One case in one library, in this process: `python -m benchmarks.run_case <case> <lib> <json
params>` prints the case's figures as one JSON line. The driver (benchmarks/bench.py) starts one
such process per library and round, so each library runs alone, with its own threads and memory.
"""

import importlib
import json
import sys


def main():
    case, lib_name, params = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    figures = importlib.import_module(f"benchmarks.cases.{case}").run(lib_name, params)
    print(json.dumps(figures), flush=True)


if __name__ == "__main__":
    main()
