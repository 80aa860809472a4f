# SPDX-License-Identifier: GPL-3.0-or-later
"""Extension preferences (Edit > Preferences > Add-ons > Bonesmith)."""
import zlib
from pathlib import Path

import bpy
from bpy.props import EnumProperty, IntProperty, StringProperty

DEFAULT_ASYNC_VERTICES = 30_000
DEFAULT_MODEL = "DEFAULT"
MODEL_SUFFIX = ".npz"


def user_models_dir() -> Path:
    """Where Train Skin keeps trained Auto Skin models (the extension's user folder,
    which survives upgrades of the extension)."""
    return Path(bpy.utils.extension_path_user(__package__, path="models", create=True))


def trained_models() -> list:
    """Trained model files in user_models_dir(), by name."""
    try:
        folder = user_models_dir()
    except (OSError, ValueError):
        return []
    return sorted(p for p in folder.glob(f"*{MODEL_SUFFIX}") if p.is_file())


_model_items = []  # Blender needs the enum strings to stay alive


def _skin_model_items(self, context):
    items = [(DEFAULT_MODEL, "Shipped Default", "The model that ships with Bonesmith", 'PACKAGE',
              0)]
    for path in trained_models():
        number = zlib.crc32(path.name.encode()) & 0x7FFFFFFF or 1
        items.append((path.name, path.stem, f"Trained with Train Skin: {path}", 'FILE', number))
    _model_items[:] = items
    return _model_items


def _get_skin_model(self):
    name = self.active_skin_model or DEFAULT_MODEL
    for identifier, _, _, _, number in _skin_model_items(self, None):
        if identifier == name:
            return number
    return 0  # the stored model was deleted: show (and use) the shipped default


def _set_skin_model(self, value):
    for identifier, _, _, _, number in _skin_model_items(self, None):
        if number == value:
            self.active_skin_model = "" if identifier == DEFAULT_MODEL else identifier
            return


class BonesmithPreferences(bpy.types.AddonPreferences):
    bl_idname = __package__

    async_vertices: IntProperty(
        name="Background Above",
        description="Meshes with more vertices than this are rigged and skinned in the "
                    "background (Blender stays responsive, Esc cancels)",
        default=DEFAULT_ASYNC_VERTICES, min=0,
    )
    active_skin_model: StringProperty(
        name="Active Skin Model File",
        description="File name of the trained model Auto Skin uses (in the extension's user "
                    "folder); empty for the shipped default",
        default="",
    )
    skin_model: EnumProperty(
        name="Skin Model",
        description="The model Auto Skin and Auto Rig use: the shipped default or one trained "
                    "with Train Skin",
        items=_skin_model_items, get=_get_skin_model, set=_set_skin_model,
    )

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        col = layout.column()
        col.prop(self, "skin_model")
        col.prop(self, "async_vertices", text="Background Above (vertices)")
        # A button, not the path as text: the path is long and a label would be cut.
        col.operator("wm.path_open", text="Open the Trained Models Folder",
                     icon='FILE_FOLDER').filepath = str(user_models_dir())


def get(context=None):
    """These preferences, or None when the extension is not enabled (e.g. scripts, CLI)."""
    context = context or bpy.context
    addon = context.preferences.addons.get(__package__)
    return addon.preferences if addon is not None else None


def active_skin_model(context=None):
    """(path or None for the shipped default, warning or "") of the model Auto Skin uses."""
    prefs = get(context)
    name = prefs.active_skin_model if prefs is not None else ""
    if not name:
        return None, ""
    path = user_models_dir() / name
    if not path.is_file():
        return None, f"the skin model '{name}' is missing from {path.parent}; used the shipped default"
    return path, ""


def register():
    bpy.utils.register_class(BonesmithPreferences)


def unregister():
    bpy.utils.unregister_class(BonesmithPreferences)
