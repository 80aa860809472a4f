# SPDX-License-Identifier: GPL-3.0-or-later
"""Humanoids: recognise two legs, two arms and a head on a generic rig, and lay a standard
humanoid skeleton along them (docs/auto_skeleton.md#humanoids). One module per concern:

recognition  recognise, Humanoid: the humanoid paths (spine, head, arms, legs) read off the
             generic tree.
skeleton     standard_joints, standard_bones, finger_ups: the standard skeleton placed
             along those paths (landmarks, spine depth, knees and elbows, skull base, digits).
front        feet_confirm_front: whether the feet show the front the feet bones gave.
limbs        snap_limbs, limb_bones, finger_names: the generic rig of a humanoid bent at the
             limb landmarks, its side chains and digits named by limb and finger
             (docs/auto_skeleton.md#limb-landmarks).

All work in the upright frame of core/skeleton.py (up +Z, facing -Y, the character's left
at +X) on the generic rig's bones.
"""
from .front import feet_confirm_front
from .limbs import finger_names, limb_bones, snap_limbs
from .outline import outline_humanoid
from .recognition import HIDDEN_HIP, Humanoid, recognise
from .skeleton import finger_ups, split_role, standard_bones, standard_joints

__all__ = [
    "HIDDEN_HIP", "Humanoid", "feet_confirm_front", "finger_names", "finger_ups", "limb_bones", "outline_humanoid",
    "recognise", "snap_limbs", "split_role", "standard_bones", "standard_joints",
]
