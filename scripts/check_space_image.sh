#!/usr/bin/env bash
# Build the Space image from this repo's own Dockerfile with podman, start the image's command from its filesystem,
# load the page, play a Live battle through the API, and print the image size, build time and cold start.
#
#   bash scripts/check_space_image.sh                          # the CPU-basic image (WOLFECLICK_EXTRAS="")
#   WOLFECLICK_EXTRAS=llm bash scripts/check_space_image.sh    # the GPU Space's image (torch with CUDA: large)
#   NO_CACHE=1 bash scripts/check_space_image.sh               # every layer built again (the build time a Space sees)
#
# Needs root and Debian's podman and mmdebstrap (`apt-get install -y podman mmdebstrap`). On this kind of machine
# `podman run` cannot start containers (crun refuses rlimits, then cgroups in hybrid mode), so the check exports the
# built image's filesystem and runs its CMD in a chroot with the image's ENV, as UID 1000 like a Space, in private
# PID and mount namespaces. The chroot shares this machine's network, so the check overrides GRADIO_SERVER_NAME to
# 127.0.0.1: nothing listens beyond loopback. Without a debian:trixie-slim image at hand, a base made from Debian's
# packages by mmdebstrap (minbase, the same packages) stands in for it (BASE=…, kept between runs).
set -euo pipefail
cd "$(dirname "$0")/.."
IMAGE=${IMAGE:-localhost/wolfeclick-arena:check}
BASE=${BASE:-localhost/trixie-base}
EXTRAS=${WOLFECLICK_EXTRAS:-}
PORT=${PORT:-7871}
WORK=$(mktemp -d /tmp/wolfeclick-space.XXXXXX)
ROOTFS=$WORK/rootfs
PY=${PY:-.venv/bin/python}
app_pid=""
cleanup() {
  # The image's command is PID 1 of its PID namespace, which ignores SIGTERM: end the whole group with SIGKILL.
  [ -n "$app_pid" ] && kill -KILL -- "-$app_pid" 2>/dev/null || true
  [ -n "$app_pid" ] && wait "$app_pid" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

if ! podman image exists "$BASE"; then
  echo "making the trixie base ($BASE) from Debian's packages with mmdebstrap (a few minutes, once)"
  mmdebstrap --quiet --variant=minbase --include=ca-certificates trixie "$WORK/trixie.tar"
  podman import --quiet "$WORK/trixie.tar" "$BASE" >/dev/null
  rm -f "$WORK/trixie.tar"
fi

echo "building $IMAGE from ./Dockerfile (base $BASE, WOLFECLICK_EXTRAS='$EXTRAS')"
started=$(date +%s)
ca=()  # this machine's pip trusts a CA bundle of its own (a TLS-inspecting proxy): lend it to pip and npm in the build
host_ca=${PIP_CERT:-$(python3 -m pip config list 2>/dev/null | sed -n "s/^global.cert='\(.*\)'$/\1/p" | head -1)}
if [ -n "$host_ca" ] && [ -f "$host_ca" ]; then
  ca=(--volume "$host_ca:/run/build-ca.crt:ro" --build-arg PIP_CERT=/run/build-ca.crt
      --build-arg npm_config_cafile=/run/build-ca.crt)
fi
podman build --quiet ${NO_CACHE:+--no-cache} --isolation chroot --from "$BASE" --build-arg "WOLFECLICK_EXTRAS=$EXTRAS" "${ca[@]}" \
  -t "$IMAGE" . >/dev/null
build_s=$(( $(date +%s) - started ))
size=$(podman image inspect --format '{{.Size}}' "$IMAGE")

mkdir -p "$ROOTFS"
container=$(podman create "$IMAGE")
podman export "$container" | tar -x -C "$ROOTFS"
podman rm "$container" >/dev/null
workdir=$(podman image inspect --format '{{.Config.WorkingDir}}' "$IMAGE")
user=$(podman image inspect --format '{{.Config.User}}' "$IMAGE")
command=$(podman image inspect --format '{{range .Config.Cmd}}{{.}} {{end}}' "$IMAGE")
mapfile -t image_env < <(podman image inspect --format '{{range .Config.Env}}{{println .}}{{end}}' "$IMAGE" | sed '/^$/d')
uid=$(chroot "$ROOTFS" id -u "$user")
export UID_GID="$uid:$uid"

if curl -fs -o /dev/null "http://127.0.0.1:$PORT/"; then
  echo "FAIL: something already serves 127.0.0.1:$PORT (PORT=… picks another)"; exit 1
fi
echo "starting the image's command ($command) as $user (uid $uid) in $workdir, on 127.0.0.1:$PORT"
started_ns=$(date +%s%N)
setsid unshare --fork --pid --mount sh -c '
  root=$1; shift
  mount -t proc proc "$root/proc" && mount --rbind /dev "$root/dev" && mount -t tmpfs tmpfs "$root/tmp"
  exec chroot --userspec="$UID_GID" "$root" "$@"
' sh "$ROOTFS" env -i "${image_env[@]}" GRADIO_SERVER_NAME=127.0.0.1 GRADIO_SERVER_PORT="$PORT" \
    sh -c "cd '$workdir' && exec $command" > "$WORK/app.log" 2>&1 &
app_pid=$!

ready=""
for _ in $(seq 1 1200); do  # up to 10 minutes on a busy machine; the figure printed is the time it really took
  if curl -fs -o /dev/null "http://127.0.0.1:$PORT/"; then ready=1; break; fi
  if ! kill -0 "$app_pid" 2>/dev/null; then break; fi
  sleep 0.5
done
cold_ms=$(( ($(date +%s%N) - started_ns) / 1000000 ))
if [ -z "$ready" ]; then
  echo "FAIL: the app never served its page"; tail -20 "$WORK/app.log"; exit 1
fi
curl -fsS -o "$WORK/page.html" "http://127.0.0.1:$PORT/"
grep -q "WolfeClick Arena" "$WORK/page.html" || { echo "FAIL: the page is not the Arena's"; exit 1; }

"$PY" - "$PORT" <<'EOF'
import sys

from gradio_client import Client

client = Client(f"http://127.0.0.1:{sys.argv[1]}/", verbose=False)
job = client.submit("heuristic", "", "random", "", "gen4randombattle", "7", "score", 0, api_name="/live_start")
updates = list(job)
status, turn = (updates[-1][0], updates[-1][2]) if updates else ("", {})
if not (str(status).startswith("Finished") and isinstance(turn, dict) and turn.get("done")):
    sys.exit(f"FAIL: the Live battle did not finish ({len(updates)} updates; last status: {str(status)[:200]})")
print(f"live battle: heuristic v random, gen4randombattle seed 7: {status} ({len(updates)} streamed updates, "
      f"{turn['result']['reason']}, recording {turn['recording']})")
EOF
echo "image: $IMAGE  size: $(( size / 1000000 )) MB  build: ${build_s} s  cold start (command to page served): ${cold_ms} ms"
echo "OK"
