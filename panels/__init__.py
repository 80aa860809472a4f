# SPDX-License-Identifier: GPL-3.0-or-later
"""The "Bonesmith" tab in the 3D View sidebar (N panel)."""
import bpy
from bpy.props import PointerProperty, StringProperty

from .. import preferences
from ..bridge import markers as bridge_markers
from ..bridge import selection
from ..operators import options
from . import correctives
from .base import BonesmithPanel, FoldedPanel, column_and_settings


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
    train_rigs: StringProperty(name="Rigs Learned", default="",
                               description="Per rig template of the last training: whether the trained "
                                           "model will weight it (lines separated by '|')")


def selection_hint(context):
    """(text, icon) of the line that tells what to select next, or None when the
    selection is ready for Auto Rig / Auto Skin. Short: the sidebar is narrow."""
    selected = context.selected_objects
    meshes = [obj for obj in selected if obj.type == 'MESH']
    rigs = [obj for obj in selected if obj.type == 'ARMATURE']
    if meshes:
        bound = any(m.type == 'ARMATURE' and m.object is not None for obj in meshes for m in obj.modifiers)
        return None if rigs or bound else ("Auto Skin: also select an armature", 'INFO')
    if rigs:
        if selection.rig_meshes(rigs[0]):   # a finished rig (after Auto Rig)
            return ("Rigged: pose it, or Export FBX", 'CHECKMARK')
        return ("Auto Skin: also select the mesh", 'INFO')
    return ("Select mesh object(s) to rig", 'INFO')


class BONESMITH_PT_skeleton(BonesmithPanel, bpy.types.Panel):
    """What a user needs first: the hint, the rig buttons, Naming, Export. The rest is
    folded in sub-panels (Options, Train Skin, Correctives)."""
    bl_label = "Bonesmith"
    bl_idname = "BONESMITH_PT_skeleton"

    def draw(self, context):
        layout = self.layout
        settings = context.scene.bonesmith
        col = layout.column()
        row = col.row()
        row.scale_y = 1.4
        op = row.operator("bonesmith.auto_rig", icon='OUTLINER_OB_ARMATURE')
        op.detail, op.naming = settings.detail, settings.naming
        op.max_influences = settings.max_influences
        row = col.row(align=True)
        op = row.operator("bonesmith.auto_skeleton", icon='BONE_DATA')
        op.detail, op.naming = settings.detail, settings.naming
        op = row.operator("bonesmith.auto_skin", icon='MOD_VERTEX_WEIGHT')
        op.max_influences = settings.max_influences
        hint = selection_hint(context)
        if hint is not None:
            col.label(text=hint[0], icon=hint[1])
        draw_joints(col, context)
        col.separator()
        col.prop(settings, "naming")
        if settings.naming == 'rigify':          # Rigify's Generate Rig, the meshes moved onto it
            col.operator("bonesmith.generate_rig", icon='OUTLINER_OB_ARMATURE')
        col.separator()
        col.operator("bonesmith.export_fbx", icon='EXPORT')


class BONESMITH_PT_options(FoldedPanel, bpy.types.Panel):
    bl_label = "Options"

    def draw(self, context):
        col, settings = column_and_settings(self.layout, context)
        col.prop(settings, "detail")
        col.prop(settings, "max_influences")
        prefs = preferences.get(context)
        if prefs is not None:
            col.label(text="Skin Model:")   # its own line: beside the menu it was cut
            col.prop(prefs, "skin_model", text="")


class BONESMITH_PT_train(FoldedPanel, bpy.types.Panel):
    bl_label = "Train Skin"

    def draw(self, context):
        col, settings = column_and_settings(self.layout, context)
        col.prop(settings, "train_epochs")
        col.label(text="Model Name:")
        col.prop(settings, "train_model_name", text="")
        op = col.operator("bonesmith.train_skin", icon='PLAY')
        op.epochs = settings.train_epochs
        op.model_name = settings.train_model_name
        if settings.train_result:
            col.label(text=settings.train_result, icon='INFO')
        for line in filter(None, settings.train_rigs.split("|")):
            used, _, text = line.partition(" ")
            col.label(text=text, icon={"+": 'CHECKMARK', "-": 'REMOVE'}.get(used, 'INFO'))


def draw_joints(box, context):
    """Adjust Joints, or Rebuild / Done while the markers are shown, for the armature
    Auto Skeleton built that the active object belongs to (bridge/markers.py)."""
    armature = bridge_markers.built_armature(context.active_object)
    if armature is None:
        return
    if not bridge_markers.rig_settings(armature)["landmarks"]:
        box.label(text="Markers need a humanoid", icon='INFO')
    elif bridge_markers.markers(armature):
        row = box.row(align=True)
        row.operator("bonesmith.rebuild_joints", icon='FILE_REFRESH')
        row.operator("bonesmith.hide_joints", icon='CHECKMARK')
    else:
        box.operator("bonesmith.adjust_joints", icon='EMPTY_AXIS')


# sub-panels after their parent, in the order they are shown
classes = (BonesmithSettings, BONESMITH_PT_skeleton, BONESMITH_PT_options, BONESMITH_PT_train,
           *correctives.classes)
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
