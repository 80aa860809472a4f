# SPDX-License-Identifier: GPL-3.0-or-later
"""Fixtures: the extension registered the way Blender does it, clean scenes, test meshes.

Runs on the PyPI `bpy` module and inside a Blender binary (pytest-blender style): the
extension is enabled from a temporary user repository whose `bonesmith` entry links to
this checkout, unless an enabled add-on called `bonesmith` is already there.
"""
from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
SAMPLE = REPO / "samples" / "quat_Male_Casual.npz"
WOMAN = DATA / "quatU_women_casual.npz"     # a humanoid with separable fingers
REPO_MODULE = "bonesmith_test"


# -- inside a Blender binary (pytest-blender) ---------------------------------------------------

def pytest_addoption(parser):
    """`--blender-executable PATH` & co. pytest.ini blocks pytest-blender's auto-loading (it
    would look for a Blender binary on every plain `pytest` run on the bpy module), so its
    options are added here and the plugin runs only when a Blender binary is named."""
    try:
        from pytest_blender import plugin
    except ImportError:  # inside Blender, or a venv without it
        return
    plugin.pytest_addoption(parser)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    try:
        executable = config.getoption("--blender-executable")
    except ValueError:  # the option is not defined: pytest-blender is not installed
        return
    if executable:
        from pytest_blender import plugin
        plugin.pytest_configure(config)  # reruns this session in Blender; exits with its status


# -- the extension --------------------------------------------------------------------------

@pytest.fixture(scope="session")
def ext():
    """The enabled extension's top-level module (e.g. `bl_ext.bonesmith_test.bonesmith`)."""
    bpy = pytest.importorskip("bpy")
    import addon_utils

    for name in bpy.context.preferences.addons.keys():
        if name == "bonesmith" or name.endswith(".bonesmith"):
            yield importlib.import_module(name)
            return

    directory = tempfile.mkdtemp(prefix="bonesmith_repo_")
    os.symlink(REPO, os.path.join(directory, "bonesmith"), target_is_directory=True)
    repos = bpy.context.preferences.extensions.repos
    repo = repos.new(name="Bonesmith Test", module=REPO_MODULE, custom_directory=directory, source='USER')
    name = f"bl_ext.{REPO_MODULE}.bonesmith"
    errors = []
    module = addon_utils.enable(name, default_set=True, handle_error=errors.append)
    if module is None or errors:
        pytest.fail(f"could not enable {name}: {errors}")
    yield module
    repos.remove(repo)  # Blender disables the repository's extensions itself
    shutil.rmtree(directory, ignore_errors=True)


def submodule(ext, name: str):
    """`ext`'s own copy of a submodule, e.g. submodule(ext, "core.skeleton")."""
    return importlib.import_module(f"{ext.__name__}.{name}")


@pytest.fixture(scope="session")
def core(ext):
    """The extension's core.skeleton module (the very code the operator calls)."""
    return submodule(ext, "core.skeleton")


@pytest.fixture(scope="session")
def errors(ext):
    return submodule(ext, "core.errors")


@pytest.fixture(scope="session")
def bridge(ext):
    class Bridge:
        mesh = submodule(ext, "bridge.mesh")
        armature = submodule(ext, "bridge.armature")
        file_import = submodule(ext, "bridge.file_import")
        fbx = submodule(ext, "bridge.fbx")
        render = submodule(ext, "bridge.render")
    return Bridge


TORCH_MISSING = ("PyTorch is not installed in this Python. requirements.txt installs the CPU "
                 "build on Python 3.11 only: for Linux on Python 3.13 PyPI has only the CUDA "
                 "build (2.6 GB of downloads with its nvidia-* packages), see the README")


@pytest.fixture(scope="session")
def torch():
    """The torch module, or a skip that says why it is missing (training tests only)."""
    try:
        import torch
    except ImportError:
        pytest.skip(TORCH_MISSING)
    return torch


# -- scenes ---------------------------------------------------------------------------------

def clear_scene():
    import bpy
    if bpy.context.object is not None and bpy.context.object.mode != 'OBJECT':
        bpy.ops.object.mode_set(mode='OBJECT')
    for obj in list(bpy.data.objects):
        bpy.data.objects.remove(obj)
    for blocks in (bpy.data.meshes, bpy.data.armatures, bpy.data.materials, bpy.data.cameras,
                   bpy.data.lights, bpy.data.actions, bpy.data.images, bpy.data.collections):
        for block in list(blocks):
            blocks.remove(block)
    for extra in [s for s in bpy.data.scenes if s != bpy.context.scene]:
        bpy.data.scenes.remove(extra)


@pytest.fixture
def scene(ext):
    """An empty scene (objects, meshes, armatures... removed), with the extension enabled."""
    import bpy
    clear_scene()
    yield bpy.context.scene
    clear_scene()


def snapshot():
    """What a failed operator must leave exactly as it was."""
    import bpy
    return dict(
        objects=sorted(o.name for o in bpy.data.objects),
        meshes=sorted(m.name for m in bpy.data.meshes),
        armatures=sorted(a.name for a in bpy.data.armatures),
        parents={o.name: o.parent.name if o.parent else None for o in bpy.data.objects},
        modifiers={o.name: [m.name for m in o.modifiers] for o in bpy.data.objects},
    )


# -- meshes ---------------------------------------------------------------------------------

def voxel_mesh(occupied: np.ndarray, voxel: float = 1.0, origin=(0.0, 0.0, 0.0)):
    """Closed, outward-facing triangle surface of a boolean voxel grid: (V,3), (F,3)."""
    occ = np.pad(np.asarray(occupied, dtype=bool), 1)
    quads = []
    square = np.array([[0, 0], [1, 0], [1, 1], [0, 1]])
    for axis in range(3):
        b, c = (axis + 1) % 3, (axis + 2) % 3
        for direction in (1, -1):
            exposed = occ & ~np.roll(occ, -direction, axis=axis)
            cells = np.argwhere(exposed)
            order = square if direction == 1 else square[::-1]
            quad = np.repeat(cells[:, None, :], 4, axis=1)
            quad[:, :, axis] += 1 if direction == 1 else 0
            quad[:, :, b] += order[:, 0]
            quad[:, :, c] += order[:, 1]
            quads.append(quad.reshape(-1, 3))
    points = np.concatenate(quads)
    unique, index = np.unique(points, axis=0, return_inverse=True)
    index = index.reshape(-1, 4)
    faces = np.concatenate([index[:, [0, 1, 2]], index[:, [0, 2, 3]]])
    vertices = (unique - 1) * voxel + np.asarray(origin, dtype=np.float64)
    return vertices.astype(np.float64), faces.astype(np.int64)


def merge(*meshes):
    """One (V, F) of several meshes (V, F)."""
    Vs, Fs, offset = [], [], 0
    for V, F in meshes:
        Vs.append(V)
        Fs.append(F + offset)
        offset += len(V)
    return np.vstack(Vs), np.vstack(Fs)


def ground_plane(vertices, width=2.0, cuts=1, lift=0.0):
    """A flat square grid (V, F) of `cuts` x `cuts` quads, `width` x the mesh's height
    wide, centred under the mesh at its lowest point (+ `lift` x its height): a ground
    plane in Blender."""
    vertices = np.asarray(vertices, dtype=np.float64)
    height = np.ptp(vertices[:, 2])
    g = np.linspace(-width / 2, width / 2, cuts + 1) * height
    x, y = np.meshgrid(g, g)
    centre = (vertices.min(axis=0) + vertices.max(axis=0)) / 2
    V = np.column_stack([x.ravel() + centre[0], y.ravel() + centre[1],
                         np.full(x.size, vertices[:, 2].min() + lift * height)])
    k = np.arange((cuts + 1) ** 2).reshape(cuts + 1, cuts + 1)
    a, b, c, d = k[:-1, :-1].ravel(), k[:-1, 1:].ravel(), k[1:, 1:].ravel(), k[1:, :-1].ravel()
    return V, np.concatenate([np.column_stack([a, b, c]), np.column_stack([a, c, d])])


def tube(points, radius=0.04, sides=12):
    """A closed tube (V, F) around the polyline `points` (k, 3), capped at both ends;
    `radius` one value or one per point."""
    points = np.asarray(points, dtype=np.float64)
    radii = np.broadcast_to(np.asarray(radius, dtype=np.float64), (len(points),))
    rings = []
    for k, (p, radius) in enumerate(zip(points, radii)):
        d = points[min(k + 1, len(points) - 1)] - points[max(k - 1, 0)]
        d /= np.linalg.norm(d)
        u = np.cross(d, [1.0, 0.0, 0.0] if abs(d[0]) < 0.9 else [0.0, 1.0, 0.0])
        u /= np.linalg.norm(u)
        v = np.cross(d, u)
        a = np.linspace(0, 2 * np.pi, sides, endpoint=False)
        rings.append(p + radius * (np.cos(a)[:, None] * u + np.sin(a)[:, None] * v))
    V = np.vstack(rings + [points[:1], points[-1:]])
    n, F = len(points), []
    for k in range(n - 1):
        for s in range(sides):
            a, b = k * sides + s, k * sides + (s + 1) % sides
            F += [(a, b, b + sides), (a, b + sides, a + sides)]
    first, last = n * sides, n * sides + 1
    for s in range(sides):
        F += [(first, (s + 1) % sides, s), (last, (n - 1) * sides + s, (n - 1) * sides + (s + 1) % sides)]
    return V, np.array(F)


def humanoid_arrays(foot: int = 0):
    """A blocky humanoid in a T-pose, one closed connected surface, about 1.9 units tall,
    Z up, facing -Y: (V,3) float64, (F,3) int64; with `foot` > 0, feet that many voxels
    (0.05) long forward of its legs."""
    grid = np.zeros((36, 9 + foot, 38), dtype=bool)
    boxes = [  # x, y, z ranges in voxels (x shifted by +10)
        ((14, 17), (3, 6), (0, 16)), ((19, 22), (3, 6), (0, 16)),   # legs
        ((13, 23), (2, 7), (16, 30)),                                # torso
        ((17, 19), (3, 6), (30, 32)), ((15, 21), (2, 7), (32, 38)),  # neck, head
        ((0, 13), (3, 6), (26, 29)), ((23, 36), (3, 6), (26, 29)),   # arms
    ] + ([((14, 17), (-foot, 3), (0, 2)), ((19, 22), (-foot, 3), (0, 2))] if foot else [])   # feet
    for (x0, x1), (y0, y1), (z0, z1) in boxes:
        grid[x0:x1, y0 + foot:y1 + foot, z0:z1] = True
    return voxel_mesh(grid, voxel=0.05, origin=(-0.9, -0.225 - 0.05 * foot, 0.0))


def shoal_arrays():
    """A shoal: 12 blocky fish (a body and a tail fin), 2 voxels apart, in one mesh of
    separate parts: (V,3), (F,3), and the fish (V,) that each vertex belongs to."""
    grid = np.zeros((34, 12, 6), dtype=bool)
    fish = np.zeros(grid.shape, dtype=np.int64)
    for k, (x, y) in enumerate((x, y) for x in (2, 10, 18, 26) for y in (1, 5, 9)):
        for part in (np.s_[x + 1:x + 7, y:y + 2, 2:4], np.s_[x:x + 1, y:y + 2, 1:5]):   # body, fin
            grid[part] = True
            fish[part] = k
    V, F = voxel_mesh(grid, voxel=0.1)
    cell = np.clip(np.floor(V / 0.1 + 1e-9).astype(int), 0, None)    # a vertex's voxel corner
    owner = np.full(len(V), -1)
    for dx in (0, -1):
        for dy in (0, -1):
            for dz in (0, -1):
                c = cell + [dx, dy, dz]
                ok = (c >= 0).all(axis=1) & (c < grid.shape).all(axis=1)
                hit = ok & (owner < 0)
                hit[hit] = grid[tuple(c[hit].T)]
                owner[hit] = fish[tuple(c[hit].T)]
    return V, F, owner


def sample_arrays():
    with np.load(SAMPLE) as record:
        return record["verts"].astype(np.float64), record["faces"].astype(np.int64)


@pytest.fixture
def make_mesh(scene):
    """make_mesh(name, vertices, faces, location=..., rotation=..., scale=..., select=True)
    -> a new mesh object in the scene (made with plain bpy, not with bridge/)."""
    import bpy

    def make(name, vertices, faces, *, location=(0, 0, 0), rotation=(0, 0, 0), scale=(1, 1, 1),
             select=True, edges=()):
        mesh = bpy.data.meshes.new(name)
        mesh.from_pydata([tuple(map(float, v)) for v in np.asarray(vertices).reshape(-1, 3)],
                         list(edges), [tuple(map(int, f)) for f in np.asarray(faces).reshape(-1, 3)])
        obj = bpy.data.objects.new(name, mesh)
        scene.collection.objects.link(obj)
        obj.location, obj.rotation_euler, obj.scale = location, rotation, scale
        bpy.context.view_layer.update()
        if select:
            for other in bpy.context.view_layer.objects:
                other.select_set(False)
            obj.select_set(True)
            bpy.context.view_layer.objects.active = obj
        return obj

    return make


# -- the command line -------------------------------------------------------------------------

@pytest.fixture(scope="session")
def cli_env(tmp_path_factory):
    """Environment for `python -m bonesmith` in a subprocess, whatever the checkout is called."""
    path = tmp_path_factory.mktemp("pkg")
    os.symlink(REPO, path / "bonesmith", target_is_directory=True)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(path), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


@pytest.fixture(scope="session")
def cli_bpy(cli_env):
    """Skip when this Python's subprocesses cannot import bpy (e.g. inside a Blender binary)."""
    probe = subprocess.run([sys.executable, "-c", "import bpy"], env=cli_env, capture_output=True)
    if probe.returncode != 0:
        pytest.skip("bpy is not importable from a plain subprocess of this Python")
    return cli_env


def run_cli(env, *args, timeout=600):
    return subprocess.run([sys.executable, "-m", "bonesmith", *map(str, args)], env=env,
                          capture_output=True, text=True, timeout=timeout)


def is_one_tree(parents) -> bool:
    """One root (-1) and every joint reaches it without a cycle."""
    parents = np.asarray(parents)
    if (parents < 0).sum() != 1 or not np.all(parents < len(parents)):
        return False
    for joint in range(len(parents)):
        seen, j = set(), joint
        while j >= 0:
            if j in seen:
                return False
            seen.add(j)
            j = parents[j]
    return True


# -- the helpers above as fixtures (for tests that take fixtures rather than import them) --

@pytest.fixture(scope="session")
def humanoid():
    return humanoid_arrays()


@pytest.fixture(scope="session")
def sample():
    return sample_arrays()


@pytest.fixture(scope="session")
def woman():
    """The CC0 woman with five fingers a hand: (vertices, faces) and her artist's joints by name."""
    with np.load(WOMAN) as record:
        joints = dict(zip((str(n) for n in record["joint_names"]), record["joints"].astype(np.float64)))
        return record["verts"].astype(np.float64), record["faces"].astype(np.int64), joints


@pytest.fixture(scope="session")
def hand_skeleton(core):
    """hand_skeleton(vertices) -> a small hand-made Skeleton inside the vertices' box (for
    testing bridge/ without core's algorithm): hips -> spine -> head (a leaf), two arms
    with a connected forearm, one leg; up vectors point forward (-Y), one is tilted."""
    def make(vertices):
        lo, hi = vertices.min(0), vertices.max(0)
        c, e = (lo + hi) / 2, hi - lo
        P = lambda x, z: c + e * np.array([x, 0.0, z])  # noqa: E731
        joints = [P(0, -0.05), P(0, 0.1), P(0, 0.35), P(0.1, 0.3), P(0.25, 0.3), P(-0.1, 0.3), P(0.08, -0.1)]
        tails = [P(0, 0.1), P(0, 0.3), P(0, 0.45), P(0.25, 0.3), P(0.45, 0.3), P(-0.3, 0.3), P(0.08, -0.45)]
        parents = [-1, 0, 1, 1, 3, 1, 0]
        names = ["hips", "spine", "head", "upper_arm.L", "forearm.L", "upper_arm.R", "leg.L"]
        up = np.tile([0.0, -1.0, 0.0], (7, 1))
        up[3] = (0.0, -1.0, 1.0)
        return core.Skeleton(np.array(joints), parents, np.array(tails), names, up)
    return make


# A hand-made rig for conftest's blocky humanoid (mesh-local coordinates, bones along the
# middle of each limb): name -> (head, tail, parent).
HUMANOID_BONES = {
    "hips": ((0, 0, 0.75), (0, 0, 1.1), None),
    "spine": ((0, 0, 1.1), (0, 0, 1.45), "hips"),
    "head": ((0, 0, 1.5), (0, 0, 1.85), "spine"),
    "upper_arm.L": ((0.25, 0, 1.375), (0.55, 0, 1.375), "spine"),
    "forearm.L": ((0.55, 0, 1.375), (0.85, 0, 1.375), "upper_arm.L"),
    "upper_arm.R": ((-0.25, 0, 1.375), (-0.55, 0, 1.375), "spine"),
    "forearm.R": ((-0.55, 0, 1.375), (-0.85, 0, 1.375), "upper_arm.R"),
    "thigh.L": ((0.125, 0, 0.75), (0.125, 0, 0.4), "hips"),
    "shin.L": ((0.125, 0, 0.4), (0.125, 0, 0.05), "thigh.L"),
    "thigh.R": ((-0.125, 0, 0.75), (-0.125, 0, 0.4), "hips"),
    "shin.R": ((-0.125, 0, 0.4), (-0.125, 0, 0.05), "thigh.R"),
}


def _humanoid_skeleton(core, matrix=None):
    """HUMANOID_BONES as a core Skeleton, mapped by `matrix` (the mesh's world matrix)."""
    names = list(HUMANOID_BONES)
    M = np.eye(4) if matrix is None else np.asarray(matrix)
    world = lambda p: (M @ (*p, 1.0))[:3]  # noqa: E731
    heads = np.array([world(HUMANOID_BONES[n][0]) for n in names])
    tails = np.array([world(HUMANOID_BONES[n][1]) for n in names])
    parents = [names.index(HUMANOID_BONES[n][2]) if HUMANOID_BONES[n][2] else -1 for n in names]
    return core.Skeleton(heads, parents, tails, names)


@pytest.fixture(scope="session")
def humanoid_skeleton(core):
    """humanoid_skeleton(matrix=None) -> a hand-made Skeleton for the humanoid mesh (bones
    along the middle of each limb, named like a game rig), in the world space of a mesh
    object with world matrix `matrix`."""
    return lambda matrix=None: _humanoid_skeleton(core, matrix)


@pytest.fixture(scope="session")
def sample_path():
    return SAMPLE


def _write_obj(path, vertices, faces):
    """OBJ is Y-up: write Blender's (x, y, z) as (x, z, -y) so the importer maps it back."""
    with open(path, "w") as fh:
        fh.writelines(f"v {x:.6f} {z:.6f} {-y:.6f}\n" for x, y, z in vertices)
        fh.writelines(f"f {a} {b} {c}\n" for a, b, c in np.asarray(faces) + 1)


@pytest.fixture(scope="session")
def write_obj():
    """write_obj(path, vertices, faces): a Z-up mesh as a (Y-up) Wavefront OBJ file."""
    return _write_obj


@pytest.fixture
def scene_state():
    """scene_state() -> a comparable snapshot of objects, data, parents and modifiers."""
    return snapshot


@pytest.fixture(scope="session")
def cli(cli_env):
    """cli(*args) -> CompletedProcess of `python -m bonesmith *args`."""
    return lambda *args, **kw: run_cli(cli_env, *args, **kw)


@pytest.fixture(scope="session")
def cli_with_bpy(cli_bpy):
    return lambda *args, **kw: run_cli(cli_bpy, *args, **kw)


@pytest.fixture(scope="session")
def ext_module(ext):
    """ext_module("operators.job") -> the extension's own copy of that submodule."""
    return lambda name: submodule(ext, name)


# -- selection and modal operators driven by hand ---------------------------------------------------------

def select(objects, active):
    """Select exactly `objects` and make `active` the active object."""
    import bpy
    for other in bpy.context.view_layer.objects:
        other.select_set(False)
    for obj in objects:
        obj.select_set(True)
    bpy.context.view_layer.objects.active = active


def key_rotations(armature, action_name: str, bones, keys):
    """Give `armature` a new action rotating each (bone name, axis) of `bones` by
    `angle` radians at `frame` for every (frame, angle) of `keys`; returns the action."""
    import bpy
    from mathutils import Quaternion
    armature.animation_data_create()
    action = armature.animation_data.action = bpy.data.actions.new(action_name)
    for name, axis in bones:
        pb = armature.pose.bones[name]
        pb.rotation_mode = 'QUATERNION'
        for frame, angle in keys:
            pb.rotation_quaternion = Quaternion(axis, angle)
            pb.keyframe_insert("rotation_quaternion", frame=frame)
    return action


def started_job(Job, compute, slow: bool = False):
    """Job(compute) started, as an operator's invoke() starts it; with `slow` it first
    reports progress for about 10 s, so a test can cancel it midway."""
    def work(progress):
        if slow:
            import time
            for i in range(2000):
                progress(i / 2000, "waiting")
                time.sleep(0.005)
        return compute(progress)
    return Job(work).start()


class Event:
    """A stand-in for the bpy.types.Event a modal operator receives."""

    def __init__(self, type, value='NOTHING'):
        self.type, self.value = type, value


def operator_stand_in(cls, **attributes):
    """An object that runs operator class `cls`'s methods as `self` (Blender makes operator
    instances only from its UI): what cls and its Python bases (BonesmithOperator, option
    mixins; not bpy's types) define, `attributes` (its properties and state), and report()
    collecting (kinds, message) in `.reports`."""
    namespace = {}
    for base in reversed(cls.__mro__):
        if base is not object and not base.__module__.startswith("bpy"):
            namespace.update((k, v) for k, v in vars(base).items() if not k.startswith("__"))
    namespace.update(bl_label=cls.bl_label, _timer=None, _started=0.0, seconds=0.0)
    namespace.update(attributes)

    def __init__(self):
        self.reports = []

    def report(self, kind, message):
        self.reports.append((set(kind), message))

    namespace.update(__init__=__init__, report=report)
    return type(f"{cls.__name__}_stand_in", (), namespace)()


# -- where results lie, for tests that check outcomes -------------------------------------------

def vertex_group_weights(obj):
    """{vertex group name: (V,) weights} of a mesh object."""
    out = {g.name: np.zeros(len(obj.data.vertices)) for g in obj.vertex_groups}
    names = {g.index: g.name for g in obj.vertex_groups}
    for v in obj.data.vertices:
        for g in v.groups:
            out[names[g.group]][v.index] = g.weight
    return out


def inside(points, vertices, faces):
    """Whether each point lies inside the closed surface: an odd number of crossings along
    a ray, by majority over three skew directions (so a ray through an edge is outvoted).
    Plain numpy (Moller-Trumbore), whatever the faces' winding; independent of bonesmith's
    own inside tests."""
    P = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    T = np.asarray(vertices, dtype=np.float64)[np.asarray(faces)]          # (F, 3, 3)
    e1, e2 = T[:, 1] - T[:, 0], T[:, 2] - T[:, 0]
    votes = np.zeros(len(P), dtype=int)
    for d in ([0.5433, 0.3012, 0.7841], [-0.2718, 0.8415, 0.4667], [0.6931, -0.5772, -0.4142]):
        d = np.asarray(d) / np.linalg.norm(d)
        h = np.cross(d, e2)
        det = (e1 * h).sum(axis=1)
        ok = np.abs(det) > 1e-300
        inv = np.where(ok, 1.0 / np.where(ok, det, 1.0), 0.0)
        s_ = P[:, None] - T[None, :, 0]                                     # (p, F, 3)
        u = (s_ * h).sum(axis=2) * inv
        q = np.cross(s_, e1)
        v = (q @ d) * inv
        t = (q * e2).sum(axis=2) * inv
        hit = ok & (u >= 0) & (v >= 0) & (u + v <= 1) & (t > 0)
        votes += hit.sum(axis=1) % 2
    return votes >= 2


def extremities(vertices, band=0.03):
    """name -> boolean mask of the vertices at the extremities of a character standing up
    Z, arms out along X, centred on x = 0 (the blocky humanoid, the sample): the outermost
    `band` (a share of the largest extent) of each hand, of the crown, and of each sole."""
    V = np.asarray(vertices, dtype=np.float64)
    lo, hi = V.min(axis=0), V.max(axis=0)
    width = band * np.ptp(V, axis=0).max()
    centre = (lo[0] + hi[0]) / 2
    return {"hand.L": V[:, 0] > hi[0] - width, "hand.R": V[:, 0] < lo[0] + width,
            "crown": V[:, 2] > hi[2] - width,
            "sole.L": (V[:, 2] < lo[2] + width) & (V[:, 0] > centre),
            "sole.R": (V[:, 2] < lo[2] + width) & (V[:, 0] < centre)}


def check_bones_in_place(armature, obj, vertices, faces, inside_only=False):
    """The armature's bones lie where a standing character's bones go (`vertices`: the
    mesh's own coordinates, Z up, arms along X): heads and bone middles inside the mesh, a
    bone end at each hand, sole and the crown, the root bone at the hips. With
    `inside_only`, for a mesh object scaled unevenly and turned (a sheared, tilted
    character, rigged in world space as it is), only the first."""
    M = np.array(obj.matrix_world)
    world = np.asarray(vertices, dtype=np.float64) @ M[:3, :3].T + M[:3, 3]
    size = float(np.linalg.norm(np.ptp(world, axis=0)))
    A = np.array(armature.matrix_world)
    bones = list(armature.data.bones)
    heads = np.array([A @ (*b.head_local, 1.0) for b in bones])[:, :3]
    tails = np.array([A @ (*b.tail_local, 1.0) for b in bones])[:, :3]
    # all measured inside; a joint may sit on the surface of a thin part (a finger)
    assert inside(np.vstack([heads, (heads + tails) / 2]), world, faces).mean() >= 0.95
    if inside_only:
        return
    # the contraction ends a chain about a limb's radius short of a rounded tip: 1-3 % of
    # the diagonal measured on both characters
    ends = np.vstack([heads, tails])
    for name, mask in extremities(vertices).items():
        tip = world[mask].mean(axis=0)
        assert np.linalg.norm(ends - tip, axis=1).min() < 0.05 * size, name
    # the root at the hips: on the plane of symmetry, about half the height up (0.49 and
    # 0.52 measured); back in the mesh's own coordinates
    (root,) = [h for b, h in zip(bones, heads) if b.parent is None]
    local = np.linalg.solve(M, np.append(root, 1.0))[:3]
    lo, hi = np.min(vertices, axis=0), np.max(vertices, axis=0)
    assert abs(local[0] - (lo[0] + hi[0]) / 2) < 0.01 * np.ptp(vertices, axis=0).max()
    assert 0.35 < (local[2] - lo[2]) / (hi[2] - lo[2]) < 0.65
