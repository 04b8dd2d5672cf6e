#!/usr/bin/env bash
# The GPU-side Tessel: a build without LLVM (cmake -DTESSEL_WITH_LLVM=OFF,
# in build-gpu/), gathered with the shared libraries it needs beyond the C
# library into build-gpu/bundle/ (bin/tessel, lib/, and a tessel launcher
# that points the dynamic linker at lib/), small enough to carry to a GPU
# machine that has no LLVM, protobuf or XGBoost. NVRTC and the CUDA driver
# are found there at run time ($TESSEL_NVRTC_LIBRARY, $TESSEL_LIBCUDA).
# Then checks the bundle: its version, a model checked on the CUDA emulator,
# the llvm target refused.
set -euo pipefail
TESSEL_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$TESSEL_ROOT/build-gpu"
bundle="$build/bundle"

cmake -S "$TESSEL_ROOT" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSEL_WITH_LLVM=OFF >/dev/null
ninja -C "$build" tessel

rm -rf "$bundle"
mkdir -p "$bundle/bin" "$bundle/lib"
cp "$build/src/cli/tessel" "$bundle/bin/"
strip "$bundle/bin/tessel"
# Every library the binary loads except the C library's own (libc, libm, libpthread, libdl, the loader).
ldd "$build/src/cli/tessel" | awk '$3 ~ /^\// {print $3}' | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|ld-linux*) ;;
    *) cp -L "$lib" "$bundle/lib/" ;;
  esac
done
cat > "$bundle/tessel" <<'LAUNCHER'
#!/bin/sh
here="$(cd "$(dirname "$0")" && pwd)"
LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$here/bin/tessel" "$@"
LAUNCHER
chmod +x "$bundle/tessel"
echo "== GPU-side bundle $bundle: $(du -sh "$bundle" | cut -f1) ($(ls "$bundle/lib" | tr '\n' ' '))"

echo "== checking the bundle"
"$bundle/tessel" version | tee "$build/version.txt"
grep -q "^targets cuda" "$build/version.txt" || { echo "the bundle does not list the cuda targets"; exit 1; }
"$bundle/tessel" check "$TESSEL_ROOT/examples/tiny_cnn.onnx" --input-shape image=1x1x28x28 --target cuda-emulated
if "$bundle/tessel" compile "$TESSEL_ROOT/examples/tiny_cnn.onnx" --input-shape image=1x1x28x28 --target llvm \
     -o "$build/never.so" 2>"$build/refusal.txt"; then
  echo "the bundle compiled for llvm without LLVM"; exit 1
fi
grep -q "this Tessel was built without LLVM" "$build/refusal.txt" || { cat "$build/refusal.txt"; exit 1; }
echo "== the bundle refuses target llvm: $(cat "$build/refusal.txt")"
