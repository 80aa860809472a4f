# SPDX-License-Identifier: GPL-3.0-or-later
"""Posing armatures from scripts: save and restore a pose, rotate bones about world axes,
find limb bones by role. Used by the demo, the several-poses picture and the correctives'
ground truth."""
from __future__ import annotations

import re
from contextlib import contextmanager

import bpy
import numpy as np
from mathutils import Matrix, Vector


AXES = {"X": (1.0, 0.0, 0.0), "Y": (0.0, 1.0, 0.0), "Z": (0.0, 0.0, 1.0)}


_CHANNELS = ("rotation_quaternion", "rotation_euler", "rotation_axis_angle", "location", "scale")


def save_pose(armature) -> dict:
    """name -> (rotation mode, values of every transform channel) of each pose bone
    (restore with restore_pose)."""
    return {pb.name: (pb.rotation_mode, [tuple(getattr(pb, c)) for c in _CHANNELS])
            for pb in armature.pose.bones}


def restore_pose(armature, saved: dict) -> None:
    """Put back what save_pose saved (rotation mode and channels); updates the view layer."""
    for pb in armature.pose.bones:
        if pb.name in saved:
            mode, values = saved[pb.name]
            pb.rotation_mode = mode
            for channel, value in zip(_CHANNELS, values):
                setattr(pb, channel, value)
    bpy.context.view_layer.update()


@contextmanager
def kept_pose(armature):
    """Restores every pose bone's channels and rotation mode on exit (errors included); the
    armature is in Pose Position meanwhile (a Rest Position rig would not move)."""
    saved = save_pose(armature)
    position = armature.data.pose_position
    armature.data.pose_position = 'POSE'
    try:
        yield
    finally:
        armature.data.pose_position = position
        restore_pose(armature, saved)


def reset_pose(armature) -> None:
    """The rest pose (every bone's location, rotation and scale cleared)."""
    for pb in armature.pose.bones:
        pb.matrix_basis = Matrix.Identity(4)
    bpy.context.view_layer.update()


def rotate_bone(armature, name: str, axis, degrees: float) -> None:
    """Turn bone `name` (and so its children) by `degrees` about a world axis ("X", "Y",
    "Z" or a 3-vector) through its current head."""
    axis = Vector(AXES.get(axis, axis) if isinstance(axis, str) else axis)
    # the axis in the armature's space (its world matrix may rotate)
    local_axis = (armature.matrix_world.to_3x3().inverted_safe() @ axis).normalized()
    pose_bone = armature.pose.bones[name]
    head = pose_bone.matrix.translation.copy()
    turn = (Matrix.Translation(head) @ Matrix.Rotation(np.radians(degrees), 4, local_axis)
            @ Matrix.Translation(-head))
    pose_bone.matrix = turn @ pose_bone.matrix
    bpy.context.view_layer.update()  # children read their parent's new matrix


def apply_pose(armature, pose) -> None:
    """pose: [(bone name, axis, degrees), ...] applied in order on top of the rest pose.
    Entries naming a bone the armature lacks are skipped."""
    reset_pose(armature)
    for name, axis, degrees in pose:
        if name in armature.pose.bones:
            rotate_bone(armature, name, axis, degrees)


def limb_chain(armature, limb: str, side: str) -> list:
    """Bones named like Auto Skeleton's `<limb>_NN<side>` (e.g. arm_01.L ... arm_06.L), in order."""
    pattern = re.compile(rf"^{re.escape(limb)}_(\d+){re.escape(side)}$")
    found = [(int(m.group(1)), b.name) for b in armature.data.bones if (m := pattern.match(b.name))]
    return [name for _, name in sorted(found)]


def bone_at(armature, chain: list, fraction: float):
    """The bone of `chain` that holds the point `fraction` of the chain's length from its
    start (0.3 along an arm is near the shoulder, 0.6 near the elbow); None for no chain."""
    if not chain:
        return None
    bones = [armature.data.bones[name] for name in chain]
    lengths = np.array([b.length for b in bones])
    ends = np.cumsum(lengths)
    target = fraction * ends[-1]
    return chain[min(int(np.searchsorted(ends, target)), len(chain) - 1)]
