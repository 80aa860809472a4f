# SPDX-License-Identifier: GPL-3.0-or-later
"""The lifecycle every Bonesmith operator follows, owned by one base class.

An operator mixes in BonesmithOperator (before bpy.types.Operator) and fills in stages:

    read(context) -> input           main thread: the scene -> arrays and names
    computation(input) -> work       main thread: work(progress) -> result, on arrays only
    apply(context, input, result)    main thread: result -> the scene, and the report

execute() runs the three in a row. invoke() does the same, except that where
in_background() says so (by default: an input with more `n_vertices` than the preference
allows, in a window) `work` runs in a background Job while Blender stays responsive:
progress in the status bar, Esc cancels, and apply runs once the job is done.

Errors of every stage end in one place, fail(): a BonesmithError is reported as it is,
Cancelled as "<label> cancelled", anything else as "<label> failed" with its traceback in
the system console; the operator returns CANCELLED, and since only apply() changes the
scene (and cleans up after itself when it raises) the scene is as it was. Every Bonesmith
operator is REGISTER + UNDO unless it says otherwise (Export FBX). An operator that needs
poll() keeps it cheap: no array reads there.

Helpers for the stages are here too: to_object_mode() for read, run_in_background() for
in_background(); apply() looks its meshes up again with bridge.selection.meshes_again().
"""
from __future__ import annotations

import time
import traceback

import bpy

from .. import preferences
from ..core.errors import BonesmithError, Cancelled
from .job import Job


def to_object_mode(context) -> None:
    """Leave Edit (or another) Mode, so that edits reach the mesh data read next."""
    if context.mode != 'OBJECT' and context.active_object is not None:
        bpy.ops.object.mode_set(mode='OBJECT')


def async_threshold(context) -> int:
    """Vertices above which invoke() computes in the background (the preference)."""
    prefs = preferences.get(context)
    return prefs.async_vertices if prefs is not None else preferences.DEFAULT_ASYNC_VERTICES


def run_in_background(context, n_vertices=None) -> bool:
    """Whether to compute in a background job: never headless or without a window; else
    when `n_vertices` exceeds async_threshold() (None: whatever the size)."""
    if bpy.app.background or context.window is None:
        return False
    return n_vertices is None or n_vertices > async_threshold(context)


class BonesmithOperator:
    """Base of every Bonesmith operator: read -> compute -> apply, errors in fail()."""
    bl_options = {'REGISTER', 'UNDO'}

    _input = None     # what read() returned, kept for apply() while a job runs
    _job = None
    _timer = None
    _started = 0.0

    # -- the stages (override) ----------------------------------------------------------------
    def read(self, context):
        """Stage 1, main thread: everything the computation needs, read from the scene
        (arrays, object names, the operator's options) into one input object.

        May: leave Edit Mode (to_object_mode) so that edits reach the mesh. May not: change
        anything else in the scene. Raises BonesmithError when the selection will not do.
        """
        raise NotImplementedError

    def computation(self, inp):
        """Stage 2, prepared on the main thread: the function work(progress) -> result
        that computes on `inp`'s arrays, or None when there is nothing to compute (apply
        then gets None).

        work may run in a background thread, so it must touch neither bpy nor `self`:
        read the options it needs here and close over them. It calls progress(fraction,
        message), which raises Cancelled once the user pressed Esc.
        """
        return None

    def apply(self, context, inp, result):
        """Stage 3, main thread: write `result` into the scene, report, return {'FINISHED'}.

        Look objects up again by name (the user may have changed the scene while a job
        ran) and raise BonesmithError when one is gone or changed. The only stage that
        changes the scene: when it raises, it leaves nothing behind.
        """
        raise NotImplementedError

    def in_background(self, context, inp) -> bool:
        """Whether invoke() runs `work` in a background job. Default: when the input says
        how many vertices it has (an `n_vertices` attribute) and that is more than the
        preference's threshold (run_in_background); never for other inputs."""
        n_vertices = getattr(inp, "n_vertices", None)
        return n_vertices is not None and run_in_background(context, n_vertices)

    def job(self, inp):
        """The background job for `inp` (main thread): a Job running computation(inp) in
        a thread, or anything with Job's polled interface (a ProcessJob...)."""
        return Job(self.computation(inp))

    def compute_now(self, context, inp):
        """Stage 2 on the main thread (execute, or a small input): the result of `work`,
        its progress on the mouse cursor."""
        work = self.computation(inp)
        if work is None:
            return None
        wm = context.window_manager
        wm.progress_begin(0, 100)
        try:
            return work(lambda fraction, message="": wm.progress_update(int(100 * fraction)))
        finally:
            wm.progress_end()

    def on_cancel(self, context):
        """Clean-up after a cancelled or failed run (temporary files...); the scene needs
        none, since only apply() changes it."""

    # -- running the stages ---------------------------------------------------------------------
    def execute(self, context):
        return self.run(context, background=False)

    def invoke(self, context, event):
        return self.run(context, background=True)

    def run(self, context, background: bool):
        """read -> compute -> apply, computing in a job when `background` and
        in_background() agree; any error goes to fail()."""
        try:
            inp = self.read(context)
            if background and self.in_background(context, inp):
                self._input = inp
                return self.start_background(context, self.job(inp))
            self._started = time.perf_counter()
            return self.apply(context, inp, self.compute_now(context, inp))
        except Exception as error:
            self.on_cancel(context)
            return self.fail(error)

    def fail(self, error):
        """The one place an operator's errors end: reported, and CANCELLED."""
        if isinstance(error, Cancelled):
            self.report({'INFO'}, f"{self.bl_label} cancelled")
        elif isinstance(error, BonesmithError):
            self.report({'ERROR'}, str(error))
        else:
            traceback.print_exception(error)
            self.report({'ERROR'}, f"{self.bl_label} failed ({type(error).__name__}: {error}); "
                                   "details are in the system console")
        return {'CANCELLED'}

    def report_done(self, text: str, warning: str = "") -> None:
        """The success report: INFO `text`, or WARNING "`text`; `warning`"."""
        if warning:
            self.report({'WARNING'}, f"{text}; {warning}")
        else:
            self.report({'INFO'}, text)

    @property
    def seconds(self) -> float:
        """Time since the computation started (for the report)."""
        return time.perf_counter() - self._started

    # -- the background job (modal) -------------------------------------------------------------
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
            return self.fail(Cancelled())
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
            return self.apply(context, self._input, job.result)
        except Exception as error:
            self.on_cancel(context)
            return self.fail(error)

    def cancel(self, context):  # Blender quits or the window closes while running
        if self._job is not None:
            self._job.cancel()
        self._stop(context)
        self.on_cancel(context)

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
