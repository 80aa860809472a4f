# SPDX-License-Identifier: GPL-3.0-or-later
"""Carried weights (docs/auto_skin.md#carried-weights): a trained skin model keeps its
characters, and where a new character's surface lies on one of theirs (a variant of the
same base mesh, on the same rig) Auto Skin gives it that character's own weights."""
import numpy as np
import pytest

from bonesmith.core.errors import BonesmithError
from bonesmith.core.skinning import exemplars, predict_weights, templates, vertex_features
from bonesmith.core.skinning import network as N
from bonesmith.core.skinning.weights import prune
from test_skin_network import new_model, perturbed, tube_character


@pytest.fixture(scope="module")
def hero():
    """A tube on a 6-bone chain whose artist's weights switch sharply at the joints (no
    network predicts them exactly), and a model that carries it."""
    ch = tube_character(2.5, 6, radius=0.3, softness=0.02, family="hero", name="hero")
    ch["names"] = [f"bone_{j}" for j in range(len(ch["joints"]))]
    fs = vertex_features(ch["vertices"], ch["faces"], ch["joints"], ch["parents"], ch["tails"])
    plain = perturbed(new_model(fs), seed=5)
    carrying = N.SkinModel(plain.params, plain.stats, dict(plain.config), None,
                           [exemplars.make(ch, templates.make(ch["names"], ch["parents"], "hero"))])
    return ch, plain, carrying


def with_pouch(ch):
    """The hero with a box beside its middle, 0.25 off its surface (a new part of an outfit)."""
    box = np.array([[x, y, z] for x in (1.1, 1.4) for y in (0.55, 0.8) for z in (-0.15, 0.15)])
    faces = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                      [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])
    n = len(ch["vertices"])
    return np.vstack([ch["vertices"], box]), np.vstack([ch["faces"], faces + n]), n


def artist(ch):
    return prune(ch["weights"], 4, 0.01, fallback=np.argmax(ch["weights"], axis=1), parents=ch["parents"])


def test_a_variant_of_a_trained_body_gets_its_weights_where_the_surfaces_coincide(hero):
    ch, plain, carrying = hero
    V, F, n = with_pouch(ch)
    rig = (ch["joints"], ch["parents"], ch["tails"])
    W, info = predict_weights(V, F, *rig, model=carrying, names=ch["names"], return_info=True)
    W_net = predict_weights(V, F, *rig, model=plain, names=ch["names"])
    assert np.abs(W[:n] - artist(ch)).max() < 1e-6              # the body: its artist's weights
    assert np.abs(W_net[:n] - artist(ch)).sum(axis=1).mean() > 0.05   # the network alone does not have them
    np.testing.assert_allclose(W[n:], W_net[n:], atol=1e-9)     # the pouch: the network's
    assert info["carried"] == {"characters": 1, "share": pytest.approx(n / len(V))}
    assert "with the weights of 1 trained character(s)" in info["model"]


def test_weights_are_carried_in_any_units_turned_and_in_another_bone_order(hero):
    ch, _, carrying = hero
    turn = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])   # a quarter about z
    order = np.array([0, 2, 1, 3, 5, 4])[: len(ch["joints"])]
    moved = lambda P: 100.0 * np.asarray(P) @ turn.T + [5.0, -3.0, 40.0]    # noqa: E731 - centimetres
    inverse = np.argsort(order)
    parents = np.array([inverse[p] if p >= 0 else -1 for p in ch["parents"][order]])
    W = predict_weights(moved(ch["vertices"]), ch["faces"], moved(ch["joints"])[order], parents,
                        moved(ch["tails"])[order], model=carrying, names=[ch["names"][j] for j in order])
    assert np.abs(W - artist(ch)[:, order]).max() < 1e-6


def test_a_body_shape_of_the_same_topology_gets_its_weights_vertex_by_vertex(hero):
    ch, plain, carrying = hero
    # thicker and bent (a character creator's other body, in another pose): the same faces
    shape = tube_character(2.5, 6, radius=0.36, softness=0.3, bend=0.15)
    args = (shape["vertices"], shape["faces"], shape["joints"], shape["parents"], shape["tails"])
    W, info = predict_weights(*args, model=carrying, names=ch["names"], return_info=True)
    assert np.abs(W - artist(ch)).max() < 1e-6
    assert info["carried"] == {"characters": 1, "share": 1.0}
    assert np.abs(predict_weights(*args, model=plain, names=ch["names"]) - artist(ch)).sum(axis=1).mean() > 0.05


def test_another_body_on_the_same_rig_gets_the_networks_weights(hero):
    ch, plain, carrying = hero
    thicker = tube_character(2.5, 6, radius=0.33, softness=0.02, rings=17)   # near the hero everywhere, on it nowhere
    args = (thicker["vertices"], thicker["faces"], thicker["joints"], thicker["parents"], thicker["tails"])
    W, info = predict_weights(*args, model=carrying, names=ch["names"], return_info=True)
    np.testing.assert_array_equal(W, predict_weights(*args, model=plain, names=ch["names"]))
    assert info["carried"] is None and "trained character" not in info["model"]
    # the hero itself on another rig (other bone names): nothing carried either
    other = [f"part_{j}" for j in range(len(ch["names"]))]
    args = (ch["vertices"], ch["faces"], ch["joints"], ch["parents"], ch["tails"])
    np.testing.assert_array_equal(predict_weights(*args, model=carrying, names=other),
                                  predict_weights(*args, model=plain, names=other))


def test_the_characters_travel_in_the_model_file(hero, tmp_path):
    ch, _, carrying = hero
    again = N.SkinModel.load(carrying.save(tmp_path / "carrying.npz"))
    (ex,) = again.exemplars_for(ch["names"], ch["parents"])
    assert ex["name"] == "hero" and ex["labels"] == ch["names"]
    np.testing.assert_allclose(ex["weights"], ch["weights"], atol=1e-3)      # stored as float16
    assert again.exemplars_for([f"part_{j}" for j in range(len(ch["names"]))], ch["parents"]) == []
    with np.load(tmp_path / "carrying.npz") as d:
        arrays = {k: d[k] for k in d.files if k != "exemplar/0/weights"}
    np.savez(tmp_path / "broken.npz", **arrays)
    with pytest.raises(BonesmithError, match="damaged"):
        N.SkinModel.load(tmp_path / "broken.npz")


def test_train_skin_keeps_the_characters_and_a_shipped_model_does_not(torch, tmp_path):
    from bonesmith.core.skinning import train
    chars = [tube_character(2.0, 3, softness=0.02, family="a", name="a1"),
             tube_character(2.0, 3, softness=0.02, family="a", name="a2"),
             tube_character(1.5, 4, softness=0.3, family="b", bend=0.2)]
    options = dict(epochs=2, lr=1e-3, seed=1, hidden=8, embed=4, hidden2=8)
    report = train.train_skin_model(chars, tmp_path / "m.npz", **options)
    model = N.load_model(tmp_path / "m.npz")
    assert report["carried_characters"] == 3 and [e["name"] for e in model.exemplars] == ["a1", "a2", "b"]
    a = chars[0]
    W, info = predict_weights(a["vertices"], a["faces"], a["joints"], a["parents"], a["tails"],
                              model=model, return_info=True)
    assert np.abs(W - artist(a)).max() < 1e-6 and info["carried"]["characters"] == 1   # a1 (or a2: one mesh)
    # a model trained to ship (bench/train_skin_default.py) carries none
    train.train_skin_model(chars, tmp_path / "ship.npz", carry_weights=False, **options)
    assert N.load_model(tmp_path / "ship.npz").exemplars == []
