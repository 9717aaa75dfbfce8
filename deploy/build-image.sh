#!/bin/sh
# Build the plumb container image where no image registry is reachable, and try it.
#
# The base image is made here instead of pulled: debootstrap lays a minimal Debian
# (bookworm: Python 3.11 with venv) from a Debian mirror, `podman import` makes it an
# image, and deploy/Containerfile is built on it (BASE_IMAGE build-arg; apt and pip
# reach their mirrors through the host's network). Then, in the image, `plumb
# --version` and one `plumb serve --once` turn on the example fleet (a lab fleet,
# followed through a bare git remote) must succeed.
#
# Needs root (debootstrap, podman), podman and debootstrap (Debian: apt-get install
# podman debootstrap). Slow (minutes): not part of CI. Usage, from anywhere:
#   deploy/build-image.sh [TAG]        (TAG: localhost/plumb:dev)
# Environment: DEBIAN_MIRROR, DEBIAN_SUITE (bookworm), PLUMB_ROOTFS (a kept rootfs
# directory, reused when it exists), BASE_TAG (localhost/plumb-base:bookworm).
set -eu

repo=$(cd "$(dirname "$0")/.." && pwd)
tag=${1:-localhost/plumb:dev}
suite=${DEBIAN_SUITE:-bookworm}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
base=${BASE_TAG:-localhost/plumb-base:$suite}
rootfs=${PLUMB_ROOTFS:-${TMPDIR:-/tmp}/plumb-rootfs-$suite}

for tool in podman debootstrap tar; do
    command -v "$tool" >/dev/null || { echo "error: $tool is not installed" >&2; exit 2; }
done

if ! podman image exists "$base"; then
    if [ ! -x "$rootfs/usr/bin/python3" ]; then
        echo "== debootstrap $suite into $rootfs"
        debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates \
            "$suite" "$rootfs" "$mirror"
    fi
    echo "== import $rootfs as $base"
    tar -C "$rootfs" --numeric-owner -c . | podman import \
        --change 'CMD ["/bin/bash"]' - "$base"
fi

echo "== build $tag on $base"
# chroot isolation: RUN steps need no OCI runtime (crun refuses hybrid cgroup hosts
# and hosts without CAP_SYS_RESOURCE, where it cannot set the container's rlimits).
ca=${PLUMB_BUILD_CA:-/etc/ssl/certs/ca-certificates.crt}  # the host's CAs, for pip
set -- --isolation=chroot --format docker --network=host --build-arg "BASE_IMAGE=$base"
[ -f "$ca" ] && set -- "$@" -v "$ca:/run/host-ca.crt:ro"
podman build "$@" -f "$repo/deploy/Containerfile" -t "$tag" "$repo"

# The image's own files are run through chroot (`podman image mount`): `podman run`
# needs an OCI runtime, and crun cannot start a container on a host with hybrid
# cgroups or without CAP_SYS_RESOURCE (it sets the container's rlimits).
mnt=$(podman image mount "$tag")
work=$(mktemp -d)
chmod 1777 "$work"
cp -r "$repo/examples/orion" "$work/author"
rm -rf "$work/author/.plumb"
mount --bind "$work" "$mnt/tmp"
mount -t proc proc "$mnt/proc"
trap 'umount "$mnt/proc" "$mnt/tmp"; podman image unmount "$tag" >/dev/null; rm -rf "$work"' EXIT
echo "== plumb --version and plumb serve --once on the example fleet, in the image"
chroot "$mnt" /bin/sh -ec '
    export PATH=/opt/plumb/venv/bin:$PATH HOME=/tmp
    plumb --version
    test -f /opt/plumb/venv/share/doc/plumb/serve.md  # the systemd unit's Documentation=
    cd /tmp
    git config --global user.name plumb; git config --global user.email plumb@localhost
    git config --global init.defaultBranch main
    git -C author init -q && git -C author add -A && git -C author commit -qm orion
    git clone -q --bare author remote.git && git clone -q remote.git fleet
    plumb lab init fleet >/dev/null
    plumb serve fleet --once --listen 127.0.0.1:0
'
echo "== ok: $tag"
