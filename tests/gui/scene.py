# SPDX-License-Identifier: GPL-3.0-or-later
"""Scenes for the GUI scenarios (tests/gui/scenarios.py, docs/gui_tests.md): characters
from tests/data, selection, operators run as a button runs them, and the checks on a rig
afterwards. bpy only; no input, no screenshots."""
from __future__ import annotations

import math
from pathlib import Path

import bpy
import numpy as np

from ui import CheckFailed, expect

DATA = Path(__file__).resolve().parents[2] / "tests" / "data"
SAMPLES = Path(__file__).resolve().parents[2] / "samples"    # the demo's sample character


def character(name="Character", record="quat_Male_Casual.npz", with_rig=False):
    """A mesh object from a record in tests/data or samples/ (Z up, metres), selected and
    active; with_rig: also its artist's armature (joints, tails, parents of the record)."""
    with np.load(DATA / record if (DATA / record).is_file() else SAMPLES / record) as data:
        verts, faces = data["verts"].astype(float), data["faces"].astype(int)
        rig = {k: data[k] for k in ("joints", "joint_tails", "joint_names", "parents") if k in data}
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata(verts.tolist(), [], faces.tolist())
    obj = bpy.data.objects.new(name, mesh)
    bpy.context.scene.collection.objects.link(obj)
    select([obj])
    if not with_rig:
        return obj
    arm = bpy.data.objects.new(f"{name}_rig", bpy.data.armatures.new(f"{name}_rig"))
    bpy.context.scene.collection.objects.link(arm)
    select([arm])
    with bpy.context.temp_override(active_object=arm, object=arm):
        bpy.ops.object.mode_set(mode='EDIT')
    names = [str(n) for n in rig["joint_names"]]
    bones = []
    for k, n in enumerate(names):
        bone = arm.data.edit_bones.new(n)
        bone.head = rig["joints"][k]
        bone.tail = rig["joint_tails"][k]
        bones.append(bone)
    for k, p in enumerate(rig["parents"]):
        if p >= 0:
            bones[k].parent = bones[p]
    with bpy.context.temp_override(active_object=arm, object=arm):
        bpy.ops.object.mode_set(mode='OBJECT')
    return obj, arm


def select(objects, active=None):
    for other in bpy.context.scene.objects:
        other.select_set(False)
    for obj in objects:
        obj.select_set(True)
    bpy.context.view_layer.objects.active = active or objects[-1]


def run(ui, idname, how='INVOKE_DEFAULT', **props):
    """An operator the way the sidebar's button runs it: invoked over the 3D View, with an
    undo step (EXEC_DEFAULT: as a file browser runs it once a path is chosen)."""
    category, name = idname.split(".")
    with ui.override():
        return getattr(getattr(bpy.ops, category), name)(how, True, **props)


def run_error(ui, idname, **props) -> str:
    """An operator expected to refuse: its error message."""
    try:
        result = run(ui, idname, **props)
    except RuntimeError as error:
        return str(error)
    raise CheckFailed(f"{idname} returned {result} instead of an error")


def snapshot():
    return dict(
        objects=sorted(o.name for o in bpy.data.objects),
        meshes=sorted(m.name for m in bpy.data.meshes),
        armatures=sorted(a.name for a in bpy.data.armatures),
        parents={o.name: o.parent.name if o.parent else None for o in bpy.data.objects},
        modifiers={o.name: [m.name for m in o.modifiers] for o in bpy.data.objects},
        groups={o.name: [g.name for g in o.vertex_groups] for o in bpy.data.objects if o.type == 'MESH'},
        selected=sorted(o.name for o in bpy.context.selected_objects),
    )


def armatures():
    return [o for o in bpy.data.objects if o.type == 'ARMATURE']


def world_vertices(obj):
    bpy.context.view_layer.update()
    depsgraph = bpy.context.evaluated_depsgraph_get()
    ev = obj.evaluated_get(depsgraph)
    mesh = ev.to_mesh()
    co = np.array([v.co[:] for v in mesh.vertices])
    ev.to_mesh_clear()
    M = np.array(obj.matrix_world)
    return co @ M[:3, :3].T + M[:3, 3]


def weights(obj):
    """(V, groups) weight matrix and the group names."""
    W = np.zeros((len(obj.data.vertices), len(obj.vertex_groups)))
    for v in obj.data.vertices:
        for g in v.groups:
            W[v.index, g.group] = g.weight
    return W, [g.name for g in obj.vertex_groups]


def check_rigged(mesh, armature, min_bones=10):
    """`mesh` is skinned to `armature`: modifier, every vertex weighted to its bones."""
    expect(len(armature.data.bones) >= min_bones, f"only {len(armature.data.bones)} bones")
    mods = [m for m in mesh.modifiers if m.type == 'ARMATURE']
    expect(len(mods) == 1 and mods[0].object == armature,
           f"{mesh.name}'s Armature modifiers: {[(m.name, m.object) for m in mods]}")
    W, groups = weights(mesh)
    bones = {b.name for b in armature.data.bones}
    expect(set(groups) <= bones, f"vertex groups that are no bones: {sorted(set(groups) - bones)[:5]}")
    expect((W.sum(1) > 0).all(), f"{int((W.sum(1) == 0).sum())} vertices without weights")


def check_mesh_follows(mesh, armature):
    """Rotate a bone: the vertices it carries follow; those of no bone in its subtree stay."""
    W, groups = weights(mesh)
    rest = world_vertices(mesh)
    height = np.ptp(rest[:, 2])
    bones = armature.data.bones
    # the bone with most vertices mainly its own, below the root
    candidates = [(int((W[:, groups.index(b.name)] > 0.5).sum()), b.name) for b in bones
                  if b.parent is not None and b.name in groups]
    count, name = max(candidates)
    expect(count >= 10, f"no bone carries 10 vertices (best: {name}, {count})")
    subtree = {name} | {c.name for c in bones[name].children_recursive}
    free = W[:, [groups.index(n) for n in subtree if n in groups]].sum(1) == 0
    carried = W[:, groups.index(name)] > 0.5
    pose_bone = armature.pose.bones[name]
    pose_bone.rotation_mode = 'XYZ'
    pose_bone.rotation_euler = (math.radians(60), 0.0, 0.0)
    try:
        moved = np.linalg.norm(world_vertices(mesh) - rest, axis=1)
    finally:
        pose_bone.rotation_euler = (0.0, 0.0, 0.0)
        bpy.context.view_layer.update()
    expect(moved[carried].mean() > 0.005 * height,
           f"rotating '{name}' moved its vertices only {moved[carried].mean():.5f} (height {height:.3f})")
    expect(free.any() and moved[free].max() < 1e-4 * height,
           f"rotating '{name}' moved vertices of other bones by up to {moved[free].max():.5f}")
    return name
