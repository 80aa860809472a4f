# SPDX-License-Identifier: GPL-3.0-or-later
"""FBX export with settings game engines expect."""
from __future__ import annotations

from pathlib import Path

import bpy

from ..core.errors import BonesmithError

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


def rig_meshes(armature: bpy.types.Object) -> list:
    """Mesh objects deformed by `armature` (Armature modifier) or parented to it."""
    return [obj for obj in bpy.data.objects if obj.type == 'MESH' and (
        obj.parent is armature
        or any(m.type == 'ARMATURE' and m.object is armature for m in obj.modifiers))]


def find_armature(obj):
    """The armature that `obj` belongs to: itself, its Armature modifier's or its parent."""
    if obj is None:
        return None
    if obj.type == 'ARMATURE':
        return obj
    for modifier in getattr(obj, "modifiers", ()):
        if modifier.type == 'ARMATURE' and modifier.object is not None:
            return modifier.object
    if obj.parent is not None and obj.parent.type == 'ARMATURE':
        return obj.parent
    return None


def armatures_of(objects) -> set:
    """The armatures the objects belong to (find_armature of each)."""
    return {find_armature(obj) for obj in objects} - {None}


def the_armature(objects, *, several: str, missing: str):
    """The one armature the objects belong to. BonesmithError(several, with {names} filled
    in) when they belong to more than one, BonesmithError(missing) when to none."""
    found = armatures_of(objects)
    if len(found) > 1:
        raise BonesmithError(several.format(names=", ".join(sorted(f"'{a.name}'" for a in found))))
    if not found:
        raise BonesmithError(missing)
    return found.pop()


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
