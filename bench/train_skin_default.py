# SPDX-License-Identifier: GPL-3.0-or-later
"""Train (and validate) Auto Skin's default model on the CC0 records of ../shared/data.

    .venv/bin/python bench/train_skin_default.py --out models/skin_default.npz

Training data: the CC0 records of bench/splits.TRAIN_SOURCES (MANIFEST.tsv licence column:
quat_, quatU_, mpfb_, kenney_, ojg_), minus the validation families of bench/splits.py (the
same families bench/skin.py reports on). Validation: those families (early stopping on the
CC0 ones of the training sources, or of --early-stop sources); the rest of the validation
split (zad_ CC-BY-SA-3.0, gdq_ CC-BY-4.0, m2m_ whose weights may be Blender's) is only
evaluated, as sources the model never saw.
Features are cached in bench/results/skin_features/ (delete it after changing
core/skinning/features.py). Writes the model, MODEL.json (the training report) and
bench/results/skin_train_<stem>.md (per-source table, training curve).
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import json
import pickle
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from common import DATA_DEFAULT, RESULTS, SOURCES, markdown_table, source_of, subdivided  # noqa: E402

from bonesmith.core.skinning import train as skin_train  # noqa: E402
from bonesmith.cli.text_progress import text_progress  # noqa: E402


def manifest(data_dir: Path) -> dict:
    with open(data_dir / "MANIFEST.tsv", newline="") as fh:
        return {row["name"]: row for row in csv.DictReader(fh, delimiter="\t")}


def families_and_split(names):
    """(family per name, set of validation families) from bench/splits.py."""
    import splits
    fam = {n: splits.family_of(n) for n in names}
    val = {fam[n] for n in names if splits.split_of(n) == "val"}
    return fam, val


class CachedFeatures:
    """vertex_features with an on-disk cache keyed by the input arrays and features.py."""

    drop: tuple = ()      # per-candidate feature offsets hidden from the network (ablations)

    def __init__(self, directory: Path):
        from bonesmith.core.skinning import features, geodesic, heat, prep
        self.dir = directory
        self.dir.mkdir(parents=True, exist_ok=True)
        code = b"".join(Path(m.__file__).read_bytes() for m in (features, geodesic, heat, prep))
        self.code = hashlib.sha256(code).hexdigest()[:12]
        self.fn = features.vertex_features
        self.flipped = set()      # ids of the vertex arrays of half-turned copies (flipped_copy)

    def __call__(self, vertices, faces, joints, parents, tails):
        fs = self._features(vertices, faces, joints, parents, tails)
        if id(vertices) in self.flipped:
            fs = half_turned(fs)
        if self.drop:                 # an ablation: the network does not see these columns
            from bonesmith.core.skinning.training_data import layout_of
            layout = layout_of(fs)
            fs.layout = {"shared_columns": layout["shared_columns"],
                         "candidate_columns": [[c for i, c in enumerate(cols) if i not in self.drop]
                                               for cols in layout["candidate_columns"]]}
        return fs

    def _features(self, vertices, faces, joints, parents, tails):
        h = hashlib.sha256(self.code.encode())
        for a in (vertices, faces, joints, parents, tails):
            a = np.ascontiguousarray(a if a is not None else np.zeros(0))
            h.update(str(a.dtype).encode() + str(a.shape).encode() + a.tobytes())
        path = self.dir / f"{h.hexdigest()[:24]}.pkl"
        if path.is_file():
            with open(path, "rb") as fh:
                return pickle.load(fh)
        fs = self.fn(vertices, faces, joints, parents, tails)
        with open(path, "wb") as fh:
            pickle.dump(fs, fh, protocol=pickle.HIGHEST_PROTOCOL)
        return fs


def subdivided_copy(ch: dict) -> dict:
    """The character midpoint-subdivided once, its weights interpolated onto the midpoints
    (same family: it stays on the training side of every split)."""
    V, F, W = subdivided(ch["vertices"], ch["faces"], ch["weights"], 1)
    return {**ch, "name": ch["name"] + "_subdivided", "vertices": V, "faces": F, "weights": W,
            "unweighted": W.sum(axis=1) <= 1e-12}


def half_turned(fs):
    """The features of the character turned half about the vertical (facing +Y instead of
    -Y) after `prep.upright`: every vector feature's x and y negated (the scalars do not
    change). What the network sees of a character whose armature cannot say its front."""
    from dataclasses import replace
    from bonesmith.core.skinning import features as F
    x = fs.x.copy()
    cols = [0, 1, 3, 4] + [6 + 3 * k + a for k in range(5) for a in (0, 1)]
    cols += [F.VERTEX_DIM + F.BONE_DIM * c + a for c in range(F.K) for a in (0, 1, 3, 4)]
    x[:, cols] *= -1
    return replace(fs, x=x)


def flipped_copy(ch: dict, feats) -> dict:
    """The character as a half-turned copy (same family, features via `half_turned`)."""
    V = np.array(ch["vertices"], copy=True)
    feats.flipped.add(id(V))
    return {**ch, "name": ch["name"] + "_flipped", "vertices": V}


def balanced(chars, min_source: int = 5) -> list:
    """Each source's characters repeated round(n_largest / n_source) times, so that every
    source weighs about the same in an epoch; a source with fewer than `min_source`
    characters is not repeated (one character seen fifty times an epoch is memorised)."""
    by = {}
    for ch in chars:
        by.setdefault(source_of(ch["name"]), []).append(ch)
    most = max(len(v) for v in by.values())
    out = []
    for src, group in by.items():
        reps = max(1, round(most / len(group))) if len(group) >= min_source else 1
        out += [ch if k == 0 else {**ch, "name": f"{ch['name']}_repeat{k}"} for k in range(reps) for ch in group]
    return out


def per_source_table(rows) -> str:
    by = {}
    for r in rows:
        by.setdefault(source_of(r["name"]), []).append(r)
    out = []
    for src in list(SOURCES) + ["other"]:
        rs = by.get(src)
        if not rs:
            continue
        m = lambda k: float(np.nanmean([r[k] for r in rs]))  # noqa: E731
        out.append([src, len(rs), f"{m('coverage'):.3f}", f"{m('prior_l1'):.3f}", f"{m('l1'):.3f}",
                    f"{m('prior_ce'):.3f}", f"{m('ce'):.3f}"])
    return markdown_table(["source", "characters", "coverage", "L1 heat prior", "L1 model",
                           "CE heat prior", "CE model"], out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA_DEFAULT)
    ap.add_argument("--out", type=Path, default=REPO / "models" / "skin_default.npz")
    ap.add_argument("--epochs", type=int, default=300)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--batch-characters", type=int, default=2)
    ap.add_argument("--patience", type=int, default=30)
    ap.add_argument("--hidden", type=int, default=32)
    ap.add_argument("--embed", type=int, default=16)
    ap.add_argument("--hidden2", type=int, default=32)
    ap.add_argument("--weight-decay", type=float, default=0.0)
    ap.add_argument("--lr-decay", type=float, default=0.5)
    ap.add_argument("--l1-weight", type=float, default=30.0)
    ap.add_argument("--decay-patience", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--smoothing", default="0", help="smoothing iterations to try, e.g. 0,1,2,4")
    ap.add_argument("--exclude-train", default="", help="comma-separated prefixes left out of training and "
                    "early stopping (their validation families are still evaluated)")
    ap.add_argument("--drop-columns", default="", help="ablation: per-candidate feature offsets (e.g. "
                    "11,12,13,14,15) the network does not see")
    ap.add_argument("--augment-subdivided", type=int, default=0, metavar="MAX_VERTICES",
                    help="add a midpoint-subdivided copy (weights interpolated) of every training "
                         "character with at most this many vertices, so the network sees the same "
                         "body at two resolutions (0: none)")
    ap.add_argument("--augment-flip", action="store_true",
                    help="add a half-turned copy (facing +Y) of every training character, so the "
                         "network does not depend on which way the character faces")
    ap.add_argument("--early-stop", default="", help="comma-separated prefixes whose CC0 validation "
                    "families choose the epoch (default: every training source); the other validation "
                    "families are only evaluated")
    ap.add_argument("--balance-sources", action="store_true",
                    help="repeat each training source's characters so that every source with at least "
                         "5 training characters weighs about the same in an epoch")
    ap.add_argument("--init", default=None, help="start model: a path, or 'default' (the shipped "
                    "model; default: a fresh network, which returns the heat prior)")
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--device", default=None)
    args = ap.parse_args(argv)

    rows = manifest(args.data)
    names = sorted(rows)
    fam, val_fams = families_and_split(names)
    import splits
    cc0 = [n for n in names if rows[n]["licence"].startswith("CC0") and n.startswith(splits.TRAIN_SOURCES)]
    excluded = tuple(p for p in args.exclude_train.split(",") if p) or ("\0",)
    stop = tuple(p for p in args.early_stop.split(",") if p) or splits.TRAIN_SOURCES
    train_names = [n for n in cc0 if fam[n] not in val_fams and not n.startswith(excluded)]
    val_names = [n for n in cc0 if fam[n] in val_fams and not n.startswith(excluded) and n.startswith(stop)]
    extra_names = [n for n in names if n not in val_names and fam[n] in val_fams]
    print(f"train {len(train_names)} ({len(set(fam[n] for n in train_names))} families), "
          f"val {len(val_names)} CC0 + {len(extra_names)} evaluated only", flush=True)

    def load(ns):
        out = []
        for n in ns:
            ch = skin_train.load_record(args.data / f"{n}.npz")
            ch["family"] = fam[n]
            out.append(ch)
        return out

    t0 = time.perf_counter()
    train_chars, val_chars, extra = load(train_names), load(val_names), load(extra_names)
    if args.balance_sources:
        train_chars = balanced(train_chars)
        print(f"balanced: {len(train_chars)} training characters with repeats", flush=True)
    if args.augment_subdivided:
        copies = [subdivided_copy(ch) for ch in train_chars if len(ch["vertices"]) <= args.augment_subdivided]
        print(f"augmented: {len(copies)} subdivided copies", flush=True)
        train_chars += copies
    feats = CachedFeatures(RESULTS / "skin_features")
    feats.drop = tuple(int(c) for c in args.drop_columns.split(",") if c)
    if args.augment_flip:
        train_chars = [c for ch in train_chars for c in (ch, flipped_copy(ch, feats))]
        print(f"augmented: {len(train_chars) // 2} half-turned copies", flush=True)
    report = skin_train.train_skin_model(
        train_chars + val_chars, args.out, init=args.init, epochs=args.epochs, lr=args.lr,
        batch_characters=args.batch_characters, seed=args.seed, resume=args.resume,
        patience=args.patience, val_families=sorted({fam[n] for n in val_names}),
        validation=extra, hidden=args.hidden, embed=args.embed, hidden2=args.hidden2,
        weight_decay=args.weight_decay, lr_decay=args.lr_decay, decay_patience=args.decay_patience,
        l1_weight=args.l1_weight, carry_weights=False,   # a shipped model carries no characters
        device=args.device, feature_fn=feats,
        checkpoint_path=RESULTS / f"skin_train_{args.out.stem}.ckpt",
        smoothing=[int(s) for s in args.smoothing.split(",")],
        progress=text_progress(sys.stdout),
        info={"training_data": "CC0 only: " + ", ".join(sorted({n.split('_')[0] + '_' for n in train_names})),
              "features_code": feats.code,
              "command": "python bench/train_skin_default.py " + " ".join(sys.argv[1:] if argv is None else argv)})
    rows_all = report["val_characters"] + report["extra_characters"]
    table = per_source_table(rows_all)
    curve = markdown_table(["epoch", "train loss", "val CE", "val L1"],
                           [[h["epoch"], f"{h['train_loss']:.4f}", f"{h['val_loss']:.4f}", f"{h['val_l1']:.4f}"]
                            for h in report["history"] if h["epoch"] % 10 == 0 or h["epoch"] == 1
                            or h["epoch"] == report["best_epoch"]])
    md = (f"# Auto Skin training: {args.out.name}\n\n"
          f"Train {len(train_names)} CC0 records, validation {len(val_names)} CC0 (early stopping) + "
          f"{len(extra_names)} evaluated only; "
          f"best epoch {report['best_epoch']} of {report['epochs_run']}, {report['n_parameters']} parameters, "
          f"{report['seconds']:.0f} s on {report['device']}.\n"
          f"Smoothing (val L1 by iterations): {report['smoothing_val_l1']}\n\n"
          "Candidate-space L1 on welded vertices, before pruning (per-vertex sum |w - w*|, "
          "mean per character, mean over characters):\n\n"
          f"{table}\n\n## Curve\n\n{curve}\n")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"skin_train_{args.out.stem}.md").write_text(md)
    print(md)
    print(f"total {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
