# SPDX-License-Identifier: GPL-3.0-or-later
"""The README picture of Rigify control rigs on creatures (docs/images/rigify_creatures.png):

    .venv/bin/python bench/rigify_picture.py

The horse, the bird and the fish of tests/data (CC0), each through Auto Skeleton with
naming "rigify" (a metarig, docs/auto_skeleton.md#rigify-metarig-for-any-character), Auto
Skin and Rigify's Generate Rig (bridge/rigify.py), as tests/test_rigify_creatures.py
does. Each panel shows the mesh as the generated rig deforms it, the rig's deforming
bones (DEF-*, orange) and its control shapes as Blender draws them (Rigify's widgets:
IK feet, torso, head, tail and wing controls; light blue). The horse's left front foot
is lifted by its IK control and the fish's tail curled by its master control, the meshes
following. numpy pictures (core/picture.py), three
panels of 300 pixels side by side.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "docs" / "images" / "rigify_creatures.png"
PANEL = 300                                   # pixels: three panels make a README-wide picture
CONTROL_COLOR = (0.35, 0.8, 1.0)
# (record, view azimuth and elevation in degrees: 90 looks at the left side, 0 from the front)
CREATURES = [("quat_Horse", 80.0, 8.0), ("quat_Bird", 70.0, 25.0), ("quat_Fish3", 75.0, 15.0)]
IK_LEGS = ("limbs.front_paw", "limbs.rear_paw", "limbs.paw", "limbs.arm")
# Rigify's secondary controls, left out to keep the picture readable
SECONDARY = ("tweak", "_fk", "_parent", "VIS_", "_ik_target", "_heel_ik")


def rigged(name):
    """(mesh object, metarig, generated rig) for a tests/data record: Auto Skeleton
    (naming "rigify"), Auto Skin, Generate Rig, in an empty scene."""
    import bpy
    from bonesmith.bridge import armature as bridge_armature
    from bonesmith.bridge import mesh as bridge_mesh
    from bonesmith.bridge import rigify as bridge_rigify
    from bonesmith.bridge import skin as bridge_skin
    from bonesmith.bridge import weights as bridge_weights
    from bonesmith.core.skeleton import extract_skeleton

    bpy.ops.wm.read_factory_settings(use_empty=True)
    with np.load(REPO / "tests" / "data" / f"{name}.npz") as d:
        V, F = d["verts"].astype(np.float64), d["faces"].astype(np.int64)
    obj = bridge_mesh.new_mesh_object(name, V, F)
    sk = extract_skeleton(V, F, naming="rigify")
    metarig = bridge_armature.build_rig(sk, [obj], name="metarig")
    weights, _ = bridge_skin.predict(V, F, sk.joints, sk.parents, sk.tails, names=sk.names)
    bridge_weights.write_weights_split([obj], bridge_mesh.combine_rest([obj]), weights, sk.names)
    return obj, metarig, bridge_rigify.generate_rig(metarig)


def lift_front_foot(metarig, rig, fraction=0.55):
    """Move the IK foot control of the foremost left leg up and forward by `fraction` of
    the leg's length (the control Rigify names after the leg's third bone, "leg_03_ik.L")."""
    import bpy
    from mathutils import Vector
    legs = [pb.name for pb in metarig.pose.bones if pb.rigify_type in IK_LEGS and pb.name.endswith(".L")]
    if not legs:
        return
    start = min(legs, key=lambda b: metarig.data.bones[b].head_local.y)     # the front faces -Y
    chain = [metarig.data.bones[start]]
    for _ in range(2):
        chain.append(chain[-1].children[0])
    base, side = chain[2].name.rsplit(".", 1)
    length = sum(b.length for b in chain)
    pb = rig.pose.bones[f"{base}_ik.{side}"]
    lifted = pb.matrix.copy()
    lifted.translation = lifted.translation + Vector((0.0, -0.3 * length, fraction * length))
    pb.matrix = lifted
    bpy.context.view_layer.update()


def curl_tail(rig, degrees=30.0):
    """Turn the tail's master control (Rigify's spines.basic_tail: "tail_01_master") about
    its own X axis: the tail's controls copy that rotation each, the tail curls."""
    import bpy
    from mathutils import Quaternion
    pb = next(pb for pb in rig.pose.bones if pb.name.startswith("tail") and pb.name.endswith("_master"))
    pb.rotation_mode = 'QUATERNION'
    pb.rotation_quaternion = Quaternion((1.0, 0.0, 0.0), math.radians(degrees))
    bpy.context.view_layer.update()


def control_shapes(rig):
    """World-space segments (starts, ends) of the main controls' custom shapes (Rigify's
    widgets), placed as Blender draws them: the pose matrix of the bone (or of its
    custom_shape_transform), then the shape's translation, rotation and scale (times the
    bone's length)."""
    from mathutils import Euler, Matrix
    starts, ends = [], []
    for pb in rig.pose.bones:
        bone = pb.bone
        shape = pb.custom_shape
        if (shape is None or shape.type != 'MESH' or bone.hide or pb.name == "root"
                or pb.name.startswith(("ORG-", "MCH-", "DEF-")) or any(s in pb.name for s in SECONDARY)
                or not any(c.is_visible for c in bone.collections)):
            continue
        size = bone.length if pb.use_custom_shape_bone_size else 1.0
        M = (rig.matrix_world @ (pb.custom_shape_transform or pb).matrix
             @ Matrix.Translation(pb.custom_shape_translation)
             @ Euler(pb.custom_shape_rotation_euler).to_matrix().to_4x4()
             @ Matrix.Diagonal((*(size * pb.custom_shape_scale_xyz), 1.0)))
        M = np.array(M)
        points = np.array([v.co[:] for v in shape.data.vertices])
        if not len(points) or not len(shape.data.edges):
            continue
        points = points @ M[:3, :3].T + M[:3, 3]
        edges = np.array([e.vertices[:] for e in shape.data.edges])
        starts.append(points[edges[:, 0]])
        ends.append(points[edges[:, 1]])
    empty = np.zeros((0, 3))
    return (np.vstack(starts), np.vstack(ends)) if starts else (empty, empty)


def view(azimuth, elevation):
    """Rotation taking world points to core.picture's front view (X right, Z up, depth +Y)
    of a camera `azimuth` degrees round from the front (-Y) towards the left side (+X),
    `elevation` degrees above."""
    a, e = math.radians(azimuth), math.radians(elevation)
    turn = np.array([[math.cos(a), math.sin(a), 0.0], [-math.sin(a), math.cos(a), 0.0], [0.0, 0.0, 1.0]])
    tilt = np.array([[1.0, 0.0, 0.0], [0.0, math.cos(e), -math.sin(e)], [0.0, math.sin(e), math.cos(e)]])
    return tilt @ turn


def panel(name, azimuth, elevation):
    """One creature's picture: (H, W, 3) floats, the longer side PANEL pixels."""
    from bonesmith.bridge.armature import bone_ends
    from bonesmith.bridge.mesh import combine_objects
    from bonesmith.core import picture

    obj, metarig, rig = rigged(name)
    if name == "quat_Horse":
        lift_front_foot(metarig, rig)
    if name == "quat_Fish3":
        curl_tail(rig)
    mesh = combine_objects([obj])                  # as the rig deforms it
    deform = [b.name for b in rig.data.bones if b.use_deform]
    heads, tails = bone_ends(rig, deform, posed=True)
    starts, ends = control_shapes(rig)
    R = view(azimuth, elevation).T
    V = mesh.vertices @ R
    everything = np.vstack([V, heads @ R, tails @ R, starts @ R, ends @ R])
    return picture.paint_front_view(V, mesh.faces, (heads @ R, tails @ R), everything, PANEL,
                                    lines=[(starts @ R, ends @ R, CONTROL_COLOR)])


def side_by_side(images, gap=6):
    """The panels in a row, centred vertically on the background."""
    from bonesmith.core.picture import BACKGROUND
    height = max(im.shape[0] for im in images)
    width = sum(im.shape[1] for im in images) + gap * (len(images) - 1)
    out = np.empty((height, width, 3))
    out[:] = BACKGROUND
    x = 0
    for im in images:
        y = (height - im.shape[0]) // 2
        out[y:y + im.shape[0], x:x + im.shape[1]] = im
        x += im.shape[1] + gap
    return out


def main(argv=None) -> int:
    from bonesmith.core import picture

    images = [panel(*creature) for creature in CREATURES]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    picture.write_png(OUT, picture.to_bytes(side_by_side(images)))
    print("wrote", OUT.relative_to(REPO))
    return 0


if __name__ == "__main__":
    sys.exit(main())
