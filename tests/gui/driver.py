# SPDX-License-Identifier: GPL-3.0-or-later
"""Runs the GUI scenarios inside a Blender with a window (docs/gui_tests.md):

    blender --python tests/gui/driver.py -- --out DIR [--log BLENDER_LOG] [--only NAME,...]
            [--link-repo]

Each scenario (tests/gui/scenarios.py) is stepped from a bpy.app.timers callback, so
Blender's event loop, redraws and X input go on between its steps. Writes DIR/results.json
and the screenshots, prints `N passed, M failed` and quits Blender with exit status 0
only when every scenario passed. --link-repo enables this checkout as the extension (for
a Blender whose Python has the dependencies, e.g. through pytest-blender) when no
Bonesmith extension is enabled.
"""
import argparse
import json
import os
import sys
import time
import traceback
from pathlib import Path

import bpy

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import scenarios  # noqa: E402
from ui import UI  # noqa: E402


def parse_args():
    argv = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []
    ap = argparse.ArgumentParser(prog="driver.py")
    ap.add_argument("--out", required=True)
    ap.add_argument("--log", default="")
    ap.add_argument("--only", default="", help="comma-separated scenario names")
    ap.add_argument("--link-repo", action="store_true")
    return ap.parse_args(argv)


class Runner:
    def __init__(self, args):
        self.out = Path(args.out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.ui = UI(self.out, args.log or None)
        only = {n for n in args.only.split(",") if n}
        self.todo = [s for s in scenarios.SCENARIOS if not only or s.__name__ in only]
        self.link_repo = args.link_repo
        self.results = []
        self.current = None

    def start(self):
        try:
            if self.ui.missing_tools:
                raise RuntimeError(f"missing tools: {', '.join(self.ui.missing_tools)}")
            scenarios.prepare(self.ui, link_repo=self.link_repo)
        except Exception:
            traceback.print_exc()
            self.results.append(dict(name="prepare", passed=False, seconds=0.0,
                                     error=traceback.format_exc(limit=4), shots=[]))
            self.todo = []
        bpy.app.timers.register(self.step, first_interval=0.5)
        return None   # once; step() is the repeating timer

    def step(self):
        """The timer callback: advance the current scenario by one step."""
        while True:
            if self.current is None:
                if not self.todo:
                    self.finish()
                    return None
                fn = self.todo.pop(0)
                print(f"--- scenario {fn.__name__}", flush=True)
                self.ui.shots = []
                self.current = (fn.__name__, fn(self.ui), time.monotonic())
            name, gen, started = self.current
            try:
                wait = next(gen)
                return max(float(wait or 0.0), 0.01)
            except StopIteration:
                self.record(name, started, None)
            except Exception as error:
                traceback.print_exc()
                try:
                    self.ui.shot(f"failed_{name}")
                except Exception:
                    traceback.print_exc()
                self.record(name, started, error)

    def record(self, name, started, error):
        if error is None and scenarios.DRAW_ERRORS:   # a panel failed to draw meanwhile
            error = RuntimeError("; ".join(scenarios.DRAW_ERRORS))
        scenarios.DRAW_ERRORS.clear()
        passed = error is None
        print(f"--- scenario {name}: {'passed' if passed else 'FAILED'} (draws: {scenarios.DRAWS})", flush=True)
        self.results.append(dict(name=name, passed=passed, seconds=round(time.monotonic() - started, 2),
                                 error="" if passed else f"{type(error).__name__}: {error}",
                                 shots=list(self.ui.shots)))
        self.current = None
        try:
            scenarios.reset(self.ui)
        except Exception:
            traceback.print_exc()

    def finish(self):
        passed = sum(r["passed"] for r in self.results)
        failed = len(self.results) - passed
        (self.out / "results.json").write_text(json.dumps(
            dict(blender=bpy.app.version_string, python=sys.version.split()[0],
                 passed=passed, failed=failed, scenarios=self.results), indent=1) + "\n")
        for r in self.results:
            print(f"{'PASS' if r['passed'] else 'FAIL'} {r['name']} ({r['seconds']:.1f} s){'' if r['passed'] else ': ' + r['error']}")
        print(f"{passed} passed, {failed} failed", flush=True)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0 if failed == 0 and passed else 1)   # no quit.blend, no exit dialog


runner = Runner(parse_args())
bpy.app.timers.register(runner.start, first_interval=1.0)
