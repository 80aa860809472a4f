# SPDX-License-Identifier: GPL-3.0-or-later
"""Export the active armature and its meshes to FBX with game-engine settings."""
import bpy
from bpy.props import BoolProperty, StringProperty
from bpy_extras.io_utils import ExportHelper

from ..bridge import fbx as bridge_fbx
from ..bridge import selection
from ..core.errors import BonesmithError
from .base import BonesmithOperator


class BONESMITH_OT_export_fbx(ExportHelper, BonesmithOperator, bpy.types.Operator):
    """Export the active armature and the meshes it deforms to FBX (no leaf bones,
    deform bones only, units applied)"""
    bl_idname = "bonesmith.export_fbx"
    bl_label = "Export FBX"
    bl_options = {'REGISTER'}   # writes a file, changes nothing to undo

    filename_ext = ".fbx"
    filter_glob: StringProperty(default="*.fbx", options={'HIDDEN'})
    bake_anim: BoolProperty(
        name="Animation", default=False,
        description="Also bake the armature's animation into the file",
    )

    # ExportHelper (first in the bases) owns invoke(): the file browser, then execute().

    def read(self, context):
        """(armature, meshes): the active object's armature, else a selected object's."""
        armature = selection.find_armature(context.active_object)
        if armature is None:
            armature = next(filter(None, map(selection.find_armature, context.selected_objects)), None)
        if armature is None:
            raise BonesmithError("Select an armature, or a mesh rigged to one, to export")
        return armature, selection.rig_meshes(armature)

    def apply(self, context, inp, result):
        armature, meshes = inp
        path = bridge_fbx.export_fbx(self.filepath, armature, meshes, bake_anim=self.bake_anim)
        self.report({'INFO'}, f"Exported '{armature.name}' and {len(meshes)} mesh(es) to {path}")
        return {'FINISHED'}
