# SPDX-License-Identifier: GPL-3.0-or-later
"""Rigify's Generate Rig on an Auto Skeleton metarig, and the meshes moved onto the
generated rig's deforming bones (docs/auto_skeleton.md#rigify-metarig-for-any-character):
each metarig bone's vertex group becomes the group of its DEF- bone (Rigify names the
deforming copy of bone X "DEF-X"), the Armature modifier and the parent aim at the
generated rig."""
from __future__ import annotations

import bpy

from ..core.errors import BonesmithError
from .armature import enable_rigify, set_mode
from .weights import read_weights, write_weights

DEF_PREFIX = "DEF-"


def generate_rig(metarig: bpy.types.Object) -> bpy.types.Object:
    """Run Rigify's Generate Rig on `metarig` (Object Mode) and move the meshes it deforms
    onto the generated rig; returns the generated rig. Rigify's own error (MetarigError)
    comes back as a BonesmithError naming it."""
    enable_rigify()
    set_mode(metarig, 'OBJECT')
    try:
        with bpy.context.temp_override(object=metarig):     # its poll reads context.object
            bpy.ops.pose.rigify_generate()
    except RuntimeError as error:      # Rigify reports its MetarigError through the operator
        raise BonesmithError(f"Rigify could not generate a rig from '{metarig.name}': {error}") from None
    rig = metarig.data.rigify_target_rig
    if rig is None:
        raise BonesmithError(f"Rigify generated no rig from '{metarig.name}'")
    bind_meshes(metarig, rig)
    return rig


def bind_meshes(metarig: bpy.types.Object, rig: bpy.types.Object) -> list:
    """The meshes deformed by `metarig` deform with `rig`'s DEF- bones instead; a metarig
    bone without a deforming copy (a leg rig's heel marker) gives its weights to its
    nearest ancestor that has one. Returns the meshes moved."""
    moved = []
    for obj in bpy.data.objects:
        modifiers = [m for m in getattr(obj, "modifiers", []) if m.type == 'ARMATURE' and m.object is metarig]
        if obj.type != 'MESH' or not modifiers:
            continue
        _rename_groups(obj, metarig, rig)
        for m in modifiers:
            m.object = rig
        if obj.parent is metarig:
            world = obj.matrix_world.copy()
            obj.parent = rig
            obj.matrix_world = world
        moved.append(obj)
    return moved


def deforming_copy(bone, rig_bones):
    """The DEF- bone of metarig bone `bone`, or of its nearest ancestor that has one."""
    while bone is not None:
        name = DEF_PREFIX + bone.name
        if name in rig_bones and rig_bones[name].use_deform:
            return name
        bone = bone.parent
    return None


def _rename_groups(obj, metarig, rig) -> None:
    """Vertex groups of metarig bones -> the groups of their DEF- bones (merged by adding
    where several bones share one)."""
    bones, rig_bones = metarig.data.bones, rig.data.bones
    targets = {g.name: deforming_copy(bones[g.name], rig_bones) for g in obj.vertex_groups if g.name in bones}
    missing = [name for name, target in targets.items() if target is None]
    if missing:
        raise BonesmithError(f"The generated rig '{rig.name}' has no deforming bone for "
                             f"{', '.join(missing[:3])}{' ...' if len(missing) > 3 else ''}")
    by_target = {}
    for name, target in targets.items():
        by_target.setdefault(target, []).append(name)
    for target, names in by_target.items():
        if len(names) == 1 and target not in obj.vertex_groups:
            obj.vertex_groups[names[0]].name = target
            continue
        merged = read_weights(obj, [target, *names])[0].sum(axis=1, keepdims=True)
        write_weights(obj, merged, [target])
        for n in names:
            if n != target:
                obj.vertex_groups.remove(obj.vertex_groups[n])
