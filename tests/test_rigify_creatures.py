# SPDX-License-Identifier: GPL-3.0-or-later
"""A Rigify metarig for any character (core/rig/rigify_roles.py, bridge/rigify.py): Auto
Rig with naming "rigify" on a horse, a bird, a fish and a spider (tests/data, CC0), Rigify's
Generate Rig on the metarig, the meshes moved onto the generated DEF bones, the IK foot
control moving its leg and the mesh, and the game-engine FBX export of the generated rig."""
import numpy as np
import pytest

from conftest import DATA, select, submodule, vertex_group_weights as weights

CREATURES = {"horse": "quat_Horse", "bird": "quat_Bird", "fish": "quat_Fish3", "spider": "quat_Spider"}
IK_LEGS = ("limbs.front_paw", "limbs.rear_paw", "limbs.paw", "limbs.arm")


@pytest.fixture(scope="module")
def rigify(ext):
    return submodule(ext, "bridge.rigify")


def creature(name):
    with np.load(DATA / f"{CREATURES[name]}.npz") as record:
        return record["verts"], record["faces"]


def auto_rig(make_mesh, name):
    """(metarig, mesh): Auto Rig with naming "rigify" (enables Rigify when needed)."""
    import bpy
    obj = make_mesh(name, *creature(name))
    select([obj], obj)
    assert bpy.ops.bonesmith.auto_rig(naming='rigify') == {'FINISHED'}
    metarig = next(m.object for m in obj.modifiers if m.type == 'ARMATURE')
    return metarig, obj


@pytest.fixture
def rigify_enabled(ext):
    """Rigify disabled again after the test when it was off before."""
    import addon_utils
    import bpy
    enabled = "rigify_type" in bpy.types.PoseBone.bl_rna.properties
    yield
    if not enabled:
        addon_utils.disable("rigify", default_set=True)


def evaluated(obj):
    import bpy
    bpy.context.view_layer.update()
    depsgraph = bpy.context.evaluated_depsgraph_get()
    mesh = obj.evaluated_get(depsgraph).to_mesh()
    out = np.array([(obj.matrix_world @ v.co)[:] for v in mesh.vertices])
    obj.evaluated_get(depsgraph).to_mesh_clear()
    return out


def types(metarig):
    return {pb.name: pb.rigify_type for pb in metarig.pose.bones if pb.rigify_type}


# What each creature's structure gives: the IK legs (limb rigs on ground-touching side
# chains), and the rigs every one of them has
EXPECTED_IK_LEGS = {"horse": 4, "bird": 0, "fish": 0, "spider": 8}


@pytest.mark.parametrize("name", list(CREATURES))
def test_generate_rig_on_a_creature(scene, make_mesh, rigify, rigify_enabled, name):
    """Generate Rig succeeds; every metarig bone has its deforming copy, and the mesh's
    weights moved onto those DEF bones unchanged."""
    metarig, obj = auto_rig(make_mesh, name)
    chosen = types(metarig)
    assert "root" not in metarig.data.bones          # Rigify would keep it as its root, not deforming
    assert metarig.pose.bones["body"].rigify_type in ("basic.super_copy", "spines.basic_spine")
    legs = [b for b, t in chosen.items() if t in IK_LEGS]
    assert len(legs) == EXPECTED_IK_LEGS[name]
    assert sum(b.endswith(".L") for b in legs) == sum(b.endswith(".R") for b in legs)   # in mirror pairs
    assert "spines.super_head" in chosen.values()
    if name != "spider":
        assert "spines.basic_tail" in chosen.values()
    for b in legs:                                   # one deforming bone per metarig bone
        assert metarig.pose.bones[b].rigify_parameters.segments == 1
    before = weights(obj)
    rig = rigify.generate_rig(metarig)
    assert rig is not metarig and rig.type == 'ARMATURE'
    deform = {b.name for b in rig.data.bones if b.use_deform}
    assert deform == {f"DEF-{b.name}" for b in metarig.data.bones}
    assert [m.object for m in obj.modifiers if m.type == 'ARMATURE'] == [rig] and obj.parent is rig
    after = weights(obj)
    assert set(after) == {f"DEF-{n}" for n in before}
    for n, w in before.items():
        np.testing.assert_array_equal(after[f"DEF-{n}"], w)
    # limb rigs made IK controls, the tail and head rigs theirs
    bones = set(rig.data.bones.keys())
    assert all(any(n.startswith(b.rsplit(".", 1)[0]) and "_ik" in n for n in bones) for b in legs)


def ik_control(metarig, start):
    """The IK foot control Rigify makes for the limb rig starting at `start`: the third
    bone's name with "_ik" before the side ("leg_03.L" -> "leg_03_ik.L")."""
    third = metarig.data.bones[start].children[0].children[0].name
    base, side = third.rsplit(".", 1)
    return f"{base}_ik.{side}", [start, metarig.data.bones[start].children[0].name, third]


@pytest.mark.parametrize("name", ["horse", "spider"])
def test_posing_the_ik_foot_moves_its_leg_and_the_mesh(scene, make_mesh, rigify, rigify_enabled, name):
    """Lifting a left leg's IK foot control bends that leg's DEF bones and moves the mesh
    around them; the mirrored right leg and its vertices stay put."""
    from mathutils import Vector
    metarig, obj = auto_rig(make_mesh, name)
    start = next(b for b, t in sorted(types(metarig).items()) if t in IK_LEGS and b.endswith(".L"))
    mirror = start[:-2] + ".R"
    assert types(metarig)[mirror] == types(metarig)[start]
    control, leg = ik_control(metarig, start)
    _, right = ik_control(metarig, mirror)
    length = sum(metarig.data.bones[b].length for b in leg)
    rig = rigify.generate_rig(metarig)
    rest_mesh = evaluated(obj)
    rest = {b: rig.pose.bones[f"DEF-{b}"].matrix.copy() for b in leg + right}
    pb = rig.pose.bones[control]
    lifted = pb.matrix.copy()
    lifted.translation = lifted.translation + Vector((0.0, 0.0, 0.4 * length))
    pb.matrix = lifted
    moved_mesh = np.linalg.norm(evaluated(obj) - rest_mesh, axis=1)
    for b in leg[1:]:                     # the lower leg and foot move with the control
        moved = (rig.pose.bones[f"DEF-{b}"].matrix.translation - rest[b].translation).length
        assert moved > 0.05 * length, b
    for b in right:
        assert (rig.pose.bones[f"DEF-{b}"].matrix.translation - rest[b].translation).length < 1e-5 * length
    W = weights(obj)
    on_leg = np.max([W[f"DEF-{b}"] for b in leg[1:]], axis=0) > 0.5
    on_right = np.max([W[f"DEF-{b}"] for b in right], axis=0) > 0.5
    assert on_leg.any() and on_right.any()
    assert np.median(moved_mesh[on_leg]) > 0.05 * length
    right_only = on_right & (np.sum([W[n] for n in W if not any(n == f"DEF-{b}" for b in right)], axis=0) == 0)
    assert moved_mesh[right_only].max() < 1e-4 * length


def test_fbx_of_the_generated_rig_reimports(scene, make_mesh, rigify, rigify_enabled, bridge, tmp_path):
    """The game-engine export of the generated horse rig (deforming bones only) holds its
    DEF bones, with the bones above them that keep the hierarchy (the exporter keeps a
    deforming bone's non-deforming ancestors), and the mesh weighted to the DEF bones;
    it imports back with the same tree."""
    import bpy
    metarig, obj = auto_rig(make_mesh, "horse")
    rig = rigify.generate_rig(metarig)
    deform = {b.name for b in rig.data.bones if b.use_deform}
    ancestors = {a.name for b in rig.data.bones if b.use_deform for a in b.parent_recursive}
    hierarchy = {b.name: (b.parent.name if b.parent else None) for b in rig.data.bones
                 if b.name in deform | ancestors}
    groups = {n for n, w in weights(obj).items() if w.any()}     # FBX keeps the groups with weights
    assert groups <= deform and len(groups) > 0.8 * len(deform)
    path = bridge.fbx.export_fbx(tmp_path / "horse.fbx", rig, [obj])
    for o in list(bpy.data.objects):
        bpy.data.objects.remove(o)
    bpy.ops.import_scene.fbx(filepath=str(path))
    armature = next(o for o in bpy.data.objects if o.type == 'ARMATURE')
    mesh = next(o for o in bpy.data.objects if o.type == 'MESH')
    again = {b.name: (b.parent.name if b.parent else None) for b in armature.data.bones}
    assert deform <= set(again) <= deform | ancestors
    assert again == {b: hierarchy[b] for b in again}
    assert {n for n, w in weights(mesh).items() if w.any()} == groups
    assert [m.object for m in mesh.modifiers if m.type == 'ARMATURE'] == [armature]


def test_the_report_names_the_rigify_types(ext):
    """Auto Skeleton's note on a creature's metarig lists its Rigify types."""
    core = submodule(ext, "core.skeleton")
    note = submodule(ext, "bridge.skeleton").naming_note
    sk = core.extract_skeleton(*creature("fish"), naming="rigify")
    assert not sk.info["humanoid"] and sk.info["naming"] == "bonesmith"
    text = note(sk, "rigify")
    assert text.startswith("a Rigify metarig for a non-humanoid: ")
    assert "spines.super_head" in text and "spines.basic_tail" in text
    plain = core.extract_skeleton(*creature("fish"), naming="bonesmith")
    assert "rigify" not in plain.info
    np.testing.assert_array_equal(plain.joints, sk.joints)           # the same bones
    assert [n if n != "root" else "body" for n in plain.names] == sk.names


def test_generate_rig_operator(scene, make_mesh, rigify_enabled):
    """bonesmith.generate_rig on the fish's mesh: the rig is generated from its metarig and
    the mesh deforms with the DEF bones; on a plain armature it refuses and changes nothing."""
    import bpy
    metarig, obj = auto_rig(make_mesh, "fish")
    select([obj], obj)
    assert bpy.ops.bonesmith.generate_rig() == {'FINISHED'}
    rig = metarig.data.rigify_target_rig
    assert [m.object for m in obj.modifiers if m.type == 'ARMATURE'] == [rig]
    assert all(g.name.startswith("DEF-") and g.name in rig.data.bones for g in obj.vertex_groups)
    plain = bpy.data.objects.new("plain", bpy.data.armatures.new("plain"))
    bpy.context.scene.collection.objects.link(plain)
    select([plain], plain)
    count = len(bpy.data.objects)
    with pytest.raises(RuntimeError, match="Select a Rigify metarig"):
        bpy.ops.bonesmith.generate_rig()
    assert len(bpy.data.objects) == count


def test_roles_of_a_hand_made_quadruped(ext):
    """core/rig/rigify_roles.py on a hand-made rig (upright frame, front -Y): the root's
    chain, a spine forward, a neck-and-head leaf, a tail, two 4-bone front legs and two
    3-bone hind legs on the ground, an ear pair off the ground, a 2-bone leg on one side."""
    roles = submodule(ext, "core.rig.rigify_roles")
    heads, tails, parents = [], [], []

    def chain(points, parent):
        for a, b in zip(points[:-1], points[1:]):
            heads.append(a), tails.append(b), parents.append(parent)
            parent = len(heads) - 1
        return parent
    body = chain([(0, 0.5, 1.0), (0, 0.0, 1.0)], -1)
    spine_end = chain([(0, 0.0, 1.0), (0, -0.3, 1.05), (0, -0.6, 1.1), (0, -0.9, 1.1)], body)
    chain([(0, -0.9, 1.1), (0, -1.1, 1.4), (0, -1.3, 1.5)], spine_end)                # neck, head
    chain([(0, 0.5, 1.0), (0, 0.9, 0.9), (0, 1.3, 0.7)], body)                        # tail
    for x in (0.3, -0.3):
        chain([(x, -0.9, 1.1), (x, -0.95, 0.8), (x, -0.9, 0.5), (x, -0.95, 0.15), (x, -1.05, 0.05)], spine_end)
        chain([(x, 0.5, 1.0), (x, 0.55, 0.6), (x, 0.45, 0.3), (x, 0.5, 0.05)], body)
        chain([(x / 3, -1.3, 1.5), (x, -1.3, 1.7), (x * 1.2, -1.3, 1.9), (x * 1.3, -1.3, 2.0)], 5)   # ears
    ground = np.array([[x, y, 0.0] for x in (0.3, -0.3) for y in (-1.05, 0.5)])
    m = roles.creature_metarig(np.array(heads, float), np.array(tails, float), np.array(parents), ground)
    starts = {j: t for j, t in enumerate(m.types) if t}
    assert sorted(starts.values()) == sorted(
        ["basic.super_copy", "spines.basic_spine", "spines.super_head", "spines.basic_tail",
         "limbs.front_paw", "limbs.front_paw", "limbs.arm", "limbs.arm",
         "limbs.simple_tentacle", "limbs.simple_tentacle"])
    assert m.legs == 4 and m.types[:3] == ["basic.super_copy", "spines.basic_spine", ""]
    assert m.types[4] == "spines.super_head" and m.roles[5] == "head"     # ears hang from its head bone
    legs = [j for j, t in starts.items() if t in ("limbs.front_paw", "limbs.arm")]
    assert all(m.params[j] == {"segments": 1} and m.roles[j] == "leg" for j in legs)
    assert {m.collections[j] for j in legs} == {"Leg.L", "Leg.R"}
    assert [m.collections[j] for j in starts if starts[j] == "limbs.simple_tentacle"] == ["Limb.L", "Limb.R"]
    # a longer leg: its first bone FK above the 4-bone paw; the mirror pair of a grounded leg
    heads.append((0.3, 0.0, 1.0)), tails.append((0.3, 0.0, 0.9)), parents.append(0)
    for k in range(4):
        heads.append(tails[-1]), tails.append((0.3, 0.0, 0.7 - 0.2 * k)), parents.append(len(heads) - 2)
    heads.append((-0.3, 0.0, 1.0)), tails.append((-0.3, 0.0, 0.9)), parents.append(0)
    for k in range(4):                       # its mirror image lifted off the ground
        heads.append(tails[-1]), tails.append((-0.3, 0.0, 0.75 - 0.2 * k)), parents.append(len(heads) - 2)
    m = roles.creature_metarig(np.array(heads, float), np.array(tails, float), np.array(parents),
                               np.vstack([ground, [[0.3, 0.0, 0.0]]]))
    assert m.types[28:33] == ["basic.super_copy", "limbs.rear_paw", "", "", ""]
    assert m.types[33:38] == ["basic.super_copy", "limbs.rear_paw", "", "", ""] and m.legs == 6
    assert roles.group_metarig(3).types == ["basic.super_copy"] * 4
