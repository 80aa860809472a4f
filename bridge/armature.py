# SPDX-License-Identifier: GPL-3.0-or-later
"""core Skeleton <-> Blender armature objects.

A Skeleton from core is in world space. The armature object takes the world matrix of
the mesh it rigs (so unapplied location/rotation/scale stay where the user put them) and
its bones are the skeleton's joints mapped into that object's local space.
"""
from __future__ import annotations

import bpy
import numpy as np
from mathutils import Matrix, Vector

from ..core.errors import BonesmithError, InvalidArmatureError
from ..core.rig import presets
from ..core.skeleton import Skeleton
from .mesh import matrix_to_numpy, transform_points

# Heads closer than this fraction of the rig's size to the parent's tail are connected.
CONNECT_TOLERANCE = 1e-6
# Bones shorter than this fraction of the rig's size get stretched (Blender deletes zero-length bones).
MIN_BONE_LENGTH = 1e-4


def _as_numpy(matrix) -> np.ndarray:
    if isinstance(matrix, Matrix):
        return matrix_to_numpy(matrix)
    return np.asarray(matrix, dtype=np.float64).reshape(4, 4)


def _unit(v: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    return np.divide(v, n, out=np.zeros_like(v), where=n > 0)


def set_mode(obj: bpy.types.Object, mode: str) -> None:
    """Put `obj` alone into `mode` (multi-object editing would take selected armatures along)."""
    view_layer = bpy.context.view_layer
    for other in view_layer.objects:
        if other is not obj and other.select_get(view_layer=view_layer):
            other.select_set(False, view_layer=view_layer)
    obj.select_set(True, view_layer=view_layer)
    view_layer.objects.active = obj
    with bpy.context.temp_override(active_object=obj, object=obj):
        bpy.ops.object.mode_set(mode=mode)


def skeleton_to_armature(skeleton: Skeleton, *, name: str = "Armature", matrix_world=None,
                         world_to_local=None, collection=None) -> bpy.types.Object:
    """Create an armature object whose bones are `skeleton` (world space).

    matrix_world: the new object's world matrix (default identity).
    world_to_local: maps the skeleton into the object's local space
    (default: the inverse of matrix_world).
    Must be called in Object Mode; leaves the new armature active and selected.
    """
    A = np.eye(4) if matrix_world is None else _as_numpy(matrix_world)
    data = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, data)
    try:
        (collection or bpy.context.scene.collection).objects.link(obj)
        obj.matrix_world = Matrix(A.tolist())
        data.display_type = 'OCTAHEDRAL'
        obj.show_in_front = True
        _write_bones(obj, skeleton, np.linalg.inv(A) if world_to_local is None else _as_numpy(world_to_local))
    except Exception:
        remove_armature(obj)
        raise
    return obj


def replace_bones(armature: bpy.types.Object, skeleton: Skeleton, world_to_local=None) -> None:
    """Give the existing `armature` the bones of `skeleton` (world space) in place of its
    own: the object, its name, its children and the Armature modifiers aimed at it stay,
    as do the pose settings of bones whose names come back. world_to_local: as in
    skeleton_to_armature (default: the inverse of the armature's world matrix). Must be
    called in Object Mode; leaves the armature active and selected. On failure the
    armature keeps its old bones."""
    to_local = (np.linalg.inv(matrix_to_numpy(armature.matrix_world)) if world_to_local is None
                else _as_numpy(world_to_local))
    backup = armature.data.copy()
    try:
        _write_bones(armature, skeleton, to_local, replace=True)
    except Exception:
        if armature.mode != 'OBJECT':
            bpy.ops.object.mode_set(mode='OBJECT')
        broken, name = armature.data, armature.data.name
        armature.data = backup
        bpy.data.armatures.remove(broken)
        backup.name = name
        raise
    bpy.data.armatures.remove(backup)


def _write_bones(obj, skeleton: Skeleton, to_local: np.ndarray, replace: bool = False) -> None:
    """The bones of `skeleton` (world space, mapped by `to_local`) into the armature
    `obj` (replace: its old bones removed first), connected, rolled and, for a metarig,
    given Rigify's types."""
    data = obj.data
    heads = transform_points(to_local, skeleton.joints)
    tails = transform_points(to_local, skeleton.tails)
    # `up` is a direction: map it with the linear part only.
    ups = skeleton.up @ to_local[:3, :3].T
    parents = skeleton.parents
    size = float(np.linalg.norm(np.ptp(np.vstack([heads, tails]), axis=0))) if len(heads) else 1.0
    size = size if size > 0 else 1.0

    lengths = np.linalg.norm(tails - heads, axis=1)
    short = lengths < MIN_BONE_LENGTH * size
    if short.any():
        direction = _unit(ups[short])
        direction[~direction.any(axis=1)] = (0.0, 0.0, 1.0)
        tails[short] = heads[short] + direction * (MIN_BONE_LENGTH * size)

    set_mode(obj, 'EDIT')
    try:
        if replace:
            for bone in list(data.edit_bones):
                data.edit_bones.remove(bone)
        edit_bones = []
        for j in range(len(heads)):
            bone = data.edit_bones.new(skeleton.names[j])
            bone.head = Vector(heads[j])
            bone.tail = Vector(tails[j])
            bone.use_deform = True
            edit_bones.append(bone)
        chain_starts = _rigify_chain_starts(skeleton)
        # a creature metarig's chains are connected by core/rig/rigify_roles.py's tolerance
        chained = set(range(len(heads))) - chain_starts if "rigify" in skeleton.info else set()
        for j, p in enumerate(parents):
            if p < 0:
                continue
            edit_bones[j].parent = edit_bones[p]
            near = np.linalg.norm(heads[j] - tails[p]) <= CONNECT_TOLERANCE * size
            if (near or j in chained) and j not in chain_starts:
                edit_bones[j].use_connect = True
        for j, bone in enumerate(edit_bones):
            if np.any(ups[j]):
                bone.align_roll(Vector(ups[j]))
    finally:
        bpy.ops.object.mode_set(mode='OBJECT')
    if skeleton.info.get("naming") == "rigify":
        _rigify_types(obj, skeleton)
    elif "rigify" in skeleton.info:
        _creature_rigify_types(obj, skeleton)


def _rigify_chain_starts(skeleton: Skeleton) -> set:
    """A metarig's bones that start a Rigify rig stay unconnected to their parent (Rigify
    takes a connected child into its parent's chain: the neck would join the spine)."""
    if "rigify" in skeleton.info:
        return {j for j, rig_type in enumerate(skeleton.info["rigify"]["types"]) if rig_type}
    if skeleton.info.get("naming") != "rigify":
        return set()
    return {j for j, role in enumerate(skeleton.info["roles"]) if presets.rigify_type(role)}


def _creature_rigify_types(obj, skeleton: Skeleton) -> None:
    """Any other character's metarig (core/rig/rigify_roles.py): the types, their
    parameters and the bone collections core chose."""
    enable_rigify()
    metarig = skeleton.info["rigify"]
    collections = {}
    for j, name in enumerate(skeleton.names):
        pose_bone = obj.pose.bones[name]
        if metarig["types"][j]:
            pose_bone.rigify_type = metarig["types"][j]
            for key, value in metarig["params"][j].items():
                setattr(pose_bone.rigify_parameters, key, value)
        _assign_collection(obj, collections, metarig["collections"][j], name)


def _assign_collection(obj, collections: dict, group: str, name: str) -> None:
    """Bone `name` into collection `group`; Rigify draws a button row per bone collection
    with a UI row, and needs one at least."""
    if group not in collections:    # a rebuilt metarig (replace_bones) keeps its collections
        collections[group] = obj.data.collections.get(group) or obj.data.collections.new(group)
        collections[group].rigify_ui_row = len(collections)
    collections[group].assign(obj.data.bones[name])


def enable_rigify() -> None:
    """PoseBone.rigify_type exists while Rigify (shipped with Blender) is enabled."""
    if "rigify_type" not in bpy.types.PoseBone.bl_rna.properties:
        import addon_utils
        errors = []
        addon_utils.enable("rigify", default_set=True, handle_error=errors.append)
        if "rigify_type" not in bpy.types.PoseBone.bl_rna.properties:
            raise BonesmithError(f"A Rigify metarig needs the Rigify add-on, which could not be "
                                 f"enabled ({errors[0] if errors else 'not found'}): enable it in "
                                 "Preferences > Add-ons, or pick another Naming")


def _rigify_types(obj, skeleton: Skeleton) -> None:
    """A humanoid metarig: Rigify's rig type on each chain's first bone."""
    enable_rigify()
    collections = {}
    for name, role in zip(skeleton.names, skeleton.info["roles"]):
        rig_type = presets.rigify_type(role)
        if rig_type:
            obj.pose.bones[name].rigify_type = rig_type
        _assign_collection(obj, collections, presets.rigify_collection(role), name)


def remove_armature(armature: bpy.types.Object) -> None:
    """Delete an armature object, and its armature data when nothing else uses it."""
    data = armature.data
    bpy.data.objects.remove(armature)
    if data.users == 0:
        bpy.data.armatures.remove(data)


def parent_meshes(armature: bpy.types.Object, meshes, armature_matrix=None) -> None:
    """Make `armature` deform `meshes`, keeping their world placement and the user's set-up.

    A mesh without a parent, or parented to an armature (the rig it came with), is
    parented to `armature`; a mesh under anything else (an Empty, a collection root)
    keeps its parent: build_rig puts the armature under it too. The deforming modifier:
    see armature_modifier (the first Armature modifier is re-aimed, so the mesh never
    deforms twice).
    """
    A = matrix_to_numpy(armature.matrix_world) if armature_matrix is None else _as_numpy(armature_matrix)
    A_inv = Matrix(np.linalg.inv(A).tolist())
    for obj in meshes:
        if obj.parent is None or obj.parent.type == 'ARMATURE':
            world = obj.matrix_world.copy()
            basis = obj.matrix_basis.copy()
            obj.parent = armature
            obj.parent_type = 'OBJECT'
            obj.parent_bone = ""
            try:
                # world = A @ parent_inverse @ basis  ->  parent_inverse = A^-1 @ world @ basis^-1
                obj.matrix_parent_inverse = A_inv @ world @ basis.inverted()
            except ValueError:  # singular basis (a zero scale): keep the world matrix in basis
                obj.matrix_parent_inverse = A_inv
                obj.matrix_basis = world
        armature_modifier(obj, armature)


def armature_modifier(obj: bpy.types.Object, armature: bpy.types.Object) -> bpy.types.Modifier:
    """The Armature modifier through which `armature` deforms `obj`: one already aimed at
    it, else the first Armature modifier re-aimed (empty or aimed at an older rig: two
    would deform the mesh twice), else a new one, placed after the last Mirror modifier
    (a mirrored half must be deformed as a whole, or only symmetric poses work) and
    before everything else (Subdivision, Solidify... work on the posed mesh)."""
    modifiers = [m for m in obj.modifiers if m.type == 'ARMATURE']
    modifier = next((m for m in modifiers if m.object == armature), None) or (modifiers[0] if modifiers else None)
    if modifier is None:
        mirrors = [i for i, m in enumerate(obj.modifiers) if m.type == 'MIRROR']
        modifier = obj.modifiers.new("Armature", 'ARMATURE')
        obj.modifiers.move(len(obj.modifiers) - 1, mirrors[-1] + 1 if mirrors else 0)
    modifier.object = armature
    modifier.use_vertex_groups = True
    return modifier


def rig_state(meshes) -> dict:
    """What build_rig / attach_mesh may change on `meshes` (parents, world matrices,
    Armature modifier targets), for remove_rig to put back."""
    return {obj.name: (obj.parent, obj.parent_type, obj.parent_bone, obj.matrix_world.copy(),
                       {m.name: m.object for m in obj.modifiers if m.type == 'ARMATURE'})
            for obj in meshes}


def attach_mesh(obj: bpy.types.Object, armature: bpy.types.Object) -> bpy.types.Modifier:
    """Make `armature` deform `obj` (keeping the user's set-up where it can): the modifier
    of armature_modifier; an unparented mesh is parented to the armature (keeping its
    world placement), as is one parented to a bone of it (a bone parent plus the modifier
    would move it twice); a mesh parented to something else stays so.
    """
    modifier = armature_modifier(obj, armature)
    if obj.parent is None or (obj.parent == armature and obj.parent_type != 'OBJECT'):
        world = obj.matrix_world.copy()
        obj.parent = armature
        obj.parent_type = 'OBJECT'
        obj.parent_bone = ""
        obj.matrix_parent_inverse = armature.matrix_world.inverted_safe()
        obj.matrix_world = world
    return modifier


def build_rig(skeleton: Skeleton, meshes, *, active=None, name=None, world_to_local=None):
    """Create the armature for `skeleton`, aligned with `active` (default: the first mesh),
    and parent every mesh to it. On failure nothing is left behind.

    world_to_local: see skeleton_to_armature; pass the inverse of the mesh's world matrix
    at the time the skeleton was computed if the mesh may have moved since.
    """
    meshes = list(meshes)
    active = active or meshes[0]
    collection = active.users_collection[0] if active.users_collection else bpy.context.scene.collection
    A = matrix_to_numpy(active.matrix_world)
    armature = skeleton_to_armature(skeleton, name=name or f"{active.name}_Armature", matrix_world=A,
                                    world_to_local=world_to_local, collection=collection)
    try:
        owners = {obj.parent for obj in meshes if obj.parent is not None and obj.parent.type != 'ARMATURE'}
        if len(owners) == 1:          # the meshes live under an Empty (or such): so does their rig
            owner = owners.pop()
            world = armature.matrix_world.copy()
            armature.parent = owner
            armature.matrix_parent_inverse = owner.matrix_world.inverted_safe()
            armature.matrix_world = world
        parent_meshes(armature, meshes, A)
    except Exception:
        remove_armature(armature)
        raise
    return armature


def remove_rig(armature: bpy.types.Object, meshes, state: dict | None = None) -> None:
    """Take back build_rig: with `state` (rig_state taken before), each mesh gets its
    parent, placement and Armature modifier targets back and the modifiers added for
    `armature` go; without it, modifiers aimed at `armature` go and meshes parented to it
    are unparented (keeping their world placement). Then the armature goes."""
    for obj in meshes:
        before = (state or {}).get(obj.name)
        targets = before[4] if before else {}
        for modifier in [m for m in obj.modifiers if m.type == 'ARMATURE' and m.object == armature]:
            if modifier.name in targets:
                modifier.object = targets[modifier.name]
            else:
                obj.modifiers.remove(modifier)
        if before:
            obj.parent, obj.parent_type = before[0], before[1]
            obj.parent_bone = before[2]
            obj.matrix_world = before[3]
        elif obj.parent == armature:
            world = obj.matrix_world.copy()
            obj.parent = None
            obj.matrix_world = world
    remove_armature(armature)


def _topological(bones) -> list:
    """Bones ordered parents first, otherwise in their given order."""
    order, seen = [], set()

    def visit(bone):
        if bone.name in seen:
            return
        if bone.parent is not None and bone.parent.name in names:
            visit(bone.parent)
        seen.add(bone.name)
        order.append(bone)

    names = {b.name for b in bones}
    for bone in bones:
        visit(bone)
    return order


def require_bones(armature: bpy.types.Object, names, *, of: str, fix: str) -> list:
    """The bones `names` of `armature`; BonesmithError naming the armature and the first
    missing bones otherwise: "'Rig' lacks bones {of} (a, b, c): {fix}"."""
    missing = [n for n in names if n not in armature.data.bones]
    if missing:
        raise BonesmithError(f"'{armature.name}' lacks bones {of} ({', '.join(missing[:3])}): {fix}")
    return [armature.data.bones[n] for n in names]


def bone_ends(armature: bpy.types.Object, names=None, *, posed: bool = False):
    """World-space heads and tails (J,3) of the bones `names` (default: every bone, in the
    armature's order), at rest or (posed=True) in the armature's current pose."""
    bones = armature.pose.bones if posed else armature.data.bones
    bones = list(bones) if names is None else [bones[n] for n in names]
    if posed:
        heads, tails = [b.head for b in bones], [b.tail for b in bones]
    else:
        heads, tails = [b.head_local for b in bones], [b.tail_local for b in bones]
    M = matrix_to_numpy(armature.matrix_world)
    return transform_points(M, np.array(heads)), transform_points(M, np.array(tails))


def bone_segments(armature, *, posed: bool = False):
    """World-space heads, tails, x and z axes (J,3 each) of every bone, at rest or
    (posed=True) in the armature's current pose; empty arrays for None or no bones."""
    bones = [] if armature is None else list(armature.pose.bones if posed else armature.data.bones)
    if not bones:
        empty = np.zeros((0, 3))
        return empty, empty, empty, empty
    M = matrix_to_numpy(armature.matrix_world)
    world = M @ np.array([np.array(b.matrix if posed else b.matrix_local) for b in bones])
    heads, tails = bone_ends(armature, posed=posed)
    return heads, tails, _unit(world[:, :3, 0]), _unit(world[:, :3, 2])


def is_end_bone(bone) -> bool:
    """A leaf marking where its parent ends, as FBX exporters add them: no children, the
    name ends in "_end" (Blender: the parent's name + "_end")."""
    return not bone.children and bone.parent is not None and bone.name.lower().endswith("_end")


def armature_to_skeleton(armature: bpy.types.Object, *, deform_only: bool = True) -> Skeleton:
    """The armature's rest pose as a world-space Skeleton.

    With deform_only, non-deforming bones are left out and each kept bone's parent is its
    nearest deforming ancestor; so are leaf bones named "*_end": the tips that FBX
    exporters add ("Add Leaf Bones", Blender's default), which move no vertices.
    """
    if armature.type != 'ARMATURE':
        raise TypeError(f"{armature.name!r} is not an armature")
    kept = [b for b in armature.data.bones if not deform_only or (b.use_deform and not is_end_bone(b))]
    names = {b.name for b in kept}
    kept = _topological(kept)
    index = {b.name: i for i, b in enumerate(kept)}
    M = matrix_to_numpy(armature.matrix_world)

    parents = []
    for bone in kept:
        parent = bone.parent
        while parent is not None and parent.name not in names:
            parent = parent.parent
        parents.append(-1 if parent is None else index[parent.name])
    heads, tails = bone_ends(armature, [b.name for b in kept])
    z_axes = np.array([b.matrix_local.col[2][:3] for b in kept], dtype=np.float64).reshape(-1, 3)
    return Skeleton(
        joints=heads,
        parents=np.asarray(parents, dtype=np.int64),
        tails=tails,
        names=[b.name for b in kept],
        up=_unit(z_axes @ M[:3, :3].T),
    )


def deform_bones(armature: bpy.types.Object):
    """(joints (J,3), parents (J,), tails (J,3), names) of the armature's deforming bones at
    rest, in world space; parents skip non-deforming bones (Rigify's ORG/MCH/controls).

    Raises InvalidArmatureError (a BonesmithError) when the armature has no deforming bone.
    """
    if armature is None or armature.type != 'ARMATURE':
        raise BonesmithError("Auto Skin needs an armature: select one together with the mesh(es)")
    if not len(armature.data.bones):
        raise InvalidArmatureError(f"The armature '{armature.name}' has no bones")
    skeleton = armature_to_skeleton(armature, deform_only=True)
    if not len(skeleton):
        raise InvalidArmatureError(
            f"The armature '{armature.name}' has no deforming bones: enable 'Deform' "
            "(Bone properties) on the bones that should move the mesh")
    return skeleton.joints, skeleton.parents, skeleton.tails, list(skeleton.names)
