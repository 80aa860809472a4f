# SPDX-License-Identifier: GPL-3.0-or-later
"""The modal side of background work, shared by Auto Skin, Auto Rig and Train Skin.

An operator mixes in BackgroundOperator, starts a Job / ProcessJob with
`self.start_background(context, job)` from invoke(), and implements
`finish(context, result) -> {'FINISHED'} | {'CANCELLED'}` (main thread, may touch bpy).
A timer polls the job: progress bar and status text while it runs, Esc cancels (the
result is dropped, nothing in the scene changes), errors are reported.
"""
from __future__ import annotations

import time
import traceback

from ..core.errors import BonesmithError, Cancelled


class BackgroundOperator:
    _job = None
    _timer = None
    _started = 0.0

    def start_background(self, context, job):
        self._job = job.start()
        self._started = time.perf_counter()
        wm = context.window_manager
        wm.progress_begin(0, 100)
        self._timer = wm.event_timer_add(0.1, window=context.window)
        wm.modal_handler_add(self)
        self._status(context, f"{self.bl_label}: starting… (Esc to cancel)")
        return {'RUNNING_MODAL'}

    def modal(self, context, event):
        job = self._job
        if event.type == 'ESC' and event.value == 'PRESS':
            job.cancel()  # the result is dropped whenever the job stops
            self._stop(context)
            self.on_cancel(context)
            self.report({'INFO'}, f"{self.bl_label} cancelled")
            return {'CANCELLED'}
        if event.type != 'TIMER':
            return {'PASS_THROUGH'}
        if not job.done:
            context.window_manager.progress_update(int(100 * job.fraction))
            message = job.message or "working"
            self._status(context, f"{self.bl_label}: {message} {100 * job.fraction:.0f}% (Esc to cancel)")
            return {'PASS_THROUGH'}
        self._stop(context)
        if job.error is not None:
            self.on_cancel(context)
            return self.fail(job.error)
        try:
            return self.finish(context, job.result)
        except Exception as error:
            self.on_cancel(context)
            return self.fail(error)

    def cancel(self, context):  # Blender quits or the window closes while running
        if self._job is not None:
            self._job.cancel()
        self._stop(context)
        self.on_cancel(context)

    # -- hooks ----------------------------------------------------------------------------
    def finish(self, context, result):  # pragma: no cover - every operator overrides it
        raise NotImplementedError

    def on_cancel(self, context):
        """Clean-up after a cancelled or failed background run (temporary files...)."""

    # -- helpers --------------------------------------------------------------------------
    @property
    def seconds(self) -> float:
        return time.perf_counter() - self._started

    def _status(self, context, text):
        if context.workspace is not None:
            context.workspace.status_text_set(text)

    def _stop(self, context):
        wm = context.window_manager
        if self._timer is not None:
            wm.event_timer_remove(self._timer)
            self._timer = None
        wm.progress_end()
        self._status(context, None)

    def fail(self, error):
        if isinstance(error, Cancelled):
            self.report({'INFO'}, f"{self.bl_label} cancelled")
        elif isinstance(error, BonesmithError):
            self.report({'ERROR'}, str(error))
        else:
            traceback.print_exception(error)
            self.report({'ERROR'}, f"{self.bl_label} failed ({type(error).__name__}: {error}); "
                                   "details are in the system console")
        return {'CANCELLED'}
