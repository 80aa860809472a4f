# SPDX-License-Identifier: GPL-3.0-or-later
"""Which objects belong together: the armature an object is rigged to, the meshes an
armature deforms, and the objects of the view layer. Operators, panels, the command line
and the other bridge modules look armatures up here and nowhere else."""
from __future__ import annotations

import bpy

from ..core.errors import BonesmithError


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


def in_view_layer(context, objects) -> list:
    """The objects of `objects` that are in the context's view layer, in their order."""
    names = {o.name for o in context.view_layer.objects}
    return [o for o in objects if o.name in names]


def meshes_again(names, label: str, vertex_counts=None) -> list:
    """The mesh objects `names` looked up again in apply() (the user may have changed the
    scene while a job ran). BonesmithError when one was removed or renamed, or, given the
    vertex counts read, edited."""
    meshes = []
    for k, name in enumerate(names):
        obj = bpy.data.objects.get(name)
        if obj is None or obj.type != 'MESH':
            raise BonesmithError(f"The mesh '{name}' was removed or renamed while {label} ran")
        if vertex_counts is not None and len(obj.data.vertices) != vertex_counts[k]:
            raise BonesmithError(f"The mesh '{name}' was edited while {label} ran: run it again")
        meshes.append(obj)
    return meshes
