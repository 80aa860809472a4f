# SPDX-License-Identifier: GPL-3.0-or-later
"""The shipped extension: build the Linux zip (wheels for Python 3.11 and 3.13 side by side),
install it into a throw-away Blender user profile the way a user would (Install from Disk),
then run Auto Skeleton from it. `make test` does this on both bpy 5.0.1 and bpy 5.2.3.

Everything Blender-side runs in a fresh subprocess of this venv's Python, so it never
meets the development copy of Bonesmith registered in the pytest process, and the
user's real Blender configuration is never touched (BLENDER_USER_* point into tmp).
In that subprocess the venv's own scipy / robust-laplacian / fast-simplification and
the repo checkout are hidden from imports: everything must come from the zip.

The first run downloads the Linux wheels once into wheels/ (git-ignored cache);
later runs reuse them, and reuse dist/ when the zip's inputs are unchanged.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BUILD_SCRIPT = ROOT / "scripts" / "build_extension.py"
PLATFORM = "linux-x64"
BUNDLED = ("scipy", "robust-laplacian", "fast-simplification", "embreex")
PYTHONS = ("cp311", "cp313")
TIMEOUT = 900


def _blender_ext() -> Path:
    """Blender's extension tool, of the bpy module or of the Blender binary running the tests."""
    import bpy
    return Path(bpy.utils.system_resource("SCRIPTS")) / "addons_core" / "bl_pkg" / "cli" / "blender_ext.py"


def _top_level_modules(dist_name: str) -> set[str]:
    """Top-level import names installed by a distribution in this venv."""
    dist = metadata.distribution(dist_name)
    names = set()
    for f in dist.files or ():
        first = f.parts[0]
        if first.endswith((".dist-info", ".data")) or first == "..":
            continue
        names.add(first.split(".")[0] if len(f.parts) == 1 else first)
    return {n for n in names if n.isidentifier()}


def build_linux_zip(out_dir: Path = ROOT / "dist") -> Path:
    """Build (or reuse, when its inputs are unchanged) the Linux zip with the project's script."""
    proc = subprocess.run(
        [sys.executable, str(BUILD_SCRIPT), "--out", str(out_dir), "--platforms", PLATFORM, "--reuse",
         "--blender-ext", str(_blender_ext())],
        cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT,
    )
    assert proc.returncode == 0, f"build_extension.py failed:\n{proc.stdout}\n{proc.stderr}"
    manifest = tomllib.loads((ROOT / "blender_manifest.toml").read_text())
    zip_path = out_dir / f"{manifest['id']}-{manifest['version']}-{PLATFORM.replace('-', '_')}.zip"
    assert zip_path.is_file(), f"{zip_path} missing after the build:\n{proc.stdout}"
    return zip_path


# Runs inside the subprocess: argv[1] = JSON parameters. Prints one line "RESULT <json>".
DRIVER = r'''
import importlib.abc, importlib.machinery, json, os, sys, traceback

P = json.loads(os.environ["BONESMITH_ZIP_TEST"])
FORBIDDEN = [os.path.realpath(p) for p in P["forbidden_roots"]]
HIDDEN = set(P["hidden_modules"])


def _forbidden(path):
    path = os.path.realpath(path)
    return any(path == root or path.startswith(root + os.sep) for root in FORBIDDEN)


class HideDevCopies(importlib.abc.MetaPathFinder):
    """Top-level imports of the bundled packages (and of the repo checkout as `bonesmith`)
    may only resolve outside the venv's site-packages and the repo: i.e. from the zip."""

    def find_spec(self, name, path=None, target=None):
        if path is not None or name not in HIDDEN:
            return None
        for entry in sys.path:
            spec = importlib.machinery.PathFinder.find_spec(name, [entry or os.getcwd()])
            if spec is None:
                continue
            origin = spec.origin if spec.origin not in (None, "namespace") else \
                next(iter(spec.submodule_search_locations or []), "")
            if origin and not _forbidden(origin):
                return spec
        raise ModuleNotFoundError(f"No module named {name!r} outside the dev environment", name=name)


sys.meta_path.insert(0, HideDevCopies())
R = {"stage": "start"}


def done(code=0):
    print("RESULT " + json.dumps(R), flush=True)
    sys.stdout.flush()
    os._exit(code)


try:
    import bpy
    import addon_utils

    R["blender_version"] = bpy.app.version_string
    R["user_dirs"] = {k: bpy.utils.user_resource(k) for k in ("CONFIG", "SCRIPTS", "EXTENSIONS", "DATAFILES")}
    R["stage"] = "bpy"

    result = bpy.ops.extensions.package_install_files(
        filepath=P["zip"], repo="user_default", enable_on_install=True)
    R["install_result"] = sorted(result)
    R["stage"] = "installed"

    module = "bl_ext.user_default." + P["pkg_id"]
    R["addon_enabled"] = module in bpy.context.preferences.addons
    R["addon_loaded"] = bool(addon_utils.check(module)[1])
    R["package_file"] = getattr(sys.modules.get(module), "__file__", None)
    R["has_operator"] = "auto_skeleton" in dir(bpy.ops.bonesmith)
    if R["has_operator"]:
        bpy.ops.bonesmith.auto_skeleton.get_rna_type()  # raises if the operator is not registered
    R["bundled_modules"] = {}
    for name in P["bundled_import_names"]:
        mod = __import__(name)
        R["bundled_modules"][name] = mod.__file__
    import scipy.sparse.linalg  # a compiled module: it must be built for this very Python
    R["python"] = "cp%d%d" % sys.version_info[:2]
    R["scipy_extension"] = scipy.sparse.linalg._dsolve._superlu.__file__
    from embreex import rtcore_scene  # noqa: F401 - the compiled Embree binding loads in Blender
    R["stage"] = "enabled"

    # A crude character: torso, head, two arms, two legs, joined into one mesh.
    for obj in list(bpy.data.objects):
        bpy.data.objects.remove(obj, do_unlink=True)
    add_cyl = bpy.ops.mesh.primitive_cylinder_add
    add_cyl(vertices=24, radius=0.25, depth=0.9, location=(0, 0, 1.25))                      # torso
    bpy.ops.mesh.primitive_uv_sphere_add(segments=24, ring_count=12, radius=0.16, location=(0, 0, 1.86))
    for side in (-1, 1):
        add_cyl(vertices=16, radius=0.07, depth=0.75, location=(side * 0.6, 0, 1.55),
                rotation=(0, 1.5708, 0))                                                     # arm
        add_cyl(vertices=16, radius=0.1, depth=0.85, location=(side * 0.13, 0, 0.42))       # leg
    parts = [o for o in bpy.data.objects if o.type == "MESH"]
    for o in parts:
        o.select_set(True)
    body = parts[0]
    bpy.context.view_layer.objects.active = body
    bpy.ops.object.join()
    body.name = "Body"
    bpy.ops.object.select_all(action="DESELECT")
    body.select_set(True)
    bpy.context.view_layer.objects.active = body
    R["mesh_vertices"] = len(body.data.vertices)
    R["stage"] = "mesh"

    before = {o.name for o in bpy.data.objects}
    result = bpy.ops.bonesmith.auto_skeleton()
    R["auto_skeleton_result"] = sorted(result)
    armatures = [o for o in bpy.data.objects if o.type == "ARMATURE" and o.name not in before]
    R["armatures"] = [o.name for o in armatures]
    R["bones"] = [len(o.data.bones) for o in armatures]
    R["armature_modifiers"] = [
        getattr(m.object, "name", None) for m in body.modifiers if m.type == "ARMATURE"]
    R["stage"] = "auto_skeleton"

    # `python -m bonesmith demo` from the installed package: its sample ships in the zip
    import importlib
    out = os.path.join(os.getcwd(), "demo-out")
    R["demo_exit"] = importlib.import_module(module + ".cli").main(["demo", "--out", out])
    R["demo_files"] = sorted(os.listdir(out)) if os.path.isdir(out) else []
    R["stage"] = "demo"
except BaseException:
    R["error"] = traceback.format_exc()
    done(1)
done(0)
'''


def _clean_env(home: Path) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("BLENDER_") and k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
    env["BLENDER_USER_RESOURCES"] = str(home / "resources")
    for kind in ("CONFIG", "SCRIPTS", "EXTENSIONS", "DATAFILES"):
        env[f"BLENDER_USER_{kind}"] = str(home / "resources" / kind.lower())
    env["HOME"] = str(home)  # belt and braces: nothing may fall back to ~/.config/blender
    env["PYTHONNOUSERSITE"] = "1"
    return env


def run_zip_in_blender(zip_path: Path, home: Path, blender: list[str]) -> dict:
    """Install `zip_path` into a fresh Blender profile under `home`, enable it, run Auto Skeleton.
    blender: the command that runs a Python script with bpy (see the `blender` fixture)."""
    home.mkdir(parents=True, exist_ok=True)
    manifest = tomllib.loads(zipfile.ZipFile(zip_path).read("blender_manifest.toml").decode())
    import_names = sorted(set().union(*(_top_level_modules(d) for d in BUNDLED)))
    venv_site = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    params = {
        "zip": str(zip_path.resolve()),
        "pkg_id": manifest["id"],
        "forbidden_roots": sorted(venv_site | {str(ROOT)}),
        "hidden_modules": import_names + ["bonesmith"],
        "bundled_import_names": [n for n in ("scipy", "robust_laplacian", "fast_simplification", "embreex")
                                 if n in import_names],
    }
    driver = home / "driver.py"
    driver.write_text(DRIVER)
    env = _clean_env(home)
    env["BONESMITH_ZIP_TEST"] = json.dumps(params)
    proc = subprocess.run([*blender, str(driver)], cwd=home, env=env, capture_output=True, text=True,
                          timeout=TIMEOUT)
    lines = [l for l in proc.stdout.splitlines() if l.startswith("RESULT ")]
    result = json.loads(lines[-1][len("RESULT "):]) if lines else {"stage": "crashed"}
    result["returncode"] = proc.returncode
    result["log"] = (proc.stdout[-6000:] + "\n--- stderr ---\n" + proc.stderr[-6000:])
    result["home"] = str(home)
    return result


# ---------------------------------------------------------------------------


def test_committed_manifest_is_valid():
    """Blender's own validator accepts the committed source tree (no wheels listed)."""
    proc = subprocess.run([sys.executable, str(_blender_ext()), "validate", str(ROOT)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Success" in proc.stdout, proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def linux_zip() -> Path:
    return build_linux_zip()


def test_linux_zip_contents(linux_zip):
    proc = subprocess.run([sys.executable, str(_blender_ext()), "validate", str(linux_zip)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with zipfile.ZipFile(linux_zip) as zf:
        names = zf.namelist()
        manifest = tomllib.loads(zf.read("blender_manifest.toml").decode())
    wheels = sorted(n.split("/")[-1] for n in names if n.endswith(".whl"))
    # One Linux x86-64 wheel per bundled package for each of Blender's Pythons (3.11: Blender
    # 4.2-5.0, 3.13: 5.1-5.2), nothing for other platforms or Pythons.
    assert sorted((w.split("-")[0], w.split("-")[2]) for w in wheels) == \
        sorted((d.replace("-", "_"), py) for d in BUNDLED for py in PYTHONS), wheels
    assert all("x86_64" in w and "linux" in w for w in wheels), wheels
    assert not any(n.split("/")[-1].startswith(("numpy", "torch", "bpy")) for n in wheels), wheels
    assert manifest["build"]["generated"]["platforms"] == [PLATFORM]
    assert "__init__.py" in names and "core/skeleton.py" in names
    assert "samples/quat_Male_Casual.npz" in names and "samples/README.md" in names   # the demo's sample
    for excluded in ("tests/", "scripts/", "bench/", ".venv/", ".git/", "wheels/index.json", "Makefile"):
        assert not any(n.startswith(excluded) for n in names), excluded
    assert not any("__pycache__" in n or n.endswith(".pyc") for n in names)
    print(f"{linux_zip.name}: {linux_zip.stat().st_size / 2**20:.1f} MiB")


@pytest.fixture(scope="module")
def blender(request) -> list[str]:
    """How to run a script with bpy in a fresh process: this Python on the PyPI bpy module;
    inside a Blender binary (`pytest --blender-executable PATH`) that binary, headless."""
    if subprocess.run([sys.executable, "-c", "import bpy"], capture_output=True).returncode == 0:
        return [sys.executable]
    try:
        executable = request.getfixturevalue("blender_executable")  # pytest-blender's fixture
    except pytest.FixtureLookupError:
        pytest.skip("no bpy module for subprocesses and no Blender binary (pytest --blender-executable)")
    return [executable, "--background", "--factory-startup", "--python-exit-code", "1", "--python"]


@pytest.fixture(scope="module")
def installed(linux_zip, blender, tmp_path_factory) -> dict:
    return run_zip_in_blender(linux_zip, tmp_path_factory.mktemp("blender-home"), blender)


def _explain(r: dict) -> str:
    return (f"stage reached: {r.get('stage')}, exit {r.get('returncode')}\n"
            f"{r.get('error', '')}\n{r.get('log', '')}")


def test_zip_installs_and_enables(installed):
    r = installed
    home = os.path.realpath(r["home"])
    assert r.get("user_dirs"), _explain(r)
    for kind, path in r["user_dirs"].items():  # the user's real profile is never used
        assert os.path.realpath(path).startswith(home), (kind, path)
    assert r.get("install_result") == ["FINISHED"], _explain(r)
    assert r.get("addon_enabled") and r.get("addon_loaded"), _explain(r)
    assert os.path.realpath(r["package_file"]).startswith(home), r["package_file"]
    assert r.get("has_operator"), "bpy.ops.bonesmith.auto_skeleton is not registered\n" + _explain(r)
    # The bundled wheels, not the venv's copies, provide scipy & co.
    assert set(r.get("bundled_modules", {})) == {"scipy", "robust_laplacian", "fast_simplification", "embreex"}, _explain(r)
    for name, path in r["bundled_modules"].items():
        assert os.path.realpath(path).startswith(home), (name, path)
    # Blender picked the wheels of its own Python out of the zip's two sets.
    assert r["python"] == f"cp{sys.version_info.major}{sys.version_info.minor}" and r["python"] in PYTHONS
    assert f"cpython-{r['python'][2:]}" in os.path.basename(r["scipy_extension"]), r["scipy_extension"]


def test_auto_skeleton_from_installed_zip(installed):
    r = installed
    assert r.get("auto_skeleton_result") == ["FINISHED"], _explain(r)
    assert len(r["armatures"]) == 1, r["armatures"]
    assert r["bones"][0] > 1, r["bones"]
    assert r["armature_modifiers"] == r["armatures"], r["armature_modifiers"]


def test_demo_from_installed_zip(installed):
    """The demo rigs the sample character that ships in the zip (samples/), not the checkout's."""
    r = installed
    assert r.get("stage") == "demo" and r["returncode"] == 0, _explain(r)
    assert r["demo_exit"] == 0 and r["demo_files"] == ["demo.fbx", "demo.png"], _explain(r)
