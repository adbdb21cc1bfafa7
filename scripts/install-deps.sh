#!/usr/bin/env bash
# Installs everything tensorplay needs to build, test and run its demo: Debian packages with
# apt-get and Python packages into .venv. Idempotent, and silent when nothing is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

apt_packages=(g++ libdnnl-dev libhwy-dev libopenblas-openmp-dev libgtest-dev ccache dataset-fashion-mnist zlib1g-dev
              libgloo-dev libboost-math-dev)
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ! python3 -c "import venv, ensurepip, sysconfig, os; \
    assert os.path.exists(sysconfig.get_paths()['include'] + '/Python.h')" 2>/dev/null; then
  missing+=(python3-venv python3-dev)
fi
if ((${#missing[@]})); then
  echo "install-deps: apt-get install ${missing[*]}"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

[ -x .venv/bin/python ] || python3 -m venv .venv
# Reinstall only when requirements-dev.txt changed since the last successful install.
stamp=".venv/.requirements-$(sha256sum requirements-dev.txt | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  echo "install-deps: pip install -r requirements-dev.txt"
  .venv/bin/python -m pip install -q --disable-pip-version-check -r requirements-dev.txt
  rm -f .venv/.requirements-*
  touch "$stamp"
fi
