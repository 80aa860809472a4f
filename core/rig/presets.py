# SPDX-License-Identifier: GPL-3.0-or-later
"""Naming presets for the standard humanoid skeleton (docs/auto_skeleton.md#humanoids):
the names Mixamo, Unreal's mannequin, Unity's Humanoid avatar and Rigify's human metarig
give each role of core/rig/humanoid.py. Left is the character's left (.L = +X facing -Y)."""
from __future__ import annotations

from .humanoid import split_role

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
}
_COLUMN = {"mixamo": 0, "unreal": 1, "unity": 2, "rigify": 3}
_SIDES = {".L": dict(Left="Left", l="l", L="L"), ".R": dict(Left="Right", l="r", L="R")}

# Rigify rig types of the metarig's chain starts (the other bones are in those chains)
RIGIFY_TYPES = {"hips": "spines.basic_spine", "neck": "spines.super_head",
                "shoulder": "basic.super_copy", "upper_arm": "limbs.arm", "thigh": "limbs.leg"}


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
    if base in ("shoulder", "upper_arm", "forearm", "hand"):
        return "Arm" + side
    if base in ("thigh", "shin", "foot", "toe", "heel"):
        return "Leg" + side
    return "Torso"
