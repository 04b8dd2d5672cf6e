#!/usr/bin/env bash
# The runtime's thread pool from 1 thread to far more threads than cores:
# bench/thread_scaling.sh [MODEL.so] [TESSEL_BINARY]. Compiles examples/tiny_cnn.onnx
# when no library is given, then prints `tessel run --threads N --repeat 50` for each N.
# An oversubscribed pool must not collapse (its threads block instead of spinning);
# numbers, not a pass/fail: compare them before and after a change to src/runtime/.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
so="${1:-}"
tessel="${2:-$root/build/src/cli/tessel}"
if [ -z "$so" ]; then
  so="$(mktemp -d)/tiny_cnn.so"
  "$tessel" compile "$root/examples/tiny_cnn.onnx" --input-shape image=1x1x28x28 -o "$so" >/dev/null
fi
echo "cores: $(nproc)  model: $so"
for n in 1 2 4 8 64; do
  printf 'threads %3d: ' "$n"
  timeout 600 "$tessel" run "$so" --threads "$n" --repeat 50 | tail -1
done
