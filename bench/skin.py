# SPDX-License-Identifier: GPL-3.0-or-later
"""Auto Skin benchmark: skin weights vs the artist's on ../shared/data, side by side
with Blender's Automatic Weights (bone heat).

    .venv/bin/python bench/skin.py [--split val|train|all] [--only PREFIX[,PREFIX]]
        [--methods blender,blender4,geodesic,prior,autoskin] [--model PATH] [--limit N]
        [--jobs 2] [--timeout 300] [--no-cache]
    .venv/bin/python bench/skin.py --scaling [--methods prior,blender] [--profile]

Every method gets the same mesh (`verts`, `faces`) and the artist's armature (`joints`
-> `joint_tails`, `parents`). Per character and method (docs/metrics.md#skin-metrics):
- L1: mean over vertices of sum_j |w - w*| (rows of the method normalised; an
  unweighted vertex counts as an all-zero row, so it costs its whole artist weight);
- precision / recall of influences (w > 1e-4), over all (vertex, bone) pairs;
- deformation error: mean and max over the stored poses and vertices of the distance
  between the mesh posed by linear blend skinning (`pose_A`) with the method's and
  with the artist's weights, in % of the rest bounding-box diagonal (an unweighted
  vertex stays at rest, as in Blender);
- unweighted vertices (row sum 0), failures (exception, crash, timeout), seconds.
Methods: see skin_methods.py; `blender4` = Blender's weights cut to their 4 largest
and renormalised (what a game engine with 4 influences per vertex gets from them).
Vertices the artist left unweighted are left out of L1 / precision / recall / deformation.

Tables: per source, on every character, on "bone heat succeeds" (Blender left no vertex
unweighted and did not fail), and the issue-3 targets. Each method runs in its own
worker process (bench/common.Worker); Blender's weights are cached in
bench/results/cache/blender/ (deterministic; --no-cache recomputes).
Output: bench/results/skin.md and skin.csv (scaling: skin_scaling.{md,csv}).

Runtime on the 2-core development machine: all 188 characters with
`--split all --no-cache --methods blender,blender4,geodesic,prior,autoskin`: 139 s wall
(--jobs 2); the 127 validation characters with Blender cached: about 45 s.
What each step of the heat prior buys: bench/skin_ablation.py.
"""
from __future__ import annotations

import argparse
import csv
import json
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (DATA_DEFAULT, RESULTS, SOURCES, Worker, fmt, list_records,  # noqa: E402
                    load_record, markdown_table, source_of, subdivided)
from skin_methods import METHODS  # noqa: E402
from splits import family_of, split_of  # noqa: E402

from bonesmith.core.mesh import bbox_diagonal  # noqa: E402

INFLUENCE = 1e-4
CSV_FIELDS = ["record", "source", "family", "split", "method", "status", "error", "seconds",
              "n_verts", "n_bones", "n_poses", "l1", "precision", "recall", "deform_mean",
              "deform_max", "unweighted", "max_influences"]


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA_DEFAULT)
    ap.add_argument("--split", default="val", choices=["val", "train", "all"],
                    help="which records (bench/splits.py); default the validation families")
    ap.add_argument("--only", default=None, help="record name prefix(es), comma-separated")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--methods", default="blender,blender4,geodesic,prior,autoskin",
                    help="comma-separated, from: " + ",".join(METHODS) + ",blender4 (Blender's weights "
                         "pruned to 4 influences, as a game engine imports them; after blender)")
    ap.add_argument("--model", default=None, help="autoskin: model file (default: the shipped model)")
    ap.add_argument("--jobs", type=int, default=2, help="characters in parallel (one worker per method each)")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per character and method")
    ap.add_argument("--no-cache", action="store_true", help="recompute Blender's weights")
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--tag", default="skin", help="output file stem (skin -> skin.md, skin.csv)")
    ap.add_argument("--scaling", action="store_true", help="seconds at ~13k / ~53k / ~214k vertices")
    ap.add_argument("--scaling-record", default="mpfb_game_engine_neutral")
    ap.add_argument("--scaling-levels", default="0,1,2")
    ap.add_argument("--scaling-timeout", type=float, default=600.0)
    ap.add_argument("--scaling-jitter", type=float, default=1e-4,
                    help="with --scaling: midpoints moved by about this share of the size, so that "
                         "the meshes are no exact subdivisions (which Auto Skin undoes) but dense meshes")
    ap.add_argument("--scaling-scale", type=float, default=1.0,
                    help="multiply the character's coordinates (Blender's bone heat fails on small faces)")
    ap.add_argument("--profile", action="store_true",
                    help="with --scaling: Auto Skin's seconds per stage (cProfile) at each size")
    a = ap.parse_args(argv)
    a.methods = [m.strip() for m in a.methods.split(",") if m.strip()]
    bad = [m for m in a.methods if m not in METHODS and m != "blender4"]
    if bad:
        ap.error(f"unknown method(s) {bad}; choose from {list(METHODS)}")
    return a


def load_skin_record(path) -> dict:
    """load_record plus the artist's weights, the bone names and the stored poses."""
    from bonesmith.core import records

    r = load_record(path)
    d = records.read(path, ("weights",), ("unweighted", "pose_A", "joint_names"))
    r["weights"] = d["weights"].astype(np.float64)
    r["names"] = [str(n) for n in d["joint_names"]] if "joint_names" in d else None
    r["unweighted"] = d["unweighted"].astype(bool) if "unweighted" in d else np.zeros(len(r["verts"]), bool)
    r["pose_A"] = (d["pose_A"].astype(np.float64) if "pose_A" in d
                   else np.zeros((0, len(r["joints"]), 4, 4)))
    return r


def lbs(V, W, A):
    """Posed vertices (P, V, 3) by linear blend skinning; rows of W summing to 0 stay at rest."""
    out = np.empty((len(A), len(V), 3))
    Vh = np.concatenate([V, np.ones((len(V), 1))], axis=1)
    rest = W.sum(axis=1) <= 0
    for p in range(len(A)):
        M = np.einsum("vj,jab->vab", W, A[p][:, :3, :])            # (V,3,4)
        out[p] = np.einsum("vab,vb->va", M, Vh)
        out[p][rest] = V[rest]
    return out


def score(rec, W) -> dict:
    """Metrics of weights W (V,J) against the record's artist weights."""
    V, Wa = rec["verts"], rec["weights"]
    keep = ~rec["unweighted"]
    W = np.nan_to_num(np.maximum(np.asarray(W, dtype=np.float64), 0.0))
    s = W.sum(axis=1, keepdims=True)
    unweighted = int(((s[:, 0] <= 0) & keep).sum())
    Wn = np.divide(W, s, out=np.zeros_like(W), where=s > 0)
    l1 = float(np.abs(Wn - Wa).sum(axis=1)[keep].mean())
    pi, gi = (Wn > INFLUENCE)[keep], (Wa > INFLUENCE)[keep]
    tp = float((pi & gi).sum())
    prec = tp / max(float(pi.sum()), 1.0)
    rec_ = tp / max(float(gi.sum()), 1.0)
    dmean = dmax = float("nan")
    A = rec["pose_A"]
    if len(A):
        diag = bbox_diagonal(V)
        e = np.linalg.norm(lbs(V, Wn, A) - lbs(V, Wa, A), axis=2)[:, keep] / diag * 100.0
        dmean, dmax = float(e.mean()), float(e.max())
    return dict(l1=l1, precision=prec, recall=rec_, deform_mean=dmean, deform_max=dmax,
                unweighted=unweighted, max_influences=int((Wn > 0).sum(axis=1).max()))


def _cache_path(args, name):
    return args.out / "cache" / "blender" / f"{name}.npz"


def run_one(args, workers, path, lock=None) -> list:
    rec = load_skin_record(path)
    name = rec["name"]
    rows = []
    blender_W = None
    for m in args.methods:
        if m == "blender4":           # derived from Blender's weights, no run of its own
            row = {"record": name, "source": source_of(name), "family": family_of(name),
                   "split": split_of(name), "method": m, "n_verts": len(rec["verts"]),
                   "n_bones": len(rec["joints"]), "n_poses": len(rec["pose_A"]), "error": ""}
            if blender_W is None:
                row.update(status="error", error="needs the blender method first")
            else:
                from bonesmith.core.skinning.weights import prune
                W = blender_W.copy()
                ok = W.sum(axis=1) > 0
                W[ok] = prune(W[ok], 4)
                row.update(status="ok", seconds=float("nan"), **score(rec, W))
            rows.append(row)
            continue
        row = {"record": name, "source": source_of(name), "family": family_of(name), "split": split_of(name),
               "method": m, "n_verts": len(rec["verts"]), "n_bones": len(rec["joints"]),
               "n_poses": len(rec["pose_A"]), "error": ""}
        cache = _cache_path(args, name)
        res = None
        if m == "blender" and not args.no_cache and cache.exists():
            with np.load(cache) as c:
                res = {"status": "ok", "result": {"W": c["W"], "seconds": float(c["seconds"])}}
        if res is None:
            kw = {"model": args.model} if m == "autoskin" and args.model else {}
            res = workers[m].call(f"skin_methods:{METHODS[m].__name__}", rec["verts"], rec["faces"],
                                  rec["joints"], rec["tails"], rec["parents"], timeout=args.timeout, **kw)
            if m == "blender" and res["status"] == "ok":
                cache.parent.mkdir(parents=True, exist_ok=True)
                np.savez_compressed(cache, W=res["result"]["W"], seconds=res["result"]["seconds"])
        row["status"] = res["status"]
        if res["status"] == "ok":
            out = res["result"]
            if m == "blender":
                blender_W = np.asarray(out["W"], dtype=np.float64)
            row["seconds"] = out["seconds"]
            row.update(score(rec, out["W"]))
        else:
            row["error"] = res.get("error", "")[:300]
        rows.append(row)
    return rows


def _mean(rows, key):
    v = [r[key] for r in rows if r.get("status") == "ok" and r.get(key) is not None
         and np.isfinite(r[key])]
    return float(np.mean(v)) if v else None


def table(rows, methods, title_rows) -> str:
    header = ["source", "method", "chars", "L1", "precision", "recall", "deform mean %",
              "deform max %", "unweighted verts", "chars unweighted", "failed", "s"]
    out = []
    for src in list(SOURCES) + ["all"]:
        sub = [r for r in rows if src == "all" or r["source"] == src]
        if not sub:
            continue
        for m in methods:
            mr = [r for r in sub if r["method"] == m]
            if not mr:
                continue
            ok = [r for r in mr if r["status"] == "ok"]
            out.append([src.rstrip("_"), m, len(mr), fmt(_mean(mr, "l1"), 3), fmt(_mean(mr, "precision"), 3),
                        fmt(_mean(mr, "recall"), 3), fmt(_mean(mr, "deform_mean"), 3),
                        fmt(_mean(mr, "deform_max"), 2), sum(int(r["unweighted"]) for r in ok),
                        sum(1 for r in ok if r["unweighted"] > 0), len(mr) - len(ok),
                        fmt(_mean(mr, "seconds"), 2)])
    return f"{title_rows}\n\n" + markdown_table(header, out)


def blender_ok(rows):
    """Records where Blender succeeded: no failure and no unweighted vertex."""
    return {r["record"] for r in rows if r["method"] == "blender" and r["status"] == "ok" and r["unweighted"] == 0}


def targets(rows, methods) -> str:
    """Issue 3 'Done when' checks for each non-Blender method."""
    if "blender" not in methods:
        return ""
    methods = [m for m in methods if m != "blender4"]
    good = blender_ok(rows)
    lines = ["| method | check | value | target | pass |", "|---|---|---:|---:|---|"]
    for m in methods:
        if m == "blender":
            continue
        mr = [r for r in rows if r["method"] == m]
        bad = [r for r in mr if r["status"] != "ok" or r["unweighted"] > 0]
        lines.append(f"| {m} | characters with an error or unweighted vertices | {len(bad)} | 0 | {'yes' if not bad else 'no'} |")
        # deformation error: same characters, both ok, poses present
        pairs = _paired(rows, m, "deform_mean")
        if pairs:
            a = np.mean([p[0] for p in pairs]); b = np.mean([p[1] for p in pairs])
            lines.append(f"| {m} | mean deformation error vs bone heat (all, {len(pairs)} chars) | {a:.4f} % vs {b:.4f} % "
                         f"| <= {b / 2:.4f} % | {'yes' if a <= b / 2 else 'no'} |")
        for src in SOURCES:
            for key, label in (("l1", "L1"), ("deform_mean", "deformation mean %")):
                pp = _paired(rows, m, key, src=src, only=good)
                if not pp:
                    continue
                a = np.mean([p[0] for p in pp]); b = np.mean([p[1] for p in pp])
                strict = src == "zad_"
                ok = a < b if strict else a <= b
                lines.append(f"| {m} | {src.rstrip('_')}, bone heat succeeds ({len(pp)}): {label} | {a:.4f} vs {b:.4f} "
                             f"| {'<' if strict else '<='} {b:.4f} | {'yes' if ok else 'no'} |")
    return "\n".join(lines)


def _paired(rows, m, key, src=None, only=None):
    by = {}
    for r in rows:
        if src and r["source"] != src:
            continue
        if only is not None and r["record"] not in only:
            continue
        if r["status"] == "ok" and r.get(key) is not None and np.isfinite(r[key]):
            by.setdefault(r["record"], {})[r["method"]] = r[key]
    return [(d[m], d["blender"]) for d in by.values() if m in d and "blender" in d]


def main(argv=None):
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.scaling:
        return scaling(args)
    paths = list_records(args.data, args.only)
    if args.split != "all":
        paths = [p for p in paths if split_of(p.stem) == args.split]
    if args.limit:
        paths = paths[:args.limit]
    print(f"{len(paths)} characters, methods {args.methods}, {args.jobs} job(s)", flush=True)
    t0 = time.perf_counter()
    local = threading.local()
    all_workers = []
    lock = threading.Lock()

    def task(p):
        if not hasattr(local, "workers"):
            local.workers = {m: Worker() for m in args.methods if m in METHODS}
            with lock:
                all_workers.append(local.workers)
            for m, w in local.workers.items():
                w.call("skin_methods:warm_up", m, timeout=300)
        rows = run_one(args, local.workers, p)
        with lock:
            print("  " + p.stem + ": " + "  ".join(
                f"{r['method']} " + (f"L1 {r['l1']:.3f} def {r['deform_mean']:.3f} unw {r['unweighted']} {r['seconds']:.2f}s"
                                     if r["status"] == "ok" else r["status"]) for r in rows), flush=True)
        return rows

    rows = []
    try:
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
            for rr in ex.map(task, paths):
                rows.extend(rr)
    finally:
        for ws in all_workers:
            for w in ws.values():
                w.close()
    wall = time.perf_counter() - t0
    good = blender_ok(rows)
    cmd = "bench/skin.py " + " ".join(sys.argv[1:] if argv is None else argv)
    md = [f"# Auto Skin benchmark\n\n`{cmd}` — {len({r['record'] for r in rows})} characters "
          f"(split: {args.split}), {wall:.0f} s wall with {args.jobs} job(s).\n",
          table(rows, args.methods, "## All characters"),
          table([r for r in rows if r["record"] in good], args.methods,
                f"## Characters where bone heat succeeds ({len(good)})") if "blender" in args.methods else "",
          "## Issue 3 targets\n\n" + targets(rows, args.methods)]
    text = "\n\n".join(x for x in md if x) + "\n"
    print(text)
    (args.out / f"{args.tag}.md").write_text(text)
    with open(args.out / f"{args.tag}.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=CSV_FIELDS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})
    return 0


def scaling(args):
    path = args.data / f"{args.scaling_record}.npz"
    rec = load_skin_record(path)
    for key in ("verts", "joints", "tails"):    # --scaling-scale: the same character in other units
        rec[key] = rec[key] * args.scaling_scale
    V0, F0 = rec["verts"], rec["faces"]
    rows = []
    for lvl in [int(x) for x in args.scaling_levels.split(",")]:
        V, F, W_art = subdivided(V0, F0, rec["weights"], lvl, jitter=args.scaling_jitter)
        for m in args.methods:
            with Worker() as w:
                w.call("skin_methods:warm_up", m, timeout=300)
                res = w.call(f"skin_methods:{METHODS[m].__name__}", V, F, rec["joints"], rec["tails"],
                             rec["parents"], timeout=args.scaling_timeout)
            row = {"record": args.scaling_record, "level": lvl, "n_verts": len(V), "n_bones": len(rec["joints"]),
                   "method": m, "status": res["status"], "peak_rss_mb": res.get("peak_rss_mb")}
            if res["status"] == "ok":
                Wm = res["result"]["W"]
                row["seconds"] = res["result"]["seconds"]
                row["unweighted"] = int((Wm.sum(axis=1) <= 0).sum())
                weighted = W_art.sum(axis=1) > 0
                row["l1"] = float(np.abs(Wm / np.maximum(Wm.sum(1, keepdims=True), 1e-12) - W_art).sum(1)[weighted].mean())
                row["info"] = json.dumps(res["result"].get("info", {}))
            else:
                row["error"] = res.get("error", "")[:200]
            print(row, flush=True)
            rows.append(row)
    if args.profile:
        rows_profile = profile_rows(rec, V0, F0, [int(x) for x in args.scaling_levels.split(",")], args)
    header = ["vertices", "bones", "method", "status", "seconds", "L1", "unweighted", "peak RSS MB"]
    tab = markdown_table(header, [[r["n_verts"], r["n_bones"], r["method"], r["status"], fmt(r.get("seconds")),
                                   fmt(r.get("l1"), 3), r.get("unweighted", "–"), fmt(r.get("peak_rss_mb"), 0)]
                                  for r in rows])
    text = (f"# Auto Skin scaling\n\n`{args.scaling_record}` midpoint-subdivided"
            f"{f', midpoints moved by {args.scaling_jitter:g} of the size' if args.scaling_jitter else ''}"
            f"{f', coordinates x {args.scaling_scale:g}' if args.scaling_scale != 1 else ''}; L1 against the "
            f"artist's weights interpolated onto the midpoints.\n\n{tab}\n")
    if args.profile:
        text += f"\n## Auto Skin per stage (seconds, cProfile: cumulative, so nested stages overlap)\n\n{rows_profile}\n"
    print(text)
    (args.out / "skin_scaling.md").write_text(text)
    with open(args.out / "skin_scaling.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=["record", "level", "n_verts", "n_bones", "method", "status", "seconds",
                                           "l1", "unweighted", "peak_rss_mb", "error", "info"], extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    return 0


def profile_rows(rec, V0, F0, levels, args) -> str:
    """Auto Skin's seconds per stage at each subdivision level, as a table (stages x sizes)."""
    from skin_methods import PROFILE_STAGES
    columns, sizes = [], []
    for lvl in levels:
        V, F, _ = subdivided(V0, F0, rec["weights"], lvl, jitter=args.scaling_jitter)
        with Worker() as w:
            w.call("skin_methods:warm_up", "autoskin", timeout=300)
            res = w.call("skin_methods:profile_autoskin", V, F, rec["joints"], rec["tails"], rec["parents"],
                         timeout=args.scaling_timeout)
        if res["status"] != "ok":
            print(f"profile at level {lvl}: {res['status']} {res.get('error', '')[:200]}", flush=True)
            continue
        sizes.append(f"{len(V):,} vertices")
        columns.append({**res["result"]["stages"], "total": res["result"]["seconds"],
                        "peak RSS MB": res.get("peak_rss_mb")})
    labels = [label for label, *_ in PROFILE_STAGES] + ["total", "peak RSS MB"]
    return markdown_table(["stage"] + sizes, [[label] + [fmt(c.get(label), 0 if label == "peak RSS MB" else 2)
                                                         for c in columns] for label in labels])


if __name__ == "__main__":
    sys.exit(main())
