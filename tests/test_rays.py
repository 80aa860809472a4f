# SPDX-License-Identifier: GPL-3.0-or-later
"""Ray casting (core/rays.py): Auto Skin's visibility test on Embree gives the answers of the
exact numpy test, Auto Skin's weights do not depend on which one runs, and Auto Skeleton's
ray hits find the nearest wall."""
import numpy as np
import pytest

from bonesmith.core.skinning import predict_weights
from bonesmith.core import rays
from bonesmith.core.rays import ray_hits, segment_tester, segments_blocked_exact
from bonesmith.core.skinning.prep import prepare_mesh
from conftest import sample_arrays
from test_skinning_core import cylinder


@pytest.fixture(scope="module")
def embree():
    if not rays.embree_available():
        pytest.skip("embreex is not installed in this Python (Auto Skin uses the numpy test)")
    return rays


def segments_at(V, n, seed):
    """Segments from surface vertices to random points in and around the mesh's box."""
    rng = np.random.default_rng(seed)
    start = rng.integers(0, len(V), n)
    lo, hi = V.min(0), V.max(0)
    ends = lo - 0.2 * (hi - lo) + rng.random((n, 3)) * 1.4 * (hi - lo)
    return start, V[start], ends


@pytest.mark.parametrize("front_only", [True, False])
def test_embree_answers_as_the_exact_test(embree, front_only):
    V, F = sample_arrays()
    mesh = prepare_mesh(V, F)           # the normalised welded mesh Auto Skin tests on
    start, P0, P1 = segments_at(mesh.V, 4000, seed=1)
    exact = segments_blocked_exact(mesh.V, mesh.F, P0, P1, start, front_only=front_only)
    fast = embree.Scene(mesh.V, mesh.F).segments_blocked(P0, P1, start, front_only=front_only)
    assert 0.2 < exact.mean() < 0.95            # both answers occur
    assert (fast != exact).sum() <= 4, np.flatnonzero(fast != exact)   # float32 grazing hits at most


def test_rules_of_the_test(embree):
    """A segment through a closed tube is blocked; one leaving it from inside is blocked
    only when back faces count; the start vertex's own triangles never block."""
    V, F = cylinder(radius=0.2, height=2.0)
    test = embree.Scene(V, F).segments_blocked
    inside, outside = np.array([[0.0, 0.0, 1.0]]), np.array([[1.0, 0.0, 1.0]])
    far = np.array([[-1.0, 0.0, 1.0]])
    assert test(outside, far).tolist() == [True]                         # enters the tube
    assert test(inside, outside, front_only=True).tolist() == [False]    # leaves it: a back face
    assert test(inside, outside).tolist() == [True]
    v = int(np.argmin(np.linalg.norm(V - [0.2, 0.0, 1.0], axis=1)))      # a vertex of the wall
    assert test(V[v:v + 1], inside, [v]).tolist() == [False]             # to the axis: own triangles skipped
    assert test(V[v:v + 1], inside - [0.4, 0, 0], [v], front_only=True).tolist() == [False]
    assert test(V[v:v + 1], inside - [0.4, 0, 0], [v]).tolist() == [True]  # out through the far wall
    assert test(V[v:v + 1], V[v:v + 1], [v]).tolist() == [False]         # zero length


def test_numpy_fallback_is_chosen_by_the_environment(monkeypatch):
    monkeypatch.setenv("BONESMITH_RAYS", "numpy")
    assert not rays.embree_available()
    V, F = cylinder()
    tester = segment_tester(V, F)
    assert not isinstance(getattr(tester, "__self__", None), rays.Scene)
    assert tester(np.array([[1.0, 0, 1]]), np.array([[-1.0, 0, 1]])).tolist() == [True]


def test_weights_do_not_depend_on_the_ray_test(embree, monkeypatch):
    from conftest import SAMPLE
    with np.load(SAMPLE) as d:
        V, F, J, P, T = d["verts"], d["faces"], d["joints"], d["parents"], d["joint_tails"]
    fast = predict_weights(V, F, J, P, T)
    monkeypatch.setenv("BONESMITH_RAYS", "numpy")
    exact = predict_weights(V, F, J, P, T)
    assert np.abs(fast - exact).max() <= 1e-3


def test_ray_hits_finds_the_nearest_wall():
    """From the axis of a capped tube of radius 0.2 a sideways ray meets the wall within 0.2
    (in units of the direction's length), one along the axis the cap; none points away."""
    V, F = cylinder(radius=0.2, height=2.0)
    T0 = V[F[:, 0]]
    dirs = np.array([[1.0, 0, 0], [0, -2.0, 0], [0, 0, 1.0]])
    t = ray_hits(np.array([0.0, 0.0, 1.0]), dirs, T0, V[F[:, 1]] - T0, V[F[:, 2]] - T0)
    assert t[2] == pytest.approx(1.0)                    # the cap at z = 2
    assert np.isinf(ray_hits(np.array([0.0, 0.0, 3.0]), dirs[2:], T0, V[F[:, 1]] - T0, V[F[:, 2]] - T0)).all()
    assert 0.18 < t[0] <= 0.2 and 0.09 < t[1] <= 0.1     # a polygon inside the circle


def test_segments_and_rays_agree():
    """The numpy segment test and ray_hits share one Möller–Trumbore test: a segment is
    blocked exactly when its ray's nearest hit is inside it."""
    V, F = cylinder(radius=0.2, height=2.0)
    T0, E1, E2 = V[F[:, 0]], V[F[:, 1]] - V[F[:, 0]], V[F[:, 2]] - V[F[:, 0]]
    origin = np.array([0.05, 0.02, 1.1])
    rng = np.random.default_rng(3)
    ends = origin + rng.normal(size=(200, 3)) * 0.3
    first = ray_hits(origin, ends - origin, T0, E1, E2)
    clear = (first > 1.0 + 1e-3) | (first < 1.0 - 1e-3)       # no hit near the segment's end
    blocked = segments_blocked_exact(V, F, np.repeat(origin[None], 200, 0), ends)
    assert clear.sum() > 150 and 0 < blocked.sum() < 200
    assert (blocked[clear] == (first[clear] < 1.0)).all()
