#!/usr/bin/env bash
# The set-up command: installs the missing Debian packages, builds Tessel, and
# runs the main job on the bundled example model (examples/tiny_cnn.onnx): compiles it to
# a shared library, runs it, and checks it against the reference executor.
set -euo pipefail
TESSEL_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$TESSEL_ROOT/scripts/lib/deps.sh"

tessel_install_packages $TESSEL_BUILD_PACKAGES
tessel_check_cuda
tessel_build "$TESSEL_ROOT/build" tessel

tessel="$TESSEL_ROOT/build/src/cli/tessel"
model="$TESSEL_ROOT/examples/tiny_cnn.onnx"
out="$TESSEL_ROOT/build/example"
mkdir -p "$out"
echo "== tessel inspect $model --input-shape image=1x1x28x28"
"$tessel" inspect "$model" --input-shape image=1x1x28x28
echo "== tessel compile $model --input-shape image=1x1x28x28 -o $out/tiny_cnn.so"
"$tessel" compile "$model" --input-shape image=1x1x28x28 -o "$out/tiny_cnn.so"
echo "== tessel run $out/tiny_cnn.so --seed 7 --repeat 50"
"$tessel" run "$out/tiny_cnn.so" --seed 7 --repeat 50 --out "$out/outputs"
echo "== tessel check $model --input-shape image=1x1x28x28 --per-kernel"
"$tessel" check "$model" --input-shape image=1x1x28x28 --per-kernel
