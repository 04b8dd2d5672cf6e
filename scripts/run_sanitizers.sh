#!/usr/bin/env bash
# Builds Tessel with AddressSanitizer and UndefinedBehaviorSanitizer
# (TESSEL_SANITIZE=ON) and runs the unit tests and the milestone-1 conformance
# on the llvm and tir targets under them. Any memory error, leak or undefined
# behaviour fails the run. Code JIT-compiled by LLVM is not instrumented.
# Usage: scripts/run_sanitizers.sh
#   env: TESSEL_ASAN_BUILD (build folder, default build-asan),
#        TESSEL_ONNX_NODE_DIR (conformance cases, default ../shared/onnx-node)
set -euo pipefail
TESSEL_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${TESSEL_ASAN_BUILD:-$TESSEL_ROOT/build-asan}"
NODE_DIR="${TESSEL_ONNX_NODE_DIR:-$TESSEL_ROOT/../shared/onnx-node}"
# Same ccache as the main build: the key includes the flags, so the two never mix.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$TESSEL_ROOT}"
# ASan's defaults stop at the first error and check for leaks at exit.
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"

cmake -S "$TESSEL_ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSEL_SANITIZE=ON \
  -DTESSEL_ONNX_NODE_DIR="$NODE_DIR" >/dev/null
ninja -C "$BUILD" tessel tessel_unit_tests

# The Python tests load their model library into a Python that has no ASan
# runtime; they test the Python package, not the compiler, and run in the
# main build. A failing test runs once more: LeakSanitizer's exit-time
# tracer can crash ("Tracer caught signal 11", a known LSan fault, not a leak
# report) after a test that passed; on some machines it does so every time
# in a process that loaded NVRTC. When that crash is the only kind of failure,
# the failed tests run again with the leak check off (ASan and UBSan still
# on), and the run says so; a leak LSan reports, or any other error, fails.
LOG="$BUILD/sanitizer_ctest.log"
if ! ctest --test-dir "$BUILD" -L unit -E '^python_' --output-on-failure -j2 --repeat until-pass:2 2>&1 | tee "$LOG"; then
  if grep -q "Tracer caught signal" "$LOG" && ! grep -q "LeakSanitizer: detected memory leaks" "$LOG"; then
    echo "== LeakSanitizer's tracer crashed; the failed tests again without the leak check:"
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
      ctest --test-dir "$BUILD" --rerun-failed --output-on-failure -j2
  else
    exit 1
  fi
fi

# The two targets run side by side (one core each), each into its own log,
# printed whole when both are done; either failing fails the stage.
targets=(llvm tir)
pids=()
for target in "${targets[@]}"; do
  "$BUILD/src/cli/tessel" conformance "$NODE_DIR" --list "$NODE_DIR/milestone1.txt" --target "$target" \
    --fusion default >"$BUILD/conformance_$target.log" 2>&1 &
  pids+=($!)
done
failed=0
for i in "${!targets[@]}"; do
  wait "${pids[$i]}" || failed=1
  echo "== conformance under the sanitizers: --target ${targets[$i]} --fusion default"
  cat "$BUILD/conformance_${targets[$i]}.log"
done
exit "$failed"
