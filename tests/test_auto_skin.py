# SPDX-License-Identifier: GPL-3.0-or-later
"""bonesmith.auto_skin / auto_rig: mesh(es) + any armature -> vertex groups + Armature modifier."""
import math

import numpy as np
import pytest

from conftest import (Event, check_bones_in_place, extremities, ground_plane, merge, operator_stand_in, select,
                      shoal_arrays, started_job, tube)

TRANSFORM = dict(location=(0.4, -1.0, 0.2), rotation=(0.0, 0.0, 0.6), scale=(0.5, 0.5, 0.5))


# -- helpers ----------------------------------------------------------------------------------

def hand_armature(bridge, humanoid_skeleton, obj, **transform):
    """The hand-made humanoid armature (not parented, no modifier) on `obj`."""
    import bpy
    armature = bridge.armature.skeleton_to_armature(
        humanoid_skeleton(np.array(obj.matrix_world)), name="Rig")
    for key, value in transform.items():
        setattr(armature, key, value)
    bpy.context.view_layer.update()
    return armature


def bone_groups(obj, armature):
    """(V, J) weights of obj for the armature's deforming bones, and their names."""
    import bpy  # noqa: F401
    names = [b.name for b in armature.data.bones if b.use_deform]
    weights = np.zeros((len(obj.data.vertices), len(names)))
    index = {obj.vertex_groups[n].index: j for j, n in enumerate(names) if n in obj.vertex_groups}
    for v in obj.data.vertices:
        for g in v.groups:
            if g.group in index:
                weights[v.index, index[g.group]] = g.weight
    return weights, names


def check_weighted(obj, armature, max_influences=4):
    weights, names = bone_groups(obj, armature)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-5)   # every vertex weighted
    assert (weights > 0).sum(axis=1).max() <= max_influences
    return weights, names


def check_left_hand_follows_forearm(obj, armature, vertices):
    """Weighted, and by the right bone: the left hand's vertices (x > 0.8) on forearm.L."""
    weights, names = check_weighted(obj, armature)
    assert weights[np.asarray(vertices)[:, 0] > 0.8, names.index("forearm.L")].mean() > 0.9


def evaluated_world(bridge, obj):
    import bpy
    bpy.context.view_layer.update()
    return bridge.mesh.object_arrays(obj)[0]


def pose_rotate(armature, bone, angle=math.radians(80), axis='Y'):
    import bpy
    from mathutils import Quaternion
    pose_bone = armature.pose.bones[bone]
    pose_bone.rotation_mode = 'QUATERNION'
    pose_bone.rotation_quaternion = Quaternion({'X': (1, 0, 0), 'Y': (0, 1, 0), 'Z': (0, 0, 1)}[axis], angle)
    bpy.context.view_layer.update()


def reset_pose(armature):
    import bpy
    for pose_bone in armature.pose.bones:
        pose_bone.matrix_basis.identity()
    bpy.context.view_layer.update()


def subtree(armature, name):
    bone = armature.data.bones[name]
    return {name} | {child.name for child in bone.children_recursive}


def vertex_group_state(obj):
    """name -> {vertex: weight} of every vertex group."""
    state = {g.name: {} for g in obj.vertex_groups}
    names = {g.index: g.name for g in obj.vertex_groups}
    for v in obj.data.vertices:
        for g in v.groups:
            state[names[g.group]][v.index] = round(g.weight, 6)
    return state


def check_limbs_ride_on_their_bones(bridge, obj, armature, vertices):
    """Auto Skeleton's limbs on a standing character (`vertices`: the mesh's own, Z up, arms
    along X) carry their extremities, and posing one moves only its own."""
    weights, names = bone_groups(obj, armature)
    # each extremity rides on its own limb: a hand on its arm chain, a sole on its leg
    # chain, the crown on the neck chain (all measured wholly; > 0.9 allows a blend at a
    # wrist-long band's inner edge), and none of it on the other side's limb
    tips = extremities(vertices)
    share = lambda bone: weights[:, [names.index(n) for n in subtree(armature, bone)]].sum(axis=1)  # noqa: E731
    limbs = {"hand.L": "arm_01.L", "hand.R": "arm_01.R", "sole.L": "leg_01.L",
             "sole.R": "leg_01.R", "crown": "neck_01"}
    for tip, limb in limbs.items():
        assert share(limb)[tips[tip]].min() > 0.9, tip
        if tip != "crown":
            other = limb[:-1] + {"L": "R", "R": "L"}[limb[-1]]
            assert share(other)[tips[tip]].max() == 0, tip

    # posing the left thigh swings the left sole and nothing of the right leg or the hands
    rest = evaluated_world(bridge, obj)
    size = float(np.linalg.norm(np.ptp(rest, axis=0)))
    pose_rotate(armature, "leg_01.L", axis='X')
    moved = np.linalg.norm(evaluated_world(bridge, obj) - rest, axis=1)
    assert moved[tips["sole.L"]].min() > 0.1 * size     # an 80° turn at the hip: about a leg length
    for still in ("sole.R", "hand.L", "hand.R", "crown"):
        assert moved[tips[still]].max() < 1e-6 * size, still
    reset_pose(armature)


# -- hand-made armature -----------------------------------------------------------------------

@pytest.mark.parametrize("transform", ["identity", "unapplied"])
def test_auto_skin_hand_made_armature(bridge, humanoid_skeleton, make_mesh, humanoid, transform):
    import bpy
    vertices, faces = humanoid
    obj = make_mesh("body", vertices, faces, **(TRANSFORM if transform == "unapplied" else {}))
    # the user's own vertex group, which Auto Skin must leave alone
    mask = obj.vertex_groups.new(name="cloth_pin")
    mask.add(list(range(0, len(vertices), 7)), 0.25, 'REPLACE')
    user_groups = vertex_group_state(obj)
    armature = hand_armature(bridge, humanoid_skeleton, obj)
    world_before = np.array(obj.matrix_world)
    rest = evaluated_world(bridge, obj)
    select([obj, armature], armature)

    assert bpy.ops.bonesmith.auto_skin() == {'FINISHED'}

    weights, names = check_weighted(obj, armature)
    assert sorted(names) == sorted(g.name for g in obj.vertex_groups if g.name != "cloth_pin")
    assert vertex_group_state(obj)["cloth_pin"] == user_groups["cloth_pin"]
    assert [m.object for m in obj.modifiers if m.type == 'ARMATURE'] == [armature]
    assert obj.parent == armature
    np.testing.assert_allclose(np.array(obj.matrix_world), world_before, atol=1e-6)
    size = float(np.linalg.norm(np.ptp(rest, axis=0)))
    np.testing.assert_allclose(evaluated_world(bridge, obj), rest, atol=1e-5 * size)  # rest: no move

    # every bone gets the vertices around it
    local = vertices  # mesh-local coordinates: x = left/right, z = up
    hand_l = local[:, 0] > 0.8
    head = local[:, 2] > 1.65
    foot_l = (local[:, 2] < 0.2) & (local[:, 0] > 0)
    column = {n: j for j, n in enumerate(names)}
    assert weights[hand_l, column["forearm.L"]].mean() > 0.9
    assert weights[head, column["head"]].mean() > 0.9
    assert weights[foot_l, column["shin.L"]].mean() > 0.9

    # posing the left forearm moves the left hand, not the head, the right arm or the feet
    pose_rotate(armature, "forearm.L", axis="X")
    moved = np.linalg.norm(evaluated_world(bridge, obj) - rest, axis=1)
    assert moved[hand_l].min() > 0.03 * size
    assert moved[local[:, 0] < 0.2].max() < 1e-6 * size
    assert moved[head].max() < 1e-6 * size
    reset_pose(armature)
    np.testing.assert_allclose(evaluated_world(bridge, obj), rest, atol=1e-5 * size)


def test_auto_skin_finds_armature_from_modifier(bridge, humanoid_skeleton, make_mesh, humanoid):
    """Only the mesh selected: the armature comes from its Armature modifier (or parent)."""
    import bpy
    obj = make_mesh("body", *humanoid)
    armature = bridge.armature.build_rig(humanoid_skeleton(), [obj])
    select([obj], obj)
    assert bpy.ops.bonesmith.auto_skin() == {'FINISHED'}
    check_left_hand_follows_forearm(obj, armature, humanoid[0])
    assert [m.object for m in obj.modifiers if m.type == 'ARMATURE'] == [armature]  # not a second one


def test_auto_skin_replaces_its_groups_and_keeps_others(bridge, humanoid_skeleton, make_mesh, humanoid):
    """Running twice gives the same weights: stale members of the bone groups are removed."""
    import bpy
    obj = make_mesh("body", *humanoid)
    armature = hand_armature(bridge, humanoid_skeleton, obj)
    head = obj.vertex_groups.new(name="head")          # a stale group named like a bone
    head.add(list(range(len(obj.data.vertices))), 1.0, 'REPLACE')
    other = obj.vertex_groups.new(name="other")
    other.add([0, 1, 2], 0.5, 'REPLACE')
    select([obj, armature], armature)
    assert bpy.ops.bonesmith.auto_skin() == {'FINISHED'}
    first, _ = check_weighted(obj, armature)
    assert (first[:, [b.name for b in armature.data.bones].index("head")] < 1).any()
    assert obj.vertex_groups[0].name == "head"      # the group kept its place
    assert bpy.ops.bonesmith.auto_skin() == {'FINISHED'}
    second, _ = check_weighted(obj, armature)
    np.testing.assert_allclose(second, first, atol=1e-6)
    assert vertex_group_state(obj)["other"] == {0: 0.5, 1: 0.5, 2: 0.5}
    assert len([m for m in obj.modifiers if m.type == 'ARMATURE']) == 1


def test_auto_skin_from_edit_mode(bridge, humanoid_skeleton, make_mesh, humanoid):
    import bpy
    obj = make_mesh("body", *humanoid)
    armature = hand_armature(bridge, humanoid_skeleton, obj)
    select([obj, armature], obj)
    armature.select_set(True)
    bpy.ops.object.mode_set(mode='EDIT')
    assert bpy.ops.bonesmith.auto_skin() == {'FINISHED'}
    assert bpy.context.mode == 'OBJECT'
    check_left_hand_follows_forearm(obj, armature, humanoid[0])


def test_operators_are_undoable(ext_module):
    ops = ext_module("operators")
    for cls, idname in ((ops.BONESMITH_OT_auto_skin, "bonesmith.auto_skin"),
                        (ops.BONESMITH_OT_auto_rig, "bonesmith.auto_rig"),
                        (ops.BONESMITH_OT_train_skin, "bonesmith.train_skin")):
        assert cls.bl_idname == idname
        assert {'REGISTER', 'UNDO'} <= set(cls.bl_options)


# -- the sample character with Auto Skeleton's armature ---------------------------------------

def test_auto_skin_sample_with_auto_skeleton(bridge, make_mesh, sample):
    import bpy
    obj = make_mesh("sample", *sample, **TRANSFORM)
    assert bpy.ops.bonesmith.auto_skeleton() == {'FINISHED'}
    armature = obj.parent
    assert not obj.vertex_groups
    select([obj, armature], armature)
    assert bpy.ops.bonesmith.auto_skin() == {'FINISHED'}
    weights, names = check_weighted(obj, armature)
    assert len(names) == len(armature.data.bones) and set(names) <= {g.name for g in obj.vertex_groups}
    # every bone that has a mesh around it moves something
    assert (weights.max(axis=0) > 0).sum() >= 0.8 * len(names)

    # posing an arm moves exactly the vertices weighted to that arm's bones
    rest = evaluated_world(bridge, obj)
    size = float(np.linalg.norm(np.ptp(rest, axis=0)))
    arm = next(n for n in ("arm_02.L", "arm_01.L", "arm_02.R", "arm_01.R") if n in names)
    moving = [names.index(n) for n in subtree(armature, arm) if n in names]
    share = weights[:, moving].sum(axis=1)
    pose_rotate(armature, arm, axis='X')
    moved = np.linalg.norm(evaluated_world(bridge, obj) - rest, axis=1)
    assert moved[share == 0].max() < 1e-6 * size
    assert np.median(moved[share > 0.9]) > 0.02 * size
    # ... and they are all on that arm's side of the body
    side = 1.0 if arm.endswith(".L") else -1.0
    local = sample[0]
    center = (local.min(0) + local.max(0)) / 2
    assert np.all(side * (local[share > 0.5, 0] - center[0]) > 0)
    # ... among them that arm's hand, wholly
    assert share[extremities(local)["hand" + arm[-2:]]].min() > 0.9


def test_auto_rig_one_click(bridge, make_mesh, sample):
    import bpy
    obj = make_mesh("sample", *sample)
    assert bpy.ops.bonesmith.auto_rig() == {'FINISHED'}
    armature = obj.parent
    assert armature is not None and armature.type == 'ARMATURE'
    assert [m.object for m in obj.modifiers if m.type == 'ARMATURE'] == [armature]
    weights, names = check_weighted(obj, armature)
    assert len(names) == len(armature.data.bones) > 5
    assert bpy.context.view_layer.objects.active == armature
    check_bones_in_place(armature, obj, *sample)
    check_limbs_ride_on_their_bones(bridge, obj, armature, sample[0])


def test_auto_rig_a_shoal_moves_each_fish_with_its_own_bone(bridge, make_mesh):
    import bpy
    vertices, faces, fish = shoal_arrays()
    obj = make_mesh("shoal", vertices, faces, **TRANSFORM)
    assert bpy.ops.bonesmith.auto_rig() == {'FINISHED'}
    armature = obj.parent
    weights, names = check_weighted(obj, armature)
    assert sorted(names) == ["member_%02d" % k for k in range(1, 13)] + ["root"]
    own = weights.argmax(axis=1)
    assert all(len(set(own[fish == k])) == 1 for k in range(12))          # a fish is one bone's
    assert len({own[fish == k][0] for k in range(12)}) == 12               # and each has its own
    assert weights.max(axis=1).min() > 0.99
    # turning one fish's bone moves that fish and no other
    rest = evaluated_world(bridge, obj)
    bone = names[own[fish == 4][0]]
    pose_rotate(armature, bone, axis='Z')
    moved = np.linalg.norm(evaluated_world(bridge, obj) - rest, axis=1) > 1e-6
    assert moved[fish == 4].any() and not moved[fish != 4].any()


def test_auto_rig_builds_for_the_basis_not_a_shown_shape_key(bridge, make_mesh, sample):
    """A shape key the user is showing (here one that makes the character 3x taller) must
    not move the skeleton away from the Basis the weights are computed on; the key is left
    as it was."""
    import bpy
    obj = make_mesh("sample", *sample)
    obj.shape_key_add(name="Basis")
    tall = obj.shape_key_add(name="Tall")
    co = np.array([v.co for v in obj.data.vertices]) * (1.0, 1.0, 3.0)
    tall.data.foreach_set("co", co.astype(np.float32).ravel())
    tall.value = 1.0
    obj.active_shape_key_index = 1
    assert bpy.ops.bonesmith.auto_rig() == {'FINISHED'}
    armature = obj.parent
    heads = np.array([(armature.matrix_world @ b.head_local)[:] for b in armature.data.bones])
    lo, hi = sample[0].min(axis=0), sample[0].max(axis=0)
    margin = 0.05 * np.linalg.norm(hi - lo)
    assert (heads >= lo - margin).all() and (heads <= hi + margin).all()
    assert heads[:, 2].max() > 0.5 * hi[2]                       # spans the body, not a corner of it
    check_weighted(obj, armature)
    assert not tall.mute and tall.value == 1.0 and obj.active_shape_key_index == 1


def test_auto_rig_fits_into_the_users_modifier_stack(bridge, make_mesh, sample):
    """An Armature modifier of an older rig is re-aimed (two would deform the mesh twice);
    a new one goes after a Mirror modifier (so the mirrored half is posed on its own)."""
    import bpy
    old = bpy.data.objects.new("old_rig", bpy.data.armatures.new("old_rig"))
    bpy.context.scene.collection.objects.link(old)
    body = make_mesh("body", *sample)
    body.modifiers.new("Subdivision", 'SUBSURF')
    kept = body.modifiers.new("Deform", 'ARMATURE')
    kept.object = old
    half = make_mesh("half", *sample, location=(4, 0, 0))
    half.modifiers.new("Mirror", 'MIRROR')
    half.modifiers.new("Subdivision", 'SUBSURF')
    from conftest import select
    for obj in (body, half):
        select([obj], obj)
        assert bpy.ops.bonesmith.auto_rig() == {'FINISHED'}
    assert [(m.type, m.name) for m in body.modifiers] == [('SUBSURF', "Subdivision"), ('ARMATURE', "Deform")]
    assert body.modifiers["Deform"].object == body.parent != old
    assert [m.type for m in half.modifiers] == ['MIRROR', 'ARMATURE', 'SUBSURF']
    assert half.modifiers[1].object == half.parent


def test_auto_rig_bad_mesh_changes_nothing(make_mesh, scene_state):
    import bpy
    make_mesh("flat", np.eye(3), np.array([[0, 1, 2]]))
    before = scene_state()
    with pytest.raises(RuntimeError):
        bpy.ops.bonesmith.auto_rig()
    assert scene_state() == before and not bpy.data.armatures


def test_auto_rig_failing_after_the_armature_takes_it_back(ext_module, make_mesh, humanoid, scene_state,
                                                           monkeypatch):
    """Writing the weights fails after the armature was built: the armature goes again, the
    mesh is where it was, unparented, without the Armature modifier."""
    import bpy
    obj = make_mesh("body", *humanoid, location=(0.5, 0.2, 0.1))
    world = np.array(obj.matrix_world)
    before = scene_state()

    def broken(*args, **kw):
        raise ValueError("no room for weights")
    monkeypatch.setattr(ext_module("bridge.weights"), "write_weights_split", broken)
    with pytest.raises(RuntimeError, match=r"Auto Rig failed \(ValueError: no room for weights\)"):
        bpy.ops.bonesmith.auto_rig()
    assert scene_state() == before and not bpy.data.armatures
    np.testing.assert_allclose(np.array(obj.matrix_world), world, atol=1e-6)


# -- any armature: Rigify-like (DEF bones among helpers) ---------------------------------------

def rigify_like(humanoid_skeleton, obj):
    """The hand skeleton as DEF- bones under non-deforming ORG- parents, plus MCH- and
    control bones (all non-deforming) spread over the body."""
    import bpy
    from mathutils import Vector
    skeleton = humanoid_skeleton(np.array(obj.matrix_world))
    data = bpy.data.armatures.new("rig")
    armature = bpy.data.objects.new("rig", data)
    bpy.context.scene.collection.objects.link(armature)
    select([armature], armature)
    bpy.ops.object.mode_set(mode='EDIT')
    org, deform = [], []
    for j, name in enumerate(skeleton.names):
        head, tail = Vector(skeleton.joints[j]), Vector(skeleton.tails[j])
        o = data.edit_bones.new(f"ORG-{name}")
        o.head, o.tail, o.use_deform = head, tail, False
        d = data.edit_bones.new(f"DEF-{name}")
        d.head, d.tail, d.use_deform = head, tail, True
        m = data.edit_bones.new(f"MCH-{name}")
        m.head, m.tail, m.use_deform = head, head + (tail - head) * 0.5, False
        c = data.edit_bones.new(f"{name}_ctrl")
        c.head, c.tail, c.use_deform = tail, tail + Vector((0, -0.2, 0)), False
        org.append(o)
        deform.append(d)
        d.parent = o
        m.parent = o
    for j, p in enumerate(skeleton.parents):
        if p >= 0:
            org[j].parent = org[p]
    root = data.edit_bones.new("root")
    root.head, root.tail, root.use_deform = (0, 0, 0), (0, 0.3, 0), False
    org[0].parent = root
    bpy.ops.object.mode_set(mode='OBJECT')
    return armature, [f"DEF-{n}" for n in skeleton.names]


def test_auto_skin_rigify_like_only_def_bones(bridge, humanoid_skeleton, make_mesh, humanoid):
    import bpy
    obj = make_mesh("body", *humanoid)
    armature, deform_names = rigify_like(humanoid_skeleton, obj)
    select([obj, armature], armature)
    assert bpy.ops.bonesmith.auto_skin() == {'FINISHED'}
    assert sorted(g.name for g in obj.vertex_groups) == sorted(deform_names)
    weights, names = check_weighted(obj, armature)
    # the DEF bones move with their ORG parents: posing ORG-forearm.L moves the left hand
    rest = evaluated_world(bridge, obj)
    pose_rotate(armature, "ORG-forearm.L", axis="X")
    moved = np.linalg.norm(evaluated_world(bridge, obj) - rest, axis=1)
    assert moved[humanoid[0][:, 0] > 0.8].min() > 0.01
    assert moved[humanoid[0][:, 0] < 0.2].max() < 1e-6


# -- bad input: a clear message and nothing changed, or a correct result ----------------------

def full_state(scene_state):
    import bpy
    state = scene_state()
    state["groups"] = {o.name: vertex_group_state(o) for o in bpy.data.objects if o.type == 'MESH'}
    return state


def test_armature_without_deforming_bones(bridge, humanoid_skeleton, make_mesh, humanoid, scene_state):
    import bpy
    obj = make_mesh("body", *humanoid)
    armature = hand_armature(bridge, humanoid_skeleton, obj)
    for bone in armature.data.bones:
        bone.use_deform = False
    select([obj, armature], armature)
    before = full_state(scene_state)
    with pytest.raises(RuntimeError, match="no deforming bones"):
        bpy.ops.bonesmith.auto_skin()
    assert full_state(scene_state) == before


def test_no_armature(make_mesh, humanoid, scene_state):
    import bpy
    make_mesh("body", *humanoid)
    before = full_state(scene_state)
    with pytest.raises(RuntimeError, match="No armature"):
        bpy.ops.bonesmith.auto_skin()
    assert full_state(scene_state) == before


def test_only_armature_selected(bridge, humanoid_skeleton, make_mesh, humanoid, scene_state):
    import bpy
    obj = make_mesh("body", *humanoid)
    armature = hand_armature(bridge, humanoid_skeleton, obj)
    select([armature], armature)
    before = full_state(scene_state)
    with pytest.raises(RuntimeError, match="needs a mesh"):
        bpy.ops.bonesmith.auto_skin()
    select([], None)
    with pytest.raises(RuntimeError, match="Nothing is selected"):
        bpy.ops.bonesmith.auto_skin()
    assert full_state(scene_state) == before


def refused_unchanged(obj, armature, scene_state, match) -> str:
    """Auto Skin on obj + armature fails with `match` and leaves the scene as it was;
    returns the message."""
    import bpy
    select([obj, armature], armature)
    before = full_state(scene_state)
    with pytest.raises(RuntimeError, match=match) as error:
        bpy.ops.bonesmith.auto_skin()
    assert full_state(scene_state) == before
    return str(error.value)


def test_mesh_and_armature_far_apart(bridge, humanoid_skeleton, make_mesh, humanoid, scene_state):
    obj = make_mesh("body", *humanoid)
    armature = hand_armature(bridge, humanoid_skeleton, obj, location=(25.0, 0.0, 0.0))
    message = refused_unchanged(obj, armature, scene_state, "far away from the bones")
    assert "'body'" in message


def test_armature_in_another_unit_is_refused(bridge, humanoid_skeleton, make_mesh, humanoid, scene_state):
    """A centimetre-sized armature standing at the feet of a metre-sized mesh (a unit
    mix-up) used to be skinned without a word: the whole body went to the bones nearest
    the feet."""
    vertices, faces = humanoid
    obj = make_mesh("body", vertices, faces)
    feet = vertices[np.argmin(vertices[:, 2])]
    armature = hand_armature(bridge, humanoid_skeleton, obj, scale=(0.01, 0.01, 0.01),
                             location=tuple(feet))
    message = refused_unchanged(obj, armature, scene_state, "smaller than the mesh")
    assert "apply the objects' scale" in message


def test_mesh_and_armature_apart_but_transformed_onto_each_other(bridge, humanoid_skeleton, make_mesh, humanoid):
    """Objects far apart by their origins but overlapping in world space are fine (what counts
    is where the vertices and bones are, not the object origins)."""
    import bpy
    vertices, faces = humanoid
    obj = make_mesh("body", vertices - (30.0, 0.0, 0.0), faces, location=(30.0, 0.0, 0.0))
    matrix = np.eye(4)
    matrix[:3, 3] = (-40.0, 0.0, 0.0)
    armature = bridge.armature.skeleton_to_armature(
        humanoid_skeleton(), name="Rig", matrix_world=matrix)  # bones still on the body
    assert tuple(armature.location) == (-40.0, 0.0, 0.0)
    select([obj, armature], armature)
    assert bpy.ops.bonesmith.auto_skin() == {'FINISHED'}
    weights, names = check_weighted(obj, armature)
    assert weights[vertices[:, 0] > 0.8, names.index("forearm.L")].mean() > 0.9
    np.testing.assert_allclose(np.array(obj.matrix_world)[:3, 3], (30.0, 0.0, 0.0), atol=1e-6)


def test_bone_outside_the_mesh(bridge, humanoid_skeleton, make_mesh, humanoid):
    """A deforming bone that floats beside the body (a prop, a stray helper) still gives
    every vertex weights, and the body keeps its own bones."""
    import bpy
    from mathutils import Vector
    vertices, faces = humanoid
    obj = make_mesh("body", vertices, faces)
    armature = hand_armature(bridge, humanoid_skeleton, obj)
    select([armature], armature)
    bpy.ops.object.mode_set(mode='EDIT')
    stray = armature.data.edit_bones.new("prop")
    stray.head, stray.tail = Vector((1.5, 0.0, 1.0)), Vector((1.5, 0.0, 1.4))
    bpy.ops.object.mode_set(mode='OBJECT')
    select([obj, armature], armature)
    assert bpy.ops.bonesmith.auto_skin() == {'FINISHED'}
    weights, names = check_weighted(obj, armature)
    assert weights[vertices[:, 0] < 0.6, names.index("prop")].max() == 0.0
    assert weights[vertices[:, 2] > 1.65, names.index("head")].mean() > 0.9


def test_tiny_bones(bridge, humanoid_skeleton, make_mesh, humanoid):
    """Near-zero-length bones (the shortest Blender keeps) are weighted like any other, and
    nothing breaks."""
    import bpy
    from mathutils import Vector
    vertices, faces = humanoid
    obj = make_mesh("body", vertices, faces)
    armature = hand_armature(bridge, humanoid_skeleton, obj)
    select([armature], armature)
    bpy.ops.object.mode_set(mode='EDIT')
    bones = armature.data.edit_bones
    tiny = bones.new("tiny")
    tiny.head = bones["head"].tail
    tiny.tail = tiny.head + Vector((0.0, 0.0, 2e-5))
    tiny.parent = bones["head"]
    bones["forearm.L"].tail = bones["forearm.L"].head + Vector((2e-5, 0.0, 0.0))
    bpy.ops.object.mode_set(mode='OBJECT')
    assert "tiny" in armature.data.bones
    select([obj, armature], armature)
    assert bpy.ops.bonesmith.auto_skin() == {'FINISHED'}
    weights, names = check_weighted(obj, armature)
    hand_l = vertices[:, 0] > 0.8
    assert weights[hand_l, names.index("forearm.L")].mean() > 0.5


def test_zero_length_bone(bridge, humanoid_skeleton, make_mesh, humanoid):
    """A bone made with head == tail (Blender keeps it, a few micrometres long) is weighted
    like any other bone; every vertex still gets weights."""
    import bpy
    vertices, faces = humanoid
    obj = make_mesh("body", vertices, faces)
    armature = hand_armature(bridge, humanoid_skeleton, obj)
    select([armature], armature)
    bpy.ops.object.mode_set(mode='EDIT')
    zero = armature.data.edit_bones.new("zero")
    zero.head = zero.tail = armature.data.edit_bones["spine"].tail
    zero.parent = armature.data.edit_bones["spine"]
    bpy.ops.object.mode_set(mode='OBJECT')
    if bpy.app.version < (5, 0, 0):  # Blender 4.x deletes zero-length bones on leaving Edit Mode
        assert "zero" not in armature.data.bones
        pytest.skip("Blender 4.x deletes zero-length bones on leaving Edit Mode: nothing to weight")
    assert armature.data.bones["zero"].length < 1e-5
    select([obj, armature], armature)
    assert bpy.ops.bonesmith.auto_skin() == {'FINISHED'}
    weights, names = check_weighted(obj, armature)
    assert "zero" in names
    assert weights[vertices[:, 0] > 0.8, names.index("forearm.L")].mean() > 0.9


def test_several_meshes(bridge, humanoid_skeleton, make_mesh, humanoid):
    """Several selected meshes are weighted together (each keeps its own vertex order,
    transforms and groups) to one armature."""
    import bpy
    vertices, faces = humanoid
    top = vertices[:, 2] > 1.55
    keep = np.all(top[faces], axis=1)
    body = make_mesh("body", vertices, faces, location=(0.3, 0, 0))
    used = np.unique(faces[keep])
    remap = -np.ones(len(vertices), dtype=int)
    remap[used] = np.arange(len(used))
    # a helmet: the head's surface, scaled up a little, as its own object with a transform
    helmet_local = (vertices[used] - (0, 0, 1.7)) * 1.1
    helmet = make_mesh("helmet", helmet_local, remap[faces[keep]], location=(0.3, 0, 1.7), select=False)
    armature = hand_armature(bridge, humanoid_skeleton, body)
    select([body, helmet, armature], armature)
    assert bpy.ops.bonesmith.auto_skin() == {'FINISHED'}
    for obj in (body, helmet):
        assert obj.parent == armature
        assert [m.object for m in obj.modifiers if m.type == 'ARMATURE'] == [armature]
        check_weighted(obj, armature)
    weights, names = bone_groups(helmet, armature)
    assert weights[:, names.index("head")].mean() > 0.8


def test_meshes_of_different_armatures(bridge, humanoid_skeleton, make_mesh, humanoid, scene_state):
    import bpy
    a = make_mesh("a", *humanoid)
    b = make_mesh("b", *humanoid, location=(3, 0, 0), select=False)
    bridge.armature.build_rig(humanoid_skeleton(np.array(a.matrix_world)), [a], name="RigA")
    bridge.armature.build_rig(humanoid_skeleton(np.array(b.matrix_world)), [b], name="RigB")
    select([a, b], a)
    before = full_state(scene_state)
    with pytest.raises(RuntimeError, match="different armatures"):
        bpy.ops.bonesmith.auto_skin()
    assert full_state(scene_state) == before


def test_several_armatures_selected_uses_active(bridge, humanoid_skeleton, make_mesh, humanoid):
    import bpy
    obj = make_mesh("body", *humanoid)
    first = hand_armature(bridge, humanoid_skeleton, obj)
    second = hand_armature(bridge, humanoid_skeleton, obj)
    select([obj, first, second], obj)
    with pytest.raises(RuntimeError, match="Several armatures"):
        bpy.ops.bonesmith.auto_skin()
    select([obj, first, second], second)
    assert bpy.ops.bonesmith.auto_skin() == {'FINISHED'}
    assert [m.object for m in obj.modifiers if m.type == 'ARMATURE'] == [second]


def test_empty_mesh_is_refused(bridge, humanoid_skeleton, make_mesh, humanoid, scene_state):
    import bpy
    body = make_mesh("body", *humanoid)
    armature = hand_armature(bridge, humanoid_skeleton, body)
    empty = make_mesh("empty", np.zeros((0, 3)), np.zeros((0, 3), int), select=False)
    select([empty, armature], armature)
    before = full_state(scene_state)
    with pytest.raises(RuntimeError, match="'empty' has no vertices"):
        bpy.ops.bonesmith.auto_skin()
    assert full_state(scene_state) == before


# -- the modal (background thread) path, driven by hand --------------------------------------

def _modal(ext_module, slow=False):
    """A stand-in `self` for BONESMITH_OT_auto_skin with its job started, as invoke() leaves
    it for a large mesh in the UI."""
    import bpy
    module = ext_module("operators.auto_skin")
    Job = ext_module("operators.job").Job
    cls = module.BONESMITH_OT_auto_skin

    op = operator_stand_in(cls, max_influences=4)
    op._input = module.read_input(bpy.context)

    skin = ext_module("bridge.skin")
    op._job = started_job(Job, lambda progress: skin.compute(op._input, 4, progress), slow)
    return op


def _drive(op):
    import time
    import bpy
    deadline = time.monotonic() + 120
    while (result := op.modal(bpy.context, Event('TIMER'))) == {'PASS_THROUGH'}:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    return result


def test_modal_auto_skin_finishes(ext_module, bridge, humanoid_skeleton, make_mesh, humanoid):
    obj = make_mesh("body", *humanoid)
    armature = hand_armature(bridge, humanoid_skeleton, obj)
    select([obj, armature], armature)
    op = _modal(ext_module)
    assert _drive(op) == {'FINISHED'}, op.reports
    check_left_hand_follows_forearm(obj, armature, humanoid[0])
    assert any("Auto Skin:" in message for _, message in op.reports)


def test_modal_auto_skin_escape_changes_nothing(ext_module, bridge, humanoid_skeleton, make_mesh, humanoid,
                                                scene_state):
    import bpy
    obj = make_mesh("body", *humanoid)
    armature = hand_armature(bridge, humanoid_skeleton, obj)
    select([obj, armature], armature)
    before = full_state(scene_state)
    op = _modal(ext_module, slow=True)
    assert op.modal(bpy.context, Event('TIMER')) == {'PASS_THROUGH'}
    assert op.modal(bpy.context, Event('ESC', 'PRESS')) == {'CANCELLED'}
    assert op._job.wait(30)
    assert full_state(scene_state) == before
    assert op.reports == [({'INFO'}, "Auto Skin cancelled")]


def test_modal_auto_skin_mesh_edited_meanwhile(ext_module, bridge, humanoid_skeleton, make_mesh, humanoid):
    import bmesh
    obj = make_mesh("body", *humanoid)
    armature = hand_armature(bridge, humanoid_skeleton, obj)
    select([obj, armature], armature)
    op = _modal(ext_module)
    bm = bmesh.new()
    bm.from_mesh(obj.data)
    bm.verts.new((5.0, 5.0, 5.0))
    bm.to_mesh(obj.data)
    bm.free()
    assert _drive(op) == {'CANCELLED'}
    assert "edited while Auto Skin ran" in op.reports[-1][1]
    assert not obj.vertex_groups


# -- FBX: the weights survive export and import ------------------------------------------------

@pytest.mark.parametrize("source", ["hand_made", "auto_rig"])
def test_fbx_round_trip_keeps_weights(bridge, humanoid_skeleton, make_mesh, humanoid, tmp_path, source):
    import bpy
    from scipy.spatial import cKDTree
    vertices, faces = humanoid
    obj = make_mesh("body", vertices, faces, **TRANSFORM)
    if source == "hand_made":
        armature = hand_armature(bridge, humanoid_skeleton, obj)
        select([obj, armature], armature)
        assert bpy.ops.bonesmith.auto_skin() == {'FINISHED'}
    else:
        assert bpy.ops.bonesmith.auto_rig() == {'FINISHED'}
        armature = obj.parent
    weights, names = check_weighted(obj, armature)
    positions = evaluated_world(bridge, obj)
    path = tmp_path / "skinned.fbx"
    select([obj], obj)
    assert bpy.ops.bonesmith.export_fbx(filepath=str(path)) == {'FINISHED'}

    for datablock in list(bpy.data.objects):
        bpy.data.objects.remove(datablock)
    for blocks in (bpy.data.meshes, bpy.data.armatures):
        for datablock in list(blocks):
            blocks.remove(datablock)
    bpy.ops.import_scene.fbx(filepath=str(path))
    (mesh,) = [o for o in bpy.data.objects if o.type == 'MESH']
    (imported,) = [o for o in bpy.data.objects if o.type == 'ARMATURE']
    got, got_names = bone_groups(mesh, imported)
    assert sorted(got_names) == sorted(names)
    got = got[:, [got_names.index(n) for n in names]]
    # match the vertices by position (the importer may reorder them)
    size = float(np.linalg.norm(np.ptp(positions, axis=0)))
    distance, index = cKDTree(evaluated_world(bridge, mesh)).query(positions)
    assert distance.max() < 1e-4 * size
    np.testing.assert_allclose(got[index], weights, atol=1e-4)


def test_modal_auto_rig_finishes_and_escape_changes_nothing(ext_module, make_mesh, sample, scene_state):
    import bpy
    module = ext_module("operators.auto_rig")
    Job = ext_module("operators.job").Job
    cls = module.BONESMITH_OT_auto_rig
    obj = make_mesh("sample", *sample)

    def stand_in():
        return operator_stand_in(cls, detail=1.0, naming="bonesmith", max_influences=4)

    before = full_state(scene_state)
    cancelled = stand_in()
    cancelled._input = module.read_input(bpy.context)
    cancelled._job = Job(lambda progress: module.compute(cancelled._input, 1.0, 4, progress)).start()
    assert cancelled.modal(bpy.context, Event('ESC', 'PRESS')) == {'CANCELLED'}
    assert cancelled._job.wait(60)
    assert full_state(scene_state) == before and not bpy.data.armatures

    op = stand_in()
    op._input = module.read_input(bpy.context)
    op._job = Job(lambda progress: module.compute(op._input, 1.0, 4, progress)).start()
    assert _drive(op) == {'FINISHED'}, op.reports
    assert op._job.fraction == pytest.approx(1.0)
    check_weighted(obj, obj.parent)
    assert "Auto Rig:" in op.reports[-1][1]


def test_mesh_parented_to_a_bone_is_reparented(bridge, humanoid_skeleton, make_mesh, humanoid):
    """A mesh rigidly parented to a bone would move twice with an Armature modifier too:
    Auto Skin parents it to the armature object instead, keeping it in place."""
    import bpy
    from mathutils import Matrix
    obj = make_mesh("body", *humanoid, location=(0.1, 0.2, 0.3))
    armature = hand_armature(bridge, humanoid_skeleton, obj)
    world = np.array(obj.matrix_world)
    obj.parent = armature
    obj.parent_type = 'BONE'
    obj.parent_bone = "spine"
    obj.matrix_world = Matrix(world.tolist())
    bpy.context.view_layer.update()
    rest = evaluated_world(bridge, obj)
    select([obj, armature], armature)
    assert bpy.ops.bonesmith.auto_skin() == {'FINISHED'}
    assert obj.parent == armature and obj.parent_type == 'OBJECT'
    np.testing.assert_allclose(evaluated_world(bridge, obj), rest, atol=1e-5)
    pose_rotate(armature, "spine", axis="X")
    moved = np.linalg.norm(evaluated_world(bridge, obj) - rest, axis=1)
    assert moved[humanoid[0][:, 2] < 0.5].max() < 1e-6        # the legs stay: it moved once


def test_a_ground_plane_selected_with_the_meshes_is_left_out(ext_module, bridge, humanoid_skeleton, make_mesh,
                                                            humanoid):
    """A ground plane selected with the mesh and its armature got vertex groups and an
    Armature modifier. It is left out, the report says so, and the mesh is weighted as
    without it."""
    obj = make_mesh("body", *humanoid)
    ground = make_mesh("Ground", *ground_plane(humanoid[0]))
    armature = hand_armature(bridge, humanoid_skeleton, obj)
    select([obj, ground, armature], armature)
    op = _modal(ext_module)
    assert op._input.mesh_names == ["body"] and op._input.left_out == ["Ground"]
    assert _drive(op) == {'FINISHED'}, op.reports
    assert any("'Ground' left out" in message for _, message in op.reports)
    assert len(ground.vertex_groups) == 0 and len(ground.modifiers) == 0
    check_left_hand_follows_forearm(obj, armature, humanoid[0])


def half_with_mirror(make_mesh, vertices, faces):
    """The x >= 0 half of a symmetric character with a Mirror modifier (vertex groups
    mirrored by name, Blender's default): how modellers build one."""
    import bpy
    keep = (vertices[faces][:, :, 0] >= -1e-6).all(axis=1)
    obj = make_mesh("half", vertices, faces[keep])
    obj.modifiers.new("Mirror", 'MIRROR').use_mirror_merge = True
    bpy.context.view_layer.update()
    return obj


def moved_by(bridge, obj, armature, bone):
    """(k, 3) rest positions of the evaluated vertices that `bone` turned 70 degrees moves."""
    import bpy
    bpy.context.view_layer.update()
    before = evaluated_world(bridge, obj)
    pose = armature.pose.bones[bone]
    pose.rotation_mode = 'XYZ'
    pose.rotation_euler = (0.0, 0.0, math.radians(70))
    after = evaluated_world(bridge, obj)
    pose.rotation_euler = (0.0, 0.0, 0.0)
    return before[np.linalg.norm(after - before, axis=1) > 1e-3 * np.ptp(before, axis=0).max()]


def test_a_half_with_a_mirror_modifier_gets_both_arms(bridge, make_mesh, sample):
    """Auto Rig on a half body with a Mirror modifier: the weights go on the half, and the
    modifier mirrors them to the other side's bones by name (Unity's LeftLowerArm ->
    RightLowerArm), so each forearm moves its own side's hand."""
    import bpy
    obj = half_with_mirror(make_mesh, *sample)
    assert bpy.ops.bonesmith.auto_rig(naming="unity") == {'FINISHED'}
    left, right = (moved_by(bridge, obj, obj.parent, f"{side}LowerArm") for side in ("Left", "Right"))
    assert len(left) and len(right)
    assert left[:, 0].min() > 0 and right[:, 0].max() < 0


def test_mixamo_names_on_a_half_with_a_mirror_modifier_are_refused(bridge, make_mesh, sample, scene_state):
    """Blender cannot mirror Mixamo's names (mixamorig:LeftForeArm keeps its name), so the
    mirrored half followed the left arm's bones and the right forearm moved nothing. Auto
    Rig and Auto Skin now refuse, say what to do, and change nothing."""
    import bpy
    obj = half_with_mirror(make_mesh, *sample)
    before = full_state(scene_state)
    with pytest.raises(RuntimeError, match="Mirror modifier.*cannot mirror bone names such as 'mixamorig:Left"):
        bpy.ops.bonesmith.auto_rig(naming="mixamo")
    assert full_state(scene_state) == before
    assert bpy.ops.bonesmith.auto_skeleton(naming="mixamo") == {'FINISHED'}    # no weights: rigged
    refused_unchanged(obj, obj.parent, scene_state, "Apply the Mirror modifier first, or choose another Naming")



def test_a_mirror_modifier_that_does_not_mirror_vertex_groups_is_refused(make_mesh, sample, scene_state):
    """With the Mirror modifier's Vertex Groups option off, the mirrored half gets the
    same groups as the half: both arms followed the left arm's bones."""
    import bpy
    obj = half_with_mirror(make_mesh, *sample)
    obj.modifiers["Mirror"].use_mirror_vertex_groups = False
    before = full_state(scene_state)
    with pytest.raises(RuntimeError, match="does not mirror vertex groups.*Turn on the modifier's Vertex Groups"):
        bpy.ops.bonesmith.auto_rig(naming="unity")
    assert full_state(scene_state) == before


def test_a_ground_plane_joined_into_the_mesh_follows_the_root(core, make_mesh, sample):
    """A plane 100 times the character's height joined into its mesh: Auto Rig made a
    one-bone rig. The rig is now the character's own and the plane's vertices follow the
    root bone alone (Auto Skin's placement check leaves the plane out of the mesh's size)."""
    import bpy
    plane = ground_plane(sample[0], width=100.0)
    obj = make_mesh("body", *merge(sample, plane))
    assert bpy.ops.bonesmith.auto_rig() == {'FINISHED'}
    armature = obj.parent
    assert sorted(b.name for b in armature.data.bones) == sorted(core.extract_skeleton(*sample).names)
    weights, names = check_weighted(obj, armature)
    root = next(b.name for b in armature.data.bones if b.parent is None)
    np.testing.assert_allclose(weights[len(sample[0]):, names.index(root)], 1.0)
    select([obj, armature], armature)          # the placement check leaves the plane out too
    assert bpy.ops.bonesmith.auto_skin() == {'FINISHED'}
    np.testing.assert_allclose(check_weighted(obj, armature)[0], weights, atol=1e-6)


def test_a_mesh_repeated_by_an_array_modifier_is_refused(make_mesh, scene_state):
    """A tube arrayed four times: Auto Rig built a rig along the four copies but weighted
    the one in the mesh data, so all four moved like it and the top three copies' bones
    moved nothing. Auto Rig and Auto Skin now refuse before changing anything."""
    import bpy
    obj = make_mesh("segment", *tube(np.array([[0, 0, 0.0], [0, 0, 0.5], [0, 0, 1.0]]), radius=0.08))
    array = obj.modifiers.new("Copies", 'ARRAY')
    array.count, array.relative_offset_displace = 4, (0.0, 0.0, 1.0)
    before = full_state(scene_state)
    with pytest.raises(RuntimeError, match="'segment' has an Array modifier \\('Copies'\\).*Apply the modifier"):
        bpy.ops.bonesmith.auto_rig()
    assert full_state(scene_state) == before
    assert bpy.ops.bonesmith.auto_skeleton() == {'FINISHED'}
    refused_unchanged(obj, obj.parent, scene_state, "every copy the modifier makes would move like them")
