#!/usr/bin/env bash
# Runs the model tests' venv python (made by scripts/setup_python_env.sh) with the given arguments:
# venv_python.sh SCRIPT.py ARGS... Resolved at run time, since ctest starts before the venv exists.
venv="${TESSEL_CACHE:-$HOME/.cache/tessel}/venv"
if [ ! -x "$venv/bin/python" ]; then
  echo "venv_python.sh: no venv at $venv: run scripts/setup_python_env.sh first" >&2
  exit 1
fi
exec "$venv/bin/python" "$@"
