# SPDX-License-Identifier: GPL-3.0-or-later
"""Characters turned about their up axis (docs/auto_skeleton.md#symmetry): is the rig the same?

    python bench/turned.py [--names quat_Cowboy,...] [--angles 0,15,30,45,60,90,135,180] [--jobs 1]

Each human (one per studio with humans recognised unturned) is turned by each
yaw angle about Z (its up axis) and rigged with naming "mixamo". Per angle: recognised as a
humanoid (yes/no), joint count, and the distance of the named landmarks (info["landmarks"])
to those of the unturned character turned along, mean and max in % of the bounding-box
diagonal ("-" when either is not recognised). The sample (samples/quat_Male_Casual.npz) is
always included.
"""
from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import DATA_DEFAULT, REPO, load_record, markdown_table  # noqa: E402

# One human per studio that has humans recognised unturned (no kenney_ mini is).
NAMES = ("quat_Cowboy", "quatU_toon_soldier", "mpfb_game_engine_neutral", "zad_new_m_dress", "m2m_var_human_zombie")
ANGLES = (0, 15, 30, 45, 60, 90, 135, 180)
SAMPLE = REPO / "samples" / "quat_Male_Casual.npz"


def yaw(degrees: float) -> np.ndarray:
    """Rotation by `degrees` about +Z."""
    c, s = np.cos(np.radians(degrees)), np.sin(np.radians(degrees))
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def run(job):
    """(name, angle) -> (name, angle, humanoid, joints, landmarks turned back to 0 degrees, seconds)."""
    import time
    from bonesmith.core.skeleton import extract_skeleton
    path, angle = job
    rec = load_record(path)
    R = yaw(angle)
    t = time.perf_counter()
    sk = extract_skeleton(rec["verts"] @ R.T, rec["faces"], naming="mixamo")
    seconds = time.perf_counter() - t
    marks = {k: np.asarray(p) @ R for k, p in sk.info.get("landmarks", {}).items()}
    return rec["name"], angle, bool(sk.info["humanoid"]), len(sk), marks, seconds


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(DATA_DEFAULT))
    ap.add_argument("--names", default=",".join(NAMES))
    ap.add_argument("--angles", default=",".join(map(str, ANGLES)))
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args(argv)
    paths = [SAMPLE] + [Path(args.data) / f"{n}.npz" for n in args.names.split(",") if n]
    angles = [float(a) for a in args.angles.split(",")]
    jobs = [(p, a) for p in paths for a in angles]
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs) as pool:
            results = list(pool.map(run, jobs))
    else:
        results = [run(j) for j in jobs]
    by = {(r[0], r[1]): r for r in results}
    rows = []
    for p in paths:
        name = p.stem
        diagonal = float(np.linalg.norm(np.ptp(load_record(p)["verts"], axis=0)))
        base = by[(name, angles[0])][4]
        for a in angles:
            _, _, human, count, marks, seconds = by[(name, a)]
            common = sorted(set(base) & set(marks))
            if common:
                d = np.array([np.linalg.norm(marks[k] - base[k]) for k in common]) / diagonal * 100
                mean, worst = f"{d.mean():.2f}", f"{d.max():.2f}"
            else:
                mean = worst = "-"
            rows.append((name, f"{a:g}", "yes" if human else "no", count, mean, worst, f"{seconds:.1f}"))
    print(markdown_table(("character", "yaw °", "humanoid", "joints", "landmarks mean %", "max %", "s"), rows))


if __name__ == "__main__":
    main()
