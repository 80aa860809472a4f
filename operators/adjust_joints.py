# SPDX-License-Identifier: GPL-3.0-or-later
"""Adjust Joints / Rebuild / Done: a humanoid's landmarks as markers the user drags, and
the rig rebuilt around the markers that were moved (docs/auto_skeleton.md#markers).

Adjust Joints shows the landmarks of an armature Auto Skeleton built as Empties
(bridge/markers.py). Rebuild sends the markers the user moved to Auto Skeleton, gives the
armature the new bones in place (the meshes stay rigged), weights the meshes again when
Bonesmith had skinned them (as Auto Rig), and puts the other markers on the new landmarks.
Done removes the markers.
"""
from __future__ import annotations

from dataclasses import dataclass

import bpy
import numpy as np

from .. import preferences
from ..bridge import armature as bridge_armature
from ..bridge import markers as bridge_markers
from ..bridge import mesh as bridge_mesh
from ..bridge import skeleton as bridge_skeleton
from ..bridge import skin as bridge_skin
from ..bridge import weights as bridge_weights
from ..bridge.mesh import MeshSet
from ..bridge.selection import meshes_again
from ..core.errors import BonesmithError
from .base import BonesmithOperator, to_object_mode

NOT_BUILT = ("Select an armature that Auto Skeleton or Auto Rig built (or one of its meshes): "
             "its joints can be adjusted with markers")


def target(context):
    """(armature, settings) of the armature Auto Skeleton built that the active object
    belongs to; BonesmithError when there is none or it is no humanoid."""
    armature = bridge_markers.built_armature(context.active_object)
    if armature is None:
        raise BonesmithError(NOT_BUILT)
    settings = bridge_markers.rig_settings(armature)
    if not settings["landmarks"]:
        raise BonesmithError(f"Markers need a humanoid: '{armature.name}' was not recognised as one "
                             "(two legs, two arms and a head), so it has no joints to adjust")
    return armature, settings


class BONESMITH_OT_adjust_joints(BonesmithOperator, bpy.types.Operator):
    """Show the humanoid's joints (chin, shoulders, elbows, wrists, hips, knees, ankles) as
    markers to drag; Rebuild then moves the joints to them"""
    bl_idname = "bonesmith.adjust_joints"
    bl_label = "Adjust Joints"

    def read(self, context):
        to_object_mode(context)
        return target(context)[0].name

    def apply(self, context, name, result):
        armature = bpy.data.objects[name]
        added = bridge_markers.show_markers(armature)
        shown = len(bridge_markers.markers(armature))
        self.report({'INFO'}, f"Adjust Joints: {shown} markers on '{name}' ({len(added)} new): "
                              "move the ones that are off, then Rebuild")
        return {'FINISHED'}


class BONESMITH_OT_hide_joints(BonesmithOperator, bpy.types.Operator):
    """Remove the joint markers (the rig stays as it is; moved markers are remembered for
    the next Rebuild)"""
    bl_idname = "bonesmith.hide_joints"
    bl_label = "Done"

    def read(self, context):
        to_object_mode(context)
        armature = bridge_markers.built_armature(context.active_object)
        if armature is None:
            raise BonesmithError(NOT_BUILT)
        return armature.name

    def apply(self, context, name, result):
        armature = bpy.data.objects[name]
        pending = bridge_markers.keep_moved(armature)
        removed = bridge_markers.remove_markers(armature)
        self.report({'INFO'}, f"Done: {removed} markers of '{name}' removed"
                              + (f"; moved, not rebuilt yet: {', '.join(pending)} (Rebuild applies them)"
                                 if pending else ""))
        return {'FINISHED'}


@dataclass
class RebuildInput:
    armature_name: str
    rig: bridge_skeleton.SkeletonInput     # the meshes as Auto Skeleton read them, armature's frame
    markers: dict                   # moved marker -> world position (sent to Auto Skeleton)
    moved: dict                     # moved marker -> armature-local position (remembered)
    detail: float
    naming: str
    vertex_counts: list
    rest: MeshSet | None = None     # the meshes for Auto Skin, when Bonesmith skinned them
    max_influences: int = 4
    model: object = None
    warning: str = ""

    @property
    def n_vertices(self) -> int:
        return self.rig.n_vertices


def read_input(context) -> RebuildInput:
    to_object_mode(context)
    armature, settings = target(context)
    if not armature.visible_get():          # its bones are rebuilt in Edit Mode
        raise BonesmithError(f"'{armature.name}' is hidden: show it, then Rebuild")
    context.view_layer.update()            # markers dragged by a script: their matrices now
    meshes = bridge_markers.rig_meshes(armature, settings)
    if not meshes:
        raise BonesmithError(f"'{armature.name}' deforms no mesh any more: nothing to rebuild its joints for")
    with bridge_markers.without_rig(armature, meshes):
        mesh_set = bridge_mesh.combine_objects(meshes, context.evaluated_depsgraph_get(), basis=True)
    A = bridge_mesh.matrix_to_numpy(armature.matrix_world)
    moved = bridge_markers.moved_markers(armature, settings)
    world = bridge_mesh.transform_points(A, np.array(list(moved.values()), dtype=np.float64))
    inp = RebuildInput(
        armature_name=armature.name,
        rig=bridge_skeleton.SkeletonInput(mesh_names=[obj.name for obj in meshes], active_name=meshes[0].name,
                                          vertices=mesh_set.vertices, faces=mesh_set.faces,
                                          world_to_local=np.linalg.inv(A)),
        markers=dict(zip(moved, world)), moved=moved, detail=settings["detail"], naming=settings["naming"],
        vertex_counts=[len(obj.data.vertices) for obj in meshes])
    if settings.get("skinned"):
        model, inp.warning = preferences.active_skin_model(context)
        inp.model = None if model is None else str(model)
        inp.rest, inp.max_influences = bridge_mesh.combine_rest(meshes), settings["max_influences"]
    return inp


def compute(inp: RebuildInput, progress):
    """(skeleton, weights or None), as Auto Rig computes them, with the markers."""
    share = 0.7 if inp.rest is not None else 1.0
    skeleton = bridge_skeleton.compute(inp.rig, detail=inp.detail, naming=inp.naming, markers=inp.markers,
                                       progress=lambda f, m="": progress(share * f, m))
    if not skeleton.info.get("humanoid"):
        raise BonesmithError("The mesh is no longer recognised as a humanoid (was it edited?): "
                             "run Auto Skeleton again")
    weights = None
    if inp.rest is not None:
        weights, _ = bridge_skin.predict(inp.rest.vertices, inp.rest.faces, skeleton.joints, skeleton.parents,
                                         skeleton.tails, model=inp.model, names=skeleton.names,
                                         max_influences=inp.max_influences,
                                         progress=lambda f, m="": progress(share + (1 - share) * f, m))
    return skeleton, weights


def apply(context, inp: RebuildInput, skeleton, weights) -> list:
    """The new bones into the armature (in place), the weights into the meshes, the
    markers onto the new landmarks. Returns the markers that followed (bridge_markers.after_rebuild)."""
    to_object_mode(context)
    armature = bpy.data.objects.get(inp.armature_name)
    if armature is None or bridge_markers.rig_settings(armature) is None:
        raise BonesmithError(f"The armature '{inp.armature_name}' was removed or renamed while Rebuild ran")
    meshes = meshes_again(inp.rig.mesh_names, "Rebuild", inp.vertex_counts)
    selected = [obj for obj in context.view_layer.objects if obj.select_get()]
    active = context.view_layer.objects.active
    if weights is not None:            # refused before the bones change
        bridge_weights.check_modifiers(meshes, skeleton.names)
    bridge_armature.replace_bones(armature, skeleton, inp.rig.world_to_local)
    if weights is not None:
        bridge_weights.write_weights_split(meshes, inp.rest, weights, skeleton.names)
    followed = bridge_markers.after_rebuild(armature, skeleton, inp.rig.world_to_local, inp.moved)
    for obj in context.view_layer.objects:       # replace_bones selected the armature alone
        obj.select_set(obj in selected)
    context.view_layer.objects.active = active
    context.view_layer.update()
    return followed


class BONESMITH_OT_rebuild_joints(BonesmithOperator, bpy.types.Operator):
    """Rebuild the skeleton with its joints at the markers you moved (the others follow),
    and weight the meshes again if Bonesmith skinned them"""
    bl_idname = "bonesmith.rebuild_joints"
    bl_label = "Rebuild"

    def read(self, context):
        return read_input(context)

    def computation(self, inp):
        return lambda progress: compute(inp, progress)

    def apply(self, context, inp, result):
        skeleton, weights = result
        followed = apply(context, inp, skeleton, weights)   # the module's apply()
        moved = ", ".join(inp.moved) or "none (the same rig again)"
        text = (f"Rebuild: {len(skeleton)} bones in '{inp.armature_name}', joints at the moved markers: {moved}"
                + (f"; followed: {', '.join(followed)}" if followed else "")
                + (f"; {len(weights)} vertices weighted again" if weights is not None else "")
                + f" ({self.seconds:.1f} s)")
        self.report_done(text, inp.warning)
        return {'FINISHED'}


classes = (BONESMITH_OT_adjust_joints, BONESMITH_OT_rebuild_joints, BONESMITH_OT_hide_joints)
