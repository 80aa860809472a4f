# SPDX-License-Identifier: GPL-3.0-or-later
"""Training data from Blender, the Train Skin operator (background process, progress,
Esc, missing torch) and the active-skin-model preference."""
import json
import sys
import time

import numpy as np
import pytest

from conftest import Event, operator_stand_in, select


def rigged_humanoid(bridge, humanoid_skeleton, make_mesh, humanoid, name, *, stretch=1.0, location=(0, 0, 0)):
    """A humanoid mesh weighted (by Auto Skin) to a hand-made armature, both named `name`."""
    import bpy
    vertices, faces = humanoid
    obj = make_mesh(name, vertices * (1.0, 1.0, stretch), faces, location=location)
    skeleton = humanoid_skeleton(np.array(obj.matrix_world) @ np.diag([1.0, 1.0, stretch, 1.0]))
    armature = bridge.armature.skeleton_to_armature(skeleton, name=f"{name}_rig")
    select([obj, armature], armature)
    assert bpy.ops.bonesmith.auto_skin() == {'FINISHED'}
    return obj, armature


@pytest.fixture
def models_dir(ext_module, tmp_path, monkeypatch):
    """The trained-models folder, redirected to a temporary one (never the user's)."""
    prefs_module = ext_module("preferences")
    folder = tmp_path / "models"
    folder.mkdir()
    monkeypatch.setattr(prefs_module, "user_models_dir", lambda: folder)
    prefs = prefs_module.get()
    saved = prefs.active_skin_model
    yield folder
    prefs.active_skin_model = saved


@pytest.fixture
def prefs(ext_module):
    return ext_module("preferences").get()


# -- training data from Blender ---------------------------------------------------------------

def test_character_from_objects(bridge, ext_module, humanoid_skeleton, make_mesh, humanoid):
    training = ext_module("bridge.training_data")
    obj, armature = rigged_humanoid(bridge, humanoid_skeleton, make_mesh, humanoid, "a", location=(1, 2, 0))
    extra = obj.vertex_groups.new(name="not_a_bone")
    extra.add([0, 1], 1.0, 'REPLACE')
    ch = training.character_from_objects(armature, family="fam")
    names = [b.name for b in armature.data.bones]
    assert ch["names"] == names and ch["family"] == "fam"
    assert ch["weights"].shape == (len(obj.data.vertices), len(names))
    np.testing.assert_allclose(ch["weights"].sum(axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(ch["vertices"], humanoid[0] + (1, 2, 0), atol=1e-5)
    np.testing.assert_allclose(ch["joints"][names.index("spine")], (1, 2, 1.1), atol=1e-5)
    assert not ch["unweighted"].any()


@pytest.mark.parametrize("suffix", [".blend", ".fbx", ".glb"])
def test_load_rigged_file(bridge, ext_module, humanoid_skeleton, make_mesh, humanoid, tmp_path, suffix,
                          scene_state):
    import bpy
    training = ext_module("bridge.training_data")
    obj, armature = rigged_humanoid(bridge, humanoid_skeleton, make_mesh, humanoid, "hero")
    expected = training.character_from_objects(armature)
    path = tmp_path / f"hero_family{suffix}"
    if suffix == ".blend":
        bpy.data.libraries.write(str(path), {obj, armature})
    elif suffix == ".fbx":
        bridge.fbx.export_fbx(path, armature, [obj])
    else:
        select([obj, armature], armature)
        bpy.ops.export_scene.gltf(filepath=str(path), export_format='GLB', use_selection=True)
    before = scene_state()

    (ch,) = training.load_rigged_file(path)
    assert scene_state() == before                     # the import was cleaned up
    assert ch["family"] == "hero_family"
    assert sorted(ch["names"]) == sorted(expected["names"])
    order = [ch["names"].index(n) for n in expected["names"]]
    from scipy.spatial import cKDTree
    distance, index = cKDTree(ch["vertices"]).query(expected["vertices"])
    assert distance.max() < 1e-4
    np.testing.assert_allclose(ch["weights"][index][:, order], expected["weights"], atol=2e-3)
    np.testing.assert_allclose(ch["joints"][order], expected["joints"], atol=1e-4)


def test_load_rigged_file_refuses_unrigged(ext_module, make_mesh, humanoid, tmp_path, errors):
    import bpy
    training = ext_module("bridge.training_data")
    obj = make_mesh("plain", *humanoid)
    path = tmp_path / "plain.blend"
    bpy.data.libraries.write(str(path), {obj})
    with pytest.raises(errors.BonesmithError, match="no mesh weighted"):
        training.load_rigged_file(path)
    with pytest.raises(errors.BonesmithError, match="File not found"):
        training.load_rigged_file(tmp_path / "missing.fbx")
    with pytest.raises(errors.BonesmithError, match="Cannot read"):
        training.load_rigged_file(tmp_path / "x.obj")


def test_save_record_reads_back(bridge, ext_module, humanoid_skeleton, make_mesh, humanoid, tmp_path):
    training = ext_module("bridge.training_data")
    obj, armature = rigged_humanoid(bridge, humanoid_skeleton, make_mesh, humanoid, "a")
    ch = training.character_from_objects(armature, family="fam")
    path = ext_module("core.records").write(tmp_path / "a.npz", ch)
    with np.load(path) as record:
        np.testing.assert_allclose(record["weights"], ch["weights"], atol=1e-6)
        np.testing.assert_allclose(record["verts"], ch["vertices"], atol=1e-5)
        assert list(record["joint_names"]) == ch["names"] and str(record["family"]) == "fam"
        assert record["faces"].shape == ch["faces"].shape


# -- progress parsing and the background process -----------------------------------------------

def test_parse_progress(ext_module):
    parse = ext_module("operators.train_skin").parse_progress
    fraction, message = parse("epoch    3/10 [#######        ] train 0.1234  val 0.2")
    assert message == "epoch 3/10" and 0.15 < fraction < 1.0
    assert parse("epoch   10/10 [####] train 0.1")[0] == pytest.approx(1.0)
    assert parse("features 1/4 hero")[0] == pytest.approx(0.15 / 4)
    assert parse("epoch 2/5 step 1/3")[0] == pytest.approx(0.15 + 0.85 * 2 / 5)
    assert parse("train-skin: 2 characters, 2 families") is None


def test_process_job_success_progress_and_failure(ext_module):
    ProcessJob = ext_module("operators.job").ProcessJob
    parse = ext_module("operators.train_skin").parse_progress
    script = ("import sys\nsys.stderr.write('epoch 1/2 [#] \\rfeatures 2/2\\n')\n"
              "print('epoch 2/2 done', flush=True)\n")
    job = ProcessJob([sys.executable, "-c", script], parse=parse).start()
    assert job.wait(60)
    assert job.error is None and job.returncode == 0
    assert job.lines == ["epoch 1/2 [#]", "features 2/2", "epoch 2/2 done"]
    assert job.fraction == pytest.approx(1.0)

    failing = ProcessJob([sys.executable, "-c",
                          "import sys; print('bonesmith: error: the data is bad', file=sys.stderr); sys.exit(1)"]
                         ).start()
    assert failing.wait(60)
    assert "the data is bad" in str(failing.error) and failing.result is None


def test_process_job_cancel(ext_module, errors):
    ProcessJob = ext_module("operators.job").ProcessJob
    job = ProcessJob([sys.executable, "-c", "import time; print('epoch 1/9', flush=True); time.sleep(60)"]).start()
    deadline = time.monotonic() + 30
    while not job.lines:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    job.cancel()
    assert job.wait(20)
    assert isinstance(job.error, errors.Cancelled)
    assert job.process.poll() is not None


# -- the operator -------------------------------------------------------------------------------

def test_train_skin_without_torch_says_how_to_get_it(bridge, humanoid_skeleton, make_mesh, humanoid,
                                                    models_dir, monkeypatch):
    import bpy
    obj, _ = rigged_humanoid(bridge, humanoid_skeleton, make_mesh, humanoid, "a")
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` fails as if not installed
    select([obj], obj)
    with pytest.raises(RuntimeError) as error:
        bpy.ops.bonesmith.train_skin(epochs=1, model_name="tiny")
    text = str(error.value)
    assert "needs PyTorch" in text and "pip install torch==2.13.0" in text
    assert "python -m bonesmith train-skin" in text
    assert not list(models_dir.iterdir())


def test_train_skin_needs_rigged_meshes(make_mesh, humanoid, models_dir, monkeypatch, ext_module):
    import bpy
    monkeypatch.setattr(ext_module("operators.train_skin"), "torch_missing", lambda: False)
    make_mesh("plain", *humanoid)
    with pytest.raises(RuntimeError, match="None of the selected meshes is rigged"):
        bpy.ops.bonesmith.train_skin(epochs=1)
    select([], None)
    with pytest.raises(RuntimeError, match="select meshes weighted to an armature"):
        bpy.ops.bonesmith.train_skin(epochs=1)
    assert not list(models_dir.iterdir())


def make_rigid(obj):
    """An artist's near-rigid touch: every vertex keeps only its heaviest group, at 1."""
    for v in obj.data.vertices:
        groups = list(v.groups)
        heaviest = max(groups, key=lambda g: g.weight).group
        for g in groups:
            obj.vertex_groups[g.group].add([v.index], 1.0 if g.group == heaviest else 0.0, 'REPLACE')


def test_train_skin_learns_a_style_and_the_preference_picks_it(bridge, humanoid_skeleton, make_mesh, humanoid,
                                                                models_dir, prefs, ext_module, torch):
    """Two characters weighted rigidly (a style the shipped model does not have): training
    from the shipped model improves validation, so the model is kept and made active, and
    the sidebar shows the validation L1 before and after."""
    import bpy
    a, _ = rigged_humanoid(bridge, humanoid_skeleton, make_mesh, humanoid, "a")
    b, _ = rigged_humanoid(bridge, humanoid_skeleton, make_mesh, humanoid, "b", stretch=1.2, location=(3, 0, 0))
    make_rigid(a)
    make_rigid(b)
    rigid = [a.vertex_groups[max(v.groups, key=lambda g: g.weight).group].name for v in a.data.vertices]
    select([a, b], a)
    assert prefs.skin_model == "DEFAULT"
    assert bpy.ops.bonesmith.train_skin(epochs=20, model_name="tiny model") == {'FINISHED'}
    model = models_dir / "tiny_model.npz"
    assert model.is_file() and model.stat().st_size > 1000
    report = json.loads((models_dir / "tiny_model.npz.json").read_text())
    assert report["init"] == "the shipped default model" and not report["kept_start"]
    assert report["best_val_l1"] < report["start_val_l1"]
    assert prefs.active_skin_model == "tiny_model.npz" and prefs.skin_model == "tiny_model.npz"
    assert not [p for p in models_dir.iterdir() if p.name.endswith(".partial")]
    assert bpy.context.scene.bonesmith.train_result.startswith(
        f"Validation L1 {report['start_val_l1']:.3f} -> {report['best_val_l1']:.3f}")

    # Auto Skin now uses it ...
    auto_skin = ext_module("operators.auto_skin")
    armature = a.parent
    select([a, armature], armature)
    assert auto_skin.read_input(bpy.context).model == str(model)
    assert bpy.ops.bonesmith.auto_skin() == {'FINISHED'}
    # ... for the rig it learned (one template: both armatures have the same bones), which
    # the sidebar lists, and Auto Skin's report names
    rigs = bpy.context.scene.bonesmith.train_rigs.split("|")
    assert len(rigs) == 2 and rigs[0].startswith("+ ") and rigs[1].startswith("= 2 characters kept")
    _, which = ext_module("bridge.skin").compute(auto_skin.read_input(bpy.context), 4)
    assert which.startswith("the trained model (rig template")
    # a itself is a trained character: it gets its own (rigid) weights back, not b's (stretched)
    assert "with the weights of 1 trained character(s) on 100 % of the vertices" in which, which
    after, names = ext_module("bridge.weights").read_weights(a)
    assert np.array_equal(after[np.arange(len(after)), after.argmax(axis=1)], np.ones(len(after)))
    assert [names[k] for k in after.argmax(axis=1)] == rigid
    for bone in armature.data.bones:                 # another rig: the model it was trained from
        bone.name = f"other_{bone.name}"
    _, which = ext_module("bridge.skin").compute(auto_skin.read_input(bpy.context), 4)
    assert which.startswith("the shipped default model (the armature matches none"), which
    # ... until the shipped default is picked again
    prefs.skin_model = "DEFAULT"
    assert prefs.active_skin_model == "" and auto_skin.read_input(bpy.context).model is None


def test_train_skin_starts_from_the_active_model_and_keeps_it_without_improvement(
        bridge, humanoid_skeleton, make_mesh, humanoid, models_dir, prefs, ext_module, tmp_path):
    """The training command starts from the active model; a run that did not improve on
    validation (kept_start in its report) changes neither the models nor the preference."""
    import bpy
    module = ext_module("operators.train_skin")
    a, _ = rigged_humanoid(bridge, humanoid_skeleton, make_mesh, humanoid, "a")
    mine = models_dir / "mine.npz"
    mine.write_bytes(b"my model")
    prefs.active_skin_model = "mine.npz"
    select([a], a)
    op = operator_stand_in(module.BONESMITH_OT_train_skin, _tmp=None, _target=None, epochs=3,
                           model_name="mine", seed=0)
    job = op._prepare(module.selected_characters(bpy.context))
    assert job.command[job.command.index("--init") + 1] == str(mine)
    trained = op._tmp / "mine.npz"
    trained.write_bytes(b"the same model again")
    report = {"kept_start": True, "start_val_l1": 0.25, "best_val_l1": 0.25, "prior_val_l1": 0.3,
              "selection": "folds", "best_epoch": 0, "out": str(trained)}
    (op._tmp / "mine.npz.json").write_text(json.dumps(report))
    assert op.apply(bpy.context, None, []) == {'FINISHED'}
    assert mine.read_bytes() == b"my model" and prefs.active_skin_model == "mine.npz"
    assert "kept the start model" in op.reports[-1][1] and "unchanged" in op.reports[-1][1]
    assert bpy.context.scene.bonesmith.train_result == "Validation L1 0.250: no better model, kept the start"
    assert op._tmp is None
    # the same run from a Train Skin that keeps its characters (docs/auto_skin.md#carried-weights):
    # the network did not improve, but the model gives the character's own weights to its variants
    op = operator_stand_in(module.BONESMITH_OT_train_skin, _tmp=None, _target=None, epochs=3,
                           model_name="mine", seed=0)
    op._prepare(module.selected_characters(bpy.context))
    (op._tmp / "mine.npz").write_bytes(b"the start network and character a")
    (op._tmp / "mine.npz.json").write_text(json.dumps({**report, "carried_characters": 1}))
    assert op.apply(bpy.context, None, []) == {'FINISHED'}
    assert mine.read_bytes() == b"the start network and character a" and prefs.active_skin_model == "mine.npz"
    assert "now the active skin model" in op.reports[-1][1] and "keeps its 1 character:" in op.reports[-1][1]
    assert bpy.context.scene.bonesmith.train_rigs == "= 1 character kept: their weights go to variants of their bodies"


def _modal_train(ext_module, epochs, model_name):
    """A stand-in `self` for BONESMITH_OT_train_skin with its process started, as invoke()
    leaves it in the UI."""
    import bpy
    module = ext_module("operators.train_skin")
    cls = module.BONESMITH_OT_train_skin

    op = operator_stand_in(cls, _tmp=None, _target=None, epochs=epochs, model_name=model_name, seed=0)
    op._job = op._prepare(module.selected_characters(bpy.context)).start()
    return op


def test_train_skin_escape_keeps_the_previous_model(bridge, humanoid_skeleton, make_mesh, humanoid,
                                                    models_dir, prefs, ext_module, torch):
    import bpy
    a, _ = rigged_humanoid(bridge, humanoid_skeleton, make_mesh, humanoid, "a")
    b, _ = rigged_humanoid(bridge, humanoid_skeleton, make_mesh, humanoid, "b", stretch=1.2, location=(3, 0, 0))
    previous = models_dir / "mine.npz"
    previous.write_bytes(b"the previous model")
    prefs.active_skin_model = ""
    select([a, b], a)
    op = _modal_train(ext_module, epochs=100_000, model_name="mine")
    tmp = op._tmp
    assert tmp.is_dir()
    deadline = time.monotonic() + 120
    while op._job.fraction <= 0.15:          # wait until epochs run (the model is being trained)
        assert not op._job.done, op._job.lines
        assert time.monotonic() < deadline
        assert op.modal(bpy.context, Event('TIMER')) == {'PASS_THROUGH'}
        time.sleep(0.05)
    assert op.modal(bpy.context, Event('ESC', 'PRESS')) == {'CANCELLED'}
    assert op._job.done and op._job.process.poll() is not None
    assert previous.read_bytes() == b"the previous model"
    assert not tmp.exists()
    assert prefs.active_skin_model == ""
    assert op.reports == [({'INFO'}, "Train Skin cancelled")]


def test_train_skin_modal_failure_is_reported(bridge, humanoid_skeleton, make_mesh, humanoid, models_dir,
                                              ext_module, monkeypatch):
    """A training process that fails (here: the CLI refuses a bad epoch count) is reported
    with its own message and leaves nothing behind."""
    import bpy
    monkeypatch.setattr(ext_module("operators.train_skin"), "torch_missing", lambda: False)
    a, _ = rigged_humanoid(bridge, humanoid_skeleton, make_mesh, humanoid, "a")
    select([a], a)
    op = _modal_train(ext_module, epochs=1, model_name="bad")
    op._job.cancel()  # replaced below by a failing command
    op._job.wait(30)
    ProcessJob = ext_module("operators.job").ProcessJob
    op._job = ProcessJob([sys.executable, "-c",
                          "import sys; print('bonesmith: error: nothing to learn', file=sys.stderr); sys.exit(1)"]
                         ).start()
    deadline = time.monotonic() + 60
    while (result := op.modal(bpy.context, Event('TIMER'))) == {'PASS_THROUGH'}:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert result == {'CANCELLED'}
    assert 'ERROR' in op.reports[-1][0] and "nothing to learn" in op.reports[-1][1]
    assert op._tmp is None and not list(models_dir.iterdir())


# -- the active-skin-model preference ---------------------------------------------------------

def test_skin_model_preference_lists_trained_models(models_dir, prefs, ext_module):
    import bpy
    prefs_module = ext_module("preferences")
    (models_dir / "alpha.npz").write_bytes(b"x")
    (models_dir / "beta.npz").write_bytes(b"x")
    (models_dir / "notes.txt").write_text("not a model")
    items = [item.identifier for item in prefs.bl_rna.properties["skin_model"].enum_items] or None
    listed = [i[0] for i in prefs_module._skin_model_items(prefs, bpy.context)]
    assert listed == ["DEFAULT", "alpha.npz", "beta.npz"], items
    prefs.skin_model = "beta.npz"
    assert prefs.active_skin_model == "beta.npz" and prefs.skin_model == "beta.npz"
    assert prefs_module.active_skin_model() == (models_dir / "beta.npz", "")
    # a new file does not change which one is picked
    (models_dir / "aardvark.npz").write_bytes(b"x")
    assert prefs.skin_model == "beta.npz"
    # a deleted model falls back to the shipped default, with a warning
    (models_dir / "beta.npz").unlink()
    assert prefs.skin_model == "DEFAULT"
    path, warning = prefs_module.active_skin_model()
    assert path is None and "beta.npz" in warning and "shipped default" in warning


def test_cli_train_skin_on_blender_files(cli_with_bpy, bridge, humanoid_skeleton, make_mesh, humanoid, tmp_path,
                                         torch):
    """`train-skin` reads rigged characters from .blend and .fbx files through
    bridge.training_data (family = the file's name)."""
    import bpy
    a, rig_a = rigged_humanoid(bridge, humanoid_skeleton, make_mesh, humanoid, "a")
    bpy.data.libraries.write(str(tmp_path / "hero.blend"), {a, rig_a})
    b, rig_b = rigged_humanoid(bridge, humanoid_skeleton, make_mesh, humanoid, "b", stretch=1.2, location=(3, 0, 0))
    bridge.fbx.export_fbx(tmp_path / "giant.fbx", rig_b, [b])
    out = tmp_path / "model.npz"
    result = cli_with_bpy("train-skin", tmp_path / "hero.blend", tmp_path / "giant.fbx", "--out", out,
                          "--epochs", "2", timeout=900)
    assert result.returncode == 0, result.stderr
    assert "2 characters, 2 families" in result.stdout
    assert out.is_file()
