# SPDX-License-Identifier: GPL-3.0-or-later
"""core.correctives on arrays: kinematics in the convention of docs/correctives.md#kinematics,
the fit, the compact shape-key form, files and bad input. Ground truths here are synthetic
with a known answer; Blender's own deformers are the benchmark's ground truth
(bench/correctives.py)."""
import numpy as np
import pytest

from bonesmith.core import correctives as cc
from bonesmith.core.correctives.model import rotation_features

from conftest import SAMPLE


@pytest.fixture(scope="module")
def sample():
    with np.load(SAMPLE) as d:
        return {k: d[k] for k in d.files}


@pytest.fixture(scope="module")
def synthetic(sample):
    """Ground truth = LBS with other weights (on the artist's influences) of the rest mesh
    plus per-joint corrections linear in R − I, local to each joint's region: exactly what
    the model can represent, so the fit must recover it on new poses."""
    T, J, parents = sample["verts"], sample["joints"], sample["parents"]
    W = sample["weights"] / sample["weights"].sum(axis=1, keepdims=True)
    rng = np.random.default_rng(3)
    W_true = W * (1 + rng.random(W.shape))
    W_true /= W_true.sum(axis=1, keepdims=True)
    R = cc.random_rotations(parents, 160, max_degrees=40, seed=5)
    f = rotation_features(R)
    scale = 0.01 * np.linalg.norm(np.ptp(T, axis=0))
    correction = np.zeros((len(R), len(T), 3))
    for j in np.flatnonzero(parents >= 0):
        region = (W[:, j] > 1e-4)[:, None, None]
        correction += np.einsum("vaf,pf->pva", rng.normal(size=(len(T), 3, 9)) * scale * region, f[:, j])
    G = cc.lbs(T[None] + correction, W_true, cc.skinning_matrices(J, parents, R))
    return dict(T=T, F=sample["faces"], J=J, parents=parents, W=W, W_true=W_true, R=R, G=G)


def mean_error(a, b):
    return float(np.linalg.norm(a - b, axis=-1).mean())


# -- kinematics ---------------------------------------------------------------------------------

def test_skinning_rotations_follow_blender_on_the_sample_animation(sample):
    """The record's poses were exported from Blender: the skinning matrices' rotations are
    Blender's. (Translations differ where the animation moves bones; that our convention
    matches Blender for rotations about the heads is tested in Blender, in
    test_correctives_bridge.py.)"""
    A = cc.skinning_matrices(sample["joints"], sample["parents"], sample["pose_rot"])
    assert np.abs(A[..., :3] - sample["pose_A"][..., :3, :3]).max() < 1e-5


def test_quaternions_round_trip_and_local_rotations_match_blender(sample):
    R = cc.axis_angle_to_matrix(np.random.default_rng(0).normal(size=(500, 3)) * 2)
    q = cc.matrix_to_quaternion(R)
    assert np.allclose(cc.quaternion_to_matrix(q), R, atol=1e-12)
    assert np.allclose(np.linalg.norm(q, axis=1), 1) and (q[:, 0] >= 0).all()
    # Blender's pose-bone rotations (pose_basis) are the local quaternions of the world-aligned
    # rotations, except on bones an IK constraint drives (their channels are not their motion)
    B = sample["rest_mats"][:, :3, :3]
    local = cc.quaternion_to_matrix(cc.local_quaternions(sample["pose_rot"], B))
    close = np.abs(local - sample["pose_basis"]).max(axis=(0, 2, 3)) < 1e-5
    assert close.sum() >= len(close) - 4


def test_no_correction_at_rest(synthetic):
    s = synthetic
    model = cc.fit_correctives([s["T"]], s["F"], [s["J"]], s["parents"], s["W"], [s["R"][:100]], [s["G"][:100]])
    rest = np.tile(np.eye(3), (1, len(s["J"]), 1, 1))
    assert np.abs(model.corrections(rest)).max() < 1e-12
    assert np.allclose(model.pose(rest)[0], s["T"], atol=1e-9)


# -- the fit ------------------------------------------------------------------------------------

def test_fit_recovers_a_representable_deformation_on_new_poses(synthetic):
    s = synthetic
    train, test = slice(0, 120), slice(120, None)
    model = cc.fit_correctives([s["T"]], s["F"], [s["J"]], s["parents"], s["W"], [s["R"][train]], [s["G"][train]])
    plain = cc.lbs(s["T"], s["W"], cc.skinning_matrices(s["J"], s["parents"], s["R"][test]))
    lbs_error = mean_error(plain, s["G"][test])
    assert mean_error(model.pose(s["R"][test]), s["G"][test]) < 0.05 * lbs_error
    # refined weights: still non-negative, rows summing to 1, only on the artist's influences
    assert (model.weights >= 0).all() and np.allclose(model.weights.sum(axis=1), 1)
    assert not (model.weights[s["W"] <= 1e-4] > 0).any()


def test_refined_weights_find_the_weights_that_made_the_poses(synthetic):
    """Ground truth = plain LBS with other weights: refining W alone recovers them."""
    s = synthetic
    A = cc.skinning_matrices(s["J"], s["parents"], s["R"])
    G = cc.lbs(s["T"], s["W_true"], A)
    model = cc.fit_correctives([s["T"]], s["F"], [s["J"]], s["parents"], s["W"], [s["R"][:120]], [G[:120]],
                               pose_correctives=False, weight_prox=1e-6)
    assert len(model.pair_vertex) == 0
    before = mean_error(cc.lbs(s["T"], s["W"], A[120:]), G[120:])
    assert mean_error(model.pose(s["R"][120:]), G[120:]) < 0.05 * before
    assert np.abs(model.weights - s["W_true"]).sum(axis=1).mean() < 0.05


def test_compact_model_is_exactly_its_live_keys(synthetic, sample):
    s = synthetic
    B = sample["rest_mats"][:, :3, :3]
    model = cc.fit_correctives([s["T"]], s["F"], [s["J"]], s["parents"], s["W"], [s["R"][:120]], [s["G"][:120]],
                               max_keys=12)
    keys = model.live_keys(B)
    assert len(keys) == 12
    assert all(np.asarray(k.coeffs).shape == (10,) and k.coeffs[0] == pytest.approx(0, abs=1e-9)
               for k in keys)  # no constant term: every key is 0 at rest
    values = cc.key_values(keys, cc.local_quaternions(s["R"][120:], B))
    offsets = np.array([k.offsets for k in keys])
    corrected = s["T"][None] + np.einsum("pk,kva->pva", values, offsets)
    baked = cc.lbs(corrected, model.weights, cc.skinning_matrices(s["J"], s["parents"], s["R"][120:]))
    assert np.abs(baked - model.pose(s["R"][120:])).max() < 1e-6 * np.ptp(s["T"], axis=0).max()
    # and fewer keys cost accuracy, monotonically
    full = cc.fit_correctives([s["T"]], s["F"], [s["J"]], s["parents"], s["W"], [s["R"][:120]], [s["G"][:120]])
    assert mean_error(full.pose(s["R"][120:]), s["G"][120:]) < mean_error(model.pose(s["R"][120:]), s["G"][120:])


def test_key_budget_follows_the_measured_cost():
    assert cc.key_budget(15000, 4.0) < cc.key_budget(5000, 4.0) < cc.key_budget(1000, 4.0)
    assert cc.key_budget(15000, 8.0) >= 2 * cc.key_budget(15000, 4.0) - 1
    assert cc.key_budget(10 ** 9, 4.0) == 1


def test_save_and_load(tmp_path, synthetic):
    s = synthetic
    model = cc.fit_correctives([s["T"]], s["F"], [s["J"]], s["parents"], s["W"], [s["R"][:60]], [s["G"][:60]],
                               max_keys=8)
    path = model.save(tmp_path / "sub" / "model.npz")
    again = cc.CorrectiveModel.load(path)
    assert np.array_equal(again.pose(s["R"][60:70]), model.pose(s["R"][60:70]))
    assert again.info["max_keys"] == 8 and again.info["poses"] == 60
    (tmp_path / "other.npz").write_bytes(b"not a model")
    with pytest.raises(cc.CorrectivesError, match="Could not read"):
        cc.CorrectiveModel.load(tmp_path / "other.npz")


# -- bad input -------------------------------------------------------------------------------

@pytest.mark.parametrize("case, message", [
    ("single pose", "several poses"),
    ("nan pose", "NaN"),
    ("nan posed", "NaN"),
    ("topology", "topology"),
    ("unweighted", "no skin weights"),
    ("not rotations", "rotation matrices"),
    ("weights shape", "Weights must have shape"),
    ("bad parent", "Parent indices"),
    ("parents in a cycle", "form a cycle"),
])
def test_bad_input_is_refused_clearly(synthetic, case, message):
    s = synthetic
    T, W, R, G, parents = s["T"], s["W"].copy(), s["R"][:20].copy(), s["G"][:20].copy(), s["parents"].copy()
    if case == "single pose":
        R, G = R[:1], G[:1]
    elif case == "nan pose":
        R[3, 2, 0, 0] = np.nan
    elif case == "nan posed":
        G[0, 5] = np.nan
    elif case == "topology":
        G = G[:, :-3]
    elif case == "unweighted":
        W[7] = 0
    elif case == "not rotations":
        R[2, 4] *= 2
    elif case == "weights shape":
        W = W[:, :-1]
    elif case == "bad parent":
        parents[4] = 4
    elif case == "parents in a cycle":
        child = int(np.flatnonzero(parents >= 0)[0])
        parents[parents[child]] = child               # a bone and its parent hang from each other
    with pytest.raises(cc.CorrectivesError, match=message):
        cc.fit_correctives([T], s["F"], [s["J"]], parents, W, [R], [G])


@pytest.mark.parametrize("ridge", [-1.0, float("nan"), float("inf")])
def test_a_ridge_that_cannot_regularise_is_refused(synthetic, ridge):
    s = synthetic
    with pytest.raises(ValueError, match="ridge must be"):
        cc.fit_correctives([s["T"]], s["F"], [s["J"]], s["parents"], s["W"], [s["R"][:20]], [s["G"][:20]],
                           ridge=ridge)


def test_pose_refuses_wrong_rotations(synthetic):
    s = synthetic
    model = cc.fit_correctives([s["T"]], s["F"], [s["J"]], s["parents"], s["W"], [s["R"][:20]], [s["G"][:20]])
    with pytest.raises(cc.CorrectivesError, match="shape"):
        model.pose(np.tile(np.eye(3), (1, 3, 1, 1)))
    with pytest.raises(cc.CorrectivesError, match="NaN"):
        model.pose(np.full((1, len(s["J"]), 3, 3), np.nan))
