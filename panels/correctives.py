# SPDX-License-Identifier: GPL-3.0-or-later
"""The "Correctives" sub-panel of the Bonesmith sidebar tab (docs/correctives.md);
panels/__init__.py registers it with its settings."""
import bpy

from ..bridge import selection
from ..operators import correctives as ops
from ..operators import options
from .base import FoldedPanel


class BonesmithCorrectivesSettings(options.LearnOptions, bpy.types.PropertyGroup):
    """Per-scene options of the Correctives panel, handed to its operators (defined once, in
    operators/options.py, for both)."""
    bake_mode: options.BAKE_MODE
    regressor_name: options.REGRESSOR_NAME


class BONESMITH_PT_correctives(FoldedPanel, bpy.types.Panel):
    bl_label = "Correctives"

    def draw(self, context):
        layout = self.layout
        settings = context.scene.bonesmith_correctives
        armature = selection.find_armature(context.active_object)

        box = layout.box()
        box.label(text="Learn", icon='EXPERIMENTAL')
        box.label(text="Poses From:")   # own line: beside the menu it was cut
        box.prop(settings, "source", text="")
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
            if context.scene.get(ops.FAMILY_PROPERTY):
                box.label(text="Family model: Fit Armature, Bake", icon='INFO')
            else:
                box.label(text="Nothing learned yet", icon='INFO')   # (a name would not fit)
        characters = len({selection.find_armature(o) for o in context.selected_objects} - {None})
        if characters > 1:
            box.label(text=f"{characters} characters: learns a family", icon='COMMUNITY')

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
