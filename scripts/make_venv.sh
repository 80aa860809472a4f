#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# make_venv.sh X.Y DIR: create (if missing) the venv DIR on Python X.Y, install
# requirements.txt (its environment markers pick bpy/numpy/torch for that Python) and
# link the repo root into it as the `bonesmith` package. Called by the Makefile.
set -euo pipefail
want="$1" venv="$2"
cd "$(dirname "$0")/.."
if ! [ -x "$venv/bin/python" ]; then
    python="$(scripts/find_python.sh "$want")"
    "$python" -m venv "$venv"
fi
"$venv/bin/python" -c "import sys; assert sys.version_info[:2] == tuple(map(int, '$want'.split('.'))), \
    f'$venv is Python {sys.version.split()[0]}, not $want: remove it and run make again'"
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet -r requirements.txt
site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
ln -sfn "$PWD" "$site/bonesmith"
touch "$venv/.installed"
