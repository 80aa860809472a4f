# SPDX-License-Identifier: GPL-3.0-or-later
"""Learn / Bake Correctives, Train Joint Regressor, Fit Armature and the Correctives panel."""
import json
import time
from pathlib import Path

import numpy as np
import pytest

import test_correctives_bridge as helpers  # a module, so its tests are not collected twice

from conftest import Event, key_rotations, operator_stand_in, select

record = helpers.record
bc, cc = helpers.bc, helpers.cc
rig_sample, names_of = helpers.rig_sample, helpers.names_of


@pytest.fixture
def models_dir(ext_module, tmp_path, monkeypatch):
    """The folder learned correctives go to, under a temporary user folder."""
    folder = tmp_path / "models"
    folder.mkdir()
    monkeypatch.setattr(ext_module("preferences"), "user_models_dir", lambda: folder)
    import bpy
    props = ("bonesmith_joint_regressor", "bonesmith_correctives_family")
    for prop in props:
        bpy.context.scene.pop(prop, None)   # (the scene outlives a test)
    yield folder / "correctives"
    for prop in props:
        bpy.context.scene.pop(prop, None)


def state(scene_state):
    """scene_state() plus what the correctives touch: pose channels, custom properties,
    shape keys, vertex groups, hidden objects, bone positions."""
    import bpy
    s = scene_state()
    s["pose"] = {(o.name, pb.name): (pb.rotation_mode, tuple(np.round(pb.rotation_quaternion, 6)),
                                     tuple(np.round(pb.rotation_euler, 6)), tuple(pb.location))
                 for o in bpy.data.objects if o.type == 'ARMATURE' for pb in o.pose.bones}
    s["props"] = {o.name: sorted(o.keys()) for o in bpy.data.objects}
    s["scene_props"] = sorted(bpy.context.scene.keys())
    s["keys"] = {o.name: [kb.name for kb in o.data.shape_keys.key_blocks] if o.type == 'MESH' and o.data.shape_keys else None
                 for o in bpy.data.objects}
    s["groups"] = {o.name: [g.name for g in o.vertex_groups] for o in bpy.data.objects if o.type == 'MESH'}
    s["hidden"] = {o.name: o.hide_get() for o in bpy.data.objects}
    s["bones"] = {(o.name, b.name): tuple(np.round(b.head_local, 6)) for o in bpy.data.objects
                  if o.type == 'ARMATURE' for b in o.data.bones}
    return s


def learn(ext_module, record, **kw):
    """The sample with Preserve Volume (the ground truth plain LBS misses), learned from
    random poses through the operator."""
    import bpy
    armature, obj, rest, joints = rig_sample(ext_module, record, preserve_volume=True, moved=True)
    select([armature], armature)
    assert bpy.ops.bonesmith.learn_correctives(**{"poses": 40, "max_degrees": 50, **kw}) == {'FINISHED'}
    return armature, obj, rest, joints


def errors_against_truth(bc, cc, armature, original, copy, record, joints, names, rotations):
    """Mean distance to the ground truth (the original's deformers) of the baked copy and
    of plain LBS with the artist's weights, over `rotations`."""
    baked, plain = [], []
    for R in rotations:
        bc.set_pose(armature, names, R)
        truth = bc.evaluated_vertices([original])
        baked.append(np.linalg.norm(bc.evaluated_vertices([copy]) - truth, axis=1).mean())
        rest = bc.character_arrays(armature, [original])["vertices"]
        lbs = cc.lbs(rest, record["weights"], cc.skinning_matrices(joints, record["parents"], R[None]))[0]
        plain.append(np.linalg.norm(lbs - truth, axis=1).mean())
    return float(np.mean(baked)), float(np.mean(plain))


# -- Learn Correctives ------------------------------------------------------------------------------

def test_registered_and_undoable(ext_module):
    import bpy
    module = ext_module("operators.correctives")
    for cls in module.classes:
        assert cls.bl_idname.startswith("bonesmith.") and cls.__name__.startswith("BONESMITH_OT_")
        assert {'REGISTER', 'UNDO'} <= set(cls.bl_options)
        assert hasattr(bpy.types, cls.__name__)


def test_learn_random_poses(scene, ext_module, record, bc, cc, models_dir, scene_state):
    import bpy
    armature, obj, rest, joints = rig_sample(ext_module, record, preserve_volume=True, moved=True)
    before = state(scene_state)
    select([obj], obj)                       # a rigged mesh finds its armature
    assert bpy.ops.bonesmith.learn_correctives(poses=40, max_degrees=50) == {'FINISHED'}
    path = Path(armature["bonesmith_correctives"])
    assert path == models_dir / "untitled_body_rig.npz" and path.is_file()   # an unsaved file
    info = json.loads(path.with_suffix(".json").read_text())
    assert info["bones"] == names_of(record) and info["meshes"] == ["body"] and info["poses"] == 40
    error = info["training_error"]
    assert error["model_mean_pct"] < 0.5 * error["lbs_mean_pct"] and error["lbs_mean_pct"] > 0.05
    model = cc.CorrectiveModel.load(path)
    assert model.weights.shape == record["weights"].shape
    after = state(scene_state)
    assert after.pop("props")["body_rig"] == ["bonesmith_correctives"]
    before.pop("props")
    assert after == before                   # the pose came back, nothing else changed


def test_learn_from_the_action(scene, ext_module, record, bc, models_dir):
    import bpy
    armature, obj, rest, joints = rig_sample(ext_module, record, preserve_volume=True)
    key_rotations(armature, "wave", [("UpperArm.L", (0, 1, 0)), ("LowerLeg.R", (1, 0, 0))],
                  [(1, 0.0), (8, 1.3)])
    select([armature], armature)
    assert bpy.ops.bonesmith.learn_correctives(source='ACTION', frame_step=2) == {'FINISHED'}
    info = json.loads(Path(armature["bonesmith_correctives"]).with_suffix(".json").read_text())
    assert info["poses"] == 4 and info["source"] == "action 'wave'"


@pytest.mark.parametrize("case", ["nothing", "no_armature", "two_topologies", "unweighted", "single_pose",
                                  "one_frame_action", "no_action", "subdivision"])
def test_learn_bad_input_changes_nothing(scene, ext_module, record, models_dir, scene_state, case):
    import bpy
    armature, obj, rest, joints = rig_sample(ext_module, record)
    kw = dict(poses=5)
    select([armature], armature)
    if case == "nothing":
        select([], None)
        message = "Nothing is selected"
    elif case == "no_armature":
        plain = bpy.data.objects.new("plain", obj.data.copy())
        bpy.context.scene.collection.objects.link(plain)
        select([plain], plain)
        message = "No armature"
    elif case == "two_topologies":   # several characters learn a family only if they share a mesh
        import bmesh
        other = armature.copy()
        other.data = armature.data.copy()
        twin = obj.copy()
        twin.data = obj.data.copy()
        bm = bmesh.new()
        bm.from_mesh(twin.data)
        bm.verts.ensure_lookup_table()
        bmesh.ops.delete(bm, geom=[bm.verts[0]], context='VERTS')
        bm.to_mesh(twin.data)
        bm.free()
        twin.modifiers[0].object = other
        for o in (other, twin):
            bpy.context.scene.collection.objects.link(o)
        select([obj, twin], obj)
        message = r"'body_rig.001' \(940 vertices\) and 'body_rig' \(941 vertices\) do not share one topology"
    elif case == "unweighted":
        for group in obj.vertex_groups:
            group.remove([0])
        message = "1 vertices of 'body' have no weights"
    elif case == "single_pose":
        kw = dict(poses=1)
        message = "at least 2 poses"
    elif case in ("one_frame_action", "no_action"):
        kw = dict(source='ACTION')
        message = "at least 2 poses" if case == "one_frame_action" else "has no active action"
        if case == "one_frame_action":
            armature.animation_data_create()
            armature.animation_data.action = bpy.data.actions.new("still")
            armature.pose.bones["Head"].keyframe_insert("location", frame=1)
    else:
        obj.modifiers.new("Subdivision", 'SUBSURF')
        message = r"'Subdivision' \(Subdivision Surface\) changes the vertex count"
    before = state(scene_state)
    with pytest.raises(RuntimeError, match=message):
        bpy.ops.bonesmith.learn_correctives(**kw)
    assert state(scene_state) == before
    assert not models_dir.exists() or not list(models_dir.iterdir())


def _modal_learn(ext_module, **props):
    """A stand-in `self` for the operator with its sampling stage started, as invoke()
    leaves it in the UI."""
    import bpy
    module = ext_module("operators.correctives")
    cls = module.BONESMITH_OT_learn_correctives

    settings = dict(source='RANDOM', poses=12, max_degrees=50.0, frame_step=1, seed=0, max_keys=0)
    op = operator_stand_in(cls, _job=None, **{**settings, **props})
    op._input = module.plan_learning(bpy.context, op)
    member = op._input.members[0]
    armature, meshes = module._objects(member, "test")
    op._job = module.Sampling([(armature, meshes, member.rotations, member.character["names"])], seconds=0.0)
    return op, module


def test_modal_learn_samples_then_fits(scene, ext_module, record, models_dir, scene_state):
    import bpy
    armature, obj, rest, joints = rig_sample(ext_module, record, preserve_volume=True)
    limit = armature.pose.bones["Neck"].constraints.new('LIMIT_ROTATION')
    limit.use_limit_x = limit.use_limit_y = limit.use_limit_z = True
    limit.owner_space = 'LOCAL'
    select([armature], armature)
    op, module = _modal_learn(ext_module)
    stages = []
    deadline = time.monotonic() + 120
    while (result := op.modal(bpy.context, Event('TIMER'))) == {'PASS_THROUGH'}:
        stages.append(type(op._job).__name__)
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert result == {'FINISHED'}, op.reports
    assert stages[0] == "Sampling" and stages.count("Sampling") >= 11 and "Job" in stages
    assert Path(armature["bonesmith_correctives"]).is_file()
    kind, message = op.reports[-1]
    assert "Learn Correctives: 12 poses" in message
    assert kind == {'WARNING'} and "Constraints changed the pose of 1 bones (Neck)" in message


def test_modal_learn_escape_restores_the_pose(scene, ext_module, record, models_dir, scene_state):
    import bpy
    from mathutils import Quaternion
    armature, obj, rest, joints = rig_sample(ext_module, record)
    armature.pose.bones["Neck"].rotation_quaternion = Quaternion((1, 0, 0), 0.4)
    select([armature], armature)
    before = state(scene_state)
    op, module = _modal_learn(ext_module)
    assert op.modal(bpy.context, Event('TIMER')) == {'PASS_THROUGH'}
    assert op._job.fraction == pytest.approx(1 / 12)
    assert state(scene_state) != before      # a sampled pose is on the bones meanwhile
    assert op.modal(bpy.context, Event('ESC', 'PRESS')) == {'CANCELLED'}
    assert state(scene_state) == before
    assert op.reports == [({'INFO'}, "Learn Correctives cancelled")]
    assert not models_dir.exists()


# -- Bake Correctives -------------------------------------------------------------------------------

def test_bake_live_reproduces_the_deformers(scene, ext_module, record, bc, cc, models_dir):
    import bpy
    armature, obj, rest, joints = learn(ext_module, record, poses=200)
    names = names_of(record)
    select([armature], armature)
    assert bpy.ops.bonesmith.bake_correctives(mode='LIVE') == {'FINISHED'}
    copy = bpy.data.objects["body_LBS"]
    assert obj.hide_get() and not copy.hide_get()
    assert [(m.type, m.use_deform_preserve_volume) for m in copy.modifiers] == [('ARMATURE', False)]
    keys = [kb for kb in copy.data.shape_keys.key_blocks if kb.name.startswith("BSC_")]
    model = cc.CorrectiveModel.load(Path(armature["bonesmith_correctives"]))
    assert len(keys) == len(model.live_keys(bc.bone_rest_rotations(armature, names))) > 0
    drivers = copy.data.shape_keys.animation_data.drivers
    assert len(drivers) == len(keys) and all(d.driver.is_simple_expression for d in drivers)
    # new poses, not the training ones: the copy is much nearer to Preserve Volume than LBS
    rotations = cc.random_rotations(record["parents"], 4, max_degrees=50, seed=99)
    baked, plain = errors_against_truth(bc, cc, armature, obj, copy, record, joints, names, rotations)
    assert baked < 0.75 * plain, (baked, plain)
    # and it is the model's own result
    for R in rotations:
        bc.set_pose(armature, names, R)
        gap = np.linalg.norm(bc.evaluated_vertices([copy]) - model.pose(R[None])[0], axis=1)
        assert gap.mean() < 0.02 * plain and gap.max() < 0.2 * plain, (gap.mean(), gap.max(), plain)
    # baking again reuses the copy and replaces its keys
    assert bpy.ops.bonesmith.bake_correctives(mode='LIVE') == {'FINISHED'}
    assert [o.name for o in bpy.data.objects if o.name.startswith("body_LBS")] == ["body_LBS"]
    assert len(copy.data.shape_keys.animation_data.drivers) == len(keys)


def test_max_shape_keys(scene, ext_module, record, bc, cc, models_dir):
    """Learning with Max Shape Keys gives a live bake of exactly that many keys, which still
    reproduces the (compact) model."""
    import bpy
    armature, obj, rest, joints = learn(ext_module, record, max_keys=8)
    select([armature], armature)
    assert bpy.ops.bonesmith.bake_correctives(mode='LIVE') == {'FINISHED'}
    copy = bpy.data.objects["body_LBS"]
    assert len([kb for kb in copy.data.shape_keys.key_blocks if kb.name.startswith("BSC_")]) == 8
    model = cc.CorrectiveModel.load(Path(armature["bonesmith_correctives"]))
    for R in cc.random_rotations(record["parents"], 2, max_degrees=50, seed=7):
        bc.set_pose(armature, names_of(record), R)
        expected = model.pose(R[None])[0]
        assert np.linalg.norm(bc.evaluated_vertices([copy]) - expected, axis=1).max() < 1e-4


def test_bake_keyed_and_weights_only(scene, ext_module, record, bc, cc, models_dir):
    import bpy
    armature, obj, rest, joints = learn(ext_module, record)
    key_rotations(armature, "bend", [("LowerArm.L", (0, 0, 1))], [(1, 0.0), (5, 1.2)])
    select([armature], armature)
    assert bpy.ops.bonesmith.bake_correctives(mode='KEYED') == {'FINISHED'}
    copy = bpy.data.objects["body_LBS"]
    shape_keys = copy.data.shape_keys
    fcurves = bc._fcurves(shape_keys.animation_data)
    ours = [kb for kb in shape_keys.key_blocks if kb.name.startswith("BSC_")]
    assert len(fcurves) == len(ours) > 0 and not shape_keys.animation_data.drivers
    assert all([p.co[0] for p in fc.keyframe_points] == [1, 2, 3, 4, 5] for fc in fcurves)
    model = cc.CorrectiveModel.load(Path(armature["bonesmith_correctives"]))
    for frame in (3, 5):      # the keyed copy is the model's result, nearer the truth than LBS
        bpy.context.scene.frame_set(frame)
        truth, baked = bc.evaluated_vertices([obj]), bc.evaluated_vertices([copy])
        R = bc.read_pose(armature, names_of(record))
        plain = cc.lbs(rest, record["weights"], cc.skinning_matrices(joints, record["parents"], R[None]))[0]
        error = np.linalg.norm(plain - truth, axis=1).mean()
        assert np.linalg.norm(baked - model.pose(R[None])[0], axis=1).mean() < 0.02 * error
        assert np.linalg.norm(baked - truth, axis=1).mean() < 0.9 * error

    assert bpy.ops.bonesmith.bake_correctives(mode='WEIGHTS') == {'FINISHED'}
    assert copy.data.shape_keys is None
    got = ext_module("bridge.weights").read_weights(copy, names_of(record))[0]
    expected = np.where(model.weights > 1e-4, model.weights, 0.0)
    np.testing.assert_allclose(got, expected, atol=1e-5)
    assert not np.allclose(model.weights, record["weights"], atol=1e-3)   # they were refined


def test_learn_bake_export_round_trip(scene, ext_module, record, bc, models_dir, tmp_path):
    """Learn → Bake (keyed) → Export FBX with animation: the file has the plain-LBS copy (the
    hidden original stays out) with its corrective shape keys and their per-frame values."""
    import bpy
    armature, obj, rest, joints = learn(ext_module, record, poses=10)
    key_rotations(armature, "bend", [("UpperArm.L", (0, 1, 0))], [(1, 0.0), (4, 1.0)])
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = 1, 4
    select([armature], armature)
    assert bpy.ops.bonesmith.bake_correctives(mode='KEYED') == {'FINISHED'}
    copy = bpy.data.objects["body_LBS"]
    names = [kb.name for kb in copy.data.shape_keys.key_blocks]
    curves = {fc.data_path: [fc.evaluate(f) for f in range(1, 5)] for fc in bc._fcurves(copy.data.shape_keys.animation_data)}
    path = tmp_path / "baked.fbx"
    assert bpy.ops.bonesmith.export_fbx(filepath=str(path), bake_anim=True) == {'FINISHED'}
    helpers.empty_scene()
    bpy.ops.import_scene.fbx(filepath=str(path))
    (mesh,) = [o for o in bpy.data.objects if o.type == 'MESH']
    assert mesh.name == "body_LBS" and [kb.name for kb in mesh.data.shape_keys.key_blocks] == names
    got = {fc.data_path: [fc.evaluate(f) for f in range(1, 5)] for fc in bc._fcurves(mesh.data.shape_keys.animation_data)}
    moving = [p for p, v in curves.items() if np.ptp(v) > 0.05]
    assert moving and set(moving) <= set(got)
    for data_path in moving:
        np.testing.assert_allclose(got[data_path], curves[data_path], atol=2e-3)


@pytest.mark.parametrize("case", ["not_learned", "file_gone", "mesh_edited", "no_action", "bone_moved"])
def test_bake_bad_input_changes_nothing(scene, ext_module, record, models_dir, scene_state, case):
    import bpy
    import bmesh
    if case == "not_learned":
        armature, obj, rest, joints = rig_sample(ext_module, record)
        message = "no learned correctives"
    else:
        armature, obj, rest, joints = learn(ext_module, record, poses=8)
    mode = 'LIVE'
    if case == "file_gone":
        Path(armature["bonesmith_correctives"]).unlink()
        message = "missing"
    elif case == "mesh_edited":
        bm = bmesh.new()
        bm.from_mesh(obj.data)
        bm.verts.new((9.0, 9.0, 9.0))
        bm.to_mesh(obj.data)
        bm.free()
        message = "edited since"
    elif case == "no_action":
        mode = 'KEYED'
        message = "needs an action"
    elif case == "bone_moved":
        ext_module("bridge.correctives").fit_armature(armature, joints[:1] + 0.1, joints[:1] + 0.3, ["Foot.L"])
        message = "moved or changed shape"
    select([armature], armature)
    before = state(scene_state)
    with pytest.raises(RuntimeError, match=message):
        bpy.ops.bonesmith.bake_correctives(mode=mode)
    assert state(scene_state) == before


# -- Joint regressor --------------------------------------------------------------------------------

def warp(a, b):
    """A smooth non-affine reshape (longer legs / broader shoulders, by a and b)."""
    def apply(points):
        p = np.asarray(points, dtype=float).copy()
        z = p[:, 2] / 4.85
        p[:, 2] += a * 4.85 * np.sin(np.pi * z) * 0.2
        p[:, 0] *= 1.0 + b * z ** 2
        return p
    return apply


IDENTITIES = [(0.0, 0.0), (0.3, 0.0), (0.0, 0.3), (0.3, 0.3), (-0.2, 0.15)]


def test_train_joint_regressor_then_fit_armature(scene, ext_module, record, bc, models_dir):
    import bpy
    rigs = [rig_sample(ext_module, record, name=f"id{k}", warp=warp(a, b))
            for k, (a, b) in enumerate(IDENTITIES[:4])]
    select([obj for _, obj, _, _ in rigs], rigs[0][1])
    assert bpy.ops.bonesmith.train_joint_regressor(model_name="people") == {'FINISHED'}
    path = Path(bpy.context.scene["bonesmith_joint_regressor"])
    assert path == models_dir / "people.npz" and path.is_file()
    info = json.loads(path.with_suffix(".json").read_text())
    assert info["identities"] == ["id0_rig", "id1_rig", "id2_rig", "id3_rig"] and info["vertex_count"] == 941
    assert info["leave_one_out_pct"] < 1.0

    # a new identity whose armature still has the sample's proportions
    a, b = IDENTITIES[4]
    armature, obj, rest, joints = rig_sample(ext_module, record, name="new", warp=warp(a, b),
                                             bones_from=warp(0.0, 0.0))
    truth = warp(a, b)(record["joints"])
    size = np.linalg.norm(np.ptp(rest, axis=0))
    names = names_of(record)
    heads = lambda: np.array([list(armature.matrix_world @ armature.data.bones[n].head_local) for n in names])  # noqa: E731
    assert np.linalg.norm(heads() - truth, axis=1).mean() > 0.01 * size
    select([obj], obj)
    assert bpy.ops.bonesmith.fit_armature() == {'FINISHED'}
    assert np.linalg.norm(heads() - truth, axis=1).mean() < 0.01 * size
    assert bpy.context.view_layer.objects.active == obj and obj.mode == 'OBJECT'


def test_learn_a_family_then_fit_and_bake_a_new_body(scene, ext_module, record, bc, cc, models_dir):
    """Learn Correctives on four reshaped characters learns one family model; a fifth body
    (its armature still with the sample's proportions, never posed) gets its joints from Fit
    Armature and its correctives from Bake Correctives, nearer its own Preserve Volume
    deformation than plain LBS."""
    import bpy
    rigs = [rig_sample(ext_module, record, name=f"id{k}", warp=warp(a, b), preserve_volume=True)
            for k, (a, b) in enumerate(IDENTITIES[:4])]
    select([arm for arm, *_ in rigs], rigs[0][0])
    assert bpy.ops.bonesmith.learn_correctives(poses=50, max_degrees=50) == {'FINISHED'}
    path = Path(bpy.context.scene["bonesmith_correctives_family"])
    model = cc.CorrectiveModel.load(path)
    assert model.is_family and model.info["identities"] == 4 and model.names == names_of(record)
    assert all(arm["bonesmith_correctives"] == str(path) for arm, *_ in rigs)
    assert Path(bpy.context.scene["bonesmith_joint_regressor"]).is_file()

    a, b = IDENTITIES[4]
    armature, obj, rest, _ = rig_sample(ext_module, record, name="new", warp=warp(a, b),
                                        bones_from=warp(0.0, 0.0), preserve_volume=True)
    select([obj], obj)
    assert bpy.ops.bonesmith.fit_armature() == {'FINISHED'}
    names = names_of(record)
    joints = np.array([list(armature.matrix_world @ armature.data.bones[n].head_local) for n in names])
    size = np.linalg.norm(np.ptp(rest, axis=0))
    assert np.linalg.norm(joints - warp(a, b)(record["joints"]), axis=1).mean() < 0.01 * size
    assert bpy.ops.bonesmith.bake_correctives(mode='LIVE') == {'FINISHED'}
    copy = bpy.data.objects["new_LBS"]
    assert len(copy.data.shape_keys.animation_data.drivers) > 0
    rotations = cc.random_rotations(record["parents"], 4, max_degrees=50, seed=99)
    baked, plain = errors_against_truth(bc, cc, armature, obj, copy, record, joints, names, rotations)
    assert baked < 0.75 * plain, (baked, plain)


@pytest.mark.parametrize("case", ["one_character", "topology", "bone_names"])
def test_train_joint_regressor_bad_input(scene, ext_module, record, models_dir, scene_state, humanoid,
                                         humanoid_skeleton, case):
    import bpy
    first = rig_sample(ext_module, record, name="a")
    objects = [first[1]]
    if case == "topology":
        other = bpy.data.objects.new("blocky", bpy.data.meshes.new("blocky"))
        other.data.from_pydata(humanoid[0].tolist(), [], humanoid[1].tolist())
        bpy.context.scene.collection.objects.link(other)
        rig = ext_module("bridge.armature").skeleton_to_armature(humanoid_skeleton(), name="blocky_rig")
        select([other, rig], rig)
        assert bpy.ops.bonesmith.auto_skin() == {'FINISHED'}
        objects.append(other)
        message = "do not share one topology"
    elif case == "bone_names":
        second = rig_sample(ext_module, record, name="b", warp=warp(0.2, 0.1))
        second[0].data.bones["Head"].name = "Skull"
        objects.append(second[1])
        message = "different deforming bones"
    else:
        message = "two or more characters"
    select(objects, objects[0])
    before = state(scene_state)
    with pytest.raises(RuntimeError, match=message):
        bpy.ops.bonesmith.train_joint_regressor()
    assert state(scene_state) == before
    assert not models_dir.exists()


def test_fit_armature_bad_input(scene, ext_module, record, models_dir, scene_state):
    import bpy
    armature, obj, rest, joints = rig_sample(ext_module, record)
    select([armature], armature)
    before = state(scene_state)
    with pytest.raises(RuntimeError, match="run Train Joint Regressor first"):
        bpy.ops.bonesmith.fit_armature()
    rigs = [rig_sample(ext_module, record, name=f"id{k}", warp=warp(a, b)) for k, (a, b) in enumerate(IDENTITIES[:2])]
    select([r[1] for r in rigs], rigs[0][1])
    assert bpy.ops.bonesmith.train_joint_regressor() == {'FINISHED'}
    hat = bpy.data.objects.new("hat", bpy.data.meshes.new("hat"))
    hat.data.from_pydata([(0, 0, 5), (0.2, 0, 5), (0, 0.2, 5)], [], [(0, 1, 2)])
    bpy.context.scene.collection.objects.link(hat)
    ext_module("bridge.weights").write_weights(hat, np.eye(28)[[6, 6, 6]], names_of(record))
    ext_module("bridge.armature").attach_mesh(hat, armature)
    select([armature], armature)
    before = state(scene_state)
    with pytest.raises(RuntimeError, match="trained on meshes with 941 vertices; the mesh has 944"):
        bpy.ops.bonesmith.fit_armature()
    assert state(scene_state) == before


# -- the panel --------------------------------------------------------------------------------------

class _Layout:
    def __init__(self, record):
        self.record = record

    def box(self):
        return self

    def label(self, text="", icon='NONE'):
        self.record.append(("label", text))

    def prop(self, data, name, **kw):
        assert name in data.bl_rna.properties.keys(), name
        self.record.append(("prop", name))

    def operator(self, idname, **kw):
        import bpy
        category, name = idname.split(".")
        rna = getattr(getattr(bpy.ops, category), name).get_rna_type()
        record = self.record

        class Props:
            def __setattr__(self, key, value):
                assert key in rna.properties.keys(), f"{idname} has no property {key!r}"
                record.append(("set", idname, key, value))
        record.append(("operator", idname))
        return Props()


@pytest.mark.parametrize("source", ["RANDOM", "ACTION"])
def test_correctives_panel_draws(scene, ext_module, record, source):
    import bpy
    armature, obj, rest, joints = rig_sample(ext_module, record)
    select([obj], obj)
    bpy.context.scene.bonesmith_correctives.source = source
    panel = bpy.types.BONESMITH_PT_correctives
    assert panel.bl_parent_id == "BONESMITH_PT_skeleton" and panel.bl_category == "Bonesmith"
    entries = []

    class Self:
        layout = _Layout(entries)

    panel.draw(Self(), bpy.context)
    operators = [e[1] for e in entries if e[0] == "operator"]
    assert operators == ["bonesmith.learn_correctives", "bonesmith.bake_correctives",
                         "bonesmith.train_joint_regressor", "bonesmith.fit_armature"]
    props = [e[1] for e in entries if e[0] == "prop"]
    assert ("poses" in props) == (source == 'RANDOM') and ("frame_step" in props) == (source == 'ACTION')
    assert ("set", "bonesmith.learn_correctives", "source", source) in entries
    assert ("set", "bonesmith.learn_correctives", "max_keys", 0) in entries and "max_keys" in props
    assert "Nothing learned yet" in [e[1] for e in entries if e[0] == "label"]
