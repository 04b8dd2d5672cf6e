#!/bin/sh
# Writes `tessel ops` (the supported ONNX operators, generated from the
# importer's tables) into README.md between the ops markers; with --check,
# only says whether the README matches, exit 1 if not (a ctest runs this).
# Usage: scripts/update_readme_ops.sh [--check] [TESSEL_BINARY]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
check=0
if [ "${1:-}" = "--check" ]; then check=1; shift; fi
tessel=${1:-$root/build/src/cli/tessel}
readme=$root/README.md
tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp.table"' EXIT
"$tessel" ops > "$tmp.table"
awk -v table="$tmp.table" '
  /<!-- ops:begin -->/ { print; while ((getline line < table) > 0) print line; skip = 1; next }
  /<!-- ops:end -->/ { skip = 0 }
  !skip { print }
' "$readme" > "$tmp"
grep -q '<!-- ops:end -->' "$tmp" || { echo "update_readme_ops: README.md has no ops markers" >&2; exit 1; }
if [ $check -eq 1 ]; then
  if cmp -s "$tmp" "$readme"; then echo "README.md's operator table matches tessel ops"; exit 0; fi
  echo "README.md's operator table differs from tessel ops: run scripts/update_readme_ops.sh" >&2
  diff "$readme" "$tmp" | head -20 >&2
  exit 1
fi
cp "$tmp" "$readme"
echo "README.md: operator table written ($(grep -c '^| [A-Z]' "$tmp.table") operators)"
