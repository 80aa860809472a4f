# SPDX-License-Identifier: GPL-3.0-or-later
"""Same results before and after a refactor: skeletons and skin weights of every character.

    python bench/identity.py --save DIR [--only quat_,mpfb_] [--limit N] [--jobs 2]
    python bench/identity.py --compare DIR_BEFORE DIR_AFTER [--tolerance 1e-6] [--partial]

--save writes DIR/<character>.npz (skipping characters already there) with the Auto Skeleton of the rest mesh (joints, tails,
parents) and the Auto Skin weights (shipped model) for the character's own armature, or
the error message when the engine refuses the mesh. --compare prints, per array, how many
characters differ and by how much, and exits 1 if any differs by more than the tolerance
(or has another shape, or fails on one side only).
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import DATA_DEFAULT, list_records, load_record  # noqa: E402



def compute(path: Path) -> dict:
    from bonesmith.core.skeleton import extract_skeleton
    from bonesmith.core.skinning import predict_weights

    rec = load_record(path)
    out = {}
    try:
        sk = extract_skeleton(rec["verts"], rec["faces"])
        out.update(skeleton_joints=sk.joints, skeleton_tails=sk.tails,
                   skeleton_parents=np.asarray(sk.parents, dtype=np.float64))
    except Exception as ex:  # noqa: BLE001 - a refusal is a result too
        out["skeleton_error"] = np.array(f"{type(ex).__name__}: {ex}")
    try:
        out["weights"] = predict_weights(rec["verts"], rec["faces"], rec["joints"], rec["parents"],
                                         rec["tails"])
    except Exception as ex:  # noqa: BLE001
        out["weights_error"] = np.array(f"{type(ex).__name__}: {ex}")
    return out


def _save_one(job):
    path, out_dir = job
    start = time.perf_counter()
    np.savez_compressed(out_dir / f"{path.stem}.npz", **compute(path))
    return path.stem, time.perf_counter() - start


def save(args) -> int:
    out_dir = Path(args.save)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = list_records(args.data, args.only, args.limit)
    jobs = [(p, out_dir) for p in paths if not (out_dir / f"{p.stem}.npz").is_file()]  # resumes
    with mp.get_context("spawn").Pool(args.jobs, maxtasksperchild=8) as pool:
        for i, (name, seconds) in enumerate(pool.imap_unordered(_save_one, jobs), 1):
            print(f"[{i}/{len(jobs)}] {name} {seconds:.1f} s", flush=True)
    return 0


def _difference(a: np.ndarray, b: np.ndarray) -> float:
    if a.dtype.kind in "US" or b.dtype.kind in "US":
        return 0.0 if str(a) == str(b) else np.inf
    if a.shape != b.shape:
        return np.inf
    return float(np.abs(a - b).max()) if a.size else 0.0


def compare(args) -> int:
    before, after = Path(args.compare[0]), Path(args.compare[1])
    names = sorted(p.stem for p in before.glob("*.npz"))
    if args.partial:  # only the characters AFTER has (a quick check on a subset)
        names = [n for n in names if (after / f"{n}.npz").is_file()]
    missing = [n for n in names if not (after / f"{n}.npz").is_file()]
    worst: dict[str, list[tuple[float, str]]] = {}
    for name in names:
        if name in missing:
            continue
        with np.load(before / f"{name}.npz") as a, np.load(after / f"{name}.npz") as b:
            for key in sorted(set(a.files) | set(b.files)):
                d = _difference(a[key], b[key]) if key in a.files and key in b.files else np.inf
                worst.setdefault(key, []).append((d, name))
    print(f"{len(names)} characters in {before}, {len(missing)} missing in {after}")
    print(f"| array | characters | differing > {args.tolerance:g} | largest difference | where |")
    print("|---|---:|---:|---:|---|")
    failed = bool(missing)
    for key, rows in sorted(worst.items()):
        bad = [r for r in rows if r[0] > args.tolerance]
        d, where = max(rows)
        print(f"| {key} | {len(rows)} | {len(bad)} | {d:.3g} | {where} |")
        failed |= bool(bad)
    return 1 if failed else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--save", help="write the results to this folder")
    ap.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"), help="compare two saved folders")
    ap.add_argument("--data", default=str(DATA_DEFAULT))
    ap.add_argument("--only", default="", help="comma-separated name prefixes")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--tolerance", type=float, default=1e-6)
    ap.add_argument("--partial", action="store_true",
                    help="--compare only the characters that AFTER has")
    args = ap.parse_args(argv)
    if bool(args.save) == bool(args.compare):
        ap.error("give either --save DIR or --compare BEFORE AFTER")
    return save(args) if args.save else compare(args)


if __name__ == "__main__":
    sys.exit(main())
