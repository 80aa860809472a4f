#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Inside the chroot (scripts/test_gui.sh): a fresh Blender user folder, our zip installed
# with Blender's own command, a virtual X display, and Blender with the GUI driver.
#   inner.sh ZIP OUT_DIR [DRIVER ARGS...]
set -euo pipefail
zip=$1; out=$2; shift 2
here=$(cd "$(dirname "$0")" && pwd)
export HOME=$(mktemp -d /tmp/bonesmith-home.XXXXXX)   # no state from an earlier run
mkdir -p "$out"

blender --factory-startup --command extension install-file -r user_default --enable "$zip" \
    > "$out/install.log" 2>&1 || { cat "$out/install.log"; echo "installing $zip failed"; exit 1; }
# The splash screen would cover the window: off in the saved preferences.
blender -b --python-expr 'import bpy; bpy.context.preferences.view.show_splash = False; bpy.ops.wm.save_userpref()' \
    >> "$out/install.log" 2>&1

display=:${BONESMITH_GUI_DISPLAY:-77}
Xvfb "$display" -screen 0 1600x900x24 -nolisten tcp > "$out/xvfb.log" 2>&1 &
xvfb=$!
trap 'kill $xvfb 2>/dev/null || true; rm -rf "$HOME"' EXIT
export DISPLAY=$display
for _ in $(seq 50); do xdotool getdisplaygeometry >/dev/null 2>&1 && break; sleep 0.1; done

status=0
timeout "${BONESMITH_GUI_TIMEOUT:-360}" blender --python "$here/driver.py" -- --out "$out" "$@" \
    > "$out/blender.log" 2>&1 || status=$?
exit $status
