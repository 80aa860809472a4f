# SPDX-License-Identifier: GPL-3.0-or-later
"""Rig templates and the gate of a trained skin model (docs/auto_skin.md#house-style): a
model trained on a studio's characters weights the rigs it was validated on with its
trained network and every other rig as the model it was trained from."""
import json

import numpy as np
import pytest

from bonesmith.core.errors import BonesmithError
from bonesmith.core.skinning import network as N
from bonesmith.core.skinning import predict_weights, selection, templates
from test_skin_network import new_model, perturbed, tube_character

from bonesmith.core.skinning import vertex_features


# -- templates ----------------------------------------------------------------------------------

def test_a_rig_matches_itself_with_prefixes_and_a_prop_bone():
    names, parents = ["hips", "spine", "head", "thigh.L", "thigh.R"], [-1, 0, 1, 0, 0]
    stored = [templates.make(names, parents, "hero")]
    assert templates.match(stored, names, parents) == (0, 1.0)
    assert templates.match(stored, [f"mixamorig:{n.upper()}" for n in names], parents)[0] == 0
    assert templates.match(stored, [f"DEF-{n}" for n in names], parents)[0] == 0
    # an outfit with a sword bone: 5 of 6 pairs shared
    found, score = templates.match(stored, names + ["sword"], parents + [2])
    assert found == 0 and score == pytest.approx(5 / 6)
    # another family's rig does not match, nor the same names in another hierarchy
    assert templates.match(stored, ["root", "body", "neck", "leg_fl", "leg_fr"], parents)[0] is None
    assert templates.match(stored, names, [-1, 0, 1, 2, 3])[0] is None


def test_without_names_the_hierarchy_is_compared():
    parents = [-1, 0, 1, 0, 0]
    stored = [templates.make(None, parents)]
    assert templates.match(stored, None, parents)[0] == 0
    assert templates.match(stored, ["a", "b", "c", "d", "e"], parents)[0] == 0    # stored by index
    assert templates.match(stored, None, [-1, 0, 0, 0, 0])[0] is None
    by_name = [templates.make(["a", "b", "c", "d", "e"], parents)]
    assert templates.match(by_name, None, parents)[0] is None                   # names needed


def test_characters_are_grouped_by_template_and_labelled_by_family():
    rig = (["hips", "spine", "head"], [-1, 0, 1])
    other = (["body", "tail"], [-1, 0])
    chars = [{"name": "hero_a", "family": "hero_a", "names": rig[0], "parents": rig[1]},
             {"name": "horse", "family": "horse", "names": other[0], "parents": other[1]},
             {"name": "hero_b", "family": "hero_b", "names": rig[0], "parents": rig[1]}]
    index, found = templates.group(chars)
    assert index == [0, 1, 0]
    assert found[0]["members"] == ["hero_a", "hero_b"] and found[0]["label"] == "hero* (2)"
    assert found[1]["label"] == "horse"


# -- model selection -------------------------------------------------------------------------

def test_folds_spread_a_templates_characters():
    preps = [{"template": t} for t in (0, 0, 0, 1, 1, 2)]
    fold = selection.fold_groups(preps, 5, seed=0)
    assert len(set(fold[:3])) == 3 and fold[3] != fold[4]
    assert sorted(np.bincount(fold)) == [1, 1, 1, 1, 2]


def test_gate_keeps_the_templates_with_clear_gains():
    preps = [{"template": t} for t in (0, 0, 1, 1, 2, 3)]
    groups = selection.gate_groups(preps)
    assert groups == {0: [0, 1], 1: [2, 3], 2: [4], 3: [5]}
    # held-out L1 after epochs 0..2: template 0 gains at both epochs, template 1 loses;
    # one held-out unit alone never shows a clear gain
    table = np.array([[0.5, 0.40, 0.30], [0.6, 0.50, 0.45],
                      [0.5, 0.55, 0.60], [0.5, 0.52, 0.58],
                      [0.7, 0.50, 0.40], [0.7, 0.90, 0.95]])
    assert selection.choose_gate(table, groups) == {0: 2, 1: 0, 2: 0, 3: 0}
    # each template at its own epoch count: template 1 gains clearly only after one epoch
    table[2:4, 1] = [0.45, 0.44]
    assert selection.choose_gate(table, groups) == {0: 2, 1: 1, 2: 0, 3: 0}
    # nothing gains clearly: epoch 0, the start model
    assert selection.choose_gate(table[4:6], {0: [0], 1: [1]}) == {0: 0, 1: 0}


def test_a_character_alone_on_its_rig_is_judged_on_held_out_regions_of_its_body():
    class Features:
        candidates = np.array([[b, 0] for b in (0, 0, 1, 1, 2, 2, 3, 3, 4, 5)])
    rows = len(Features.candidates)
    prep = {"features": Features(), "mask": np.ones(rows, bool), "weighted": np.ones(rows, bool)}
    preps = [{"template": 0}, {"template": 0}, {**prep, "template": 1}]
    units, singles = selection.validation_units(preps, 3)
    assert singles == [2] and units == [(0, None), (1, None), (2, 0), (2, 1), (2, 2)]
    regions = selection.body_regions(prep, 3, seed=0)
    # a bone's territory lies in one region; the six bones dealt two to each region
    assert all(len(set(regions[Features.candidates[:, 0] == b])) == 1 for b in range(6))
    assert np.bincount(regions[[0, 2, 4, 6, 8, 9]], minlength=3).tolist() == [2, 2, 2]
    for f in range(3):
        train, held = selection.region_views(prep, regions, f)
        assert not (train["mask"] & held["mask"]).any() and (train["mask"] | held["mask"]).all()
        assert np.array_equal(held["weighted"], regions == f)
    # the gate judges the single character on its regions' gains; its curve weights
    # them by their rows
    table = np.array([[0.5, 0.4], [0.5, 0.45], [0.6, 0.50], [0.6, 0.52], [0.6, 0.49]])
    groups = {0: [0, 1], 1: [2, 3, 4]}
    assert selection.choose_gate(table, groups) == {0: 1, 1: 1}
    curves = selection._character_curves(table, units, {2: regions}, 3)
    size = np.bincount(regions, minlength=3)
    assert curves[2, 1] == pytest.approx((size * [0.50, 0.52, 0.49]).sum() / rows)
    assert np.array_equal(curves[0], table[0])


# -- the gated model -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def tube():
    ch = tube_character(2.5, 6, radius=0.3, softness=0.05, family="c")
    ch["names"] = [f"bone_{j}" for j in range(len(ch["joints"]))]
    return ch


def gated(fs, ch, use=True):
    start = perturbed(new_model(fs), seed=2)
    trained = perturbed(new_model(fs), seed=3)
    trained.stats = start.stats
    rig = {**templates.make(ch["names"], ch["parents"], "tubes"), "use": use, "start_l1": 0.3,
           "trained_l1": 0.2}
    trained.config["gate"] = {"templates": [rig], "fallback_name": "the start model"}
    trained.fallback = start
    return trained, start


def test_a_gated_model_weights_only_its_templates(tube, tmp_path):
    ch = tube
    fs = vertex_features(ch["vertices"], ch["faces"], ch["joints"], ch["parents"], ch["tails"])
    trained, start = gated(fs, ch)
    path = trained.save(tmp_path / "gated.npz")
    model = N.SkinModel.load(path)
    assert model.config["version"] == 2 and model.gate["templates"][0]["label"] == "tubes"
    args = (ch["vertices"], ch["faces"], ch["joints"], ch["parents"], ch["tails"])
    W, info = predict_weights(*args, model=model, names=ch["names"], return_info=True)
    assert info["model"] == "the trained model (rig template 'tubes')"
    W_trained = predict_weights(*args, model=trained.ungated())
    np.testing.assert_array_equal(W, W_trained)
    # another rig (other names): the start model's weights exactly
    other = [f"part_{j}" for j in range(len(ch["names"]))]
    W, info = predict_weights(*args, model=model, names=other, return_info=True)
    np.testing.assert_array_equal(W, predict_weights(*args, model=start))
    assert info["model"].startswith("the start model (the armature matches none")
    assert not np.allclose(W, W_trained)
    # a template training did not improve: the start model too
    kept_out, _ = gated(fs, ch, use=False)
    W, info = predict_weights(*args, model=kept_out, names=ch["names"], return_info=True)
    np.testing.assert_array_equal(W, predict_weights(*args, model=start))
    assert "did not improve the rig template 'tubes'" in info["model"]


def test_a_gate_nests_and_a_damaged_file_is_refused(tube, tmp_path):
    ch = tube
    fs = vertex_features(ch["vertices"], ch["faces"], ch["joints"], ch["parents"], ch["tails"])
    inner, start = gated(fs, ch)
    outer = perturbed(new_model(fs), seed=4)
    outer.stats = start.stats
    outer.config["gate"] = {"templates": [{**templates.make(["x", "y"], [-1, 0], "other"), "use": True}],
                            "fallback_name": "the earlier model"}
    outer.fallback = inner
    again = N.SkinModel.load(outer.save(tmp_path / "nested.npz"))
    chosen, why = again.for_rig(ch["names"], ch["parents"])      # not outer's rig: the inner model decides
    assert why == "the trained model (rig template 'tubes') (the armature matches none of the rig " \
                  "templates it was trained on (best 0.00))"
    for k in inner.params:
        assert np.array_equal(chosen.params[k], inner.params[k])
    # a gate without its fallback is refused, not silently used for every rig
    with np.load(tmp_path / "nested.npz") as d:
        arrays = {k: d[k] for k in d.files if not k.startswith("fallback/")}
    np.savez(tmp_path / "broken.npz", **arrays)
    with pytest.raises(BonesmithError, match="damaged"):
        N.SkinModel.load(tmp_path / "broken.npz")
    assert json.loads(str(arrays["config"]))["gate"]


def test_each_template_gets_the_network_trained_for_its_own_epoch_count(tube, tmp_path):
    from bonesmith.core.skinning import train
    ch = tube
    fs = vertex_features(ch["vertices"], ch["faces"], ch["joints"], ch["parents"], ch["tails"])
    start = perturbed(new_model(fs), seed=2)
    short, long = (perturbed(new_model(fs), seed=k).params for k in (3, 4))
    rigs = {"hero": (ch["names"], ch["parents"]), "horse": (["body", "tail"], [-1, 0]),
            "bird": (["root", "wing"], [-1, 0])}
    rows = [{**templates.make(*rig, label), "epochs": e, "use": e > 0, "start_l1": 0.3, "trained_l1": 0.2}
            for (label, rig), e in zip(rigs.items(), (5, 2, 0))]
    chained = train._gated_chain(start, {2: short, 5: long}, rows, start, "the start model")
    model = N.SkinModel.load(chained.save(tmp_path / "chain.npz"))
    def network(label):
        chosen, why = model.for_rig(*rigs[label])
        return chosen.params["W1a"], why
    W, why = network("hero")
    assert np.array_equal(W, long["W1a"]) and why == "the trained model (rig template 'hero')"
    W, why = network("horse")
    assert np.array_equal(W, short["W1a"]) and why == "the trained model (rig template 'horse')"
    W, why = network("bird")
    assert np.array_equal(W, start.params["W1a"])
    assert why == "the start model (training did not improve the rig template 'bird')"
