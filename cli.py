# SPDX-License-Identifier: GPL-3.0-or-later
"""Bonesmith's command line: `python -m bonesmith <command> ...` (headless).

bpy is imported only by the commands that need it, so `--help` is instant.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from . import batch
from .core.errors import BonesmithError
from .core.files import check_writable

PACKAGE_DIR = Path(__file__).resolve().parent
SAMPLE_CHARACTER = PACKAGE_DIR / "tests" / "data" / "quat_Male_Casual.npz"
OUTPUT_FORMATS = (".blend", ".fbx", ".glb", ".json")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bonesmith",
        description="Bonesmith: automatic skeletons and skin weights for characters, headless.",
    )
    parser.add_argument("--verbose", action="store_true",
                        help="print the traceback of an unexpected error (for a bug report)")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    _add_skeleton_parser(commands)
    _add_skin_parser(commands)
    batch.add_parser(commands)
    _add_demo_parser(commands)
    _add_train_skin_parser(commands)
    _add_correctives_parser(commands)
    return parser


EXIT_BAD_INPUT = 2   # a BonesmithError: the input or the options need to change (as argparse's usage errors)
EXIT_FAILED = 1      # anything else: a bug or the machine (a disk full, a file locked)


def main(argv=None) -> int:
    """Run a command; errors are one line on stderr (--verbose: and the traceback)."""
    args = _parser().parse_args(argv)
    try:
        return args.run(args) or 0
    except BonesmithError as error:
        print(f"bonesmith: error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as error:
        _print_unexpected(args, f"{error.strerror or error} ({error.filename or 'no file name'})", error)
        return EXIT_FAILED
    except Exception as error:  # noqa: BLE001 - one line for the user, the rest with --verbose
        _print_unexpected(args, f"{type(error).__name__}: {error}", error)
        return EXIT_FAILED


def _print_unexpected(args, text: str, error: BaseException) -> None:
    if getattr(args, "verbose", False):
        import traceback
        traceback.print_exception(error, file=sys.stderr)
    print(f"bonesmith: error: {text}" + ("" if getattr(args, "verbose", False)
                                          else " (run with --verbose for the traceback)"), file=sys.stderr)


# -- commands -----------------------------------------------------------------------------

def _empty_scene():
    import bpy
    bpy.ops.wm.read_factory_settings(use_empty=True)
    return bpy.context.scene


def _rig(meshes, detail: float, naming: str = "bonesmith", markers=None):
    """Skeleton (world space) and armature for `meshes`, with the humanoid's joints at
    `markers` ({landmark: point}, world space as read here); returns (skeleton, armature,
    seconds of the extraction, vertex count). The armature remembers how it was built,
    for Adjust Joints in Blender."""
    from .bridge import armature as bridge_armature
    from .bridge import markers as bridge_markers
    from .bridge import mesh as bridge_mesh
    from .core.skeleton import extract_skeleton

    mesh_set = bridge_mesh.combine_objects(meshes, basis=True)
    started = time.perf_counter()
    skeleton = extract_skeleton(mesh_set.vertices, mesh_set.faces, detail=detail, naming=naming,
                                markers=markers)
    if naming != "bonesmith" and skeleton.info["naming"] != naming:
        print(f"note: not recognised as a humanoid (two legs, two arms, a head): generic names kept, "
              f"not {naming} names", file=sys.stderr)
    if skeleton.info.get("markers_ignored"):
        print("note: not recognised as a humanoid (two legs, two arms, a head): the markers were ignored",
              file=sys.stderr)
    seconds = time.perf_counter() - started
    armature = bridge_armature.build_rig(skeleton, meshes)
    bridge_markers.remember_build(armature, skeleton, [obj.name for obj in meshes], detail=detail, naming=naming,
                                  markers=markers)
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
    elif suffix == ".npz":
        from .bridge.training_data import character_from_objects
        from .core import records
        records.write(path, character_from_objects(armature, meshes, family=path.stem))


def _input_argument(parser) -> None:
    parser.add_argument("input", metavar="INPUT", type=Path,
                        help="mesh file: .obj .ply .fbx .glb .gltf .blend or a Bonesmith .npz record")


def _check_outputs(outputs, formats) -> None:
    """Refuse an unknown output format or a place that cannot be written before any work
    is done."""
    for out in outputs:
        if out.suffix.lower() not in formats:
            raise BonesmithError(f"Cannot write {out.name}: use one of {', '.join(formats)}")
        check_writable(out)


def _write_all(outputs, skeleton, armature, meshes) -> None:
    for out in outputs:
        _write(out, skeleton, armature, meshes)


def _print_written(outputs) -> None:
    for out in outputs:
        print(f"  wrote {out}")


def _add_skeleton_parser(commands) -> None:
    skeleton = commands.add_parser(
        "skeleton", help="build a skeleton for a mesh file and save the rig",
        description="Build a skeleton inside the meshes of INPUT and write the rigged result. "
                    "Any armature INPUT brings along is replaced.")
    _input_argument(skeleton)
    skeleton.add_argument("--out", "-o", metavar="OUTPUT", type=Path, action="append", required=True,
                          help="output file, repeatable: .blend, .fbx, .glb (mesh + armature) "
                               "or .json (the skeleton in world units)")
    skeleton.add_argument("--detail", type=float, default=1.0,
                          help="joint density (default 1.0; 2.0 about doubles the joints per chain)")
    _naming_argument(skeleton)
    _markers_argument(skeleton)
    skeleton.set_defaults(run=cmd_skeleton)


def _naming_argument(parser) -> None:
    from .core.rig.presets import PRESETS
    parser.add_argument("--naming", choices=PRESETS, default="bonesmith",
                        help="bone names: bonesmith (generic, default) or, for a humanoid, the "
                             "standard humanoid skeleton named for Mixamo, Unreal, Unity or as a "
                             "Rigify metarig")


def _markers_argument(parser) -> None:
    parser.add_argument("--markers", metavar="FILE.json", type=Path,
                        help="a humanoid's joints placed by hand: a JSON object of landmark -> [x, y, z] "
                             "in the file's units and frame as imported (chin, shoulder.L/R, elbow.L/R, "
                             "wrist.L/R, hip.L/R, knee.L/R, ankle.L/R; a lone side is mirrored on a "
                             "symmetric character)")


def _load_markers(path):
    """The --markers file checked (None: no markers), before any work."""
    from .core.rig import markers
    return None if path is None else markers.load(path)


def cmd_skeleton(args) -> int:
    _check_outputs(args.out, OUTPUT_FORMATS)
    markers = _load_markers(args.markers)
    _empty_scene()
    from .bridge import files

    meshes = files.import_file(args.input)
    files.strip_rigs(meshes)
    skeleton, armature, seconds, n_vertices = _rig(meshes, args.detail, args.naming, markers)
    _write_all(args.out, skeleton, armature, meshes)
    print(f"{args.input.name}: {n_vertices} vertices -> {len(skeleton)} joints ({skeleton.facing_text}) "
          f"in {seconds:.2f} s")
    _print_written(args.out)
    return 0


def _add_skin_parser(commands) -> None:
    skin = commands.add_parser(
        "skin", help="skin weights for the meshes of a file (Auto Skin / Auto Rig)",
        description="Weight the meshes of INPUT to an armature's deforming bones (vertex groups "
                    "+ Armature modifier) and write the rig. The armature is the one INPUT brings "
                    "along, or the one of --armature-from FILE, or a new one from Auto Skeleton "
                    "(--auto-skeleton: Auto Rig).")
    _input_argument(skin)
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
    _naming_argument(skin)
    _markers_argument(skin)
    skin.set_defaults(run=cmd_skin)


def _skin(meshes, armature, *, model=None, max_influences: int = 4):
    """Auto Skin `meshes` to `armature` (as the operator does); returns (weights, seconds)."""
    import bpy
    from .bridge import skin

    if model is not None and not Path(model).is_file():
        raise BonesmithError(f"Skin model not found: {model}")
    skin_input = skin.read(meshes, armature, model=model)
    started = time.perf_counter()
    weights = skin.compute(skin_input, max_influences)
    seconds = time.perf_counter() - started
    skin.apply(bpy.context, skin_input, weights)
    return weights, seconds


SKIN_OUTPUT_FORMATS = (".blend", ".fbx", ".glb", ".npz")


def _input_armature(meshes, scene_objects):
    """The armature INPUT brought along: the one its meshes are rigged to, else the one
    with the most deforming bones in the file."""
    from .bridge.selection import armatures_of

    rigged = armatures_of(meshes)
    candidates = rigged or {o for o in scene_objects if o.type == 'ARMATURE'}
    candidates = sorted(candidates, key=lambda a: (-sum(b.use_deform for b in a.data.bones), a.name))
    return candidates[0] if candidates else None


def cmd_skin(args) -> int:
    _check_outputs(args.out, SKIN_OUTPUT_FORMATS)
    if args.max_influences < 1:
        raise BonesmithError("--max-influences must be at least 1")
    if args.naming != "bonesmith" and not args.auto_skeleton:
        raise BonesmithError("--naming names a new skeleton: use it with --auto-skeleton")
    if args.markers is not None and not args.auto_skeleton:
        raise BonesmithError("--markers places the joints of a new skeleton: use it with --auto-skeleton")
    markers = _load_markers(args.markers)
    scene = _empty_scene()
    import bpy
    from .bridge import files
    from .bridge.weights import deform_bones

    meshes = files.import_file(args.input)
    skeleton_seconds = None
    if args.auto_skeleton:
        files.strip_rigs(meshes)
        _, armature, skeleton_seconds, _ = _rig(meshes, args.detail, args.naming, markers)
    elif args.armature_from is not None:
        source = args.armature_from
        if source.suffix.lower() not in (".blend", ".fbx", ".glb", ".gltf"):
            raise BonesmithError(f"Cannot take an armature from {source.name}: use .blend .fbx .glb .gltf")
        if not source.is_file():
            raise BonesmithError(f"File not found: {source}")
        files.strip_rigs(meshes)
        added = files.import_objects(source, scene.collection)
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
    weights, seconds = _skin(meshes, armature, model=args.model, max_influences=args.max_influences)
    if args.auto_skeleton:
        from .bridge.markers import note_skinned
        note_skinned(armature, args.max_influences)
    _write_all(args.out, None, armature, meshes)
    influences = (weights > 0).sum(axis=1)
    print(f"{args.input.name}: {len(weights)} vertices weighted to {n_bones} bones of "
          f"'{armature.name}' in {seconds:.2f} s")
    if skeleton_seconds is not None:
        print(f"  skeleton  {skeleton_seconds:.2f} s (Auto Skeleton)")
    print(f"  influences at most {influences.max()} per vertex, {int((influences == 0).sum())} unweighted")
    _print_written(args.out)
    return 0


def _add_demo_parser(commands) -> None:
    demo = commands.add_parser(
        "demo", help="rig and skin the bundled sample character; write demo.fbx and demo.png",
        description="Rig the bundled CC0 sample character (Quaternius 'Male Casual') end to end "
                    "(Auto Skeleton + Auto Skin), pose it, and write DIR/demo.fbx (rig, weights "
                    "and the poses as an animation) and a picture of the poses DIR/demo.png.")
    demo.add_argument("--out", "-o", metavar="DIR", type=Path, default=Path("out"),
                      help="output folder (default: out)")
    demo.add_argument("--detail", type=float, default=1.0, help="joint density (default 1.0)")
    demo.set_defaults(run=cmd_demo)


def _demo_poses(armature) -> list:
    """Four poses for the demo: rest, arms down mid-stride, waving, kicking while reaching
    forward. Bones are found by role along Auto Skeleton's chains (arm_NN.L, leg_NN.R...),
    so the poses survive changes in how many bones a chain gets."""
    from .bridge.pose import bone_at, limb_chain

    def at(limb, side, fraction):
        return bone_at(armature, limb_chain(armature, limb, side), fraction)

    arm_l, arm_r = at("arm", ".L", 0.3), at("arm", ".R", 0.3)
    elbow_l, elbow_r = at("arm", ".L", 0.66), at("arm", ".R", 0.66)
    thigh_l, thigh_r = at("leg", ".L", 0.15), at("leg", ".R", 0.15)
    knee_l, knee_r = at("leg", ".L", 0.45), at("leg", ".R", 0.45)
    spine, neck = at("spine", "", 0.0), at("neck", "", 0.0)
    poses = [
        [],
        [(arm_l, "Y", 70), (arm_r, "Y", -70), (elbow_l, "X", -30), (elbow_r, "X", -30),
         (thigh_l, "X", -30), (thigh_r, "X", 20), (knee_r, "X", 40)],
        [(arm_r, "Y", 45), (elbow_r, "Y", 60), (arm_l, "Y", 75), (spine, "Y", 8), (neck, "Z", 25)],
        [(thigh_l, "X", -70), (knee_l, "X", 25), (thigh_r, "X", 10), (knee_r, "X", 25),
         (arm_l, "Z", -80), (arm_r, "Z", 80), (spine, "X", 12)],
    ]
    return [[entry for entry in pose if entry[0] is not None] for pose in poses]


def _keyframe_poses(armature, poses) -> None:
    """The poses as an action, one per frame from 1, for the FBX."""
    import bpy
    from .bridge.pose import apply_pose, reset_pose

    scene = bpy.context.scene
    for frame, pose in enumerate(poses, start=1):
        apply_pose(armature, pose)
        for pose_bone in armature.pose.bones:
            pose_bone.keyframe_insert("location", frame=frame)
            pose_bone.keyframe_insert("rotation_quaternion", frame=frame)
    scene.frame_start, scene.frame_end = 1, len(poses)
    scene.frame_set(1)
    reset_pose(armature)


def cmd_demo(args) -> int:
    if not SAMPLE_CHARACTER.is_file():
        raise BonesmithError(f"The sample character is missing: {SAMPLE_CHARACTER} "
                             "(the demo runs from a checkout of the repository)")
    check_writable(args.out / "demo.fbx")
    _empty_scene()
    from .bridge import fbx as bridge_fbx
    from .bridge import files, render

    meshes = [files.load_npz(SAMPLE_CHARACTER)]
    skeleton, armature, seconds, n_vertices = _rig(meshes, args.detail)
    weights, skin_seconds = _skin(meshes, armature)
    poses = _demo_poses(armature)
    fbx_path, png_path = args.out / "demo.fbx", args.out / "demo.png"
    render.render_poses(png_path, meshes, armature, poses)
    _keyframe_poses(armature, poses)
    bridge_fbx.export_fbx(fbx_path, armature, meshes, bake_anim=True)
    print(f"Bonesmith demo: {SAMPLE_CHARACTER.name} (Quaternius, CC0)")
    print(f"  vertices  {n_vertices}")
    print(f"  joints    {len(skeleton)}")
    print(f"  seconds   {seconds:.2f} skeleton, {skin_seconds:.2f} skin")
    print(f"  weights   at most {int((weights > 0).sum(axis=1).max())} bones per vertex, "
          f"{int(((weights > 0).sum(axis=1) == 0).sum())} vertices unweighted")
    print(f"  poses     {len(poses)} (rest, stride, wave, kick), also in the FBX as frames 1-{len(poses)}")
    print(f"  fbx       {fbx_path}")
    print(f"  picture   {png_path}")
    return 0


# -- train-skin (Auto Skin training) ------------------------------------------------------------

TRAIN_SKIN_FORMATS = (".npz", ".blend", ".fbx", ".glb", ".gltf")


def _add_train_skin_parser(commands) -> None:
    train = commands.add_parser(
        "train-skin", help="train an Auto Skin model on rigged characters (needs torch)",
        description="Train Auto Skin's network on rigged characters (artist skin weights) and "
                    "write the model (.npz; Auto Skin runs it without torch). INPUTS: Bonesmith "
                    ".npz records, .blend/.fbx/.glb/.gltf files with armatures and weighted "
                    "meshes, or folders of them. Validation holds out whole character families "
                    "(a record's 'family' array, a Blender file's name). It fine-tunes the shipped "
                    "model by default and never writes a model worse than the one it started from "
                    "on validation. Needs PyTorch "
                    "(pip install torch==2.13.0). Data-parallel on N processes (CPU cores or GPUs): "
                    "torchrun --nproc_per_node N -m bonesmith train-skin ...")
    train.add_argument("inputs", metavar="INPUTS", type=Path, nargs="+",
                       help="rigged characters: .npz .blend .fbx .glb .gltf files or folders")
    train.add_argument("--out", "-o", metavar="MODEL", type=Path, required=True,
                       help="the model file to write (.npz)")
    train.add_argument("--epochs", type=int, default=200, help="at most this many epochs (default 200)")
    train.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    train.add_argument("--resume", action="store_true",
                       help="continue from MODEL.ckpt left by an unfinished run")
    train.add_argument("--lr", type=float, default=1e-3, help="learning rate (default 1e-3)")
    train.add_argument("--batch-characters", type=int, default=2,
                       help="characters per step (default 2)")
    train.add_argument("--l1-weight", type=float, default=30.0,
                       help="weight of the L1 term added to the cross entropy (default 30)")
    train.add_argument("--init", metavar="MODEL", default="default",
                       help="the model to start from: 'default' (the shipped model, the default), "
                            "a model file, or 'none' (a fresh network, which starts as the heat prior)")
    train.add_argument("--selection", choices=("auto", "folds", "holdout"), default="auto",
                       help="how the number of epochs is chosen: cross-validation by family ('folds', "
                            "used up to 12 families), or early stopping on held-out families "
                            "('holdout', used above); default auto")
    train.add_argument("--patience", type=int, default=30,
                       help="holdout: stop after this many epochs without a better validation L1 (default 30)")
    train.add_argument("--val-fraction", type=float, default=0.2,
                       help="holdout: fraction of the families held out for validation (default 0.2)")
    train.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                       help="where to train: a CUDA GPU when there is one (auto, the default), or cpu/cuda")
    train.add_argument("--precision", choices=("auto", "fp32", "bf16"), default="auto",
                       help="bf16 mixed precision on a GPU that has it (auto, the default), else fp32")
    train.set_defaults(run=cmd_train_skin)


def _train_skin_files(inputs) -> list:
    files = []
    for path in inputs:
        if path.is_dir():
            files += sorted(p for p in path.rglob("*") if p.suffix.lower() in TRAIN_SKIN_FORMATS)
        elif path.is_file():
            if path.suffix.lower() not in TRAIN_SKIN_FORMATS:
                raise BonesmithError(f"Cannot train on {path.name}: use {', '.join(TRAIN_SKIN_FORMATS)}")
            files.append(path)
        else:
            raise BonesmithError(f"File not found: {path}")
    if not files:
        raise BonesmithError("No rigged characters found in the inputs")
    return files


def cmd_train_skin(args) -> int:
    from .core.skinning import train as skin_train
    from .core.skinning.distributed import launched_by_torchrun
    from .core.skinning.text_progress import text_progress

    skin_train._torch()                 # a clear message before any slow loading
    check_writable(args.out)
    main_process = not launched_by_torchrun() or int(os.environ["RANK"]) == 0
    characters = _training_characters(args.inputs)
    if main_process:
        print(f"train-skin: {len(characters)} characters, "
              f"{len({str(c.get('family') or c.get('name')) for c in characters})} families", flush=True)
    try:
        report = skin_train.train_skin_model(
            characters, args.out, init=None if args.init == "none" else args.init, epochs=args.epochs,
            lr=args.lr, seed=args.seed, batch_characters=args.batch_characters, resume=args.resume,
            selection=args.selection, patience=args.patience, val_fraction=args.val_fraction,
            l1_weight=args.l1_weight, device=args.device, precision=args.precision,
            progress=text_progress() if main_process else None)
    except KeyboardInterrupt:
        if main_process:
            print(f"\ntrain-skin: interrupted; {args.out} is unchanged, rerun with --resume to "
                  "continue", file=sys.stderr)
        return 130
    if main_process:
        print(training_report(report))
        print(f"  wrote       {args.out} ({args.out.stat().st_size // 1024} KiB)")
    return 0


def _training_characters(inputs) -> list:
    """Training dicts from records and rigged Blender-readable files."""
    from .core.skinning import train as skin_train

    characters, blender_ready = [], False
    for path in _train_skin_files(inputs):
        if path.suffix.lower() == ".npz":
            characters.append(skin_train.load_record(path))
        else:
            if not blender_ready:
                _empty_scene()
                blender_ready = True
            from .bridge.training_data import load_rigged_file
            characters += load_rigged_file(path)
    return characters


def training_report(report: dict) -> str:
    """The end-of-training table: per validation character the heat prior's, the start
    model's and the trained model's L1, then the verdict."""
    from .core.skinning.train import summary
    how = {"folds": f"cross-validation, {report['folds']} folds by family (each character scored by "
                    "a model that did not train on its family)",
           "holdout": f"held-out families: {', '.join(report['val_families']) or 'none'}"}[report["selection"]]
    lines = [f"  start model {report['init']}", f"  validation  {how}",
             f"  {'character':<32} {'coverage':>8} {'prior L1':>9} {'start L1':>9} {'trained L1':>11}"]
    for r in report["val_characters"]:
        lines.append(f"  {r['name'][:32]:<32} {r['coverage']:>8.3f} {r['prior_l1']:>9.4f} "
                     f"{r['start_l1']:>9.4f} {r['l1']:>11.4f}")
    processes = f" x {report['processes']} processes" if report.get("processes", 1) > 1 else ""
    lines.append(f"  epochs      {report['epochs_run']} run, {report['best_epoch']} chosen; "
                 f"{report['seconds']:.1f} s on {report['device']}{processes} ({report.get('precision', 'fp32')})")
    lines.append(f"  result      {summary(report)}")
    return "\n".join(lines)


# -- correctives (learned pose correctives) --------------------------------------------------

def _add_correctives_parser(commands) -> None:
    learn = commands.add_parser(
        "correctives", help="learn pose correctives of a rigged character or a family of bodies "
                            "(no torch needed); --apply a family model to a new body",
        description="Learn refined skin weights and pose correctives (shape keys driven by the "
                    "bones) that make plain linear blend skinning reproduce a character's own "
                    "deformation, and write the model (.npz). INPUT: a Bonesmith .npz record with "
                    "poses (pose_rot (P,J,3,3) and pose_verts (P,V,3), P >= 2), or a "
                    ".blend/.fbx/.glb/.gltf file whose meshes deform by an armature: their "
                    "deformer stack (Preserve Volume, Corrective Smooth, ...) is sampled in random "
                    "poses as the ground truth. Several INPUTs that share one topology and one "
                    "skeleton learn a family model (one Pose_net for all, and a joint regressor). "
                    "--apply MODEL BODY: a family model's joints, weights and correctives for a "
                    "new body of the family, with no poses of it: BODY.npz (a record; OUT .npz: "
                    "the body's model) or a rigged BODY.blend/.fbx/.glb (its armature is fitted, "
                    "refined weights and driven shape keys written; OUT .blend/.fbx/.glb/.npz).")
    learn.add_argument("inputs", metavar="INPUT", type=Path, nargs="+",
                       help=".npz record or rigged file (several: a family); with --apply: the body")
    learn.add_argument("--out", "-o", metavar="OUT", type=Path, required=True,
                       help="the model file to write (.npz); with --apply also .blend/.fbx/.glb")
    learn.add_argument("--apply", metavar="MODEL", type=Path, default=None,
                       help="apply this family model to the body INPUT instead of learning")
    learn.add_argument("--body-joints", action="store_true",
                       help="with --apply: keep the body's own joints (its record's or armature's) "
                            "instead of the family's predicted ones")
    learn.add_argument("--poses", type=int, default=200,
                       help="random poses sampled from a rigged file (default 200)")
    learn.add_argument("--max-degrees", type=float, default=45.0,
                       help="largest random bone rotation in degrees (default 45)")
    learn.add_argument("--max-keys", type=int, default=0,
                       help="most live shape keys (default 0: about 4 ms per frame in Blender)")
    learn.add_argument("--seed", type=int, default=0, help="random seed of the poses (default 0)")
    learn.set_defaults(run=cmd_correctives)


def _correctives_data(path: Path, args, seed: int) -> dict:
    """Rest arrays, bone names (None if the record has none), poses and ground truth from a
    record or a rigged file."""
    from .core import correctives, records

    if path.suffix.lower() == ".npz":
        data = records.read(path, records.RIG + records.POSES, optional=("joint_names",),
                            needed_for="a rigged record with poses")
        names = data["joint_names"].tolist() if "joint_names" in data else None
        return dict(vertices=data["verts"], faces=data["faces"], joints=data["joints"],
                    parents=data["parents"], weights=data["weights"], rotations=data["pose_rot"],
                    posed=data["pose_verts"], names=names)
    from .bridge import correctives as bridge

    armature, meshes = _rigged_character(path)
    character = bridge.character_arrays(armature, meshes)
    rotations = correctives.random_rotations(character["parents"], args.poses,
                                             max_degrees=args.max_degrees, seed=seed)
    posed, read = bridge.sample_posed_vertices(armature, meshes, rotations, character["names"],
                                               read_back=True)
    return dict(vertices=character["vertices"], faces=character["faces"], joints=character["joints"],
                parents=character["parents"], weights=character["weights"], rotations=read, posed=posed,
                names=list(character["names"]))


def _rigged_character(path: Path):
    """(armature, meshes) of a rigged file, imported into an empty scene."""
    _empty_scene()
    from .bridge.files import import_file
    from .bridge.selection import armatures_of, rig_meshes

    armatures = armatures_of(import_file(path))
    if len(armatures) != 1:
        raise BonesmithError(f"{path.name} must hold one armature that deforms its meshes "
                             f"(found {len(armatures)})")
    armature = armatures.pop()
    return armature, rig_meshes(armature)


def _print_errors(label: str, data: dict, model) -> None:
    """Mean and max vertex error of plain LBS and of the model on the training poses."""
    from .core import correctives

    errors = correctives.vertex_errors(model, data["vertices"], data["joints"], data["weights"],
                                       data["rotations"], data["posed"])
    for what, error in zip(("plain LBS", "learned"), errors):
        print(f"  {label}{what:10s}  mean {error.mean():.4f} %  max {error.max():.3f} % of the size "
              "(training poses)")


def cmd_correctives(args) -> int:
    from .core import correctives

    check_writable(args.out)
    if args.apply is not None:
        return _apply_correctives(args)
    start = time.perf_counter()
    bodies = []
    for i, path in enumerate(args.inputs):
        data = _correctives_data(path, args, args.seed + i)
        if bodies and data["names"] is not None and bodies[0]["names"] is not None:
            data = correctives.in_bone_order(data, bodies[0]["names"], path.name)
        bodies.append(data)
    first = bodies[0]
    max_keys = args.max_keys or correctives.key_budget(len(first["vertices"]))
    poses = sum(len(b["rotations"]) for b in bodies)
    what = f"{len(bodies)} bodies, " if len(bodies) > 1 else ""
    print(f"correctives: {what}{len(first['vertices'])} vertices, {len(first['joints'])} joints, "
          f"{poses} poses, at most {max_keys} shape keys", flush=True)
    if len(bodies) == 1:
        model = correctives.fit_correctives(first["vertices"], first["faces"], first["joints"],
                                            first["parents"], first["weights"], first["rotations"],
                                            first["posed"], max_keys=max_keys, names=first["names"])
    else:
        model = correctives.fit_correctives(
            [b["vertices"] for b in bodies], first["faces"], [b["joints"] for b in bodies],
            first["parents"], first["weights"], [b["rotations"] for b in bodies],
            [b["posed"] for b in bodies], max_keys=max_keys, names=first["names"])
    model.save(args.out)
    for path, data in zip(args.inputs, bodies):
        label = f"{path.name}: " if len(bodies) > 1 else ""
        _print_errors(label, data, model)
    if "joints_leave_one_out_pct" in model.info:
        print(f"  joints of a left-out body: {model.info['joints_leave_one_out_pct']:.4f} % of its size "
              "on average (leave-one-out)")
    if model.regressor is not None and model.regressor.source:
        print(f"  joints of a new body: {model.regressor.source} (on these bodies "
              f"{model.info['joints_shipped_error_pct']:.4f} % of their size)")
    print(f"  seconds     {time.perf_counter() - start:.1f}")
    print(f"  wrote       {args.out}")
    return 0


def _apply_correctives(args) -> int:
    """A family model onto a new body: a record gives the body's model; a rigged file gets
    its armature fitted, refined weights and driven shape keys."""
    from .core import correctives, records

    if len(args.inputs) != 1:
        raise BonesmithError("--apply takes one body: correctives --apply MODEL.npz BODY --out OUT")
    body_path, out = args.inputs[0], args.out
    model = correctives.CorrectiveModel.load(args.apply)
    rigged = body_path.suffix.lower() != ".npz"
    formats = (".npz", ".blend", ".fbx", ".glb") if rigged else (".npz",)
    if out.suffix.lower() not in formats:
        raise BonesmithError(f"Cannot write {out.name} from {body_path.name}: use "
                             f"{', '.join(formats)}" + ("" if rigged else " (a record body gives "
                                                        "its model; a rigged file can be written rigged)"))
    if not model.is_family and not args.body_joints:
        raise BonesmithError(f"{args.apply.name} was learned from one character, so it cannot place "
                             "a new body's joints: learn it from several bodies, or pass --body-joints")
    if not rigged:
        data = records.read(body_path, records.MESH, optional=("joints",), needed_for="a body mesh")
        if args.body_joints and "joints" not in data:
            raise BonesmithError(f"{body_path.name} has no joints: leave out --body-joints")
        body = model.for_body(data["verts"], data["joints"] if args.body_joints else None)
        body.save(out)
        _print_applied(model, body, data.get("joints"), out)
        return 0
    return _apply_to_rigged(args, model, body_path, out)


def _apply_to_rigged(args, model, body_path, out) -> int:
    from .bridge import armature as bridge_armature
    from .bridge import correctives as bridge
    from .bridge.weights import combine_rest, deform_bones

    if model.names is None:
        raise BonesmithError(f"{args.apply.name} holds no bone names (learned from records without "
                             "joint_names): apply it to a record body")
    armature, meshes = _rigged_character(body_path)
    names = model.names
    missing = [n for n in names if n not in armature.data.bones]
    if missing:
        raise BonesmithError(f"'{armature.name}' lacks bones of the family ({', '.join(missing[:3])}): "
                             "it needs the family's skeleton")
    heads, _, _, bones = deform_bones(armature)
    own = heads[[bones.index(n) for n in names]]
    mesh_set = combine_rest(meshes)
    body = model.for_body(mesh_set.vertices, own if args.body_joints else None)
    old_heads, old_tails = bridge_armature.bone_ends(armature, names)
    parents = bridge.bone_parents(armature, names)
    bridge.fit_armature(armature, body.joints, bridge.tails_from_heads(body.joints, old_heads,
                                                                          old_tails, parents), names)
    bridge.write_refined_weights(meshes, mesh_set, body.weights, names)
    keys = body.live_keys(bridge.bone_rest_rotations(armature, names), names=names)
    bridge.write_live_keys(meshes, mesh_set, armature, keys, names)
    if out.suffix.lower() == ".npz":
        body.save(out)
    else:
        _write(out, None, armature, meshes)
    _print_applied(model, body, own, out, keys=len(keys))
    return 0


def _print_applied(model, body, own_joints, out, keys=None) -> None:
    import numpy as np

    from .core.mesh import bbox_diagonal

    identities = int(model.info.get("identities", 1))
    print(f"correctives --apply: a model of {identities} bodies on {len(body.rest_verts)} vertices, "
          f"{len(body.joints)} joints, correctives scaled x{body.info.get('body_scale', 1.0):.3f}")
    if own_joints is not None:
        moved = np.linalg.norm(body.joints - own_joints, axis=1) / bbox_diagonal(body.rest_verts, 1.0) * 100
        print(f"  joints: {moved.mean():.4f} % of the size from the body's own on average "
              f"(max {moved.max():.3f} %)")
    if keys is not None:
        print(f"  {keys} driven shape keys")
    print(f"  wrote       {out}")
