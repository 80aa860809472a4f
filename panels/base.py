# SPDX-License-Identifier: GPL-3.0-or-later
"""What every Bonesmith panel shares: its place, the "Bonesmith" tab of the 3D View's
sidebar (N panel)."""


class BonesmithPanel:
    bl_space_type = 'VIEW_3D'
    bl_region_type = 'UI'
    bl_category = "Bonesmith"


class FoldedPanel(BonesmithPanel):
    """A sub-panel of the Bonesmith sidebar, folded until the user opens it (its bl_idname
    is its class name, Blender's default for a panel)."""
    bl_parent_id = "BONESMITH_PT_skeleton"
    bl_options = {'DEFAULT_CLOSED'}


def column_and_settings(layout, context):
    """A column of the panel and the scene's Bonesmith settings, what a draw starts with."""
    return layout.column(), context.scene.bonesmith
