#!/usr/bin/env bash
# Builds the libFuzzer target of the ONNX importer with clang (TESSEL_FUZZ=ON)
# and fuzzes it for a bounded time. Exits non-zero when it finds a crash.
# Usage: scripts/run_fuzz.sh [SECONDS=60]
#   env: TESSEL_FUZZ_BUILD (build folder, default build-fuzz),
#        TESSEL_ONNX_NODE_DIR (seed models, default ../shared/onnx-node),
#        TESSEL_FUZZ_EXTREME_SEEDS=1 (also seed with tests/fuzz/extreme_seeds.py:
#          milestone models with one extreme dimension, attribute or constant)
set -euo pipefail
TESSEL_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SECONDS_TO_RUN="${1:-60}"
BUILD="${TESSEL_FUZZ_BUILD:-$TESSEL_ROOT/build-fuzz}"
NODE_DIR="${TESSEL_ONNX_NODE_DIR:-$TESSEL_ROOT/../shared/onnx-node}"
CLANG="${TESSEL_FUZZ_CXX:-clang++-14}"

command -v "$CLANG" >/dev/null || { echo "error: $CLANG not found (apt-get install clang-14 libclang-rt-14-dev)" >&2; exit 1; }
CC="${CLANG/clang++/clang}" CXX="$CLANG" \
  cmake -S "$TESSEL_ROOT" -B "$BUILD" -G Ninja -DTESSEL_FUZZ=ON -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C "$BUILD" -j"${TESSEL_JOBS:-2}" onnx_import_fuzzer

# The seed corpus: the small models of the milestone cases, copied (the shared
# folder is read-only), plus seeds with external data when Python's onnx is there.
SEED="$BUILD/fuzz/seed"
CORPUS="$BUILD/fuzz/corpus"
ARTIFACTS="$BUILD/fuzz/artifacts"
rm -rf "$SEED"
mkdir -p "$SEED" "$CORPUS" "$ARTIFACTS"
if [ -d "$NODE_DIR" ]; then
  cat "$NODE_DIR"/milestone1*.txt | while read -r name; do
    f="$NODE_DIR/$name/model.onnx"
    [ -f "$f" ] && [ "$(stat -c %s "$f")" -le 4096 ] && cp "$f" "$SEED/$name.onnx"
  done
else
  echo "warning: no seed models at $NODE_DIR; fuzzing from an empty corpus" >&2
fi
if /usr/bin/python3 -c 'import onnx' 2>/dev/null; then
  /usr/bin/python3 - "$SEED" <<'PY'
# Models whose weights live in weights.bin, the external-data file the fuzzer's
# model folder holds (4096 bytes).
import sys, onnx
from onnx import helper, TensorProto
def save(name, location, length):
    w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[length // 4])
    w.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", "16"), ("length", str(length))):
        w.external_data.add(key=k, value=v)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [length // 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [length // 4])
    g = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"], name="add")], "g", [x], [y], [w])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    with open(f"{sys.argv[1]}/{name}.onnx", "wb") as f:
        f.write(m.SerializeToString())
save("external_ok", "weights.bin", 64)
save("external_escape", "../weights.bin", 64)
PY
fi
SEEDS=("$SEED")
if [ "${TESSEL_FUZZ_EXTREME_SEEDS:-0}" = 1 ] && [ -d "$NODE_DIR" ]; then
  rm -rf "$BUILD/fuzz/extreme"
  /usr/bin/python3 "$TESSEL_ROOT/tests/fuzz/extreme_seeds.py" "$NODE_DIR" "$BUILD/fuzz/extreme"
  SEEDS+=("$BUILD/fuzz/extreme")
fi
echo "== fuzzing onnx_import_fuzzer for $SECONDS_TO_RUN s ($(ls "$SEED" | wc -l) seeds, corpus $CORPUS)"
# libFuzzer exits non-zero on a crash, a leak, an -rss_limit_mb overrun or a
# -timeout hang; the reproducer is left in $ARTIFACTS.
LOG="$BUILD/fuzz/fuzz.log"
set +e
UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}" \
"$BUILD/tests/fuzz/onnx_import_fuzzer" "$CORPUS" "${SEEDS[@]}" \
  -max_total_time="$SECONDS_TO_RUN" -rss_limit_mb=2048 -timeout=10 \
  -artifact_prefix="$ARTIFACTS/" -print_final_stats=1 >"$LOG" 2>&1
status=$?
set -e
tail -n 80 "$LOG"
if [ "$status" -ne 0 ]; then
  echo "error: the fuzzer found a problem (exit $status); log $LOG, reproducers in $ARTIFACTS" >&2
fi
exit "$status"
