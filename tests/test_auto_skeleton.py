# SPDX-License-Identifier: GPL-3.0-or-later
"""bonesmith.auto_skeleton: meshes in the scene -> armature + Armature modifier, through core."""
import numpy as np
import pytest

from conftest import Event, check_bones_in_place, ground_plane, operator_stand_in, select, started_job

TRANSFORMS = {
    "identity": {},
    "unapplied": dict(location=(1.5, -2.0, 0.3), rotation=(0.3, -0.2, 0.8), scale=(0.7, 1.3, 0.9)),
}


def armatures():
    import bpy
    return [obj for obj in bpy.data.objects if obj.type == 'ARMATURE']


def world_bones(armature, names):
    """World-space heads and tails of the bones called `names`, in that order."""
    A = np.array(armature.matrix_world)
    bones = [armature.data.bones[name] for name in names]
    heads = np.array([A @ (*b.head_local, 1.0) for b in bones])[:, :3]
    tails = np.array([A @ (*b.tail_local, 1.0) for b in bones])[:, :3]
    return heads, tails


@pytest.fixture(params=["humanoid", "sample"])
def character(request):
    return request.param, request.getfixturevalue(request.param)


@pytest.mark.parametrize("transform", list(TRANSFORMS))
def test_auto_skeleton_rigs_the_mesh(bridge, core, make_mesh, character, transform):
    import bpy
    label, (vertices, faces) = character
    obj = make_mesh(label, vertices, faces, **TRANSFORMS[transform])
    world_before = np.array(obj.matrix_world)
    inputs = bridge.mesh.combine_objects([obj])
    # the operator's input is the mesh in world space
    M = world_before
    np.testing.assert_allclose(inputs.vertices, vertices.astype(np.float32) @ M[:3, :3].T + M[:3, 3],
                               atol=1e-5 * np.ptp(vertices, axis=0).max())
    expected = core.extract_skeleton(inputs.vertices, inputs.faces, detail=1.0)

    assert bpy.ops.bonesmith.auto_skeleton(detail=1.0) == {'FINISHED'}
    bpy.context.view_layer.update()

    (armature,) = armatures()
    bones = armature.data.bones
    assert len(bones) > 1
    assert len(bones) == len(expected)
    assert sum(b.parent is None for b in bones) == 1, "one tree"
    np.testing.assert_allclose(np.array(armature.matrix_world), world_before, atol=1e-6)

    # the bones are core's skeleton, in world space
    size = float(np.linalg.norm(np.ptp(inputs.vertices, axis=0)))
    assert sorted(b.name for b in bones) == sorted(expected.names)
    heads, tails = world_bones(armature, expected.names)
    np.testing.assert_allclose(heads, expected.joints, atol=1e-5 * size)
    for name, p in zip(expected.names, expected.parents):
        parent = bones[name].parent
        assert (parent.name if parent else None) == (expected.names[p] if p >= 0 else None)

    # every joint lies within the mesh's world bounding box, and inside the mesh where a
    # character's bones go
    lo, hi = inputs.vertices.min(0), inputs.vertices.max(0)
    assert np.all(heads >= lo - 1e-6 * size) and np.all(heads <= hi + 1e-6 * size)
    check_bones_in_place(armature, obj, vertices, faces, inside_only=transform != "identity")

    # the mesh is rigged, and still where it was
    assert obj.parent == armature
    modifiers = [m for m in obj.modifiers if m.type == 'ARMATURE']
    assert len(modifiers) == 1 and modifiers[0].object == armature
    np.testing.assert_allclose(np.array(obj.matrix_world), world_before, atol=1e-5)
    np.testing.assert_allclose(bridge.mesh.object_arrays(obj)[0], inputs.vertices, atol=1e-5 * size)
    assert bpy.context.view_layer.objects.active == armature


def test_auto_skeleton_several_meshes(bridge, core, make_mesh, humanoid):
    """Several selected meshes are rigged together by one armature aligned with the active one."""
    import bpy
    vertices, faces = humanoid
    top = vertices[:, 2] > 0.8
    keep = np.all(top[faces], axis=1)
    body = make_mesh("body", vertices, faces, location=(0, 0, 1), rotation=(0, 0, 0.5))
    hat = make_mesh("hat", vertices, faces[keep], location=(0, 0, 1.05), rotation=(0, 0, 0.5), select=False)
    hat.select_set(True)
    bpy.context.view_layer.objects.active = body
    expected = core.extract_skeleton(*(lambda s: (s.vertices, s.faces))(
        bridge.mesh.combine_objects([obj for obj in bpy.context.selected_objects])))

    assert bpy.ops.bonesmith.auto_skeleton() == {'FINISHED'}
    (armature,) = armatures()
    assert len(armature.data.bones) == len(expected)
    np.testing.assert_allclose(np.array(armature.matrix_world), np.array(body.matrix_world), atol=1e-6)
    for obj in (body, hat):
        assert obj.parent == armature
        assert [m.object for m in obj.modifiers if m.type == 'ARMATURE'] == [armature]


def test_detail_is_passed_to_core(bridge, core, make_mesh, sample):
    import bpy
    obj = make_mesh("sample", *sample)
    inputs = bridge.mesh.combine_objects([obj])
    coarse = core.extract_skeleton(inputs.vertices, inputs.faces, detail=0.5)
    fine = core.extract_skeleton(inputs.vertices, inputs.faces, detail=2.0)
    if len(fine) == len(coarse):
        pytest.skip("core gives the same joint count at detail 0.5 and 2.0: nothing to tell apart")
    assert bpy.ops.bonesmith.auto_skeleton(detail=2.0) == {'FINISHED'}
    (armature,) = armatures()
    assert len(armature.data.bones) == len(fine)


def test_auto_skeleton_from_edit_mode(make_mesh, humanoid):
    import bpy
    obj = make_mesh("body", *humanoid, location=(0.5, 0, 0))
    bpy.ops.object.mode_set(mode='EDIT')
    assert bpy.ops.bonesmith.auto_skeleton() == {'FINISHED'}
    assert bpy.context.mode == 'OBJECT'
    assert obj.parent is not None and obj.parent.type == 'ARMATURE'
    check_bones_in_place(obj.parent, obj, *humanoid)


# -- bad input: a clear message, nothing changed ----------------------------------------------

def line_strip(n=6):
    vertices = np.zeros((n, 3))
    vertices[:, 0] = np.linspace(0, 1, n)
    faces = np.array([[i, i + 1, i + 2] for i in range(n - 2)])
    return vertices, faces


BAD_MESHES = {
    "empty": lambda h: (np.zeros((0, 3)), np.zeros((0, 3), int), ()),
    "vertices_edges_no_faces": lambda h: (h[0], np.zeros((0, 3), int),
                                          [tuple(e) for e in h[1][:, :2]]),
    "loose_vertices_only": lambda h: (h[0][:50], np.zeros((0, 3), int), ()),
    "nan_coordinates": lambda h: (np.where(np.arange(len(h[0]))[:, None] == 7, np.nan, h[0]), h[1], ()),
    "one_triangle": lambda h: (np.eye(3), np.array([[0, 1, 2]]), ()),
    "zero_area_collinear": lambda h: (*line_strip(), ()),
    "zero_area_coincident": lambda h: (np.ones((4, 3)), np.array([[0, 1, 2], [0, 2, 3]]), ()),
}


# what each refusal names (meshprep.validate and the rig's own checks)
BAD_MESH_FAULTS = {"empty": "no vertices", "vertices_edges_no_faces": "has no faces",
                   "loose_vertices_only": "has no faces", "nan_coordinates": "vertices have NaN",
                   "one_triangle": "only 1 usable triangle", "zero_area_collinear": "zero area",
                   "zero_area_coincident": "at one point"}


@pytest.mark.parametrize("case", list(BAD_MESHES))
def test_bad_mesh_is_refused_cleanly(bridge, core, errors, make_mesh, humanoid, scene_state, case):
    import bpy
    vertices, faces, edges = BAD_MESHES[case](humanoid)
    obj = make_mesh(case, vertices, faces, edges=edges, location=(1, 2, 3))
    inputs = bridge.mesh.combine_objects([obj])

    # core refuses the arrays with a message written for the user ...
    with pytest.raises(errors.InvalidMeshError) as refused:
        core.extract_skeleton(inputs.vertices, inputs.faces)
    message = str(refused.value)
    assert BAD_MESH_FAULTS[case] in message, message

    # ... and the operator reports exactly that message and changes nothing
    before = scene_state()
    with pytest.raises(RuntimeError) as reported:
        bpy.ops.bonesmith.auto_skeleton()
    assert message in str(reported.value)
    assert scene_state() == before
    assert not bpy.data.armatures and not armatures()


def test_non_mesh_selected(make_mesh, scene_state, humanoid):
    import bpy
    make_mesh("body", *humanoid, select=False)
    camera = bpy.data.objects.new("Camera", bpy.data.cameras.new("Camera"))
    bpy.context.scene.collection.objects.link(camera)
    camera.select_set(True)
    bpy.context.view_layer.objects.active = camera
    before = scene_state()
    with pytest.raises(RuntimeError) as reported:
        bpy.ops.bonesmith.auto_skeleton()
    text = str(reported.value)
    assert "needs a mesh object" in text and "'Camera' (camera)" in text
    assert scene_state() == before and not bpy.data.armatures


def test_nothing_selected(make_mesh, scene_state, humanoid):
    import bpy
    make_mesh("body", *humanoid, select=False)
    bpy.context.view_layer.objects.active = None
    before = scene_state()
    with pytest.raises(RuntimeError) as reported:
        bpy.ops.bonesmith.auto_skeleton()
    assert "Nothing is selected" in str(reported.value)
    assert scene_state() == before and not bpy.data.armatures


def test_invoke_in_background_runs_to_completion(make_mesh, humanoid):
    """From scripts and headless runs, INVOKE_DEFAULT still finishes synchronously."""
    import bpy
    obj = make_mesh("body", *humanoid)
    assert bpy.ops.bonesmith.auto_skeleton('INVOKE_DEFAULT') == {'FINISHED'}
    assert obj.parent is not None and obj.parent.type == 'ARMATURE'
    check_bones_in_place(obj.parent, obj, *humanoid)


# -- the modal (background thread) path, driven by hand ---------------------------------------

def _modal_operator(ext_module, slow=False):
    """A stand-in `self` for BONESMITH_OT_auto_skeleton.modal with a job already started,
    as invoke() leaves it for a large mesh in the UI."""
    import bpy
    module = ext_module("operators.auto_skeleton")
    cls = module.BONESMITH_OT_auto_skeleton
    Job = ext_module("operators.job").Job

    op = operator_stand_in(cls, detail=1.0, naming="bonesmith", seconds=cls.seconds)
    op._input = module.read_input(bpy.context)

    op._job = started_job(Job, cls.computation(op, op._input), slow)
    return cls, op


def _drive(cls, op, seconds=300):
    """Run the started modal operator to its end on timer events; its last result."""
    import time
    import bpy
    deadline = time.monotonic() + seconds
    while (result := cls.modal(op, bpy.context, Event('TIMER'))) == {'PASS_THROUGH'}:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    return result


def test_modal_finishes_and_builds_the_rig(ext_module, make_mesh, humanoid):
    import bpy
    obj = make_mesh("body", *humanoid)
    cls, op = _modal_operator(ext_module)
    assert cls.modal(op, bpy.context, Event('MOUSEMOVE')) == {'PASS_THROUGH'}
    result = _drive(cls, op, seconds=120)
    assert result == {'FINISHED'}, op.reports
    assert obj.parent is not None and obj.parent.type == 'ARMATURE'
    assert any('INFO' in kind and "bones" in message for kind, message in op.reports)
    check_bones_in_place(obj.parent, obj, *humanoid)


def test_modal_escape_cancels_and_changes_nothing(ext_module, make_mesh, humanoid, scene_state):
    import bpy
    make_mesh("body", *humanoid)
    before = scene_state()
    cls, op = _modal_operator(ext_module, slow=True)
    assert cls.modal(op, bpy.context, Event('TIMER')) == {'PASS_THROUGH'}
    assert cls.modal(op, bpy.context, Event('ESC', 'PRESS')) == {'CANCELLED'}
    assert op._job.cancelled and op._job.wait(30)
    assert scene_state() == before and not bpy.data.armatures
    assert op.reports == [({'INFO'}, "Auto Skeleton cancelled")]


def test_modal_reports_mesh_deleted_meanwhile(ext_module, make_mesh, humanoid):
    import time
    import bpy
    obj = make_mesh("body", *humanoid)
    cls, op = _modal_operator(ext_module)
    bpy.data.objects.remove(obj)
    deadline = time.monotonic() + 120
    while (result := cls.modal(op, bpy.context, Event('TIMER'))) == {'PASS_THROUGH'}:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    assert result == {'CANCELLED'}
    assert op.reports and "removed or renamed" in op.reports[-1][1]
    assert not bpy.data.armatures


def test_a_character_lying_on_its_back_gets_limbs_with_sides_and_the_report_says_so(ext_module, make_mesh, sample):
    """Imported lying down (an unapplied rotation of -90 degrees about X: up +Y, front +Z),
    legs were named arms and nothing had a side. The operator now finds up and front from
    the limbs and says in its report which way it took the character to face."""
    obj = make_mesh("lying", *sample, rotation=(-np.pi / 2, 0.0, 0.0))
    cls, op = _modal_operator(ext_module)
    result = _drive(cls, op)
    assert result == {'FINISHED'}, op.reports
    assert any("facing +Z, up +Y" in message for _, message in op.reports), op.reports
    names = {b.name for b in obj.parent.data.bones}
    assert {"leg_01.L", "leg_01.R", "arm_01.L", "arm_01.R"} <= names
    check_bones_in_place(obj.parent, obj, *sample)
    # ... and the legs are where the legs are: the character's own down is world -Y
    A = np.array(obj.parent.matrix_world)
    y = {b.name: (A @ (*b.head_local, 1.0))[1] for b in obj.parent.data.bones}
    assert max(y["leg_01.L"], y["leg_01.R"]) < min(y["arm_01.L"], y["arm_01.R"])


def test_a_ground_plane_selected_with_the_character_is_left_out(ext_module, core, make_mesh, sample):
    """A ground plane selected with the character (and active) was rigged with it: a
    generic rig of 15 bones for the 26-bone humanoid, the plane parented to it. It is now
    left out: no parent, no modifier; the rig is the character's own; the report says so."""
    expected = core.extract_skeleton(*sample)
    body = make_mesh("body", *sample)
    ground = make_mesh("Ground", *ground_plane(sample[0]))
    select([body, ground], ground)
    cls, op = _modal_operator(ext_module)
    result = _drive(cls, op)
    assert result == {'FINISHED'}, op.reports
    assert any("'Ground' left out: a flat plate under the character" in message for _, message in op.reports)
    assert ground.parent is None and len(ground.modifiers) == 0
    armature = body.parent
    assert sorted(b.name for b in armature.data.bones) == sorted(expected.names)
    np.testing.assert_allclose(world_bones(armature, expected.names)[0], expected.joints,
                               atol=1e-5 * np.ptp(sample[0], axis=0).max())
