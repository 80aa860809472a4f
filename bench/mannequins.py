# SPDX-License-Identifier: GPL-3.0-or-later
"""Segmented mannequins of many proportions (docs/auto_skeleton.md#parts): is each one a
humanoid, and are its landmarks where its pieces meet?

    python bench/mannequins.py [--out bench/results/mannequins.md] [--ball 0.6] [--random N --seed S]
        [--range NAME LO HI ...]

A ragdoll mannequin has one separate piece per body segment (pelvis, chest, head, upper
arms, forearms, hands, thighs, shins, feet), each an ellipsoid from joint to joint, a
`gap` short of each end: the joints are known exactly. The grid varies what studios vary
and ../shared/data barely holds (one ragdoll-like skeleton monster): leg length (a chibi's
0.5 to a long-legged 1.2 of a human's), head size (1 or 2.5: a chibi's), limb thickness
(1 or 1.3 x a slim human's), the arms (T-pose or hanging 0.7 of the way down) and the gap
between pieces (0.012 or 0.03 of a 1.9-tall body). Per value of each parameter: how many
are recognised, the mean error of the named landmarks (Auto Skeleton, naming "mixamo",
info["landmarks"]; % of the bounding-box diagonal) and how many are over 4 % off. With
--ball, each is a wooden artist's mannequin instead: a ball at every limb joint. No
../shared data is read; about 2 minutes on 2 cores. With --random N, N mannequins drawn
between and a little beyond the grid's values instead (RANGES, each parameter uniform,
every other one T-posed): a rule that holds at the grid's corners only shows there; the
table then counts them by the quarter of each range; --range NAME LO HI draws that
parameter from another range (chibis: --range legs 0.4 0.65 --range head 1.8 2.8).
"""
from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import RESULTS, markdown_table  # noqa: E402

from bonesmith.core.skeleton import extract_skeleton  # noqa: E402

GRID = {"legs": (0.5, 0.75, 1.0, 1.2), "head": (1.0, 2.5), "limbs": (1.0, 1.3), "arms_down": (0.0, 0.7),
        "gap": (0.012, 0.03)}
# --random: each parameter drawn uniformly from its range (legs from 0.4: a chibi's can be
# shorter than the grid's)
RANGES = {"legs": (0.4, 1.25), "head": (1.0, 2.8), "limbs": (0.9, 1.45), "arms_down": (0.0, 0.8),
          "gap": (0.008, 0.04)}
LANDMARKS = ("hip", "knee", "ankle", "shoulder", "elbow", "wrist")
OFF = 4.0          # % of the diagonal: a landmark this far off counts as wrong
BALLS = {"hip": 0.06, "knee": 0.05, "ankle": 0.04, "shoulder": 0.045, "elbow": 0.04, "wrist": 0.03}   # --ball radii


def ellipsoid(radii, n: int = 12):
    """A closed UV ellipsoid about the origin, `radii` (x, y, z): (V, F)."""
    theta, phi = np.linspace(0, np.pi, n + 1)[1:-1], np.linspace(0, 2 * np.pi, 2 * n, endpoint=False)
    t, p = np.meshgrid(theta, phi, indexing="ij")
    ring = np.column_stack([np.sin(t).ravel() * np.cos(p).ravel(), np.sin(t).ravel() * np.sin(p).ravel(),
                            np.cos(t).ravel()])
    V = np.vstack([[0, 0, 1], ring, [0, 0, -1]]) * radii
    m, rows = 2 * n, n - 1
    idx = lambda r, c: 1 + r * m + c % m  # noqa: E731
    F = [(0, idx(0, c + 1), idx(0, c)) for c in range(m)]
    for r in range(rows - 1):
        for c in range(m):
            F += [(idx(r, c), idx(r, c + 1), idx(r + 1, c + 1)), (idx(r, c), idx(r + 1, c + 1), idx(r + 1, c))]
    F += [(len(V) - 1, idx(rows - 1, c), idx(rows - 1, c + 1)) for c in range(m)]
    return V, np.array(F)[:, ::-1]          # outward-facing


def piece(a, b, radius, gap):
    """An ellipsoid from point a to point b, `gap` short of each."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    axis = (b - a) / np.linalg.norm(b - a)
    V, F = ellipsoid([radius, radius, np.linalg.norm(b - a) / 2 - gap])
    side = np.cross([0.0, 0.0, 1.0], axis)
    side = side / np.linalg.norm(side) if np.linalg.norm(side) > 1e-9 else np.array([1.0, 0.0, 0.0])
    return V @ np.column_stack([side, np.cross(axis, side), axis]).T + (a + b) / 2, F


def mannequin(legs=1.0, head=1.0, limbs=1.0, arms_down=0.0, gap=0.012, ball=0.0):
    """(V, F, its left joints {landmark: point}): a ragdoll facing -Y, up +Z; with `ball`
    > 0, a wooden mannequin: a ball of `ball` x BALLS' radius (x `limbs`) at each limb
    joint, the limb pieces 0.04 x `ball` (x `limbs`) shorter at each end."""
    hip = 0.95 * legs
    J = {"hip": [0.1, 0, hip], "knee": [0.1, 0, 0.08 + 0.45 * legs], "ankle": [0.1, 0, 0.08],
         "toe": [0.1, -0.22, 0.03], "shoulder": [0.2, 0, hip + 0.5]}
    for name, out, down in (("elbow", 0.28, 0.28), ("wrist", 0.54, 0.54), ("hand", 0.72, 0.7)):
        J[name] = [0.2 + out * (1 - 0.3 * arms_down), 0, hip + 0.5 - down * arms_down]
    J = {k: np.array(v, float) for k, v in J.items()}
    head_radius = 0.12 * head
    meshes = [piece([0, 0, hip + 0.05], [0, 0, hip + 0.55], 0.2, 0.0),          # chest
              piece([0, 0, hip - 0.1], [0, 0, hip + 0.1], 0.17, 0.0),            # pelvis
              piece([0, 0, hip + 0.6], [0, 0, hip + 0.6 + 2.1 * head_radius], head_radius, 0.0)]
    for flip in (np.array([1.0, 1, 1]), np.array([-1.0, 1, 1])):
        for a, b, r in (("hip", "knee", 0.07), ("knee", "ankle", 0.055), ("ankle", "toe", 0.045),
                        ("shoulder", "elbow", 0.05), ("elbow", "wrist", 0.04), ("wrist", "hand", 0.035)):
            meshes.append(piece(J[a] * flip, J[b] * flip, r * limbs, gap + 0.04 * ball * limbs))
        for name, r in BALLS.items() if ball else ():
            V, F = ellipsoid([r * ball * limbs] * 3)
            meshes.append((V + J[name] * flip, F))
    offsets = np.cumsum([0] + [len(v) for v, _ in meshes[:-1]])
    V = np.vstack([v for v, _ in meshes])
    F = np.vstack([f + o for (_, f), o in zip(meshes, offsets)])
    return V, F, J


def score(params: dict, ball: float = 0.0):
    """{landmark: % of the diagonal off} of one mannequin, or None if not a humanoid."""
    V, F, J = mannequin(**params, ball=ball)
    sk = extract_skeleton(V, F, naming="mixamo")
    if not sk.info["humanoid"]:
        return None
    diagonal = np.linalg.norm(np.ptp(V, axis=0))
    found = sk.info["landmarks"]
    return {m: 100 * np.linalg.norm(np.asarray(found[m + ".L"]) - J[m]) / diagonal for m in LANDMARKS}


def drawn(n: int, seed: int, ranges=RANGES) -> list:
    """n parameter sets drawn from `ranges`, every other one with its arms at their rest
    (arms_down 0: a T-pose, as in half the grid)."""
    rng = np.random.default_rng(seed)
    runs = [{name: round(float(rng.uniform(lo, hi)), 3) for name, (lo, hi) in ranges.items()} for _ in range(n)]
    for params in runs[::2]:
        params["arms_down"] = 0.0
    return runs


def _in(x: float, value) -> bool:
    """Whether the parameter x is the grid's value, or lies in the (lo, hi) range drawn."""
    return x == value if not isinstance(value, tuple) else value[0] <= x <= value[1]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=RESULTS / "mannequins.md")
    parser.add_argument("--ball", type=float, default=0.0,
                        help="wooden mannequins: a ball joint of this x BALLS' radius at each limb joint")
    parser.add_argument("--random", type=int, default=0, metavar="N",
                        help="N mannequins drawn from RANGES instead of the grid")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--range", nargs=3, action="append", default=[], metavar=("NAME", "LO", "HI"),
                        help="with --random: draw parameter NAME from LO to HI instead of RANGES'")
    args = parser.parse_args(argv)
    ranges = dict(RANGES, **{name: (float(lo), float(hi)) for name, lo, hi in args.range})
    if set(ranges) != set(RANGES):
        parser.error(f"--range NAME is one of {', '.join(RANGES)}")
    runs = (drawn(args.random, args.seed, ranges) if args.random
            else [dict(zip(GRID, v)) for v in itertools.product(*GRID.values())])
    results = []
    for k, params in enumerate(runs, 1):
        results.append((params, score(params, args.ball)))
        print(f"[{k}/{len(runs)}] {params}: {results[-1][1] and {m: round(e, 1) for m, e in results[-1][1].items()}}",
              flush=True)
    rows = []
    groups = ({name: [(lo + (hi - lo) * q / 4, lo + (hi - lo) * (q + 1) / 4) for q in range(4)]
               for name, (lo, hi) in ranges.items()} if args.random else GRID)
    for name, values in [("all", (None,))] + list(groups.items()):
        for value in values:
            group = [r for p, r in results if value is None or _in(p[name], value)]
            if not group:
                continue
            found = [r for r in group if r is not None]
            mean = [f"{np.mean([r[m] for r in found]):.2f}" if found else "–" for m in LANDMARKS]
            wrong = sum(any(r[m] > OFF for m in LANDMARKS) for r in found)
            label = value if value is None or not args.random else f"{value[0]:.3g}-{value[1]:.3g}"
            rows.append([name if value is None else f"{name} {label}", f"{len(found)} / {len(group)}", *mean,
                         f"{wrong}"])
    table = markdown_table(["mannequins", "humanoid", *LANDMARKS, f"any > {OFF:g} % off"], rows)
    drawn_text = (f" --random {args.random} --seed {args.seed}" + "".join(f" --range {' '.join(r)}" for r in args.range)
                  if args.random else "")
    text = (f"Segmented mannequins (bench/mannequins.py{f' --ball {args.ball:g}' if args.ball else ''}{drawn_text}): "
            "recognised / generated, mean landmark error (% of the diagonal) over the recognised\n\n" + table + "\n")
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)


if __name__ == "__main__":
    main()
