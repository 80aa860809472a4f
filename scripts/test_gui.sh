#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# `make test-gui`: the GUI scenarios (tests/gui/) in a real Blender with a window
# (docs/gui_tests.md). Debian 13 packages Blender 4.3.2 (Python 3.13); it runs in a chroot
# kept outside the repository (BONESMITH_GUI_ROOT), made with debootstrap when missing or
# broken. The Linux zip of `make extension` is installed with Blender's own command, and
# Blender runs on Xvfb with tests/gui/driver.py. Writes out/gui/ (screenshots,
# results.json, logs); exit status 0 only when every scenario passed.
#   scripts/test_gui.sh [--only NAME,...]
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
root=${BONESMITH_GUI_ROOT:-/var/cache/bonesmith-gui/trixie}
out=$repo/out/gui
packages="blender python3-numpy xvfb xauth xdotool x11-apps imagemagick"
stamp=$root/.bonesmith-gui-ready   # written once the packages are in; holds their list
started=$(date +%s)

say() { echo "[test-gui] $*"; }
cannot() { say "cannot run: $*"; exit 2; }

[ "$(id -u)" = 0 ] || cannot "needs root (debootstrap and chroot); run it as root, as CI does"
[ "$(uname -m)" = x86_64 ] || cannot "the Linux zip is built for x86_64, this machine is $(uname -m)"

mounted() { awk -v r="$1" '$2 == r || index($2, r "/") == 1' /proc/mounts | grep -q .; }
unmount_all() {
    for m in src sys dev/pts dev proc; do
        if mountpoint -q "$root/$m" 2>/dev/null; then umount -l "$root/$m" || true; fi
    done
}
trap unmount_all EXIT
trap "exit 130" INT TERM   # (the EXIT trap then unmounts)

healthy() {
    [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$packages" ] &&
        chroot "$root" blender --version 2>/dev/null | grep -q '^Blender 4' &&
        for tool in Xvfb xdotool xwd convert; do chroot "$root" sh -c "command -v $tool" >/dev/null || return 1; done
}

make_root() {
    if [ -e "$root" ]; then
        mounted "$root" && cannot "$root is broken but has file systems mounted under it; unmount them first"
        say "$root is incomplete or broken: making it again"
        rm -rf --one-file-system "$root"
    fi
    if ! command -v debootstrap >/dev/null; then
        say "installing debootstrap"
        apt-get install -y -q debootstrap >/dev/null 2>&1 ||
            { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q debootstrap >/dev/null 2>&1; } ||
            cannot "debootstrap is missing and apt-get could not install it (no package registry?)"
    fi
    mkdir -p "$(dirname "$root")"
    say "debootstrap trixie into $root (about 30 s)"
    # BONESMITH_GUI_MIRROR: a Debian mirror; empty: debootstrap's default
    debootstrap --variant=minbase trixie "$root" ${BONESMITH_GUI_MIRROR:-} > "$out/debootstrap.log" 2>&1 ||
        { tail -5 "$out/debootstrap.log"; cannot "debootstrap failed (no Debian package registry reachable?); see $out/debootstrap.log"; }
    mount_all
    say "installing $packages (about a minute)"
    chroot "$root" /usr/bin/env DEBIAN_FRONTEND=noninteractive sh -c \
        "apt-get update -q && apt-get install -y -q --no-install-recommends $packages && apt-get clean" \
        > "$out/apt.log" 2>&1 ||
        { tail -5 "$out/apt.log"; cannot "apt-get in the chroot failed; see $out/apt.log"; }
    echo "$packages" > "$stamp"
}

mount_all() {
    for m in proc sys dev dev/pts; do
        mkdir -p "$root/$m"
        mountpoint -q "$root/$m" || mount --bind "/$m" "$root/$m"
    done
}

rm -rf "$out" && mkdir -p "$out"
if [ -d "$root" ]; then mount_all; fi
if ! healthy; then
    unmount_all
    make_root
fi
mount_all
mkdir -p "$root/src"
mount --bind "$repo" "$root/src"
say "chroot ready after $(( $(date +%s) - started )) s: $(chroot "$root" blender --version 2>/dev/null | head -1)"

say "building the Linux zip"
.venv/bin/python scripts/build_extension.py --out dist --platforms linux-x64 --reuse > "$out/build.log" 2>&1 ||
    { tail -20 "$out/build.log"; say "building the extension failed"; exit 1; }
zip=$(ls dist/bonesmith-*-linux_x64.zip)

say "running the scenarios in Blender (log: $out/blender.log)"
status=0
chroot "$root" /src/tests/gui/inner.sh "/src/$zip" /src/out/gui --log /src/out/gui/blender.log "$@" || status=$?
grep -E '^(PASS|FAIL) ' "$out/blender.log" || true
summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$out/blender.log" | tail -1 || true)
if [ -z "$summary" ]; then
    tail -30 "$out/blender.log"
    say "Blender ended (exit $status) before the scenarios did"
    summary="0 passed, 1 failed"
fi
case "$summary" in *" 0 failed") ;; *) [ "$status" != 0 ] || status=1 ;; esac
say "took $(( $(date +%s) - started )) s; screenshots and results.json in $out"
echo "$summary"
exit $status
