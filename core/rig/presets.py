# SPDX-License-Identifier: GPL-3.0-or-later
"""Naming presets for the standard humanoid skeleton (docs/auto_skeleton.md#humanoids):
the names Mixamo, Unreal's mannequin, Unity's Humanoid avatar and Rigify's human metarig
give each role of core/rig/humanoid/skeleton.py. Left is the character's left (.L = +X
facing -Y)."""
from __future__ import annotations

from .fingers import NAMES as DIGITS
from .humanoid.skeleton import split_role

PRESETS = ("bonesmith", "mixamo", "unreal", "unity", "rigify")

_NAMES = {
    # role: (mixamo, unreal, unity, rigify); sided roles use {Left} / {l} / {L}
    "hips": ("Hips", "pelvis", "Hips", "spine"),
    "spine": ("Spine", "spine_01", "Spine", "spine.001"),
    "spine1": ("Spine1", "spine_02", "Chest", "spine.002"),
    "spine2": ("Spine2", "spine_03", "UpperChest", "spine.003"),
    "neck": ("Neck", "neck_01", "Neck", "spine.004"),
    "head": ("Head", "head", "Head", "spine.005"),
    "shoulder": ("{Left}Shoulder", "clavicle_{l}", "{Left}Shoulder", "shoulder.{L}"),
    "upper_arm": ("{Left}Arm", "upperarm_{l}", "{Left}UpperArm", "upper_arm.{L}"),
    "forearm": ("{Left}ForeArm", "lowerarm_{l}", "{Left}LowerArm", "forearm.{L}"),
    "hand": ("{Left}Hand", "hand_{l}", "{Left}Hand", "hand.{L}"),
    "thigh": ("{Left}UpLeg", "thigh_{l}", "{Left}UpperLeg", "thigh.{L}"),
    "shin": ("{Left}Leg", "calf_{l}", "{Left}LowerLeg", "shin.{L}"),
    "foot": ("{Left}Foot", "foot_{l}", "{Left}Foot", "foot.{L}"),
    "toe": ("{Left}ToeBase", "ball_{l}", "{Left}Toes", "toe.{L}"),
    "heel": (None, None, None, "heel.02.{L}"),
    **{f"palm{k}": (None, None, None, f"palm.0{k}.{{L}}") for k in (1, 2, 3, 4)},
}
# digits: Mixamo LeftHandIndex1, Unreal index_01_l, Unity LeftIndexProximal (its
# HumanBodyBones; the pinky is "Little"), Rigify f_index.01.L (thumb.01.L)
_UNITY_DIGIT = {"thumb": "Thumb", "index": "Index", "middle": "Middle", "ring": "Ring", "pinky": "Little"}
_UNITY_PHALANX = ("Proximal", "Intermediate", "Distal")
_NAMES.update({
    f"{digit}{k}": (f"{{Left}}Hand{digit.capitalize()}{k}", f"{digit}_0{k}_{{l}}",
                    f"{{Left}}{_UNITY_DIGIT[digit]}{_UNITY_PHALANX[k - 1]}",
                    f"{'' if digit == 'thumb' else 'f_'}{digit}.0{k}.{{L}}")
    for digit in DIGITS for k in (1, 2, 3)})
_COLUMN = {"mixamo": 0, "unreal": 1, "unity": 2, "rigify": 3}
_SIDES = {".L": dict(Left="Left", l="l", L="L"), ".R": dict(Left="Right", l="r", L="R")}

# Rigify rig types of the metarig's chain starts (the other bones are in those chains)
RIGIFY_TYPES = {"hips": "spines.basic_spine", "neck": "spines.super_head",
                "shoulder": "basic.super_copy", "upper_arm": "limbs.arm", "thigh": "limbs.leg",
                "palm1": "limbs.super_palm", **{f"{digit}1": "limbs.super_finger" for digit in DIGITS}}


def check(naming: str) -> str:
    if naming not in PRESETS:
        raise ValueError(f"naming must be one of {', '.join(PRESETS)}, not {naming!r}")
    return naming


def names(roles, naming: str) -> list:
    """The preset's bone name for each role ("forearm.L" ...)."""
    column = _COLUMN[check(naming)]
    out = []
    for role in roles:
        base, side = split_role(role)
        name = _NAMES[base][column].format(**_SIDES.get(side, {}))
        out.append("mixamorig:" + name if naming == "mixamo" else name)
    return out


def rigify_type(role: str) -> str:
    """The Rigify rig type a metarig bone of this role starts ("" for the others)."""
    return RIGIFY_TYPES.get(split_role(role)[0], "")


def rigify_collection(role: str) -> str:
    """The metarig bone collection (a row of Rigify's rig UI) of a role."""
    base, side = split_role(role)
    if base.startswith("palm") or base.rstrip("123") in DIGITS:
        return "Fingers"
    if base in ("shoulder", "upper_arm", "forearm", "hand"):
        return "Arm" + side
    if base in ("thigh", "shin", "foot", "toe", "heel"):
        return "Leg" + side
    return "Torso"
