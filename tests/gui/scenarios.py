# SPDX-License-Identifier: GPL-3.0-or-later
"""The GUI scenarios: a user's path through the Bonesmith sidebar in a Blender with a window,
then checks on the scene (and screenshots where the look is the point). docs/gui_tests.md.

Each scenario is a generator taking the UI (tests/gui/ui.py) and yielding seconds to wait;
a failed expect() fails it. Real X input where the interaction is the point (N, the tab,
the folded panels' headers, Auto Rig's button, Esc, Ctrl+Z), bpy to set up and to look
(tests/gui/scene.py). The order matters: the first opens the tab that later ones click in,
the last removes the extension.
"""
from __future__ import annotations

import importlib
import math
import os
import tempfile
from pathlib import Path

import bpy
import numpy as np

from scene import (armatures, character, check_mesh_follows, check_rigged, run, run_error, select,
                   snapshot, weights)
from ui import CheckFailed, expect

REPO = Path(__file__).resolve().parents[2]
MODULE = ""            # the enabled extension's module, e.g. bl_ext.user_default.bonesmith
DRAWS: dict = {}       # draw() calls per Bonesmith panel / preferences class
TAB = "Bonesmith"

EXPECTED_NAMES = {     # Naming -> bones an Auto Skeleton of the (humanoid) sample must have
    'bonesmith': {"spine_01"},
    'mixamo': {"mixamorig:Hips", "mixamorig:LeftArm"},
    'unreal': {"pelvis", "upperarm_l", "calf_r"},
    'unity': {"Hips", "LeftUpperArm"},
    'rigify': {"spine", "upper_arm.L"},
}


# -- set-up --------------------------------------------------------------------------------------

def prepare(ui, link_repo=False):
    """Find (or link) the enabled extension, count its panels' draws, and turn the
    timeline into an Info editor (where the reports are listed)."""
    global MODULE
    names = [n for n in bpy.context.preferences.addons.keys() if n.split(".")[-1] == "bonesmith"]
    if not names and link_repo:
        names = [_enable_from_checkout()]
    expect(names, "no Bonesmith extension is enabled")
    MODULE = names[0]
    ext = importlib.import_module(MODULE)
    for cls in (*importlib.import_module(f"{MODULE}.panels").classes,
                importlib.import_module(f"{MODULE}.preferences").BonesmithPreferences):
        if hasattr(cls, "draw"):
            _count_draws(cls)
    ui.area('DOPESHEET_EDITOR').type = 'INFO'
    if bpy.context.preferences.view.show_splash:   # (--factory-startup) a click outside closes it
        ui.click(ui.region(ui.area('VIEW_3D')), 20, 20)
        bpy.context.preferences.view.show_splash = False
    ui.tmp = Path(tempfile.mkdtemp(prefix="bonesmith-gui-"))
    print(f"GUI scenarios on {MODULE} ({Path(ext.__file__).parent})", flush=True)


def _enable_from_checkout() -> str:
    import addon_utils
    directory = tempfile.mkdtemp(prefix="bonesmith_repo_")
    os.symlink(REPO, os.path.join(directory, "bonesmith"), target_is_directory=True)
    bpy.context.preferences.extensions.repos.new(name="Bonesmith GUI", module="bonesmith_gui",
                                                 custom_directory=directory, source='USER')
    errors = []
    addon_utils.enable("bl_ext.bonesmith_gui.bonesmith", default_set=True, handle_error=errors.append)
    expect(not errors, f"enabling the checkout failed: {errors}")
    return "bl_ext.bonesmith_gui.bonesmith"


DRAW_ERRORS: list = []  # (class, error) of draw() calls that raised; the runner fails on them


def _count_draws(cls):
    original = cls.draw
    DRAWS[cls.__name__] = 0

    def draw(self, context):
        try:
            original(self, context)
        except Exception as error:
            DRAW_ERRORS.append(f"{cls.__name__}.draw: {type(error).__name__}: {error}")
            raise
        DRAWS[cls.__name__] += 1     # drawn to the end
    cls.draw = draw    # Blender looks draw() up on the class at every redraw


def reset(ui):
    """Between scenarios: object mode, an empty scene, the preferences as shipped."""
    for window in list(bpy.context.window_manager.windows)[1:]:
        with bpy.context.temp_override(window=window):
            bpy.ops.wm.window_close()
    if bpy.context.object is not None and bpy.context.object.mode != 'OBJECT':
        with ui.override():
            bpy.ops.object.mode_set(mode='OBJECT')
    for obj in list(bpy.data.objects):
        bpy.data.objects.remove(obj)
    for blocks in (bpy.data.meshes, bpy.data.armatures, bpy.data.actions, bpy.data.materials,
                   bpy.data.images):
        for block in list(blocks):
            blocks.remove(block)
    prefs = _prefs()
    if prefs is not None:
        prefs.async_vertices = 30_000


def _prefs():
    addon = bpy.context.preferences.addons.get(MODULE)
    return addon.preferences if addon is not None else None


def reports(ui) -> str:
    """The reports listed in the Info editor (the timeline's area, prepare()), as text."""
    wm = bpy.context.window_manager
    wm.clipboard = ""
    with ui.override('INFO'):
        bpy.ops.info.select_all(action='SELECT')
        bpy.ops.info.report_copy()
        bpy.ops.info.select_all(action='DESELECT')
    return wm.clipboard


def click_auto_rig(ui, done):
    """Click the sidebar's Auto Rig button, as a user does: it is the panel's first button,
    so click down from below the panel's header (labels take no clicks) until done()."""
    _, region, _ = sidebar(ui)
    expect(region.active_panel_category == TAB, "the Bonesmith tab is not shown")
    scale = bpy.context.preferences.system.ui_scale
    x = (region.width - 30 * scale) / 2
    for step in range(14):
        ui.click(region, x, region.height - (34 + 7 * step) * scale)
        yield 0.4
        if done():
            return
    raise CheckFailed("no click in the sidebar ran Auto Rig")


def status_baseline(ui):
    return ui.pixels(ui.status_bar())


def sidebar(ui):
    area = ui.area('VIEW_3D')
    return area, ui.region(area, 'UI'), area.spaces.active


def sidebar_shot(ui, name):
    area, region, _ = sidebar(ui)
    return ui.shot(name, ui.rect(region))


# -- scenarios -----------------------------------------------------------------------------------

def open_tab_by_clicking(ui):
    """N opens the sidebar; a click on its "Bonesmith" tab shows our panel."""
    area, _, space = sidebar(ui)
    space.show_region_ui = False
    character()
    before = DRAWS["BONESMITH_PT_skeleton"]
    yield 0.3
    ui.key("n")
    yield from ui.until(lambda: space.show_region_ui, 5, "N to open the sidebar")
    yield 0.5
    region = ui.region(area, 'UI')
    expect(region.width > 100, f"sidebar only {region.width} px wide")
    scale = bpy.context.preferences.system.ui_scale
    # The tabs run down the sidebar's right edge; click down the strip until ours is active
    # (the order of the tabs depends on what else is installed).
    x = region.width - 10 * scale
    y = region.height - 12 * scale
    while region.active_panel_category != TAB and y > 0:
        ui.click(region, x, y)
        yield 0.25
        y -= 12 * scale
    expect(region.active_panel_category == TAB,
           f"no click on the tab strip showed {TAB} (last: {region.active_panel_category})")
    yield from ui.until(lambda: DRAWS["BONESMITH_PT_skeleton"] > before, 5, "the panel to draw")
    sidebar_shot(ui, "sidebar_mesh_selected")


SUBPANELS = ("BONESMITH_PT_correctives", "BONESMITH_PT_train", "BONESMITH_PT_options")  # bottom up


def open_folded_panels(ui):
    """The folded sub-panels (Options, Train Skin, Correctives) open with a click on their
    headers and draw."""
    mesh, arm = character(with_rig=True)
    select([mesh, arm], arm)
    expect(run(ui, "bonesmith.auto_skin") == {'FINISHED'}, "Auto Skin failed")
    _, region, _ = sidebar(ui)
    expect(region.active_panel_category == TAB, "the Bonesmith tab is not shown")
    scale = bpy.context.preferences.system.ui_scale
    # Click up from below the panels: the last folded header is hit first, and opening a
    # panel moves nothing above it; then jump past the header just opened.
    # (Clicks on the empty, see-through part of the sidebar reach the 3D View: they deselect.)
    y, opened = 40 * scale, set()
    while opened != set(SUBPANELS) and y < region.height:
        ui.click(region, 45 * scale, y)
        yield 0.15
        counts = dict(DRAWS)
        region.tag_redraw()      # one redraw: the open panels draw, the folded ones do not
        yield from ui.until(lambda: DRAWS["BONESMITH_PT_skeleton"] > counts["BONESMITH_PT_skeleton"],
                            2, "the sidebar to redraw", 0.05)
        now = {name for name in SUBPANELS if DRAWS[name] > counts[name]}
        if opened - now:         # the click folded the header just opened: it is still there
            ui.click(region, 45 * scale, y)
            yield 0.3
            now = opened
        y += (24 if now - opened else 6) * scale
        opened = now
    select([mesh, arm], arm)
    counts = dict(DRAWS)
    region.tag_redraw()
    yield 0.5
    folded = [name for name in SUBPANELS if DRAWS[name] == counts[name]]
    expect(not folded, f"still folded after the clicks: {folded}")
    sidebar_shot(ui, "sidebar_panels_open")


def auto_rig_imported(ui, fmt):
    source = character("Character")
    path = ui.tmp / f"character.{fmt}"
    with ui.override():
        if fmt == "fbx":
            bpy.ops.export_scene.fbx(filepath=str(path), use_selection=True)
        else:
            bpy.ops.export_scene.gltf(filepath=str(path), export_format='GLB', use_selection=True)
    expect(path.is_file(), f"Blender's exporter wrote no {path.name}")
    bpy.data.objects.remove(source)
    with ui.override():
        if fmt == "fbx":
            bpy.ops.import_scene.fbx(filepath=str(path))
        else:
            bpy.ops.import_scene.gltf(filepath=str(path))
    meshes = [o for o in bpy.context.selected_objects if o.type == 'MESH']
    expect(len(meshes) == 1, f"the import selected {[o.name for o in bpy.context.selected_objects]}")
    mesh = meshes[0]
    bpy.context.view_layer.objects.active = mesh
    yield 0.2
    result = run(ui, "bonesmith.auto_rig")
    expect(result == {'FINISHED'}, f"Auto Rig returned {result}")
    rigs = armatures()
    expect(len(rigs) == 1, f"{len(rigs)} armatures after Auto Rig")
    check_rigged(mesh, rigs[0])
    bone = check_mesh_follows(mesh, rigs[0])
    print(f"{fmt}: '{bone}' carries its vertices", flush=True)
    yield 0.5
    return rigs[0], mesh, bone


def auto_rig_fbx(ui):
    """A character imported from FBX: Auto Rig, then a bone turns the mesh."""
    rig, mesh, bone = yield from auto_rig_imported(ui, "fbx")
    _, region, _ = sidebar(ui)
    expect(region.active_panel_category == TAB, "the Bonesmith tab is no longer shown")
    sidebar_shot(ui, "sidebar_after_auto_rig")
    rig.pose.bones[bone].rotation_euler = (math.radians(60), 0.0, 0.0)   # for the picture
    select([mesh, rig], rig)
    with ui.override():
        bpy.ops.view3d.view_selected()
    select([rig])            # as Auto Rig leaves it: the hint says what comes next
    yield 1.0
    ui.region(ui.area('VIEW_3D'), 'UI').tag_redraw()
    yield 0.5
    ui.shot("viewport_posed", ui.rect(ui.region(ui.area('VIEW_3D'))))


def auto_rig_gltf(ui):
    """A character imported from glTF (.glb): Auto Rig, then a bone turns the mesh."""
    yield from auto_rig_imported(ui, "glb")


def auto_skeleton_each_naming(ui):
    """Auto Skeleton with each Naming of the sidebar gives that naming's bones."""
    settings = bpy.context.scene.bonesmith
    for naming, wanted in EXPECTED_NAMES.items():
        reset(ui)
        mesh = character()
        settings.naming = naming      # what the sidebar's Naming menu sets
        yield 0.2
        result = run(ui, "bonesmith.auto_skeleton", naming=settings.naming)
        expect(result == {'FINISHED'}, f"Auto Skeleton ({naming}) returned {result}")
        rigs = armatures()
        expect(len(rigs) == 1, f"{naming}: {len(rigs)} armatures")
        names = {b.name for b in rigs[0].data.bones}
        expect(wanted <= names, f"{naming}: missing {sorted(wanted - names)} (has {sorted(names)[:6]}...)")
        expect(any(m.type == 'ARMATURE' and m.object == rigs[0] for m in mesh.modifiers),
               f"{naming}: the mesh is not bound to the armature")
        if naming == 'mixamo':
            select([mesh])
            yield 0.5
            sidebar_shot(ui, "sidebar_naming_mixamo")
    settings.naming = 'bonesmith'


def adjust_joints_markers(ui):
    """Auto Rig (Mixamo names), Adjust Joints, the left knee's marker moved up, Rebuild: the
    shin starts at the marker, the right knee follows (a symmetric body), the sidebar shows
    Rebuild and Done while the markers are out (docs/auto_skeleton.md#markers)."""
    settings = bpy.context.scene.bonesmith
    mesh = character()
    settings.naming = 'mixamo'
    yield 0.2
    result = run(ui, "bonesmith.auto_rig", naming='mixamo')
    expect(result == {'FINISHED'}, f"Auto Rig returned {result}")
    (rig,) = armatures()
    select([rig])
    result = run(ui, "bonesmith.adjust_joints")
    expect(result == {'FINISHED'}, f"Adjust Joints returned {result}")
    marks = {o.name: o for o in rig.children if o.name.startswith("BS_")}
    expect({"BS_knee.L", "BS_knee.R", "BS_chin"} <= set(marks), f"markers shown: {sorted(marks)}")
    height = float(np.ptp([v.co.z for v in mesh.data.vertices]))
    knee = marks["BS_knee.L"]
    right = rig.matrix_world @ rig.data.bones["mixamorig:RightLeg"].head_local
    knee.matrix_world.translation.z += 0.08 * height        # the user's drag (G, Z)
    target = knee.matrix_world.translation.copy()
    yield 0.5
    ui.region(ui.area('VIEW_3D'), 'UI').tag_redraw()         # the new row moves the sub-panels down
    yield 1.0
    sidebar_shot(ui, "sidebar_markers")
    result = run(ui, "bonesmith.rebuild_joints")
    expect(result == {'FINISHED'}, f"Rebuild returned {result}")
    head = rig.matrix_world @ rig.data.bones["mixamorig:LeftLeg"].head_local
    expect((head - target).length < 1e-4 * height, f"the left shin starts {(head - target).length:.4f} from the marker")
    moved = rig.matrix_world @ rig.data.bones["mixamorig:RightLeg"].head_local
    expect(abs(moved.z - right.z - 0.08 * height) < 1e-3 * height, "the right knee did not follow its mirror")
    check_rigged(mesh, rig)
    settings.naming = 'bonesmith'


def auto_skin_existing_armature(ui):
    """Auto Skin onto the artist's own armature: groups for its bones, a modifier, a parent."""
    mesh, arm = character(with_rig=True)
    select([mesh, arm], arm)
    yield 0.2
    result = run(ui, "bonesmith.auto_skin")
    expect(result == {'FINISHED'}, f"Auto Skin returned {result}")
    expect(armatures() == [arm], "Auto Skin made an armature of its own")
    check_rigged(mesh, arm)
    expect(mesh.parent == arm, f"the mesh's parent is {mesh.parent}")
    W, _ = weights(mesh)
    expect(((W > 0).sum(1) <= 4).all(), "a vertex has more than Max Influences (4) bones")
    check_mesh_follows(mesh, arm)


def background_escape(ui):
    """Above the background threshold Auto Rig runs with its progress in the status bar;
    Esc cancels and the scene is as it was."""
    _prefs().async_vertices = 500           # the preference, lowered for the test
    character(record="quatU_women_casual.npz")
    before = snapshot()
    yield 0.3
    idle = status_baseline(ui)
    result = run(ui, "bonesmith.auto_rig")
    expect(result == {'RUNNING_MODAL'}, f"Auto Rig returned {result}, not a background run")
    op = next((op for op in ui.window.modal_operators if op.bl_idname == "BONESMITH_OT_auto_rig"), None)
    expect(op is not None, "no modal Auto Rig")
    job = op._job            # the operator's own instance: how far its job has come
    yield from ui.until(lambda: job.done or job.fraction > 0.05, 20, "the job's progress")
    yield 0.3
    expect(ui.modal_running("BONESMITH_OT_auto_rig") and not job.done,
           "the background Auto Rig ended before Esc")
    busy = status_baseline(ui)
    ui.shot("status_bar_progress", ui.status_bar())
    expect(busy != idle, "the status bar did not change while Auto Rig ran")
    ui.key("Escape")
    yield from ui.until(lambda: not ui.modal_running("BONESMITH_OT_auto_rig"), 10, "Esc to stop Auto Rig")
    yield 1.0      # a result that arrived late must still be dropped
    expect(snapshot() == before, f"the scene changed: {snapshot()} != {before}")


def undo_auto_rig(ui):
    """Ctrl+Z after Auto Rig gives back the scene before it."""
    character()
    with ui.override():
        bpy.ops.ed.undo_push(message="Character")
    before = snapshot()
    yield 0.3
    yield from click_auto_rig(ui, lambda: armatures())
    expect(len(armatures()) == 1, "no armature after Auto Rig")
    yield 0.5
    ui.key("ctrl+z")
    yield from ui.until(lambda: not armatures(), 10, "Ctrl+Z to remove the armature")
    yield 0.3
    expect(snapshot() == before, f"after Ctrl+Z {snapshot()} != {before}")


def error_non_mesh(ui):
    """A non-mesh selected: the error in the status bar, nothing changed."""
    empty = bpy.data.objects.new("Empty", None)
    bpy.context.scene.collection.objects.link(empty)
    select([empty])
    before = snapshot()
    yield 0.3
    message = "Rigging needs a mesh object, but the selection is 'Empty' (empty)"
    yield from click_auto_rig(ui, lambda: message in reports(ui))
    shown = status_baseline(ui)
    yield from ui.until(lambda: status_baseline(ui) != shown, 3, "the status bar to show the error")
    yield 0.3
    ui.shot("status_bar_error", ui.status_bar())
    expect(message in reports(ui), f"the reports: {reports(ui)}")
    expect(snapshot() == before, "the scene changed")


def train_skin_without_torch(ui):
    """Train Skin in a Blender without PyTorch says so clearly and changes nothing."""
    mesh, arm = character(with_rig=True)
    select([mesh, arm], arm)
    expect(run(ui, "bonesmith.auto_skin") == {'FINISHED'}, "Auto Skin failed")
    select([mesh], mesh)
    before = snapshot()
    try:
        import torch  # noqa: F401
        has_torch = True
    except ImportError:
        has_torch = False
    yield 0.2
    if not has_torch:
        message = run_error(ui, "bonesmith.train_skin", epochs=1)
        expect("needs PyTorch" in message and "pip install torch" in message, f"unclear: {message}")
        expect("Auto Skin itself does not need PyTorch" in message, message)
    else:   # with PyTorch: the training starts in the background and Esc stops it
        expect(run(ui, "bonesmith.train_skin", epochs=1) == {'RUNNING_MODAL'}, "no background training")
        yield 1.0
        ui.key("Escape")
        yield from ui.until(lambda: not ui.modal_running("BONESMITH_OT_train_skin"), 30, "Esc")
    expect(snapshot() == before, "the scene changed")


def learn_and_bake_correctives(ui):
    """Learn Correctives (Preserve Volume as the deformation to learn), then Bake: a
    `_LBS` copy with driven corrective shape keys."""
    mesh, arm = character(with_rig=True)
    select([mesh, arm], arm)
    expect(run(ui, "bonesmith.auto_skin") == {'FINISHED'}, "Auto Skin failed")
    next(m for m in mesh.modifiers if m.type == 'ARMATURE').use_deform_preserve_volume = True
    select([arm])
    yield 0.2
    settings = bpy.context.scene.bonesmith_correctives
    result = run(ui, "bonesmith.learn_correctives", poses=40, max_degrees=50.0,
                 source=settings.source, max_keys=settings.max_keys)
    expect(result in ({'RUNNING_MODAL'}, {'FINISHED'}), f"Learn Correctives returned {result}")
    yield from ui.until(lambda: not ui.modal_running("BONESMITH_OT_learn_correctives"), 180,
                        "Learn Correctives to finish")
    model = arm.get("bonesmith_correctives")
    expect(model and Path(model).is_file(), f"no learned model on the armature ({model})")
    result = run(ui, "bonesmith.bake_correctives", mode='LIVE')
    expect(result == {'FINISHED'}, f"Bake Correctives returned {result}")
    copy = bpy.data.objects.get(f"{mesh.name}_LBS")
    expect(copy is not None, "no _LBS copy")
    keys = [kb.name for kb in copy.data.shape_keys.key_blocks] if copy.data.shape_keys else []
    expect(any(k.startswith("BSC_") for k in keys), f"no corrective shape keys: {keys[:5]}")
    drivers = copy.data.shape_keys.animation_data.drivers
    expect(len(drivers) == sum(k.startswith("BSC_") for k in keys), "keys without drivers")
    expect(mesh.hide_get() and not copy.hide_get(), "the original is not hidden behind the copy")
    Path(model).unlink(missing_ok=True)


def export_fbx_reimports(ui):
    """Export FBX writes a file that imports back as the same rig."""
    mesh = character()
    expect(run(ui, "bonesmith.auto_rig") == {'FINISHED'}, "Auto Rig failed")
    rig = armatures()[0]
    deform = sorted(b.name for b in rig.data.bones if b.use_deform)
    n_vertices = len(mesh.data.vertices)
    path = ui.tmp / "export.fbx"
    select([rig])
    yield 0.2
    result = run(ui, "bonesmith.export_fbx", 'EXEC_DEFAULT', filepath=str(path))
    expect(result == {'FINISHED'}, f"Export FBX returned {result}")
    expect(path.is_file() and path.stat().st_size > 10_000, "no FBX written")
    reset(ui)
    with ui.override():
        bpy.ops.import_scene.fbx(filepath=str(path))
    rigs = armatures()
    expect(len(rigs) == 1, f"{len(rigs)} armatures imported")
    names = sorted(b.name for b in rigs[0].data.bones)
    expect(names == deform, f"imported bones {names[:5]}... != the deforming bones {deform[:5]}...")
    meshes = [o for o in bpy.data.objects if o.type == 'MESH']
    expect(len(meshes) == 1, f"{len(meshes)} meshes imported")
    expect(len(meshes[0].data.vertices) == n_vertices,
           f"{len(meshes[0].data.vertices)} vertices imported, {n_vertices} exported")
    check_rigged(meshes[0], rigs[0])


def preferences_page(ui):
    """Edit > Preferences > Add-ons, Bonesmith expanded: its preferences draw."""
    before = DRAWS["BonesmithPreferences"]
    bpy.context.window_manager.addon_search = "Bonesmith"
    with ui.override():
        bpy.ops.screen.userpref_show(section='ADDONS')
    windows = bpy.context.window_manager.windows
    yield from ui.until(lambda: len(windows) == 2, 5, "the Preferences window")
    win = windows[1]
    # No window manager under Xvfb: put the window where all of it shows.
    xid = ui.x_window("Preferences")
    ui.xdo("windowmove", xid, 150, 40)
    ui.xdo("windowsize", xid, 760, 520)
    yield 0.5
    with bpy.context.temp_override(window=win):
        bpy.ops.preferences.addon_expand(module=MODULE)   # the row's disclosure triangle
    rect = ui.x_rect(xid)
    ui.xdo("mousemove", rect[0] + rect[2] // 2, rect[1] + rect[3] // 2)   # it redraws
    for area in win.screen.areas:
        area.tag_redraw()
    yield from ui.until(lambda: DRAWS["BonesmithPreferences"] > before, 10, "the preferences to draw")
    yield 0.5
    ui.shot("preferences", rect)


def disable_and_remove(ui):
    """Disabling, then removing the extension prints no error and leaves nothing registered."""
    import addon_utils
    offset = ui.log_size()
    repo_module = MODULE.split(".")[1]
    addon_utils.disable(MODULE, default_set=True)
    yield 0.5
    expect(MODULE not in bpy.context.preferences.addons, "still enabled")
    expect(not hasattr(bpy.types, "BONESMITH_PT_skeleton"), "the panel is still registered")
    expect(not hasattr(bpy.types.Scene, "bonesmith"), "Scene.bonesmith is still there")
    repos = bpy.context.preferences.extensions.repos
    index = next(i for i, r in enumerate(repos) if r.module == repo_module)
    directory = Path(repos[index].directory) / "bonesmith"
    if repo_module == "user_default":      # installed from the zip: uninstall it too
        with ui.override():
            result = bpy.ops.extensions.package_uninstall(repo_index=index, pkg_id="bonesmith")
        expect(result == {'FINISHED'}, f"uninstall returned {result}")
        expect(not directory.exists(), f"{directory} is still there")
    yield 0.5
    printed = ui.log_since(offset) if ui.log else ""
    bad = [line for line in printed.splitlines() if "Traceback" in line or "rror" in line]
    expect(not bad, f"printed: {bad[:5]}")
    expect(ui.log is not None, "no Blender log to read (--log)")


SCENARIOS = [
    open_tab_by_clicking,
    open_folded_panels,
    auto_rig_fbx,
    auto_rig_gltf,
    auto_skeleton_each_naming,
    adjust_joints_markers,
    auto_skin_existing_armature,
    background_escape,
    undo_auto_rig,
    error_non_mesh,
    train_skin_without_torch,
    learn_and_bake_correctives,
    export_fbx_reimports,
    preferences_page,
    disable_and_remove,
]
