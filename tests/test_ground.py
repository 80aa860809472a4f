# SPDX-License-Identifier: GPL-3.0-or-later
"""A flat plate the character stands on (a ground plane, a shadow disc) joined into its
mesh gets no bones and follows the root (core/ground.py; docs/auto_skeleton.md#preparation)."""
import numpy as np
import pytest

from conftest import ground_plane, merge, sample_arrays

from bonesmith.core.ground import ground_vertices
from bonesmith.core.skeleton import extract_skeleton
from bonesmith.core.skinning import predict_weights


@pytest.fixture(scope="module")
def alone():
    """The sample character, its rig and its weights, with nothing under it."""
    V, F = sample_arrays()
    sk = extract_skeleton(V, F)
    return V, F, sk, predict_weights(V, F, sk.joints, sk.parents, sk.tails)


PLATES = {"a plane twice the height": dict(width=2.0), "a plane 100 times the height": dict(width=100.0),
          "a 20 x 20 grid": dict(width=3.0, cuts=20), "a plane the feet sink into": dict(lift=0.01)}


@pytest.mark.parametrize("plate", list(PLATES))
def test_a_ground_plane_joined_into_the_character_gets_no_bones(alone, plate):
    """With a plane joined under its feet the sample got a generic rig of a few bones
    (a plane 100 times its height: one bone): the plane's faces now leave the rig as it is
    without them."""
    V, F, sk, _ = alone
    P, Fp = ground_plane(V, **PLATES[plate])
    with_plate = extract_skeleton(*merge((V, F), (P, Fp)))
    assert with_plate.names == sk.names
    np.testing.assert_allclose(with_plate.joints, sk.joints, atol=1e-4 * np.ptp(V[:, 2]))
    assert with_plate.info["ground_faces_left_out"] == len(Fp)
    assert sk.info["ground_faces_left_out"] == 0


def test_a_joined_ground_plane_follows_the_root_and_leaves_the_weights_alone(alone):
    """The plane's vertices follow the root bone alone; the character's weights are those
    it gets without the plane (the plane 100 times its height used to shrink it in the
    network's frame)."""
    V, F, sk, W = alone
    P, Fp = ground_plane(V, width=100.0)
    Wp, info = predict_weights(*merge((V, F), (P, Fp)), sk.joints, sk.parents, sk.tails, return_info=True)
    np.testing.assert_allclose(Wp[:len(V)], W, atol=1e-9)
    root = int(np.flatnonzero(sk.parents < 0)[0])
    np.testing.assert_array_equal(Wp[len(V):], np.eye(len(sk))[[root] * len(P)])
    assert info["ground_vertices"] == len(P)


def cuboid(lo, hi, seam=False):
    """A closed box (V, F) from corner lo to hi; seam: its bottom face on vertices of its
    own (a UV seam split the mesh there)."""
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    V = np.array([[hi[0] if i & 1 else lo[0], hi[1] if i & 2 else lo[1], hi[2] if i & 4 else lo[2]]
                  for i in range(8)])
    F = np.array([[0, 2, 1], [1, 2, 3], [4, 5, 6], [5, 7, 6], [0, 1, 4], [1, 5, 4],
                  [2, 6, 3], [3, 6, 7], [0, 4, 2], [2, 4, 6], [1, 3, 5], [3, 7, 5]])
    if seam:
        V, F = np.vstack([V, V[:4]]), np.vstack([F[:2] + 8, F[2:]])
    return V, F


def flat_square(centre, width, z):
    """A square plate (V, F) of side `width` centred at (centre, z)."""
    return ground_plane(np.array([[centre[0] - 1, centre[1] - 1, z], [centre[0] + 1, centre[1] + 1, z + 1]]),
                        width=width)


def plates_found(body, *plates):
    """Is each plate wholly ground (ground_vertices) under `body` (V, F)? The body never is."""
    V, F = merge(body, *plates)
    g = ground_vertices(V, F)
    assert not g[:len(body[0])].any()
    ends = len(body[0]) + np.cumsum([0] + [len(p[0]) for p in plates])
    return [bool(g[a:b].all()) for a, b in zip(ends[:-1], ends[1:])]


def test_a_plate_is_ground_only_where_the_rest_stands_on_it():
    """Two legs standing on a plate: it is ground, and so is a shadow disc between them.
    Not ground: a plate under one of two legs (a sole: the other leg stands beside it), a
    plate at mid-height, a plate between the feet, and a body's own flat bottom cut off by
    a UV seam (the mesh is welded first)."""
    legs = merge(cuboid([-0.4, -0.1, 0], [-0.2, 0.1, 1]), cuboid([0.2, -0.1, 0], [0.4, 0.1, 1]))
    assert plates_found(legs, flat_square([0, 0], 2.0, 0.0)) == [True]
    assert plates_found(legs, flat_square([0, 0], 2.0, -0.05), flat_square([0, 0], 1.0, 0.0)) == [True, True]
    assert plates_found(legs, flat_square([-0.3, 0], 0.3, 0.0)) == [False]
    assert plates_found(legs, flat_square([0, 0], 2.0, 0.5)) == [False]
    assert plates_found(legs, flat_square([0, 0], 0.3, 0.0)) == [False]
    head = cuboid([-0.1, -0.1, 1.1], [0.1, 0.1, 1.3])
    assert not ground_vertices(*merge(cuboid([-0.3, -0.2, 0], [0.3, 0.2, 1], seam=True), head)).any()
