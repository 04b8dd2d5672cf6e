#!/bin/bash
# pip-installs the package's loader alone ($1, TESSEL_NO_DRIVER=1) into a fresh venv (no network:
# Debian's setuptools through --system-site-packages) and runs the fixture model ($2) from outside
# the source tree; compiling then says how to get the driver.
set -euo pipefail
package=$1 model=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 -m venv --system-site-packages "$tmp/venv"
"$tmp/venv/bin/python" -c "import setuptools" || { echo "setuptools missing in the venv"; exit 1; }
TESSEL_NO_DRIVER=1 "$tmp/venv/bin/pip" install --quiet --no-deps --no-build-isolation "$package"
cd "$tmp"
env -u PYTHONPATH "$tmp/venv/bin/python" - "$model" <<'PY'
import sys
import numpy as np
import tessel
assert "site-packages" in tessel.__file__, tessel.__file__
with tessel.load(sys.argv[1]) as m:
    out = m.run({"a": np.ones((2, 3), np.float32), "b": np.full((2, 3), 2, np.float32)})
    assert (out["sum"] == 3).all(), out
try:
    tessel.compile("model.onnx")
    raise AssertionError("compiled without a driver")
except tessel.TesselError as e:
    assert "pip install ./python" in str(e), e
print("installed tessel", tessel.__version__, "from", tessel.__file__, "ran", m.path)
PY
