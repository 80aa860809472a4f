# SPDX-License-Identifier: GPL-3.0-or-later
"""Export the active armature and its meshes to FBX with game-engine settings."""
import bpy
from bpy.props import BoolProperty, StringProperty
from bpy_extras.io_utils import ExportHelper

from ..bridge import fbx as bridge_fbx
from ..bridge import selection
from ..core.errors import BonesmithError


class BONESMITH_OT_export_fbx(bpy.types.Operator, ExportHelper):
    """Export the active armature and the meshes it deforms to FBX (no leaf bones,
    deform bones only, units applied)"""
    bl_idname = "bonesmith.export_fbx"
    bl_label = "Export FBX"
    bl_options = {'REGISTER'}

    filename_ext = ".fbx"
    filter_glob: StringProperty(default="*.fbx", options={'HIDDEN'})
    bake_anim: BoolProperty(
        name="Animation", default=False,
        description="Also bake the armature's animation into the file",
    )

    def execute(self, context):
        armature = selection.find_armature(context.active_object)
        if armature is None:
            armature = next(filter(None, map(selection.find_armature, context.selected_objects)), None)
        try:
            if armature is None:
                raise BonesmithError("Select an armature, or a mesh rigged to one, to export")
            meshes = selection.rig_meshes(armature)
            path = bridge_fbx.export_fbx(self.filepath, armature, meshes, bake_anim=self.bake_anim)
        except BonesmithError as error:
            self.report({'ERROR'}, str(error))
            return {'CANCELLED'}
        self.report({'INFO'}, f"Exported '{armature.name}' and {len(meshes)} mesh(es) to {path}")
        return {'FINISHED'}
