# SPDX-License-Identifier: GPL-3.0-or-later
"""Auto Skeleton: selected mesh object(s) -> new armature, meshes parented with an
Armature modifier. Small meshes (and every headless run) are rigged synchronously;
large ones in a background thread while Blender stays responsive (Esc cancels; see
base.BonesmithOperator)."""
from __future__ import annotations

from dataclasses import dataclass

import bpy
import numpy as np

from ..bridge import armature as bridge_armature
from ..bridge import markers as bridge_markers
from ..bridge import mesh as bridge_mesh
from ..core import skeleton as core_skeleton
from ..core.errors import BonesmithError
from . import options
from ..bridge.selection import meshes_again
from .base import BonesmithOperator, to_object_mode


@dataclass
class RigInput:
    """What the computation needs, read from Blender before it starts."""
    mesh_names: list
    active_name: str
    vertices: np.ndarray
    faces: np.ndarray
    world_to_local: np.ndarray  # the active mesh's inverse world matrix at read time

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


def read_input(context) -> RigInput:
    to_object_mode(context)
    meshes, active = selected_meshes(context)
    mesh_set = bridge_mesh.combine_objects(meshes, context.evaluated_depsgraph_get(), basis=True)
    return RigInput(
        mesh_names=[obj.name for obj in meshes],
        active_name=active.name,
        vertices=mesh_set.vertices,
        faces=mesh_set.faces,
        world_to_local=np.linalg.inv(bridge_mesh.matrix_to_numpy(active.matrix_world)),
    )


def build(context, rig_input: RigInput, skeleton, *, detail: float = 1.0, naming: str = "bonesmith"):
    """Create the armature; the meshes are looked up again (the user may have edited the
    scene while a background job ran). The armature remembers how it was built, for
    Adjust Joints (bridge/markers.py)."""
    to_object_mode(context)
    meshes = meshes_again(rig_input.mesh_names, "Auto Skeleton")
    active = bpy.data.objects[rig_input.active_name]
    armature = bridge_armature.build_rig(skeleton, meshes, active=active,
                                         world_to_local=rig_input.world_to_local)
    bridge_markers.remember_build(armature, skeleton, rig_input.mesh_names, detail=detail, naming=naming)
    return armature


def compute(rig_input: RigInput, detail: float, progress, naming: str = "bonesmith", markers=None):
    return core_skeleton.extract_skeleton(rig_input.vertices, rig_input.faces, detail=detail,
                                          naming=naming, progress=progress, markers=markers)


def naming_text(skeleton, naming: str) -> str:
    """What the report says about the names: ", Mixamo humanoid" or a note that a
    non-humanoid kept generic names."""
    if naming == "bonesmith":
        return ""
    if skeleton.info.get("naming") == naming:
        return f", humanoid with {naming.capitalize() if naming != 'rigify' else 'a Rigify metarig'} names"
    return f", not recognised as a humanoid: generic names kept ({naming.capitalize()} names need two legs, two arms and a head)"


class BONESMITH_OT_auto_skeleton(BonesmithOperator, bpy.types.Operator):
    """Build a skeleton inside the selected mesh(es) and rig them to it"""
    bl_idname = "bonesmith.auto_skeleton"
    bl_label = "Auto Skeleton"

    detail: options.DETAIL
    naming: options.NAMING

    def read(self, context):
        return read_input(context)

    def computation(self, rig_input):
        detail, naming = self.detail, self.naming
        return lambda progress: compute(rig_input, detail, progress, naming)

    def apply(self, context, rig_input, skeleton):
        armature = build(context, rig_input, skeleton, detail=self.detail, naming=self.naming)
        self.report({'INFO'}, f"Auto Skeleton: {len(armature.data.bones)} bones "
                              f"in '{armature.name}', {skeleton.facing_text}"
                              f"{naming_text(skeleton, self.naming)} ({self.seconds:.1f} s)")
        return {'FINISHED'}
