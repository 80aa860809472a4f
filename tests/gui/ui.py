# SPDX-License-Identifier: GPL-3.0-or-later
"""What the GUI scenarios drive Blender's window with (docs/gui_tests.md): real X input
through xdotool, screenshots of the X screen, and bpy to set up and to look.

Runs inside a Blender with a window (tests/gui/driver.py); every scenario is a generator
that yields the seconds to wait while Blender's event loop goes on.
"""
from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import bpy


class CheckFailed(AssertionError):
    pass


def expect(condition, message: str) -> None:
    """A scenario's check: raises (the scenario fails) with `message` when false."""
    if not condition:
        raise CheckFailed(message)


class UI:
    def __init__(self, out: Path, log: Path | None):
        self.out = Path(out)
        self.log = Path(log) if log else None
        self.shots: list[str] = []
        self.missing_tools = [t for t in ("xdotool", "xwd", "convert") if shutil.which(t) is None]

    # -- where things are ---------------------------------------------------------------------
    @property
    def window(self):
        return bpy.context.window_manager.windows[0]

    def area(self, kind: str = 'VIEW_3D'):
        for area in self.window.screen.areas:
            if area.type == kind:
                return area
        raise CheckFailed(f"no {kind} area in the window")

    @staticmethod
    def region(area, kind: str = 'WINDOW'):
        return next(r for r in area.regions if r.type == kind)

    def override(self, kind: str = 'VIEW_3D', window=None):
        """A context for bpy.ops as if the mouse were over the `kind` area."""
        window = window or self.window
        area = next(a for a in window.screen.areas if a.type == kind)
        return bpy.context.temp_override(window=window, area=area, region=self.region(area),
                                         screen=window.screen)

    def screen_xy(self, region, x: float, y: float, window=None) -> tuple[int, int]:
        """Region pixel (origin bottom left) -> X screen pixel (origin top left)."""
        window = window or self.window
        return (int(window.x + region.x + x),
                int(self.screen_height() - window.y - (region.y + y)))

    def screen_height(self) -> int:
        out = subprocess.run(["xdotool", "getdisplaygeometry"], capture_output=True, text=True, check=True)
        return int(out.stdout.split()[1])

    # -- input ---------------------------------------------------------------------------------
    def xdo(self, *args) -> None:
        subprocess.run(["xdotool", *map(str, args)], check=True, timeout=10)

    def click(self, region, x, y, window=None) -> None:
        self.xdo("mousemove", *self.screen_xy(region, x, y, window), "click", "1")

    def key(self, keys: str, region=None) -> None:
        """Key press(es) with the mouse over `region` (the 3D View by default): Blender sends
        keys to the editor under the mouse."""
        region = region or self.region(self.area('VIEW_3D'))
        self.xdo("mousemove", *self.screen_xy(region, region.width / 2, region.height / 2), "key", keys)

    # -- looking -------------------------------------------------------------------------------
    def shot(self, name: str, rect=None) -> Path:
        """A PNG of the X screen (Blender's own screenshot is black under Xvfb), cropped to
        `rect` = (x, y, width, height) in screen pixels."""
        path = self.out / f"{name}.png"
        crop = ["-crop", "{2}x{3}+{0}+{1}".format(*map(int, rect)), "+repage"] if rect else []
        xwd = subprocess.run(["xwd", "-root", "-silent"], capture_output=True, check=True, timeout=30)
        subprocess.run(["convert", "xwd:-", *crop, str(path)], input=xwd.stdout, check=True, timeout=30)
        self.shots.append(path.name)
        return path

    def rect(self, region, window=None, pad: int = 0) -> tuple[int, int, int, int]:
        """`region`'s screen rectangle (x, y, width, height), widened by `pad`."""
        x, y = self.screen_xy(region, 0, region.height, window)
        return (max(x - pad, 0), max(y - pad, 0), region.width + 2 * pad, region.height + 2 * pad)

    def x_window(self, title: str) -> str:
        """The X id of the (newest) window whose title contains `title`."""
        out = subprocess.run(["xdotool", "search", "--name", title], capture_output=True, text=True)
        ids = out.stdout.split()
        if not ids:
            raise CheckFailed(f"no X window titled {title!r}")
        return ids[-1]

    def x_rect(self, window_id: str) -> tuple[int, int, int, int]:
        """Screen rectangle (x, y, width, height) of an X window."""
        out = subprocess.run(["xdotool", "getwindowgeometry", "--shell", window_id],
                             capture_output=True, text=True, check=True).stdout
        geo = dict(line.split("=", 1) for line in out.split())
        return int(geo["X"]), int(geo["Y"]), int(geo["WIDTH"]), int(geo["HEIGHT"])

    def status_bar(self) -> tuple[int, int, int, int]:
        """The status bar along the window's bottom edge."""
        w = self.window
        height = round(25 * bpy.context.preferences.system.ui_scale)
        return (w.x, self.screen_height() - w.y - height, w.width, height)

    def pixels(self, rect) -> bytes:
        """Raw RGB of a screen rectangle (to tell whether something was drawn there)."""
        xwd = subprocess.run(["xwd", "-root", "-silent"], capture_output=True, check=True, timeout=30)
        crop = "{2}x{3}+{0}+{1}".format(*map(int, rect))
        out = subprocess.run(["convert", "xwd:-", "-crop", crop, "+repage", "rgb:-"],
                             input=xwd.stdout, capture_output=True, check=True, timeout=30)
        return out.stdout

    def log_size(self) -> int:
        """How far Blender's output log has come (to read what a step printed)."""
        import sys
        sys.stdout.flush()
        sys.stderr.flush()
        return self.log.stat().st_size if self.log and self.log.is_file() else 0

    def log_since(self, offset: int) -> str:
        import sys
        sys.stdout.flush()
        sys.stderr.flush()
        if not self.log or not self.log.is_file():
            return ""
        with open(self.log, "rb") as fh:
            fh.seek(offset)
            return fh.read().decode("utf-8", "replace")

    # -- waiting -------------------------------------------------------------------------------
    def until(self, condition, timeout: float, what: str, step: float = 0.1):
        """Yields (keeps Blender running) until condition() holds; fails after `timeout` s."""
        end = time.monotonic() + timeout
        while not condition():
            expect(time.monotonic() < end, f"timed out after {timeout:g} s waiting for {what}")
            yield step

    def modal_running(self, idname: str) -> bool:
        return any(op.bl_idname == idname for op in self.window.modal_operators)
