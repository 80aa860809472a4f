# SPDX-License-Identifier: GPL-3.0-or-later
"""Blender mesh objects <-> numpy arrays (world space, triangles)."""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field

import bpy
import numpy as np

from ..core.errors import BonesmithError, InvalidMeshError
from ..core.ground import ground_vertices
from ..core.meshprep import validate


def matrix_to_numpy(matrix) -> np.ndarray:
    """A mathutils 4x4 Matrix as a (4, 4) float64 array."""
    return np.array([list(row) for row in matrix], dtype=np.float64)


def transform_points(matrix: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Apply a (4, 4) affine matrix to (N, 3) points."""
    points = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    return points @ matrix[:3, :3].T + matrix[:3, 3]


def mesh_arrays(mesh: bpy.types.Mesh) -> tuple[np.ndarray, np.ndarray]:
    """Local vertex positions (V, 3) float64 and triangles (F, 3) int64 of a mesh data-block."""
    vertices = np.empty(len(mesh.vertices) * 3, dtype=np.float64)
    mesh.vertices.foreach_get("co", vertices)
    mesh.calc_loop_triangles()
    faces = np.empty(len(mesh.loop_triangles) * 3, dtype=np.int64)
    mesh.loop_triangles.foreach_get("vertices", faces)
    return vertices.reshape(-1, 3), faces.reshape(-1, 3)


def object_arrays(obj: bpy.types.Object, depsgraph=None, *, world: bool = True):
    """Vertices (V, 3) and triangles (F, 3) of a mesh object as the user sees it.

    Uses the depsgraph-evaluated mesh (modifiers, shape keys) and, with world=True,
    the object's world matrix. Creates no data-block.
    """
    if obj.type != 'MESH':
        raise TypeError(f"{obj.name!r} is a {obj.type.lower()}, not a mesh")
    if depsgraph is None:
        depsgraph = bpy.context.evaluated_depsgraph_get()
    evaluated = obj.evaluated_get(depsgraph)
    mesh = evaluated.to_mesh()
    try:
        vertices, faces = mesh_arrays(mesh)
    finally:
        evaluated.to_mesh_clear()
    if world:
        vertices = transform_points(matrix_to_numpy(evaluated.matrix_world), vertices)
    return vertices, faces


@dataclass
class MeshSet:
    """Several mesh objects as one vertex/triangle array set.

    Object k owns vertices[offsets[k]:offsets[k+1]] and faces[face_offsets[k]:face_offsets[k+1]].
    """
    vertices: np.ndarray
    faces: np.ndarray
    offsets: np.ndarray
    face_offsets: np.ndarray
    names: list = field(default_factory=list)

    def object_slice(self, k: int) -> slice:
        return slice(int(self.offsets[k]), int(self.offsets[k + 1]))

    def without(self, drop) -> "MeshSet":
        """The set less the objects with the indices in `drop`."""
        return stack_arrays((self.names[k], self.vertices[self.object_slice(k)],
                             self.faces[self.face_offsets[k]:self.face_offsets[k + 1]] - self.offsets[k])
                            for k in range(len(self.names)) if k not in drop)


def without_ground(objects, mesh_set: MeshSet):
    """(objects, mesh_set, names left out, plate) less the objects that are wholly a flat
    plate the others stand on (a ground plane selected with the character: core/ground.py),
    when some object is not one; plate: (V,) bool over the returned set, its vertices in a
    plate (one joined into an object). A mesh core refuses is left to core's own message."""
    try:
        plate = ground_vertices(*validate(mesh_set.vertices, mesh_set.faces))
    except InvalidMeshError:
        return list(objects), mesh_set, [], np.zeros(len(mesh_set.vertices), bool)
    ground = [k for k in range(len(objects))
              if mesh_set.offsets[k + 1] > mesh_set.offsets[k] and plate[mesh_set.object_slice(k)].all()]
    if len(ground) == len(objects):
        ground = []
    kept = [k for k in range(len(objects)) if k not in ground]
    plate = np.concatenate([plate[mesh_set.object_slice(k)] for k in kept]) if kept else plate
    return ([objects[k] for k in kept], mesh_set.without(ground), [objects[k].name for k in ground], plate)


def ground_note(names) -> str:
    """What a report says of the objects without_ground left out, or ""."""
    if not names:
        return ""
    listed = ", ".join(f"'{name}'" for name in names)
    return f"{listed} left out: a flat plate under the character (a ground) gets no rig"


def combine_objects(objects, depsgraph=None, *, world: bool = True, basis: bool = False) -> MeshSet:
    """World-space arrays of several mesh objects, faces re-indexed into one vertex array.
    basis=True: the shape the rig is built for (shape keys off, modifiers on), see
    basis_shape."""
    if depsgraph is None:
        depsgraph = bpy.context.evaluated_depsgraph_get()
    if not basis:
        return stack_arrays((obj.name, *object_arrays(obj, depsgraph, world=world)) for obj in objects)
    with basis_shape(objects):
        return stack_arrays((obj.name, *object_arrays(obj, depsgraph, world=world)) for obj in objects)


@contextmanager
def basis_shape(objects):
    """Inside, the objects evaluate to their Basis shape: every shape key but the
    reference one muted and "shape key lock" off; restored afterwards. A rig is built for
    the rest shape the weights are computed on (the mesh data, the Basis), not for a
    shape key the user happens to be showing (a skeleton fitted to a keyed smile or a
    stretched limb, and weights from the Basis, do not match)."""
    changed = []
    for obj in objects:
        keys = getattr(obj.data, "shape_keys", None)
        if keys is None:
            continue
        if obj.show_only_shape_key:
            changed.append((obj, "show_only_shape_key", True))
            obj.show_only_shape_key = False
        for block in keys.key_blocks:
            if block != keys.reference_key and not block.mute:
                changed.append((block, "mute", False))
                block.mute = True
    if changed:
        bpy.context.view_layer.update()
    try:
        yield
    finally:
        for owner, name, value in changed:
            setattr(owner, name, value)
        if changed:
            bpy.context.view_layer.update()


def stack_arrays(parts) -> MeshSet:
    """(name, vertices, faces) per object -> one MeshSet, faces re-indexed."""
    all_vertices, all_faces, names = [], [], []
    offsets, face_offsets = [0], [0]
    for name, vertices, faces in parts:
        all_vertices.append(vertices)
        all_faces.append(faces + offsets[-1])
        offsets.append(offsets[-1] + len(vertices))
        face_offsets.append(face_offsets[-1] + len(faces))
        names.append(name)
    return MeshSet(
        vertices=np.concatenate(all_vertices) if all_vertices else np.zeros((0, 3)),
        faces=np.concatenate(all_faces) if all_faces else np.zeros((0, 3), dtype=np.int64),
        offsets=np.asarray(offsets, dtype=np.int64),
        face_offsets=np.asarray(face_offsets, dtype=np.int64),
        names=names,
    )


def rest_arrays(obj: bpy.types.Object) -> tuple[np.ndarray, np.ndarray]:
    """World-space vertices (V,3) and triangles (F,3) of the object's own mesh data:
    one row per mesh vertex (modifiers and the current pose are ignored)."""
    if obj.type != 'MESH':
        raise BonesmithError(f"'{obj.name}' is a {obj.type.lower()}, not a mesh")
    vertices, faces = mesh_arrays(obj.data)
    return transform_points(matrix_to_numpy(obj.matrix_world), vertices), faces


def combine_rest(objects) -> MeshSet:
    """rest_arrays of several objects as one vertex/triangle set (see MeshSet)."""
    return stack_arrays((obj.name, *rest_arrays(obj)) for obj in objects)


def new_mesh(name: str, vertices, faces, *, validate: bool = False) -> bpy.types.Mesh:
    """A new mesh data-block from (V, 3) vertices and (F, k) polygon indices (k >= 3).

    validate=True lets Blender repair invalid geometry (it also zeroes NaN coordinates).
    """
    vertices = np.ascontiguousarray(vertices, dtype=np.float32).reshape(-1, 3)
    faces = np.ascontiguousarray(faces, dtype=np.int32)
    if faces.size == 0:
        faces = faces.reshape(0, 3)
    if faces.ndim != 2 or (len(faces) and faces.shape[1] < 3):
        raise ValueError(f"faces must be an (F, k>=3) index array, got shape {faces.shape}")
    if faces.size and (faces.min() < 0 or faces.max() >= len(vertices)):
        raise ValueError(f"face indices must lie in [0, {len(vertices)}), "
                         f"got [{faces.min()}, {faces.max()}]")
    mesh = bpy.data.meshes.new(name)
    mesh.vertices.add(len(vertices))
    mesh.vertices.foreach_set("co", vertices.ravel())
    corners = faces.shape[1]
    mesh.loops.add(len(faces) * corners)
    mesh.loops.foreach_set("vertex_index", faces.ravel())
    mesh.polygons.add(len(faces))
    mesh.polygons.foreach_set("loop_start", np.arange(0, len(faces) * corners, corners, dtype=np.int32))
    if validate:
        mesh.validate(verbose=False)
    mesh.update(calc_edges=True)
    return mesh


def new_mesh_object(name: str, vertices, faces, collection=None, *, validate: bool = False):
    """A new mesh object linked to `collection` (default: the scene's collection)."""
    obj = bpy.data.objects.new(name, new_mesh(name, vertices, faces, validate=validate))
    if collection is None:
        collection = bpy.context.scene.collection
    collection.objects.link(obj)
    return obj
