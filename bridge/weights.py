# SPDX-License-Identifier: GPL-3.0-or-later
"""Skin weights: (V, J) numpy arrays <-> vertex groups named after deforming bones.

Writes go through a bmesh deform layer (one pass over the vertices, no per-vertex
`VertexGroup.add` calls). Only the groups named after the given bones are touched: the
user's other vertex groups (masks, cloth pins...) keep their members and weights.

Rows follow the objects' own mesh data (mesh.combine_rest), so row i of a weight array is
vertex i of the mesh whatever modifiers the object has. The deforming bones the columns
follow are armature.deform_bones.
"""
from __future__ import annotations

import re

import bmesh
import bpy
import numpy as np

from ..core.errors import BonesmithError
from .mesh import MeshSet


# -- writing --------------------------------------------------------------------------------

def write_weights(obj: bpy.types.Object, weights, names, *, threshold: float = 0.0) -> list:
    """Put `weights` (V, J) into the vertex groups `names` (J) of mesh object `obj`.

    Groups that exist are emptied and refilled (their index, lock and order stay); missing
    ones are created. Weights <= threshold are left out. Other vertex groups are untouched.
    The object must not be in Edit Mode. Returns the vertex groups, in `names` order.
    """
    if obj.type != 'MESH':
        raise BonesmithError(f"'{obj.name}' is a {obj.type.lower()}, not a mesh")
    if obj.mode == 'EDIT':
        raise BonesmithError(f"'{obj.name}' is in Edit Mode: switch to Object Mode first")
    mesh = obj.data
    weights = np.asarray(weights, dtype=np.float64)
    names = [str(n) for n in names]
    if weights.ndim != 2 or weights.shape != (len(mesh.vertices), len(names)):
        raise ValueError(f"weights must have shape ({len(mesh.vertices)}, {len(names)}) for "
                         f"'{obj.name}', not {weights.shape}")
    if len(set(names)) != len(names):
        raise ValueError("bone names must be unique")
    if not np.isfinite(weights).all():
        raise ValueError("weights contain NaN or infinite values")

    groups = []
    for name in names:
        group = obj.vertex_groups.get(name)
        if group is None:
            group = obj.vertex_groups.new(name=name)
        groups.append(group)
    group_index = np.array([g.index for g in groups], dtype=np.int64)
    replaced = set(group_index.tolist())

    # Sparse rows: for vertex i, columns cols[start[i]:start[i+1]] with values vals[...].
    rows, cols = np.nonzero(weights > threshold)
    vals = weights[rows, cols].tolist()
    gids = group_index[cols].tolist()
    start = np.searchsorted(rows, np.arange(len(mesh.vertices) + 1)).tolist()

    bm = bmesh.new()
    try:
        bm.from_mesh(mesh)
        layer = bm.verts.layers.deform.verify()
        for i, vert in enumerate(bm.verts):
            dvert = vert[layer]
            if dvert:
                for key in [k for k in dvert.keys() if k in replaced]:
                    del dvert[key]
            for k in range(start[i], start[i + 1]):
                dvert[gids[k]] = vals[k]
        bm.to_mesh(mesh)
    finally:
        bm.free()
    mesh.update()
    return groups


COPYING = {'ARRAY': "an Array", 'SCREW': "a Screw"}   # modifiers that repeat the mesh's vertices


def check_modifiers(objects, names) -> None:
    """BonesmithError, before anything is written, when the weights of these bones on the
    objects' own vertices cannot deform what the objects show:
    - an Array or Screw modifier: the weights go on the one copy in the mesh data, and
      every copy the modifier makes moved like it (a tube arrayed four times: the top
      three copies followed the bottom one's bones);
    - a Mirror modifier mirroring vertex groups by name with bone names Blender cannot
      mirror: Mixamo's `mixamorig:LeftForeArm` keeps its name (bpy.utils.flip_name finds
      a side only at a name's start or end), so the mirrored half followed the left
      arm's bones and the right arm moved nothing. The other namings (.L, _l, a leading
      Left) mirror. A Mirror modifier that does not mirror vertex groups gives the
      mirrored half the same side's bones whatever the names."""
    problem = _copies(objects) or _unmirrored(objects, names)
    if problem:
        raise BonesmithError(problem)


def _copies(objects) -> str | None:
    """The message for an object with an Array or Screw modifier, or None."""
    for obj in objects:
        for m in obj.modifiers:
            if m.type in COPYING and m.show_viewport:
                return (f"'{obj.name}' has {COPYING[m.type]} modifier ('{m.name}'): skin weights go on the mesh's "
                        "own vertices, and every copy the modifier makes would move like them. Apply the "
                        f"modifier '{m.name}' first")
    return None


def _unmirrored(objects, names) -> str | None:
    """The message for a Mirror modifier whose mirrored half would follow the wrong side's
    bones, or None."""
    mirrors = [(obj.name, m) for obj in objects for m in obj.modifiers if m.type == 'MIRROR' and m.show_viewport]
    sided = [n for n in names if bpy.utils.flip_name(n) != n]
    plain = next((name for name, m in mirrors if not m.use_mirror_vertex_groups), None)
    if plain and sided:
        return (f"'{plain}' has a Mirror modifier that does not mirror vertex groups: the mirrored half would "
                f"follow the other side's bones ('{sided[0]}'). Turn on the modifier's Vertex Groups option, or "
                "apply it first")
    mirrored = [name for name, m in mirrors if m.use_mirror_vertex_groups]
    stuck = [n for n in names if re.search("left|right", n, re.IGNORECASE) and bpy.utils.flip_name(n) == n]
    if mirrored and stuck:
        return (f"'{mirrored[0]}' has a Mirror modifier, which mirrors vertex groups by their names, but Blender "
                f"cannot mirror bone names such as '{stuck[0]}' (Mixamo's): the mirrored half would follow the "
                "other side's bones. Apply the Mirror modifier first, or choose another Naming (Unreal, Unity, "
                "Rigify, Generic)")
    return None


def write_weights_split(objects, mesh_set: MeshSet, weights, names, **kw) -> None:
    """write_weights for every object of a MeshSet, from the rows computed on the whole set
    (check_modifiers first: nothing is written when it refuses)."""
    check_modifiers(objects, names)
    weights = np.asarray(weights)
    if len(weights) != len(mesh_set.vertices):
        raise ValueError(f"weights have {len(weights)} rows, the meshes {len(mesh_set.vertices)} vertices")
    for k, obj in enumerate(objects):
        write_weights(obj, weights[mesh_set.object_slice(k)], names, **kw)


# -- reading --------------------------------------------------------------------------------

def read_weights(obj: bpy.types.Object, names=None) -> tuple[np.ndarray, list]:
    """Vertex-group weights of `obj` as a (V, J) float64 array and its column names.

    names: the groups to read, in this order (a missing group gives a zero column);
    default every vertex group of the object.
    """
    if obj.type != 'MESH':
        raise BonesmithError(f"'{obj.name}' is a {obj.type.lower()}, not a mesh")
    names = [g.name for g in obj.vertex_groups] if names is None else [str(n) for n in names]
    column = {}
    for j, name in enumerate(names):
        group = obj.vertex_groups.get(name)
        if group is not None:
            column[group.index] = j
    mesh = obj.data
    weights = np.zeros((len(mesh.vertices), len(names)), dtype=np.float64)
    if not column:
        return weights, names
    rows, cols, vals = [], [], []
    bm = bmesh.new()
    try:
        bm.from_mesh(mesh)
        layer = bm.verts.layers.deform.active
        if layer is None:
            return weights, names
        for i, vert in enumerate(bm.verts):
            for key, value in vert[layer].items():
                j = column.get(key)
                if j is not None:
                    rows.append(i)
                    cols.append(j)
                    vals.append(value)
    finally:
        bm.free()
    weights[rows, cols] = vals
    return weights, names


def read_weights_combined(objects, names) -> np.ndarray:
    """read_weights of several objects stacked in MeshSet order."""
    parts = [read_weights(obj, names)[0] for obj in objects]
    return np.vstack(parts) if parts else np.zeros((0, len(names)))
