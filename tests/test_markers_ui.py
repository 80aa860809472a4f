# SPDX-License-Identifier: GPL-3.0-or-later
"""Markers in Blender and on the command line (docs/auto_skeleton.md#markers): Adjust
Joints shows a humanoid's landmarks as Empties, Rebuild moves the joints to the markers
the user moved, Done removes them; `--markers FILE.json` gives the same rig headless."""
import json

import numpy as np
import pytest

import test_humanoid as humanoid_tests   # modules, so their tests are not collected twice
import test_panel as panel_tests
from conftest import operator_stand_in, sample_arrays, select

LIFT = 0.08   # the knee marker is moved up by this share of the character's height


def height():
    V, _ = sample_arrays()
    return float(np.ptp(V[:, 2]))


def marker_objects():
    import bpy
    return {obj["bonesmith_marker"]: obj for obj in bpy.data.objects if "bonesmith_marker" in obj}


def heads(armature, names=None):
    """World-space bone heads by name."""
    A = np.array(armature.matrix_world)
    bones = armature.data.bones if names is None else [armature.data.bones[n] for n in names]
    return {b.name: (A @ (*b.head_local, 1.0))[:3] for b in bones}


def position(obj):
    return np.array(obj.matrix_world.translation)


def rigged_sample(make_mesh, operator="auto_skeleton"):
    """The CC0 sample as a scene object, rigged by Auto Skeleton (or Auto Rig) with Mixamo
    names: (mesh, armature)."""
    import bpy
    obj = make_mesh("body", *sample_arrays())
    assert getattr(bpy.ops.bonesmith, operator)(naming='mixamo') == {'FINISHED'}
    return obj, obj.parent


def move_knee(armature):
    """Adjust Joints, then the knee.L marker dragged up by LIFT of the height (as the
    user does in the viewport): returns the markers and the knee's new position."""
    import bpy
    assert bpy.ops.bonesmith.adjust_joints() == {'FINISHED'}
    markers = marker_objects()
    knee = position(markers["knee.L"]) + [0.0, 0.0, LIFT * height()]
    markers["knee.L"].location.z += LIFT * height()     # parented to the armature: its local frame is the world's here
    bpy.context.view_layer.update()
    assert np.allclose(position(markers["knee.L"]), knee)
    return markers, position(markers["knee.L"])     # as Blender stores it (float32)


def joint_buttons(ext_module):
    """What the sidebar's joints row draws now: operator names and labels (test_panel's
    recording layout; the icons are checked against Blender's list)."""
    import bpy
    record = []
    icons = bpy.types.UILayout.bl_rna.functions["label"].parameters["icon"].enum_items.keys()
    layout = panel_tests._Layout(record)
    drawn = []

    def operator(idname, icon='NONE', **kw):
        assert icon in icons, icon
        drawn.append(idname)
        return panel_tests._Layout.operator(layout, idname)

    def label(text="", icon='NONE'):
        assert icon in icons, icon
        drawn.append(text)
    layout.operator, layout.label = operator, label
    layout.row = lambda **kw: layout
    ext_module("panels").draw_joints(layout, bpy.context)
    return drawn


def test_adjust_joints_shows_the_landmarks_as_markers(make_mesh, ext_module):
    """One sphere Empty per landmark, named BS_<landmark>, parented to the armature, about
    2 % of the height, each on its joint (knee.L on the shin's head...)."""
    _, armature = rigged_sample(make_mesh)
    import bpy
    assert joint_buttons(ext_module) == ["bonesmith.adjust_joints"]
    assert bpy.ops.bonesmith.adjust_joints() == {'FINISHED'}
    assert joint_buttons(ext_module) == ["bonesmith.rebuild_joints", "bonesmith.hide_joints"]
    markers = marker_objects()
    assert set(markers) == {"chin", *(f"{m}.{s}" for m in ("shoulder", "elbow", "wrist", "hip", "knee", "ankle")
                                      for s in "LR")}
    bones = heads(armature)
    joints = {"chin": "Head", "knee.L": "LeftLeg", "knee.R": "RightLeg", "elbow.L": "LeftForeArm",
              "hip.R": "RightUpLeg", "ankle.L": "LeftFoot", "wrist.R": "RightHand", "shoulder.L": "LeftArm"}
    for name, bone in joints.items():
        assert np.allclose(position(markers[name]), bones[f"mixamorig:{bone}"], atol=1e-5 * height()), name
    for name, obj in markers.items():
        assert obj.name == f"BS_{name}" and obj.parent == armature and obj.type == 'EMPTY'
        assert obj.empty_display_type == 'SPHERE'
        assert 0.015 * height() < obj.empty_display_size < 0.025 * height()
    assert bpy.ops.bonesmith.adjust_joints() == {'FINISHED'}     # again: no second set
    assert len(marker_objects()) == 13
    for cls in ext_module("operators.adjust_joints").classes:        # each one undoable
        assert cls.bl_idname.startswith("bonesmith.") and {'REGISTER', 'UNDO'} <= set(cls.bl_options)


def test_rebuild_moves_the_knee_to_its_marker_and_the_mirrored_knee_follows(make_mesh, ext_module):
    """Rebuild: the shin starts at the moved marker, the other knee moves by the same lift
    (the sample is symmetric), the other landmarks stay, the armature is the same object
    and still deforms the mesh; a marker moved once stays moved in the next Rebuild."""
    import bpy
    mesh, armature = rigged_sample(make_mesh)
    before = heads(armature)
    markers, knee = move_knee(armature)
    knee_r = position(markers["knee.R"])
    ankle = position(markers["ankle.L"])
    select([markers["knee.L"]], markers["knee.L"])      # the user just dragged it: it is active

    op = ext_module("operators.adjust_joints").BONESMITH_OT_rebuild_joints
    assert bpy.ops.bonesmith.rebuild_joints() == {'FINISHED'}
    (rig,) = [obj for obj in bpy.data.objects if obj.type == 'ARMATURE']
    assert rig == armature and rig.name == "body_Armature" and mesh.parent == rig
    assert [m.object for m in mesh.modifiers if m.type == 'ARMATURE'] == [rig]
    after = heads(rig)
    h = height()
    assert np.allclose(after["mixamorig:LeftLeg"], knee, atol=1e-5 * h)
    assert np.allclose(after["mixamorig:RightLeg"], before["mixamorig:RightLeg"] + [0, 0, LIFT * h], atol=1e-5 * h)
    assert np.allclose(after["mixamorig:LeftFoot"], before["mixamorig:LeftFoot"], atol=1e-5 * h)
    # the markers: the moved one where the user put it, its mirror on the new knee, the rest kept
    assert np.allclose(position(markers["knee.L"]), knee)
    assert np.allclose(position(markers["knee.R"]), after["mixamorig:RightLeg"], atol=1e-5 * h)
    assert np.linalg.norm(position(markers["knee.R"]) - knee_r) > 0.5 * LIFT * h
    assert np.allclose(position(markers["ankle.L"]), ankle, atol=1e-5 * h)
    assert bpy.context.view_layer.objects.active == markers["knee.L"]   # the selection is the user's again
    assert {'REGISTER', 'UNDO'} <= set(op.bl_options)

    # a second rebuild still sends the knee (moved once, moved for good), whatever else moves
    markers["ankle.R"].location.z += 0.02 * h
    bpy.context.view_layer.update()
    ankle_r = position(markers["ankle.R"])
    assert bpy.ops.bonesmith.rebuild_joints() == {'FINISHED'}
    again = heads(rig)
    assert np.allclose(again["mixamorig:LeftLeg"], knee, atol=1e-5 * h)
    assert np.allclose(again["mixamorig:RightFoot"], ankle_r, atol=1e-5 * h)
    assert np.allclose(position(markers["ankle.L"]), again["mixamorig:LeftFoot"], atol=1e-5 * h)


def test_markers_live_in_the_armatures_frame(make_mesh):
    """A mesh with an unapplied rotation and scale, and the whole rig moved after Adjust
    Joints: the markers sit on the joints and move with the rig, are about 2 % of the
    height in the world, and Rebuild puts the shin's head on the dragged marker."""
    import bpy
    obj = make_mesh("body", *sample_arrays(), location=(0.5, -1.0, 0.2), rotation=(0.0, 0.0, np.pi / 2),
                    scale=(0.5, 0.5, 0.5))
    assert bpy.ops.bonesmith.auto_skeleton(naming='mixamo') == {'FINISHED'}
    armature = obj.parent
    h = 0.5 * height()
    assert bpy.ops.bonesmith.adjust_joints() == {'FINISHED'}
    markers = marker_objects()
    knee = markers["knee.L"]
    assert np.allclose(position(knee), heads(armature)["mixamorig:LeftLeg"], atol=1e-5 * h)
    assert 0.015 * h < knee.empty_display_size * knee.matrix_world.to_scale()[0] < 0.025 * h
    armature.location.x += 2.0              # the whole rig moved: the markers come along
    bpy.context.view_layer.update()
    assert np.allclose(position(knee), heads(armature)["mixamorig:LeftLeg"], atol=1e-5 * h)
    before = heads(armature)
    target = position(knee) + [0.0, 0.0, LIFT * h]
    knee.matrix_world.translation.z += LIFT * h
    bpy.context.view_layer.update()
    assert bpy.ops.bonesmith.rebuild_joints() == {'FINISHED'}
    after = heads(armature)
    assert np.allclose(after["mixamorig:LeftLeg"], target, atol=1e-5 * h)
    assert np.allclose(after["mixamorig:RightLeg"], before["mixamorig:RightLeg"] + [0, 0, LIFT * h], atol=1e-5 * h)
    assert np.allclose(position(markers["knee.R"]), after["mixamorig:RightLeg"], atol=1e-5 * h)


def test_rebuild_report_names_the_moved_and_the_following_markers(make_mesh, ext_module):
    import bpy
    module = ext_module("operators.adjust_joints")
    _, armature = rigged_sample(make_mesh)
    move_knee(armature)
    select([armature], armature)
    op = operator_stand_in(module.BONESMITH_OT_rebuild_joints)
    assert module.BONESMITH_OT_rebuild_joints.execute(op, bpy.context) == {'FINISHED'}
    ((kind, text),) = op.reports
    assert kind == {'INFO'}
    assert text.startswith(f"Rebuild: {len(armature.data.bones)} bones in 'body_Armature', "
                           "joints at the moved markers: knee.L; followed: knee.R (")


def test_rebuild_is_undone_by_one_undo(make_mesh):
    """Everything Rebuild changes lives in Blender's data: one undo step (what Blender
    pushes after an UNDO operator; headless, pushed by hand) puts back the bones, the
    markers and what the armature remembers."""
    import bpy
    _, armature = rigged_sample(make_mesh)
    markers, knee = move_knee(armature)
    before = heads(armature)
    knee_r = position(markers["knee.R"])
    remembered = armature["bonesmith_rig"]
    bpy.ops.ed.undo_push(message="Move knee.L")
    assert bpy.ops.bonesmith.rebuild_joints() == {'FINISHED'}
    assert not np.allclose(heads(armature)["mixamorig:LeftLeg"], before["mixamorig:LeftLeg"])
    bpy.ops.ed.undo_push(message="Rebuild")
    assert bpy.ops.ed.undo() == {'FINISHED'}

    armature = bpy.data.objects["body_Armature"]      # undo reloads the data: look it up again
    restored = heads(armature)
    assert set(restored) == set(before)
    for name, head in before.items():
        assert np.allclose(restored[name], head, atol=1e-6 * height()), name
    markers = marker_objects()
    assert np.allclose(position(markers["knee.R"]), knee_r) and np.allclose(position(markers["knee.L"]), knee)
    assert armature["bonesmith_rig"] == remembered


def test_done_removes_the_markers_and_the_moved_marker_is_remembered(make_mesh):
    import bpy
    _, armature = rigged_sample(make_mesh)
    _, knee = move_knee(armature)
    assert bpy.ops.bonesmith.hide_joints() == {'FINISHED'}
    assert not marker_objects() and not [o for o in bpy.data.objects if o.type == 'EMPTY']
    # the knee was moved before Done: Rebuild (even with the markers hidden) still puts it there
    assert bpy.ops.bonesmith.rebuild_joints() == {'FINISHED'}
    assert np.allclose(heads(armature)["mixamorig:LeftLeg"], knee, atol=1e-5 * height())


def test_rebuild_after_auto_rig_weights_the_mesh_again(make_mesh, core, ext_module):
    """Auto Rig's armature remembers that Bonesmith skinned the mesh: Rebuild weights it
    again, as Auto Skin would for the new bones."""
    import bpy
    mesh, armature = rigged_sample(make_mesh, "auto_rig")
    weights = ext_module("bridge.weights")
    names = [b.name for b in armature.data.bones]
    old = weights.read_weights(mesh, names)[0]
    _, knee = move_knee(armature)
    assert bpy.ops.bonesmith.rebuild_joints() == {'FINISHED'}
    new = weights.read_weights(mesh, names)[0]
    # what Auto Rig computes with that marker: the skeleton with the knee there, weighted
    V, F = ext_module("bridge.mesh").combine_rest([mesh]).vertices, sample_arrays()[1]   # the mesh's own vertices, as Auto Rig reads
    skeleton = core.extract_skeleton(V, F, naming="mixamo", markers={"knee.L": knee})
    expected, _ = ext_module("bridge.skin").predict(V, F, skeleton.joints, skeleton.parents, skeleton.tails,
                                                    names=skeleton.names)
    order = [skeleton.names.index(n) for n in names]
    assert np.abs(new - old).max() > 0.1            # the knee moved: weights around it changed
    np.testing.assert_allclose(new, expected[:, order], atol=1e-5)


def test_a_character_that_is_no_humanoid_gets_a_clear_message_and_no_markers(make_mesh, scene_state, ext_module):
    """A four-legged animal is no humanoid: Adjust Joints says markers need one and adds
    nothing, from the armature or from its mesh."""
    import bpy
    obj = make_mesh("creature", *humanoid_tests.quadruped_arrays())
    assert bpy.ops.bonesmith.auto_skeleton(naming='mixamo') == {'FINISHED'}
    assert joint_buttons(ext_module) == ["Markers need a humanoid"]
    before = scene_state()
    with pytest.raises(RuntimeError, match="Markers need a humanoid: 'creature_Armature' was not recognised"):
        bpy.ops.bonesmith.adjust_joints()
    assert scene_state() == before and not marker_objects()
    with pytest.raises(RuntimeError, match="Markers need a humanoid"):
        bpy.ops.bonesmith.rebuild_joints()
    select([obj], obj)
    with pytest.raises(RuntimeError, match="Markers need a humanoid"):   # found from its mesh too
        bpy.ops.bonesmith.adjust_joints()


def test_an_armature_auto_skeleton_did_not_build_is_refused(make_mesh, humanoid, bridge, humanoid_skeleton,
                                                            ext_module):
    import bpy
    make_mesh("body", *humanoid)
    armature = bridge.armature.skeleton_to_armature(humanoid_skeleton())
    select([armature], armature)
    assert joint_buttons(ext_module) == []       # no joints row
    with pytest.raises(RuntimeError, match="Select an armature that Auto Skeleton or Auto Rig built"):
        bpy.ops.bonesmith.adjust_joints()


# -- the command line ----------------------------------------------------------------------------

def test_cli_markers_give_the_rig_of_rebuild(make_mesh, cli_with_bpy, sample_path, tmp_path):
    """`skeleton FILE --markers knee.json` gives the bones of Rebuild with that knee moved
    (the sample's file frame is the scene's here)."""
    import bpy
    _, armature = rigged_sample(make_mesh)
    _, knee = move_knee(armature)
    assert bpy.ops.bonesmith.rebuild_joints() == {'FINISHED'}
    rebuilt = heads(armature)
    path = tmp_path / "knee.json"
    path.write_text(json.dumps({"knee.L": knee.tolist()}))
    out = tmp_path / "rig.json"
    result = cli_with_bpy("skeleton", sample_path, "--naming", "mixamo", "--markers", path, "--out", out)
    assert result.returncode == 0, result.stderr
    skeleton = json.loads(out.read_text())
    assert sorted(skeleton["names"]) == sorted(rebuilt)
    for name, joint in zip(skeleton["names"], np.array(skeleton["joints"])):
        assert np.allclose(joint, rebuilt[name], atol=1e-5 * height()), name
    assert np.allclose(rebuilt["mixamorig:LeftLeg"], knee, atol=1e-5 * height())


def test_a_rig_the_cli_made_with_markers_can_be_adjusted_in_blender(cli_with_bpy, sample_path, tmp_path, bridge,
                                                                   scene):
    """`skin --auto-skeleton --markers` (Auto Rig) writes a .blend whose armature has its
    shin at the marker and remembers both the marker (moved for good) and the skinning:
    Adjust Joints shows the knee marker there, Rebuild keeps it and weights again."""
    import bpy
    V, _ = sample_arrays()
    h = height()
    knee = np.array([0.3, -0.08, 0.35 * h])      # a knee lower than the one found (about 0.27 h up)
    path = tmp_path / "knee.json"
    path.write_text(json.dumps({"knee.L": knee.tolist()}))
    out = tmp_path / "rigged.blend"
    result = cli_with_bpy("skin", sample_path, "--auto-skeleton", "--naming", "mixamo", "--markers", path,
                          "--out", out)
    assert result.returncode == 0, result.stderr
    (mesh,) = bridge.file_import.import_file(out)
    armature = mesh.parent
    assert np.allclose(heads(armature)["mixamorig:LeftLeg"], knee, atol=1e-5 * h)
    remembered = json.loads(armature["bonesmith_rig"])
    assert remembered["skinned"] and remembered["naming"] == "mixamo"
    assert np.allclose(remembered["moved"]["knee.L"], knee, atol=1e-6 * h)
    select([armature], armature)
    assert bpy.ops.bonesmith.adjust_joints() == {'FINISHED'}
    assert np.allclose(position(marker_objects()["knee.L"]), knee, atol=1e-5 * h)
    group = mesh.vertex_groups["mixamorig:LeftLeg"].index
    old = [g.weight for v in mesh.data.vertices for g in v.groups if g.group == group]
    marker_objects()["ankle.L"].location.z += 0.02 * h
    bpy.context.view_layer.update()
    assert bpy.ops.bonesmith.rebuild_joints() == {'FINISHED'}
    assert np.allclose(heads(armature)["mixamorig:LeftLeg"], knee, atol=1e-5 * h)
    new = [g.weight for v in mesh.data.vertices for g in v.groups if g.group == group]
    assert old != new           # the ankle moved: the shin's weights were computed again


@pytest.mark.parametrize("content, message", [
    ('{"kneee.L": [0, 0, 1]}', "knee.json: Unknown marker 'kneee.L': use chin, shoulder.L"),
    ('{"knee.L": ["a", "b", "c"]}', "knee.json: Marker 'knee.L' needs three finite numbers"),
    ('{"knee.L": [0, 1]}', "knee.json: Marker 'knee.L' needs three finite numbers"),
    ('[0, 0, 1]', "The markers file knee.json must hold a JSON object of landmark name -> [x, y, z]"),
    ('{"knee.L": [0, 0,', "The markers file knee.json is not valid JSON"),
    (None, "Markers file not found:"),
])
def test_cli_refuses_a_bad_markers_file_before_any_work(cli, sample_path, tmp_path, content, message):
    path = tmp_path / "knee.json"
    if content is not None:
        path.write_text(content)
    for command, out in ((("skeleton",), tmp_path / "rig.json"), (("skin", "--auto-skeleton"), tmp_path / "rig.glb")):
        result = cli(*command, sample_path, "--markers", path, "--out", out, timeout=120)
        assert result.returncode == 2, result.stderr
        assert f"bonesmith: error: {message}" in result.stderr and "Traceback" not in result.stderr
        assert "vertices" not in result.stdout and not out.exists()


def test_cli_skin_markers_need_auto_skeleton(cli, sample_path, tmp_path):
    path = tmp_path / "knee.json"
    path.write_text('{"knee.L": [0, 0, 1]}')
    result = cli("skin", sample_path, "--markers", path, "--out", tmp_path / "x.glb", timeout=120)
    assert result.returncode == 2 and "use it with --auto-skeleton" in result.stderr


def test_batch_refuses_a_bad_markers_file_once_and_passes_a_good_one_to_every_file(cli, sample_path, tmp_path,
                                                                                ext_module):
    path = tmp_path / "knee.json"
    path.write_text('{"knee.X": [0, 0, 1]}')
    (tmp_path / "in").mkdir()
    result = cli("batch", tmp_path / "in", "--out", tmp_path / "out", "--markers", path, timeout=120)
    assert result.returncode == 2 and "knee.json: Unknown marker 'knee.X'" in result.stderr
    assert not (tmp_path / "out").exists()
    batch = ext_module("cli.batch")
    task = batch.Task(0, sample_path, "sample.npz", tmp_path / "out" / "sample.glb")
    command = batch.child_command(task, tmp_path / "partial.glb", 1.0, "mixamo", path)
    assert command[command.index("--markers") + 1] == str(path.resolve())
    assert "--markers" not in batch.child_command(task, tmp_path / "partial.glb", 1.0)
