# SPDX-License-Identifier: GPL-3.0-or-later
"""Family correctives on arrays (docs/correctives.md#families): one Pose_net and one refined
W learned across identities of one topology, a joint regressor on their (rest, joints), and
`for_body` serving a body the fit never saw, with no poses of it. The synthetic family has
a known answer: bodies are the sample character under smooth shape modes, each joint the
mean of a fixed set of vertices (linear in the mesh, as MakeHuman's are), and every body's
ground truth the same rest-space correction (scaled with its size) under other weights."""
import numpy as np
import pytest

from bonesmith.core import correctives as cc
from bonesmith.core.correctives.model import rotation_features

from conftest import SAMPLE

BODIES = 7       # the last one is never trained on


def make_family(count: int = BODIES, poses: int = 60) -> dict:
    """The synthetic family: faces, parents, weights, names and `count` bodies (T, J, R, G)."""
    with np.load(SAMPLE) as d:
        base, faces, J0, parents = d["verts"].astype(float), d["faces"], d["joints"], d["parents"]
        W = d["weights"] / d["weights"].sum(axis=1, keepdims=True)
        names, tails = d["joint_names"], d["joint_tails"]
    rng = np.random.default_rng(7)
    size = np.linalg.norm(np.ptp(base, axis=0))
    # each joint: the mean of its 12 nearest base vertices (the same vertices on every body)
    rings = np.argsort(np.linalg.norm(base[None] - J0[:, None], axis=2), axis=1)[:, :12]
    centre = base.mean(axis=0)
    modes = [np.sin(base[:, [1]] / size * 3 * (m + 1) + m) * rng.normal(size=3) * 0.04 * size
             for m in range(3)]
    W_true = W * (1 + rng.random(W.shape))
    W_true /= W_true.sum(axis=1, keepdims=True)
    C = np.zeros((len(base), 3, len(J0), 9))
    for j in np.flatnonzero(parents >= 0):
        region = (W[:, j] > 1e-4)[:, None, None]
        C[:, :, j] = rng.normal(size=(len(base), 3, 9)) * 0.01 * size * region
    bodies = []
    for i in range(count):
        stretch = 1 + rng.uniform(-0.15, 0.15, size=3)
        T = centre + (base - centre) * stretch + sum(rng.uniform(-1, 1) * m for m in modes)
        joints = T[rings].mean(axis=1)
        R = cc.random_rotations(parents, poses, max_degrees=40, seed=100 + i)
        scale = np.linalg.norm(np.ptp(T, axis=0)) / size
        correction = scale * np.einsum("vajf,pjf->pva", C, rotation_features(R))
        G = cc.lbs(T[None] + correction, W_true, cc.skinning_matrices(joints, parents, R))
        bodies.append(dict(T=T, J=joints, R=R, G=G, tails=joints + (tails - J0) * scale))
    return dict(F=faces, parents=parents, W=W, names=names, bodies=bodies)


@pytest.fixture(scope="module")
def family():
    return make_family()


def fit(family, bodies, **options):
    return cc.fit_correctives([b["T"] for b in bodies], family["F"], [b["J"] for b in bodies],
                              family["parents"], family["W"], [b["R"] for b in bodies],
                              [b["G"] for b in bodies], **options)


def error(posed, truth):
    return float(np.linalg.norm(posed - truth, axis=-1).mean())


@pytest.fixture(scope="module")
def model(family):
    return fit(family, family["bodies"][:-1])


def test_a_body_never_seen_gets_joints_and_correctives_without_its_poses(family, model):
    new = family["bodies"][-1]
    body = model.for_body(new["T"])
    size = np.linalg.norm(np.ptp(new["T"], axis=0))
    joint_error = np.linalg.norm(body.joints - new["J"], axis=1).mean() / size
    assert joint_error < 1e-4            # the joints are linear in the mesh: near exact
    plain = cc.lbs(new["T"], family["W"], cc.skinning_matrices(new["J"], family["parents"], new["R"]))
    assert error(body.pose(new["R"]), new["G"]) < 0.2 * error(plain, new["G"])
    # as good as with its true joints, and near the ceiling of a fit on its own poses
    true_joints = model.for_body(new["T"], new["J"])
    own = cc.fit_correctives([new["T"]], family["F"], [new["J"]], family["parents"], family["W"],
                             [new["R"][:40]], [new["G"][:40]])
    held_out = slice(40, None)
    family_error = error(true_joints.pose(new["R"][held_out]), new["G"][held_out])
    assert family_error < 1.3 * error(own.pose(new["R"][held_out]), new["G"][held_out])
    assert error(body.pose(new["R"]), new["G"]) < 1.5 * error(true_joints.pose(new["R"]), new["G"])


def test_correctives_follow_the_body_size(family, model):
    """A body twice the size gets corrections twice as large (and twice-as-far joints)."""
    new = family["bodies"][-1]
    small, big = model.for_body(new["T"]), model.for_body(2.0 * new["T"])
    R = new["R"][:5]
    assert np.allclose(big.corrections(R), 2.0 * small.corrections(R))
    assert np.allclose(big.joints, 2.0 * small.joints)


def test_family_model_saves_and_loads(tmp_path, family, model):
    path = model.save(tmp_path / "family.npz")
    loaded = cc.CorrectiveModel.load(path)
    assert loaded.is_family and loaded.info["identities"] == BODIES - 1
    new = family["bodies"][-1]
    assert np.allclose(loaded.for_body(new["T"]).pose(new["R"][:3]), model.for_body(new["T"]).pose(new["R"][:3]))
    # a body model keeps the family's regressor, so it saves as a family too
    again = cc.CorrectiveModel.load(model.for_body(new["T"]).save(tmp_path / "body.npz"))
    assert again.is_family and np.allclose(again.joints, model.for_body(new["T"]).joints)


def test_one_character_is_not_a_family(family):
    b = family["bodies"][0]
    single = cc.fit_correctives([b["T"]], family["F"], [b["J"]], family["parents"], family["W"], [b["R"]], [b["G"]])
    assert not single.is_family
    with pytest.raises(cc.CorrectivesError, match="give the joints"):
        single.for_body(b["T"])
    assert np.allclose(single.for_body(b["T"], b["J"]).pose(b["R"][:2]), single.pose(b["R"][:2]))


@pytest.mark.parametrize("case, message", [
    ("no body", "at least one body"),
    ("lists of different lengths", "one entry per body"),
    ("one body's arrays, not lists", "one body: lists of one"),
    ("another topology", "Identity 1: Weights must have shape"),
    ("another skeleton", "Identity 1: Joints must be"),
])
def test_bad_families_are_refused_clearly(family, case, message):
    b = [dict(x) for x in family["bodies"][:2]]
    if case == "no body":
        b = []
    elif case == "another topology":
        b[1]["T"], b[1]["G"] = b[1]["T"][:-5], b[1]["G"][:, :-5]
    elif case == "another skeleton":
        b[1]["J"] = b[1]["J"][:-1]
    args = [[x["T"] for x in b], family["F"], [x["J"] for x in b], family["parents"], family["W"],
            [x["R"] for x in b], [x["G"] for x in b]]
    if case == "lists of different lengths":
        args[5] = args[5][:1]
    if case == "one body's arrays, not lists":
        args = [a[0] if isinstance(a, list) else a for a in args]
    with pytest.raises(cc.CorrectivesError, match=message):
        cc.fit_correctives(*args)


def test_for_body_refuses_another_topology(model):
    with pytest.raises(cc.CorrectivesError, match="shares its topology"):
        model.for_body(model.rest_verts[:-3])
