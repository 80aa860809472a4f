# SPDX-License-Identifier: GPL-3.0-or-later
"""Humanoid naming in Blender: the Naming option of Auto Rig, animation retargeted by bone
names alone, FBX round trip of the names, and a Rigify metarig that Rigify generates."""
import numpy as np
import pytest

from conftest import select


def rig(make_mesh, sample, naming):
    import bpy
    obj = make_mesh("sample", *sample)
    select([obj], obj)
    assert bpy.ops.bonesmith.auto_rig(naming=naming) == {'FINISHED'}
    armature = next(m.object for m in obj.modifiers if m.type == 'ARMATURE')
    return armature, obj


def evaluated(obj):
    import bpy
    bpy.context.view_layer.update()
    depsgraph = bpy.context.evaluated_depsgraph_get()
    mesh = obj.evaluated_get(depsgraph).to_mesh()
    out = np.array([v.co[:] for v in mesh.vertices])
    obj.evaluated_get(depsgraph).to_mesh_clear()
    return out


def test_mixamo_animation_plays_by_names_alone(scene, make_mesh, sample, humanoid):
    """An action keyed on another Mixamo-named rig (the blocky humanoid) drives the sample's
    Mixamo-named rig: its forearm bends and the mesh follows."""
    import bpy
    from mathutils import Quaternion
    source_obj = make_mesh("blocky", *humanoid)
    select([source_obj], source_obj)
    assert bpy.ops.bonesmith.auto_skeleton(naming='mixamo') == {'FINISHED'}
    source = next(o for o in bpy.data.objects if o.type == 'ARMATURE')
    source.animation_data_create()
    action = source.animation_data.action = bpy.data.actions.new("mixamo_wave")
    pb = source.pose.bones["mixamorig:LeftForeArm"]
    pb.rotation_mode = 'QUATERNION'
    for frame, angle in ((1, 0.0), (10, 1.2)):
        pb.rotation_quaternion = Quaternion((0, 0, 1), angle)
        pb.keyframe_insert("rotation_quaternion", frame=frame)

    armature, obj = rig(make_mesh, sample, 'mixamo')
    assert "mixamorig:LeftForeArm" in armature.pose.bones
    rest = evaluated(obj)
    data = armature.animation_data_create()
    data.action = action
    if getattr(data, "action_slot", True) is None:        # Blender 4.4+: slotted actions
        data.action_slot = list(data.action_suitable_slots)[0]
    bpy.context.scene.frame_set(10)
    q = armature.pose.bones["mixamorig:LeftForeArm"].rotation_quaternion
    assert abs(q.angle - 1.2) < 1e-4
    moved = np.linalg.norm(evaluated(obj) - rest, axis=1)
    size = np.linalg.norm(np.ptp(rest, axis=0))
    assert moved.max() > 0.05 * size          # the left hand swung
    left = rest[:, 0] > 0.3 * rest[:, 0].max()
    assert moved[~left].max() < 0.01 * size   # the rest of the body did not
    bpy.context.scene.frame_set(1)


@pytest.mark.parametrize("naming, character", [("mixamo", "sample"), ("unreal", "sample"), ("mixamo", "woman")])
def test_fbx_keeps_names_and_hierarchy(scene, make_mesh, request, bridge, tmp_path, naming, character):
    import bpy
    armature, obj = rig(make_mesh, request.getfixturevalue(character)[:2], naming)
    before = {b.name: (b.parent.name if b.parent else None) for b in armature.data.bones}
    if character == "woman":          # five fingers a hand
        assert before["mixamorig:LeftHandPinky2"] == "mixamorig:LeftHandPinky1"
    path = bridge.fbx.export_fbx(tmp_path / "rig.fbx", armature, [obj])
    for o in list(bpy.data.objects):
        bpy.data.objects.remove(o)
    bpy.ops.import_scene.fbx(filepath=str(path))
    again = next(o for o in bpy.data.objects if o.type == 'ARMATURE')
    after = {b.name: (b.parent.name if b.parent else None) for b in again.data.bones}
    assert after == before


def test_rigify_generates_a_rig_from_the_metarig(scene, make_mesh, sample):
    import addon_utils
    import bpy
    enabled = "rigify_type" in bpy.types.PoseBone.bl_rna.properties     # Rigify registered
    armature, obj = rig(make_mesh, sample, 'rigify')    # enables Rigify when needed
    assert armature.pose.bones["upper_arm.L"].rigify_type == "limbs.arm"
    assert armature.pose.bones["spine"].rigify_type == "spines.basic_spine"
    try:
        select([armature], armature)
        with bpy.context.temp_override(object=armature):   # poll reads context.object
            assert bpy.ops.pose.rigify_generate() == {'FINISHED'}
        generated = next(o for o in bpy.data.objects if o.type == 'ARMATURE' and o is not armature)
        bones = set(generated.data.bones.keys())
        assert {"DEF-upper_arm.L", "DEF-forearm.R", "DEF-thigh.L", "DEF-shin.R", "DEF-spine.003"} <= bones
        assert any(n.startswith("upper_arm_ik") for n in bones)      # IK/FK controls were made
    finally:
        if not enabled:
            addon_utils.disable("rigify", default_set=True)


def test_rigify_generates_fingers_and_palms_of_a_five_fingered_hand(scene, make_mesh, woman):
    """The CC0 woman's metarig has palm bones and three bones a digit with Rigify's palm
    and finger types; Generate Rig makes their deforming bones and finger controls."""
    import addon_utils
    import bpy
    enabled = "rigify_type" in bpy.types.PoseBone.bl_rna.properties
    armature, obj = rig(make_mesh, woman[:2], 'rigify')
    pose = armature.pose.bones
    assert pose["palm.01.L"].rigify_type == "limbs.super_palm" and pose["palm.02.L"].rigify_type == ""
    assert pose["f_index.01.R"].rigify_type == "limbs.super_finger" and pose["thumb.01.L"].rigify_type == "limbs.super_finger"
    assert pose["f_index.02.L"].parent.name == "f_index.01.L" and pose["f_index.01.L"].parent.name == "palm.01.L"
    assert pose["thumb.01.L"].parent.name == "palm.01.L" and pose["f_pinky.01.L"].parent.name == "palm.04.L"
    try:
        select([armature], armature)
        with bpy.context.temp_override(object=armature):
            assert bpy.ops.pose.rigify_generate() == {'FINISHED'}
        generated = next(o for o in bpy.data.objects if o.type == 'ARMATURE' and o is not armature)
        bones = set(generated.data.bones.keys())
        assert {f"DEF-{d}.0{k}.{s}" for d in ("thumb", "f_index", "f_middle", "f_ring", "f_pinky")
                for k in (1, 2, 3) for s in "LR"} <= bones
        assert {"DEF-palm.01.L", "DEF-palm.04.R"} <= bones
        assert {"f_index.01_master.L", "thumb.01_master.R"} <= bones     # the finger rigs' controls
    finally:
        if not enabled:
            addon_utils.disable("rigify", default_set=True)


def test_a_non_humanoid_keeps_generic_names_and_says_so(scene, make_mesh):
    import bpy
    from test_humanoid import quadruped_arrays
    obj = make_mesh("dog", *quadruped_arrays())
    select([obj], obj)
    assert bpy.ops.bonesmith.auto_skeleton(naming='mixamo') == {'FINISHED'}
    armature = next(o for o in bpy.data.objects if o.type == 'ARMATURE')
    names = [b.name for b in armature.data.bones]
    assert not any(n.startswith("mixamorig:") for n in names) and "spine_01" in names


def test_cli_naming(cli_with_bpy, sample_path, tmp_path):
    out = tmp_path / "rig.json"
    result = cli_with_bpy("skeleton", sample_path, "--naming", "unreal", "--out", out)
    assert result.returncode == 0, result.stderr
    import json
    names = json.loads(out.read_text())["names"]
    assert {"pelvis", "upperarm_l", "calf_r", "ball_l"} <= set(names)
    result = cli_with_bpy("skin", sample_path, "--naming", "mixamo", "--out", tmp_path / "x.glb")
    assert result.returncode == 2 and "--auto-skeleton" in result.stderr
