#!/bin/sh
# Render a results folder's report.html in headless Chromium and save a screenshot, to
# check that the page (charts included) draws offline in a real browser.
#
#   scripts/screenshot-report.sh results/quickstart-…/report.html [out.png] [1400,2600]
#
# Needs Debian's `chromium` (apt-get install chromium); this script installs nothing.
set -eu
html=${1:?usage: $0 REPORT.html [OUT.png] [WIDTH,HEIGHT]}
out=${2:-report.png}
size=${3:-1400,2600}
chromium=${CHROMIUM:-/usr/bin/chromium}
[ -x "$chromium" ] || { echo "no $chromium: apt-get install chromium (or set CHROMIUM)" >&2; exit 2; }
abs=$(cd "$(dirname "$html")" && pwd)/$(basename "$html")
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
"$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$profile" --hide-scrollbars --virtual-time-budget=2000 \
  --screenshot="$out" --window-size="$size" "file://$abs" >/dev/null 2>&1
[ -s "$out" ] || { echo "no screenshot written" >&2; exit 1; }
echo "$out"
