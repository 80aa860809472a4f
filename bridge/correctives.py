# SPDX-License-Identifier: GPL-3.0-or-later
"""Learned correctives (docs/correctives.md) between Blender and core.correctives: poses,
ground truth sampled from the meshes' own deformers, and bakes (vertex groups, bones,
shape keys).

Arrays are in world space at rest. A pose is (J,3,3): each deforming bone's local rotation
R_j in world-aligned axes about its head (core's convention). Blender stores L_j, the
rotation in the bone's own rest axes, and R_j = B_j · L_j · B_jᵀ with B_j the bone's rest
orientation in world space (bone_rest_rotations). `names` lists the bones in the order of
the arrays' joint axis; each bone's parent is its nearest ancestor in `names`.
"""
from __future__ import annotations

from contextlib import contextmanager

import bpy
import numpy as np
from mathutils import Matrix, Vector

from ..core import correctives
from ..core.correctives import bake
from ..core.errors import BonesmithError
from . import training_data
from .armature import bone_ends, require_bones, set_mode
from .mesh import combine_rest, matrix_to_numpy, transform_points
from .pose import kept_pose
from .weights import write_weights_split

PREFIX = "BSC_"          # our shape keys: a re-bake replaces exactly these
LBS_SUFFIX = "_LBS"      # the non-destructive bake's copy of a mesh
COPY_PROPERTY = "bonesmith_lbs_of"   # on a copy: the name of the mesh it copies
SLIDER_RANGE = 10.0      # Blender's widest; bounded_key keeps values within ±1 anyway
DRIVER_CHANNELS = (("w", 'ROT_W'), ("x", 'ROT_X'), ("y", 'ROT_Y'), ("z", 'ROT_Z'))
# Modifiers that move vertices but keep their number and order: ground truth can pass them.
KEEPS_VERTICES = {
    'ARMATURE', 'CAST', 'CLOTH', 'COLLISION', 'CORRECTIVE_SMOOTH', 'CURVE', 'DATA_TRANSFER',
    'DISPLACE', 'HOOK', 'LAPLACIANDEFORM', 'LAPLACIANSMOOTH', 'LATTICE', 'MESH_CACHE',
    'MESH_DEFORM', 'MESH_SEQUENCE_CACHE', 'NORMAL_EDIT', 'SHRINKWRAP', 'SIMPLE_DEFORM',
    'SMOOTH', 'SOFT_BODY', 'SURFACE', 'SURFACE_DEFORM', 'TRIANGULATE', 'UV_PROJECT',
    'UV_WARP', 'VERTEX_WEIGHT_EDIT', 'VERTEX_WEIGHT_MIX', 'VERTEX_WEIGHT_PROXIMITY', 'WARP',
    'WAVE', 'WEIGHTED_NORMAL',
}


# -- bones --------------------------------------------------------------------------------------

def _orthonormal(matrices) -> np.ndarray:
    """Nearest rotations (polar decomposition): drops object/bone scale from 3x3 frames."""
    U, _, Vt = np.linalg.svd(np.asarray(matrices, dtype=np.float64))
    R = U @ Vt
    flip = np.linalg.det(R) < 0
    if np.any(flip):
        U[flip, :, -1] *= -1
        R = U @ Vt
    return R


def _bones(armature, names) -> list:
    return require_bones(armature, names, of="of the model", fix="rig the character to the skeleton it learned on")


def bone_parents(armature, names) -> np.ndarray:
    """(J,) index into `names` of each bone's nearest ancestor among `names` (-1: none)."""
    index = {n: j for j, n in enumerate(names)}
    parents = []
    for bone in _bones(armature, names):
        parent = bone.parent
        while parent is not None and parent.name not in index:
            parent = parent.parent
        parents.append(-1 if parent is None else index[parent.name])
    return np.asarray(parents, dtype=np.int64)


def bone_rest_rotations(armature, names) -> np.ndarray:
    """(J,3,3) B_j: each bone's rest orientation in world space (columns = its axes)."""
    M = matrix_to_numpy(armature.matrix_world)[:3, :3]
    rest = np.array([matrix_to_numpy(b.matrix_local)[:3, :3] for b in _bones(armature, names)])
    return _orthonormal(M @ rest.reshape(-1, 3, 3))


# -- poses --------------------------------------------------------------------------------------

def set_pose(armature, names, rotations) -> None:
    """Pose the bones `names` with world-aligned local rotations (J,3,3): quaternion rotation
    mode, no location, unit scale; every other bone goes to rest. Updates the view layer."""
    R = np.asarray(rotations, dtype=np.float64)
    if R.shape != (len(names), 3, 3) or not np.isfinite(R).all():
        raise BonesmithError(f"A pose must be {len(names)} finite 3x3 rotations, not {R.shape}")
    quaternions = correctives.local_quaternions(R[None], bone_rest_rotations(armature, names))[0]
    wanted = dict(zip(names, quaternions.tolist()))
    for pb in armature.pose.bones:
        pb.matrix_basis = Matrix.Identity(4)
        if pb.name in wanted:
            pb.rotation_mode = 'QUATERNION'
            pb.rotation_quaternion = wanted[pb.name]
    bpy.context.view_layer.update()


def read_pose(armature, names, depsgraph=None) -> np.ndarray:
    """(J,3,3) world-aligned local rotations of the evaluated pose (constraints, drivers and
    the action count): R_j = A_parentᵀ A_j with A the bones' world rotations from rest."""
    depsgraph = depsgraph or bpy.context.evaluated_depsgraph_get()
    evaluated = armature.evaluated_get(depsgraph)
    M = matrix_to_numpy(evaluated.matrix_world)[:3, :3]
    posed = np.array([matrix_to_numpy(evaluated.pose.bones[n].matrix)[:3, :3] for n in names])
    A = _orthonormal(M @ posed.reshape(-1, 3, 3)) @ np.swapaxes(bone_rest_rotations(armature, names), 1, 2)
    R = A.copy()
    for j, p in enumerate(bone_parents(armature, names)):
        if p >= 0:
            R[j] = A[p].T @ A[j]
    return R


@contextmanager
def _kept_frame(scene):
    frame, subframe = scene.frame_current, scene.frame_subframe
    try:
        yield
    finally:
        scene.frame_set(frame, subframe=subframe)


@contextmanager
def _assigned_action(obj, action):
    """`action` plays on `obj` meanwhile (Blender 4.4+ also needs a slot)."""
    created = obj.animation_data is None
    data = obj.animation_data or obj.animation_data_create()
    previous = data.action
    slot = getattr(data, "action_slot", None)
    try:
        if action is not previous:
            data.action = action
        if getattr(data, "action_slot", True) is None:
            suitable = list(getattr(data, "action_suitable_slots", ()))
            if suitable:
                data.action_slot = suitable[0]
        yield
    finally:
        if created:
            obj.animation_data_clear()
        else:
            data.action = previous
            if slot is not None and previous is not None:
                data.action_slot = slot


def action_frames(action, step: int = 1) -> np.ndarray:
    """Whole frames of the action's frame range, every `step`-th."""
    start, end = action.frame_range
    return np.arange(int(np.floor(start)), int(np.ceil(end)) + 1, max(1, int(step)))


def action_rotations(armature, names, action, frames) -> np.ndarray:
    """(P,J,3,3) poses of `action` on `armature` at `frames` (evaluated: constraints count).
    The armature's own action, frame and pose are restored afterwards."""
    scene = bpy.context.scene
    poses = []
    with kept_pose(armature), _kept_frame(scene), _assigned_action(armature, action):
        for frame in np.asarray(frames, dtype=np.float64):
            whole = int(np.floor(frame))
            scene.frame_set(whole, subframe=float(frame - whole))
            poses.append(read_pose(armature, names))
    return np.array(poses).reshape(-1, len(names), 3, 3)


# -- ground truth -------------------------------------------------------------------------------

def _count_message(obj, count: int) -> str:
    suspects = [m for m in obj.modifiers if m.show_viewport and m.type not in KEEPS_VERTICES]
    kinds = bpy.types.Modifier.bl_rna.properties["type"].enum_items
    culprit = (f"its modifier '{suspects[0].name}' ({kinds[suspects[0].type].name})"
               if suspects else "a modifier")
    return (f"'{obj.name}' deforms into {count} vertices, its mesh has {len(obj.data.vertices)}: "
            f"{culprit} changes the vertex count. Disable it in the viewport while learning, so "
            "that every posed vertex matches a rest vertex")


def evaluated_vertices(meshes, depsgraph=None) -> np.ndarray:
    """(V,3) world-space evaluated vertices of `meshes`, stacked like mesh.combine_rest
    (row i is mesh vertex i whatever deformers run). BonesmithError when a modifier changes
    the vertex count."""
    depsgraph = depsgraph or bpy.context.evaluated_depsgraph_get()
    parts = []
    for obj in meshes:
        evaluated = obj.evaluated_get(depsgraph)
        mesh = evaluated.data
        if len(mesh.vertices) != len(obj.data.vertices):
            raise BonesmithError(_count_message(obj, len(mesh.vertices)))
        co = np.empty(len(mesh.vertices) * 3, dtype=np.float64)
        mesh.vertices.foreach_get("co", co)
        parts.append(transform_points(matrix_to_numpy(evaluated.matrix_world), co))
    return np.concatenate(parts) if parts else np.zeros((0, 3))


def iter_posed_vertices(armature, meshes, rotations, names):
    """Yield (index, posed vertices (V,3), read-back pose (J,3,3)) for each pose of
    `rotations` (P,J,3,3); the read-back pose is what the bones did (constraints may differ
    from what was asked). The original pose comes back when the loop ends or is closed."""
    with kept_pose(armature):
        for p, pose in enumerate(np.asarray(rotations, dtype=np.float64)):
            set_pose(armature, names, pose)
            depsgraph = bpy.context.evaluated_depsgraph_get()
            yield p, evaluated_vertices(meshes, depsgraph), read_pose(armature, names, depsgraph)


def sample_posed_vertices(armature, meshes, rotations, names, progress=None, *, read_back=False):
    """(P,V,3) ground truth: the meshes as their own deformer stack (Armature with Preserve
    Volume, Corrective Smooth, shape keys, drivers...) poses them for each pose (P,J,3,3).
    read_back=True also returns the poses the bones took. progress(fraction, message) may
    raise (core.errors.Cancelled) to stop; the pose is restored either way."""
    rotations = np.asarray(rotations, dtype=np.float64)
    if rotations.ndim != 4 or not len(rotations):
        raise BonesmithError(f"Poses must be (P, J, 3, 3) with P >= 1, not {rotations.shape}")
    posed, read = [], []
    samples = iter_posed_vertices(armature, meshes, rotations, names)
    try:
        for p, vertices, pose in samples:
            posed.append(vertices)
            read.append(pose)
            if progress is not None:
                progress((p + 1) / len(rotations), f"pose {p + 1}/{len(rotations)}")
    finally:
        samples.close()
    shape = (len(rotations), -1, 3)
    posed = np.array(posed).reshape(shape)
    return (posed, np.array(read).reshape(rotations.shape)) if read_back else posed


# -- the character ----------------------------------------------------------------------------

def character_arrays(armature, meshes) -> dict:
    """training_data.character_from_objects (vertices, faces, joints, parents, tails, names,
    weights with rows summing to 1, unweighted) plus `mesh_set`, the meshes' rows for
    splitting per-vertex results back onto them."""
    meshes = list(meshes)
    character = training_data.character_from_objects(armature, meshes)
    character["mesh_set"] = combine_rest(meshes)
    return character


# -- bakes: weights and bones -------------------------------------------------------------------

def write_refined_weights(meshes, mesh_set, weights, names, *, max_influences: int = 0,
                          threshold: float = 1e-4) -> None:
    """Refined W (V,J) into the bones' vertex groups (weights.write_weights_split)."""
    write_weights_split(meshes, mesh_set, bake.limit_influences(weights, max_influences), names,
                        threshold=threshold)


def fit_armature(armature, heads, tails, names) -> None:
    """Move bones `names` to world-space heads and tails (J,3) in Edit Mode, keeping each
    bone's roll axis; mode, active object and selection are restored."""
    heads, tails = np.asarray(heads, dtype=np.float64), np.asarray(tails, dtype=np.float64)
    if heads.shape != (len(names), 3) or tails.shape != heads.shape:
        raise BonesmithError(f"Fit Armature needs {len(names)} heads and tails")
    if not (np.isfinite(heads).all() and np.isfinite(tails).all()):
        raise BonesmithError("Fit Armature got NaN bone positions")
    _bones(armature, names)
    to_local = np.linalg.inv(matrix_to_numpy(armature.matrix_world))
    local_heads, local_tails = transform_points(to_local, heads), transform_points(to_local, tails)
    view_layer = bpy.context.view_layer
    selected = [o for o in view_layer.objects if o.select_get()]
    active = view_layer.objects.active
    mode = active.mode if active is not None else 'OBJECT'
    if active is not None and mode != 'OBJECT':
        bpy.ops.object.mode_set(mode='OBJECT')
    set_mode(armature, 'EDIT')
    try:
        bones = armature.data.edit_bones
        ups = {n: Vector(bones[n].z_axis) for n in names}
        for n, head, tail in zip(names, local_heads, local_tails):
            bones[n].head, bones[n].tail = Vector(head), Vector(tail)
        for n, head in zip(names, local_heads):  # a connected child's head also set its parent's tail
            bones[n].head = Vector(head)
        for n in names:
            bones[n].align_roll(ups[n])
    finally:
        bpy.ops.object.mode_set(mode='OBJECT')
        for obj in view_layer.objects:
            obj.select_set(obj in selected)
        view_layer.objects.active = active
        if active is not None and mode != 'OBJECT':
            bpy.ops.object.mode_set(mode=mode)


# -- bakes: shape keys --------------------------------------------------------------------------

def driver_expression(coeffs) -> str:
    """The key value Σ coeffs[m]·monomial_m(w,x,y,z) as a Blender simple expression."""
    terms = [f"{c:+.7g}*{m[0]}*{m[1]}" for c, m in zip(np.asarray(coeffs, dtype=np.float64),
                                                      correctives.MONOMIALS) if c != 0.0]
    return "".join(terms).lstrip("+") or "0"


def _fcurves(anim_data) -> list:
    """F-curves of the action playing in anim_data (layered actions of 4.4+ and older)."""
    if anim_data is None or anim_data.action is None:
        return []
    action = anim_data.action
    if getattr(action, "is_action_layered", False):
        from bpy_extras import anim_utils
        bag = anim_utils.animdata_get_channelbag_for_assigned_slot(anim_data)
        return list(bag.fcurves) if bag is not None else []
    return list(action.fcurves)


def _remove_fcurve(anim_data, fcurve) -> None:
    action = anim_data.action
    if getattr(action, "is_action_layered", False):
        from bpy_extras import anim_utils
        anim_utils.animdata_get_channelbag_for_assigned_slot(anim_data).fcurves.remove(fcurve)
    else:
        action.fcurves.remove(fcurve)


def _ensure_fcurve(datablock, data_path: str, action_name: str):
    anim_data = datablock.animation_data or datablock.animation_data_create()
    if anim_data.action is None:
        anim_data.action = bpy.data.actions.new(action_name)
    action = anim_data.action
    if hasattr(action, "fcurve_ensure_for_datablock"):
        return action.fcurve_ensure_for_datablock(datablock, data_path)
    return action.fcurves.find(data_path) or action.fcurves.new(data_path)


def corrective_keys(obj) -> list:
    """The shape keys of `obj` that a bake made (names starting with PREFIX)."""
    key = obj.data.shape_keys if obj.type == 'MESH' else None
    return [kb for kb in key.key_blocks if kb.name.startswith(PREFIX)] if key is not None else []


def remove_correctives(obj) -> int:
    """Remove the baked shape keys of `obj` with their drivers and keyframes (the user's
    keys stay; a Basis left alone goes too). Returns how many were removed."""
    ours = corrective_keys(obj)
    if not ours:
        return 0
    key = obj.data.shape_keys
    paths = {kb.path_from_id("value") for kb in ours}
    for fcurve in _fcurves(key.animation_data):
        if fcurve.data_path in paths:
            _remove_fcurve(key.animation_data, fcurve)
    for kb in ours:
        kb.driver_remove("value")
        obj.shape_key_remove(kb)
    if len(key.key_blocks) <= 1:
        obj.shape_key_clear()
    return len(ours)


def _add_keys(obj, part: slice, keys) -> list:
    """One relative shape key per LiveKey that moves a vertex of `obj` (rows `part` of its
    world-space offsets, mapped into the object's local space). [(shape key, key index)]."""
    to_local = np.linalg.inv(matrix_to_numpy(obj.matrix_world)[:3, :3]).T
    local = [(i, np.asarray(k.offsets, dtype=np.float64)[part] @ to_local) for i, k in enumerate(keys)]
    local = [(i, d) for i, d in local if np.any(np.abs(d) > 1e-12)]
    if not local:
        return []
    if obj.data.shape_keys is None:
        obj.shape_key_add(name="Basis", from_mix=False)
    basis = obj.data.shape_keys.reference_key
    rest = np.empty(len(obj.data.vertices) * 3, dtype=np.float64)
    basis.data.foreach_get("co", rest)
    made = []
    for i, offsets in local:
        kb = obj.shape_key_add(name=PREFIX + keys[i].name, from_mix=False)
        kb.relative_key = basis
        kb.slider_min, kb.slider_max = -SLIDER_RANGE, SLIDER_RANGE
        kb.data.foreach_set("co", (rest.reshape(-1, 3) + offsets).ravel())
        kb.value = 0.0
        made.append((kb, i))
    return made


def _check_rows(mesh_set, keys) -> None:
    for key in keys:
        if len(key.offsets) != len(mesh_set.vertices):
            raise BonesmithError(f"The correctives have {len(key.offsets)} vertices, the meshes "
                                 f"{len(mesh_set.vertices)}: learn them again for these meshes")


def write_live_keys(meshes, mesh_set, armature, keys, names) -> list:
    """Shape keys driven by bone rotations: per LiveKey a relative key on every mesh it
    moves, whose value is a simple-expression driver (no Python per frame) on the bone's
    local quaternion (LOCAL_SPACE: constraints count). Replaces an earlier bake.
    Returns the new shape keys."""
    _check_rows(mesh_set, keys)
    keys = [bake.bounded_key(key) for key in keys]
    made = []
    for k, obj in enumerate(meshes):
        remove_correctives(obj)
        for kb, i in _add_keys(obj, mesh_set.object_slice(k), keys):
            _drive(kb, armature, names[keys[i].joint], keys[i].coeffs)
            made.append(kb)
    return made


def _drive(kb, armature, bone: str, coeffs) -> None:
    fcurve = kb.driver_add("value")
    fcurve.keyframe_points.clear()  # no mapping curve: the key value is the driver's value
    driver = fcurve.driver
    driver.type = 'SCRIPTED'
    for name, channel in DRIVER_CHANNELS:
        variable = driver.variables.new()
        variable.name, variable.type = name, 'TRANSFORMS'
        target = variable.targets[0]
        target.id = armature
        target.bone_target = bone
        target.transform_type = channel
        target.rotation_mode = 'QUATERNION'
        target.transform_space = 'LOCAL_SPACE'
    driver.expression = driver_expression(coeffs)
    if not driver.is_simple_expression:
        raise BonesmithError(f"The driver of '{kb.name}' ({driver.expression}) is not a simple "
                             "expression; please report this")


def pose_quaternions(armature, names, frames) -> np.ndarray:
    """(F,J,4) bone-local quaternions (w,x,y,z) of the evaluated pose at each frame (the
    scene's frame is restored)."""
    scene = bpy.context.scene
    rest = bone_rest_rotations(armature, names)
    poses = []
    with _kept_frame(scene):
        for frame in frames:
            scene.frame_set(int(frame))
            poses.append(read_pose(armature, names))
    return correctives.local_quaternions(np.array(poses).reshape(-1, len(names), 3, 3), rest)


def bake_keyed(meshes, mesh_set, armature, keys, names, frame_start: int, frame_end: int) -> list:
    """The live keys' values computed in numpy from the bones' rotation on every frame of
    [frame_start, frame_end] and keyframed (no drivers), so FBX and glTF carry them.
    Replaces an earlier bake. Returns the new shape keys."""
    _check_rows(mesh_set, keys)
    frames = np.arange(int(frame_start), int(frame_end) + 1)
    if not len(frames):
        raise BonesmithError(f"The frame range {frame_start}–{frame_end} is empty")
    keys = [bake.bounded_key(key) for key in keys]   # the same keys as a live bake
    values = correctives.key_values(keys, pose_quaternions(armature, names, frames))
    made = []
    for k, obj in enumerate(meshes):
        remove_correctives(obj)
        for kb, i in _add_keys(obj, mesh_set.object_slice(k), keys):
            fcurve = _ensure_fcurve(obj.data.shape_keys, kb.path_from_id("value"), f"{obj.name} correctives")
            points = fcurve.keyframe_points
            points.clear()
            points.add(len(frames))
            points.foreach_set("co", np.column_stack([frames, values[:, i]]).astype(np.float32).ravel())
            for point in points:
                point.interpolation = 'LINEAR'
            fcurve.update()
            made.append(kb)
    return made


# -- the non-destructive bake's copies ------------------------------------------------------------

def is_lbs_copy(obj) -> bool:
    return COPY_PROPERTY in obj.keys()


def lbs_copy(obj, armature):
    """"<name>_LBS": a copy of mesh `obj` (its mesh data, vertex groups, materials, parent)
    with only a plain Armature modifier (no Preserve Volume, no other deformers) and none of
    its shape keys, so copy + baked correctives reproduce the original's deformation.
    An existing copy is refreshed from the original (object kept, new mesh data)."""
    name = obj.name + LBS_SUFFIX
    copy = bpy.data.objects.get(name)
    if copy is not None and copy.type != 'MESH':
        raise BonesmithError(f"'{name}' exists and is not a mesh: rename it to bake the correctives")
    data = obj.data.copy()
    data.name = name
    old = None
    if copy is None:
        copy = obj.copy()
        copy.name = name
        for collection in obj.users_collection:
            collection.objects.link(copy)
    else:
        old = copy.data
        for attr in ("parent", "parent_type", "parent_bone", "matrix_parent_inverse", "matrix_basis"):
            setattr(copy, attr, getattr(obj, attr))
    copy.data = data
    copy[COPY_PROPERTY] = obj.name
    if old is not None and old.users == 0:
        bpy.data.meshes.remove(old)
        data.name = name     # the name the old data held
    if data.shape_keys is not None:
        copy.shape_key_clear()   # the ground truth included them: the bake replaces them
    copy.modifiers.clear()
    modifier = copy.modifiers.new("Armature", 'ARMATURE')
    modifier.object = armature
    modifier.use_vertex_groups = True
    modifier.use_bone_envelopes = False
    modifier.use_deform_preserve_volume = False
    return copy


# -- the routes the operators and the command line share ----------------------------------------------

def fit_bones(armature, names, heads) -> None:
    """Move the heads of bones `names` to `heads` (J,3, world space); their tails follow
    (core.correctives.bake.tails_from_heads). Fit Armature and a family's new body."""
    old_heads, old_tails = bone_ends(armature, names)
    tails = bake.tails_from_heads(heads, old_heads, old_tails, bone_parents(armature, names))
    fit_armature(armature, heads, tails, names)


def bake_body(meshes, mesh_set, armature, model, names, *, mode: str = 'LIVE', max_influences: int = 0,
              frames=None) -> list:
    """A body's model into `meshes`: its refined weights, then (mode LIVE) shape keys
    driven by the bones or (KEYED) keyed on `frames` (first, last), or (WEIGHTS) none.
    Returns the shape keys made."""
    write_refined_weights(meshes, mesh_set, model.weights, names, max_influences=max_influences)
    if mode == 'WEIGHTS':
        return []
    keys = model.live_keys(bone_rest_rotations(armature, names), names=names)
    if mode == 'LIVE':
        return write_live_keys(meshes, mesh_set, armature, keys, names)
    return bake_keyed(meshes, mesh_set, armature, keys, names, *frames)


def apply_family(armature, meshes, model, *, body_joints: bool = False):
    """A family model on a new body of the family, rigged to `armature`: its bones moved to
    the joints the model predicts for the body (body_joints: kept where they are), its
    refined weights and driven shape keys written into `meshes`. Returns (the body's model,
    the bones' own heads (J,3), the shape keys made)."""
    names = model.names
    require_bones(armature, names, of="of the family", fix="it needs the family's skeleton")
    own = bone_ends(armature, names)[0]
    mesh_set = combine_rest(meshes)
    body = model.for_body(mesh_set.vertices, own if body_joints else None)
    fit_bones(armature, names, body.joints)
    keys = bake_body(meshes, mesh_set, armature, body, names)
    return body, own, keys
