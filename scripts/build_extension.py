#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Build Bonesmith's per-platform extension zips (`make extension`).

    python scripts/build_extension.py --out dist [--platforms linux-x64,windows-x64,macos-arm64]

Steps:
1. Validate the committed source with Blender's own validator (`blender_ext.py validate .`).
2. Download the runtime wheels Blender does not ship (scipy, robust-laplacian,
   fast-simplification, embreex; versions pinned in requirements.txt) for every requested
   platform and Python (3.11 and 3.13: one zip serves Blender 4.2 to 5.2) with
   `pip download --only-binary=:all: --no-deps`, cached in `wheels/`
   (git-ignored; `wheels/index.json` records which file was chosen and its sha256,
   so a second run needs no network).
3. Stage a copy of the extension (files filtered by the manifest's [build]
   rules, using the builder's own pattern matcher) plus the wheels, and write the
   staged manifest with `wheels = [...]`.
4. Run Blender's builder shipped in the bpy wheel
   (`blender_ext.py build --split-platforms`), then validate every zip.

`--reuse` skips steps 3-4 for a platform whose zip in --out was built from the
same inputs (source files, manifest, wheels, this script) - used by the tests.
Run it with the project's venv Python (it locates blender_ext.py through the
installed `bpy` package without importing bpy).
"""
from __future__ import annotations

import argparse
import glob
import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = "blender_manifest.toml"

# Packages bundled as wheels. numpy is shipped by Blender itself; bpy and torch are never bundled.
BUNDLED = ("scipy", "robust-laplacian", "fast-simplification", "embreex")
# Requirements of the bundled wheels that Blender already provides.
PROVIDED_BY_BLENDER = {"numpy"}

# Blender platform -> `pip download --platform` values, most preferred first.
# linux: Blender 4.2+ needs glibc >= 2.28; pip does not expand manylinux_2_28 to older
# glibc tags on its own, so list them. macOS: prefer macOS-12 wheels (scipy also has
# Accelerate-based macOS-14 wheels that would not load on macOS 12/13).
PIP_PLATFORMS = {
    "linux-x64": [f"manylinux_2_{minor}_x86_64" for minor in range(28, 16, -1)]
    + ["manylinux2014_x86_64", "manylinux2010_x86_64", "manylinux1_x86_64"],
    "windows-x64": ["win_amd64"],
    # embreex has macOS-13 wheels only (on macOS 11/12 it does not load and Auto Skin
    # falls back to its numpy ray test, core/rays.py).
    "macos-arm64": ["macosx_12_0_arm64", "macosx_13_0_arm64"],
    "macos-x64": ["macosx_10_13_x86_64"],
    "linux-arm64": [f"manylinux_2_{minor}_aarch64" for minor in range(28, 16, -1)] + ["manylinux2014_aarch64"],
    "windows-arm64": ["win_arm64"],
}

# Blender 4.2 - 5.0 embed CPython 3.11, Blender 5.1 - 5.2 LTS CPython 3.13. Each zip carries
# the wheels of both side by side; Blender installs those that match its own Python.
DEFAULT_PYTHON_VERSIONS = "3.11,3.13"


class BuildError(RuntimeError):
    pass


def log(msg: str) -> None:
    print(f"[build_extension] {msg}", flush=True)


def normalize(name: str) -> str:
    """PEP 503 normalised project name."""
    return re.sub(r"[-_.]+", "-", name).lower()


# ---------------------------------------------------------------------------
# Blender's extension tool (inside the bpy wheel)

def find_blender_ext() -> Path:
    spec = importlib.util.find_spec("bpy")  # locates the package without importing it
    if spec is None or not spec.submodule_search_locations:
        raise BuildError("the `bpy` package is not installed in this Python; run `make venv` first")
    hits = []
    for base in spec.submodule_search_locations:
        hits += glob.glob(os.path.join(base, "*", "scripts", "addons_core", "bl_pkg", "cli", "blender_ext.py"))
    if not hits:
        raise BuildError("blender_ext.py not found inside the bpy package")

    def version_key(p):
        ver = Path(p).parts[-6]
        return tuple(int(x) for x in ver.split(".") if x.isdigit())

    return Path(sorted(hits, key=version_key)[-1])


def load_blender_ext(path: Path):
    spec = importlib.util.spec_from_file_location("_bonesmith_blender_ext", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_blender_ext(blender_ext: Path, *args: str) -> str:
    cmd = [sys.executable, str(blender_ext), *args]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    out = (proc.stdout + proc.stderr).strip()
    if proc.returncode != 0:
        raise BuildError(f"`blender_ext.py {' '.join(args)}` failed (exit {proc.returncode}):\n{out}")
    return out


# ---------------------------------------------------------------------------
# Requirements and wheels

def pinned_requirements(path: Path) -> dict[str, str]:
    pins = {}
    for raw in path.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line or line.startswith("-"):
            continue
        m = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*==\s*([^\s;,]+)(\s*;.*)?", line)
        if m:
            pins[normalize(m.group(1))] = m.group(2)
    missing = [name for name in BUNDLED if normalize(name) not in pins]
    if missing:
        raise BuildError(f"{path.name} must pin with '==' every bundled package; missing: {', '.join(missing)}")
    return pins


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def wheel_requirements(path: Path) -> list[str]:
    """Names of the unconditional (non-extra) Requires-Dist entries of a wheel."""
    with zipfile.ZipFile(path) as zf:
        meta_name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA") and n.count("/") == 1)
        meta = zf.read(meta_name).decode("utf-8", "replace")
    names = []
    for line in meta.splitlines():
        if not line.startswith("Requires-Dist:"):
            continue
        req = line.split(":", 1)[1].strip()
        marker = req.split(";", 1)[1] if ";" in req else ""
        if "extra" in marker:
            continue
        names.append(normalize(re.match(r"[A-Za-z0-9._-]+", req).group(0)))
    return names


class WheelCache:
    """`wheels/`: downloaded wheels plus index.json {key: {file, sha256}}."""

    def __init__(self, directory: Path, blender_ext_mod):
        self.dir = directory
        self.bx = blender_ext_mod
        self.index_path = directory / "index.json"

    def _read_index(self) -> dict:
        try:
            return json.loads(self.index_path.read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            return {}

    def _record(self, key: str, entry: dict) -> None:
        index = self._read_index()  # re-read: another build may have added entries
        index[key] = entry
        tmp = self.index_path.with_name(f".index.{os.getpid()}.json")
        tmp.write_text(json.dumps(index, indent=1, sort_keys=True) + "\n")
        os.replace(tmp, self.index_path)

    def _check_wheel(self, filename: str, name: str, version: str, platform: str, pyver: str) -> None:
        parts = filename[:-4].split("-")
        if len(parts) not in (5, 6) or normalize(parts[0]) != normalize(name) or parts[1] != version:
            raise BuildError(f"unexpected wheel {filename} for {name}=={version}")
        if not self.bx.blender_platform_compatible_with_wheel_platform_from_filepath(platform, filename):
            raise BuildError(f"wheel {filename} is not for Blender platform {platform}")
        versions = self.bx.python_versions_from_wheel(filename)
        major, minor = (int(x) for x in pyver.split("."))
        if isinstance(versions, str) or not ((major, minor) in versions or (major,) in versions):
            raise BuildError(f"wheel {filename} is not for Python {pyver}")

    def get(self, name: str, version: str, platform: str, pyver: str) -> Path:
        key = f"{normalize(name)}=={version}|cp{pyver.replace('.', '')}|{platform}"
        entry = self._read_index().get(key)
        if entry:
            path = self.dir / entry["file"]
            if path.is_file() and sha256_file(path) == entry["sha256"]:
                return path
            log(f"cached wheel for {key} missing or corrupt; downloading again")
        return self._download(key, name, version, platform, pyver)

    def _download(self, key: str, name: str, version: str, platform: str, pyver: str) -> Path:
        if platform not in PIP_PLATFORMS:
            raise BuildError(f"no pip platform tags known for Blender platform {platform!r}")
        self.dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=self.dir, prefix=".download-") as tmp:
            cmd = [
                sys.executable, "-m", "pip", "download", f"{name}=={version}",
                "--only-binary=:all:", "--no-deps", "--no-cache-dir", "--disable-pip-version-check",
                "--python-version", pyver, "--implementation", "cp", "--dest", tmp,
            ]
            for tag in PIP_PLATFORMS[platform]:
                cmd += ["--platform", tag]
            log(f"downloading {name}=={version} for {platform}, Python {pyver}")
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                raise BuildError(f"pip download failed for {key}:\n{proc.stdout}{proc.stderr}")
            files = [f for f in os.listdir(tmp) if f.endswith(".whl")]
            if len(files) != 1:
                raise BuildError(f"expected one wheel for {key}, pip fetched {files}")
            filename = files[0]
            self._check_wheel(filename, name, version, platform, pyver)
            dest = self.dir / filename
            os.replace(os.path.join(tmp, filename), dest)
        self._record(key, {"file": filename, "sha256": sha256_file(dest)})
        return dest


# ---------------------------------------------------------------------------
# Staging

def read_manifest(root: Path) -> tuple[str, dict]:
    text = (root / MANIFEST).read_text(encoding="utf-8")
    return text, tomllib.loads(text)


def source_files(root: Path, manifest: dict, bx) -> list[str]:
    """Relative paths (forward slashes) the builder would pack, minus the manifest and wheels."""
    build = manifest.get("build", {})
    files: list[str] = []
    if "paths" in build:
        for rel in build["paths"]:
            p = root / rel
            if p.is_dir():
                files += [os.path.relpath(a, root) for a, _ in bx.scandir_recursive(str(p), lambda _f, _d: True)]
            elif p.is_file():
                files.append(rel)
    else:
        patterns = build.get("paths_exclude_pattern", ["__pycache__/", ".*", "/*.zip", "*.blend[1-9]"])
        matcher = bx.PathPatternMatch(patterns)

        def keep(rel: str, is_dir: bool) -> bool:
            rel = rel.replace(os.sep, "/")
            return not matcher.test_path(rel + "/" if is_dir else rel)

        files = [rel for _, rel in bx.scandir_recursive(str(root), filter_fn=keep)]
    files = sorted({f.replace(os.sep, "/") for f in files} - {MANIFEST})
    if not any(f.startswith("__init__.") for f in files):
        raise BuildError("no __init__.py at the extension's top level")
    return files


def staged_manifest_text(text: str, wheels_rel: list[str], platforms: list[str], all_platforms: list[str]) -> str:
    """The committed manifest plus `wheels = [...]` (and the platform subset, if one was asked for)."""
    if re.search(r"(?m)^\s*wheels\s*=", text):
        raise BuildError(f"the committed {MANIFEST} must not list wheels; this script adds them")
    if platforms != all_platforms:
        new, n = re.subn(r"(?m)^platforms\s*=\s*\[[^\]\n]*\]\s*$",
                         "platforms = [" + ", ".join(json.dumps(p) for p in platforms) + "]", text)
        if n != 1:
            raise BuildError(f"could not rewrite the one-line `platforms = [...]` in {MANIFEST}")
        text = new
    block = "# Added by scripts/build_extension.py.\nwheels = [\n" + "".join(
        f"  {json.dumps(w)},\n" for w in wheels_rel) + "]\n\n"
    m = re.search(r"(?m)^\[", text)  # top-level keys must precede the first table
    text = text[:m.start()] + block + text[m.start():] if m else text.rstrip("\n") + "\n\n" + block
    parsed = tomllib.loads(text)
    assert parsed["wheels"] == wheels_rel and parsed["platforms"] == platforms
    return text


def fingerprint(root: Path, files: list[str], manifest_text: str, wheels: list[Path], extra: str) -> str:
    h = hashlib.sha256()
    h.update(Path(__file__).read_bytes())
    h.update(manifest_text.encode())
    h.update(extra.encode())
    for rel in files:
        h.update(rel.encode() + b"\0")
        h.update(hashlib.sha256((root / rel).read_bytes()).digest())
    for w in sorted(wheels):
        h.update(w.name.encode() + b"\0")
    return h.hexdigest()


def zip_name(manifest: dict, platform: str) -> str:
    return f"{manifest['id']}-{manifest['version']}-{platform.replace('-', '_')}.zip"


def check_zip(path: Path, platform: str, wheels_rel: list[str], files: list[str]) -> None:
    with zipfile.ZipFile(path) as zf:
        names = set(zf.namelist())
        bad = zf.testzip()
        manifest = tomllib.loads(zf.read(MANIFEST).decode())
    if bad:
        raise BuildError(f"{path.name}: corrupt member {bad}")
    want_wheels = {w[2:] if w.startswith("./") else w for w in wheels_rel}
    got_wheels = {n for n in names if n.endswith(".whl")}
    if got_wheels != want_wheels:
        raise BuildError(f"{path.name}: wheels {sorted(got_wheels)} != expected {sorted(want_wheels)}")
    missing = set(files) - names
    if missing:
        raise BuildError(f"{path.name}: missing files {sorted(missing)[:10]}")
    extra = names - set(files) - want_wheels - {MANIFEST}
    if extra:
        raise BuildError(f"{path.name}: unexpected files {sorted(extra)[:10]}")
    gen = manifest.get("build", {}).get("generated", {})
    if gen.get("platforms") != [platform]:
        raise BuildError(f"{path.name}: generated platforms {gen.get('platforms')} != [{platform}]")


# ---------------------------------------------------------------------------

def build(args) -> dict[str, Path]:
    root = Path(args.source).resolve()
    out = Path(args.out)
    out = (out if out.is_absolute() else Path.cwd() / out).resolve()
    blender_ext = Path(args.blender_ext) if args.blender_ext else find_blender_ext()
    bx = load_blender_ext(blender_ext)
    log(f"Blender's extension tool: {blender_ext}")

    manifest_text, manifest = read_manifest(root)
    all_platforms = list(manifest.get("platforms") or [])
    if not all_platforms:
        raise BuildError(f"{MANIFEST} must declare `platforms` to build per-platform zips")
    platforms = [p.strip() for p in args.platforms.split(",") if p.strip()] if args.platforms else all_platforms
    unknown = [p for p in platforms if p not in all_platforms]
    if unknown:
        raise BuildError(f"platform(s) {unknown} are not in the manifest's platforms {all_platforms}")
    platforms = [p for p in all_platforms if p in platforms]  # manifest order, no duplicates
    pyvers = [v.strip() for v in args.python_versions.split(",") if v.strip()]

    # 1. The committed manifest must be valid on its own.
    log("validate source: " + run_blender_ext(blender_ext, "validate", str(root)).replace("\n", " | "))

    # 2. Wheels.
    pins = pinned_requirements(root / "requirements.txt")
    cache = WheelCache(Path(args.wheels_dir).resolve() if args.wheels_dir else root / "wheels", bx)
    wheels: dict[str, list[Path]] = {}
    for platform in platforms:
        wheels[platform] = [cache.get(name, pins[normalize(name)], platform, pyver)
                            for name in BUNDLED for pyver in pyvers]
    bundled = {normalize(n) for n in BUNDLED}
    for path in {w for ws in wheels.values() for w in ws}:
        unmet = [r for r in wheel_requirements(path) if r not in bundled | PROVIDED_BY_BLENDER]
        if unmet:
            raise BuildError(f"{path.name} requires {unmet}, which is neither bundled nor shipped by Blender")

    # 3.-4. Stage and build (per platform, unless reusable).
    files = source_files(root, manifest, bx)
    stamp_path = out / ".build-stamp.json"
    try:
        stamps = json.loads(stamp_path.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        stamps = {}
    tool = f"{sha256_file(blender_ext)}|{','.join(pyvers)}"
    prints = {p: fingerprint(root, files, manifest_text, wheels[p], f"{p}|{tool}") for p in platforms}
    results = {p: out / zip_name(manifest, p) for p in platforms}
    todo = [p for p in platforms
            if not (args.reuse and results[p].is_file() and stamps.get(p, {}).get("fingerprint") == prints[p]
                    and stamps[p].get("size") == results[p].stat().st_size)]
    for p in platforms:
        if p not in todo:
            log(f"reusing {results[p]} (inputs unchanged)")

    if todo:
        out.mkdir(parents=True, exist_ok=True)
        build_root = root / "build"
        build_root.mkdir(exist_ok=True)
        stage = Path(tempfile.mkdtemp(prefix="extension-stage-", dir=build_root))
        try:
            for rel in files:
                dst = stage / rel
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(root / rel, dst)
            (stage / "wheels").mkdir()
            wheel_set = sorted({w for p in todo for w in wheels[p]}, key=lambda w: w.name)
            for w in wheel_set:
                shutil.copy2(w, stage / "wheels" / w.name)
            wheels_rel = [f"./wheels/{w.name}" for w in wheel_set]
            (stage / MANIFEST).write_text(
                staged_manifest_text(manifest_text, wheels_rel, todo, all_platforms), encoding="utf-8")
            log("validate stage: " + run_blender_ext(blender_ext, "validate", str(stage)).replace("\n", " | "))
            with tempfile.TemporaryDirectory(prefix="extension-out-", dir=build_root) as tmp_out:
                log(run_blender_ext(blender_ext, "build", "--source-dir", str(stage),
                                    "--output-dir", tmp_out, "--split-platforms").replace("\n", " | "))
                for p in todo:
                    built = Path(tmp_out) / zip_name(manifest, p)
                    if not built.is_file():
                        raise BuildError(f"the builder did not write {built.name}")
                    check_zip(built, p, [f"./wheels/{w.name}" for w in wheels[p]], files)
                    os.replace(built, results[p])
                    stamps[p] = {"fingerprint": prints[p], "size": results[p].stat().st_size}
        finally:
            if args.keep_stage:
                log(f"stage kept at {stage}")
            else:
                shutil.rmtree(stage, ignore_errors=True)
        tmp = stamp_path.with_name(f".build-stamp.{os.getpid()}.json")
        tmp.write_text(json.dumps(stamps, indent=1, sort_keys=True) + "\n")
        os.replace(tmp, stamp_path)

    # Validate what ships.
    for p in platforms:
        log(f"validate {results[p].name}: "
            + run_blender_ext(blender_ext, "validate", str(results[p])).replace("\n", " | "))
    for p in platforms:
        size = results[p].stat().st_size
        log(f"{p}: {results[p]} {size / 2**20:.1f} MiB ({', '.join(w.name for w in wheels[p])})")
    return results


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="dist", help="output directory for the zips (default: dist)")
    ap.add_argument("--platforms", default="",
                    help="comma-separated subset of the manifest's platforms (default: all of them)")
    ap.add_argument("--python-versions", default=DEFAULT_PYTHON_VERSIONS,
                    help="comma-separated CPython versions to bundle wheels for (default: %(default)s: "
                         "Blender 4.2-5.0 and 5.1-5.2)")
    ap.add_argument("--wheels-dir", default="", help="wheel cache (default: <source>/wheels)")
    ap.add_argument("--source", default=str(ROOT), help="extension source directory (default: the repo root)")
    ap.add_argument("--blender-ext", default="", help="path to blender_ext.py (default: found in the bpy package)")
    ap.add_argument("--reuse", action="store_true",
                    help="keep an existing zip in --out when its inputs are unchanged")
    ap.add_argument("--keep-stage", action="store_true", help="keep the staging directory under build/")
    args = ap.parse_args(argv)
    try:
        build(args)
    except BuildError as ex:
        print(f"[build_extension] error: {ex}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
