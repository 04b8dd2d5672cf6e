#!/usr/bin/env bash
# Creates (once) the Python environment of the model tests: a venv at
# ${TESSEL_CACHE:-~/.cache/tessel}/venv on top of Debian's torch/torchvision/onnx/numpy,
# with ONNX Runtime from PyPI. Idempotent: when it is already there, a run only checks it (~1 s).
set -euo pipefail

CACHE="${TESSEL_CACHE:-$HOME/.cache/tessel}"
VENV="$CACHE/venv"
SYS_PY=/usr/bin/python3
# onnxruntime 1.26.0 is the newest release whose requirements Debian 12's own numpy (1.24.2)
# and protobuf (4.21.12) satisfy; 1.27 and later want protobuf>=4.25.8, which would shadow
# Debian's protobuf inside the venv. Override with TESSEL_ORT_VERSION if needed.
ORT_VERSION="${TESSEL_ORT_VERSION:-1.26.0}"

log() { echo "setup_python_env: $*"; }
die() { echo "setup_python_env: error: $*" >&2; exit 1; }

[ -x "$SYS_PY" ] || die "$SYS_PY not found (Debian's python3)"
mkdir -p "$CACHE"
# One setup at a time (ctest -j, two checkouts sharing the cache).
exec 9>"$CACHE/.venv.lock"
if command -v flock >/dev/null; then flock 9; fi

# check_env [full]: is the environment right? ORT at the pinned version, numpy still Debian's
# own and <2 (Debian's torch 1.13 is built against numpy 1.x). "full" also imports torch,
# torchvision and onnx (~5 s), done once after installing.
check_env() {
  "$VENV/bin/python" - "$ORT_VERSION" "${1:-}" 2>/dev/null <<'PYEOF'
import sys
import numpy, onnxruntime
ok = (onnxruntime.__version__ == sys.argv[1]
      and numpy.__file__.startswith("/usr/lib/python3/")
      and int(numpy.__version__.split(".")[0]) < 2)
line = f"onnxruntime {onnxruntime.__version__}, numpy {numpy.__version__}"
if sys.argv[2] == "full":
    import torch, torchvision, onnx
    line += f", torch {torch.__version__}, torchvision {torchvision.__version__}, onnx {onnx.__version__}"
print(line)
sys.exit(0 if ok else 1)
PYEOF
}

start=$EPOCHREALTIME
if [ -x "$VENV/bin/python" ] && versions=$(check_env); then
  log "venv $VENV already set up ($versions); nothing to do"
  exit 0
fi

"$SYS_PY" -c "import torch, torchvision, onnx, numpy" 2>/dev/null ||
  die "Debian's python3 lacks torch/torchvision/onnx/numpy: apt-get install python3-torch python3-torchvision python3-onnx python3-numpy"
if [ ! -x "$VENV/bin/pip" ]; then
  rm -rf "$VENV"
  log "creating venv $VENV (/usr/bin/python3 -m venv --system-site-packages)"
  "$SYS_PY" -m venv --system-site-packages "$VENV" ||
    { rm -rf "$VENV"; die "venv creation failed: apt-get install python3-venv"; }
else
  log "venv $VENV exists but is incomplete or outdated; repairing it"
fi

# Keep Debian's numpy and protobuf: constrain both to the system versions, so pip either
# accepts them or fails loudly (instead of quietly installing a second numpy into the venv).
constraints="$VENV/tessel-constraints.txt"
"$SYS_PY" > "$constraints" <<'PYEOF'
import numpy
print(f"numpy=={numpy.__version__}")
try:
    import google.protobuf
    print(f"protobuf=={google.protobuf.__version__}")
except ImportError:
    pass
PYEOF
log "pip install onnxruntime==$ORT_VERSION (constraints: $(tr '\n' ' ' < "$constraints"))"
"$VENV/bin/python" -m pip install --disable-pip-version-check --no-input -q \
  -c "$constraints" "onnxruntime==$ORT_VERSION" ||
  die "pip install onnxruntime==$ORT_VERSION failed (is PyPI reachable?)"

versions=$(check_env full) ||
  die "the venv does not import onnxruntime==$ORT_VERSION with Debian's numpy<2 (${versions:-import failed})"
log "done in $(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s: $versions"
