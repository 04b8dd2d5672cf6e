#!/bin/sh
# Rewrites tests/conformance/passing.txt: the onnx-node cases that pass compiled
# through LLVM (default fusion) and on the reference executor, each a line, and
# prints the counts. Run after a change that makes more cases pass; the
# conformance_passing_* tests then keep them passing.
# Usage: scripts/update_conformance_list.sh [BUILD_DIR] [ONNX_NODE_DIR]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
cases=${2:-$root/../shared/onnx-node}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for target in llvm reference; do
  "$build/src/cli/tessel" conformance "$cases" --target $target --fusion default > "$tmp/$target.txt" || true
  tail -n 1 "$tmp/$target.txt" | sed "s/^/$target: /"
  sed -n 's/^PASS \(test_[A-Za-z0-9_]*\).*/\1/p' "$tmp/$target.txt" | sort > "$tmp/$target.pass"
done
mkdir -p "$root/tests/conformance"
comm -12 "$tmp/llvm.pass" "$tmp/reference.pass" > "$root/tests/conformance/passing.txt"
echo "$(wc -l < "$root/tests/conformance/passing.txt") cases pass on both: tests/conformance/passing.txt"
comm -13 "$tmp/llvm.pass" "$tmp/reference.pass" | sed 's/^/passes on the reference only: /'
