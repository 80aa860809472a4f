# SPDX-License-Identifier: GPL-3.0-or-later
"""Auto Rig: Auto Skeleton + Auto Skin in one click. Selected mesh(es) -> a new armature,
the meshes weighted to its bones and rigged with an Armature modifier."""
from __future__ import annotations

import time
from dataclasses import dataclass

import bpy
from bpy.props import FloatProperty, IntProperty

from .. import preferences
from ..bridge import weights as bridge_weights
from ..bridge.mesh import MeshSet
from ..core.errors import BonesmithError
from . import auto_skeleton, auto_skin
from .job import Job
from .modal import BackgroundOperator


@dataclass
class AutoRigInput:
    rig: auto_skeleton.RigInput   # for the skeleton (evaluated meshes, as Auto Skeleton reads them)
    rest: MeshSet                 # for the weights (the meshes' own vertices)
    vertex_counts: list
    model: object = None
    warning: str = ""


def read_input(context) -> AutoRigInput:
    rig_input = auto_skeleton.read_input(context)  # also leaves Edit Mode
    meshes = [bpy.data.objects[name] for name in rig_input.mesh_names]
    model, warning = preferences.active_skin_model(context)
    return AutoRigInput(rig=rig_input, rest=bridge_weights.combine_rest(meshes),
                        vertex_counts=[len(obj.data.vertices) for obj in meshes],
                        model=None if model is None else str(model), warning=warning)


def compute(inp: AutoRigInput, detail: float, max_influences: int, progress):
    """(skeleton, weights): the skeleton takes the first 70 % of the progress bar."""
    skeleton = auto_skeleton.compute(inp.rig, detail, lambda f, m="": progress(0.7 * f, m))
    weights = auto_skin.predict(inp.rest.vertices, inp.rest.faces, skeleton.joints, skeleton.parents,
                                skeleton.tails, model=inp.model, max_influences=max_influences,
                                progress=lambda f, m="": progress(0.7 + 0.3 * f, m))
    return skeleton, weights


def apply(context, inp: AutoRigInput, skeleton, weights):
    """Build the armature, then write the weights; on failure nothing is left behind."""
    for name, count in zip(inp.rig.mesh_names, inp.vertex_counts):
        obj = bpy.data.objects.get(name)
        if obj is not None and obj.type == 'MESH' and len(obj.data.vertices) != count:
            raise BonesmithError(f"The mesh '{name}' was edited while Auto Rig ran: run it again")
    armature = auto_skeleton.build(context, inp.rig, skeleton)
    meshes = [bpy.data.objects[name] for name in inp.rig.mesh_names]
    try:
        bridge_weights.write_weights_split(meshes, inp.rest, weights, skeleton.names)
    except Exception:
        for obj in meshes:
            for modifier in [m for m in obj.modifiers if m.type == 'ARMATURE' and m.object == armature]:
                obj.modifiers.remove(modifier)
            world = obj.matrix_world.copy()
            obj.parent = None
            obj.matrix_world = world
        data = armature.data
        bpy.data.objects.remove(armature)
        bpy.data.armatures.remove(data)
        raise
    context.view_layer.update()
    return armature


class BONESMITH_OT_auto_rig(BackgroundOperator, bpy.types.Operator):
    """Build a skeleton inside the selected mesh(es) and skin them to it (Auto Skeleton +
    Auto Skin)"""
    bl_idname = "bonesmith.auto_rig"
    bl_label = "Auto Rig"
    bl_options = {'REGISTER', 'UNDO'}

    detail: FloatProperty(
        name="Detail",
        description="Joint density: 1 is the default, 2 gives about twice the joints per chain",
        default=1.0, min=0.1, max=4.0, soft_min=0.25, soft_max=3.0, step=10,
    )
    max_influences: IntProperty(
        name="Max Influences", description="Most bones that move one vertex (game engines take 4)",
        default=auto_skin.DEFAULT_MAX_INFLUENCES, min=1, max=8,
    )

    _input = None

    def execute(self, context):
        try:
            inp = read_input(context)
        except BonesmithError as error:
            self.report({'ERROR'}, str(error))
            return {'CANCELLED'}
        return self._run_sync(context, inp)

    def invoke(self, context, event):
        try:
            inp = read_input(context)
        except BonesmithError as error:
            self.report({'ERROR'}, str(error))
            return {'CANCELLED'}
        if not auto_skin.run_in_background(context, len(inp.rest.vertices)):
            return self._run_sync(context, inp)
        self._input = inp
        detail, max_influences = self.detail, self.max_influences
        return self.start_background(
            context, Job(lambda progress: compute(inp, detail, max_influences, progress)))

    def _run_sync(self, context, inp):
        wm = context.window_manager
        started = time.perf_counter()
        wm.progress_begin(0, 100)
        try:
            skeleton, weights = compute(inp, self.detail, self.max_influences,
                                        lambda f, m="": wm.progress_update(int(100 * f)))
            armature = apply(context, inp, skeleton, weights)
        except Exception as error:
            return self.fail(error)
        finally:
            wm.progress_end()
        return self._done(inp, armature, time.perf_counter() - started)

    def finish(self, context, result):
        skeleton, weights = result
        armature = apply(context, self._input, skeleton, weights)
        return self._done(self._input, armature, self.seconds)

    def _done(self, inp, armature, seconds):
        text = (f"Auto Rig: {len(armature.data.bones)} bones in '{armature.name}', "
                f"{len(inp.rest.vertices)} vertices weighted ({seconds:.1f} s)")
        if inp.warning:
            self.report({'WARNING'}, f"{text}; {inp.warning}")
        else:
            self.report({'INFO'}, text)
        return {'FINISHED'}
