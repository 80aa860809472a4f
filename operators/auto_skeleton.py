# SPDX-License-Identifier: GPL-3.0-or-later
"""Auto Skeleton: selected mesh object(s) -> new armature, meshes parented with an
Armature modifier. Small meshes (and every headless run) are rigged synchronously;
large ones in a background thread while Blender stays responsive (Esc cancels)."""
from __future__ import annotations

import time
from dataclasses import dataclass

import bpy
import numpy as np
from bpy.props import FloatProperty

from .. import preferences
from ..bridge import armature as bridge_armature
from ..bridge import mesh as bridge_mesh
from ..core import skeleton as core_skeleton
from ..core.errors import BonesmithError
from .job import Job
from .modal import BackgroundOperator


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


class BONESMITH_OT_auto_skeleton(BackgroundOperator, bpy.types.Operator):
    """Build a skeleton inside the selected mesh(es) and rig them to it"""
    bl_idname = "bonesmith.auto_skeleton"
    bl_label = "Auto Skeleton"
    bl_options = {'REGISTER', 'UNDO'}

    detail: FloatProperty(
        name="Detail",
        description="Joint density: 1 is the default, 2 gives about twice the joints per chain",
        default=1.0, min=0.1, max=4.0, soft_min=0.25, soft_max=3.0, step=10,
    )

    _input = None

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
            return self.fail(error)
        finally:
            wm.progress_end()
        return self._done(armature, skeleton, time.perf_counter() - started)

    # -- background (large meshes in the UI; modal side in BackgroundOperator) ----------
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
        return self.start_background(context, Job(lambda progress: compute(rig_input, detail, progress)))

    def finish(self, context, skeleton):
        armature = build(context, self._input, skeleton)
        return self._done(armature, skeleton, self.seconds)

    def _done(self, armature, skeleton, seconds):
        self.report({'INFO'}, f"Auto Skeleton: {len(armature.data.bones)} bones "
                              f"in '{armature.name}' ({seconds:.1f} s)")
        return {'FINISHED'}
