# SPDX-License-Identifier: GPL-3.0-or-later
"""Generate Rig: Rigify's control rig from an Auto Skeleton metarig, with the meshes moved
onto its deforming bones (bridge/rigify.py; docs/auto_skeleton.md#rigify-metarig-for-any-character)."""
import bpy

from ..bridge import rigify as bridge_rigify
from ..bridge import selection
from ..core.errors import BonesmithError
from .base import BonesmithOperator, to_object_mode


class BONESMITH_OT_generate_rig(BonesmithOperator, bpy.types.Operator):
    """Generate Rigify's control rig from the metarig (Naming: Rigify Metarig) and move
    the meshes it deforms onto the generated rig's deforming (DEF-) bones"""
    bl_idname = "bonesmith.generate_rig"
    bl_label = "Generate Rig"

    def read(self, context):
        """The metarig's name: the active object's armature, with Rigify types on it."""
        to_object_mode(context)
        metarig = selection.find_armature(context.active_object)
        if metarig is None or not any(getattr(pb, "rigify_type", "") for pb in metarig.pose.bones):
            raise BonesmithError("Select a Rigify metarig (Auto Skeleton with Naming 'Rigify "
                                 "Metarig'), or a mesh rigged to one")
        return metarig.name

    def apply(self, context, name, result):
        metarig = bpy.data.objects.get(name)
        if metarig is None or metarig.type != 'ARMATURE':
            raise BonesmithError(f"Generate Rig: the metarig '{name}' is gone")
        rig = bridge_rigify.generate_rig(metarig)
        meshes = selection.rig_meshes(rig)
        self.report({'INFO'}, f"Generated '{rig.name}' from '{name}': {len(meshes)} mesh(es) "
                              "deform with its DEF bones")
        return {'FINISHED'}
