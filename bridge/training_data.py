# SPDX-License-Identifier: GPL-3.0-or-later
"""Rigged characters from Blender data or files -> training dicts for Auto Skin.

A character is every mesh deformed by one armature, in world space at rest:

    {"vertices": (V,3) float64, "faces": (F,3) int64, "joints": (J,3), "parents": (J,),
     "tails": (J,3), "names": [J bone names], "weights": (V,J) rows summing to 1 (0 where
     the artist left a vertex unweighted), "unweighted": (V,) bool, "family": str}

Only deforming bones are columns. `core.records.write` writes one as a Bonesmith .npz record
(the ../shared/data key names: verts, faces, joints, joint_tails, joint_names, parents,
weights, unweighted) that `python -m bonesmith train-skin` reads.
"""
from __future__ import annotations

from pathlib import Path

import bpy

from ..core.errors import BonesmithError
from .file_import import import_objects
from .selection import rig_meshes
from .armature import deform_bones
from .mesh import combine_rest
from .weights import read_weights_combined

RIGGED_FORMATS = (".blend", ".fbx", ".glb", ".gltf")


def character_from_objects(armature, meshes=None, *, family: str = "") -> dict:
    """The training dict of `armature` and `meshes` (default: every mesh it deforms)."""
    meshes = rig_meshes(armature) if meshes is None else list(meshes)
    if not meshes:
        raise BonesmithError(f"The armature '{armature.name}' deforms no mesh")
    joints, parents, tails, names = deform_bones(armature)
    mesh_set = combine_rest(meshes)
    weights = read_weights_combined(meshes, names)
    total = weights.sum(axis=1)
    unweighted = total <= 1e-12
    weights[~unweighted] /= total[~unweighted, None]
    return dict(vertices=mesh_set.vertices, faces=mesh_set.faces, joints=joints, parents=parents,
                tails=tails, names=names, weights=weights, unweighted=unweighted,
                family=family or armature.name, objects=[m.name for m in meshes])


_DATA_KINDS = ("objects", "meshes", "armatures", "materials", "images", "actions",
               "textures", "node_groups", "collections", "cameras", "lights", "curves")


def load_rigged_file(path) -> list:
    """Every armature with deforming bones in a .blend/.fbx/.glb/.gltf file, with the meshes
    it deforms, as training dicts (family = the file's stem). What the import added to
    the Blender session is removed again. Raises BonesmithError for unreadable files or
    files without a rigged mesh."""
    path = Path(path)
    if path.suffix.lower() not in RIGGED_FORMATS:
        raise BonesmithError(f"Cannot read rigged characters from {path.name}: use one of "
                             f"{', '.join(RIGGED_FORMATS)}")
    if not path.is_file():
        raise BonesmithError(f"File not found: {path}")
    before = {kind: set(getattr(bpy.data, kind)) for kind in _DATA_KINDS}
    collection = bpy.data.collections.new("Bonesmith training import")
    bpy.context.scene.collection.children.link(collection)
    try:
        objects = import_objects(path, collection)
        bpy.context.view_layer.update()
        characters = []
        for armature in [obj for obj in objects if obj.type == 'ARMATURE']:
            meshes = [m for m in rig_meshes(armature) if m in objects and len(m.data.vertices)]
            if not meshes or not any(b.use_deform for b in armature.data.bones):
                continue
            character = character_from_objects(armature, meshes, family=path.stem)
            if character["unweighted"].all():
                continue
            characters.append(character)
    finally:
        for kind in _DATA_KINDS:
            blocks = getattr(bpy.data, kind)
            for block in [b for b in blocks if b not in before[kind]]:
                try:
                    blocks.remove(block)
                except (ReferenceError, RuntimeError):
                    pass
    if not characters:
        raise BonesmithError(f"{path.name} has no mesh weighted to an armature's deforming bones")
    return characters
