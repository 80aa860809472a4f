# SPDX-License-Identifier: GPL-3.0-or-later
"""FBX export with settings game engines expect."""
from __future__ import annotations

from pathlib import Path

import bpy

from ..core.errors import BonesmithError
from .selection import rig_meshes

# Unity / Unreal / Godot friendly: no "_end" leaf bones, only deforming bones, units baked
# into the transforms (FBX scale 1.0, centimetres), flat faces without smoothing warnings.
GAME_ENGINE_SETTINGS = dict(
    object_types={'ARMATURE', 'MESH'},
    add_leaf_bones=False,
    use_armature_deform_only=True,
    apply_unit_scale=True,
    apply_scale_options='FBX_SCALE_ALL',
    use_mesh_modifiers=True,
    mesh_smooth_type='FACE',
    bake_anim=False,
    axis_forward='-Z',
    axis_up='Y',
)


def export_fbx(filepath, armature: bpy.types.Object, meshes=None, *, bake_anim: bool = False,
               **overrides) -> Path:
    """Write `armature` and its meshes (default: every mesh it deforms) to an FBX file.

    The scene's selection is restored afterwards. `overrides` go to the FBX exporter.
    """
    filepath = Path(filepath)
    if armature is None or armature.type != 'ARMATURE':
        raise BonesmithError("Select an armature (or a mesh rigged to one) to export")
    meshes = rig_meshes(armature) if meshes is None else list(meshes)
    filepath.parent.mkdir(parents=True, exist_ok=True)

    view_layer = bpy.context.view_layer
    selected = [obj for obj in view_layer.objects if obj.select_get()]
    active = view_layer.objects.active
    try:
        for obj in selected:
            obj.select_set(False)
        for obj in [armature, *meshes]:
            obj.select_set(True)
        view_layer.objects.active = armature
        settings = dict(GAME_ENGINE_SETTINGS, bake_anim=bake_anim)
        settings.update(overrides)
        bpy.ops.export_scene.fbx(filepath=str(filepath), use_selection=True, **settings)
    finally:
        for obj in view_layer.objects:
            obj.select_set(obj in selected)
        view_layer.objects.active = active
    return filepath
