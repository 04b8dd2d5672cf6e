#!/usr/bin/env bash
# The set-up command: installs the missing Debian packages, builds Tessel, and
# runs the main job on the bundled example model (examples/tiny_cnn.onnx).
set -euo pipefail
TESSEL_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$TESSEL_ROOT/scripts/lib/deps.sh"

tessel_install_packages $TESSEL_BUILD_PACKAGES
tessel_check_cuda
tessel_build "$TESSEL_ROOT/build" tessel

tessel="$TESSEL_ROOT/build/src/cli/tessel"
model="$TESSEL_ROOT/examples/tiny_cnn.onnx"
echo "== tessel inspect $model --input-shape image=1x1x28x28"
"$tessel" inspect "$model" --input-shape image=1x1x28x28
echo "== tessel run $model --reference --input-shape image=1x1x28x28 --seed 7"
"$tessel" run "$model" --reference --input-shape image=1x1x28x28 --seed 7 --out "$TESSEL_ROOT/build/example_out"
