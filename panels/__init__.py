# SPDX-License-Identifier: GPL-3.0-or-later
"""The "Bonesmith" tab in the 3D View sidebar (N panel)."""
import bpy
from bpy.props import FloatProperty, PointerProperty


class BonesmithSettings(bpy.types.PropertyGroup):
    """Per-scene options shown in the sidebar, handed to the operators."""
    detail: FloatProperty(
        name="Detail",
        description="Joint density: 1 is the default, 2 gives about twice the joints per chain",
        default=1.0, min=0.1, max=4.0, soft_min=0.25, soft_max=3.0, step=10,
    )


class BONESMITH_PT_skeleton(bpy.types.Panel):
    bl_label = "Bonesmith"
    bl_idname = "BONESMITH_PT_skeleton"
    bl_space_type = 'VIEW_3D'
    bl_region_type = 'UI'
    bl_category = "Bonesmith"

    def draw(self, context):
        layout = self.layout
        settings = context.scene.bonesmith

        box = layout.box()
        box.label(text="Skeleton", icon='ARMATURE_DATA')
        box.prop(settings, "detail")
        meshes = [obj for obj in context.selected_objects if obj.type == 'MESH']
        row = box.row()
        row.scale_y = 1.4
        op = row.operator("bonesmith.auto_skeleton", icon='BONE_DATA')
        op.detail = settings.detail
        if not meshes:
            box.label(text="Select mesh object(s) to rig", icon='INFO')

        box = layout.box()
        box.label(text="Export", icon='EXPORT')
        box.operator("bonesmith.export_fbx", icon='EXPORT')


classes = (BonesmithSettings, BONESMITH_PT_skeleton)


def register():
    for cls in classes:
        bpy.utils.register_class(cls)
    bpy.types.Scene.bonesmith = PointerProperty(type=BonesmithSettings)


def unregister():
    del bpy.types.Scene.bonesmith
    for cls in reversed(classes):
        bpy.utils.unregister_class(cls)
