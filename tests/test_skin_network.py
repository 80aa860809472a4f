# SPDX-License-Identifier: GPL-3.0-or-later
"""Auto Skin's network: numpy inference vs torch, model files, training (loss, seed,
resume, cancel) and `python -m bonesmith train-skin` (no bpy needed)."""
import json

import numpy as np
import pytest

from bonesmith.core.errors import BonesmithError, Cancelled
from bonesmith.core.skinning import network as N
from bonesmith.core.skinning.features import vertex_features
from bonesmith.core.skinning.weights import scatter


def tube_character(length=2.0, n_bones=3, radius=0.2, rings=16, sides=8, softness=0.15,
                   family="tube", name=None, bend=0.0):
    """A capped tube along +x with a chain of bones on its axis and smooth artist weights
    (a blend of neighbouring bones around each joint, width `softness` x bone length)."""
    xs = np.linspace(0.0, length, rings)
    ang = np.linspace(0.0, 2 * np.pi, sides, endpoint=False)
    ring = np.stack([np.zeros(sides), radius * np.cos(ang), radius * np.sin(ang)], axis=1)
    V = np.concatenate([ring + [x, 0.0, bend * x * x] for x in xs])
    V = np.concatenate([V, [[0.0, 0.0, 0.0], [length, 0.0, bend * length * length]]])
    F = []
    for r in range(rings - 1):
        for s in range(sides):
            a, b = r * sides + s, r * sides + (s + 1) % sides
            F += [(a, b + sides, b), (a, a + sides, b + sides)]
    c0, c1 = len(V) - 2, len(V) - 1
    last = (rings - 1) * sides
    for s in range(sides):
        F += [(c0, s, (s + 1) % sides), (c1, last + (s + 1) % sides, last + s)]
    bx = np.linspace(0.0, length, n_bones + 1)
    joints = np.stack([bx[:-1], np.zeros(n_bones), bend * bx[:-1] ** 2], axis=1)
    tails = np.stack([bx[1:], np.zeros(n_bones), bend * bx[1:] ** 2], axis=1)
    parents = np.arange(n_bones) - 1
    bone_len = length / n_bones
    # artist weights: each bone's share by x, smoothed across joints
    x = V[:, 0]
    W = np.zeros((len(V), n_bones))
    for j in range(n_bones):
        lo = -np.inf if j == 0 else bx[j]
        hi = np.inf if j == n_bones - 1 else bx[j + 1]
        w = softness * bone_len
        W[:, j] = (1 / (1 + np.exp(-(x - lo) / w))) * (1 / (1 + np.exp((x - hi) / w)))
    W /= W.sum(axis=1, keepdims=True)
    return {"name": name or family, "vertices": V, "faces": np.array(F), "joints": joints,
            "tails": tails, "parents": parents, "weights": W, "family": family}


@pytest.fixture(scope="module")
def characters():
    return [tube_character(2.0, 3, family="a"), tube_character(1.5, 4, softness=0.3, family="b", bend=0.2),
            tube_character(2.5, 6, radius=0.3, softness=0.05, family="c"),
            tube_character(1.8, 2, family="d")]


@pytest.fixture(scope="module")
def features(characters):
    ch = characters[2]
    return vertex_features(ch["vertices"], ch["faces"], ch["joints"], ch["parents"], ch["tails"])


def perturbed(model, scale=0.5, seed=1):
    rng = np.random.default_rng(seed)
    model.params = {k: (v + scale * rng.standard_normal(v.shape)).astype(np.float32)
                    for k, v in model.params.items()}
    model.stats["shared_mean"] = rng.standard_normal(model.stats["shared_mean"].shape).astype(np.float32) * 0.1
    model.stats["cand_std"] = (1 + rng.random(model.stats["cand_std"].shape)).astype(np.float32)
    return model


def new_model(fs, **kw):
    from bonesmith.core.skinning.training_data import layout_of as _layout_of
    return N.SkinModel.untrained(fs.x.shape[1], _layout_of(fs), **kw)


# -- inference ------------------------------------------------------------------------------

def test_untrained_model_returns_the_prior(features):
    model = new_model(features)
    probs = model.predict(features)
    prior = np.where(features.mask, features.prior, 0.0)
    prior = prior / prior.sum(axis=1, keepdims=True)
    # log(prior + eps) softmax == prior up to the eps floor
    assert np.abs(probs - prior).max() < 5 * N.PRIOR_EPS * N.K
    assert np.allclose(probs.sum(axis=1), 1.0)


def test_numpy_forward_matches_torch(features, torch):
    from bonesmith.core.skinning.torch_net import TorchSkinNet
    model = perturbed(new_model(features, hidden=24, embed=8, hidden2=16))
    probs = model.predict(features)
    net = TorchSkinNet(model.params)
    with torch.no_grad():
        ref = net(*[torch.from_numpy(a) for a in model.inputs(features)]).exp().numpy()
    assert probs.shape == (features.n, N.K)
    assert np.abs(probs - ref).max() < 1e-5
    assert np.allclose(probs.sum(axis=1), 1.0)
    assert not np.allclose(probs, np.where(features.mask, features.prior, 0), atol=1e-2)


def test_masked_candidates_get_nothing(characters):
    ch = characters[3]                                     # 2 bones: 3 padded candidates
    fs = vertex_features(ch["vertices"], ch["faces"], ch["joints"], ch["parents"], ch["tails"])
    model = perturbed(new_model(fs))
    probs = model.predict(fs)
    assert not fs.mask[:, 2:].any()
    assert np.all(probs[:, 2:] == 0) and np.allclose(probs.sum(axis=1), 1.0)


def test_save_load_round_trip(features, tmp_path):
    model = perturbed(new_model(features))
    model.config["smooth"] = {"iterations": 2, "strength": 0.5}
    path = model.save(tmp_path / "m.npz")
    again = N.SkinModel.load(path)
    assert again.config == {**json.loads(json.dumps(model.config)), "version": 1}   # ungated: older readers read it
    for k in model.params:
        assert np.array_equal(again.params[k], model.params[k])
    assert np.array_equal(again.predict(features), model.predict(features))
    assert N.load_model(path) is N.load_model(path)          # cached


def test_smoothing_is_smooth(features):
    model = perturbed(new_model(features), scale=2.0)
    rough = model.predict(features)
    model.config["smooth"] = {"iterations": 4, "strength": 0.5}
    smooth = model.predict(features)
    assert np.allclose(smooth.sum(axis=1), 1.0)
    S, A, G, _ = N.surface_adjacency(features.mesh.V, features.mesh.F)

    def roughness(p):
        W = scatter(features.candidates, p, features.n_bones)
        return np.abs(W - S @ (A @ (G @ W))).sum(axis=1).mean()
    assert roughness(smooth) < 0.8 * roughness(rough)


def test_bad_model_files(tmp_path, features):
    bad = tmp_path / "bad.npz"
    for content in (b"not a zip", b"", b"PK\x03\x04 truncated"):
        bad.write_bytes(content)
        with pytest.raises(BonesmithError, match="Could not read the skin model bad.npz"):
            N.SkinModel.load(bad)
    np.savez(tmp_path / "other.npz", config=np.array("{}"))
    with pytest.raises(BonesmithError, match="not a Bonesmith skin model"):
        N.SkinModel.load(tmp_path / "other.npz")
    model = new_model(features)
    model.config["version"] = N.VERSION
    path = model.save(tmp_path / "future.npz")
    with np.load(path) as d:
        arrays = dict(d)
    arrays["config"] = np.array(json.dumps(dict(model.config, version=N.VERSION + 1)))
    np.savez(path, **arrays)
    with pytest.raises(BonesmithError, match="update Bonesmith"):
        N.SkinModel.load(path)
    model.config["n_features"] += 1
    with pytest.raises(BonesmithError, match=r"trained with another version of Bonesmith\. Train it again"):
        model.predict(features)


def test_predict_weights_with_a_model_file(characters, features, tmp_path):
    from bonesmith.core.skinning import predict_weights
    ch = characters[2]
    path = perturbed(new_model(features)).save(tmp_path / "m.npz")
    W = predict_weights(ch["vertices"], ch["faces"], ch["joints"], ch["parents"], ch["tails"],
                        model=path, max_influences=3)
    assert W.shape == ch["weights"].shape and np.allclose(W.sum(axis=1), 1.0)
    assert ((W > 0).sum(axis=1) <= 3).all()


def test_shipped_default_model_fits_the_features(features):
    if not N.DEFAULT_MODEL_PATH.is_file():
        pytest.skip("no default model shipped")
    model = N.default_model()
    assert model.config["n_features"] == features.x.shape[1]
    assert N.DEFAULT_MODEL_PATH.stat().st_size < 512 * 1024
    probs = model.predict(features)
    assert np.allclose(probs.sum(axis=1), 1.0)


def test_shipped_default_model_beats_the_prior_on_the_sample(sample_path):
    """The sample (Quaternius Male_Casual) is of a family the default model never saw
    (bench/splits.py). Fails when features.py changed under the model: retrain it
    (command in models/skin_default.md)."""
    if not N.DEFAULT_MODEL_PATH.is_file():
        pytest.skip("no default model shipped")
    from bonesmith.core.skinning import predict_weights
    with np.load(sample_path) as d:
        V, F, J, T, P = d["verts"], d["faces"], d["joints"], d["joint_tails"], d["parents"]
        star, weighted = d["weights"].astype(float), ~d["unweighted"]

    def l1(model):
        W = predict_weights(V, F, J, P, T, model=model)
        assert np.allclose(W.sum(axis=1), 1.0) and ((W > 0).sum(axis=1) <= 4).all()
        return np.abs(W - star).sum(axis=1)[weighted].mean()
    assert l1(None) < 0.6 * l1("prior")


# -- training -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def train(torch):
    from bonesmith.core.skinning import train as T
    return T


@pytest.fixture(scope="module")
def cached_features():
    cache = {}

    def fn(vertices, faces, joints, parents, tails):
        key = (len(vertices), float(np.asarray(vertices).sum()), len(joints))
        if key not in cache:
            cache[key] = vertex_features(vertices, faces, joints, parents, tails)
        return cache[key]
    return fn


def run(train, characters, path, cached_features, **kw):
    options = dict(epochs=6, lr=3e-3, seed=3, val_families=["c"], patience=50,
                   feature_fn=cached_features, hidden=16, embed=8, hidden2=16)
    options.update(kw)
    return train.train_skin_model(characters, path, **options)


def test_training_lowers_the_loss_and_is_deterministic(train, characters, cached_features, tmp_path):
    seen = []
    report = run(train, characters, tmp_path / "a.npz", cached_features, progress=seen.append)
    hist = report["history"]
    assert len(hist) == 6 and hist[-1]["train_loss"] < hist[0]["train_loss"]
    assert report["val"] == ["c"] and sorted(report["train"]) == ["a", "b", "d"]
    stages = {s["stage"] for s in seen}
    assert {"features", "step", "epoch", "done"} <= stages
    assert (tmp_path / "a.npz").is_file() and not (tmp_path / "a.npz.ckpt").exists()
    assert json.loads((tmp_path / "a.npz.json").read_text())["best_epoch"] == report["best_epoch"]
    again = run(train, characters, tmp_path / "b.npz", cached_features)
    assert [h["train_loss"] for h in again["history"]] == [h["train_loss"] for h in hist]
    a, b = N.SkinModel.load(tmp_path / "a.npz"), N.SkinModel.load(tmp_path / "b.npz")
    for k in a.params:
        assert np.array_equal(a.params[k], b.params[k])
    other = run(train, characters, tmp_path / "c.npz", cached_features, seed=4)
    assert other["history"][-1]["train_loss"] != hist[-1]["train_loss"]


def test_cancel_keeps_the_old_model_and_resume_matches(train, characters, cached_features, tmp_path):
    out = tmp_path / "m.npz"
    out.write_bytes(b"previous model")

    def stop_after_3(info):
        return not (info["stage"] == "epoch" and info["epoch"] == 3)

    with pytest.raises(Cancelled):
        run(train, characters, out, cached_features, progress=stop_after_3)
    assert out.read_bytes() == b"previous model"
    assert (tmp_path / "m.npz.ckpt").is_file()
    resumed = run(train, characters, out, cached_features, resume=True)
    assert [h["epoch"] for h in resumed["history"]] == list(range(1, 7))
    straight = run(train, characters, tmp_path / "s.npz", cached_features)
    assert [h["train_loss"] for h in resumed["history"]] == [h["train_loss"] for h in straight["history"]]
    a, b = N.SkinModel.load(out), N.SkinModel.load(tmp_path / "s.npz")
    for k in a.params:
        assert np.array_equal(a.params[k], b.params[k])
    # a checkpoint of another run is refused
    with pytest.raises(Cancelled):
        run(train, characters, out, cached_features, progress=stop_after_3)
    with pytest.raises(BonesmithError, match="another training run"):
        run(train, characters, out, cached_features, resume=True, lr=1e-2)


def test_early_stopping_never_hands_back_a_worse_model(train, characters, cached_features, tmp_path):
    """A run that cannot improve (lr 0) stops early, but not before MIN_EPOCHS, and hands
    back the start model (here a fresh one: the heat prior), saying so."""
    out = tmp_path / "m.npz"
    report = run(train, characters, out, cached_features, epochs=40, lr=0.0, patience=2)
    assert report["stopped_early"] and train.MIN_EPOCHS <= report["epochs_run"] < 40
    assert min(h["val_l1"] for h in report["history"]) > report["start_val_l1"] - train.IMPROVEMENT
    assert report["kept_start"] and report["best_epoch"] == 0
    assert report["best_val_l1"] == pytest.approx(report["start_val_l1"])
    assert report["start_val_l1"] == pytest.approx(report["prior_val_l1"], rel=0.01)   # prior + 1e-4 in the log
    assert not N.SkinModel.load(out).params["W2b"].any()      # the untrained network: the prior
    assert "kept the start model" in train.summary(report)


def rigid_tubes():
    """Five families in one near-rigid style (sharp blends at the joints) that the heat
    prior blurs: what a studio's own characters teach a fresh network."""
    return [tube_character(1.6 + 0.2 * i, 3 + i % 2, softness=0.02, family=f"f{i}", bend=0.1 * (i % 3))
            for i in range(5)]


def test_cross_validated_fine_tuning(train, cached_features, tmp_path):
    """Few rig templates: every character is scored by a fold model that trained on the
    other characters of its template, the chosen epoch count beats the start model on the
    templates it is kept for, and the run is deterministic and resumable."""
    chars = rigid_tubes()
    options = dict(epochs=8, lr=1e-2, seed=1, feature_fn=cached_features, hidden=16, embed=8, hidden2=16)
    report = train.train_skin_model(chars, tmp_path / "m.npz", **options)
    assert report["selection"] == "folds" and report["folds"] == 5
    assert len(report["cv_curve"]) == 9 and report["best_epoch"] > 0
    # tubes of 3 and of 4 bones (no names: compared by hierarchy): two rig templates
    rigs = report["templates"]
    assert sorted(len(t["members"]) for t in rigs) == [2, 3] and any(t["use"] for t in rigs)
    rows = report["val_characters"]
    assert sorted(r["name"] for r in rows) == [c["name"] for c in chars]
    curves = {r["name"]: r for r in rows}
    for t in rigs:             # the gated model's held-out L1: the network's where kept, the start's elsewhere
        for name in t["members"]:
            r = curves[name]
            assert r["l1"] == (r.get("network_l1", r["l1"]) if t["use"] else r["start_l1"])
    assert report["best_val_l1"] == pytest.approx(np.mean([r["l1"] for r in rows]))
    assert report["best_val_l1"] < 0.9 * report["start_val_l1"] and not report["kept_start"]
    assert N.SkinModel.load(tmp_path / "m.npz").gate["templates"][0]["pairs"]
    assert all(0.9 < r["coverage"] <= 1.0 for r in rows)
    assert len(report["history"]) == report["best_epoch"]          # the final run on all characters

    # cancelled in the third fold, resumed: the same model as the uninterrupted run
    out = tmp_path / "r.npz"
    with pytest.raises(Cancelled):
        train.train_skin_model(chars, out, progress=lambda i: not (i["stage"] == "epoch" and i["epoch"] == 19),
                               **options)
    resumed = train.train_skin_model(chars, out, resume=True, **options)
    assert resumed["cv_curve"] == report["cv_curve"]
    a, b = N.SkinModel.load(tmp_path / "m.npz"), N.SkinModel.load(out)
    for k in a.params:
        assert np.array_equal(a.params[k], b.params[k])


def test_one_character_is_judged_on_regions_of_its_body_and_resumes(train, cached_features, tmp_path):
    """A character alone (on its rig, or in the folder) trains: each fold holds out one
    region of its body; the network it keeps is the one trained for the chosen count,
    also after a run stopped in the final training and resumed."""
    chars = rigid_tubes()[:1]
    options = dict(epochs=8, lr=1e-2, seed=1, feature_fn=cached_features, hidden=16, embed=8, hidden2=16)
    report = train.train_skin_model(chars, tmp_path / "one.npz", **options)
    assert report["selection"] == "folds" and report["folds"] == 5
    (rig,) = report["templates"]
    assert rig["validated"] == "on held-out regions of the character" and rig["members"] == [chars[0]["name"]]
    assert rig["use"] and rig["epochs"] == report["best_epoch"] > 0
    assert rig["trained_l1"] < 0.9 * rig["start_l1"]
    out = tmp_path / "r.npz"
    stop = 5 * 8 + min(3, report["best_epoch"])          # in the final run on the character
    with pytest.raises(Cancelled):
        train.train_skin_model(chars, out, progress=lambda i: not (i["stage"] == "epoch" and i["epoch"] == stop),
                               **options)
    train.train_skin_model(chars, out, resume=True, **options)
    a, b = N.SkinModel.load(tmp_path / "one.npz"), N.SkinModel.load(out)
    for k in a.params:
        assert np.array_equal(a.params[k], b.params[k])


def test_fine_tuning_starts_from_the_given_model_and_keeps_it_when_nothing_helps(train, cached_features,
                                                                                 tmp_path):
    chars = rigid_tubes()
    first = tmp_path / "first.npz"
    train.train_skin_model(chars, first, epochs=8, lr=1e-2, seed=1, feature_fn=cached_features,
                           hidden=16, embed=8, hidden2=16)
    # lr 0 cannot change the start model: it is handed back, and the report says so
    report = train.train_skin_model(chars, tmp_path / "again.npz", init=first, epochs=3, lr=0.0,
                                    feature_fn=cached_features)
    assert report["kept_start"] and report["best_epoch"] == 0 and report["init"] == str(first)
    start, again = N.SkinModel.load(first), N.SkinModel.load(tmp_path / "again.npz")
    for k in start.params:
        assert np.array_equal(start.params[k], again.params[k])
    assert again.config["hidden"] == 16 and again.config["info"]["kept_start"]
    assert report["start_val_l1"] == pytest.approx(report["best_val_l1"])
    assert report["start_val_l1"] < report["prior_val_l1"]        # the start model had learned


def test_a_gain_within_the_noise_does_not_replace_the_start_model(train):
    from bonesmith.core.skinning.selection import clear_gain
    assert clear_gain([0.10, 0.12, 0.09])
    assert not clear_gain([0.30, -0.25, 0.02])        # better on average, by luck
    assert not clear_gain([0.05])                      # one character: no error estimate
    assert not clear_gain([])
    assert not clear_gain([1e-5] * 6)                  # consistent but negligible
    assert clear_gain([0.02, 0.03, np.nan, 0.025])     # a character without weights is skipped


def test_training_refuses_what_cannot_teach(train, cached_features, tmp_path):
    chars = rigid_tubes()
    out = tmp_path / "m.npz"
    with pytest.raises(BonesmithError, match="one or more rigged characters"):
        train.train_skin_model([], out, feature_fn=cached_features)
    no_weights = dict(chars[1], weights=np.zeros_like(chars[1]["weights"]), name="empty")
    with pytest.raises(BonesmithError, match="empty has no usable skin weights"):
        train.train_skin_model([chars[0], no_weights], out, feature_fn=cached_features)
    other_rig = dict(chars[1], weights=chars[1]["weights"][:, :2], name="mismatch")
    with pytest.raises(BonesmithError, match="mismatch: .*does not belong to this mesh"):
        train.train_skin_model([chars[0], other_rig], out, feature_fn=cached_features)
    centimetres = dict(chars[1], joints=chars[1]["joints"] * 0.01 + [0, 0, -5], name="tiny")
    with pytest.raises(BonesmithError, match="tiny: its armature does not fit its mesh"):
        train.train_skin_model([chars[0], centimetres], out, feature_fn=cached_features)
    fresh = N.SkinModel.untrained(12)
    fresh.save(tmp_path / "other.npz")
    with pytest.raises(BonesmithError, match="trained for 12 features per vertex"):
        train.train_skin_model(chars[:2], out, init=tmp_path / "other.npz", feature_fn=cached_features)
    assert not out.exists()


def test_split_by_family(train):
    chars = [{"name": f"{f}{i}", "family": f} for f in "abcdefghij" for i in range(2)]
    tr, va = train.split_by_family(chars, val_fraction=0.2, seed=0)
    assert len(va) == 4 and len({c["family"] for c in va}) == 2
    assert not {c["family"] for c in va} & {c["family"] for c in tr}
    assert train.split_by_family(chars, val_fraction=0.2, seed=0) == (tr, va)
    tr2, va2 = train.split_by_family(chars, val_families=["a"])
    assert [c["name"] for c in va2] == ["a0", "a1"] and len(tr2) == 18


def test_text_progress_lines(train):
    import io
    from bonesmith.cli.text_progress import text_progress
    out = io.StringIO()
    show = text_progress(out)
    show({"stage": "features", "done": 1, "total": 2, "name": "x"})
    show({"stage": "epoch", "epoch": 3, "epochs": 10, "train_loss": 0.5, "val_loss": 0.4,
          "val_l1": 0.2, "best_l1": 0.2, "best_epoch": 3})
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("features 1/2") and lines[1].startswith("epoch    3/10 [")


# -- the command line -----------------------------------------------------------------------

def write_record(path, ch):
    np.savez(path, verts=ch["vertices"].astype(np.float32), faces=ch["faces"].astype(np.int32),
             joints=ch["joints"].astype(np.float32), joint_tails=ch["tails"].astype(np.float32),
             parents=ch["parents"].astype(np.int32), weights=ch["weights"].astype(np.float32),
             family=np.array(ch["family"]))


def test_cli_train_skin_writes_a_model(cli, characters, tmp_path, torch):
    folder = tmp_path / "records"
    folder.mkdir()
    for ch in characters:
        write_record(folder / f"{ch['name']}.npz", ch)
    out = tmp_path / "model.npz"
    result = cli("train-skin", folder, "--out", out, "--epochs", "3", "--seed", "1", timeout=600)
    assert result.returncode == 0, result.stderr
    # 4 families, each alone on its rig: cross-validation in 5 folds (one region of each
    # body held out per fold) of 3 epochs, then the chosen count on all four
    assert "epoch   15/18" in result.stderr and "wrote" in result.stdout
    assert "cross-validation, 5 folds" in result.stdout
    rigs = result.stdout.split("rig templates")[1].splitlines()[1:5]   # 4 hierarchies: 4 templates, 1 each
    assert all("(on held-out regions of the character)" in line and "start model" in line for line in rigs), result.stdout
    assert "start model the shipped default model" in result.stdout
    table = [line.split() for line in result.stdout.splitlines() if line.split()[:1] in (["a"], ["b"], ["c"], ["d"])]
    assert sorted(row[0] for row in table) == ["a", "b", "c", "d"] and all(len(row) == 5 for row in table)
    model = N.SkinModel.load(out)
    info = model.config["info"]
    assert info["selection"] == "folds" and info["train_characters"] == 4
    assert info["best_val_l1"] <= info["start_val_l1"]
    # --resume without a checkpoint trains from the start; bad inputs are refused
    result = cli("train-skin", folder / "a.npz", folder / "b.npz", "--out", out, "--epochs", "1",
                 "--resume", timeout=600)
    assert result.returncode == 0, result.stderr
    bad = tmp_path / "bad.txt"
    bad.write_text("x")
    result = cli("train-skin", bad, "--out", out, timeout=120)
    assert result.returncode == 2 and "Cannot train on bad.txt" in result.stderr
    np.savez(tmp_path / "mesh_only.npz", verts=np.zeros((3, 3)), faces=np.array([[0, 1, 2]]))
    result = cli("train-skin", tmp_path / "mesh_only.npz", "--out", out, timeout=120)
    assert result.returncode == 2 and "not a rigged-character record" in result.stderr


def test_cli_train_skin_help(cli):
    result = cli("train-skin", "--help", timeout=60)
    assert result.returncode == 0 and "--resume" in result.stdout and "--epochs" in result.stdout


def _sample_l1(sample_path, change=None, model=None):
    """L1 to the artist's weights of the sample (changed by `change(V, J, T) -> (V, J, T, F)`)."""
    from bonesmith.core.skinning import predict_weights
    with np.load(sample_path) as d:
        V, F, J, T, P = (d[k].astype(float) for k in ("verts", "faces", "joints", "joint_tails", "parents"))
        star, weighted = d["weights"].astype(float), ~d["unweighted"]
    F, P = F.astype(np.int64), P.astype(np.int64)
    if change is not None:
        V, J, T, F = change(V, J, T, F)
    W = predict_weights(V, F, J, P, T, model=model)
    assert np.allclose(W.sum(axis=1), 1.0)
    return np.abs(W[:len(star)] - star).sum(axis=1)[weighted].mean()


@pytest.mark.parametrize("turn", ["facing +Y", "facing -X"])
def test_a_character_whose_armature_has_no_feet_is_weighted_alike_in_any_facing(sample_path, turn):
    """The sample's legs end at the ankle, so the armature does not say which way it
    faces and the file's front is kept. The shipped default model then scored L1 0.099
    facing +Y or -X against 0.043 facing -Y (issue 16; the 2026-12-02 default, trained on
    more characters, 0.071 against 0.043); the shipped default now uses the facing-free
    model (models/skin_any_front.npz, 0.048 in every facing) for such armatures."""
    if not N.ANY_FRONT_MODEL_PATH.is_file():
        pytest.skip("no facing-free model shipped")
    R = np.diag([-1.0, -1.0, 1.0]) if turn == "facing +Y" else np.array([[0, 1.0, 0], [-1.0, 0, 0], [0, 0, 1.0]])
    plain = _sample_l1(sample_path)
    turned = _sample_l1(sample_path, lambda V, J, T, F: (V @ R.T, J @ R.T, T @ R.T, F))
    assert turned < 1.15 * plain, (turned, plain)
    assert _sample_l1(sample_path, lambda V, J, T, F: (V @ R.T, J @ R.T, T @ R.T, F),
                      model=str(N.DEFAULT_MODEL_PATH)) > 1.3 * plain   # what it fixes


def test_a_prop_far_away_in_the_same_mesh_does_not_change_the_weights(sample_path):
    """A small copy of the sample one body-width to its side, in the same mesh: it used
    to widen the frame the network sees the character in (L1 0.081 vs 0.048)."""
    def with_prop(V, J, T, F):
        prop = (V - V.mean(axis=0)) * 0.1 + V.mean(axis=0) + [np.ptp(V, axis=0).max(), 0.0, 0.0]
        return np.vstack([V, prop]), J, T, np.vstack([F, F + len(V)])
    plain = _sample_l1(sample_path)
    assert _sample_l1(sample_path, with_prop) < 1.1 * plain


def test_shipped_facing_free_model_fits_the_features(features):
    if not N.ANY_FRONT_MODEL_PATH.is_file():
        pytest.skip("no facing-free model shipped")
    model = N.default_model(front_known=False)
    assert model.config["n_features"] == features.x.shape[1]
    assert N.ANY_FRONT_MODEL_PATH.stat().st_size < 512 * 1024
    assert model is not N.default_model()
