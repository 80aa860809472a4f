# SPDX-License-Identifier: GPL-3.0-or-later
"""bonesmith.export_fbx: export, re-import into an empty scene, compare the rig."""
import numpy as np
import pytest

TRANSFORM = dict(location=(0.4, -1.0, 0.2), rotation=(0.0, 0.0, 0.6), scale=(0.5, 0.5, 0.5))


def hand_made_rig(bridge, hand_skeleton, obj, vertices):
    armature = bridge.armature.build_rig(hand_skeleton(vertices), [obj])
    armature.data.bones["head"].use_deform = False  # a helper bone: must not be exported
    return armature


def rig_summary(armature):
    """name -> (parent name, world head) of every bone."""
    A = np.array(armature.matrix_world)
    return {b.name: (b.parent.name if b.parent else None, (A @ (*b.head_local, 1.0))[:3])
            for b in armature.data.bones}


@pytest.mark.parametrize("source", ["hand_made", "auto_skeleton"])
def test_fbx_round_trip(bridge, hand_skeleton, make_mesh, humanoid, scene, tmp_path, source):
    import bpy
    vertices, faces = humanoid
    obj = make_mesh("body", vertices, faces, **TRANSFORM)
    if source == "hand_made":
        armature = hand_made_rig(bridge, hand_skeleton, obj, bridge.mesh.object_arrays(obj)[0])
    else:
        assert bpy.ops.bonesmith.auto_skeleton() == {'FINISHED'}
        armature = obj.parent
    bpy.context.view_layer.update()
    exported = {name: entry for name, entry in rig_summary(armature).items()
                if armature.data.bones[name].use_deform}
    n_vertices = len(obj.data.vertices)
    size = float(np.linalg.norm(np.ptp(bridge.mesh.object_arrays(obj)[0], axis=0)))

    # select only the mesh: the operator finds its armature
    for other in bpy.context.view_layer.objects:
        other.select_set(False)
    obj.select_set(True)
    bpy.context.view_layer.objects.active = obj
    path = tmp_path / "rig.fbx"
    assert bpy.ops.bonesmith.export_fbx(filepath=str(path)) == {'FINISHED'}
    assert path.read_bytes()[:18] == b"Kaydara FBX Binary"

    for datablock in list(bpy.data.objects):
        bpy.data.objects.remove(datablock)
    for blocks in (bpy.data.meshes, bpy.data.armatures):
        for datablock in list(blocks):
            blocks.remove(datablock)
    bpy.ops.import_scene.fbx(filepath=str(path))
    bpy.context.view_layer.update()

    imported_armatures = [o for o in bpy.data.objects if o.type == 'ARMATURE']
    meshes = [o for o in bpy.data.objects if o.type == 'MESH']
    assert len(imported_armatures) == 1 and len(meshes) == 1
    assert len(meshes[0].data.vertices) == n_vertices
    imported = rig_summary(imported_armatures[0])
    # same bones (no "_end" leaf bones, no non-deforming helpers), same hierarchy, same places
    assert sorted(imported) == sorted(exported)
    for name, (parent, head) in exported.items():
        assert imported[name][0] == parent, name
        np.testing.assert_allclose(imported[name][1], head, atol=1e-4 * size, err_msg=name)
    # the mesh comes back where it was, in the same units
    got = bridge.mesh.object_arrays(meshes[0])[0]
    assert float(np.linalg.norm(np.ptp(got, axis=0))) == pytest.approx(size, rel=1e-4)


def test_export_fbx_needs_an_armature(make_mesh, humanoid, tmp_path, scene_state):
    import bpy
    make_mesh("body", *humanoid)
    with pytest.raises(RuntimeError, match="Select an armature"):
        bpy.ops.bonesmith.export_fbx(filepath=str(tmp_path / "x.fbx"))
    assert not (tmp_path / "x.fbx").exists()


def test_export_keeps_selection(bridge, hand_skeleton, make_mesh, humanoid, tmp_path):
    import bpy
    vertices, faces = humanoid
    obj = make_mesh("body", vertices, faces)
    other = make_mesh("other", vertices[:3], [[0, 1, 2]], select=False)
    armature = hand_made_rig(bridge, hand_skeleton, obj, vertices)
    other.select_set(True)
    selected = sorted(o.name for o in bpy.context.selected_objects)
    bridge.fbx.export_fbx(tmp_path / "x.fbx", armature)
    assert sorted(o.name for o in bpy.context.selected_objects) == selected
    assert bpy.context.view_layer.objects.active == armature


def test_auto_skin_leaves_out_the_end_bones_of_fbx_files(bridge, humanoid_skeleton, make_mesh, humanoid, scene,
                                                         tmp_path):
    """FBX files exported with leaf bones (Blender's default) carry a "<bone>_end" tip on
    every chain. They move nothing: Auto Skin must not give them vertices."""
    import bpy
    from conftest import clear_scene, select
    obj = make_mesh("body", *humanoid)
    armature = bridge.armature.build_rig(humanoid_skeleton(), [obj], name="Rig")
    select([obj, armature], armature)
    path = tmp_path / "with_leaves.fbx"
    bpy.ops.export_scene.fbx(filepath=str(path), use_selection=True, add_leaf_bones=True)
    clear_scene()
    objects = bridge.file_import.import_objects(path, bpy.context.scene.collection)
    (rig,) = [o for o in objects if o.type == 'ARMATURE']
    (mesh,) = [o for o in objects if o.type == 'MESH']
    ends = [b.name for b in rig.data.bones if b.name.endswith("_end")]
    assert len(ends) >= 5 and all(rig.data.bones[n].use_deform for n in ends)   # what the file brings
    select([mesh, rig], rig)
    assert bpy.ops.bonesmith.auto_skin() == {'FINISHED'}
    weighted = {g.name for g in mesh.vertex_groups
                if any(g.index == e.group and e.weight > 0 for v in mesh.data.vertices for e in v.groups)}
    assert weighted and not weighted & set(ends)
    assert len(weighted) == len(rig.data.bones) - len(ends)
