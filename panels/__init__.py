# SPDX-License-Identifier: GPL-3.0-or-later
"""The "Bonesmith" tab in the 3D View sidebar (N panel)."""
import bpy
from bpy.props import PointerProperty, StringProperty

from .. import preferences
from ..bridge import markers as bridge_markers
from ..operators import options
from . import correctives
from .base import BonesmithPanel


class BonesmithSettings(bpy.types.PropertyGroup):
    """Per-scene options shown in the sidebar, handed to the operators (defined once, in
    operators/options.py, for both)."""
    detail: options.DETAIL
    naming: options.NAMING
    max_influences: options.MAX_INFLUENCES
    train_epochs: options.EPOCHS
    train_model_name: options.TRAINED_MODEL_NAME
    train_result: StringProperty(name="Last Training", default="",
                                 description="Validation L1 of the start model and of the trained one")


class BONESMITH_PT_skeleton(BonesmithPanel, bpy.types.Panel):
    bl_label = "Bonesmith"
    bl_idname = "BONESMITH_PT_skeleton"

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
        box.prop(settings, "naming")
        box.prop(settings, "max_influences")
        row = box.row()
        row.scale_y = 1.4
        op = row.operator("bonesmith.auto_rig", icon='OUTLINER_OB_ARMATURE')
        op.detail, op.naming = settings.detail, settings.naming
        op.max_influences = settings.max_influences
        row = box.row(align=True)
        op = row.operator("bonesmith.auto_skeleton", icon='BONE_DATA')
        op.detail, op.naming = settings.detail, settings.naming
        op = row.operator("bonesmith.auto_skin", icon='MOD_VERTEX_WEIGHT')
        op.max_influences = settings.max_influences
        if not meshes:
            box.label(text="Select mesh object(s) to rig", icon='INFO')
        elif not has_armature:
            box.label(text="Auto Skin: also select an armature", icon='INFO')
        prefs = preferences.get(context)
        if prefs is not None:
            box.prop(prefs, "skin_model")
        draw_joints(box, context)

        box = layout.box()
        box.label(text="Train Skin", icon='EXPERIMENTAL')
        box.prop(settings, "train_epochs")
        box.prop(settings, "train_model_name")
        op = box.operator("bonesmith.train_skin", icon='PLAY')
        op.epochs = settings.train_epochs
        op.model_name = settings.train_model_name
        if settings.train_result:
            box.label(text=settings.train_result, icon='INFO')

        box = layout.box()
        box.label(text="Export", icon='EXPORT')
        box.operator("bonesmith.export_fbx", icon='EXPORT')


def draw_joints(box, context):
    """Adjust Joints, or Rebuild / Done while the markers are shown, for the armature
    Auto Skeleton built that the active object belongs to (bridge/markers.py)."""
    armature = bridge_markers.built_armature(context.active_object)
    if armature is None:
        return
    if not bridge_markers.rig_settings(armature)["landmarks"]:
        box.label(text="Adjust Joints: markers need a humanoid", icon='INFO')
    elif bridge_markers.markers(armature):
        row = box.row(align=True)
        row.operator("bonesmith.rebuild_joints", icon='FILE_REFRESH')
        row.operator("bonesmith.hide_joints", icon='CHECKMARK')
    else:
        box.operator("bonesmith.adjust_joints", icon='EMPTY_AXIS')


# the sub-panel after its parent
classes = (BonesmithSettings, BONESMITH_PT_skeleton, *correctives.classes)
SETTINGS = {"bonesmith": BonesmithSettings, "bonesmith_correctives": correctives.BonesmithCorrectivesSettings}


def register():
    for cls in classes:
        bpy.utils.register_class(cls)
    for name, group in SETTINGS.items():
        setattr(bpy.types.Scene, name, PointerProperty(type=group))


def unregister():
    for name in SETTINGS:
        delattr(bpy.types.Scene, name)
    for cls in reversed(classes):
        bpy.utils.unregister_class(cls)
