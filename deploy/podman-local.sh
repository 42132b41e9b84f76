#!/usr/bin/env bash
# Builds the Dockerfile with podman where no image registry can be reached, and checks
# the image: the two base images are made locally with debootstrap (Debian bookworm,
# minbase; the build one with gcc and libc6-dev, the machine's Rust toolchain and crate
# cache bind-mounted as the official rust image lays them out), then `podman build
# --isolation chroot`, then the image's user, entrypoint and size, and its binary run as
# that user from the image's own root filesystem (chroot --userspec: `podman run` needs
# to set rlimits, which a sandbox without CAP_SYS_RESOURCE refuses). Not run by CI (a
# release build in a container takes minutes); see deploy/README.md for what it showed.
#
#   deploy/podman-local.sh [--work DIR]     (root; apt-get install podman debootstrap)
set -euo pipefail
cd "$(dirname "$0")/.."
work=/var/tmp/mcp-fleet-images
[ "${1:-}" != --work ] || work=${2:?}
[ "$(id -u)" = 0 ] || { echo "podman-local: needs root (debootstrap, chroot)" >&2; exit 2; }
for c in podman debootstrap; do
  command -v "$c" >/dev/null || { echo "podman-local: no $c (fix: apt-get install $c)" >&2; exit 2; }
done
rustup_home=${RUSTUP_HOME:-$HOME/.rustup}
cargo_home=${CARGO_HOME:-$HOME/.cargo}
mkdir -p "$work"

if ! podman image exists localhost/debian-local:bookworm; then
  [ -d "$work/runtime" ] || debootstrap --variant=minbase bookworm "$work/runtime" http://deb.debian.org/debian
  rm -rf "$work/runtime/var/cache/apt/archives/"*.deb "$work/runtime/var/lib/apt/lists/"*
  tar -C "$work/runtime" -c . | podman import --change 'CMD ["/bin/bash"]' - localhost/debian-local:bookworm
fi
if ! podman image exists localhost/rust-local:bookworm; then
  [ -d "$work/build" ] || cp -a "$work/runtime" "$work/build"
  chroot "$work/build" /bin/sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends gcc libc6-dev'
  rm -rf "$work/build/var/cache/apt/archives/"*.deb "$work/build/var/lib/apt/lists/"*
  tar -C "$work/build" -c . | podman import \
    --change 'ENV RUSTUP_HOME=/usr/local/rustup' --change 'ENV CARGO_HOME=/usr/local/cargo' \
    --change 'ENV PATH=/usr/local/cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    - localhost/rust-local:bookworm
fi

podman build --isolation chroot --network host -t localhost/mcp-fleet:dev \
  --build-arg RUST_IMAGE=localhost/rust-local:bookworm --build-arg RUNTIME_IMAGE=localhost/debian-local:bookworm \
  -v "$rustup_home:/usr/local/rustup:ro" -v "$cargo_home/bin:/usr/local/cargo/bin:ro" \
  -v "$cargo_home/registry:/usr/local/cargo/registry" .

echo "== the image"
podman image inspect --format 'user {{.Config.User}}, entrypoint {{.Config.Entrypoint}}, cmd {{.Config.Cmd}}, {{.Size}} bytes' localhost/mcp-fleet:dev
# A container's root filesystem (writable, unlike the image's own mount), not started.
cid=$(podman create localhost/mcp-fleet:dev)
root=$(podman mount "$cid")
trap 'podman umount "$cid" >/dev/null; podman rm "$cid" >/dev/null' EXIT
ls -l "$root/usr/local/bin/mcp-fleet"
echo "== its binary, as user 10001, in its own root filesystem"
chroot --userspec 10001:10001 "$root" /usr/local/bin/mcp-fleet --version
chroot --userspec 10001:10001 "$root" /usr/local/bin/mcp-fleet run --sessions 20 --out /tmp/image-check --quiet
python3 -c 'import json, sys; s = json.load(open(sys.argv[1]))["sessions"]; print(s); sys.exit(s["failed"] != 0)' \
  "$root/tmp/image-check/summary.json"
echo "podman-local: ok"
