# SPDX-License-Identifier: GPL-3.0-or-later
"""A front-view PNG of meshes with their skeleton, headless.

Blender's Workbench engine draws it when a GPU context can be made (in the UI always; in
headless `bpy` it needs an OpenGL/EGL driver, software Mesa does). Without one, Blender
aborts the whole process on the first render, so headless runs probe in a subprocess
first and otherwise draw the picture with numpy (core/picture.py: flat-shaded
orthographic projection, bones on top). Armatures are overlays, never rendered, so bones become octahedron meshes
in a temporary scene; the user's scene is left as it was.
"""
from __future__ import annotations

import math
import os
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import bpy
import numpy as np

from ..core import picture
from ..core.mesh import bbox_diagonal
from .armature import bone_segments
from .mesh import combine_objects, new_mesh

_PROBE = """
import bpy
scene = bpy.context.scene
scene.render.engine = 'BLENDER_WORKBENCH'
scene.render.resolution_x = scene.render.resolution_y = 8
camera = bpy.data.objects.new('probe', bpy.data.cameras.new('probe'))
scene.collection.objects.link(camera)
scene.camera = camera
bpy.ops.render.render()
"""


@lru_cache(maxsize=1)
def workbench_available() -> bool:
    """Whether Workbench can render in this process without aborting it."""
    if not bpy.app.background:
        return True
    if bpy.app.binary_path:  # a Blender executable running headless
        command = [bpy.app.binary_path, "-b", "--factory-startup", "--python-expr", _PROBE]
    else:  # the `bpy` Python module
        command = [sys.executable, "-c", _PROBE]
    try:
        result = subprocess.run(command, capture_output=True, timeout=180)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return result.returncode == 0


def octahedra(heads, tails, x_axes, z_axes) -> tuple[np.ndarray, np.ndarray]:
    """Blender-style octahedral bone shapes: (6J, 3) vertices, (8J, 3) triangles."""
    length = np.linalg.norm(tails - heads, axis=1, keepdims=True)
    ring_center = heads + 0.1 * (tails - heads)
    r = 0.1 * length
    ring = [ring_center + r * x_axes, ring_center + r * z_axes,
            ring_center - r * x_axes, ring_center - r * z_axes]
    vertices = np.stack([heads, *ring, tails], axis=1).reshape(-1, 3)
    base = np.array([[0, 1, 2], [0, 2, 3], [0, 3, 4], [0, 4, 1],
                     [5, 2, 1], [5, 3, 2], [5, 4, 3], [5, 1, 4]])
    faces = (base[None] + 6 * np.arange(len(heads))[:, None, None]).reshape(-1, 3)
    return vertices, faces


def render_preview(filepath, meshes, armature=None, *, size: int = 768, method: str = "auto") -> Path:
    """Write a front view (looking along +Y, Z up) of `meshes` and `armature` to a PNG.

    method: "workbench", "numpy" or "auto" (Workbench where it can run; env
    BONESMITH_RENDER overrides auto). Returns the path written.
    """
    filepath = Path(filepath)
    filepath.parent.mkdir(parents=True, exist_ok=True)
    meshes = list(meshes)
    if method == "auto":
        method = os.environ.get("BONESMITH_RENDER") or ("workbench" if workbench_available() else "numpy")
    mesh_set = combine_objects(meshes)
    bones = bone_segments(armature)
    everything = np.vstack([mesh_set.vertices, bones[0], bones[1]])
    if not len(everything) or not np.isfinite(everything).all():
        raise ValueError("nothing finite to render")
    if method == "workbench":
        _render_workbench(filepath, meshes, bones, everything, size)
    elif method == "numpy":
        picture.draw_front_view(filepath, mesh_set.vertices, mesh_set.faces, bones, everything, size)
    else:
        raise ValueError(f"unknown render method {method!r}")
    return filepath


def render_poses(filepath, meshes, armature, poses, *, size: int = 1400, gap: float = 0.15,
                 turn: float = 30.0, method: str = "auto") -> Path:
    """Several poses of a rigged character side by side (front view), one PNG.

    poses: a list of poses for bridge.pose.apply_pose ([(bone, axis, degrees), ...]; [] is
    the rest pose). Each is drawn as Blender deforms the meshes (Armature modifier), with
    its posed bones, turned `turn` degrees about the vertical (a three-quarter view shows
    limbs moving forward and back), `gap` (fraction of the widest pose) apart. The
    armature's own pose is restored afterwards.
    """
    from . import pose as bridge_pose

    filepath = Path(filepath)
    filepath.parent.mkdir(parents=True, exist_ok=True)
    meshes = list(meshes)
    if method == "auto":
        method = os.environ.get("BONESMITH_RENDER") or ("workbench" if workbench_available() else "numpy")
    if method not in ("workbench", "numpy"):
        raise ValueError(f"unknown render method {method!r}")
    frames = []
    with bridge_pose.kept_pose(armature):
        for pose in poses:
            bridge_pose.apply_pose(armature, pose)
            mesh_set = combine_objects(meshes)
            frames.append((mesh_set.vertices, mesh_set.faces, bone_segments(armature, posed=True)))

    c, s_ = math.cos(math.radians(turn)), math.sin(math.radians(turn))
    R = np.array([[c, -s_, 0.0], [s_, c, 0.0], [0.0, 0.0, 1.0]])
    turned = []
    for v, f, (heads, tails, x_axes, z_axes) in frames:
        center = (v.min(axis=0) + v.max(axis=0)) / 2 if len(v) else np.zeros(3)
        spin = lambda p: (p - center) @ R.T + center  # noqa: E731
        turned.append((spin(v), f, (spin(heads), spin(tails), x_axes @ R.T, z_axes @ R.T)))
    widest = max(float(np.ptp(np.vstack([v, b[0], b[1]])[:, 0])) for v, _, b in turned)
    vertices, faces, bone_parts, offset, x = [], [], [[], [], [], []], 0, 0.0
    for v, f, bones in turned:
        span = np.vstack([v, bones[0], bones[1]])[:, 0]
        shift = np.array([x - span.min(), 0.0, 0.0])
        x += float(np.ptp(span)) + gap * widest
        vertices.append(v + shift)
        faces.append(f + offset)
        offset += len(v)
        for part, array in zip(bone_parts, (bones[0] + shift, bones[1] + shift, bones[2], bones[3])):
            part.append(array)
    vertices, faces = np.vstack(vertices), np.vstack(faces)
    bones = tuple(np.vstack(part) for part in bone_parts)
    everything = np.vstack([vertices, bones[0], bones[1]])
    if not len(everything) or not np.isfinite(everything).all():
        raise ValueError("nothing finite to render")
    if method == "numpy":
        picture.draw_front_view(filepath, vertices, faces, bones, everything, size)
        return filepath
    mesh = new_mesh("Bonesmith Poses", vertices, faces)
    obj = bpy.data.objects.new("Bonesmith Poses", mesh)
    try:
        _render_workbench(filepath, [obj], bones, everything, size)
    finally:
        bpy.data.objects.remove(obj)
        bpy.data.meshes.remove(mesh)
    return filepath


def _render_workbench(filepath: Path, meshes, bones, everything, size) -> None:
    lo, hi, center, extent, (res_x, res_y) = picture.framing(everything, size)
    diagonal = bbox_diagonal(everything, 1.0)
    created = []  # (collection, datablock) to remove afterwards
    had_render_result = any(image.type == 'RENDER_RESULT' for image in bpy.data.images)
    scene = bpy.data.scenes.new("Bonesmith Preview")
    try:
        for obj in meshes:
            scene.collection.objects.link(obj)

        if len(bones[0]):
            vertices, faces = octahedra(*bones)
            bone_mesh = new_mesh("Bonesmith Preview Bones", vertices, faces)
            created.append((bpy.data.meshes, bone_mesh))
            material = bpy.data.materials.new("Bonesmith Preview Bones")
            created.append((bpy.data.materials, material))
            material.diffuse_color = (*picture.BONE_COLOR, 1.0)
            bone_mesh.materials.append(material)
            bone_obj = bpy.data.objects.new("Bonesmith Preview Bones", bone_mesh)
            created.insert(0, (bpy.data.objects, bone_obj))
            bone_obj.show_in_front = True
            scene.collection.objects.link(bone_obj)

        camera_data = bpy.data.cameras.new("Bonesmith Preview")
        created.append((bpy.data.cameras, camera_data))
        camera = bpy.data.objects.new("Bonesmith Preview", camera_data)
        created.insert(0, (bpy.data.objects, camera))
        camera_data.type = 'ORTHO'
        camera_data.ortho_scale = extent
        camera_data.clip_start = 0.01 * diagonal
        camera_data.clip_end = 10.0 * diagonal
        camera.location = (center[0], lo[1] - 2.0 * diagonal, center[2])
        camera.rotation_euler = (math.pi / 2, 0.0, 0.0)
        scene.collection.objects.link(camera)
        scene.camera = camera

        world = bpy.data.worlds.new("Bonesmith Preview")
        created.append((bpy.data.worlds, world))
        world.color = tuple(c ** 2.2 for c in picture.BACKGROUND)  # sRGB -> scene linear
        scene.world = world

        render = scene.render
        render.engine = 'BLENDER_WORKBENCH'
        render.resolution_x, render.resolution_y = res_x, res_y
        render.resolution_percentage = 100
        render.film_transparent = False
        render.image_settings.file_format = 'PNG'
        render.image_settings.color_mode = 'RGB'
        render.filepath = str(filepath)
        scene.view_settings.view_transform = 'Standard'
        shading = scene.display.shading
        shading.light = 'STUDIO'
        shading.color_type = 'MATERIAL'
        shading.show_xray = False  # bones are drawn in front instead, at full colour
        shading.show_object_outline = False
        bpy.ops.render.render(write_still=True, scene=scene.name)
    finally:
        bpy.data.scenes.remove(scene)
        for collection, datablock in created:
            collection.remove(datablock)
        if not had_render_result:
            for image in [i for i in bpy.data.images if i.type == 'RENDER_RESULT']:
                bpy.data.images.remove(image)
