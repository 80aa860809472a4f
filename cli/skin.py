# SPDX-License-Identifier: GPL-3.0-or-later
"""`python -m bonesmith skin INPUT --out OUTPUT`: Auto Skin (with --auto-skeleton: Auto Rig) on a
file's meshes."""
from __future__ import annotations

from pathlib import Path

from ..core.errors import BonesmithError
from . import common

HELP = "skin weights for the meshes of a file (Auto Skin / Auto Rig)"
DESCRIPTION = """\
Weight the meshes of INPUT to an armature's deforming bones (vertex groups + Armature
modifier) and write the rig. The armature is the one INPUT brings along, or the one of
--armature-from FILE, or a new one from Auto Skeleton (--auto-skeleton: Auto Rig)."""


def add_parser(commands) -> None:
    skin = commands.add_parser("skin", help=HELP, description=DESCRIPTION)
    common.input_argument(skin)
    source = skin.add_mutually_exclusive_group()
    source.add_argument("--armature-from", metavar="FILE", type=Path,
                        help="take the armature from FILE (.blend .fbx .glb .gltf) instead of INPUT")
    source.add_argument("--auto-skeleton", action="store_true",
                        help="build the skeleton with Auto Skeleton first (replaces any armature)")
    skin.add_argument("--out", "-o", metavar="OUTPUT", type=Path, action="append", required=True,
                      help="output file, repeatable: .blend, .fbx, .glb (meshes + armature) or "
                           ".npz (a Bonesmith record with the weights)")
    skin.add_argument("--model", metavar="MODEL", type=Path,
                      help="a trained skin model (.npz from train-skin; default: the shipped one)")
    skin.add_argument("--max-influences", type=int, default=4,
                      help="most bones per vertex (default 4, what game engines take)")
    skin.add_argument("--detail", type=float, default=1.0,
                      help="joint density for --auto-skeleton (default 1.0)")
    common.naming_argument(skin)
    common.markers_argument(skin)
    skin.set_defaults(run=run)


SKIN_OUTPUT_FORMATS = (".blend", ".fbx", ".glb", ".npz")


def _input_armature(meshes, scene_objects):
    """The armature INPUT brought along: the one its meshes are rigged to, else the one
    with the most deforming bones in the file."""
    from ..bridge.selection import armatures_of

    rigged = armatures_of(meshes)
    candidates = rigged or {o for o in scene_objects if o.type == 'ARMATURE'}
    candidates = sorted(candidates, key=lambda a: (-sum(b.use_deform for b in a.data.bones), a.name))
    return candidates[0] if candidates else None


def run(args) -> int:
    common.check_outputs(args.out, SKIN_OUTPUT_FORMATS)
    if args.max_influences < 1:
        raise BonesmithError("--max-influences must be at least 1")
    if args.naming != "bonesmith" and not args.auto_skeleton:
        raise BonesmithError("--naming names a new skeleton: use it with --auto-skeleton")
    if args.markers is not None and not args.auto_skeleton:
        raise BonesmithError("--markers places the joints of a new skeleton: use it with --auto-skeleton")
    markers = common.load_markers(args.markers)
    scene = common.empty_scene()
    import bpy
    from ..bridge import file_import
    from ..bridge.armature import deform_bones

    meshes = file_import.import_file(args.input)
    skeleton_seconds = None
    if args.auto_skeleton:
        file_import.strip_rigs(meshes)
        _, armature, skeleton_seconds, _ = common.rig(meshes, args.detail, args.naming, markers)
    elif args.armature_from is not None:
        source = args.armature_from
        if source.suffix.lower() not in (".blend", ".fbx", ".glb", ".gltf"):
            raise BonesmithError(f"Cannot take an armature from {source.name}: use .blend .fbx .glb .gltf")
        if not source.is_file():
            raise BonesmithError(f"File not found: {source}")
        file_import.strip_rigs(meshes)
        added = file_import.import_objects(source, scene.collection)
        armature = _input_armature([], added)
        if armature is None:
            raise BonesmithError(f"{source.name} contains no armature")
        for obj in added:  # keep the armature (and its parents), drop the file's meshes
            if obj.type == 'MESH':
                bpy.data.objects.remove(obj)
    else:
        armature = _input_armature(meshes, scene.objects)
        if armature is None:
            raise BonesmithError(f"{args.input.name} has no armature: pass --armature-from FILE "
                                 "or --auto-skeleton")
    bpy.context.view_layer.update()
    n_bones = len(deform_bones(armature)[0])
    weights, seconds, which = common.skin(meshes, armature, model=args.model, max_influences=args.max_influences)
    if args.auto_skeleton:
        from ..bridge.markers import note_skinned
        note_skinned(armature, args.max_influences)
    common.write_all(args.out, None, armature, meshes)
    influences = (weights > 0).sum(axis=1)
    print(f"{args.input.name}: {len(weights)} vertices weighted to {n_bones} bones of "
          f"'{armature.name}' in {seconds:.2f} s")
    print(f"  model     {which}")
    if skeleton_seconds is not None:
        print(f"  skeleton  {skeleton_seconds:.2f} s (Auto Skeleton)")
    print(f"  influences at most {influences.max()} per vertex, {int((influences == 0).sum())} unweighted")
    common.print_written(args.out)
    return 0
