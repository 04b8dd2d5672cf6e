#!/usr/bin/env bash
# The CPU benchmark's entry: bench/run_cpu_bench.sh [TESSEL_BINARY] [cpu_bench.py options...]
# Runs bench/cpu_bench.py with the model tests' venv python (scripts/setup_python_env.sh makes it,
# in ${TESSEL_CACHE:-~/.cache/tessel}/venv). TESSEL_BINARY defaults to build/src/cli/tessel.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${TESSEL_CACHE:-$HOME/.cache/tessel}/venv"
if [ ! -x "$venv/bin/python" ]; then
  echo "run_cpu_bench.sh: no venv at $venv: run scripts/setup_python_env.sh first" >&2
  exit 1
fi
tessel="$(dirname "$here")/build/src/cli/tessel"
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then  # a first argument that is not an option: the binary
  tessel="$1"
  shift
fi
exec "$venv/bin/python" "$here/cpu_bench.py" --tessel "$tessel" "$@"
