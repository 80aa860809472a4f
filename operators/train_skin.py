# SPDX-License-Identifier: GPL-3.0-or-later
"""Train Skin: train Auto Skin's network on the selected rigged meshes.

The selected meshes (each weighted to an armature; every armature is one character) are
written as .npz records to a temporary folder, and `python -m bonesmith train-skin` runs
on them in a separate process: Blender stays responsive, the status bar shows the
epochs, Esc stops the process. Training fine-tunes the active skin model (the shipped
default unless a trained one is active). The model is trained into the temporary folder
and moved into the extension's user folder only when training succeeded and improved the
start model on validation; then it becomes the active one in the preferences (Auto Skin
and Auto Rig use it). A cancelled or failed run, or one that did not improve, leaves the
models and the preference as they were. The sidebar shows the validation L1 before and
after (the scene's `bonesmith.train_result`).

Training needs PyTorch in Blender's Python; without it the operator says how to get it.
"""
from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

import bpy
from bpy.props import IntProperty

from .. import preferences
from ..bridge import selection
from ..bridge import training_data
from ..core import records
from ..core.errors import BonesmithError
from ..core.skinning.train import summary
from . import options
from .base import BonesmithOperator, run_in_background, to_object_mode
from .job import ProcessJob
from .model_files import safe_name, save_atomic

TORCH_REQUIREMENT = "torch==2.13.0"
PACKAGE_DIR = Path(__file__).absolute().parents[1]
_EPOCH = re.compile(r"epoch\s+(\d+)\s*/\s*(\d+)")
_FEATURES = re.compile(r"features\s+(\d+)\s*/\s*(\d+)")
FEATURES_SHARE = 0.15  # of the progress bar, for the feature computation before the epochs


def result_text(report: dict) -> str:
    """The sidebar's line about the last training: validation L1 before and after."""
    start, best = report.get("start_val_l1"), report.get("best_val_l1")
    if start is None or best is None:
        return ""
    if report["kept_start"]:
        return f"Validation L1 {start:.3f}: no better model, kept the start"
    return f"Validation L1 {start:.3f} -> {best:.3f} ({100 * (best / start - 1):+.0f} %)"


def rigs_text(report: dict) -> str:
    """The sidebar's lines about the rig templates of the last training ('|'-separated,
    each "+ NAME: start -> trained" when the trained model weights that rig, "- ..." when
    that rig keeps the start model), and how many characters the model keeps for their
    variants (docs/auto_skin.md#carried-weights)."""
    lines = []
    for t in report.get("templates") or []:
        mark = "+" if t["use"] else "-"
        lines.append(f"{mark} {t['label']}: {t['start_l1']:.3f} -> {t['trained_l1']:.3f}")
    if report.get("carried_characters"):
        n = report["carried_characters"]
        lines.append(f"= {n} character{'s' * (n != 1)} kept: their weights go to variants of their bodies")
    return "|".join(lines)


def torch_missing() -> bool:
    """Whether PyTorch is missing from this Python (checked without importing it)."""
    try:
        return importlib.util.find_spec("torch") is None
    except (ImportError, ValueError):
        return True


def torch_message() -> str:
    return ("Train Skin needs PyTorch, which is not installed in Blender's Python. Install it "
            f"with:  \"{sys.executable}\" -m pip install {TORCH_REQUIREMENT}  and restart Blender, "
            "or train from a terminal with  python -m bonesmith train-skin FILES --out MODEL.npz  "
            f"and put the model into {_models_dir_text()}. Auto Skin itself does not need PyTorch.")


def _models_dir_text() -> str:
    try:
        return str(preferences.user_models_dir())
    except (OSError, ValueError):
        return "the extension's user folder (models/)"


def parse_progress(line: str):
    """(fraction, message) from a line of `train-skin`'s output, or None."""
    match = _EPOCH.search(line)
    if match:
        epoch, epochs = int(match.group(1)), max(1, int(match.group(2)))
        return FEATURES_SHARE + (1 - FEATURES_SHARE) * epoch / epochs, f"epoch {epoch}/{epochs}"
    match = _FEATURES.search(line)
    if match:
        done, total = int(match.group(1)), max(1, int(match.group(2)))
        return FEATURES_SHARE * done / total, f"features {done}/{total}"
    return None


def selected_characters(context) -> list:
    """One training dict per armature that the selected meshes are weighted to."""
    meshes = [obj for obj in context.selected_objects if obj.type == 'MESH']
    if not meshes:
        raise BonesmithError("Train Skin needs rigged meshes: select meshes weighted to an armature")
    by_armature = {}
    for obj in meshes:
        armature = selection.find_armature(obj)
        if armature is not None:
            by_armature.setdefault(armature.name, (armature, []))[1].append(obj)
    if not by_armature:
        raise BonesmithError("None of the selected meshes is rigged: Train Skin learns from meshes "
                             "weighted to an armature (Armature modifier + vertex groups)")
    characters = []
    for name, (armature, objs) in sorted(by_armature.items()):
        character = training_data.character_from_objects(armature, objs, family=name)
        if character["unweighted"].all():
            raise BonesmithError(f"The meshes of '{name}' have no weights for its deforming bones")
        characters.append(character)
    return characters


def subprocess_env(scratch: Path) -> dict:
    """Environment in which `python -m bonesmith` imports this very package and finds the
    same modules (bundled wheels, a torch installed into Blender's Python) as Blender.
    `scratch`: a temporary folder for a link when the package folder has another name."""
    if PACKAGE_DIR.name == "bonesmith":
        root = str(PACKAGE_DIR.parent)
    else:  # a checkout under another folder name: expose it as `bonesmith`
        root = str(scratch / "package")
        os.makedirs(root, exist_ok=True)
        os.symlink(PACKAGE_DIR, os.path.join(root, "bonesmith"), target_is_directory=True)
    paths = [root] + [p for p in sys.path if p and os.path.isdir(p)]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    env["PYTHONUNBUFFERED"] = "1"
    return env


class BONESMITH_OT_train_skin(BonesmithOperator, bpy.types.Operator):
    """Train Auto Skin's model on the selected rigged meshes, in the background (needs
    PyTorch); the trained model becomes the active skin model"""
    bl_idname = "bonesmith.train_skin"
    bl_label = "Train Skin"

    epochs: options.EPOCHS
    model_name: options.TRAINED_MODEL_NAME
    seed: IntProperty(name="Seed", description="Random seed (same seed, same model)", default=0, min=0)

    _tmp = None
    _target = None

    def read(self, context):
        """The training dicts of the selected characters."""
        if torch_missing():
            raise BonesmithError(torch_message())
        to_object_mode(context)
        return selected_characters(context)

    def in_background(self, context, characters):
        return run_in_background(context)   # whatever the size: training takes minutes

    def job(self, characters) -> ProcessJob:
        return self._prepare(characters)

    def compute_now(self, context, characters):
        """The training process, run to its end (execute, or no window to stay responsive in)."""
        job = self.job(characters).start()
        job.wait()
        if job.error is not None:
            raise job.error
        return job.result

    def _prepare(self, characters) -> ProcessJob:
        """The characters as records in a temporary folder, and the training process."""
        self._tmp = Path(tempfile.mkdtemp(prefix="bonesmith_train_"))
        paths = [records.write(self._tmp / "records" / f"{k:03d}_{safe_name(character['family'])}.npz",
                               character)
                 for k, character in enumerate(characters)]
        self._target = preferences.user_models_dir() / f"{safe_name(self.model_name)}{preferences.MODEL_SUFFIX}"
        out = self._tmp / self._target.name
        start, _ = preferences.active_skin_model()
        command = [sys.executable, "-m", "bonesmith", "train-skin", *paths, "--out", out,
                   "--epochs", self.epochs, "--seed", self.seed, "--init", start or "default"]
        return ProcessJob(command, env=subprocess_env(self._tmp), cwd=str(self._tmp), parse=parse_progress)

    def apply(self, context, characters, lines):
        """The trained model into the user folder (atomically: the old model stays until
        the new one is complete) and made the active skin model, when it improved on
        validation or keeps the characters for their variants (carried weights, even with
        the start network); the verdict goes to the sidebar either way."""
        trained = self._tmp / self._target.name
        report_path = Path(str(trained) + ".json")
        if not trained.is_file() or not report_path.is_file():
            raise BonesmithError(f"Training ended without writing a model ({lines[-1] if lines else 'no output'})")
        report = json.loads(report_path.read_text())
        settings = getattr(context.scene, "bonesmith", None)
        if settings is not None:
            settings.train_result = result_text(report)
            settings.train_rigs = rigs_text(report)
        if report["kept_start"] and not report.get("carried_characters"):
            self._cleanup()
            self.report({'INFO'}, f"Train Skin: {summary(report)}; the active skin model is unchanged")
            return {'FINISHED'}
        save_atomic(lambda partial: shutil.copyfile(trained, partial), self._target)
        shutil.copyfile(report_path, Path(str(self._target) + ".json"))
        self._cleanup()
        prefs = preferences.get(context)
        if prefs is not None:
            prefs.active_skin_model = self._target.name
        self.report({'INFO'}, f"Train Skin: wrote {self._target.name} (now the active skin model); "
                              f"{summary(report)}")
        return {'FINISHED'}

    def on_cancel(self, context):
        if self._job is not None:
            self._job.wait(10)  # let the terminated process exit before its folder goes
        self._cleanup()

    def _cleanup(self):
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None
