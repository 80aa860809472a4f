# SPDX-License-Identifier: GPL-3.0-or-later
"""Run a core computation in a background thread with progress and cancellation.

No bpy here: the thread must never touch Blender data. The modal operator polls
`fraction`, `message` and `done` from a timer.
"""
from __future__ import annotations

import threading

from ..core.errors import Cancelled


class _Polled:
    """What the modal operator polls: a worker thread, a cancel flag, done/wait."""
    _cancel: threading.Event
    _thread: threading.Thread

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    @property
    def done(self) -> bool:
        return not self._thread.is_alive()

    def wait(self, timeout=None) -> bool:
        self._thread.join(timeout)
        return self.done


class Job(_Polled):
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

    def _run(self) -> None:
        try:
            self.result = self._work(self.progress)
        except BaseException as error:  # handed to the main thread, never lost
            self.error = error


class ProcessJob(_Polled):
    """A command run in a subprocess, with the same interface as Job (fraction, message,
    done, result, error, cancel, wait) so the same modal operator code can poll it.

    Each line the process prints (stdout and stderr, split at \\n and \\r so progress bars
    count) goes to `parse(line) -> (fraction, message) | None`. On exit code 0, result is the
    list of lines; otherwise error is a BonesmithError with the process's own error line.
    cancel() terminates the process (error becomes Cancelled).
    """

    def __init__(self, command, *, env=None, cwd=None, parse=None):
        self.command = [str(c) for c in command]
        self._env, self._cwd = env, cwd
        self._parse = parse or (lambda line: None)
        self._cancel = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bonesmith-process", daemon=True)
        self.process = None
        self.lines = []
        self.fraction = 0.0
        self.message = ""
        self.result = None
        self.error = None
        self.returncode = None

    def start(self) -> "ProcessJob":
        import subprocess
        try:
            self.process = subprocess.Popen(self.command, stdout=subprocess.PIPE,
                                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                            env=self._env, cwd=self._cwd)
        except OSError as error:
            from ..core.errors import BonesmithError
            self.error = BonesmithError(f"Could not start {self.command[0]}: {error}")
        self._thread.start()
        return self

    def cancel(self) -> None:
        self._cancel.set()
        process = self.process
        if process is not None and process.poll() is None:
            process.terminate()

    def _line(self, raw: bytes) -> None:
        line = raw.decode("utf-8", "replace").strip()
        if not line:
            return
        self.lines.append(line)
        try:
            parsed = self._parse(line)
        except Exception:  # a progress line we misread must not kill the job
            parsed = None
        if parsed is not None:
            fraction, message = parsed
            if fraction is not None:
                self.fraction = min(max(float(fraction), 0.0), 1.0)
            if message:
                self.message = message

    def _run(self) -> None:
        import re
        from ..core.errors import BonesmithError
        process = self.process
        if process is None:
            return
        try:
            buffer = b""
            while True:
                chunk = process.stdout.read1(4096)
                if not chunk:
                    break
                buffer += chunk
                *complete, buffer = re.split(rb"[\r\n]", buffer)
                for raw in complete:
                    self._line(raw)
            self._line(buffer)
        finally:
            self.returncode = process.wait()
            process.stdout.close()
        if self._cancel.is_set():
            self.error = Cancelled("Cancelled by the user")
        elif self.returncode == 0:
            self.result = self.lines
        else:
            errors = [line for line in self.lines if "error" in line.lower()]
            detail = errors[-1] if errors else (self.lines[-1] if self.lines else "no output")
            detail = detail.split("error:", 1)[-1].strip() if "error:" in detail else detail
            self.error = BonesmithError(f"{detail} (exit code {self.returncode})")
