# SPDX-License-Identifier: GPL-3.0-or-later
"""`python -m bonesmith train-skin INPUTS --out MODEL`: train Auto Skin's network on rigged
characters (needs torch)."""
from __future__ import annotations

import os
import sys

from ..core.errors import BonesmithError
from ..core.safe_write import check_writable
from . import common


TRAIN_SKIN_FORMATS = (".npz", ".blend", ".fbx", ".glb", ".gltf")


HELP = "train an Auto Skin model on rigged characters (needs torch)"
DESCRIPTION = """\
Train Auto Skin's network on rigged characters (artist skin weights) and write the model
(.npz; Auto Skin runs it without torch). INPUTS: Bonesmith .npz records,
.blend/.fbx/.glb/.gltf files with armatures and weighted meshes, or folders of them.
Validation holds out whole character families (a record's 'family' array, a Blender file's
name). It fine-tunes the shipped model by default and never writes a model worse than the
one it started from on validation. Needs PyTorch (pip install torch==2.13.0). Data-parallel
on N processes (CPU cores or GPUs): torchrun --nproc_per_node N -m bonesmith train-skin ..."""


def add_parser(commands) -> None:
    train = commands.add_parser("train-skin", help=HELP, description=DESCRIPTION)
    common.inputs_argument(train, "INPUTS", "rigged characters: .npz .blend .fbx .glb .gltf files or folders")
    common.model_out_argument(train, "MODEL", "the model file to write (.npz)")
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
    train.set_defaults(run=run)


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


def run(args) -> int:
    from ..core.skinning import train as skin_train
    from ..core.skinning.distributed import launched_by_torchrun
    from .text_progress import text_progress

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
    from ..core.skinning import train as skin_train

    characters, blender_ready = [], False
    for path in _train_skin_files(inputs):
        if path.suffix.lower() == ".npz":
            characters.append(skin_train.load_record(path))
        else:
            if not blender_ready:
                common.empty_scene()
                blender_ready = True
            from ..bridge.training_data import load_rigged_file
            characters += load_rigged_file(path)
    return characters


def training_report(report: dict) -> str:
    """The end-of-training table: per validation character the heat prior's, the start
    model's and the trained model's L1, then the verdict."""
    from ..core.skinning.train import summary, templates_text
    how = {"folds": f"cross-validation, {report['folds']} folds (each character scored by a model that "
                    "trained on the other characters of its rig template; one alone on its rig "
                    "on regions of its body held out in turn)",
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
    rigs = templates_text(report)
    if rigs:
        lines.append("  rig templates (the trained model weights only the rigs marked 'uses'):")
        lines += [f"    {line}" for line in rigs]
    return "\n".join(lines)
