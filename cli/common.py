# SPDX-License-Identifier: GPL-3.0-or-later
"""What the commands share: their common arguments, an empty scene, rigging and skinning
through the services of bridge/, writing the outputs. bpy is imported inside the functions,
so `--help` stays instant."""
from __future__ import annotations

import sys
import time
from pathlib import Path

from ..core.errors import BonesmithError
from ..core.safe_write import check_writable

OUTPUT_FORMATS = (".blend", ".fbx", ".json")


# -- arguments -----------------------------------------------------------------------------------

def input_argument(parser) -> None:
    parser.add_argument("input", metavar="INPUT", type=Path,
                        help="mesh file: .obj .ply .fbx .glb .gltf .blend or a Bonesmith .npz record")


def inputs_argument(parser, metavar: str, help: str) -> None:
    """Several input files or folders (train-skin, correctives)."""
    parser.add_argument("inputs", metavar=metavar, type=Path, nargs="+", help=help)


def model_out_argument(parser, metavar: str, help: str) -> None:
    """The one model file a command writes (train-skin, correctives)."""
    parser.add_argument("--out", "-o", metavar=metavar, type=Path, required=True, help=help)


def naming_argument(parser) -> None:
    from ..core.rig.presets import PRESETS
    parser.add_argument("--naming", choices=PRESETS, default="bonesmith",
                        help="bone names: bonesmith (generic, default) or, for a humanoid, the "
                             "standard humanoid skeleton named for Mixamo, Unreal, Unity or as a "
                             "Rigify metarig")


def markers_argument(parser) -> None:
    parser.add_argument("--markers", metavar="FILE.json", type=Path,
                        help="a humanoid's joints placed by hand: a JSON object of landmark -> [x, y, z] "
                             "in the file's units and frame as imported (chin, shoulder.L/R, elbow.L/R, "
                             "wrist.L/R, hip.L/R, knee.L/R, ankle.L/R; a lone side is mirrored on a "
                             "symmetric character)")


def load_markers(path):
    """The --markers file checked (None: no markers), before any work."""
    from ..core.rig import markers
    return None if path is None else markers.load(path)


def check_outputs(outputs, formats) -> None:
    """Refuse an unknown output format or a place that cannot be written before any work
    is done."""
    for out in outputs:
        if out.suffix.lower() not in formats:
            raise BonesmithError(f"Cannot write {out.name}: use one of {', '.join(formats)}")
        check_writable(out)


# -- scene -----------------------------------------------------------------------------------

def empty_scene():
    import bpy
    bpy.ops.wm.read_factory_settings(use_empty=True)
    return bpy.context.scene


def rig(meshes, detail: float, naming: str = "bonesmith", markers=None):
    """Skeleton (world space) and armature for `meshes` (bridge/skeleton.py), with the
    humanoid's joints at `markers` ({landmark: point}, world space as read here); returns
    (skeleton, armature, seconds of the extraction, vertex count)."""
    from ..bridge import skeleton as bridge_skeleton

    inp = bridge_skeleton.read(meshes)
    _note_ground(inp.left_out)
    started = time.perf_counter()
    skeleton = bridge_skeleton.compute(inp, detail=detail, naming=naming, markers=markers)
    seconds = time.perf_counter() - started
    note = bridge_skeleton.naming_note(skeleton, naming)
    if note.startswith("not recognised"):
        print(f"note: {note}", file=sys.stderr)
    armature = bridge_skeleton.build(inp, skeleton, detail=detail, naming=naming, markers=markers)
    return skeleton, armature, seconds, inp.n_vertices


def skin(meshes, armature, *, model=None, max_influences: int = 4):
    """Auto Skin `meshes` to `armature` (bridge/skin.py, as the operator does); returns
    (weights, seconds, which model weighted them)."""
    import bpy
    from ..bridge import skin as bridge_skin

    if model is not None and not Path(model).is_file():
        raise BonesmithError(f"Skin model not found: {model}")
    skin_input = bridge_skin.read(meshes, armature, model=model)
    _note_ground(skin_input.left_out)
    started = time.perf_counter()
    weights, which = bridge_skin.compute(skin_input, max_influences)
    seconds = time.perf_counter() - started
    bridge_skin.apply(bpy.context, skin_input, weights)
    return weights, seconds, which


def _note_ground(names) -> None:
    """Say on stderr which objects were left out as a ground plate (bridge.mesh.without_ground)."""
    from ..bridge import mesh as bridge_mesh

    if names:
        print(f"note: {bridge_mesh.ground_note(names)}", file=sys.stderr)


# -- outputs -----------------------------------------------------------------------------------

def write(path: Path, skeleton, armature, meshes) -> None:
    import bpy
    from ..bridge import fbx as bridge_fbx

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
    elif suffix == ".npz":
        from ..bridge.training_data import character_from_objects
        from ..core import records
        records.write(path, character_from_objects(armature, meshes, family=path.stem))


def write_all(outputs, skeleton, armature, meshes) -> None:
    for out in outputs:
        write(out, skeleton, armature, meshes)


def print_written(outputs) -> None:
    for out in outputs:
        print(f"  wrote {out}")
