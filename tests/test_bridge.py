# SPDX-License-Identifier: GPL-3.0-or-later
"""bridge/: Blender data <-> arrays, armature building, file import, preview rendering.

These tests do not need core's algorithm: skeletons here are written by hand
(the `hand_skeleton` fixture)."""
import math

import numpy as np
import pytest

TRANSFORM = dict(location=(1.5, -2.0, 0.3), rotation=(0.3, -0.2, 0.8), scale=(0.7, 1.3, 0.9))


def world(obj, vertices):
    M = np.array(obj.matrix_world)
    return np.asarray(vertices, dtype=np.float32).astype(np.float64) @ M[:3, :3].T + M[:3, 3]


# -- mesh ----------------------------------------------------------------------------------

def test_object_arrays_world_space_and_triangulated(bridge, make_mesh, humanoid):
    import bpy
    vertices, faces = humanoid
    obj = make_mesh("body", vertices, faces, **TRANSFORM)
    got_v, got_f = bridge.mesh.object_arrays(obj)
    assert got_v.dtype == np.float64 and got_v.shape == vertices.shape
    np.testing.assert_allclose(got_v, world(obj, vertices), atol=1e-6)
    assert got_f.shape == faces.shape
    # same triangles (Blender may rotate the corner order of each triangle)
    assert {tuple(t) for t in np.sort(got_f, axis=1)} == {tuple(t) for t in np.sort(faces, axis=1)}
    assert len(bpy.data.meshes) == 1  # no evaluated copy left behind


def test_object_arrays_triangulates_quads_and_applies_modifiers(bridge, scene):
    import bpy
    bpy.ops.mesh.primitive_cube_add(size=2.0, location=(0, 0, 5))
    cube = bpy.context.object
    v, f = bridge.mesh.object_arrays(cube)
    assert v.shape == (8, 3) and f.shape == (12, 3)
    np.testing.assert_allclose(v.mean(axis=0), (0, 0, 5), atol=1e-6)
    cube.modifiers.new("sub", 'SUBSURF').levels = 1
    v, f = bridge.mesh.object_arrays(cube)
    assert v.shape == (26, 3) and f.shape == (48, 3)


def test_combine_objects_offsets(bridge, make_mesh, humanoid):
    vertices, faces = humanoid
    a = make_mesh("a", vertices, faces)
    b = make_mesh("b", vertices[:3], [[0, 1, 2]], location=(5, 0, 0))
    mesh_set = bridge.mesh.combine_objects([a, b])
    n = len(vertices)
    assert list(mesh_set.offsets) == [0, n, n + 3]
    assert list(mesh_set.face_offsets) == [0, len(faces), len(faces) + 1]
    assert mesh_set.names == ["a", "b"]
    np.testing.assert_allclose(mesh_set.vertices[mesh_set.object_slice(1)], vertices[:3] + (5, 0, 0), atol=1e-6)
    assert mesh_set.faces[-1].tolist() == [n, n + 1, n + 2]
    assert mesh_set.faces.max() == n + 2


def test_new_mesh_rejects_bad_indices(bridge, scene):
    with pytest.raises(ValueError, match="face indices"):
        bridge.mesh.new_mesh("bad", np.zeros((3, 3)), [[0, 1, 3]])


# -- armature --------------------------------------------------------------------------------

def rig_hand_made(bridge, hand_skeleton, make_mesh, humanoid, **transform):
    vertices, faces = humanoid
    obj = make_mesh("body", vertices, faces, **transform)
    skeleton = hand_skeleton(world(obj, vertices))
    armature = bridge.armature.build_rig(skeleton, [obj])
    return obj, skeleton, armature


@pytest.mark.parametrize("transform", [{}, TRANSFORM], ids=["identity", "unapplied"])
def test_build_rig_places_bones_in_world_space(bridge, hand_skeleton, make_mesh, humanoid, transform):
    import bpy
    vertices, faces = humanoid
    obj = make_mesh("body", vertices, faces, **transform)
    before_world = np.array(obj.matrix_world)
    before = bridge.mesh.object_arrays(obj)[0]
    skeleton = hand_skeleton(world(obj, vertices))
    armature = bridge.armature.build_rig(skeleton, [obj])
    bpy.context.view_layer.update()

    # the armature object carries the mesh's transform
    np.testing.assert_allclose(np.array(armature.matrix_world), before_world, atol=1e-6)
    assert sorted(armature.data.bones.keys()) == sorted(skeleton.names)
    bones = [armature.data.bones[name] for name in skeleton.names]
    A = np.array(armature.matrix_world)
    heads = np.array([A @ (*b.head_local, 1.0) for b in bones])[:, :3]
    tails = np.array([A @ (*b.tail_local, 1.0) for b in bones])[:, :3]
    size = np.linalg.norm(np.ptp(skeleton.joints, axis=0))
    np.testing.assert_allclose(heads, skeleton.joints, atol=1e-5 * size)
    np.testing.assert_allclose(tails, skeleton.tails, atol=1e-5 * size)
    for bone, p in zip(bones, skeleton.parents):
        assert (bone.parent.name if bone.parent else None) == (skeleton.names[p] if p >= 0 else None)
    connected = {b.name for b in bones if b.use_connect}
    assert connected == {"spine", "forearm.L"}  # head == parent's tail exactly there
    assert all(b.use_deform for b in bones)

    # roll: each bone's local Z follows `up` (in armature space, made perpendicular to the bone)
    A_inv = np.linalg.inv(A[:3, :3])
    for bone, up in zip(bones, skeleton.up):
        y = np.array(bone.matrix_local.col[1][:3])
        z = np.array(bone.matrix_local.col[2][:3])
        want = A_inv @ up
        want -= (want @ y) * y
        assert z @ (want / np.linalg.norm(want)) > 0.999, bone.name

    # the mesh is rigged and did not move
    assert obj.parent == armature
    modifiers = [m for m in obj.modifiers if m.type == 'ARMATURE']
    assert len(modifiers) == 1 and modifiers[0].object == armature
    assert obj.modifiers[0] == modifiers[0]
    np.testing.assert_allclose(np.array(obj.matrix_world), before_world, atol=1e-5)
    np.testing.assert_allclose(bridge.mesh.object_arrays(obj)[0], before, atol=1e-5 * size)

    # armature is selected and active; names
    assert bpy.context.view_layer.objects.active == armature
    assert armature.name == "body_Armature" and armature.show_in_front


def test_remove_rig_puts_the_users_set_up_back(bridge, hand_skeleton, make_mesh, humanoid):
    import bpy
    vertices, faces = humanoid
    holder = bpy.data.objects.new("holder", None)
    bpy.context.scene.collection.objects.link(holder)
    holder.location = (0, 3, 1)
    old = bpy.data.objects.new("old_rig", bpy.data.armatures.new("old_rig"))
    bpy.context.scene.collection.objects.link(old)
    obj = make_mesh("body", vertices, faces, **TRANSFORM)
    obj.parent = holder
    modifier = obj.modifiers.new("Deform", 'ARMATURE')
    modifier.object = old
    bpy.context.view_layer.update()
    before_world = np.array(obj.matrix_world)
    state = bridge.armature.rig_state([obj])
    armature = bridge.armature.build_rig(hand_skeleton(world(obj, vertices)), [obj])
    assert obj.modifiers["Deform"].object == armature and len(obj.modifiers) == 1
    name = armature.name
    bridge.armature.remove_rig(armature, [obj], state)
    assert name not in bpy.data.objects
    assert obj.parent == holder and [(m.name, m.object) for m in obj.modifiers] == [("Deform", old)]
    np.testing.assert_allclose(np.array(obj.matrix_world), before_world, atol=1e-6)


def test_build_rig_keeps_world_placement_of_an_already_parented_mesh(bridge, hand_skeleton, make_mesh, humanoid):
    import bpy
    vertices, faces = humanoid
    holder = bpy.data.objects.new("holder", None)
    bpy.context.scene.collection.objects.link(holder)
    holder.location = (0, 3, 1)
    holder.rotation_euler = (0, 0, math.pi / 3)
    obj = make_mesh("body", vertices, faces, **TRANSFORM)
    obj.parent = holder
    bpy.context.view_layer.update()
    before_world = np.array(obj.matrix_world)
    skeleton = hand_skeleton(world(obj, vertices))
    armature = bridge.armature.build_rig(skeleton, [obj])
    bpy.context.view_layer.update()
    # the hierarchy stays: the mesh keeps its Empty, the rig goes under it too
    assert obj.parent == holder and armature.parent == holder
    assert [m.object for m in obj.modifiers if m.type == 'ARMATURE'] == [armature]
    np.testing.assert_allclose(np.array(obj.matrix_world), before_world, atol=1e-5)
    heads = np.array([(armature.matrix_world @ b.head_local)[:] for b in armature.data.bones])
    np.testing.assert_allclose(np.sort(heads, axis=0), np.sort(skeleton.joints, axis=0), atol=1e-4)
    # moving the Empty moves both together
    mesh_before = bridge.mesh.object_arrays(obj)[0].mean(axis=0)
    holder.location = (5, 0, 0)
    bpy.context.view_layer.update()
    heads_moved = np.array([(armature.matrix_world @ b.head_local)[:] for b in armature.data.bones])
    shift = heads_moved.mean(axis=0) - heads.mean(axis=0)
    assert np.linalg.norm(shift) > 1.0
    np.testing.assert_allclose(bridge.mesh.object_arrays(obj)[0].mean(axis=0) - mesh_before, shift, atol=1e-4)


def test_armature_to_skeleton_round_trip(bridge, hand_skeleton, make_mesh, humanoid):
    obj, skeleton, armature = rig_hand_made(bridge, hand_skeleton, make_mesh, humanoid, **TRANSFORM)
    back = bridge.armature.armature_to_skeleton(armature)
    size = np.linalg.norm(np.ptp(skeleton.joints, axis=0))
    assert back.names == skeleton.names
    assert back.parents.tolist() == skeleton.parents.tolist()
    np.testing.assert_allclose(back.joints, skeleton.joints, atol=1e-5 * size)
    np.testing.assert_allclose(back.tails, skeleton.tails, atol=1e-5 * size)
    assert np.allclose(np.linalg.norm(back.up, axis=1), 1.0)


def test_armature_to_skeleton_skips_non_deform_bones(bridge, hand_skeleton, make_mesh, humanoid):
    obj, skeleton, armature = rig_hand_made(bridge, hand_skeleton, make_mesh, humanoid)
    armature.data.bones["spine"].use_deform = False
    back = bridge.armature.armature_to_skeleton(armature)
    assert "spine" not in back.names and len(back) == len(skeleton) - 1
    # children of the dropped bone hang from its nearest deforming ancestor
    for child in ("head", "upper_arm.L", "upper_arm.R"):
        assert back.names[back.parents[back.names.index(child)]] == "hips"


def test_zero_length_bones_survive(bridge, core, scene):
    skeleton = core.Skeleton([[0, 0, 0], [0, 0, 1]], [-1, 0], [[0, 0, 1], [0, 0, 1]], ["a", "b"],
                             [[0, -1, 0], [0, -1, 0]])
    armature = bridge.armature.skeleton_to_armature(skeleton)
    assert [b.name for b in armature.data.bones] == ["a", "b"]
    assert armature.data.bones["b"].length > 0


# -- files -----------------------------------------------------------------------------------

def write_ply(path, vertices, faces):
    with open(path, "w") as fh:
        fh.write(f"ply\nformat ascii 1.0\nelement vertex {len(vertices)}\n"
                 "property float x\nproperty float y\nproperty float z\n"
                 f"element face {len(faces)}\nproperty list uchar int vertex_indices\nend_header\n")
        for v in vertices:
            fh.write("%f %f %f\n" % tuple(v))
        for f in faces:
            fh.write("3 %d %d %d\n" % tuple(f))


@pytest.mark.parametrize("suffix", [".obj", ".ply", ".fbx", ".glb", ".gltf", ".blend", ".npz"])
def test_import_file(bridge, scene, make_mesh, humanoid, write_obj, tmp_path, suffix):
    import bpy
    vertices, faces = humanoid
    path = tmp_path / f"body{suffix}"
    if suffix == ".obj":
        write_obj(path, vertices, faces)
    elif suffix == ".ply":
        write_ply(path, vertices, faces)
    elif suffix == ".npz":
        np.savez(path, verts=vertices, faces=faces)
    else:
        make_mesh("body", vertices, faces)
        if suffix == ".fbx":
            bpy.ops.export_scene.fbx(filepath=str(path))
        elif suffix in (".glb", ".gltf"):
            bpy.ops.export_scene.gltf(filepath=str(path),
                                      export_format='GLB' if suffix == ".glb" else 'GLTF_SEPARATE')
        else:
            bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True)
        for obj in list(bpy.data.objects):
            bpy.data.objects.remove(obj)
        for mesh in list(bpy.data.meshes):
            bpy.data.meshes.remove(mesh)

    meshes = bridge.file_import.import_file(path)
    assert len(meshes) == 1 and meshes[0].type == 'MESH'
    assert meshes[0].name in bpy.context.scene.objects
    got_v, got_f = bridge.mesh.object_arrays(meshes[0])
    assert len(got_f) == len(faces)
    # glTF splits vertices along hard edges; every position is still one of ours
    lo, hi = vertices.min(0), vertices.max(0)
    np.testing.assert_allclose(got_v.min(0), lo, atol=1e-4)
    np.testing.assert_allclose(got_v.max(0), hi, atol=1e-4)


def test_import_file_errors(bridge, errors, scene, tmp_path):
    with pytest.raises(errors.BonesmithError, match="not found"):
        bridge.file_import.import_file(tmp_path / "missing.obj")
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(errors.BonesmithError, match="Cannot import notes.txt"):
        bridge.file_import.import_file(tmp_path / "notes.txt")
    (tmp_path / "empty.obj").write_text("# nothing here\n")
    with pytest.raises(errors.BonesmithError, match="no mesh"):
        bridge.file_import.import_file(tmp_path / "empty.obj")
    np.savez(tmp_path / "bad.npz", verts=np.zeros((3, 3)), faces=np.array([[0, 1, 5]]))
    with pytest.raises(errors.InvalidMeshError, match="face indices"):
        bridge.file_import.import_file(tmp_path / "bad.npz")
    np.savez(tmp_path / "nofaces.npz", verts=np.zeros((3, 3)))
    with pytest.raises(errors.BonesmithError, match="nofaces.npz is not a mesh record: it has no 'faces' array"):
        bridge.file_import.import_file(tmp_path / "nofaces.npz")
    (tmp_path / "truncated.npz").write_bytes(b"PK\x03\x04")
    with pytest.raises(errors.BonesmithError, match="Could not read truncated.npz"):
        bridge.file_import.import_file(tmp_path / "truncated.npz")


def test_strip_rigs(bridge, hand_skeleton, make_mesh, humanoid):
    import bpy
    obj, skeleton, armature = rig_hand_made(bridge, hand_skeleton, make_mesh, humanoid, **TRANSFORM)
    bpy.context.view_layer.update()
    before = np.array(obj.matrix_world)
    bridge.file_import.strip_rigs([obj])
    bpy.context.view_layer.update()
    assert obj.parent is None and not any(m.type == 'ARMATURE' for m in obj.modifiers)
    assert not bpy.data.armatures and [o.name for o in bpy.data.objects] == ["body"]
    np.testing.assert_allclose(np.array(obj.matrix_world), before, atol=1e-5)


# -- render ----------------------------------------------------------------------------------

def read_png(path):
    import bpy
    image = bpy.data.images.load(str(path))
    try:
        width, height = image.size
        pixels = np.array(image.pixels[:], dtype=np.float32).reshape(height, width, -1)[::-1, :, :3]
    finally:
        bpy.data.images.remove(image)
    return pixels


@pytest.mark.parametrize("method", ["numpy", "workbench"])
def test_render_preview(bridge, hand_skeleton, make_mesh, humanoid, tmp_path, scene_state, method):
    import bpy
    if method == "workbench" and not bridge.render.workbench_available():
        pytest.skip("no GPU/EGL context for Workbench here")
    obj, skeleton, armature = rig_hand_made(bridge, hand_skeleton, make_mesh, humanoid, **TRANSFORM)
    state = scene_state()
    counts = lambda: [len(c) for c in (bpy.data.scenes, bpy.data.cameras, bpy.data.materials,  # noqa: E731
                                       bpy.data.worlds, bpy.data.images)]
    before = counts()
    path = bridge.render.render_preview(tmp_path / "preview.png", [obj], armature, size=256, method=method)
    assert scene_state() == state and counts() == before  # nothing left behind
    pixels = read_png(path)
    height, width, _ = pixels.shape
    assert max(height, width) == 256 and min(height, width) >= 64
    r, g, b = pixels[..., 0], pixels[..., 1], pixels[..., 2]
    orange = (r > g + 0.15) & (g > b + 0.05)
    grey = (np.abs(r - g) < 0.03) & (np.abs(g - b) < 0.05) & (r > 0.3)
    assert orange.mean() > 0.002, "no bone drawn"
    assert grey.mean() > 0.05, "no mesh drawn"
    # the arms span the picture's width: mesh pixels near both side edges
    columns = np.flatnonzero((grey | orange).any(axis=0))
    assert columns.min() < 0.15 * width and columns.max() > 0.85 * width
