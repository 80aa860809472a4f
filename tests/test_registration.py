# SPDX-License-Identifier: GPL-3.0-or-later
"""The extension registers the Blender way; core stays free of bpy; the background job."""
import subprocess
import sys
import threading
import time

import pytest


def test_core_does_not_import_bpy(cli_env):
    code = ("import sys, bonesmith.core, bonesmith.core.skeleton, bonesmith.core.errors; "
            "print('bpy' in sys.modules, 'mathutils' in sys.modules, 'bmesh' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], env=cli_env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "False", "False"]


def test_package_import_does_not_import_bpy(cli_env):
    code = "import sys, bonesmith, bonesmith.cli; print('bpy' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], env=cli_env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_registered(ext):
    import bpy
    assert ext.__name__.endswith("bonesmith")
    assert ext.__name__ in bpy.context.preferences.addons
    assert hasattr(bpy.types, "BONESMITH_OT_auto_skeleton")
    assert hasattr(bpy.types, "BONESMITH_OT_export_fbx")
    panel = bpy.types.BONESMITH_PT_skeleton
    assert (panel.bl_space_type, panel.bl_region_type, panel.bl_category) == ('VIEW_3D', 'UI', "Bonesmith")
    assert bpy.context.scene.bonesmith.detail == pytest.approx(1.0)
    prefs = bpy.context.preferences.addons[ext.__name__].preferences
    assert prefs.async_vertices > 0


def test_operators_undoable(ext_module):
    import bpy
    ops = ext_module("operators")
    auto = ops.BONESMITH_OT_auto_skeleton
    assert auto.bl_idname == "bonesmith.auto_skeleton"
    assert {'REGISTER', 'UNDO'} <= set(auto.bl_options)
    assert ops.BONESMITH_OT_export_fbx.bl_idname == "bonesmith.export_fbx"
    rna = bpy.ops.bonesmith.auto_skeleton.get_rna_type()
    assert "detail" in rna.properties.keys()


def test_unregister_and_register_again(ext):
    import addon_utils
    import bpy
    addon_utils.disable(ext.__name__, default_set=True)
    try:
        assert not hasattr(bpy.types, "BONESMITH_OT_auto_skeleton")
        assert not hasattr(bpy.types, "BONESMITH_PT_skeleton")
        assert not hasattr(bpy.types.Scene, "bonesmith")
    finally:
        failures = []
        addon_utils.enable(ext.__name__, default_set=True, handle_error=failures.append)
    assert not failures
    assert hasattr(bpy.types, "BONESMITH_OT_auto_skeleton")
    assert bpy.context.scene.bonesmith.detail == pytest.approx(1.0)


# -- the background job the modal operator runs ---------------------------------------------

def test_job_returns_result_and_reports_progress(ext_module):
    Job = ext_module("operators.job").Job
    seen = []

    def work(progress):
        for i in range(5):
            progress(i / 4, f"step {i}")
            seen.append(i)
        return "skeleton"

    job = Job(work).start()
    assert job.wait(10)
    assert job.error is None and job.result == "skeleton"
    assert job.fraction == pytest.approx(1.0) and job.message == "step 4"
    assert seen == list(range(5))


def test_job_cancel_stops_at_next_progress_call(ext_module):
    Job = ext_module("operators.job").Job
    Cancelled = ext_module("core.errors").Cancelled
    reached = threading.Event()
    steps = []

    def work(progress):
        for i in range(1000):
            progress(i / 1000)
            steps.append(i)
            reached.set()
            time.sleep(0.005)
        return "finished"

    job = Job(work).start()
    assert reached.wait(10)
    job.cancel()
    assert job.wait(10)
    assert isinstance(job.error, Cancelled)
    assert job.result is None and len(steps) < 1000


def test_job_hands_exceptions_to_the_caller(ext_module):
    Job = ext_module("operators.job").Job

    def work(progress):
        raise ValueError("boom")

    job = Job(work).start()
    assert job.wait(10)
    assert isinstance(job.error, ValueError) and str(job.error) == "boom"
