# SPDX-License-Identifier: GPL-3.0-or-later
"""`python -m bonesmith skeleton INPUT --out OUTPUT`: Auto Skeleton on a mesh file."""
from __future__ import annotations

from pathlib import Path

from ..core.errors import BonesmithError
from . import common

HELP = "build a skeleton for a mesh file and save the rig"
# glTF keeps an armature only as the skin of a weighted mesh: unweighted, its bones come
# back as empties, so `skeleton` (no weights) refuses it and points to `skin`
GLB_REFUSED = ("Cannot write {name} from `skeleton`: a glTF file keeps the armature only on a mesh "
               "weighted to it (without weights its bones come back as empties). Write .blend or .fbx "
               "here, or rig and weight in one go: `python -m bonesmith skin INPUT --auto-skeleton "
               "--out {name}`")
DESCRIPTION = """\
Build a skeleton inside the meshes of INPUT and write the rigged result. Any armature INPUT
brings along is replaced."""


def add_parser(commands) -> None:
    skeleton = commands.add_parser("skeleton", help=HELP, description=DESCRIPTION)
    common.input_argument(skeleton)
    skeleton.add_argument("--out", "-o", metavar="OUTPUT", type=Path, action="append", required=True,
                          help="output file, repeatable: .blend, .fbx (mesh + armature) or .json "
                               "(the skeleton in world units); for .glb weight it with `skin`")
    skeleton.add_argument("--detail", type=float, default=1.0,
                          help="joint density (default 1.0; 2.0 about doubles the joints per chain)")
    common.naming_argument(skeleton)
    common.markers_argument(skeleton)
    skeleton.set_defaults(run=run)


def run(args) -> int:
    for out in args.out:
        if out.suffix.lower() == ".glb":
            raise BonesmithError(GLB_REFUSED.format(name=out.name))
    common.check_outputs(args.out, common.OUTPUT_FORMATS)
    markers = common.load_markers(args.markers)
    common.empty_scene()
    from ..bridge import file_import

    meshes = file_import.import_file(args.input)
    file_import.strip_rigs(meshes)
    skeleton, armature, seconds, n_vertices = common.rig(meshes, args.detail, args.naming, markers)
    common.write_all(args.out, skeleton, armature, meshes)
    print(f"{args.input.name}: {n_vertices} vertices -> {len(skeleton)} joints ({skeleton.facing_text}) "
          f"in {seconds:.2f} s")
    common.print_written(args.out)
    return 0
