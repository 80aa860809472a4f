# SPDX-License-Identifier: GPL-3.0-or-later
"""Run a core computation in a background thread with progress and cancellation.

No bpy here: the thread must never touch Blender data. The modal operator polls
`fraction`, `message` and `done` from a timer.
"""
from __future__ import annotations

import threading

from ..core.errors import Cancelled


class Job:
    """`work(progress)` runs in a daemon thread; `progress(fraction, message)` is the
    callback core functions accept, and raises Cancelled once `cancel()` was called."""

    def __init__(self, work):
        self._work = work
        self._cancel = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bonesmith-job", daemon=True)
        self.fraction = 0.0
        self.message = ""
        self.result = None
        self.error = None

    def start(self) -> "Job":
        self._thread.start()
        return self

    def progress(self, fraction: float, message: str = "") -> None:
        if self._cancel.is_set():
            raise Cancelled("Cancelled by the user")
        self.fraction = min(max(float(fraction), 0.0), 1.0)
        self.message = message

    def cancel(self) -> None:
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    @property
    def done(self) -> bool:
        return not self._thread.is_alive()

    def wait(self, timeout=None) -> bool:
        self._thread.join(timeout)
        return self.done

    def _run(self) -> None:
        try:
            self.result = self._work(self.progress)
        except BaseException as error:  # handed to the main thread, never lost
            self.error = error
