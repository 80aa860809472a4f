# SPDX-License-Identifier: GPL-3.0-or-later
"""Auto Skeleton as a service: read the meshes into arrays, compute the skeleton through
core, build the armature and rig the meshes to it. The operators (Auto Skeleton, Auto Rig,
Rebuild) and the command line all call it; the options are arguments, nothing here reads
the UI. The method is in docs/auto_skeleton.md."""
from __future__ import annotations

from dataclasses import dataclass, field

import bpy
import numpy as np

from ..core import skeleton as core_skeleton
from ..core.errors import BonesmithError
from . import armature as bridge_armature
from . import markers as bridge_markers
from . import mesh as bridge_mesh
from .selection import meshes_again


@dataclass
class SkeletonInput:
    """What the computation needs, read from Blender before it starts."""
    mesh_names: list
    active_name: str
    vertices: np.ndarray
    faces: np.ndarray
    world_to_local: np.ndarray  # the active mesh's inverse world matrix at read time
    left_out: list = field(default_factory=list)   # selected ground plates (bridge.mesh.without_ground)

    @property
    def n_vertices(self) -> int:
        return len(self.vertices)


def selected_meshes(context):
    """(meshes, active mesh) of the selection; BonesmithError when there is none."""
    selected = list(context.selected_objects)
    if not selected:
        raise BonesmithError("Nothing is selected: select the mesh object(s) to rig")
    meshes = [obj for obj in selected if obj.type == 'MESH']
    if not meshes:
        listed = ", ".join(f"'{obj.name}' ({obj.type.lower()})" for obj in selected[:3])
        more = f" and {len(selected) - 3} more" if len(selected) > 3 else ""
        # (Auto Rig reads its selection here too: the message names neither operator)
        raise BonesmithError(f"Rigging needs a mesh object, but the selection is {listed}{more}")
    active = context.active_object if context.active_object in meshes else meshes[0]
    return meshes, active


def read(meshes, active=None, depsgraph=None) -> SkeletonInput:
    """SkeletonInput of `meshes` (evaluated by `depsgraph` when given, shape keys at their
    basis, world space), less a ground plane selected with them; the armature will be
    placed in `active`'s frame."""
    meshes, mesh_set, left_out, _ = bridge_mesh.without_ground(
        meshes, bridge_mesh.combine_objects(meshes, depsgraph, basis=True))
    active = active if active in meshes else meshes[0]
    return SkeletonInput(
        mesh_names=[obj.name for obj in meshes], active_name=active.name,
        vertices=mesh_set.vertices, faces=mesh_set.faces,
        world_to_local=np.linalg.inv(bridge_mesh.matrix_to_numpy(active.matrix_world)), left_out=left_out)


def compute(inp: SkeletonInput, *, detail: float = 1.0, naming: str = "bonesmith", markers=None,
            progress=None):
    """core.skeleton.extract_skeleton of the input (`markers`: {landmark: world point})."""
    return core_skeleton.extract_skeleton(inp.vertices, inp.faces, detail=detail, naming=naming,
                                          progress=progress, markers=markers)


def build(inp: SkeletonInput, skeleton, *, detail: float = 1.0, naming: str = "bonesmith", markers=None,
          label: str = "Auto Skeleton"):
    """Create the armature and rig the meshes to it (Object Mode: the caller leaves any
    other mode first). The meshes are looked up again (the user may have edited the scene
    while a background job ran). The armature remembers how it was built, for Adjust
    Joints (bridge/markers.py)."""
    meshes = meshes_again(inp.mesh_names, label)
    active = bpy.data.objects[inp.active_name]
    armature = bridge_armature.build_rig(skeleton, meshes, active=active, world_to_local=inp.world_to_local)
    bridge_markers.remember_build(armature, skeleton, inp.mesh_names, detail=detail, naming=naming,
                                  markers=markers)
    return armature


def naming_note(skeleton, naming: str) -> str:
    """What a report adds about the names: "humanoid with Mixamo names", a note that a
    character not recognised as a humanoid kept generic names or had its markers ignored,
    or "" (generic names asked for, no markers). Any other character gets a creature's
    Rigify metarig: the note names its rig types (rigify_note)."""
    named, ignored = naming != "bonesmith", bool(skeleton.info.get("markers_ignored"))
    title = "a Rigify metarig" if naming == "rigify" else f"{naming.capitalize()} names"
    if named and skeleton.info.get("naming") == naming:
        return f"humanoid with {title}"
    creature = "rigify" in skeleton.info and naming == "rigify"
    if creature and not ignored:
        return rigify_note(skeleton)
    lost = ([rigify_note(skeleton)] if creature else [f"generic names kept, not {title}"] if named else []) + \
        (["the markers ignored"] if ignored else [])
    if not lost:
        return ""
    return "not recognised as a humanoid (two legs, two arms and a head): " + "; ".join(lost)


def rigify_note(skeleton) -> str:
    """A creature metarig's note: the Rigify types of its chains, most used first
    ("a Rigify metarig for a non-humanoid: limbs.rear_paw x2, spines.basic_tail ...")."""
    summary = skeleton.info["rigify"]["summary"]
    types = sorted(summary.items(), key=lambda item: (-item[1], item[0]))
    listed = ", ".join(f"{t} x{n}" if n > 1 else t for t, n in types)
    return f"a Rigify metarig for a non-humanoid: {listed}"
