#!/usr/bin/env bash
# html_in_chromium.sh TESSEL MODEL WORKDIR: writes a fusion report of MODEL and
# opens report.html in headless Chromium as a user would: the page must load
# from disk with its charts in the rendered DOM (a roofline point per
# kernel), and a screenshot of it must not be blank.
set -euo pipefail
tessel=$1 model=$2 work=$3
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
command -v chromium >/dev/null || { echo "chromium is not installed (scripts/test.sh installs it)"; exit 1; }
rm -rf "$work" && mkdir -p "$work"
TESSEL_CACHE="$work/cache" "$tessel" fusion-report "$model" --input-shape image=1x1x28x28 \
  --policies none,default --repeat 3 -o "$work/report" >/dev/null
chrome() {
  timeout 120 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$work/profile" \
    --window-size=1200,1600 "$@" "file://$work/report/report.html" 2>"$work/chromium.log"
}
chrome --dump-dom >"$work/dom.html"
grep -q '<svg id="roofline"' "$work/dom.html" || { echo "no roofline in the rendered page"; exit 1; }
grep -q '<svg id="time-bars"' "$work/dom.html" || { echo "no time bars in the rendered page"; exit 1; }
points=$(grep -o '<circle cx' "$work/dom.html" | wc -l)
[[ $points -ge 4 ]] || { echo "only $points points on the roofline"; exit 1; }
if grep -E 'Uncaught|ERR_FILE_NOT_FOUND|Failed to load' "$work/chromium.log"; then
  echo "the page did not load cleanly"; exit 1
fi
chrome --screenshot="$work/shot.png" >/dev/null
python3 "$here/check_screenshot.py" "$work/shot.png"
echo "report.html renders: $points points, screenshot $work/shot.png"
