# SPDX-License-Identifier: GPL-3.0-or-later
"""Bonesmith's command line: `python -m bonesmith <command> ...` (headless).

bpy is imported only by the commands that need it, so `--help` is instant.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from .core.errors import BonesmithError

PACKAGE_DIR = Path(__file__).resolve().parent
SAMPLE_CHARACTER = PACKAGE_DIR / "tests" / "data" / "quat_Male_Casual.npz"
OUTPUT_FORMATS = (".blend", ".fbx", ".glb", ".json")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bonesmith",
        description="Bonesmith: automatic skeletons for characters, headless.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    skeleton = commands.add_parser(
        "skeleton", help="build a skeleton for a mesh file and save the rig",
        description="Build a skeleton inside the meshes of INPUT and write the rigged result. "
                    "Any armature INPUT brings along is replaced.")
    skeleton.add_argument("input", metavar="INPUT", type=Path,
                          help="mesh file: .obj .ply .fbx .glb .gltf .blend or a Bonesmith .npz record")
    skeleton.add_argument("--out", "-o", metavar="OUTPUT", type=Path, action="append", required=True,
                          help="output file, repeatable: .blend, .fbx, .glb (mesh + armature) "
                               "or .json (the skeleton in world units)")
    skeleton.add_argument("--detail", type=float, default=1.0,
                          help="joint density (default 1.0; 2.0 about doubles the joints per chain)")
    skeleton.set_defaults(run=cmd_skeleton)

    demo = commands.add_parser(
        "demo", help="rig the bundled sample character; write demo.fbx and demo.png",
        description="Rig the bundled CC0 sample character (Quaternius 'Male Casual') and write "
                    "DIR/demo.fbx and a picture DIR/demo.png.")
    demo.add_argument("--out", "-o", metavar="DIR", type=Path, default=Path("out"),
                      help="output folder (default: out)")
    demo.add_argument("--detail", type=float, default=1.0, help="joint density (default 1.0)")
    demo.set_defaults(run=cmd_demo)
    return parser


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    try:
        return args.run(args) or 0
    except BonesmithError as error:
        print(f"bonesmith: error: {error}", file=sys.stderr)
        return 1


# -- commands -----------------------------------------------------------------------------

def _empty_scene():
    import bpy
    bpy.ops.wm.read_factory_settings(use_empty=True)
    return bpy.context.scene


def _rig(meshes, detail: float):
    """Skeleton (world space) and armature for `meshes`; returns (skeleton, armature, seconds)."""
    from .bridge import armature as bridge_armature
    from .bridge import mesh as bridge_mesh
    from .core.skeleton import extract_skeleton

    mesh_set = bridge_mesh.combine_objects(meshes)
    started = time.perf_counter()
    skeleton = extract_skeleton(mesh_set.vertices, mesh_set.faces, detail=detail)
    seconds = time.perf_counter() - started
    armature = bridge_armature.build_rig(skeleton, meshes)
    return skeleton, armature, seconds, len(mesh_set.vertices)


def _write(path: Path, skeleton, armature, meshes) -> None:
    import bpy
    from .bridge import fbx as bridge_fbx

    path.parent.mkdir(parents=True, exist_ok=True)
    suffix = path.suffix.lower()
    if suffix == ".json":
        skeleton.save_json(path)
    elif suffix == ".fbx":
        bridge_fbx.export_fbx(path, armature, meshes)
    elif suffix == ".glb":
        for obj in bpy.context.view_layer.objects:
            obj.select_set(obj == armature or obj in meshes)
        bpy.ops.export_scene.gltf(filepath=str(path), export_format='GLB', use_selection=True,
                                  export_animations=False)
    elif suffix == ".blend":
        bpy.ops.wm.save_as_mainfile(filepath=str(path.resolve()), copy=True)


def cmd_skeleton(args) -> int:
    for out in args.out:
        if out.suffix.lower() not in OUTPUT_FORMATS:
            raise BonesmithError(f"Cannot write {out.name}: use one of {', '.join(OUTPUT_FORMATS)}")
    _empty_scene()
    from .bridge import files

    meshes = files.import_file(args.input)
    files.strip_rigs(meshes)
    skeleton, armature, seconds, n_vertices = _rig(meshes, args.detail)
    for out in args.out:
        _write(out, skeleton, armature, meshes)
    print(f"{args.input.name}: {n_vertices} vertices -> {len(skeleton)} joints in {seconds:.2f} s")
    for out in args.out:
        print(f"  wrote {out}")
    return 0


def cmd_demo(args) -> int:
    if not SAMPLE_CHARACTER.is_file():
        raise BonesmithError(f"The sample character is missing: {SAMPLE_CHARACTER} "
                             "(the demo runs from a checkout of the repository)")
    _empty_scene()
    from .bridge import files, render

    meshes = [files.load_npz(SAMPLE_CHARACTER)]
    skeleton, armature, seconds, n_vertices = _rig(meshes, args.detail)
    fbx_path, png_path = args.out / "demo.fbx", args.out / "demo.png"
    _write(fbx_path, skeleton, armature, meshes)
    render.render_preview(png_path, meshes, armature)
    print(f"Bonesmith demo: {SAMPLE_CHARACTER.name} (Quaternius, CC0)")
    print(f"  vertices  {n_vertices}")
    print(f"  joints    {len(skeleton)}")
    print(f"  seconds   {seconds:.2f}")
    print(f"  fbx       {fbx_path}")
    print(f"  picture   {png_path}")
    return 0
