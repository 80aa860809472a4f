# SPDX-License-Identifier: GPL-3.0-or-later
"""The GUI scenarios of `make test-gui` (tests/gui/, docs/gui_tests.md) for a user who has
Blender installed:

    DISPLAY=:0 pytest --blender-executable /path/to/blender tests/test_gui_blender.py

pytest-blender runs this session in that Blender (in the background, without a window),
so the scenarios run in a second instance of the same binary, with a window on $DISPLAY
and this checkout enabled as the extension (its Python needs the dependencies of
requirements.txt). One test per scenario reports its result. Skipped on the bpy module from
PyPI (plain `pytest`, `make test`), which has no binary to start, and without a display or
xdotool / xwd / ImageMagick's convert.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

GUI = Path(__file__).resolve().parent / "gui"
TOOLS = ("xdotool", "xwd", "convert")


def scenario_names() -> list[str]:
    """The names in scenarios.SCENARIOS, read from the source (importing it needs a window)."""
    text = (GUI / "scenarios.py").read_text()
    block = re.search(r"^SCENARIOS = \[(.*?)^\]", text, re.S | re.M).group(1)
    return re.findall(r"^\s+(\w+),", block, re.M)


@pytest.fixture(scope="session")
def gui_results(tmp_path_factory):
    bpy = pytest.importorskip("bpy")
    binary = bpy.app.binary_path
    if not binary or not os.access(binary, os.X_OK):
        pytest.skip("needs a Blender binary: run with pytest --blender-executable PATH (pytest-blender)")
    if not os.environ.get("DISPLAY"):
        pytest.skip("needs an X display for Blender's window (DISPLAY is not set)")
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"needs {', '.join(missing)} (xdotool, x11-apps, imagemagick)")
    out = tmp_path_factory.mktemp("gui")
    log = out / "blender.log"
    with open(log, "wb") as fh:
        proc = subprocess.run([binary, "--factory-startup", "--python", str(GUI / "driver.py"), "--",
                               "--out", str(out), "--log", str(log), "--link-repo"],
                              stdout=fh, stderr=subprocess.STDOUT, timeout=900)
    results = out / "results.json"
    assert results.is_file(), f"Blender ended (exit {proc.returncode}) before the scenarios did:\n" \
                              + log.read_text(errors="replace")[-4000:]
    return {r["name"]: r for r in json.loads(results.read_text())["scenarios"]}, out


@pytest.mark.parametrize("name", scenario_names())
def test_gui_scenario(gui_results, name):
    results, out = gui_results
    assert "prepare" not in results, results.get("prepare", {}).get("error")
    assert name in results, f"{name} did not run"
    assert results[name]["passed"], f"{results[name]['error']} (screenshots, log: {out})"


def test_scenario_names_are_found():
    assert len(scenario_names()) >= 10 and "open_tab_by_clicking" in scenario_names()
