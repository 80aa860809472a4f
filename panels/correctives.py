# SPDX-License-Identifier: GPL-3.0-or-later
"""The "Correctives" sub-panel of the Bonesmith sidebar tab (SPEC C)."""
import bpy
from bpy.props import EnumProperty, PointerProperty, StringProperty

from ..bridge import selection
from ..operators import correctives as ops


class BonesmithCorrectivesSettings(bpy.types.PropertyGroup):
    """Per-scene options of the Correctives panel, handed to its operators."""
    __annotations__ = {
        **ops.learn_properties(),
        "bake_mode": EnumProperty(name="Bake", items=ops.BAKE_MODES, default='LIVE'),
        "regressor_name": StringProperty(name="Name", default="joint_regressor",
                                         description="File name (without .npz) of the joint regressor"),
    }


class BONESMITH_PT_correctives(bpy.types.Panel):
    bl_label = "Correctives"
    bl_idname = "BONESMITH_PT_correctives"
    bl_parent_id = "BONESMITH_PT_skeleton"
    bl_space_type = 'VIEW_3D'
    bl_region_type = 'UI'
    bl_category = "Bonesmith"
    bl_options = {'DEFAULT_CLOSED'}

    def draw(self, context):
        layout = self.layout
        settings = context.scene.bonesmith_correctives
        armature = selection.find_armature(context.active_object)

        box = layout.box()
        box.label(text="Learn", icon='EXPERIMENTAL')
        box.prop(settings, "source")
        if settings.source == 'RANDOM':
            box.prop(settings, "poses")
            box.prop(settings, "max_degrees")
        else:
            box.prop(settings, "frame_step")
        box.prop(settings, "max_keys")
        op = box.operator("bonesmith.learn_correctives", icon='PLAY')
        op.source, op.poses = settings.source, settings.poses
        op.max_degrees, op.frame_step = settings.max_degrees, settings.frame_step
        op.max_keys = settings.max_keys
        if armature is None:
            box.label(text="Select a rigged character", icon='INFO')
        elif not armature.get(ops.MODEL_PROPERTY):
            box.label(text=f"'{armature.name}': nothing learned yet", icon='INFO')

        box = layout.box()
        box.label(text="Bake", icon='SHAPEKEY_DATA')
        box.prop(settings, "bake_mode")
        op = box.operator("bonesmith.bake_correctives", icon='MOD_ARMATURE')
        op.mode = settings.bake_mode

        box = layout.box()
        box.label(text="Joint Regressor", icon='BONE_DATA')
        box.prop(settings, "regressor_name")
        op = box.operator("bonesmith.train_joint_regressor", icon='PLAY')
        op.model_name = settings.regressor_name
        box.operator("bonesmith.fit_armature", icon='ARMATURE_DATA')


classes = (BonesmithCorrectivesSettings, BONESMITH_PT_correctives)


def register():
    for cls in classes:
        bpy.utils.register_class(cls)
    bpy.types.Scene.bonesmith_correctives = PointerProperty(type=BonesmithCorrectivesSettings)


def unregister():
    del bpy.types.Scene.bonesmith_correctives
    for cls in reversed(classes):
        bpy.utils.unregister_class(cls)
