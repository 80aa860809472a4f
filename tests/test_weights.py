# SPDX-License-Identifier: GPL-3.0-or-later
"""bridge.weights (arrays <-> vertex groups), bridge.pose and the several-poses picture."""
import time

import numpy as np
import pytest


@pytest.fixture(scope="module")
def weights_module(ext_module):
    return ext_module("bridge.weights")


def random_weights(n_vertices, n_bones, k=4, seed=0):
    rng = np.random.default_rng(seed)
    weights = np.zeros((n_vertices, n_bones))
    for _ in range(k):
        weights[np.arange(n_vertices), rng.integers(0, n_bones, n_vertices)] += rng.random(n_vertices)
    return weights / weights.sum(axis=1, keepdims=True)


def test_write_read_round_trip_keeps_other_groups_and_data(weights_module, make_mesh, humanoid):
    import bpy
    obj = make_mesh("body", *humanoid)
    n = len(obj.data.vertices)
    pin = obj.vertex_groups.new(name="pin")
    pin.add([5, 6], 0.75, 'REPLACE')
    obj.data.uv_layers.new(name="UVMap")
    obj.data.attributes.new("temperature", 'FLOAT', 'POINT').data.foreach_set("value", np.arange(n, dtype=np.float32))
    obj.shape_key_add(name="Basis")
    smile = obj.shape_key_add(name="smile")
    smile.data[0].co = (9.0, 9.0, 9.0)
    names = ["hips", "spine", "head"]
    weights = random_weights(n, 3)
    groups = weights_module.write_weights(obj, weights, names)
    assert [g.name for g in groups] == names
    got, got_names = weights_module.read_weights(obj, names)
    assert got_names == names
    np.testing.assert_allclose(got, weights, atol=1e-6)
    pin_weights, _ = weights_module.read_weights(obj, ["pin"])
    assert pin_weights[5, 0] == pytest.approx(0.75) and pin_weights[[0, 7], 0].max() == 0
    # the mesh's other data is untouched
    assert "UVMap" in obj.data.uv_layers and "temperature" in obj.data.attributes
    values = np.zeros(n, dtype=np.float32)
    obj.data.attributes["temperature"].data.foreach_get("value", values)
    np.testing.assert_array_equal(values, np.arange(n))
    assert tuple(obj.data.shape_keys.key_blocks["smile"].data[0].co) == (9.0, 9.0, 9.0)
    # all groups, in object order, with a missing name giving zeros
    every, every_names = weights_module.read_weights(obj)
    assert every_names == ["pin", "hips", "spine", "head"]
    missing, _ = weights_module.read_weights(obj, ["nope"])
    assert not missing.any()
    assert bpy.context.object == obj


def test_write_replaces_and_threshold(weights_module, make_mesh, humanoid):
    obj = make_mesh("body", *humanoid)
    n = len(obj.data.vertices)
    weights_module.write_weights(obj, np.ones((n, 1)), ["a"])
    sparse = np.zeros((n, 1))
    sparse[:10] = 0.5
    sparse[10:20] = 1e-6
    weights_module.write_weights(obj, sparse, ["a"], threshold=1e-4)
    members = {v.index for v in obj.data.vertices if v.groups}
    assert members == set(range(10))
    read, _ = weights_module.read_weights(obj, ["a"])       # replaced, not added to the ones before
    np.testing.assert_allclose(read[:, 0], [0.5] * 10 + [0.0] * (n - 10))


def test_write_refuses_bad_input(weights_module, make_mesh, humanoid, errors):
    import bpy
    obj = make_mesh("body", *humanoid)
    n = len(obj.data.vertices)
    with pytest.raises(ValueError, match="shape"):
        weights_module.write_weights(obj, np.ones((n - 1, 2)), ["a", "b"])
    with pytest.raises(ValueError, match="unique"):
        weights_module.write_weights(obj, np.ones((n, 2)), ["a", "a"])
    with pytest.raises(ValueError, match="NaN"):
        weights_module.write_weights(obj, np.full((n, 1), np.nan), ["a"])
    bpy.ops.object.mode_set(mode='EDIT')
    try:
        with pytest.raises(errors.BonesmithError, match="Edit Mode"):
            weights_module.write_weights(obj, np.ones((n, 1)), ["a"])
    finally:
        bpy.ops.object.mode_set(mode='OBJECT')
    assert not obj.vertex_groups


def test_write_is_fast(weights_module, make_mesh):
    """50k vertices x 60 bones, 4 influences each: one bmesh pass, not 200k add() calls."""
    import bpy
    bpy.ops.mesh.primitive_ico_sphere_add(subdivisions=7)   # 40962 vertices
    obj = bpy.context.active_object
    n = len(obj.data.vertices)
    weights = random_weights(n, 60)
    names = [f"bone_{j:02d}" for j in range(60)]
    started = time.perf_counter()
    weights_module.write_weights(obj, weights, names)
    seconds = time.perf_counter() - started
    got, _ = weights_module.read_weights(obj, names)
    np.testing.assert_allclose(got, weights, atol=1e-6)
    assert seconds < 5.0, f"writing {n} x 60 weights took {seconds:.1f} s"


def test_split_over_objects_and_modifiers(weights_module, bridge, make_mesh, humanoid):
    """Rows of the combined rest arrays go back to each object's own vertices, whatever
    modifiers the objects have (a Subdivision Surface adds evaluated vertices)."""
    vertices, faces = humanoid
    a = make_mesh("a", vertices, faces, location=(1, 0, 0))
    b = make_mesh("b", vertices[:4], [[0, 1, 2], [0, 2, 3]], scale=(2, 2, 2), select=False)
    a.modifiers.new("Subdivision", 'SUBSURF')
    mesh_set = bridge.mesh.combine_rest([a, b])
    assert len(mesh_set.vertices) == len(vertices) + 4
    np.testing.assert_allclose(mesh_set.vertices[:len(vertices)], vertices + (1, 0, 0), atol=1e-6)
    np.testing.assert_allclose(mesh_set.vertices[len(vertices):], vertices[:4] * 2, atol=1e-6)
    weights = random_weights(len(mesh_set.vertices), 2)
    weights_module.write_weights_split([a, b], mesh_set, weights, ["x", "y"])
    np.testing.assert_allclose(weights_module.read_weights_combined([a, b], ["x", "y"]), weights, atol=1e-6)


def test_deform_bones_skips_helpers(weights_module, bridge, humanoid_skeleton, make_mesh, humanoid, errors):
    obj = make_mesh("body", *humanoid, location=(0, 0, 2))
    armature = bridge.armature.skeleton_to_armature(humanoid_skeleton(np.array(obj.matrix_world)))
    armature.data.bones["spine"].use_deform = False
    joints, parents, tails, names = bridge.armature.deform_bones(armature)
    assert "spine" not in names and len(names) == len(armature.data.bones) - 1
    # children of the helper hang from its deforming parent
    assert names[parents[names.index("head")]] == "hips"
    np.testing.assert_allclose(joints[names.index("head")], (0, 0, 3.5), atol=1e-5)
    for bone in armature.data.bones:
        bone.use_deform = False
    with pytest.raises(errors.BonesmithError, match="no deforming bones"):
        bridge.armature.deform_bones(armature)


# -- poses and the several-poses picture ----------------------------------------------------------

def test_pose_helpers(ext_module, bridge, humanoid_skeleton, make_mesh, humanoid):
    pose = ext_module("bridge.pose")
    obj = make_mesh("body", *humanoid)
    armature = bridge.armature.build_rig(humanoid_skeleton(), [obj])
    assert pose.bone_at(armature, ["upper_arm.L", "forearm.L"], 0.25) == "upper_arm.L"
    assert pose.bone_at(armature, ["upper_arm.L", "forearm.L"], 0.75) == "forearm.L"
    assert pose.bone_at(armature, [], 0.5) is None
    saved = pose.save_pose(armature)
    pose.apply_pose(armature, [("upper_arm.L", "Y", 90), ("missing", "X", 10)])
    heads, tails, _, _ = bridge.armature.bone_segments(armature, posed=True)
    names = [b.name for b in armature.pose.bones]
    # the left arm now hangs down from the shoulder (+90 degrees about world Y)
    np.testing.assert_allclose(tails[names.index("forearm.L")], (0.25, 0, 1.375 - 0.6), atol=1e-5)
    pose.restore_pose(armature, saved)
    heads, tails, _, _ = bridge.armature.bone_segments(armature, posed=True)
    np.testing.assert_allclose(tails[names.index("forearm.L")], (0.85, 0, 1.375), atol=1e-5)


def test_limb_chain(ext_module, bridge, core, make_mesh, humanoid):
    pose = ext_module("bridge.pose")
    obj = make_mesh("body", *humanoid)
    joints = np.array([[0, 0, 1.0], [0.1, 0, 1.0], [0.2, 0, 1.0], [0.3, 0, 1.0]])
    skeleton = core.Skeleton(joints, [-1, 0, 1, 2], joints + (0.1, 0, 0),
                             ["spine_01", "arm_02.L", "arm_01.L", "arm_10.L"])
    armature = bridge.armature.skeleton_to_armature(skeleton)
    assert pose.limb_chain(armature, "arm", ".L") == ["arm_01.L", "arm_02.L", "arm_10.L"]
    assert pose.limb_chain(armature, "spine", "") == ["spine_01"]
    assert pose.limb_chain(armature, "leg", ".R") == []
    assert obj is not None


@pytest.mark.parametrize("method", ["numpy", "workbench"])
def test_render_poses(bridge, humanoid_skeleton, make_mesh, humanoid, tmp_path, method, ext_module):
    import struct
    if method == "workbench" and not bridge.render.workbench_available():
        pytest.skip("Workbench cannot render in this process (no OpenGL/EGL)")
    pose = ext_module("bridge.pose")
    obj = make_mesh("body", *humanoid)
    armature = bridge.armature.build_rig(humanoid_skeleton(), [obj])
    weights = ext_module("bridge.weights")
    names = [b.name for b in armature.data.bones]
    follow = np.zeros((len(obj.data.vertices), len(names)))
    follow[:, names.index("spine")] = 1.0                  # the whole body follows the spine
    weights.write_weights(obj, follow, names)
    pose.apply_pose(armature, [("spine", "X", 5)])
    saved = pose.save_pose(armature)
    poses = [[], [("upper_arm.L", "Y", 70)], [("thigh.L", "X", -40)]]
    path = bridge.render.render_poses(tmp_path / "poses.png", [obj], armature, poses, size=600, method=method)
    data = path.read_bytes()
    width, height = struct.unpack(">II", data[16:24])
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and width == 600 and height < width / 1.5
    after = pose.save_pose(armature)
    assert after == saved  # pose restored: rotation modes and channels
    import bpy
    assert sorted(o.name for o in bpy.data.objects) == sorted([obj.name, armature.name])
    assert len(bpy.data.meshes) == 1
