#!/usr/bin/env bash
# The test command: installs the missing Debian packages, builds everything,
# runs a bounded fuzz of the ONNX importer, the unit tests and milestone-1
# conformance under ASan + UBSan (build-asan), builds and checks the CUDA-only
# bundle (build-gpu, scripts/build_gpu_bundle.sh), then every CTest test
# (unit, conformance, model). ctest's summary is the last thing printed.
set -euo pipefail
TESSEL_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$TESSEL_ROOT/scripts/lib/deps.sh"

# Each stage's wall time, printed before ctest (whose own summary ends the run):
# what to cut first when CI nears its time budget.
stage_times=()
timed() {
  local name=$1 start=$SECONDS
  shift
  "$@"
  stage_times+=("$name $((SECONDS - start)) s")
}

tessel_install_packages $TESSEL_BUILD_PACKAGES $TESSEL_TEST_PACKAGES
tessel_check_cuda
timed build tessel_build "$TESSEL_ROOT/build"

echo "== fuzzing the ONNX importer (${TESSEL_FUZZ_SECONDS:-60} s)"
timed fuzz "$TESSEL_ROOT/scripts/run_fuzz.sh" "${TESSEL_FUZZ_SECONDS:-60}"

echo "== AddressSanitizer + UBSan (build-asan): unit tests, milestone-1 conformance on llvm and tir"
timed sanitizers "$TESSEL_ROOT/scripts/run_sanitizers.sh"

echo "== the CUDA-only build (build-gpu, without LLVM) and its bundle for a GPU machine"
timed gpu-bundle "$TESSEL_ROOT/scripts/build_gpu_bundle.sh"

echo "== stage times: $(IFS=,; echo "${stage_times[*]}" | sed 's/,/, /g')"
echo "== ctest"
ctest --test-dir "$TESSEL_ROOT/build" --output-on-failure -j2
