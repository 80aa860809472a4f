# SPDX-License-Identifier: GPL-3.0-or-later
"""Auto Skin's weights under changes of the frame (docs/auto_skin.md#frame-invariance).

    .venv/bin/python bench/skin_invariance.py [--data DIR] [--records a,b,...]
        [--models prior,model] [--out bench/results/skin_invariance.md]

For the sample (samples/quat_Male_Casual.npz) and a few characters of ../shared/data
(one or two per studio), with the artist's armature: max and mean over vertices of
max_j |W - W0| of `predict_weights` after moving mesh and bones together by
- turn90 / turn180: a turn about Z (matrices from cos / sin, as a program computes them);
- mirrorX: x -> -x (faces as they are, so the winding flips; columns stay the same bones);
- translate: by 10x the bounding-box diagonal along (1, 1, 1);
- scale100: coordinates times 100;
- jitter: the vertices (not the bones) moved at random by 1e-6 of the diagonal.
Weights are per input vertex, so they compare directly. Prints a markdown table and
writes it to --out.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import DATA_DEFAULT, RESULTS, load_record  # noqa: E402

from bonesmith.core.skinning import predict_weights  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "samples" / "quat_Male_Casual.npz"
RECORDS = ("quat_Female_Alternative", "quatU_men_casual2", "mpfb_default_neutral", "zad_new_m_pants_tunic_long",
           "zad_horse_tessalian", "m2m_fox", "m2m_var_human_sophia", "kenney_mini_female_a",
           "gdq_tps_gdbot", "quat_Smooth_Male_Shirt")
JITTER = 1e-6


def _turn(deg):
    a = np.radians(deg)
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def variants(V, joints, tails, seed=0):
    """name -> (V, joints, tails) of the same character moved."""
    diag = float(np.linalg.norm(V.max(axis=0) - V.min(axis=0)))
    out = {}
    for deg in (90, 180):
        R = _turn(deg)
        out[f"turn{deg}"] = (V @ R.T, joints @ R.T, tails @ R.T)
    M = np.diag([-1.0, 1.0, 1.0])
    out["mirrorX"] = (V @ M, joints @ M, tails @ M)
    t = np.full(3, 10.0 * diag)
    out["translate"] = (V + t, joints + t, tails + t)
    out["scale100"] = (V * 100.0, joints * 100.0, tails * 100.0)
    rng = np.random.default_rng(seed)
    out["jitter"] = (V + rng.normal(size=V.shape) * (JITTER * diag / np.sqrt(3)), joints, tails)
    return out


def measure(rec, model):
    """{variant: (max, mean) of max_j |dW|}, seconds of the base call."""
    t0 = time.perf_counter()
    W0 = predict_weights(rec["verts"], rec["faces"], rec["joints"], rec["parents"], rec["tails"], model=model)
    sec = time.perf_counter() - t0
    res = {}
    for name, (V, H, T) in variants(rec["verts"], rec["joints"], rec["tails"]).items():
        W = predict_weights(V, rec["faces"], H, rec["parents"], T, model=model)
        d = np.abs(W - W0).max(axis=1)
        res[name] = (float(d.max()), float(d.mean()))
    return res, sec


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA_DEFAULT)
    ap.add_argument("--records", default=",".join(RECORDS), help="record stems in --data (besides the sample)")
    ap.add_argument("--models", default="prior,model", help="prior (heat prior), model (shipped default)")
    ap.add_argument("--out", type=Path, default=RESULTS / "skin_invariance.md")
    a = ap.parse_args(argv)
    paths = [SAMPLE] + [a.data / f"{r}.npz" for r in a.records.split(",") if r]
    paths = [p for p in paths if p.exists()]
    names = ["turn90", "turn180", "mirrorX", "translate", "scale100", "jitter"]
    rows = []
    worst = {m: {n: [0.0, []] for n in names} for m in a.models.split(",")}
    for p in paths:
        rec = load_record(p)
        for m in a.models.split(","):
            res, sec = measure(rec, "prior" if m == "prior" else None)
            cells = [f"{res[n][0]:.4f} / {res[n][1]:.1e}" for n in names]
            for n in names:
                worst[m][n][0] = max(worst[m][n][0], res[n][0])
                worst[m][n][1].append(res[n][1])
            rows.append(f"| {rec['name']} | {len(rec['verts'])} | {m} | {sec:.2f} | " + " | ".join(cells) + " |")
            print(rows[-1], flush=True)
    for m, w in worst.items():
        rows.append(f"| **all** | | {m} | | " +
                    " | ".join(f"**{w[n][0]:.4f} / {np.mean(w[n][1]):.1e}**" for n in names) + " |")
    head = ("| character | verts | weights | s | " + " | ".join(names) + " |\n"
            "|---|---:|---|---:|" + "---:|" * len(names))
    text = ("max / mean over vertices of max_j |W - W0|\n\n" + head + "\n" + "\n".join(rows) + "\n")
    print("\n" + text)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(text)


if __name__ == "__main__":
    main()
