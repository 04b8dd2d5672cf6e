#!/usr/bin/env bash
# The one prepared run on a lent GPU machine (one H100/H200, CUDA 13 driver,
# PyTorch with its NVRTC, ONNX Runtime; no apt, no LLVM, no network), under
# 8 minutes. Needs what tests/gpu/prepare_device_run.sh built and the device
# tool carried: build-gpu/bundle and build-gpu/device. Each stage has its own
# time limit and the run goes on past a failing stage; the exit status says
# whether every stage passed.
#
#   TESSEL_DEVICE_TARGET=cuda-emulated tests/gpu/run_on_device.sh   # the dry run on this CPU
set -uo pipefail
TESSEL_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$TESSEL_ROOT"
target="${TESSEL_DEVICE_TARGET:-cuda}"
tessel="$TESSEL_ROOT/build-gpu/bundle/tessel"
device="$TESSEL_ROOT/build-gpu/device"
python="${TESSEL_PYTHON:-python3}"
failed=""
start=$SECONDS
stage() { echo; echo "== [$((SECONDS - start)) s] $*"; }

stage "the machine"
command -v nvidia-smi >/dev/null && nvidia-smi -L | head -4
ldd --version 2>&1 | head -1
"$python" -c "import sys, numpy, onnxruntime; print('python', sys.version.split()[0], 'numpy', numpy.__version__, 'onnxruntime', onnxruntime.__version__, onnxruntime.get_available_providers())" 2>&1
"$python" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'no GPU')" 2>&1

# NVRTC: the toolkit's where there is one, else the one PyTorch ships.
if [ -z "${TESSEL_NVRTC_LIBRARY:-}" ] && ! ldconfig -p 2>/dev/null | grep -q libnvrtc.so; then
  found=$("$python" tests/gpu/find_nvrtc.py 2>/dev/null)
  [ -n "$found" ] && export TESSEL_NVRTC_LIBRARY="$found"
fi
echo "NVRTC: ${TESSEL_NVRTC_LIBRARY:-found on the dynamic linker path}"

stage "tessel version"
"$tessel" version || failed="$failed version"

stage "weights of the models, regenerated from their seeds"
"$python" tests/gpu/portable_weights.py fill "$device/models" || failed="$failed weights"

stage "milestone-1 conformance on $target"
timeout 140 "$tessel" conformance "$device/onnx-node" --list "$device/onnx-node/milestone1.txt" --target "$target" \
  --fusion default > "$device/conformance.txt" 2>&1
status=$?
grep -v "^PASS " "$device/conformance.txt" | head -30  # how the cases run, what failed, the tally
[ $status -eq 0 ] || failed="$failed conformance($status)"

stage "models and single operations against ONNX Runtime and PyTorch"
timeout 150 "$python" tests/gpu/compare_on_gpu.py --tessel "$tessel" --target "$target" --models "$device/models" \
  --micro "$device/micro" --repeat 10 || failed="$failed compare($?)"

stage "a model.so on PyTorch's device buffers and stream"
if [ "$target" = cuda ]; then
  PYTHONPATH="$TESSEL_ROOT/python" timeout 30 "$python" tests/gpu/device_buffers.py "$device/tiny_cnn_cuda.so" \
    || failed="$failed device_buffers($?)"
else
  echo "skipped: PyTorch's buffers need a GPU"
fi

# Each session's log kept apart (a session appends to a new log), then read as one.
stage "short tuning sessions: GEMM, then the 3x3 conv"
for model in gemm:24:60 conv3x3:16:45; do
  IFS=: read -r name trials limit <<< "$model"
  rm -f "$device/tune_$name.jsonl"
  timeout "$limit" "$tessel" tune "$device/micro/$name.onnx" --target "$target" --trials "$trials" \
    --log "$device/tune_$name.jsonl" 2>&1 | tail -4
  [ "${PIPESTATUS[0]}" -eq 0 ] || failed="$failed tune_$name"
done
cat "$device"/tune_*.jsonl > "$device/tuned.jsonl" 2>/dev/null

stage "the tuned GEMM and conv against their peers"
timeout 50 "$python" tests/gpu/compare_on_gpu.py --tessel "$tessel" --target "$target" --micro "$device/micro" \
  --only gemm,conv3x3 --tuning-log "$device/tuned.jsonl" --repeat 10 || failed="$failed compare_tuned($?)"

stage "done in $((SECONDS - start)) s; failed stages:${failed:- none}"
[ -z "$failed" ]
