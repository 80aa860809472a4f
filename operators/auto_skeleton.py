# SPDX-License-Identifier: GPL-3.0-or-later
"""Auto Skeleton: selected mesh object(s) -> new armature, meshes parented with an
Armature modifier. Small meshes (and every headless run) are rigged synchronously;
large ones in a background thread while Blender stays responsive (Esc cancels)."""
from __future__ import annotations

import time
import traceback
from dataclasses import dataclass

import bpy
import numpy as np
from bpy.props import FloatProperty

from .. import preferences
from ..bridge import armature as bridge_armature
from ..bridge import mesh as bridge_mesh
from ..core import skeleton as core_skeleton
from ..core.errors import BonesmithError, Cancelled
from .job import Job


@dataclass
class RigInput:
    """What the computation needs, read from Blender before it starts."""
    mesh_names: list
    active_name: str
    vertices: np.ndarray
    faces: np.ndarray
    world_to_local: np.ndarray  # the active mesh's inverse world matrix at read time


def selected_meshes(context):
    """(meshes, active mesh) of the selection; BonesmithError when there is none."""
    selected = list(context.selected_objects)
    if not selected:
        raise BonesmithError("Nothing is selected: select the mesh object(s) to rig")
    meshes = [obj for obj in selected if obj.type == 'MESH']
    if not meshes:
        listed = ", ".join(f"'{obj.name}' ({obj.type.lower()})" for obj in selected[:3])
        more = f" and {len(selected) - 3} more" if len(selected) > 3 else ""
        raise BonesmithError(f"Auto Skeleton needs a mesh object, but the selection is {listed}{more}")
    active = context.active_object if context.active_object in meshes else meshes[0]
    return meshes, active


def read_input(context) -> RigInput:
    if context.mode != 'OBJECT' and context.active_object is not None:
        bpy.ops.object.mode_set(mode='OBJECT')  # flush edit-mode changes into the mesh
    meshes, active = selected_meshes(context)
    mesh_set = bridge_mesh.combine_objects(meshes, context.evaluated_depsgraph_get())
    return RigInput(
        mesh_names=[obj.name for obj in meshes],
        active_name=active.name,
        vertices=mesh_set.vertices,
        faces=mesh_set.faces,
        world_to_local=np.linalg.inv(bridge_mesh.matrix_to_numpy(active.matrix_world)),
    )


def build(context, rig_input: RigInput, skeleton):
    """Create the armature; the meshes are looked up again (the user may have edited the
    scene while a background job ran)."""
    if context.mode != 'OBJECT' and context.active_object is not None:
        bpy.ops.object.mode_set(mode='OBJECT')
    meshes = []
    for name in rig_input.mesh_names:
        obj = bpy.data.objects.get(name)
        if obj is None or obj.type != 'MESH':
            raise BonesmithError(f"The mesh '{name}' was removed or renamed while Auto Skeleton ran")
        meshes.append(obj)
    active = bpy.data.objects[rig_input.active_name]
    return bridge_armature.build_rig(skeleton, meshes, active=active,
                                     world_to_local=rig_input.world_to_local)


def compute(rig_input: RigInput, detail: float, progress):
    return core_skeleton.extract_skeleton(rig_input.vertices, rig_input.faces,
                                          detail=detail, progress=progress)


class BONESMITH_OT_auto_skeleton(bpy.types.Operator):
    """Build a skeleton inside the selected mesh(es) and rig them to it"""
    bl_idname = "bonesmith.auto_skeleton"
    bl_label = "Auto Skeleton"
    bl_options = {'REGISTER', 'UNDO'}

    detail: FloatProperty(
        name="Detail",
        description="Joint density: 1 is the default, 2 gives about twice the joints per chain",
        default=1.0, min=0.1, max=4.0, soft_min=0.25, soft_max=3.0, step=10,
    )

    _job = None
    _timer = None
    _input = None
    _started = 0.0

    # -- synchronous ------------------------------------------------------------------
    def execute(self, context):
        try:
            rig_input = read_input(context)
        except BonesmithError as error:
            self.report({'ERROR'}, str(error))
            return {'CANCELLED'}
        return self._run_sync(context, rig_input)

    def _run_sync(self, context, rig_input):
        wm = context.window_manager
        started = time.perf_counter()
        wm.progress_begin(0, 100)
        try:
            skeleton = compute(rig_input, self.detail,
                               lambda fraction, message="": wm.progress_update(int(100 * fraction)))
            armature = build(context, rig_input, skeleton)
        except Exception as error:
            return self._fail(error)
        finally:
            wm.progress_end()
        return self._done(armature, skeleton, time.perf_counter() - started)

    # -- background (large meshes in the UI) --------------------------------------------
    def invoke(self, context, event):
        try:
            rig_input = read_input(context)
        except BonesmithError as error:
            self.report({'ERROR'}, str(error))
            return {'CANCELLED'}
        prefs = preferences.get(context)
        threshold = prefs.async_vertices if prefs is not None else preferences.DEFAULT_ASYNC_VERTICES
        if bpy.app.background or context.window is None or len(rig_input.vertices) <= threshold:
            return self._run_sync(context, rig_input)

        detail = self.detail
        self._input = rig_input
        self._job = Job(lambda progress: compute(rig_input, detail, progress)).start()
        self._started = time.perf_counter()
        wm = context.window_manager
        wm.progress_begin(0, 100)
        self._timer = wm.event_timer_add(0.1, window=context.window)
        wm.modal_handler_add(self)
        self._status(context, "Auto Skeleton: starting… (Esc to cancel)")
        return {'RUNNING_MODAL'}

    def modal(self, context, event):
        job = self._job
        if event.type == 'ESC' and event.value == 'PRESS':
            job.cancel()  # the thread stops at core's next progress call; its result is dropped
            self._stop(context)
            self.report({'INFO'}, "Auto Skeleton cancelled")
            return {'CANCELLED'}
        if event.type != 'TIMER':
            return {'PASS_THROUGH'}
        if not job.done:
            context.window_manager.progress_update(int(100 * job.fraction))
            message = job.message or "working"
            self._status(context, f"Auto Skeleton: {message} {100 * job.fraction:.0f}% (Esc to cancel)")
            return {'PASS_THROUGH'}
        self._stop(context)
        if job.error is not None:
            return self._fail(job.error)
        try:
            armature = build(context, self._input, job.result)
        except Exception as error:
            return self._fail(error)
        return self._done(armature, job.result, time.perf_counter() - self._started)

    def cancel(self, context):  # Blender quits or the window closes while running
        if self._job is not None:
            self._job.cancel()
        self._stop(context)

    # -- helpers --------------------------------------------------------------------------
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

    def _fail(self, error):
        if isinstance(error, Cancelled):
            self.report({'INFO'}, "Auto Skeleton cancelled")
        elif isinstance(error, BonesmithError):
            self.report({'ERROR'}, str(error))
        else:
            traceback.print_exception(error)
            self.report({'ERROR'}, f"Auto Skeleton failed ({type(error).__name__}: {error}); "
                                   "details are in the system console")
        return {'CANCELLED'}

    def _done(self, armature, skeleton, seconds):
        self.report({'INFO'}, f"Auto Skeleton: {len(armature.data.bones)} bones "
                              f"in '{armature.name}' ({seconds:.1f} s)")
        return {'FINISHED'}
