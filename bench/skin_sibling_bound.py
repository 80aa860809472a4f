# SPDX-License-Identifier: GPL-3.0-or-later
"""What one character can teach another body of its family, at best.

    .venv/bin/python bench/skin_sibling_bound.py [--epochs 400] [--lr 1e-3] [--jobs 2]

The mixed-folder benchmark (bench/skin_adapt.py --mixed) leaves some families above 0.8x
the default model's L1: those whose other characters are other meshes, weighted by their
artists in their own way (docs/auto_skin.md#house-style). This script asks whether any
model selection could do better there: for pairs (A in the folder, B another body of A's
family), the default model is fine-tuned on A alone (Train Skin's settings, a constant
learning rate, no early stop) and B's own L1 is read after every epoch. The best epoch for
B, chosen by looking at B, is a bound no gate or epoch count that sees only the folder can
beat. L1 is the training's candidate-space L1 (models/skin_default.md); the full pipeline's
(bench/skin.py) follows it to within 0.07 on these pairs.
Output: bench/results/skin_sibling_bound.md.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from common import DATA_DEFAULT, RESULTS, markdown_table  # noqa: E402
from splits import family_of  # noqa: E402
from train_skin_default import CachedFeatures  # noqa: E402

# (the folder's character, another body of its family): every family the mixed folder
# left above 0.8x at af89485, both ways where both are other meshes
PAIRS = (
    ("quatU_animal_fox", "quatU_animal_husky"), ("quatU_animal_wolf", "quatU_animal_husky"),
    ("quatU_animal_husky", "quatU_animal_fox"), ("quatU_animal_shibainu", "quatU_animal_wolf"),
    ("quatU_toon_hazmat", "quatU_toon_soldier"), ("quatU_toon_hazmat", "quatU_toon_enemy"),
    ("quatU_toon_soldier", "quatU_toon_enemy"),
    ("zad_animal_boar", "zad_pig"), ("zad_pig", "zad_animal_boar"), ("zad_animal_piglet", "zad_animal_boar"),
    ("zad_camel", "zad_camel_1"), ("zad_camel_1", "zad_camel"),
    ("zad_fish_generic", "zad_fish_single"), ("zad_fish_single", "zad_fish_generic"),
    ("zad_elephant_african_bush", "zad_elephant_asian_male"),
    ("zad_elephant_asian_male", "zad_maur_elephant_hero"),
    ("zad_zebu", "zad_cattle_male_a"), ("zad_cattle_male_a", "zad_zebu"),
)


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA_DEFAULT)
    ap.add_argument("--epochs", type=int, default=400)
    ap.add_argument("--lr", type=float, default=1e-3, help="Train Skin's default")
    ap.add_argument("--jobs", type=int, default=2)
    return ap.parse_args(argv)


def curve(job):
    """B's candidate-space L1 after each epoch of fine-tuning on A (in a worker)."""
    a, b, args, workdir = job
    from bonesmith.core.skinning.train import load_record, train_skin_model
    chars = []
    for name, role in ((a, "folder"), (b, "other")):
        ch = load_record(args.data / f"{name}.npz")
        ch["family"] = role
        chars.append(ch)
    report = train_skin_model(chars, Path(workdir) / f"{a}__{b}.npz", init="default", selection="holdout",
                              val_families=["other"], epochs=args.epochs, lr=args.lr, lr_decay=1.0,
                              patience=args.epochs + 1, carry_weights=False,
                              feature_fn=CachedFeatures(RESULTS / "skin_features"))
    return a, b, report["start_val_l1"], [h["val_l1"] for h in report["history"]]


def main(argv=None) -> int:
    args = parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="sibling_bound_") as workdir, ProcessPoolExecutor(args.jobs) as pool:
        for a, b, start, l1 in pool.map(curve, [(a, b, args, workdir) for a, b in PAIRS]):
            best = int(np.argmin(l1))
            rows.append([family_of(a), a, b, f"{start:.3f}", f"{l1[best]:.3f} (epoch {best + 1})",
                         f"**{l1[best] / start:.3f}**", f"{l1[-1] / start:.3f}"])
            print(" | ".join(rows[-1]), flush=True)
    table = markdown_table(["family", "in the folder", "tested", "default L1", "best L1 (epoch)",
                            "best / default", f"after {args.epochs} epochs / default"], rows)
    out = RESULTS / "skin_sibling_bound.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(f"# What one character teaches another body of its family, at best\n\n"
                   f"lr {args.lr:g}, {args.epochs} epochs, fine-tuned on the folder's character alone\n\n"
                   + table + "\n")
    print(f"\n{table}\n\nwrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
