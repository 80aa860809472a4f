# SPDX-License-Identifier: GPL-3.0-or-later
"""Markers in the viewport: an armature Auto Skeleton built remembers how (custom property
RIG_PROPERTY), and Adjust Joints shows its humanoid landmarks as Empties the user drags
(docs/auto_skeleton.md#markers).

What is remembered, as JSON on the armature object (undo and .blend files keep it):
naming, detail, the mesh names, the landmarks and the markers the user moved (both in the
armature's local space, so that moving the whole rig keeps them valid), the rig's size,
and whether Bonesmith skinned the meshes (a rebuild then weights them again).
"""
from __future__ import annotations

import json
from contextlib import contextmanager

import bpy
import numpy as np
from mathutils import Matrix

from . import selection
from .mesh import matrix_to_numpy, transform_points

RIG_PROPERTY = "bonesmith_rig"        # on the armature object: how Auto Skeleton built it
MARKER_PROPERTY = "bonesmith_marker"  # on a marker Empty: the landmark it stands for
MARKER_PREFIX = "BS_"
MARKER_SIZE = 0.02   # a marker's radius, as a share of the rig's size (about its height)
# A marker farther than this share of the rig's size from where it was shown was moved
# (dragging by hand moves it much more; a rounding in a file does not)
MOVED_TOLERANCE = 1e-3


# -- what the armature remembers -------------------------------------------------------------

def remember_build(armature, skeleton, mesh_names, *, detail: float, naming: str, markers=None,
                   skinned: bool = False, max_influences: int = 4) -> None:
    """Store on `armature` how Auto Skeleton built it from `skeleton` (world space), with
    the `markers` it was given ({name: world point}: they count as moved)."""
    to_local = np.linalg.inv(matrix_to_numpy(armature.matrix_world))
    landmarks = skeleton.info.get("landmarks", {})
    local = transform_points(to_local, np.array(list(landmarks.values()), dtype=np.float64))
    ends = transform_points(to_local, np.vstack([skeleton.joints, skeleton.tails]))
    markers = markers if landmarks else {}     # a character that is no humanoid ignored them
    moved = transform_points(to_local, np.array(list((markers or {}).values()), dtype=np.float64))
    write_settings(armature, {
        "naming": naming, "detail": float(detail), "meshes": list(mesh_names),
        "landmarks": {name: p.tolist() for name, p in zip(landmarks, local)},
        "moved": {name: p.tolist() for name, p in zip(markers or {}, moved)},
        "size": float(np.ptp(ends, axis=0).max()) if len(ends) else 1.0,
        "skinned": bool(skinned), "max_influences": int(max_influences),
    })


def note_skinned(armature, max_influences: int) -> None:
    """Remember that Bonesmith weighted the meshes of `armature` (a rebuild weights them
    again); nothing for an armature Auto Skeleton did not build."""
    settings = rig_settings(armature)
    if settings is not None:
        settings.update(skinned=True, max_influences=int(max_influences))
        write_settings(armature, settings)


def rig_settings(armature) -> dict | None:
    """What remember_build stored on `armature`, or None."""
    if armature is None or RIG_PROPERTY not in armature:
        return None
    try:
        settings = json.loads(armature[RIG_PROPERTY])
    except (TypeError, ValueError):
        return None
    return settings if isinstance(settings, dict) and "landmarks" in settings else None


def write_settings(armature, settings: dict) -> None:
    armature[RIG_PROPERTY] = json.dumps(settings)


def built_armature(obj):
    """The armature Auto Skeleton built that `obj` belongs to (itself, a marker's parent,
    a rigged mesh's armature), or None."""
    for candidate in (obj, getattr(obj, "parent", None), selection.find_armature(obj)):
        if candidate is not None and candidate.type == 'ARMATURE' and rig_settings(candidate) is not None:
            return candidate
    return None


def rig_meshes(armature, settings: dict) -> list:
    """The meshes the armature deforms, in the order Auto Skeleton read them (meshes
    added or renamed since come last)."""
    order = {name: k for k, name in enumerate(settings.get("meshes", []))}
    meshes = selection.rig_meshes(armature)
    return sorted(meshes, key=lambda obj: (order.get(obj.name, len(order)), obj.name))


@contextmanager
def without_rig(armature, meshes):
    """Inside, the meshes evaluate without the Armature modifiers aimed at `armature`
    (restored afterwards): a rebuild reads the shape Auto Skeleton read, whatever the
    pose, exactly (a rest-pose deformation is off by rounding)."""
    changed = [m for obj in meshes for m in obj.modifiers
               if m.type == 'ARMATURE' and m.object == armature and m.show_viewport]
    for modifier in changed:
        modifier.show_viewport = False
    if changed:
        bpy.context.view_layer.update()
    try:
        yield
    finally:
        for modifier in changed:
            modifier.show_viewport = True
        if changed:
            bpy.context.view_layer.update()


# -- the marker Empties ----------------------------------------------------------------------

def markers(armature) -> dict:
    """landmark name -> its marker Empty, for the markers shown for `armature`."""
    return {obj[MARKER_PROPERTY]: obj for obj in armature.children if MARKER_PROPERTY in obj}


def show_markers(armature) -> list:
    """An Empty (sphere) per landmark, parented to `armature`, at the stored landmark;
    markers already shown stay where they are. Returns the new Empties."""
    settings = rig_settings(armature)
    shown = markers(armature)
    collection = armature.users_collection[0] if armature.users_collection else bpy.context.scene.collection
    added = []
    for name, point in settings["landmarks"].items():
        if name in shown:
            continue
        empty = bpy.data.objects.new(MARKER_PREFIX + name, None)
        empty.empty_display_type = 'SPHERE'
        empty.empty_display_size = MARKER_SIZE * settings["size"]   # armature units: it is its child
        empty.show_in_front = True
        empty[MARKER_PROPERTY] = name
        collection.objects.link(empty)
        empty.parent = armature
        empty.matrix_world = armature.matrix_world @ Matrix.Translation(tuple(map(float, point)))
        added.append(empty)
    return added


def remove_markers(armature) -> int:
    """Delete the marker Empties of `armature`; returns how many there were."""
    found = list(markers(armature).values())
    for empty in found:
        bpy.data.objects.remove(empty)
    return len(found)


def marker_points(armature) -> dict:
    """landmark name -> its marker's position in the armature's local space."""
    to_local = np.linalg.inv(matrix_to_numpy(armature.matrix_world))
    return {name: transform_points(to_local, np.array(empty.matrix_world.translation))[0]
            for name, empty in markers(armature).items()}


def moved_markers(armature, settings: dict) -> dict:
    """landmark name -> armature-local position of every marker the user moved: farther
    than MOVED_TOLERANCE from its landmark now, or moved before (remembered in
    settings["moved"]; a deleted marker keeps its remembered position)."""
    tolerance = MOVED_TOLERANCE * settings["size"]
    moved = {name: np.asarray(p, dtype=np.float64) for name, p in settings.get("moved", {}).items()}
    for name, point in marker_points(armature).items():
        shown = settings["landmarks"].get(name)
        if name in moved or (shown is not None and np.linalg.norm(point - shown) > tolerance):
            moved[name] = point
    return moved


def keep_moved(armature) -> list:
    """Remember the markers moved since the last rebuild (before they are removed), so
    that the next Rebuild still puts the joints there; returns their names."""
    settings = rig_settings(armature)
    if settings is None:
        return []
    moved = moved_markers(armature, settings)
    tolerance = MOVED_TOLERANCE * settings["size"]
    pending = [name for name, p in moved.items() if name not in settings["landmarks"]
               or np.linalg.norm(p - settings["landmarks"][name]) > tolerance]
    settings["moved"] = {name: p.tolist() for name, p in moved.items()}
    write_settings(armature, settings)
    return pending


def after_rebuild(armature, skeleton, world_to_local, moved: dict) -> list:
    """Store the rebuilt `skeleton`'s landmarks and the `moved` markers on `armature`, and
    put the markers that were not moved on the new landmarks. Returns the names of those
    markers that followed (moved by more than the tolerance: a mirrored partner...)."""
    settings = rig_settings(armature)
    landmarks = skeleton.info.get("landmarks", {})
    local = dict(zip(landmarks, transform_points(np.asarray(world_to_local),
                                                 np.array(list(landmarks.values()), dtype=np.float64))))
    followed = []
    tolerance = MOVED_TOLERANCE * settings["size"]
    for name, empty in markers(armature).items():
        if name in moved or name not in local:
            continue
        old = settings["landmarks"].get(name)
        if old is not None and np.linalg.norm(local[name] - old) > tolerance:
            followed.append(name)
        empty.matrix_world = armature.matrix_world @ Matrix.Translation(tuple(map(float, local[name])))
    settings["landmarks"] = {name: p.tolist() for name, p in local.items()}
    settings["moved"] = {name: np.asarray(p).tolist() for name, p in moved.items()}
    write_settings(armature, settings)
    return followed
