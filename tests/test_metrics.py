# SPDX-License-Identifier: GPL-3.0-or-later
"""Exact small cases for bonesmith.core.metrics (no bpy)."""
import numpy as np
import pytest

from bonesmith.core import metrics as M


def cube(size=1.0, center=(0.0, 0.0, 0.0)):
    """Closed unit cube, 12 triangles, outward (counter-clockwise seen from outside)."""
    V = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)], float)
    V = (V - 0.5) * size + np.asarray(center, float)
    # vertex index = 4x + 2y + z
    quads = [(0, 1, 3, 2),  # x = 0
             (4, 6, 7, 5),  # x = 1
             (0, 4, 5, 1),  # y = 0
             (2, 3, 7, 6),  # y = 1
             (0, 2, 6, 4),  # z = 0
             (1, 5, 7, 3)]  # z = 1
    F = []
    for a, b, c, d in quads:
        F += [(a, b, c), (a, c, d)]
    return V, np.array(F)


def chain(points):
    """Skeleton as joints + head->tail bones of a polyline."""
    J = np.asarray(points, float)
    return J, np.stack([J[:-1], J[1:]], axis=1)


def test_cube_is_outward():
    V, F = cube()
    assert M.winding_number([[0, 0, 0]], V, F)[0] == pytest.approx(1.0)


def test_bbox_diagonal():
    assert M.bbox_diagonal([[0, 0, 0], [1, 2, 2], [0.5, 0.5, 0.5]]) == pytest.approx(3.0)


def test_point_segment_distance():
    seg = np.array([[[0, 0, 0], [1, 0, 0]]], float)
    d = M.point_segment_distance([[0.5, 1, 0], [2, 0, 0], [-3, 4, 0]], seg)
    assert d == pytest.approx([1.0, 1.0, 5.0])
    # zero-length segment acts as a point
    d0 = M.point_segment_distance([[0, 3, 4]], np.zeros((1, 2, 3)))
    assert d0 == pytest.approx([5.0])


def test_sample_bones_even_and_includes_ends():
    s = M.sample_bones(np.array([[[0, 0, 0], [1, 0, 0]]], float), spacing=0.25)
    assert s[:, 0] == pytest.approx([0, 0.25, 0.5, 0.75, 1.0])
    s = M.sample_bones(np.array([[[0, 0, 0], [1, 0, 0]]], float), spacing=0.3)
    assert len(s) == 5 and np.diff(s[:, 0]) == pytest.approx([0.25] * 4)


def test_identical_skeletons_are_zero():
    J, B = chain([[0, 0, 0], [0, 0, 1], [0, 1, 1], [1, 1, 1]])
    assert M.cd_j2j(J, J) == 0
    assert M.cd_j2b(J, B, J, B) == 0
    assert M.cd_b2b(B, B) == 0


def test_shifted_skeleton_known_values():
    J, B = chain([[0, 0, 0], [0, 0, 1], [0, 0, 2]])
    shift = np.array([0.3, 0.4, 0.0])          # |shift| = 0.5, perpendicular to the chain
    assert M.cd_j2j(J + shift, J) == pytest.approx(0.5)
    assert M.cd_j2b(J + shift, B + shift, J, B) == pytest.approx(0.5)
    assert M.cd_b2b(B + shift, B, spacing=0.01) == pytest.approx(0.5)


def test_asymmetric_case_is_the_mean_of_both_directions():
    # prediction: one joint at the origin; reference: joints at 0 and 2 on x
    P = np.array([[0.0, 0, 0]])
    G = np.array([[0.0, 0, 0], [2.0, 0, 0]])
    # pred->gt: 0 ; gt->pred: (0 + 2)/2 = 1 ; CD = (0 + 1)/2
    assert M.cd_j2j(P, G) == pytest.approx(0.5)
    # bones: prediction a single bone 0..1 on x, reference a bone 0..2 on x
    Pb = np.array([[[0, 0, 0], [1, 0, 0]]], float)
    Gb = np.array([[[0, 0, 0], [2, 0, 0]]], float)
    # samples on Pb (x = 0, .5, 1) lie on Gb: 0; samples on Gb (x = 0, .5, 1, 1.5, 2)
    # to Pb: max(x-1, 0) = 0, 0, 0, .5, 1 -> mean 0.3 ; CD = 0.15
    assert M.cd_b2b(Pb, Gb, spacing=0.5) == pytest.approx(0.15)
    # dense sampling tends to the continuous value (0 + 0.25)/2
    assert M.cd_b2b(Pb, Gb, spacing=0.001) == pytest.approx(0.125, abs=1e-3)
    # J2B: pred joints [0,0,0],[1,0,0] to Gb: 0; gt joints 0 and 2 to Pb: 0 and 1
    assert M.cd_j2b([[0, 0, 0], [1, 0, 0]], Pb, [[0, 0, 0], [2, 0, 0]], Gb) == pytest.approx(0.25)


def test_empty_or_nan_input_raises():
    with pytest.raises(ValueError, match="pred_joints is empty"):
        M.cd_j2j(np.zeros((0, 3)), [[0, 0, 0]])
    with pytest.raises(ValueError, match="gt_joints is empty"):
        M.cd_j2j([[0, 0, 0]], np.zeros((0, 3)))
    with pytest.raises(ValueError, match="pred_joints has non-finite coordinates"):
        M.cd_j2j([[np.nan, 0, 0]], [[0, 0, 0]])


# ----------------------------------------------------------------------------- inside

INSIDE_PTS = np.array([[0, 0, 0], [0.3, -0.2, 0.4], [-0.45, 0.45, -0.45]])
OUTSIDE_PTS = np.array([[2, 0, 0], [0, 0.6, 0], [0.7, 0.7, 0.7], [-5, 3, 1]])


def test_winding_number_cube():
    V, F = cube()
    assert M.winding_number(INSIDE_PTS, V, F) == pytest.approx([1, 1, 1])
    assert M.winding_number(OUTSIDE_PTS, V, F) == pytest.approx([0, 0, 0, 0], abs=1e-9)


def test_winding_number_flipped_cube_is_minus_one():
    V, F = cube()
    assert M.winding_number(INSIDE_PTS, V, F[:, ::-1]) == pytest.approx([-1, -1, -1])


def test_winding_number_open_cube_is_fractional():
    V, F = cube()
    # remove the two triangles of the z = +0.5 face: the centre sees 5/6 of the sphere
    open_F = F[:10]
    assert M.winding_number([[0, 0, 0]], V, open_F)[0] == pytest.approx(5 / 6)


@pytest.mark.parametrize("variant", ["plain", "flipped", "mixed", "open", "open_mixed", "unwelded"])
def test_inside_mesh_cube_variants(variant):
    V, F = cube()
    if variant == "flipped":
        F = F[:, ::-1]
    elif variant == "mixed":                   # every other triangle flipped
        F = F.copy()
        F[::2] = F[::2, ::-1]
    elif variant == "open":
        F = F[:10]
    elif variant == "open_mixed":
        F = F[:10].copy()
        F[1::3] = F[1::3, ::-1]
    elif variant == "unwelded":                # every triangle its own vertices
        V = V[F.reshape(-1)]
        F = np.arange(len(V)).reshape(-1, 3)
    pts = INSIDE_PTS
    if variant.startswith("open"):
        # the hole (the whole z = +0.5 face) makes points just under it ambiguous:
        # test points at least half the cube away from it
        pts = pts * [1, 1, -1] * (pts[:, 2:] > 0) + pts * (pts[:, 2:] <= 0)
        assert (pts[:, 2] <= 0).all()
    assert M.inside_mesh(pts, V, F).all()
    assert not M.inside_mesh(OUTSIDE_PTS, V, F).any()


def test_mixed_winding_is_made_consistent_first():
    """Every other face flipped: the winding is repaired, so the winding number itself
    (not the parity fallback) finds the centre inside, and the outside stays outside."""
    V, F = cube()
    F = F.copy()
    F[::2] = F[::2, ::-1]
    ins, det = M.inside_mesh([[0, 0, 0]], V, F, return_details=True)
    assert ins[0] and det["rule"][0] == M.InsideRule.WINDING and abs(det["winding"][0]) == pytest.approx(1.0)
    assert not M.inside_mesh(OUTSIDE_PTS, V, F).any()


def test_inside_mesh_multi_part():
    # body cube + an inverted "eye" cube inside it + a loose flipped cube elsewhere
    Vb, Fb = cube(2.0)
    Ve, Fe = cube(0.4, center=(0.5, 0.5, 0.5))
    Vl, Fl = cube(1.0, center=(5, 0, 0))
    V = np.concatenate([Vb, Ve, Vl])
    F = np.concatenate([Fb, Fe[:, ::-1] + 8, Fl[:, ::-1] + 16])
    pts = np.array([[0.5, 0.5, 0.5],    # inside eye and body (windings +1 and -1 cancel)
                    [-0.5, -0.5, 0],    # body only
                    [5, 0.2, 0.1],      # loose flipped part
                    [3, 0, 0]])         # outside everything
    ins = M.inside_mesh(pts, V, F)
    assert ins.tolist() == [True, True, True, False]


def test_open_sheet_is_never_inside():
    # a single square sheet: points just above/below must stay outside
    V = np.array([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]], float)
    F = np.array([[0, 1, 2], [0, 2, 3]])
    pts = np.array([[0.1, 0.2, 0.01], [0.1, 0.2, -0.01], [0.3, -0.4, 0.2]])
    assert not M.inside_mesh(pts, V, F).any()


def test_open_parts_that_enclose_together():
    # a cube split into two open halves that are separate components (not welded:
    # the halves are shifted apart by a hair more than the weld tolerance)
    V, F = cube()
    lower = F[[0, 1, 4, 5, 8, 9]]            # x=0, y=0, z=0 faces
    upper = F[[2, 3, 6, 7, 10, 11]]          # x=1, y=1, z=1 faces
    V2 = V + 1e-4
    Vall = np.concatenate([V, V2])
    Fall = np.concatenate([lower, upper + 8])
    ins, det = M.inside_mesh([[0, 0, 0]], Vall, Fall, return_details=True)
    assert ins[0]
    assert det["winding"][0] == pytest.approx(1.0, abs=1e-3)
