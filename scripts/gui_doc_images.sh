#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Copies the README's pictures from a `make test-gui` run (out/gui/) to docs/images/gui_*.png:
# cropped to what they show and reduced to 256 colours (each well under 150 kB).
set -euo pipefail
cd "$(dirname "$0")/.."
# ImageMagick here, or the one in make test-gui's chroot (through a pipe)
if convert -version 2>/dev/null | grep -q ImageMagick; then convert=(convert)
else convert=(chroot "${BONESMITH_GUI_ROOT:-/var/cache/bonesmith-gui/trixie}" convert); fi
pic() {  # pic NAME OUT [CROP]
    "${convert[@]}" png:- ${3:+-crop "$3" +repage} -colors 256 PNG8:- < "out/gui/$1.png" > "docs/images/$2.png"
}
pic sidebar_mesh_selected gui_sidebar 291x280+0+0
pic sidebar_markers gui_sidebar_markers 291x300+0+0
pic viewport_posed gui_auto_rig_posed 900x784+422+0
pic status_bar_progress gui_status_progress 520x26+0+0
pic status_bar_error gui_status_error 560x26+560+0
pic preferences gui_preferences 590x120+172+248   # our section (the File row above is Blender's, cut by it)
ls -l docs/images/gui_*.png
