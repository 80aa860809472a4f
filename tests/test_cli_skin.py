# SPDX-License-Identifier: GPL-3.0-or-later
"""`python -m bonesmith skin ...` and the end-to-end demo, in a subprocess as a user runs them."""
import struct

import numpy as np
import pytest

from conftest import extremities, inside, vertex_group_weights as weights_of


def check_record(path, n_vertices=None):
    with np.load(path) as record:
        weights = record["weights"]
        names = list(record["joint_names"])
    if n_vertices is not None:
        assert weights.shape[0] == n_vertices
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-5)
    assert (weights > 0).sum(axis=1).max() <= 4
    return weights, names


@pytest.fixture
def rigged_blend(bridge, humanoid_skeleton, make_mesh, humanoid, tmp_path):
    """A .blend with the humanoid (plus a user vertex group) and a hand-made armature that
    deforms it through an Armature modifier, but no bone weights yet."""
    import bpy
    obj = make_mesh("body", *humanoid)
    group = obj.vertex_groups.new(name="cloth_pin")
    group.add([0, 1, 2, 3], 0.5, 'REPLACE')
    armature = bridge.armature.build_rig(humanoid_skeleton(), [obj], name="Rig")
    path = tmp_path / "rigged.blend"
    bpy.data.libraries.write(str(path), {obj, armature})
    return path


def test_help_lists_skin(cli):
    result = cli("--help", timeout=60)
    assert result.returncode == 0 and "skin" in result.stdout
    sub = cli("skin", "--help", timeout=60)
    assert sub.returncode == 0
    for option in ("--armature-from", "--auto-skeleton", "--out", "--model", "--max-influences"):
        assert option in sub.stdout


def test_skin_auto_skeleton_npz(cli_with_bpy, sample_path, sample, tmp_path, bridge, scene, core):
    out_record, out_blend = tmp_path / "rig.npz", tmp_path / "rig.blend"
    result = cli_with_bpy("skin", sample_path, "--auto-skeleton", "--out", out_record, "--out", out_blend)
    assert result.returncode == 0, result.stderr
    assert "0 unweighted" in result.stdout and "skeleton" in result.stdout
    weights, names = check_record(out_record, len(sample[0]))
    assert sorted(names) == sorted(core.extract_skeleton(*sample).names)  # the bones are Auto Skeleton's
    # a hand rides on its arm's chains (arm_, and arm2_ ... for fingers), a sole on its
    # leg's, none of either on the other side (all measured wholly; > 0.9 allows a blend at
    # the inner edge of the band)
    tips = extremities(sample[0])
    for tip, limb in (("hand.L", "arm"), ("hand.R", "arm"), ("sole.L", "leg"), ("sole.R", "leg")):
        side, other = tip[-2:], {".L": ".R", ".R": ".L"}[tip[-2:]]
        own = [j for j, n in enumerate(names) if n.startswith(limb) and n.endswith(side)]
        far = [j for j, n in enumerate(names) if n.endswith(other)]
        assert weights[tips[tip]][:, own].sum(axis=1).min() > 0.9, tip
        assert weights[tips[tip]][:, far].max() == 0, tip

    (mesh,) = bridge.file_import.import_file(out_blend)
    armature = mesh.parent
    assert armature is not None and armature.type == 'ARMATURE'
    assert [m.object for m in mesh.modifiers if m.type == 'ARMATURE'] == [armature]
    groups = weights_of(mesh)
    assert sorted(groups) == sorted(b.name for b in armature.data.bones) == sorted(names)
    for j, name in enumerate(names):
        np.testing.assert_allclose(groups[name], weights[:, j], atol=1e-5)


def test_skin_with_the_armature_of_the_input(cli_with_bpy, rigged_blend, humanoid, tmp_path, bridge, scene):
    out = tmp_path / "skinned.blend"
    result = cli_with_bpy("skin", rigged_blend, "--out", out, "--out", tmp_path / "skinned.fbx",
                          "--max-influences", "2")
    assert result.returncode == 0, result.stderr
    assert "weighted to 11 bones of 'Rig'" in result.stdout
    assert (tmp_path / "skinned.fbx").read_bytes()[:18] == b"Kaydara FBX Binary"
    (mesh,) = bridge.file_import.import_file(out)
    groups = weights_of(mesh)
    np.testing.assert_allclose(groups["cloth_pin"][:4], 0.5)              # the user's group stays
    bones = np.array([groups[b.name] for b in mesh.parent.data.bones]).T
    np.testing.assert_allclose(bones.sum(axis=1), 1.0, atol=1e-5)
    assert (bones > 0).sum(axis=1).max() <= 2
    hand = humanoid[0][:, 0] > 0.8
    assert groups["forearm.L"][hand].mean() > 0.9


def test_skin_armature_from_another_file(cli_with_bpy, rigged_blend, humanoid, write_obj, tmp_path):
    source = tmp_path / "body.obj"
    write_obj(source, *humanoid)
    out = tmp_path / "skinned.npz"
    result = cli_with_bpy("skin", source, "--armature-from", rigged_blend, "--out", out)
    assert result.returncode == 0, result.stderr
    weights, names = check_record(out, len(humanoid[0]))
    assert "forearm.L" in names
    with np.load(out) as record:
        vertices = record["verts"]
    hand = vertices[:, 0] > 0.8
    assert weights[hand, names.index("forearm.L")].mean() > 0.9


def test_skin_errors(cli_with_bpy, humanoid, write_obj, tmp_path):
    source = tmp_path / "body.obj"
    write_obj(source, *humanoid)
    plain = tmp_path / "plain.obj"
    write_obj(plain, *humanoid)
    cases = [
        ((source, "--out", tmp_path / "x.npz"), "has no armature: pass --armature-from FILE or --auto-skeleton"),
        ((source, "--out", tmp_path / "x.json"), "Cannot write x.json"),
        ((source, "--armature-from", plain, "--out", tmp_path / "x.npz"), "Cannot take an armature from plain.obj"),
        ((source, "--armature-from", tmp_path / "nope.blend", "--out", tmp_path / "x.npz"), "File not found"),
        ((source, "--auto-skeleton", "--model", tmp_path / "none.npz", "--out", tmp_path / "x.npz"),
         "Skin model not found"),
    ]
    for args, message in cases:
        result = cli_with_bpy("skin", *args)
        assert result.returncode == 2, (args, result.stdout, result.stderr)
        assert "bonesmith: error:" in result.stderr and message in result.stderr, result.stderr
        assert "Traceback" not in result.stderr
        assert not (tmp_path / "x.npz").exists()
    both = cli_with_bpy("skin", source, "--auto-skeleton", "--armature-from", plain, "--out", tmp_path / "x.npz")
    assert both.returncode == 2 and "not allowed with" in both.stderr


def test_skin_armature_without_deforming_bones(cli_with_bpy, bridge, humanoid_skeleton, make_mesh, humanoid,
                                               tmp_path):
    import bpy
    obj = make_mesh("body", *humanoid)
    armature = bridge.armature.build_rig(humanoid_skeleton(), [obj], name="Rig")
    for bone in armature.data.bones:
        bone.use_deform = False
    path = tmp_path / "no_deform.blend"
    bpy.data.libraries.write(str(path), {obj, armature})
    result = cli_with_bpy("skin", path, "--out", tmp_path / "x.npz")
    assert result.returncode == 2 and "no deforming bones" in result.stderr
    assert not (tmp_path / "x.npz").exists()


def png_size(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_demo_rigs_skins_and_poses(cli_with_bpy, tmp_path, scene, sample):
    import bpy
    result = cli_with_bpy("demo", "--out", tmp_path)
    assert result.returncode == 0, result.stderr
    assert "0 vertices unweighted" in result.stdout and "poses     4" in result.stdout
    width, height = png_size(tmp_path / "demo.png")
    assert width > 2 * height                       # several poses side by side
    assert (tmp_path / "demo.png").stat().st_size > 20_000

    bpy.ops.import_scene.fbx(filepath=str(tmp_path / "demo.fbx"))
    (mesh,) = [o for o in bpy.data.objects if o.type == 'MESH']
    (armature,) = [o for o in bpy.data.objects if o.type == 'ARMATURE']
    assert len(mesh.data.vertices) == len(sample[0])
    groups = weights_of(mesh)
    assert sorted(groups) == sorted(b.name for b in armature.data.bones)
    total = np.sum(list(groups.values()), axis=0)
    np.testing.assert_allclose(total, 1.0, atol=1e-4)
    # the poses came along as an animation that moves the mesh
    assert armature.animation_data is not None and armature.animation_data.action is not None
    rest = np.array([v.co for v in mesh.evaluated_get(bpy.context.evaluated_depsgraph_get()).data.vertices])
    scene = bpy.context.scene
    scene.frame_set(1)
    first = np.array([v.co for v in mesh.evaluated_get(bpy.context.evaluated_depsgraph_get()).data.vertices])
    scene.frame_set(3)
    waving = np.array([v.co for v in mesh.evaluated_get(bpy.context.evaluated_depsgraph_get()).data.vertices])
    assert np.abs(waving - first).max() > 0.1 * np.ptp(rest, axis=0).max()


# -- real files that used to come out wrong (issue: never silently wrong) ----------------------

def test_skin_rigged_glb_keeps_the_character_not_the_importers_bone_shape(
        cli_with_bpy, bridge, humanoid_skeleton, make_mesh, humanoid, tmp_path, scene, ext_module):
    """Blender's glTF importer adds an icosphere (the bones' display shape, in its hidden
    glTF_not_exported collection). It was taken as the character: the new armature was
    named after it, landed in the hidden collection and was missing from the outputs."""
    import bpy
    from conftest import select
    obj = make_mesh("hero", *humanoid)
    armature = bridge.armature.build_rig(humanoid_skeleton(), [obj], name="HeroRig")
    select([obj, armature], armature)
    assert bpy.ops.bonesmith.auto_skin() == {'FINISHED'}
    select([obj, armature], armature)
    source = tmp_path / "hero.glb"
    bpy.ops.export_scene.gltf(filepath=str(source), use_selection=True)

    from conftest import clear_scene
    clear_scene()
    imported = bridge.file_import.import_objects(source, bpy.context.scene.collection)
    assert any(o.type == 'MESH' and o.name.startswith("Icosphere") for o in imported)  # the helper
    n_hero = sum(len(o.data.vertices) for o in imported if o.name.startswith("hero"))

    out_glb, out_fbx = tmp_path / "auto.glb", tmp_path / "auto.fbx"
    result = cli_with_bpy("skin", source, "--auto-skeleton", "--out", out_glb, "--out", out_fbx)
    assert result.returncode == 0, result.stderr
    assert f"hero.glb: {n_hero} vertices weighted" in result.stdout       # the character alone
    assert "of 'hero" in result.stdout and "0 unweighted" in result.stdout
    for out in (out_glb, out_fbx):
        clear_scene()
        objects = bridge.file_import.import_objects(out, bpy.context.scene.collection)
        armatures = [o for o in objects if o.type == 'ARMATURE']
        meshes = [o for o in objects if o.type == 'MESH' and o not in bridge.file_import.bone_widgets(objects)]
        assert len(armatures) == 1 and len(armatures[0].data.bones) >= 10, out.name
        assert armatures[0].name.startswith("hero"), armatures[0].name
        (mesh,) = meshes                                 # the character, not the icosphere
        assert len(mesh.data.vertices) >= len(humanoid[0])
        groups = weights_of(mesh)
        bones = np.array([groups.get(b.name, np.zeros(len(mesh.data.vertices)))
                          for b in armatures[0].data.bones]).T
        np.testing.assert_allclose(bones.sum(axis=1), 1.0, atol=1e-3, err_msg=out.name)


def test_skeleton_of_a_mesh_parented_to_a_scaled_armature(cli_with_bpy, humanoid, tmp_path, scene, core):
    """A .blend whose mesh is parented to an armature object scaled 0.01, written without a
    depsgraph update (stale world matrices in the file): the skeleton must fit the mesh as
    it is seen, not 100x too big."""
    import bpy
    vertices, faces = humanoid
    mesh = bpy.data.meshes.new("giant_units")
    mesh.from_pydata([tuple(map(float, v)) for v in vertices * 100.0], [],
                     [tuple(map(int, f)) for f in faces])
    obj = bpy.data.objects.new("body", mesh)
    rig = bpy.data.objects.new("rig", bpy.data.armatures.new("rig"))
    for o in (obj, rig):
        bpy.context.scene.collection.objects.link(o)
    rig.scale = (0.01, 0.01, 0.01)
    obj.parent = rig                                  # no view-layer update before writing
    path = tmp_path / "scaled_parent.blend"
    bpy.data.libraries.write(str(path), {obj, rig})
    out = tmp_path / "skeleton.json"
    result = cli_with_bpy("skeleton", path, "--out", out)
    assert result.returncode == 0, result.stderr
    joints = core.Skeleton.load_json(out).joints
    lo, hi = vertices.min(axis=0), vertices.max(axis=0)
    margin = 0.05 * np.linalg.norm(hi - lo)
    assert (joints >= lo - margin).all() and (joints <= hi + margin).all()
    # inside the body, reaching its hands, soles and crown (as Auto Skeleton's rig does in
    # the body's own units: within 5 % of the diagonal, 0.8-2.6 % measured)
    assert inside(joints, vertices, faces).all()
    sk = core.Skeleton.load_json(out)
    ends = np.vstack([sk.joints, sk.tails])
    for name, mask in extremities(vertices).items():
        tip = vertices[mask].mean(axis=0)
        assert np.linalg.norm(ends - tip, axis=1).min() < 0.05 * np.linalg.norm(hi - lo), name
