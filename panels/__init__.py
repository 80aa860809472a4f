# SPDX-License-Identifier: GPL-3.0-or-later
"""The "Bonesmith" tab in the 3D View sidebar (N panel)."""
import bpy
from bpy.props import FloatProperty, IntProperty, PointerProperty, StringProperty

from .. import preferences
from . import correctives


class BonesmithSettings(bpy.types.PropertyGroup):
    """Per-scene options shown in the sidebar, handed to the operators."""
    detail: FloatProperty(
        name="Detail",
        description="Joint density: 1 is the default, 2 gives about twice the joints per chain",
        default=1.0, min=0.1, max=4.0, soft_min=0.25, soft_max=3.0, step=10,
    )
    max_influences: IntProperty(
        name="Max Influences", description="Most bones that move one vertex (game engines take 4)",
        default=4, min=1, max=8,
    )
    train_epochs: IntProperty(
        name="Epochs", description="Passes over the training characters", default=50, min=1,
    )
    train_model_name: StringProperty(
        name="Model Name", description="File name (without .npz) of the trained model",
        default="skin_trained",
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
        selected = context.selected_objects
        meshes = [obj for obj in selected if obj.type == 'MESH']
        has_armature = any(obj.type == 'ARMATURE' for obj in selected) or any(
            m.type == 'ARMATURE' and m.object is not None for obj in meshes for m in obj.modifiers)

        box = layout.box()
        box.label(text="Rig", icon='ARMATURE_DATA')
        box.prop(settings, "detail")
        box.prop(settings, "max_influences")
        row = box.row()
        row.scale_y = 1.4
        op = row.operator("bonesmith.auto_rig", icon='OUTLINER_OB_ARMATURE')
        op.detail = settings.detail
        op.max_influences = settings.max_influences
        row = box.row(align=True)
        op = row.operator("bonesmith.auto_skeleton", icon='BONE_DATA')
        op.detail = settings.detail
        op = row.operator("bonesmith.auto_skin", icon='MOD_VERTEX_WEIGHT')
        op.max_influences = settings.max_influences
        if not meshes:
            box.label(text="Select mesh object(s) to rig", icon='INFO')
        elif not has_armature:
            box.label(text="Auto Skin: also select an armature", icon='INFO')
        prefs = preferences.get(context)
        if prefs is not None:
            box.prop(prefs, "skin_model")

        box = layout.box()
        box.label(text="Train Skin", icon='EXPERIMENTAL')
        box.prop(settings, "train_epochs")
        box.prop(settings, "train_model_name")
        op = box.operator("bonesmith.train_skin", icon='PLAY')
        op.epochs = settings.train_epochs
        op.model_name = settings.train_model_name

        box = layout.box()
        box.label(text="Export", icon='EXPORT')
        box.operator("bonesmith.export_fbx", icon='EXPORT')


classes = (BonesmithSettings, BONESMITH_PT_skeleton)


def register():
    for cls in classes:
        bpy.utils.register_class(cls)
    bpy.types.Scene.bonesmith = PointerProperty(type=BonesmithSettings)
    correctives.register()   # a sub-panel: after its parent


def unregister():
    correctives.unregister()
    del bpy.types.Scene.bonesmith
    for cls in reversed(classes):
        bpy.utils.unregister_class(cls)
