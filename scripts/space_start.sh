#!/bin/sh
# The Space image's command. With Space persistent storage mounted at /data (writable), recordings and results live
# there (the image's sample recordings are copied in once, never over a file already there); otherwise they live in
# the container's app folder, as on a workstation. Then the app takes over this process.
set -eu
if [ -d /data ] && [ -w /data ]; then
  export WOLFECLICK_RECORDINGS="${WOLFECLICK_RECORDINGS:-/data/recordings}" WOLFECLICK_RESULTS="${WOLFECLICK_RESULTS:-/data/results}"
  mkdir -p "$WOLFECLICK_RECORDINGS" "$WOLFECLICK_RESULTS"
  cp -n recordings/*.json "$WOLFECLICK_RECORDINGS"/ 2>/dev/null || true
fi
exec wolfeclick app
