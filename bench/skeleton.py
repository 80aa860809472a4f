# SPDX-License-Identifier: GPL-3.0-or-later
"""Auto Skeleton benchmark: Bonesmith vs skeletor vs pygel3d on ../shared/data.

    .venv/bin/python bench/skeleton.py [--limit N] [--only PREFIX[,PREFIX]]
        [--methods bonesmith,skeletor,pygel3d] [--timeout 120] [--detail 1.0]
    .venv/bin/python bench/skeleton.py --scaling [--methods ...]

Per character and method (docs/metrics.md#skeleton-metrics; core/metrics.py defines them):
CD-J2J, CD-J2B, CD-B2B in percent of the rest mesh's bounding-box diagonal against the
artist's deforming bones (heads `joints`, bones head→tail `joint_tails`), joints inside
the mesh (%), joint count and its ratio to the artist's, one tree (one connected,
acyclic skeleton), failures (exception, crash or timeout) and seconds.
Every method runs in its own worker process with a per-character timeout; a failure
counts as such and the worker is replaced. Means are over the characters a method
did not fail on; the "common" rows use only characters where every method succeeded.

Output: a markdown table on stdout (also bench/results/skeleton.md) and one row per
character and method in bench/results/skeleton.csv; with --save, the skeletons in
bench/results/skeletons/<method>/<record>.npz.

--subdivide N [--jitter J]: every mesh midpoint-subdivided N times first (moved off the
exact subdivision by J of its size), to check that the joint count stays;
--count-change BASE.csv NEW.csv compares the counts of two runs per source.

--cache DIR: Bonesmith's contractions are saved in DIR and reused by later runs (keyed
by the mesh, the options and core/contraction.py): the stages after the contraction can
be tuned 2-3x faster; the seconds column is then not Auto Skeleton's.

--scaling: the MPFB body (mpfb_default_neutral, 13k vertices) midpoint-subdivided to
~53k and ~214k vertices; seconds and peak memory (the worker process's RSS high-water
mark, a fresh process per run, Python + libraries included) per method.
Results: bench/results/scaling.{md,csv}.
"""
from __future__ import annotations

import argparse
import csv
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (DATA_DEFAULT, RESULTS, SOURCES, Worker, fmt, list_records,  # noqa: E402
                    load_record, markdown_table, parents_tree_stats, source_of, subdivided)
from skeleton_methods import METHODS  # noqa: E402

from bonesmith.core import metrics as M  # noqa: E402
from bonesmith.core.mesh import subdivide_midpoint  # noqa: E402

CSV_FIELDS = ["record", "source", "method", "status", "error", "seconds", "n_joints",
              "artist_joints", "joint_ratio", "one_tree", "n_components", "cd_j2j",
              "cd_j2b", "cd_b2b", "inside_pct", "artist_inside_pct", "artist_one_tree",
              "n_verts", "n_faces", "bbox_diag"]


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA_DEFAULT, help="folder of *.npz records")
    ap.add_argument("--limit", type=int, default=None, help="first N records only")
    ap.add_argument("--only", default=None, help="record name prefix(es), comma-separated")
    ap.add_argument("--methods", default="bonesmith,skeletor,pygel3d",
                    help="comma-separated, from: " + ",".join(METHODS))
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per character and method")
    ap.add_argument("--detail", type=float, default=1.0, help="Bonesmith's detail option")
    ap.add_argument("--bonesmith-impl", default=None, metavar="MODULE:FUNC",
                    help="benchmark another extract_skeleton(V, F, detail=) (default: "
                         "bonesmith.core.skeleton:extract_skeleton)")
    ap.add_argument("--out", type=Path, default=RESULTS, help="results folder")
    ap.add_argument("--save", action="store_true", help="also save every skeleton (npz)")
    ap.add_argument("--cache", type=Path, default=None, metavar="DIR",
                    help="reuse Bonesmith's contractions saved in DIR (for tuning the later stages; "
                         "its seconds are then not Auto Skeleton's)")
    ap.add_argument("--scaling", action="store_true", help="run the scaling study instead")
    ap.add_argument("--scaling-record", default="mpfb_default_neutral")
    ap.add_argument("--scaling-levels", default="0,1,2",
                    help="midpoint subdivision levels (0 = the record as is)")
    ap.add_argument("--scaling-timeout", type=float, default=600.0)
    ap.add_argument("--subdivide", type=int, default=0, metavar="N",
                    help="midpoint-subdivide every mesh N times first (the artist's rig as it is): "
                         "does the joint count stay? (compare with --count-change)")
    ap.add_argument("--jitter", type=float, default=0.0,
                    help="with --subdivide: move the new vertices by about this share of the size, "
                         "so that the copy is no exact subdivision")
    ap.add_argument("--count-change", nargs=2, metavar=("BASE_CSV", "CSV"),
                    help="only compare the joint counts of two saved runs (e.g. plain and "
                         "--subdivide 1): per source, the share within +-20 %%")
    ap.add_argument("--tables", nargs="+", metavar="CSV[:METHODS]",
                    help="only print the tables of saved runs (skeleton.csv files, optionally only "
                         "the comma-separated METHODS of a file); a method found in several files "
                         "is shown once per run (pygel3d samples at random)")
    a = ap.parse_args(argv)
    a.methods = [m.strip() for m in a.methods.split(",") if m.strip()]
    bad = [m for m in a.methods if m not in METHODS]
    if bad:
        ap.error(f"unknown method(s) {bad}; choose from {list(METHODS)}")
    return a


def method_kwargs(method, args):
    if method == "bonesmith":
        kw = {"detail": args.detail}
        if args.bonesmith_impl:
            kw["impl"] = args.bonesmith_impl
        if args.cache:
            kw["cache"] = str(args.cache)
        return kw
    return {}


def evaluate(rec, res, diag):
    """Metrics of one method's output against the artist's rig (distances in % of diag)."""
    J, B = res["joints"], res["bones"]
    if len(J) == 0 or len(B) == 0:
        raise ValueError("empty skeleton")
    if not (np.all(np.isfinite(J)) and np.all(np.isfinite(B))):
        raise ValueError("non-finite joint positions")
    GJ = rec["joints"]
    GB = np.stack([rec["joints"], rec["tails"]], axis=1)
    pct = 100.0 / diag
    return {
        "cd_j2j": M.cd_j2j(J, GJ) * pct,
        "cd_j2b": M.cd_j2b(J, B, GJ, GB) * pct,
        "cd_b2b": M.cd_b2b(B, GB, spacing=diag / 200.0) * pct,
        "inside_pct": 100.0 * float(M.inside_mesh(J, rec["verts"], rec["faces"]).mean()),
        "n_joints": len(J),
        "joint_ratio": len(J) / max(1, len(GJ)),
        "one_tree": bool(res["one_tree"]),
        "n_components": int(res["n_components"]),
    }


def _mean(rows, key):
    vals = [float(r[key]) for r in rows if r.get(key) not in (None, "") and math.isfinite(float(r[key]))]
    return float(np.mean(vals)) if vals else float("nan")


def _max(rows, key):
    vals = [float(r[key]) for r in rows if r.get(key) not in (None, "")]
    return float(np.max(vals)) if vals else float("nan")


def _ratio_counts(rows):
    """How many characters got under 0.5x, over 2x and over 3x the artist's joints."""
    ratio = np.array([float(r["joint_ratio"]) for r in rows])
    return [int((ratio < 0.5).sum()), int((ratio > 2).sum()), int((ratio > 3).sum())]


def summary_tables(rows, methods) -> str:
    by_rec = {}
    for r in rows:
        by_rec.setdefault(r["record"], {})[r["method"]] = r
    common = {n for n, d in by_rec.items()
              if all(m in d and d[m]["status"] == "ok" for m in methods)}
    sets = [(s.rstrip("_"), lambda n, s=s: n.startswith(s)) for s in SOURCES]
    sets += [("all", lambda n: True), ("common", lambda n: n in common)]
    header = ["set", "method", "chars", "failed", "CD-J2J %", "CD-J2B %", "CD-B2B %",
              "inside %", "joints", "× artist", "< 0.5×", "> 2×", "> 3×", "one tree %",
              "s mean", "s max"]
    out = []
    for label, keep in sets:
        recs = [n for n in by_rec if keep(n)]
        if not recs:
            continue
        arts = [next(iter(by_rec[n].values())) for n in recs]
        out.append([label, "artist", len(recs), "–", "0", "0", "0",
                    fmt(_mean(arts, "artist_inside_pct"), 1), fmt(_mean(arts, "artist_joints"), 1),
                    "1.00", "–", "–", "–", fmt(100 * _mean(arts, "artist_one_tree"), 0), "–", "–"])
        for m in methods:
            mine = [by_rec[n][m] for n in recs if m in by_rec[n]]
            ok = [r for r in mine if r["status"] == "ok"]
            out.append([label, m, len(mine), len(mine) - len(ok),
                        fmt(_mean(ok, "cd_j2j"), 3), fmt(_mean(ok, "cd_j2b"), 3), fmt(_mean(ok, "cd_b2b"), 3),
                        fmt(_mean(ok, "inside_pct"), 1), fmt(_mean(ok, "n_joints"), 1),
                        fmt(_mean(ok, "joint_ratio")), *_ratio_counts(ok),
                        fmt(100 * _mean(ok, "one_tree"), 0),
                        fmt(_mean(ok, "seconds")), fmt(_max(ok, "seconds"))])
    note = (f"\nDistances in % of the rest mesh's bounding-box diagonal; means over the characters "
            f"each method did not fail on; `common` = the {len(common)} characters where every "
            f"method succeeded. `artist` = the reference rig's own joints (inside %, count).")
    return markdown_table(header, out) + "\n" + note


def run_characters(args) -> int:
    paths = list_records(args.data, args.only, args.limit)
    if not paths:
        print(f"no records in {args.data}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    csv_path = args.out / "skeleton.csv"
    workers = {m: Worker() for m in args.methods}
    for m, w in workers.items():
        r = w.call("skeleton_methods:warm_up", m, args.bonesmith_impl, timeout=300)
        if r["status"] != "ok":
            print(f"warning: {m} does not import: {r.get('error')}", file=sys.stderr)
    rows = []
    t_start = time.perf_counter()
    with open(csv_path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=CSV_FIELDS)
        writer.writeheader()
        for i, path in enumerate(paths):
            rec = load_record(path)
            if args.subdivide:
                rec["verts"], rec["faces"], _ = subdivided(rec["verts"], rec["faces"], None,
                                                          args.subdivide, args.jitter)
            V, F = rec["verts"], rec["faces"]
            diag = M.bbox_diagonal(V)
            art_inside = 100.0 * float(M.inside_mesh(rec["joints"], V, F).mean())
            _, art_tree = parents_tree_stats(rec["parents"])
            line = [f"[{i + 1}/{len(paths)}] {rec['name']} ({len(V)} v)"]
            for m in args.methods:
                row = {"record": rec["name"], "source": source_of(rec["name"]), "method": m,
                       "artist_joints": len(rec["joints"]), "artist_inside_pct": art_inside,
                       "artist_one_tree": art_tree, "n_verts": len(V), "n_faces": len(F),
                       "bbox_diag": diag, "error": ""}
                r = workers[m].call(METHODS[m], V, F, timeout=args.timeout,
                                    **method_kwargs(m, args))
                row["status"] = r["status"]
                if r["status"] == "ok":
                    res = r["result"]
                    row["seconds"] = res["seconds"]
                    try:
                        row.update(evaluate(rec, res, diag))
                    except Exception as exc:  # noqa: BLE001 - unusable output = failure
                        row["status"], row["error"] = "bad-output", f"{type(exc).__name__}: {exc}"
                    if args.save and row["status"] == "ok":
                        d = args.out / "skeletons" / m
                        d.mkdir(parents=True, exist_ok=True)
                        np.savez_compressed(d / f"{rec['name']}.npz", joints=res["joints"],
                                            bones=res["bones"],
                                            parents=res.get("parents", np.zeros(0, np.int64)))
                else:
                    row["error"] = r.get("error", "")
                    row["seconds"] = r.get("wall")
                rows.append(row)
                writer.writerow({k: row.get(k, "") for k in CSV_FIELDS})
                fh.flush()
                if row["status"] == "ok":
                    line.append(f"{m}: {row['n_joints']} j, B2B {row['cd_b2b']:.2f}%, "
                                f"{row['seconds']:.1f}s")
                else:
                    line.append(f"{m}: {row['status']} ({row['error'][:60]})")
            print(" | ".join(line), file=sys.stderr, flush=True)
    for w in workers.values():
        w.close()
    elapsed = time.perf_counter() - t_start
    table = summary_tables(rows, args.methods)
    cmd = "bench/skeleton.py " + " ".join(sys.argv[1:])
    text = (f"## Auto Skeleton benchmark ({len(paths)} characters, {elapsed / 60:.1f} min)\n\n"
            f"`{cmd.strip()}`\n\n{table}\n")
    (args.out / "skeleton.md").write_text(text)
    print(text)
    print(f"per-character rows: {csv_path}", file=sys.stderr)
    return 0


def count_change(base_csv, csv_path) -> int:
    """Joint counts of one run against another's (same records, same method), per source."""
    def counts(path):
        with open(path, newline="") as fh:
            return {(r["record"], r["method"]): int(r["n_joints"])
                    for r in csv.DictReader(fh) if r["status"] == "ok"}
    base, new = counts(base_csv), counts(csv_path)
    keys = sorted(set(base) & set(new))
    out = []
    for label, prefix in [(s.rstrip("_"), s) for s in SOURCES] + [("all", "")]:
        mine = [k for k in keys if k[0].startswith(prefix)]
        if not mine:
            continue
        change = np.array([new[k] / base[k] - 1 for k in mine])
        worst = mine[int(np.abs(change).argmax())]
        out.append([label, len(mine), fmt(100 * np.abs(change).mean(), 1),
                    fmt(100 * float((np.abs(change) <= 0.2).mean()), 0),
                    f"{worst[0]} {base[worst]} -> {new[worst]}"])
    print(markdown_table(["set", "chars", "mean |change| %", "within +-20 % (%)", "largest change"], out))
    return 0


def tables_from_csv(paths) -> int:
    """Summary of saved runs, e.g. this commit's Bonesmith rows beside earlier competitor runs."""
    rows, methods, runs = [], [], {}
    for spec in paths:
        path, _, only = spec.partition(":")
        with open(path, newline="") as fh:
            file_rows = [r for r in csv.DictReader(fh) if not only or r["method"] in only.split(",")]
        label = {}
        for m in dict.fromkeys(r["method"] for r in file_rows):
            runs[m] = runs.get(m, 0) + 1
            label[m] = m if runs[m] == 1 else f"{m} #{runs[m]}"
            methods.append(label[m])
        for r in file_rows:
            r["method"] = label[r["method"]]
            for k in ("one_tree", "artist_one_tree"):
                r[k] = {"True": 1.0, "False": 0.0}.get(r[k], r[k])
        rows += file_rows
    print(summary_tables(rows, methods))
    return 0


def run_scaling(args) -> int:
    path = Path(args.data) / f"{args.scaling_record}.npz"
    rec = load_record(path)
    V, F = rec["verts"], rec["faces"]
    levels = sorted(int(x) for x in args.scaling_levels.split(","))
    meshes = {}
    for lev in range(max(levels) + 1):
        if lev in levels:
            meshes[lev] = (V, F)
        if lev < max(levels):
            V, F = subdivide_midpoint(V, F)
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    gave_up = set()     # a method that timed out is not tried on larger meshes
    for lev in levels:
        V, F = meshes[lev]
        for m in args.methods:
            if m in gave_up:
                rows.append({"vertices": len(V), "faces": len(F), "method": m, "status": "skipped",
                             "seconds": None, "n_joints": None, "peak_rss_mb": None,
                             "rss_before_mb": None, "imports_rss_mb": None,
                             "error": "timed out on a smaller mesh"})
                continue
            with Worker() as w:   # a fresh process per run: its RSS high-water mark is this run's
                r0 = w.call("skeleton_methods:warm_up", m, args.bonesmith_impl, timeout=300)
                r = w.call(METHODS[m], V, F, timeout=args.scaling_timeout, **method_kwargs(m, args))
                if r["status"] in ("timeout", "crash"):
                    w.kill()
            row = {"vertices": len(V), "faces": len(F), "method": m, "status": r["status"],
                   "seconds": r["result"]["seconds"] if r["status"] == "ok" else r.get("wall"),
                   "n_joints": len(r["result"]["joints"]) if r["status"] == "ok" else None,
                   "peak_rss_mb": r.get("peak_rss_mb"),
                   "rss_before_mb": r.get("baseline_rss_mb"),
                   "imports_rss_mb": r0.get("peak_rss_mb"),
                   "error": r.get("error", "")}
            if r["status"] == "timeout":
                gave_up.add(m)
            rows.append(row)
            print(f"{len(V)} v  {m}: {row['status']}  {fmt(row['seconds'])} s  "
                  f"peak {fmt(row['peak_rss_mb'], 0)} MB {row['error'][:80]}", file=sys.stderr, flush=True)
    with open(args.out / "scaling.csv", "w", newline="") as fh:
        wr = csv.DictWriter(fh, fieldnames=list(rows[0]))
        wr.writeheader()
        wr.writerows(rows)
    header = ["vertices", "faces", "method", "status", "seconds", "peak RSS MB",
              "RSS before run MB", "joints"]
    table = markdown_table(header, [[r["vertices"], r["faces"], r["method"], r["status"],
                                     fmt(r["seconds"], 1), fmt(r["peak_rss_mb"], 0),
                                     fmt(r["rss_before_mb"], 0), fmt(r["n_joints"])] for r in rows])
    cmd = "bench/skeleton.py " + " ".join(sys.argv[1:])
    text = (f"## Auto Skeleton scaling ({args.scaling_record}, midpoint subdivision)\n\n"
            f"`{cmd.strip()}`\n\n{table}\n\nPeak RSS = the worker process's high-water mark "
            f"(Python, numpy and the method's libraries included; \"RSS before run\" = after "
            f"imports and loading the mesh). A failed run shows its wall time; a method that "
            f"timed out is skipped on the larger meshes.\n")
    (args.out / "scaling.md").write_text(text)
    print(text)
    return 0


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.tables:
        return tables_from_csv(args.tables)
    if args.count_change:
        return count_change(*args.count_change)
    return run_scaling(args) if args.scaling else run_characters(args)


if __name__ == "__main__":
    sys.exit(main())
