# SPDX-License-Identifier: GPL-3.0-or-later
"""Auto Skeleton: selected mesh object(s) -> new armature, meshes parented with an
Armature modifier (the service is bridge/skeleton.py). Small meshes (and every headless
run) are rigged synchronously; large ones in a background thread while Blender stays
responsive (Esc cancels; see base.BonesmithOperator)."""
from __future__ import annotations

import bpy

from ..bridge import mesh as bridge_mesh
from ..bridge import skeleton as bridge_skeleton
from . import options
from .base import BonesmithOperator, to_object_mode


def read_input(context) -> bridge_skeleton.SkeletonInput:
    """The selected meshes as Auto Skeleton (and Auto Rig) read them, out of Edit Mode."""
    to_object_mode(context)
    meshes, active = bridge_skeleton.selected_meshes(context)
    return bridge_skeleton.read(meshes, active, context.evaluated_depsgraph_get())


def naming_text(skeleton, naming: str) -> str:
    """The report's note on the names (", humanoid with Mixamo names"), or ""."""
    note = bridge_skeleton.naming_note(skeleton, naming)
    return f", {note}" if note else ""


class BONESMITH_OT_auto_skeleton(BonesmithOperator, bpy.types.Operator):
    """Build a skeleton inside the selected mesh(es) and rig them to it"""
    bl_idname = "bonesmith.auto_skeleton"
    bl_label = "Auto Skeleton"

    detail: options.DETAIL
    naming: options.NAMING

    def read(self, context):
        return read_input(context)

    def computation(self, rig_input):
        detail, naming = self.detail, self.naming
        return lambda progress: bridge_skeleton.compute(rig_input, detail=detail, naming=naming,
                                                        progress=progress)

    def apply(self, context, rig_input, skeleton):
        to_object_mode(context)
        armature = bridge_skeleton.build(rig_input, skeleton, detail=self.detail, naming=self.naming)
        self.report_done(f"Auto Skeleton: {len(armature.data.bones)} bones in '{armature.name}', "
                         f"{skeleton.facing_text}{naming_text(skeleton, self.naming)} ({self.seconds:.1f} s)",
                         bridge_mesh.ground_note(rig_input.left_out))
        return {'FINISHED'}
