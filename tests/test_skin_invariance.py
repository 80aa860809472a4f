"""Auto Skin's weights do not depend on the frame or on sub-micro moves of the input
(docs/auto_skin.md#frame-invariance; measured on more characters by bench/skin_invariance.py)."""
import numpy as np
import pytest

from bonesmith.core.skinning import predict_weights

from conftest import SAMPLE

# The weights are smooth functions of the positions once the discrete steps (weld, slivers,
# ties, facing) are made frame-free: a 1e-6 jitter moves them by 8e-4 at most (model) and
# 2e-4 (prior) on the sample, a turn or a mirror by 1e-15. 1e-2 is twelve times the
# largest of these and five times below the smallest step that a flipped discrete
# decision made before (0.05 to 0.2).
TOLERANCE = 1e-2


@pytest.fixture(scope="module")
def sample_rig():
    with np.load(SAMPLE) as r:
        return (r["verts"].astype(np.float64), r["faces"].astype(np.int64), r["joints"].astype(np.float64),
                r["parents"].astype(np.int64), r["joint_tails"].astype(np.float64))


def _moves(V, H, T):
    a = np.pi
    R = np.array([[np.cos(a), -np.sin(a), 0.0], [np.sin(a), np.cos(a), 0.0], [0.0, 0.0, 1.0]])
    diag = float(np.linalg.norm(V.max(axis=0) - V.min(axis=0)))
    jitter = np.random.default_rng(0).normal(size=V.shape) * (1e-6 * diag / np.sqrt(3))
    M = np.diag([-1.0, 1.0, 1.0])
    return {"turn180": (V @ R.T, H @ R.T, T @ R.T), "jitter": (V + jitter, H, T),
            "mirrorX": (V @ M, H @ M, T @ M)}


@pytest.mark.parametrize("model", ["prior", None])
def test_turn_mirror_and_jitter_leave_the_weights(sample_rig, model):
    V, F, H, P, T = sample_rig
    W0 = predict_weights(V, F, H, P, T, model=model)
    for name, (Vm, Hm, Tm) in _moves(V, H, T).items():
        W = predict_weights(Vm, F, Hm, P, Tm, model=model)
        assert np.abs(W - W0).max() < TOLERANCE, name


def test_the_k_nearest_bones_in_tied_order_without_sorting_whole_rows():
    """features.tied_smallest gives tied_argsort's first k columns, also where runs of
    near-equal distances reach past the k + 2 it orders (those rows are sorted whole)."""
    from bonesmith.core.skinning.features import tied_argsort, tied_smallest
    rng = np.random.default_rng(0)
    for _ in range(100):
        m, k = int(rng.integers(3, 12)), int(rng.integers(1, 6))
        values = np.round(rng.random((40, m)) * rng.choice([1.0, 3.0]), 1)      # many exact ties
        values += rng.random((40, m)) * 5e-5                                   # ... and near ties (gap 1e-4)
        np.testing.assert_array_equal(tied_smallest(values, k, 1e-4), tied_argsort(values, 1e-4)[:, :k])
