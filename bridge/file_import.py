# SPDX-License-Identifier: GPL-3.0-or-later
"""Bring meshes from files into the current scene."""
from __future__ import annotations

from pathlib import Path

import bpy
import numpy as np

from ..core import records
from ..core.errors import BonesmithError, InvalidMeshError
from .mesh import new_mesh_object

IMPORT_FORMATS = (".obj", ".ply", ".fbx", ".glb", ".gltf", ".blend", ".npz")


def _operator_import(path: Path) -> None:
    suffix = path.suffix.lower()
    if suffix == ".obj":
        bpy.ops.wm.obj_import(filepath=str(path))
    elif suffix == ".ply":
        bpy.ops.wm.ply_import(filepath=str(path))
    elif suffix == ".fbx":
        bpy.ops.import_scene.fbx(filepath=str(path))
    elif suffix in (".glb", ".gltf"):
        bpy.ops.import_scene.gltf(filepath=str(path))
    else:  # pragma: no cover - guarded by import_file
        raise AssertionError(suffix)


def append_blend_objects(path: Path, collection) -> list:
    """Append every object of a .blend file and link it into `collection`. World matrices
    are recomputed from the parents: a file written by a script may store stale ones (a
    mesh parented to an armature scaled 0.01 would otherwise be read 100x too big)."""
    with bpy.data.libraries.load(str(path), link=False) as (source, target):
        target.objects = list(source.objects)
    objects = [obj for obj in target.objects if obj is not None]
    for obj in objects:
        collection.objects.link(obj)
    bpy.context.view_layer.update()
    return objects


def bone_widgets(objects) -> set:
    """The objects that armatures among `objects` use as bone shapes: the glTF importer's
    icosphere (in its hidden `glTF_not_exported` collection), Rigify's WGT- objects. They
    are display helpers, never the character."""
    return {bone.custom_shape for obj in objects if obj.type == 'ARMATURE' and obj.pose is not None
            for bone in obj.pose.bones if bone.custom_shape is not None}


def import_objects(path, collection) -> list:
    """Every object a .blend .obj .ply .fbx .glb or .gltf file brings into the session: a
    .blend's objects are appended and linked into `collection`, the other formats go
    through Blender's importers (into the active collection). BonesmithError when the file
    cannot be read."""
    path = Path(path)
    try:
        if path.suffix.lower() == ".blend":
            return append_blend_objects(path, collection)
        before = set(bpy.data.objects)
        _operator_import(path)
    except (RuntimeError, OSError) as error:
        raise BonesmithError(f"Could not read {path.name}: {error}") from None
    return [obj for obj in bpy.data.objects if obj not in before]


def load_npz(path, collection=None) -> bpy.types.Object:
    """A Bonesmith record (.npz with `verts` (V,3) and `faces` (F,3)) as a new mesh object."""
    path = Path(path)
    record = records.read(path, records.MESH, needed_for="a mesh record")
    vertices, faces = record["verts"], record["faces"]
    if vertices.ndim != 2 or vertices.shape[1] != 3:
        raise InvalidMeshError(f"{path.name}: 'verts' must have shape (V, 3), not {vertices.shape}")
    try:
        return new_mesh_object(path.stem, vertices, faces, collection)
    except ValueError as error:
        raise InvalidMeshError(f"{path.name}: {error}") from None


def load_rigged_npz(path, collection=None):
    """A Bonesmith record with a rig (verts, faces, joints, joint_tails, joint_names,
    parents, weights; rest_mats optional, for the bones' rolls) as a mesh weighted to a new
    armature by a plain Armature modifier. Returns (armature, mesh object)."""
    from ..core.skeleton import Skeleton
    from .armature import attach_mesh, skeleton_to_armature
    from .weights import write_weights

    path = Path(path)
    record = records.read(path, records.RIG + ("joint_tails", "joint_names"), ("rest_mats",),
                          needed_for="a rigged record")
    obj = load_npz(path, collection)
    names = [str(n) for n in record["joint_names"]]
    up = record["rest_mats"][:, :3, 2] if "rest_mats" in record else None
    skeleton = Skeleton(record["joints"], record["parents"], record["joint_tails"], names, up=up)
    armature = skeleton_to_armature(skeleton, name=f"{path.stem}_rig", collection=collection)
    write_weights(obj, np.asarray(record["weights"], dtype=np.float64), names)
    attach_mesh(obj, armature)
    return armature, obj


def import_file(path, collection=None) -> list:
    """Import a mesh file into the current scene and return its mesh objects.

    Formats: .obj .ply .fbx .glb .gltf, .blend (appends all its objects) and .npz records.
    Raises BonesmithError when the file is missing, unsupported, unreadable or has no mesh.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in IMPORT_FORMATS:
        raise BonesmithError(f"Cannot import {path.name}: use one of {', '.join(IMPORT_FORMATS)}")
    if not path.is_file():
        raise BonesmithError(f"File not found: {path}")
    if collection is None:
        collection = bpy.context.scene.collection

    if suffix == ".npz":
        return [load_npz(path, collection)]
    objects = import_objects(path, collection)
    widgets = bone_widgets(objects)
    meshes = [obj for obj in objects if obj.type == 'MESH' and obj not in widgets]
    if not meshes:
        raise InvalidMeshError(f"{path.name} contains no mesh object")
    return meshes


def strip_rigs(meshes) -> None:
    """Detach meshes from armatures they came with (keeping their world placement) and
    delete those armature objects, so the meshes can be rigged afresh."""
    from .armature import remove_armature

    armatures = set()
    for obj in meshes:
        for modifier in [m for m in obj.modifiers if m.type == 'ARMATURE']:
            if modifier.object is not None:
                armatures.add(modifier.object)
            obj.modifiers.remove(modifier)
        if obj.parent is not None and obj.parent.type == 'ARMATURE':
            armatures.add(obj.parent)
            world = obj.matrix_world.copy()
            obj.parent = None
            obj.matrix_world = world
    for armature in armatures:
        if any(child.type == 'MESH' and child not in meshes for child in armature.children):
            continue
        remove_armature(armature)
