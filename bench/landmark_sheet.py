# SPDX-License-Identifier: GPL-3.0-or-later
"""Landmarks beside the artist's: each character from the front and the side, the
artist's joints of the scored roles (blue) and Bonesmith's standard joints of the same
roles (orange, naming "mixamo"), joined by a line where they differ.

    .venv/bin/python bench/landmark_sheet.py RECORD [RECORD ...] [--out PNG] [--size 320]
        [--arms-down DEG] [--head-scale S] [--leg-scale S]

RECORD is a record name of ../shared/data (without .npz), or `mannequin:legs=0.5,head=2.5`
for a generated segmented mannequin (bench/mannequins.py, its parameters; blue: the joints
that made it). A character not recognised as a humanoid shows the artist's joints only
and says so. Needs Pillow (requirements-bench.txt).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import DATA_DEFAULT, RESULTS  # noqa: E402
from humanoid import LABELS, arms_lowered, artist_landmarks, made_over, sides_swapped, swap  # noqa: E402
from mannequins import mannequin  # noqa: E402
from skeleton_sheet import ARTIST, MESH, OURS, save_sheet  # noqa: E402

from bonesmith.core.skeleton import extract_skeleton  # noqa: E402

ROLES = ("upper_arm", "forearm", "hand", "thigh", "shin", "foot", "head")
# a generated mannequin's joints (bench/mannequins.py) -> the role whose head lies there
MANNEQUIN_ROLES = {"shoulder": "upper_arm", "elbow": "forearm", "wrist": "hand", "hip": "thigh", "knee": "shin",
                   "ankle": "foot"}


def landmarks(rec):
    """(artist's {role: point}, ours {role: point} or None) for the scored roles."""
    sk = extract_skeleton(rec["verts"], rec["faces"], naming="mixamo")
    theirs = rec.get("theirs") or {r: p for r, p in artist_landmarks(rec["joint_names"], rec["joints"]).items()
                                   if r.split(".")[0] in ROLES}
    if not sk.info["humanoid"]:
        return theirs, None
    mine = {role: sk.joints[k] for k, role in enumerate(sk.info["roles"])}
    if sides_swapped(mine, theirs):
        theirs = {swap(r): p for r, p in theirs.items()}
    return theirs, {r: mine[r] for r in theirs if r in mine}


def tile(name, rec, size):
    theirs, mine = landmarks(rec)
    V = rec["verts"]
    lo, hi = V.min(axis=0), V.max(axis=0)
    extent, centre = 1.1 * np.ptp(V, axis=0).max(), (lo + hi) / 2
    image = Image.new("RGB", (2 * size, size + 18), (30, 32, 36))
    draw = ImageDraw.Draw(image)
    diagonal = float(np.linalg.norm(np.ptp(V, axis=0)))
    errors = [np.linalg.norm(mine[r] - theirs[r]) / diagonal * 100 for r in mine] if mine else []
    label = (f"{name}: not recognised" if mine is None else
             f"{name}: {np.mean(errors):.1f} % mean, {max(errors):.1f} % max ({len(errors)} joints)")
    draw.text((4, 2), label, fill=(230, 230, 230))
    for k, axis in enumerate((0, 1)):
        def px(P, axis=axis, k=k):
            P = np.atleast_2d(P)
            return np.stack([(P[:, axis] - centre[axis]) / extent * size + size / 2 + k * size,
                             size / 2 - (P[:, 2] - centre[2]) / extent * size + 18], axis=1)
        for x, y in px(V[:: max(1, len(V) // 5000)]):
            draw.point((x, y), fill=MESH)
        for role, p in theirs.items():
            (x, y), = px(p)
            if mine is not None and role in mine:
                (u, v), = px(mine[role])
                draw.line([(x, y), (u, v)], fill=(230, 230, 230), width=1)
                draw.ellipse([u - 3, v - 3, u + 3, v + 3], fill=OURS)
            draw.ellipse([x - 3, y - 3, x + 3, y + 3], outline=ARTIST, width=2)
    return image


def generated(name):
    """A `mannequin:key=value,...` record: its mesh and its joints as the artist's."""
    params = dict(item.split("=") for item in name.partition(":")[2].split(",") if item)
    V, F, J = mannequin(**{k: float(v) for k, v in params.items()})
    theirs = {}
    for joint, role in MANNEQUIN_ROLES.items():
        theirs[role + ".L"], theirs[role + ".R"] = J[joint], J[joint] * [-1.0, 1.0, 1.0]
    return {"verts": V, "faces": F, "theirs": theirs}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("records", nargs="+")
    ap.add_argument("--data", type=Path, default=DATA_DEFAULT)
    ap.add_argument("--out", type=Path, default=RESULTS / "landmark_sheet.png")
    ap.add_argument("--size", type=int, default=320)
    ap.add_argument("--arms-down", type=float, default=None, metavar="DEG",
                    help="the arms first lowered to DEG degrees below the horizontal (bench/repose.py)")
    ap.add_argument("--head-scale", type=float, default=1.0, metavar="S",
                    help="the head first scaled S times with the artist's rig (bench/repose.py)")
    ap.add_argument("--leg-scale", type=float, default=1.0, metavar="S",
                    help="the thighs and shins first made S times as long with the artist's rig")
    args = ap.parse_args(argv)
    tiles = []
    for name in args.records:
        if name.startswith("mannequin"):
            tiles.append(tile(name, generated(name), args.size))
            continue
        with np.load(args.data / f"{name}.npz") as d:
            rec = {k: d[k] for k in ("verts", "faces", "joints", "joint_names", "joint_tails", "parents", "weights")}
        if args.arms_down:
            rec["verts"], rec["joints"], _, _ = arms_lowered(rec, args.arms_down)
        if (args.head_scale, args.leg_scale) != (1.0, 1.0):
            over = made_over(rec, args.head_scale, args.leg_scale)
            if over is None:
                print(f"{name}: its rig names no head, thighs, shins and feet; shown as it is")
            else:
                rec["verts"], rec["joints"] = over
        tiles.append(tile(name, rec, args.size))
    save_sheet(tiles, args.out)
    print(args.out, "(labels:", ", ".join(LABELS[r] for r in ROLES) + ")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
