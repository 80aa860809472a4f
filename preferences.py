# SPDX-License-Identifier: GPL-3.0-or-later
"""Extension preferences (Edit > Preferences > Add-ons > Bonesmith)."""
import bpy
from bpy.props import IntProperty

DEFAULT_ASYNC_VERTICES = 30_000


class BonesmithPreferences(bpy.types.AddonPreferences):
    bl_idname = __package__

    async_vertices: IntProperty(
        name="Background Above",
        description="Meshes with more vertices than this are rigged in the background "
                    "(Blender stays responsive, Esc cancels)",
        default=DEFAULT_ASYNC_VERTICES, min=0,
    )

    def draw(self, context):
        self.layout.prop(self, "async_vertices")


def get(context=None):
    """These preferences, or None when the extension is not enabled (e.g. scripts, CLI)."""
    context = context or bpy.context
    addon = context.preferences.addons.get(__package__)
    return addon.preferences if addon is not None else None


def register():
    bpy.utils.register_class(BonesmithPreferences)


def unregister():
    bpy.utils.unregister_class(BonesmithPreferences)
