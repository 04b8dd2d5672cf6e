#!/usr/bin/env bash
# Prepares what tests/gpu/run_on_device.sh needs on a lent GPU machine (no
# apt, no LLVM, no network, a 64 MiB carry): the CUDA-only Tessel bundle
# (build-gpu/bundle, scripts/build_gpu_bundle.sh) and build-gpu/device:
# the milestone-1 conformance cases, the four benchmark models as graphs
# whose weights are regenerated there (tests/gpu/portable_weights.py), the
# single-operation models (tests/gpu/micro_models.py), and tiny_cnn as a
# model.so for the GPU (tests/gpu/device_buffers.py runs it there). Prints the sizes
# and the device tool's call.
#
#   tests/gpu/prepare_device_run.sh           # for the GPU
#   tests/gpu/prepare_device_run.sh --small   # small shapes and one model: a dry run on the CUDA emulator
set -euo pipefail
TESSEL_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
small="${1:-}"
shared="${TESSEL_SHARED:-$TESSEL_ROOT/../shared}"
python="${TESSEL_PYTHON:-$HOME/.cache/tessel/venv/bin/python}"
models_dir="${TESSEL_MODELS_DIR:-$HOME/.cache/tessel/models}"
device="$TESSEL_ROOT/build-gpu/device"

"$TESSEL_ROOT/scripts/build_gpu_bundle.sh" >/dev/null
rm -rf "$device"
mkdir -p "$device/onnx-node" "$device/models"
cp "$shared/onnx-node/milestone1.txt" "$device/onnx-node/"
while read -r case_name; do
  cp -r "$shared/onnx-node/$case_name" "$device/onnx-node/"
done < "$shared/onnx-node/milestone1.txt"

models="resnet18 mobilenet_v2 squeezenet1_1 transformer_encoder_layer"
[ "$small" = "--small" ] && models="squeezenet1_1"
for m in $models; do
  [ -f "$models_dir/$m.onnx" ] || { echo "no $models_dir/$m.onnx: run scripts/export_models.py $m first"; exit 1; }
  "$python" "$TESSEL_ROOT/tests/gpu/portable_weights.py" make "$models_dir/$m.onnx" "$device/models"
done
rm -f "$device"/models/*.weights  # regenerated on the GPU machine
"$python" "$TESSEL_ROOT/tests/gpu/micro_models.py" "$device/micro" $small
# A model.so for the GPU, built here: linking one needs a host compiler the GPU machine may lack.
"$TESSEL_ROOT/build-gpu/bundle/tessel" compile "$TESSEL_ROOT/examples/tiny_cnn.onnx" --input-shape image=1x1x28x28 \
  --target cuda -o "$device/tiny_cnn_cuda.so" >/dev/null

bytes=$(du -sb "$TESSEL_ROOT/build-gpu/bundle" "$device" | awk '{s += $1} END {print s}')
echo "== carry: $(du -sh "$TESSEL_ROOT/build-gpu/bundle" | cut -f1) bundle + $(du -sh "$device" | cut -f1) device data = $((bytes / 1048576)) MiB of 64"
[ "$bytes" -lt $((64 * 1048576)) ] || { echo "over the 64 MiB carry"; exit 1; }
echo "== device tool: run(command=\"tests/gpu/run_on_device.sh\", carry=[\"build-gpu/bundle\", \"build-gpu/device\"], timeout_s=540)"
