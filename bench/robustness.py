# SPDX-License-Identifier: GPL-3.0-or-later
"""Odd inputs through the engine: does each give a correct result or a clear error?

    .venv/bin/python bench/robustness.py [--timeout 300] [--only CASE[,CASE]]

Every case is the bundled sample character (Quaternius Male_Casual, tests/data) changed
in one way, run through `extract_skeleton` and `predict_weights` (with the artist's
armature moved along) in a worker process (bench/common.Worker: a crash or a hang is
reported, never stops the run). Verdicts:
- ok: a result that passes the case's checks;
- clear error: a BonesmithError (a message for the user);
- wrong: a result that fails a check (the check is named);
- crash: another exception, a dead worker, or no answer within --timeout.
Checks on a result: the skeleton has the plain sample's limbs (legs and arms named as
such, with .L/.R sides), faces the way the case turned the sample, and a joint count within 25 % of the plain sample's; the weights
are finite, every row sums to 1, and their L1 to the artist's is within 1.5x the plain
sample's (shown after "ok"). The last case, the sample subdivided 5 times with its
midpoints moved at random by 0.01 % of its size, is no exact subdivision (those are
weighted on the original mesh), so it takes the dense path (a decimated proxy): its
check is the issue's bound, Auto Skin within 60 s and 3 GB; its L1 (shown) measures how
far weights computed on a dense mesh are from a low-poly artist's interpolated ones
(docs/auto_skin.md#subdivided-meshes). The last column is the worker process's peak memory so far (the cases run in
order in one worker: the dense case last gives its own peak). Output: the table on stdout and bench/results/robustness.md. Blender-level
cases (files, scenes, operators) are in the test suite (tests/test_cli*.py,
tests/test_auto_*.py); see issue 16.
"""
from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import RESULTS, Worker, markdown_table, subdivided  # noqa: E402
from humanoid import arms_lowered  # noqa: E402

SAMPLE = Path(__file__).resolve().parents[1] / "samples" / "quat_Male_Casual.npz"
JOINT_SPREAD = 0.25      # joint count within this share of the plain sample's
L1_FACTOR = 1.5          # weights' L1 within this factor of the plain sample's
DENSE = "subdivided 5x, midpoints moved 0.01 %"   # no exact subdivision: the dense path
DENSE_SECONDS, DENSE_GB = 60.0, 3.0                 # issue 16's bound at 1M vertices
A_POSE, A_POSE_DEGREES = "arms lowered 45° (A-pose)", 45.0   # by the artist's rig (repose.py)
FLAP = 0.02             # non-manifold flaps stick out this share of the size per axis (debris)


def _sample():
    with np.load(SAMPLE) as d:
        return {k: d[k] for k in ("verts", "faces", "joints", "joint_tails", "parents", "weights", "unweighted",
                                  "joint_names")}


def _rotation(axis: str, degrees: float) -> np.ndarray:
    a = np.radians(degrees)
    c, s = np.round(np.cos(a), 12), np.round(np.sin(a), 12)
    return {"x": np.array([[1, 0, 0], [0, c, -s], [0, s, c]]),
            "y": np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]]),
            "z": np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])}[axis]


# The sample (upright, facing -Y) turned: which way it then faces is checked.
TURNED = {"facing +X": ("z", 90), "facing -X": ("z", -90), "facing +Y": ("z", 180),
          "lying on its back": ("x", -90), "lying on its front": ("x", 90),
          "lying on its side": ("y", 90)}


def expected_facing(name: str) -> dict:
    """{'front': '+X', 'up': '+Z'}: the sample's front (-Y) and up (+Z) after the case's turn."""
    from bonesmith.core.orientation import axis_name
    R = _rotation(*TURNED.get(name, ("z", 0)))
    return {"front": axis_name(R @ [0, -1, 0]), "up": axis_name(R @ [0, 0, 1])}


def _fan_split(V, F, count, seed=0):
    """T-junctions: `count` faces split at an edge midpoint (the neighbour not split)."""
    V, F = list(V), [tuple(f) for f in F]
    extra = []
    for i in np.random.default_rng(seed).choice(len(F), count, replace=False):
        a, b, c = F[i]
        m = len(V)
        V.append((np.asarray(V[a]) + np.asarray(V[b])) / 2)
        F[i] = (a, m, c)
        extra.append((m, b, c))
    return np.array(V), np.array(F + extra)


def case_input(name: str):
    """(vertices, faces, joints, tails, weights mapped to the vertices or None)."""
    d = _sample()
    V, F = d["verts"].astype(np.float64), d["faces"].astype(np.int64)
    J, T, W = d["joints"].astype(np.float64), d["joint_tails"].astype(np.float64), d["weights"]
    if name == "plain":
        pass
    elif name == "empty":
        V, F = np.zeros((0, 3)), np.zeros((0, 3), np.int64)
    elif name == "nan vertex":
        V = V.copy()
        V[5] = np.nan
    elif name in ("tiny (1e-4)", "huge (1e4)"):
        k = 1e-4 if name.startswith("tiny") else 1e4
        V, J, T = V * k, J * k, T * k
    elif name == "half the faces flipped":
        F = F.copy()
        flip = np.random.default_rng(0).random(len(F)) < 0.5
        F[flip] = F[flip][:, ::-1]
    elif name in TURNED:
        R = _rotation(*TURNED[name])
        V, J, T = V @ R.T, J @ R.T, T @ R.T
    elif name == "every face on its own vertices":
        V, F, W = V[F.reshape(-1)], np.arange(F.size).reshape(-1, 3), W[F.reshape(-1)]
    elif name == "loose vertices":
        V = np.vstack([V, V[:50] + 0.01])
        W = np.vstack([W, W[:50]])
    elif name == "non-manifold flaps":
        tips = V[F[:40, 0]] + FLAP * np.ptp(V, axis=0).max()
        F = np.vstack([F, np.column_stack([F[:40, 0], F[:40, 1], len(V) + np.arange(40)])])
        V = np.vstack([V, tips])
        W = np.vstack([W, W[F[:40, 0]]])
    elif name == "a small prop far away":
        prop = (V - V.mean(axis=0)) * 0.1 + V.mean(axis=0) + [np.ptp(V, axis=0).max(), 0.0, 0.0]
        V = np.vstack([V, prop])
        F = np.vstack([F, F + len(d["verts"])])
        W = np.vstack([W, np.full_like(W, np.nan)])
    elif name == "a second character far away":
        V = np.vstack([V, V + [0.0, 5.0 * np.ptp(V, axis=0).max(), 0.0]])
        F = np.vstack([F, F + len(d["verts"])])
        W = None
    elif name == "T-junctions (300 split faces)":
        n = len(V)
        V, F = _fan_split(V, F, 300)
        W = np.vstack([W, np.full((len(V) - n, W.shape[1]), np.nan)])
    elif name in ("subdivided once (midpoints)", "subdivided 5x (949k vertices)"):
        V, F, W = subdivided(V, F, W, 1 if name.startswith("subdivided once") else 5)
    elif name == DENSE:
        V, F, W = subdivided(V, F, W, 5, jitter=1e-4)
    elif name == A_POSE:
        V, J, T, _ = arms_lowered(d, A_POSE_DEGREES)
    else:
        raise KeyError(name)
    return V, F, J, T, W


CASES = ("plain", "empty", "nan vertex", "tiny (1e-4)", "huge (1e4)", "half the faces flipped",
         *TURNED, "every face on its own vertices", "loose vertices",
         "non-manifold flaps", "a small prop far away", "a second character far away", "T-junctions (300 split faces)",
         "subdivided once (midpoints)", "subdivided 5x (949k vertices)", DENSE, A_POSE)


def run_case(name: str) -> dict:
    """In a worker: the case through both engines; the facts the checks need."""
    from bonesmith.core.errors import BonesmithError
    from bonesmith.core.skeleton import extract_skeleton
    from bonesmith.core.skinning import predict_weights
    V, F, J, T, W = case_input(name)
    parents = _sample()["parents"]
    out = {}
    t0 = time.perf_counter()
    try:
        sk = extract_skeleton(V, F)
        out["skeleton"] = {"joints": len(sk.joints), "names": list(sk.names),
                           "facing": {k: sk.info[k] for k in ("front", "up")}}
    except BonesmithError as error:
        out["skeleton_error"] = str(error)
    t1 = time.perf_counter()
    try:
        Wp = predict_weights(V, F, J, parents, T)
        rows = np.asarray(Wp).sum(axis=1)
        info = {"finite": bool(np.isfinite(Wp).all()), "rows_ok": bool(np.allclose(rows, 1.0, atol=1e-6))}
        if W is not None:
            keep = np.isfinite(W).all(axis=1) & (W.sum(axis=1) > 0)
            info["l1"] = float(np.abs(Wp[keep] - W[keep]).sum(axis=1).mean())
        out["skin"] = info
    except BonesmithError as error:
        out["skin_error"] = str(error)
    out["seconds"] = (t1 - t0, time.perf_counter() - t1)
    out["peak_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6     # Linux: kB
    return out


def verdicts(name: str, res: dict, ref: dict):
    """(skeleton verdict, skin verdict) with the failed check named."""
    if res["status"] != "ok":
        return (f"crash ({res['status']})",) * 2
    r = res["result"]
    if "skeleton_error" in r:
        sk = "clear error"
    else:
        s, problems = r["skeleton"], []
        names = s["names"]
        for limb in ("leg", "arm"):
            if not any(n.startswith(limb) and n.endswith((".L", ".R")) for n in names):
                problems.append(f"no {limb} with a side")
        if s["facing"] != expected_facing(name):
            problems.append("facing {front}, up {up}".format(**s["facing"]))
        n0 = ref["skeleton"]["joints"]
        if abs(s["joints"] - n0) > JOINT_SPREAD * n0:
            problems.append(f"{s['joints']} joints (plain {n0})")
        sk = "wrong: " + "; ".join(problems) if problems else "ok"
    if "skin_error" in r:
        sw = "clear error"
    else:
        s, problems = r["skin"], []
        if not s["finite"] or not s["rows_ok"]:
            problems.append("rows not finite / not summing to 1")
        if name == DENSE:
            if r["seconds"][1] > DENSE_SECONDS or r["peak_gb"] > DENSE_GB:
                problems.append(f"{r['seconds'][1]:.0f} s, {r['peak_gb']:.1f} GB")
        elif "l1" in s and s["l1"] > L1_FACTOR * ref["skin"]["l1"]:
            problems.append(f"L1 {s['l1']:.3f} (plain {ref['skin']['l1']:.3f})")
        sw = "wrong: " + "; ".join(problems) if problems else "ok"
        if not problems and "l1" in s:
            sw += f" (L1 {s['l1']:.3f})"
    return sk, sw


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--only", default=None, help="comma-separated case names")
    args = ap.parse_args(argv)
    cases = [c for c in CASES if not args.only or c in args.only.split(",")]
    rows = []
    with Worker() as worker:
        ref = worker.call("robustness:run_case", "plain", timeout=args.timeout)["result"]
        for name in cases:
            res = worker.call("robustness:run_case", name, timeout=args.timeout)
            sk, sw = verdicts(name, res, ref)
            secs = res.get("result", {}).get("seconds", (float("nan"), float("nan")))
            peak = res.get("result", {}).get("peak_gb", float("nan"))
            rows.append([name, sk, f"{secs[0]:.1f}", sw, f"{secs[1]:.1f}", f"{peak:.2f}"])
            print(f"{name}: skeleton {sk}; skin {sw}", flush=True)
    text = ("# Robustness: odd inputs through the engine\n\n`bench/robustness.py` (core only; "
            "Blender-level cases are tests)\n\n"
            + markdown_table(["case", "skeleton", "s", "skin (artist armature)", "s", "worker peak GB"], rows))
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "robustness.md").write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
