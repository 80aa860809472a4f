# SPDX-License-Identifier: GPL-3.0-or-later
"""Humanoids (docs/auto_skeleton.md#humanoids): recognition, the standard skeleton and its
naming presets, on the CC0 sample (a Quaternius character), a generated blocky humanoid and
a generated quadruped; whichever way they face."""
import numpy as np
import pytest

from bonesmith.core.skeleton import extract_skeleton
from bonesmith.core.rig import presets

from conftest import SAMPLE, humanoid_arrays, voxel_mesh

MIXAMO = {"Hips", "Spine", "Spine1", "Spine2", "Neck", "Head"} | {
    f"{side}{part}" for side in ("Left", "Right")
    for part in ("Shoulder", "Arm", "ForeArm", "Hand", "UpLeg", "Leg", "Foot", "ToeBase")}
MIXAMO_PARENTS = {"Spine": "Hips", "Spine1": "Spine", "Spine2": "Spine1", "Neck": "Spine2", "Head": "Neck",
                  "LeftShoulder": "Spine2", "LeftArm": "LeftShoulder", "LeftForeArm": "LeftArm",
                  "LeftHand": "LeftForeArm", "LeftUpLeg": "Hips", "LeftLeg": "LeftUpLeg",
                  "LeftFoot": "LeftLeg", "LeftToeBase": "LeftFoot"}


@pytest.fixture(scope="module")
def sample():
    with np.load(SAMPLE) as d:
        return {k: d[k] for k in ("verts", "faces", "joints", "joint_names")}


def quadruped_arrays():
    """A blocky four-legged animal with a neck, a head and a tail, Z up, facing -Y."""
    grid = np.zeros((12, 44, 24), dtype=bool)
    boxes = [((2, 10), (10, 32), (10, 17)),                                  # body
             ((2, 5), (10, 13), (0, 10)), ((7, 10), (10, 13), (0, 10)),     # front legs
             ((2, 5), (29, 32), (0, 10)), ((7, 10), (29, 32), (0, 10)),     # hind legs
             ((4, 8), (5, 10), (14, 20)), ((3, 9), (0, 7), (18, 24)),       # neck, head
             ((5, 7), (32, 44), (14, 16))]                                  # tail
    for (x0, x1), (y0, y1), (z0, z1) in boxes:
        grid[x0:x1, y0:y1, z0:z1] = True
    return voxel_mesh(grid, voxel=0.05, origin=(-0.3, -1.1, 0.0))


def named(sk) -> dict:
    return {n: k for k, n in enumerate(sk.names)}


def test_the_sample_gets_the_mixamo_skeleton(sample):
    sk = extract_skeleton(sample["verts"], sample["faces"], naming="mixamo")
    assert sk.info["humanoid"] and sk.info["naming"] == "mixamo"
    assert set(sk.names) == {f"mixamorig:{n}" for n in MIXAMO}
    index = named(sk)
    for child, parent in MIXAMO_PARENTS.items():
        for a, b in ((child, parent), (child.replace("Left", "Right"), parent.replace("Left", "Right"))):
            assert sk.parents[index["mixamorig:" + a]] == index["mixamorig:" + b]
    assert sk.parents[index["mixamorig:Hips"]] == -1
    # left = the character's left (+X for a character facing -Y), as the artist's .L bones
    assert sk.joints[index["mixamorig:LeftHand"], 0] > 0 > sk.joints[index["mixamorig:RightHand"], 0]
    # the joints sit near the artist's: elbows, wrists, knees, ankles, head within 5 % of the size
    artist = {str(n): j for n, j in zip(sample["joint_names"], sample["joints"])}
    size = np.linalg.norm(np.ptp(sample["verts"], axis=0))
    for mine, theirs in (("LeftForeArm", "LowerArm.L"), ("RightHand", "Palm.R"), ("LeftLeg", "LowerLeg.L"),
                         ("RightFoot", "Foot.R"), ("Head", "Head"), ("LeftUpLeg", "UpperLeg.L")):
        assert np.linalg.norm(sk.joints[index["mixamorig:" + mine]] - artist[theirs]) < 0.05 * size, mine


@pytest.mark.parametrize("naming, expected", [
    ("unreal", {"pelvis", "spine_01", "spine_03", "neck_01", "head", "clavicle_l", "upperarm_r",
                "lowerarm_l", "hand_r", "thigh_l", "calf_r", "foot_l", "ball_r"}),
    ("unity", {"Hips", "Chest", "UpperChest", "LeftUpperArm", "RightLowerArm", "LeftUpperLeg",
               "RightLowerLeg", "LeftToes"}),
    ("rigify", {"spine", "spine.003", "spine.005", "shoulder.L", "upper_arm.R", "forearm.L", "hand.R",
                "thigh.L", "shin.R", "foot.L", "toe.R", "heel.02.L", "heel.02.R"}),
])
def test_naming_presets(naming, expected):
    V, F = humanoid_arrays()
    sk = extract_skeleton(V, F, naming=naming)
    assert sk.info["humanoid"] and expected <= set(sk.names)
    assert len(set(sk.names)) == len(sk.names) == (24 if naming == "rigify" else 22)


def test_generic_naming_is_unchanged_by_default(sample):
    plain = extract_skeleton(sample["verts"], sample["faces"])
    assert plain.info["humanoid"] and plain.info["naming"] == "bonesmith" and "roles" not in plain.info
    assert "spine_01" in plain.names


def test_a_quadruped_is_no_humanoid_and_keeps_generic_names():
    V, F = quadruped_arrays()
    sk = extract_skeleton(V, F, naming="mixamo")
    assert not sk.info["humanoid"] and sk.info["naming"] == "bonesmith"
    assert not any(n.startswith("mixamorig:") for n in sk.names)
    assert sum(n.startswith("leg") and n.endswith("_01.L") or n.startswith("leg") and n.endswith("_01.R")
               for n in sk.names) >= 2


@pytest.mark.parametrize("turn", ["facing +X", "facing +Y", "lying on its back", "Y up"])
def test_sides_follow_the_character_whichever_way_it_faces(sample, turn):
    """Turned or lying, the humanoid is still found and LeftHand is the character's left hand."""
    c, s = 0.0, 1.0
    R = {"facing +X": np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]]),       # -Y front turned to +X
         "facing +Y": np.diag([-1.0, -1.0, 1.0]),
         "lying on its back": np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]]),
         "Y up": np.array([[1.0, 0, 0], [0, 0, 1], [0, -1, 0]])}[turn]
    sk = extract_skeleton(sample["verts"] @ R.T, sample["faces"], naming="mixamo")
    assert sk.info["humanoid"], sk.facing_text
    index = named(sk)
    left_hand = {str(n): j for n, j in zip(sample["joint_names"], sample["joints"])}["Palm.L"] @ R.T
    size = np.linalg.norm(np.ptp(sample["verts"], axis=0))
    assert np.linalg.norm(sk.joints[index["mixamorig:LeftHand"]] - left_hand) < 0.05 * size


def test_unknown_naming_is_refused(sample):
    with pytest.raises(ValueError, match="naming must be one of"):
        extract_skeleton(sample["verts"], sample["faces"], naming="maya")


def test_preset_tables_cover_every_role():
    roles = ["hips", "spine", "spine1", "spine2", "neck", "head"] + [
        f"{r}{s}" for r in ("shoulder", "upper_arm", "forearm", "hand", "thigh", "shin", "foot", "toe")
        for s in (".L", ".R")]
    for naming in presets.PRESETS[1:]:
        out = presets.names(roles, naming)
        assert len(set(out)) == len(roles)
    assert presets.names(["forearm.R"], "mixamo") == ["mixamorig:RightForeArm"]
    assert presets.rigify_type("upper_arm.L") == "limbs.arm" and presets.rigify_type("forearm.L") == ""
