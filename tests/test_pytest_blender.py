# SPDX-License-Identifier: GPL-3.0-or-later
"""`pytest --blender-executable PATH` hands the session to a Blender binary (pytest-blender),
while a plain `pytest` never looks for one (pytest.ini blocks the plugin's auto-loading;
tests/conftest.py loads it only when a binary is named).

No Blender binary is at hand here, so a stand-in takes its place: a script that accepts
Blender's command line the way pytest-blender calls it (`PATH -b --python run_pytest.py --
ARGS`) and runs the script with this Python, on the bpy module.
"""
from __future__ import annotations

import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

STAND_IN = """#!/bin/sh
# Blender's command line as pytest-blender uses it: BLENDER -b [...] --python FILE -- ARGS
printf '%s\\n' "$@" > "{argv_log}"
while [ $# -gt 0 ]; do
    case "$1" in
        --python) script="$2"; shift 2 ;;
        --) break ;;
        *) shift ;;
    esac
done
exec "{python}" "$script" "$@"
"""


def test_blender_executable_runs_the_session_in_that_binary(tmp_path):
    pytest.importorskip("pytest_blender")
    argv_log = tmp_path / "argv.txt"
    blender = tmp_path / "blender"
    blender.write_text(STAND_IN.format(argv_log=argv_log, python=sys.executable))
    blender.chmod(blender.stat().st_mode | stat.S_IXUSR)
    proc = subprocess.run([sys.executable, "-m", "pytest", "--blender-executable", str(blender),
                           "-p", "no:cacheprovider", "tests/test_registration.py"],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    assert re.search(r"\b[1-9]\d* passed\b", proc.stdout), proc.stdout[-4000:]
    argv = argv_log.read_text().splitlines()
    assert argv[0] == "-b" and argv[argv.index("--python") + 1].endswith("run_pytest.py"), argv
    # the test selection went through to the pytest run inside "Blender"
    assert "tests/test_registration.py" in argv[argv.index("--") + 1:], argv
