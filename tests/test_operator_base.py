# SPDX-License-Identifier: GPL-3.0-or-later
"""BonesmithOperator (operators/base.py), the lifecycle every Bonesmith operator follows:
read -> compute -> apply, errors of any stage reported in one place with the scene left
as it was. Checked on a probe operator registered for these tests."""
import time

import pytest
from conftest import Event, operator_stand_in

STAGES = ('NONE', 'READ', 'COMPUTE', 'APPLY')
ERRORS = ('DOMAIN', 'CANCELLED', 'BUG')


@pytest.fixture
def probe(ext_module, scene):
    """(the registered probe operator class, the list of stages it ran). The probe adds an
    empty named "probe" in apply(); `fail_at` makes a stage raise `error`."""
    import bpy
    from bpy.props import EnumProperty
    base = ext_module("operators.base")
    errors = ext_module("core.errors")
    calls = []

    def error_of(kind):
        return {'DOMAIN': errors.BonesmithError("The probe refuses"),
                'CANCELLED': errors.Cancelled("Cancelled by the user"),
                'BUG': ValueError("boom")}[kind]

    class BONESMITH_TEST_OT_probe(base.BonesmithOperator, bpy.types.Operator):
        bl_idname = "bonesmith_test.probe"
        bl_label = "Probe"

        fail_at: EnumProperty(items=[(s, s, "") for s in STAGES])
        error: EnumProperty(items=[(e, e, "") for e in ERRORS])

        def read(self, context):
            calls.append("read")
            if self.fail_at == 'READ':
                raise error_of(self.error)
            return "probe"

        def computation(self, name):
            fail, error = self.fail_at == 'COMPUTE', self.error   # options read here

            def work(progress):
                calls.append("compute")
                progress(0.5, "halfway")
                if fail:
                    raise error_of(error)
                return name
            return work

        def apply(self, context, inp, result):
            calls.append("apply")
            if self.fail_at == 'APPLY':
                raise error_of(self.error)
            context.scene.collection.objects.link(bpy.data.objects.new(result, None))
            self.report({'INFO'}, f"Probe: made '{result}'")
            return {'FINISHED'}

        def on_cancel(self, context):
            calls.append("on_cancel")

    bpy.utils.register_class(BONESMITH_TEST_OT_probe)
    yield BONESMITH_TEST_OT_probe, calls
    bpy.utils.unregister_class(BONESMITH_TEST_OT_probe)


def test_runs_read_compute_apply_and_is_undoable(probe):
    import bpy
    cls, calls = probe
    assert bpy.ops.bonesmith_test.probe() == {'FINISHED'}
    assert calls == ["read", "compute", "apply"]
    assert "probe" in bpy.data.objects
    assert {'REGISTER', 'UNDO'} <= set(cls.bl_options)


@pytest.mark.parametrize("stage", ['READ', 'COMPUTE', 'APPLY'])
def test_domain_error_is_reported_and_the_scene_is_unchanged(probe, scene_state, stage):
    import bpy
    _, calls = probe
    before = scene_state()
    with pytest.raises(RuntimeError, match="The probe refuses"):
        bpy.ops.bonesmith_test.probe(fail_at=stage, error='DOMAIN')
    assert scene_state() == before
    ran = ["read", "compute", "apply"][:STAGES.index(stage)]
    assert calls == ran + ["on_cancel"]


@pytest.mark.parametrize("stage", ['READ', 'COMPUTE', 'APPLY'])
def test_report_kinds(probe, stage):
    """Stage by stage, as the user sees it: a domain error as it is (ERROR), Esc as
    "<label> cancelled" (INFO), a bug as "<label> failed" pointing to the console (ERROR)."""
    import bpy
    cls, _ = probe
    expected = {'DOMAIN': ({'ERROR'}, "The probe refuses"),
                'CANCELLED': ({'INFO'}, "Probe cancelled"),
                'BUG': ({'ERROR'}, "Probe failed (ValueError: boom); details are in the system console")}
    for error, report in expected.items():
        op = operator_stand_in(cls, fail_at=stage, error=error)
        assert op.execute(bpy.context) == {'CANCELLED'}
        assert op.reports == [report]


def test_background_job_error_is_reported_and_apply_does_not_run(probe, ext_module, scene_state):
    """The modal side: a job that fails is reported like a synchronous failure."""
    import bpy
    cls, calls = probe
    Job = ext_module("operators.job").Job
    op = operator_stand_in(cls, fail_at='COMPUTE', error='DOMAIN')
    before = scene_state()
    op._input = op.read(bpy.context)
    op._job = Job(op.computation(op._input)).start()
    deadline = time.monotonic() + 30
    while (result := op.modal(bpy.context, Event('TIMER'))) == {'PASS_THROUGH'}:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert result == {'CANCELLED'}
    assert op.reports == [({'ERROR'}, "The probe refuses")]
    assert calls == ["read", "compute", "on_cancel"]
    assert scene_state() == before


def test_background_job_result_is_applied(probe, ext_module):
    import bpy
    cls, calls = probe
    Job = ext_module("operators.job").Job
    op = operator_stand_in(cls, fail_at='NONE', error='DOMAIN')
    op._input = op.read(bpy.context)
    op._job = Job(op.computation(op._input)).start()
    assert op._job.wait(30)
    assert op.modal(bpy.context, Event('TIMER')) == {'FINISHED'}
    assert op.reports == [({'INFO'}, "Probe: made 'probe'")]
    assert "probe" in bpy.data.objects and calls == ["read", "compute", "apply"]


def test_headless_never_computes_in_the_background(probe, ext_module):
    """invoke() from a script without a window runs synchronously, whatever the size."""
    import bpy
    base = ext_module("operators.base")
    assert not base.run_in_background(bpy.context, 10**9)
    assert not base.run_in_background(bpy.context)
    assert bpy.ops.bonesmith_test.probe('INVOKE_DEFAULT') == {'FINISHED'}
    assert probe[1] == ["read", "compute", "apply"]


def test_meshes_again_says_what_changed_while_the_operator_ran(ext_module, errors, make_mesh, humanoid):
    import bpy
    selection = ext_module("bridge.selection")
    a, b = make_mesh("a", *humanoid), make_mesh("b", *humanoid)
    counts = [len(a.data.vertices), len(b.data.vertices)]
    assert selection.meshes_again(["a", "b"], "Probe", counts) == [a, b]
    b.data.vertices.add(1)
    edited = "^The mesh 'b' was edited while Probe ran: run it again$"
    with pytest.raises(errors.BonesmithError, match=edited):
        selection.meshes_again(["a", "b"], "Probe", counts)
    assert selection.meshes_again(["a", "b"], "Probe") == [a, b]   # without counts, edits pass
    bpy.data.objects.remove(a)
    with pytest.raises(errors.BonesmithError, match="^The mesh 'a' was removed or renamed while Probe ran$"):
        selection.meshes_again(["a", "b"], "Probe")
