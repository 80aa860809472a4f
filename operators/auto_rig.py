# SPDX-License-Identifier: GPL-3.0-or-later
"""Auto Rig: Auto Skeleton + Auto Skin in one click. Selected mesh(es) -> a new armature,
the meshes weighted to its bones and rigged with an Armature modifier."""
from __future__ import annotations

from dataclasses import dataclass

import bpy

from .. import preferences
from ..bridge import armature as bridge_armature
from ..bridge import markers as bridge_markers
from ..bridge import mesh as bridge_mesh
from ..bridge import skeleton as bridge_skeleton
from ..bridge import skin as bridge_skin
from ..bridge import weights as bridge_weights
from ..bridge.mesh import MeshSet
from . import auto_skeleton, options
from ..bridge.selection import meshes_again
from .base import BonesmithOperator, to_object_mode


@dataclass
class AutoRigInput:
    rig: bridge_skeleton.SkeletonInput   # for the skeleton (evaluated meshes, as Auto Skeleton reads them)
    rest: MeshSet                 # for the weights (the meshes' own vertices)
    vertex_counts: list
    model: object = None
    warning: str = ""

    @property
    def n_vertices(self) -> int:
        return len(self.rest.vertices)


def read_input(context) -> AutoRigInput:
    rig_input = auto_skeleton.read_input(context)  # also leaves Edit Mode
    meshes = [bpy.data.objects[name] for name in rig_input.mesh_names]
    model, warning = preferences.active_skin_model(context)
    return AutoRigInput(rig=rig_input, rest=bridge_mesh.combine_rest(meshes),
                        vertex_counts=[len(obj.data.vertices) for obj in meshes],
                        model=None if model is None else str(model), warning=warning)


def compute(inp: AutoRigInput, detail: float, max_influences: int, progress, naming: str = "bonesmith"):
    """(skeleton, weights): the skeleton takes the first 70 % of the progress bar."""
    skeleton = bridge_skeleton.compute(inp.rig, detail=detail, naming=naming,
                                       progress=lambda f, m="": progress(0.7 * f, m))
    weights, _ = bridge_skin.predict(inp.rest.vertices, inp.rest.faces, skeleton.joints, skeleton.parents,
                                     skeleton.tails, model=inp.model, names=skeleton.names,
                                     max_influences=max_influences,
                                     progress=lambda f, m="": progress(0.7 + 0.3 * f, m))
    return skeleton, weights


def apply(context, inp: AutoRigInput, skeleton, weights, *, detail: float = 1.0, naming: str = "bonesmith",
          max_influences: int = options.DEFAULT_MAX_INFLUENCES):
    """Build the armature, then write the weights; on failure nothing is left behind."""
    meshes = meshes_again(inp.rig.mesh_names, "Auto Rig", inp.vertex_counts)
    bridge_weights.check_modifiers(meshes, skeleton.names)      # before anything is built
    state = bridge_armature.rig_state(meshes)
    to_object_mode(context)
    armature = bridge_skeleton.build(inp.rig, skeleton, detail=detail, naming=naming, label="Auto Rig")
    try:
        bridge_weights.write_weights_split(meshes, inp.rest, weights, skeleton.names)
    except Exception:
        bridge_armature.remove_rig(armature, meshes, state)
        raise
    bridge_markers.note_skinned(armature, max_influences)
    context.view_layer.update()
    return armature


class BONESMITH_OT_auto_rig(BonesmithOperator, bpy.types.Operator):
    """Build a skeleton inside the selected mesh(es) and skin them to it (Auto Skeleton +
    Auto Skin)"""
    bl_idname = "bonesmith.auto_rig"
    bl_label = "Auto Rig"

    detail: options.DETAIL
    naming: options.NAMING
    max_influences: options.MAX_INFLUENCES

    def read(self, context):
        return read_input(context)

    def computation(self, inp):
        detail, max_influences, naming = self.detail, self.max_influences, self.naming
        return lambda progress: compute(inp, detail, max_influences, progress, naming)

    def apply(self, context, inp, result):
        armature = apply(context, inp, *result, detail=self.detail, naming=self.naming,
                         max_influences=self.max_influences)   # the module's apply()
        text = (f"Auto Rig: {len(armature.data.bones)} bones in '{armature.name}', {result[0].facing_text}"
                f"{auto_skeleton.naming_text(result[0], self.naming)}, "
                f"{inp.n_vertices} vertices weighted ({self.seconds:.1f} s)")
        self.report_done(text, "; ".join(filter(None, [inp.warning, bridge_mesh.ground_note(inp.rig.left_out)])))
        return {'FINISHED'}
