# SPDX-License-Identifier: GPL-3.0-or-later
"""bridge.correctives: poses in core's convention, ground truth from Blender's deformers,
and the bakes (weights, bones, driven and keyed shape keys, FBX)."""
import math

import numpy as np
import pytest
from conftest import key_rotations

# A rotated, uniformly scaled, moved character: world-space arrays must not care.
MOVED = dict(location=(0.5, -1.0, 0.25), rotation=(0.3, 0.0, 0.7), scale=(0.5, 0.5, 0.5))
MONOMIALS = ("ww", "xx", "yy", "zz", "wx", "wy", "wz", "xy", "xz", "yz")


@pytest.fixture(scope="module")
def record(sample_path):
    with np.load(sample_path) as data:
        return {k: data[k] for k in ("verts", "faces", "joints", "joint_tails", "joint_names",
                                     "parents", "weights", "rest_mats")}


@pytest.fixture
def bc(ext_module):
    return ext_module("bridge.correctives")


@pytest.fixture
def cc(ext_module):
    return ext_module("core.correctives")


def world_matrix(location=(0, 0, 0), rotation=(0, 0, 0), scale=(1, 1, 1)):
    from mathutils import Euler, Matrix, Vector
    M = Matrix.LocRotScale(Vector(location), Euler(rotation), Vector(scale))
    return np.array(M)


def rig_sample(ext_module, record, *, moved=False, name="body", preserve_volume=False, warp=None,
               bones_from=None):
    """The CC0 sample character in the scene: mesh weighted to its deforming bones, plain
    Armature modifier; with `moved` both objects carry the MOVED transform; `warp` reshapes
    the mesh and its bones (a function of (N,3) points), `bones_from` another warp for the
    bones only. Returns (armature, mesh object, world rest vertices, world joints)."""
    import bpy
    from mathutils import Matrix
    core = ext_module("core.skeleton")
    bpy.context.view_layer.update()   # the view layer forgets objects the fixture removed
    M = world_matrix(**MOVED) if moved else np.eye(4)
    world = lambda p: p @ M[:3, :3].T + M[:3, 3]  # noqa: E731
    shape = warp or (lambda p: np.asarray(p, dtype=float))
    bones = bones_from or shape
    names = [str(n) for n in record["joint_names"]]
    skeleton = core.Skeleton(world(bones(record["joints"])), record["parents"],
                             world(bones(record["joint_tails"])),
                             names, up=record["rest_mats"][:, :3, 2] @ M[:3, :3].T)
    armature = ext_module("bridge.armature").skeleton_to_armature(skeleton, name=f"{name}_rig", matrix_world=M)
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata(shape(record["verts"]).tolist(), [], record["faces"].tolist())
    obj = bpy.data.objects.new(name, mesh)
    bpy.context.scene.collection.objects.link(obj)
    obj.matrix_world = Matrix(M.tolist())
    ext_module("bridge.weights").write_weights(obj, record["weights"], names)
    modifier = ext_module("bridge.armature").attach_mesh(obj, armature)
    modifier.use_deform_preserve_volume = preserve_volume
    bpy.context.view_layer.update()
    return armature, obj, world(shape(record["verts"])), world(bones(record["joints"]))


def empty_scene():
    """Remove what the test made (not read_factory_settings: it would drop the extension)."""
    import bpy
    for blocks in (bpy.data.objects, bpy.data.meshes, bpy.data.armatures, bpy.data.actions):
        for block in list(blocks):
            blocks.remove(block)
    bpy.context.view_layer.update()


def names_of(record):
    return [str(n) for n in record["joint_names"]]


def lbs(cc, rest, weights, joints, parents, rotations):
    return cc.lbs(rest, weights, cc.skinning_matrices(joints, parents, rotations))


def world_heads(armature, names):
    return np.array([list(armature.matrix_world @ armature.pose.bones[n].head) for n in names])


def quaternion_monomials(q):
    q = np.asarray(q, dtype=float)
    i = {"w": 0, "x": 1, "y": 2, "z": 3}
    return np.array([q[i[m[0]]] * q[i[m[1]]] for m in MONOMIALS])


# -- poses ------------------------------------------------------------------------------------

@pytest.mark.parametrize("moved", [False, True])
def test_set_pose_follows_the_core_convention(scene, ext_module, record, bc, cc, moved):
    """set_pose then Blender's own Armature modifier == core's LBS of the same rotations;
    posed heads == core's forward kinematics; read_pose gives the rotations back."""
    armature, obj, rest, joints = rig_sample(ext_module, record, moved=moved)
    names, parents = names_of(record), record["parents"]
    assert list(bc.bone_parents(armature, names)) == list(parents)
    rotations = cc.random_rotations(parents, 3, max_degrees=60, seed=4)
    for R in rotations:
        bc.set_pose(armature, names, R)
        A = cc.skinning_matrices(joints, parents, R[None])[0]
        np.testing.assert_allclose(world_heads(armature, names),
                                   np.einsum("jab,jb->ja", A[:, :, :3], joints) + A[:, :, 3], atol=1e-5)
        np.testing.assert_allclose(bc.evaluated_vertices([obj]),
                                   lbs(cc, rest, record["weights"], joints, parents, R[None])[0], atol=2e-5)
        np.testing.assert_allclose(bc.read_pose(armature, names), R, atol=1e-5)
        # what Blender stores is the bone-local rotation B^T R B
        B = bc.bone_rest_rotations(armature, names)
        j = names.index("LowerArm.L")
        L = np.array(armature.pose.bones["LowerArm.L"].rotation_quaternion.to_matrix())
        np.testing.assert_allclose(B[j] @ L @ B[j].T, R[j], atol=1e-5)
    assert not np.allclose(rotations[0], np.eye(3))   # the poses do bend


def test_read_pose_counts_constraints(scene, ext_module, record, bc, cc):
    import bpy
    armature, obj, rest, joints = rig_sample(ext_module, record)
    names, parents = names_of(record), record["parents"]
    limit = armature.pose.bones["LowerArm.L"].constraints.new('LIMIT_ROTATION')
    limit.use_limit_x = limit.use_limit_y = limit.use_limit_z = True
    limit.owner_space = 'LOCAL'
    R = cc.random_rotations(parents, 1, max_degrees=70, seed=1)[0]
    bc.set_pose(armature, names, R)
    got = bc.read_pose(armature, names)
    j = names.index("LowerArm.L")
    np.testing.assert_allclose(got[j], np.eye(3), atol=1e-5)          # the constraint won
    assert np.abs(R[j] - np.eye(3)).max() > 0.05
    np.testing.assert_allclose(bc.evaluated_vertices([obj]),
                               lbs(cc, rest, record["weights"], joints, parents, got[None])[0], atol=2e-5)
    bpy.context.view_layer.update()


def test_sampling_restores_the_pose_and_sees_preserve_volume(scene, ext_module, record, bc, cc, errors):
    import bpy
    from mathutils import Euler
    armature, obj, rest, joints = rig_sample(ext_module, record, preserve_volume=True)
    names, parents = names_of(record), record["parents"]
    user = armature.pose.bones["UpperArm.R"]
    user.rotation_mode = 'XZY'
    user.rotation_euler = Euler((0.1, 0.2, 0.3), 'XZY')
    user.location = (0.01, 0.0, 0.02)
    armature.data.pose_position = 'REST'      # sampling poses it anyway
    before = {pb.name: (pb.rotation_mode, tuple(pb.rotation_euler), tuple(pb.rotation_quaternion),
                        tuple(pb.location), tuple(pb.scale)) for pb in armature.pose.bones}

    def state():
        return {pb.name: (pb.rotation_mode, tuple(pb.rotation_euler), tuple(pb.rotation_quaternion),
                          tuple(pb.location), tuple(pb.scale)) for pb in armature.pose.bones}

    rotations = cc.random_rotations(parents, 4, max_degrees=80, seed=2)
    seen = []
    posed, read = bc.sample_posed_vertices(armature, [obj], rotations, names,
                                           progress=lambda f, m: seen.append(f), read_back=True)
    assert posed.shape == (4, len(rest), 3) and seen == [0.25, 0.5, 0.75, 1.0]
    np.testing.assert_allclose(read, rotations, atol=1e-5)
    assert state() == before and armature.data.pose_position == 'REST'
    plain = lbs(cc, rest, record["weights"], joints, parents, rotations)
    size = np.linalg.norm(np.ptp(rest, axis=0))
    # Preserve Volume (dual quaternions) is not LBS: the ground truth differs visibly ...
    assert np.linalg.norm(posed - plain, axis=2).max() > 0.01 * size
    # ... and without it Blender is exactly LBS
    obj.modifiers[0].use_deform_preserve_volume = False
    np.testing.assert_allclose(bc.sample_posed_vertices(armature, [obj], rotations, names), plain, atol=2e-5)

    def cancel(fraction, message):
        if fraction >= 0.5:
            raise errors.Cancelled("stop")
    with pytest.raises(errors.Cancelled):
        bc.sample_posed_vertices(armature, [obj], rotations, names, progress=cancel)
    assert state() == before
    bpy.context.view_layer.update()


def test_ground_truth_includes_the_users_driven_shape_keys(scene, ext_module, record, bc, cc):
    """A sculpted corrective the artist drives from a bone is part of the ground truth."""
    armature, obj, rest, joints = rig_sample(ext_module, record)
    names, parents = names_of(record), record["parents"]
    obj.shape_key_add(name="Basis")
    bulge = obj.shape_key_add(name="elbow_bulge", from_mix=False)
    j = names.index("LowerArm.L")
    moved = np.flatnonzero(record["weights"][:, j] > 0.5)
    co = np.empty(len(rest) * 3)
    bulge.data.foreach_get("co", co)
    co = co.reshape(-1, 3)
    co[moved, 2] += 0.05
    bulge.data.foreach_set("co", co.ravel())
    driver = bulge.driver_add("value").driver
    variable = driver.variables.new()
    variable.type = 'TRANSFORMS'
    target = variable.targets[0]
    target.id, target.bone_target = armature, "LowerArm.L"
    target.transform_type, target.rotation_mode, target.transform_space = 'ROT_W', 'QUATERNION', 'LOCAL_SPACE'
    driver.expression = f"2*(1-{variable.name})"
    rotations = cc.random_rotations(parents, 3, max_degrees=60, seed=3)
    posed = bc.sample_posed_vertices(armature, [obj], rotations, names)
    plain = lbs(cc, rest, record["weights"], joints, parents, rotations)
    gap = np.linalg.norm(posed - plain, axis=2)
    assert gap[:, moved].min() > 1e-4 and gap[:, np.setdiff1d(np.arange(len(rest)), moved)].max() < 1e-4
    assert bulge.value == pytest.approx(0.0, abs=1e-6)   # at rest again afterwards


def test_vertex_count_changing_modifier_is_named(scene, ext_module, record, bc, cc, errors):
    armature, obj, rest, joints = rig_sample(ext_module, record)
    obj.modifiers.new("Smoother", 'SUBSURF')
    state = {pb.name: tuple(pb.rotation_quaternion) for pb in armature.pose.bones}
    with pytest.raises(errors.BonesmithError, match=r"'body'.*'Smoother' \(Subdivision Surface\) changes the vertex count"):
        bc.sample_posed_vertices(armature, [obj], cc.random_rotations(record["parents"], 2, seed=0),
                                 names_of(record))
    assert {pb.name: tuple(pb.rotation_quaternion) for pb in armature.pose.bones} == state


def test_action_rotations(scene, ext_module, record, bc, cc):
    import bpy
    from mathutils import Quaternion
    armature, obj, rest, joints = rig_sample(ext_module, record, moved=True)
    names = names_of(record)
    angles = {1: 0.0, 5: 1.2}
    action = key_rotations(armature, "kick", [("LowerLeg.L", (1, 0, 0))], angles.items())
    bone = armature.pose.bones["LowerLeg.L"]
    armature.animation_data.action = None
    bpy.context.scene.frame_set(3)
    bone.rotation_quaternion = Quaternion((0, 0, 1), 0.3)      # an unkeyed user tweak
    assert list(bc.action_frames(action)) == [1, 2, 3, 4, 5]
    R = bc.action_rotations(armature, names, action, [1, 3, 5])
    assert R.shape == (3, len(names), 3, 3)
    B = bc.bone_rest_rotations(armature, names)
    j = names.index("LowerLeg.L")
    np.testing.assert_allclose(R[0, j], np.eye(3), atol=1e-6)
    L = np.array(Quaternion((1, 0, 0), 1.2).to_matrix())
    np.testing.assert_allclose(R[2, j], B[j] @ L @ B[j].T, atol=1e-5)
    assert 0.01 < np.abs(R[1, j] - np.eye(3)).max() < np.abs(R[2, j] - np.eye(3)).max()
    # the armature's own (no) action, the frame and the user's tweak are back
    assert armature.animation_data.action is None and bpy.context.scene.frame_current == 3
    assert tuple(bone.rotation_quaternion) == pytest.approx(tuple(Quaternion((0, 0, 1), 0.3)))


# -- the character ------------------------------------------------------------------------------

def test_character_arrays(scene, ext_module, record, bc):
    armature, obj, rest, joints = rig_sample(ext_module, record, moved=True)
    ch = bc.character_arrays(armature, [obj])
    np.testing.assert_allclose(ch["vertices"], rest, atol=1e-5)
    np.testing.assert_allclose(ch["joints"], joints, atol=1e-5)
    assert ch["names"] == names_of(record) and list(ch["parents"]) == list(record["parents"])
    np.testing.assert_allclose(ch["weights"], record["weights"], atol=1e-5)
    assert ch["mesh_set"].object_slice(0) == slice(0, len(rest))


# -- bakes --------------------------------------------------------------------------------------

def test_refined_weights_and_influence_limit(scene, ext_module, record, bc):
    armature, obj, rest, joints = rig_sample(ext_module, record)
    names = names_of(record)
    rng = np.random.default_rng(0)
    W = rng.random((len(rest), len(names))) ** 4
    mesh_set = bc.character_arrays(armature, [obj])["mesh_set"]
    bc.write_refined_weights([obj], mesh_set, W, names, max_influences=4)
    got = ext_module("bridge.weights").read_weights(obj, names)[0]
    assert (got > 0).sum(axis=1).max() == 4
    np.testing.assert_allclose(got.sum(axis=1), 1.0, atol=1e-5)
    top = np.argsort(W, axis=1)[:, -1]
    assert (np.argmax(got, axis=1) == top).all()


def test_fit_armature_moves_bones(scene, ext_module, record, bc):
    import bpy
    armature, obj, rest, joints = rig_sample(ext_module, record, moved=True)
    names = names_of(record)
    parents = record["parents"]
    tails0 = np.array([list(armature.matrix_world @ armature.data.bones[n].tail_local) for n in names])
    center = rest.mean(axis=0)
    heads = center + 1.1 * (joints - center)      # a 10 % larger identity
    tails = ext_module("core.correctives.bake").tails_from_heads(heads, joints, tails0, parents)
    bpy.context.view_layer.objects.active = obj
    bc.fit_bones(armature, names, heads)      # the tails follow: tails_from_heads
    got_heads = np.array([list(armature.matrix_world @ armature.data.bones[n].head_local) for n in names])
    got_tails = np.array([list(armature.matrix_world @ armature.data.bones[n].tail_local) for n in names])
    np.testing.assert_allclose(got_heads, heads, atol=1e-5)
    np.testing.assert_allclose(got_tails, tails, atol=1e-5)
    np.testing.assert_allclose(tails, center + 1.1 * (tails0 - center), atol=1e-5)  # scaled chains
    assert armature.mode == 'OBJECT' and bpy.context.view_layer.objects.active == obj
    z = [list(armature.data.bones[n].z_axis) for n in names]
    assert np.isfinite(z).all()


def live_test_key(cc, n_vertices, joint, rows, coeffs):
    offsets = np.zeros((n_vertices, 3))
    offsets[rows] = np.linspace(-0.05, 0.05, 3 * len(rows)).reshape(-1, 3)
    return cc.LiveKey(joint=joint, name="probe", offsets=offsets, coeffs=np.asarray(coeffs, dtype=float))


@pytest.mark.parametrize("moved", [False, True])
def test_live_key_drives_the_shape(scene, ext_module, record, bc, cc, moved):
    import bpy
    from mathutils import Quaternion
    armature, obj, rest, joints = rig_sample(ext_module, record, moved=moved)
    names, parents = names_of(record), record["parents"]
    j = names.index("LowerArm.L")
    rows = np.flatnonzero(record["weights"][:, j] > 0.3)
    coeffs = [0.5, 0.0, -1.0, 2.0, 0.25, 0.0, -3.0, 0.7, 0.0, 1.5]
    key = live_test_key(cc, len(rest), j, rows, coeffs)
    mesh_set = bc.character_arrays(armature, [obj])["mesh_set"]
    (kb,) = bc.write_live_keys([obj], mesh_set, armature, [key], names)
    assert kb.name == "BSC_probe" and kb.relative_key.name == "Basis"
    assert (kb.slider_min, kb.slider_max) == (-10.0, 10.0)
    fcurve = obj.data.shape_keys.animation_data.drivers[0]
    driver = fcurve.driver
    assert driver.is_simple_expression and driver.is_valid
    assert sorted(v.name for v in driver.variables) == ["w", "x", "y", "z"]
    target = driver.variables["x"].targets[0]
    assert (target.bone_target, target.transform_type, target.transform_space, target.rotation_mode) == \
        ("LowerArm.L", 'ROT_X', 'LOCAL_SPACE', 'QUATERNION')

    # written scaled so the value stays in [-1, 1]: value × offsets is unchanged
    scaled = ext_module("core.correctives.bake").bounded_key(key)
    scale = key.coeffs[0] / scaled.coeffs[0]
    assert 1.5 < scale < 10 and scaled.offsets[rows[0], 0] / key.offsets[rows[0], 0] == pytest.approx(scale)
    # at rest the value is the ww coefficient: world offsets land exactly
    bpy.context.view_layer.update()
    assert kb.value == pytest.approx(scaled.coeffs[0], abs=1e-6)
    np.testing.assert_allclose(bc.evaluated_vertices([obj]), rest + 0.5 * key.offsets, atol=1e-5)

    # posed (a negative w: quadratic values do not care about the sign)
    q = Quaternion((0.3, -0.5, 0.8), 1.1)
    bone = armature.pose.bones["LowerArm.L"]
    bone.rotation_mode = 'QUATERNION'
    bone.rotation_quaternion = -q
    bpy.context.view_layer.update()
    value = float(quaternion_monomials(q) @ coeffs)
    assert abs(value) > 0.3 and kb.value == pytest.approx(float(quaternion_monomials(q) @ scaled.coeffs), abs=1e-5)
    R = bc.read_pose(armature, names)
    expected = lbs(cc, rest + value * key.offsets, record["weights"], joints, parents, R[None])[0]
    np.testing.assert_allclose(bc.evaluated_vertices([obj]), expected, atol=2e-5)
    # core's own evaluation of the driver agrees
    quats = cc.local_quaternions(R[None], bc.bone_rest_rotations(armature, names))
    assert cc.key_values([key], quats)[0, 0] == pytest.approx(value, abs=1e-5)


def test_large_key_values_are_not_clamped(scene, ext_module, record, bc, cc):
    """Blender clamps a shape key's value to its slider range (at most ±10): a key whose
    quadratic form reaches 20 is written scaled, so the shape still gets all of it."""
    import bpy
    from mathutils import Quaternion
    armature, obj, rest, joints = rig_sample(ext_module, record)
    names, parents = names_of(record), record["parents"]
    j = names.index("LowerArm.L")
    key = live_test_key(cc, len(rest), j, np.flatnonzero(record["weights"][:, j] > 0.3), [0, 0, 40] + [0] * 7)
    mesh_set = bc.character_arrays(armature, [obj])["mesh_set"]
    (kb,) = bc.write_live_keys([obj], mesh_set, armature, [key], names)
    bone = armature.pose.bones["LowerArm.L"]
    bone.rotation_mode = 'QUATERNION'
    bone.rotation_quaternion = Quaternion((0, 1, 0), math.pi / 2)      # y² = 1/2: the value is 20
    bpy.context.view_layer.update()
    assert kb.value == pytest.approx(0.5, abs=1e-6)
    R = bc.read_pose(armature, names)
    expected = lbs(cc, rest + 20 * key.offsets, record["weights"], joints, parents, R[None])[0]
    np.testing.assert_allclose(bc.evaluated_vertices([obj]), expected, atol=2e-5)


def test_live_keys_split_over_meshes_and_rebake_replaces(scene, ext_module, record, bc, cc):
    import bpy
    armature, obj, rest, joints = rig_sample(ext_module, record)
    names = names_of(record)
    # a second mesh (a hat on the head bone) that no key moves
    hat = bpy.data.objects.new("hat", bpy.data.meshes.new("hat"))
    hat.data.from_pydata([(0, 0, 5), (0.2, 0, 5), (0, 0.2, 5)], [], [(0, 1, 2)])
    bpy.context.scene.collection.objects.link(hat)
    ext_module("bridge.weights").write_weights(hat, np.eye(len(names))[[names.index("Head")] * 3], names)
    ext_module("bridge.armature").attach_mesh(hat, armature)
    obj.shape_key_add(name="Basis")
    obj.shape_key_add(name="smile")                       # the user's own key stays
    mesh_set = bc.character_arrays(armature, [obj, hat])["mesh_set"]
    V = len(mesh_set.vertices)
    j = names.index("UpperArm.R")
    keys = [live_test_key(cc, V, j, np.arange(10), [1] + [0] * 9),
            live_test_key(cc, V, j, np.arange(20, 40), [0, 1] + [0] * 8)]
    keys[1].name = "second"
    for _ in range(2):
        made = bc.write_live_keys([obj, hat], mesh_set, armature, keys, names)
        assert [kb.name for kb in made] == ["BSC_probe", "BSC_second"]
        assert [kb.name for kb in obj.data.shape_keys.key_blocks] == ["Basis", "smile", "BSC_probe", "BSC_second"]
        assert len(obj.data.shape_keys.animation_data.drivers) == 2
        assert hat.data.shape_keys is None
    with pytest.raises(ext_module("core.errors").BonesmithError, match="learn them again"):
        bc.write_live_keys([obj], bc.character_arrays(armature, [obj])["mesh_set"], armature, keys, names)
    assert bc.remove_correctives(obj) == 2
    assert [kb.name for kb in obj.data.shape_keys.key_blocks] == ["Basis", "smile"]
    assert not obj.data.shape_keys.animation_data.drivers
    obj.shape_key_remove(obj.data.shape_keys.key_blocks["smile"])
    bc.write_live_keys([obj, hat], mesh_set, armature, keys, names)
    bc.remove_correctives(obj)
    assert obj.data.shape_keys is None                     # a Basis left alone goes too


def keyed_scene(ext_module, record, bc, cc, *, moved=False):
    """The sample with an action bending the left elbow over frames 1-6 and a probe key."""
    armature, obj, rest, joints = rig_sample(ext_module, record, moved=moved)
    names = names_of(record)
    key_rotations(armature, "bend", [("LowerArm.L", (0.2, 1.0, 0.1))], [(1, 0.0), (6, 1.4)])
    j = names.index("LowerArm.L")
    rows = np.flatnonzero(record["weights"][:, j] > 0.3)
    key = live_test_key(cc, len(rest), j, rows, [0.5, 0.0, -1.0, 2.0, 0.25, 0.0, -3.0, 0.7, 0.0, 1.5])
    return armature, obj, rest, names, key


def test_keyed_bake_keys_every_frame(scene, ext_module, record, bc, cc):
    import bpy
    armature, obj, rest, names, key = keyed_scene(ext_module, record, bc, cc, moved=True)
    mesh_set = bc.character_arrays(armature, [obj])["mesh_set"]
    bpy.context.scene.frame_set(2)
    (kb,) = bc.bake_keyed([obj], mesh_set, armature, [key], names, 1, 6)
    bounded_key = ext_module("core.correctives.bake").bounded_key
    assert bpy.context.scene.frame_current == 2
    shape_keys = obj.data.shape_keys
    assert not shape_keys.animation_data.drivers
    fcurves = bc._fcurves(shape_keys.animation_data)
    assert [fc.data_path for fc in fcurves] == ['key_blocks["BSC_probe"].value']
    points = fcurves[0].keyframe_points
    assert [p.co[0] for p in points] == [1, 2, 3, 4, 5, 6]
    for frame, point in zip(range(1, 7), points):
        bpy.context.scene.frame_set(frame)
        # (keyed quaternions interpolate off the unit sphere; the bone, and a driver, use them normalised)
        q = armature.pose.bones["LowerArm.L"].rotation_quaternion.normalized()
        assert point.co[1] == pytest.approx(float(quaternion_monomials(q) @ bounded_key(key).coeffs), abs=1e-5)
        assert kb.value == pytest.approx(point.co[1], abs=1e-5)
    assert len({round(p.co[1], 4) for p in points}) == 6
    # a second bake (here: live) replaces the keyframes
    bc.write_live_keys([obj], mesh_set, armature, [key], names)
    shape_keys = obj.data.shape_keys
    assert not bc._fcurves(shape_keys.animation_data) and len(shape_keys.animation_data.drivers) == 1


def test_fbx_keeps_baked_shape_keys_and_their_animation(scene, ext_module, record, bc, cc, bridge, tmp_path):
    """Live (driven) keys on one copy and keyed keys on another survive FBX export with
    baked animation: the importer makes shape keys with per-frame values of both."""
    import bpy
    armature, obj, rest, names, key = keyed_scene(ext_module, record, bc, cc)
    live = bc.lbs_copy(obj, armature)
    keyed = obj.copy()                                       # a second plain-LBS mesh
    keyed.data = obj.data.copy()
    keyed.name = "keyed"
    bpy.context.scene.collection.objects.link(keyed)
    bpy.context.view_layer.update()
    mesh_set = bc.character_arrays(armature, [live])["mesh_set"]
    bc.write_live_keys([live], mesh_set, armature, [key], names)
    bc.bake_keyed([keyed], mesh_set, armature, [key], names, 1, 6)
    expected = []
    for frame in range(1, 7):
        bpy.context.scene.frame_set(frame)
        expected.append(live.data.shape_keys.key_blocks["BSC_probe"].value)
    assert max(expected) - min(expected) > 0.1
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = 1, 6
    path = tmp_path / "correctives.fbx"
    bridge.fbx.export_fbx(path, armature, [live, keyed], bake_anim=True)

    empty_scene()
    bpy.ops.import_scene.fbx(filepath=str(path))
    meshes = {o.name: o for o in bpy.data.objects if o.type == 'MESH'}
    assert set(meshes) == {"body_LBS", "keyed"}
    for mesh in meshes.values():
        shape_keys = mesh.data.shape_keys
        assert [kb.name for kb in shape_keys.key_blocks] == ["Basis", "BSC_probe"]
        offsets = np.array([list(kb.co) for kb in shape_keys.key_blocks[1].data]) - \
            np.array([list(kb.co) for kb in shape_keys.key_blocks[0].data])
        assert np.abs(offsets).max() > 0.01                       # the key still moves vertices
        (fcurve,) = bc._fcurves(shape_keys.animation_data)
        assert fcurve.data_path == 'key_blocks["BSC_probe"].value'
        values = [fcurve.evaluate(frame) for frame in range(1, 7)]
        np.testing.assert_allclose(values, expected, atol=2e-3)


def test_fbx_drops_shape_keys_of_meshes_with_other_modifiers(scene, ext_module, record, bc, cc, bridge, tmp_path):
    """Why the bake goes to a plain-LBS copy: the FBX exporter applies any non-Armature
    modifier (here Corrective Smooth) and loses the shape keys."""
    import bpy
    armature, obj, rest, names, key = keyed_scene(ext_module, record, bc, cc)
    mesh_set = bc.character_arrays(armature, [obj])["mesh_set"]
    bc.write_live_keys([obj], mesh_set, armature, [key], names)
    obj.modifiers.new("Smooth", 'CORRECTIVE_SMOOTH')
    path = tmp_path / "smooth.fbx"
    bridge.fbx.export_fbx(path, armature, [obj])
    empty_scene()
    bpy.ops.import_scene.fbx(filepath=str(path))
    (mesh,) = [o for o in bpy.data.objects if o.type == 'MESH']
    assert mesh.data.shape_keys is None


def test_lbs_copy(scene, ext_module, record, bc, cc):
    import bpy
    armature, obj, rest, joints = rig_sample(ext_module, record, moved=True, preserve_volume=True)
    obj.modifiers.new("Smooth", 'CORRECTIVE_SMOOTH')
    obj.shape_key_add(name="Basis")
    obj.shape_key_add(name="user_corrective")
    copy = bc.lbs_copy(obj, armature)
    assert copy.name == "body_LBS" and copy.data is not obj.data
    assert [(m.type, m.object, m.use_deform_preserve_volume) for m in copy.modifiers] == [('ARMATURE', armature, False)]
    assert copy.data.shape_keys is None and obj.data.shape_keys is not None
    assert [g.name for g in copy.vertex_groups] == [g.name for g in obj.vertex_groups]
    assert copy.parent is obj.parent
    np.testing.assert_allclose(bc.evaluated_vertices([copy]), rest, atol=1e-5)
    assert [m.type for m in obj.modifiers] == ['ARMATURE', 'CORRECTIVE_SMOOTH']
    old_data = copy.data
    assert bc.lbs_copy(obj, armature) is copy and copy.data is not old_data
    assert "body_LBS" in bpy.data.meshes and len([m for m in bpy.data.meshes if m.name.startswith("body_LBS")]) == 1
