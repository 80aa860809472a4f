# SPDX-License-Identifier: GPL-3.0-or-later
"""Auto Skin refuses an armature that is not where the meshes are (core/skinning/armature_check.py)."""
import numpy as np
import pytest

from bonesmith.core.errors import BonesmithError
from bonesmith.core.skinning.armature_check import check_placement

BOX = np.array([[x, y, z] for x in (-0.2, 0.2) for y in (-0.1, 0.1) for z in (0.0, 1.8)], dtype=float)
JOINTS = np.array([[0, 0, 0.9], [0, 0, 1.3], [0, 0, 1.6]], dtype=float)   # a spine inside the box
TAILS = np.array([[0, 0, 1.3], [0, 0, 1.6], [0, 0, 1.75]], dtype=float)


def test_bones_inside_the_mesh_pass():
    check_placement([("Body", BOX), ("Hat", BOX[BOX[:, 2] > 1] + [0, 0, 0.1])], JOINTS, TAILS, "Rig")


def test_a_mesh_far_from_the_bones_is_named():
    with pytest.raises(BonesmithError, match=r"The mesh 'Hat' is far away from the bones of 'Rig'"):
        check_placement([("Body", BOX), ("Hat", BOX + [3.0, 0, 0])], JOINTS, TAILS, "Rig")


def test_an_armature_in_another_unit_is_refused():
    with pytest.raises(BonesmithError, match=r"'Rig' is 2\d\dx smaller than the mesh"):
        check_placement([("Body", BOX)], JOINTS / 100, TAILS / 100, "Rig")


def test_an_empty_or_nan_mesh_is_left_to_core():
    nan = BOX.copy()
    nan[0, 0] = np.nan
    check_placement([("Body", BOX), ("Empty", np.zeros((0, 3))), ("Broken", nan)], JOINTS, TAILS, "Rig")


def test_a_nan_vertex_does_not_hide_a_mesh_far_from_the_bones():
    """A NaN made the margin NaN, and every mesh passed as near the bones; the finite
    vertices of a mesh with a NaN one still say where it is."""
    nan = BOX.copy()
    nan[0, 0] = np.nan
    with pytest.raises(BonesmithError, match=r"The mesh 'Hat' is far away"):
        check_placement([("Body", BOX), ("Broken", nan), ("Hat", BOX + [3.0, 0, 0])], JOINTS, TAILS, "Rig")
    with pytest.raises(BonesmithError, match=r"The mesh 'Broken' is far away"):
        check_placement([("Body", BOX), ("Broken", nan + [3.0, 0, 0])], JOINTS, TAILS, "Rig")
