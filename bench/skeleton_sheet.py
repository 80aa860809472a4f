# SPDX-License-Identifier: GPL-3.0-or-later
"""Contact sheet of Auto Skeleton results: each character from the front and the side,
the artist's bones (blue) beside Bonesmith's (orange).

    .venv/bin/python bench/skeleton_sheet.py RECORD [RECORD ...] [--out sheet.png]
        [--skeletons DIR] [--size 320]

RECORD is a record name of ../shared/data (without .npz). Bonesmith's rig is read from
DIR/<record>.npz when `bench/skeleton.py --save` wrote one (joints, bones), otherwise it
is extracted here. Each tile is labelled with the joint counts (artist / Bonesmith).
Needs Pillow (requirements-bench.txt).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import DATA_DEFAULT, RESULTS, load_record  # noqa: E402

from bonesmith.core.skeleton import extract_skeleton  # noqa: E402

ARTIST = (70, 140, 255)
OURS = (255, 110, 20)
MESH = (150, 150, 160)


def bonesmith_bones(name, rec, folder):
    """(heads (J,3), tails (J,3)) of Bonesmith's rig for a record."""
    saved = folder / f"{name}.npz" if folder else None
    if saved is not None and saved.exists():
        bones = np.load(saved)["bones"]
        return bones[:, 0], bones[:, 1]
    sk = extract_skeleton(rec["verts"], rec["faces"])
    return np.asarray(sk.joints), np.asarray(sk.tails)


def tile(rec, ours, size):
    """Front (x, z) and side (y, z) views side by side, artist left, Bonesmith right."""
    V = rec["verts"]
    lo, hi = V.min(axis=0), V.max(axis=0)
    extent = 1.1 * max(np.ptp(V, axis=0).max(), 1e-9)
    image = Image.new("RGB", (4 * size, size + 18), (30, 32, 36))
    draw = ImageDraw.Draw(image)
    centre = (lo + hi) / 2
    for k, (axis, bones, colour) in enumerate([(0, (rec["joints"], rec["tails"]), ARTIST),
                                                (1, (rec["joints"], rec["tails"]), ARTIST),
                                                (0, ours, OURS), (1, ours, OURS)]):
        def px(P, axis=axis, k=k):
            x = (P[:, axis] - centre[axis]) / extent * size + size / 2 + k * size
            y = size / 2 - (P[:, 2] - centre[2]) / extent * size + 18
            return np.stack([x, y], axis=1)
        for x, y in px(V[:: max(1, len(V) // 4000)]):
            draw.point((x, y), fill=MESH)
        heads, tails = px(bones[0]), px(bones[1])
        for a, b in zip(heads, tails):
            draw.line([tuple(a), tuple(b)], fill=colour, width=2)
            draw.ellipse([a[0] - 2, a[1] - 2, a[0] + 2, a[1] + 2], fill=(255, 230, 120))
    return image


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("records", nargs="+")
    ap.add_argument("--data", type=Path, default=DATA_DEFAULT)
    ap.add_argument("--skeletons", type=Path, default=None,
                    help="folder of saved Bonesmith skeletons (bench/skeleton.py --save)")
    ap.add_argument("--size", type=int, default=320)
    ap.add_argument("--out", type=Path, default=RESULTS / "skeleton_sheet.png")
    a = ap.parse_args(argv)
    tiles = []
    for name in a.records:
        rec = load_record(a.data / f"{name}.npz")
        ours = bonesmith_bones(name, rec, a.skeletons)
        t = tile(rec, ours, a.size)
        ImageDraw.Draw(t).text((4, 2), f"{name}: artist {len(rec['joints'])} joints, "
                               f"Bonesmith {len(ours[0])}", fill=(230, 230, 230))
        tiles.append(t)
    save_sheet(tiles, a.out)
    print(a.out)
    return 0


def save_sheet(tiles, out: Path) -> None:
    """The tiles one below the other, saved as `out` (its folder made)."""
    sheet = Image.new("RGB", (max(t.width for t in tiles), sum(t.height for t in tiles)), (30, 32, 36))
    y = 0
    for t in tiles:
        sheet.paste(t, (0, y))
        y += t.height
    out.parent.mkdir(parents=True, exist_ok=True)
    sheet.save(out)


if __name__ == "__main__":
    sys.exit(main())
