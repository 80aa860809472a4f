# SPDX-License-Identifier: GPL-3.0-or-later
"""Auto Skin adapts to a new studio: fine-tune the default model on k characters of a
style it never saw, test on that studio's other families.

    .venv/bin/python bench/skin_adapt.py [--source zad_] [--k 3,6,10] [--draws 3]
        [--epochs 200] [--jobs 2] [--within FAMILY | --leave-out FAMILY | --mixed]
        [--tag NAME]

The studio is 0 A.D. (`zad_`, CC-BY-SA-3.0: it is only evaluated and fine-tuned on here,
never in a shipped model). For each k and draw d: k families are drawn with seed d, one
character of each is the training set (what a technical artist would select), and every
character of the other families is tested. Training is `train_skin_model` with its
defaults (init = the shipped model, cross-validated epoch count), exactly what
`python -m bonesmith train-skin` runs. Methods on the test characters, full pipeline
(scatter, prune to 4, normalise; metrics of bench/skin.py): bone heat (Blender's, from
bench/results/cache/blender: run bench/skin.py --only zad_ --methods blender first),
the heat prior, the default model, the fine-tuned model. Features are cached in
bench/results/skin_features/.

`--within FAMILY` measures the other case a studio has: variants of one body (0 A.D.'s
35 `zad_biped` outfits share one base mesh). k characters of that family are drawn with
seed d and its other members are tested. `--leave-out FAMILY` trains once on every
character of the other families and tests that family: how much of a studio's style
carries across its families when all of them teach.

`--mixed` is the technical artist's folder of a studio's characters of several families
(docs/auto_skin.md#house-style): for a folder of k, k // 3 families give two characters
each and the rest of the k one each (families of two or more characters, drawn with seed
d); the test is every other character of the source, and the table is per family: those
with characters in the folder (tested on their other members) and those without. The
trained model is gated (it is used only for the rig templates it was validated on).

Output: bench/results/<tag>.md and <tag>.csv.
"""
from __future__ import annotations

import argparse
import csv
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from common import DATA_DEFAULT, RESULTS, markdown_table  # noqa: E402
from skin import load_skin_record, score  # noqa: E402
from splits import family_of  # noqa: E402
from train_skin_default import CachedFeatures  # noqa: E402

METRICS = ("l1", "precision", "recall", "deform_mean", "deform_max", "unweighted")


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA_DEFAULT)
    ap.add_argument("--source", default="zad_", help="record prefix of the new studio")
    ap.add_argument("--k", default="3,6,10", help="training set sizes")
    ap.add_argument("--draws", type=int, default=3, help="random draws of the training families per k")
    ap.add_argument("--epochs", type=int, default=None, help="train_skin_model's epochs (default: its own)")
    ap.add_argument("--lr", type=float, default=None)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--within", default=None, metavar="FAMILY",
                    help="variants of one family instead: train on k of its characters, test on its others")
    ap.add_argument("--leave-out", default=None, metavar="FAMILY",
                    help="train on every character of the other families (once), test on FAMILY")
    ap.add_argument("--mixed", action="store_true",
                    help="a folder of several families (some with two characters), tested per family")
    ap.add_argument("--tag", default=None, help="output name (default skin_adapt, or skin_adapt_<family>)")
    return ap.parse_args(argv)


def characters(args) -> list:
    from bonesmith.core.skinning.train import load_record
    out = []
    for path in sorted(args.data.glob(f"{args.source}*.npz")):
        ch = load_record(path)
        ch["family"] = family_of(path.stem)
        out.append(ch)
    return out


def draw_mixed(chars, k: int, d: int):
    """(folder, test): k // 3 families give two characters, the rest of k one each; the
    families are drawn with seed d among those of two or more characters (three or more for
    the pairs, so that one is left to test)."""
    rng = np.random.default_rng([d, k, 3])
    members = {}
    for c in chars:
        members.setdefault(c["family"], []).append(c)
    pairs = k // 3
    big = sorted(f for f, m in members.items() if len(m) >= 3)
    pair_families = list(rng.choice(big, size=pairs, replace=False)) if pairs else []
    rest = sorted(f for f, m in members.items() if len(m) >= 2 and f not in pair_families)
    single_families = list(rng.choice(rest, size=k - 2 * pairs, replace=False))
    folder = []
    for fam, n in [(f, 2) for f in pair_families] + [(f, 1) for f in single_families]:
        folder += [members[fam][i] for i in sorted(rng.choice(len(members[fam]), size=n, replace=False))]
    taken = {id(c) for c in folder}
    return folder, [c for c in chars if id(c) not in taken]


def draw(chars, k: int, d: int, within: str | None = None, leave_out: str | None = None,
         mixed: bool = False):
    """(training characters: one of each of k families drawn with seed d, test characters).
    `within`: k characters of that family drawn with seed d; the test is its other members.
    `leave_out`: every character of the other families; the test is that family."""
    if leave_out:
        return [c for c in chars if c["family"] != leave_out], [c for c in chars if c["family"] == leave_out]
    if mixed:
        return draw_mixed(chars, k, d)
    rng = np.random.default_rng([d, k])
    if within:
        members = [c for c in chars if c["family"] == within]
        if len(members) <= k:
            raise SystemExit(f"{within} has {len(members)} characters; k = {k} leaves none to test")
        picked = set(rng.choice(len(members), size=k, replace=False).tolist())
        return ([c for i, c in enumerate(members) if i in picked],
                [c for i, c in enumerate(members) if i not in picked])
    families = sorted({c["family"] for c in chars})
    chosen = sorted(rng.choice(families, size=k, replace=False).tolist())
    train = []
    for fam in chosen:
        members = [c for c in chars if c["family"] == fam]
        train.append(members[int(rng.integers(len(members)))])
    return train, [c for c in chars if c["family"] not in chosen]


def fine_tune(job):
    """One training run (in a worker process): the report and the model's path."""
    k, d, train, args, workdir = job
    from bonesmith.core.skinning.train import train_skin_model
    feats = CachedFeatures(RESULTS / "skin_features")
    kw = {key: getattr(args, key) for key in ("epochs", "lr") if getattr(args, key) is not None}
    out = Path(workdir) / f"k{k}_d{d}.npz"
    t0 = time.perf_counter()
    report = train_skin_model(train, out, init="default", feature_fn=feats, **kw)
    return k, d, str(out), report, time.perf_counter() - t0


def evaluate(job):
    """Full-pipeline metrics of every method on one test character (in a worker)."""
    name, models, args = job
    from bonesmith.core.skinning import predict_weights, weights_from_features
    from bonesmith.core.skinning.network import load_model
    rec = load_skin_record(args.data / f"{name}.npz")
    feats = CachedFeatures(RESULTS / "skin_features")
    fs = feats(rec["verts"], rec["faces"], rec["joints"], rec["parents"], rec["tails"])
    rows = {}
    cache = args.out / "cache" / "blender" / f"{name}.npz"
    if cache.is_file():
        with np.load(cache) as c:
            rows["bone heat"] = score(rec, c["W"])
    rows["prior"] = score(rec, predict_weights(rec["verts"], rec["faces"], rec["joints"], rec["parents"],
                                               rec["tails"], model="prior"))
    for label, path in models.items():
        model = load_model(path) if path else None
        if model is None:
            from bonesmith.core.skinning.network import default_model
            model = default_model()
        rows[label] = score(rec, weights_from_features(fs, model, names=rec["names"]))
        if args.mixed and model.gate is not None:      # what the gate holds back: the network for every rig
            rows[label + "_ungated"] = score(rec, weights_from_features(fs, model.ungated()))
    return name, rows


def main(argv=None) -> int:
    args = parse_args(argv)
    family = args.within or args.leave_out
    args.tag = args.tag or (f"skin_adapt_{'within' if args.within else 'without'}_{family}" if family
                            else f"skin_adapt_mixed_{args.source.rstrip('_')}" if args.mixed else "skin_adapt")
    chars = characters(args)
    ks = [int(k) for k in args.k.split(",")]
    if args.leave_out:                    # one run: k = every character of the other families
        ks, args.draws = [sum(c["family"] != args.leave_out for c in chars)], 1
    print(f"{len(chars)} {args.source} characters, {len({c['family'] for c in chars})} families; "
          f"k = {ks}, {args.draws} draws", flush=True)
    # features of every character once (the cache makes the runs below cheap)
    feats = CachedFeatures(RESULTS / "skin_features")
    for c in chars:
        feats(c["vertices"], c["faces"], c["joints"], c["parents"], c["tails"])
    with tempfile.TemporaryDirectory(prefix="skin_adapt_") as workdir, \
            ProcessPoolExecutor(args.jobs) as pool:
        jobs, tests = [], {}
        for k in ks:
            for d in range(args.draws):
                train, test = draw(chars, k, d, args.within, args.leave_out, args.mixed)
                tests[(k, d)] = [c["name"] for c in test]
                jobs.append((k, d, train, args, workdir))
        runs = {}
        for k, d, path, report, seconds in pool.map(fine_tune, jobs):
            runs[(k, d)] = (path, report, seconds)
            print(f"k={k} draw {d}: {report['train']}  best epoch {report['best_epoch']}, "
                  f"CV L1 {report['start_val_l1']:.3f} -> {report['best_val_l1']:.3f}"
                  f"{' (kept the start model)' if report['kept_start'] else ''}, {seconds:.0f} s", flush=True)
        names = sorted({n for v in tests.values() for n in v})
        eval_jobs = [(n, {f"k{k}_d{d}": runs[(k, d)][0] for (k, d), t in tests.items() if n in t}
                      | {"default": None}, args) for n in names]
        scores = dict(pool.map(evaluate, eval_jobs))
    if args.mixed:
        write_mixed(args, chars, tests, runs, scores)
        return 0
    rows = []
    for (k, d), test in tests.items():
        path, report, seconds = runs[(k, d)]
        for method, key in (("bone heat", "bone heat"), ("prior", "prior"), ("default model", "default"),
                            ("fine-tuned", f"k{k}_d{d}")):
            vals = [scores[n][key] for n in test if key in scores[n]]
            row = {"k": k, "draw": d, "method": method, "test_chars": len(vals),
                   "train": " ".join(report["train"]), "best_epoch": report["best_epoch"],
                   "train_seconds": round(seconds, 1) if method == "fine-tuned" else ""}
            row.update({m: float(np.nanmean([v[m] for v in vals])) for m in METRICS})
            rows.append(row)
    write(args, rows, ks)
    return 0


def write_csv(args, rows):
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / f"{args.tag}.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def write_mixed(args, chars, tests, runs, scores):
    """Per draw and family: in the folder or not, the default and the trained model's L1
    and deformation error on the family's test characters, and which model the gate used."""
    family = {c["name"]: c["family"] for c in chars}
    rows = []
    for (k, d), test in tests.items():
        path, report, seconds = runs[(k, d)]
        folder = {family[n] for n in report["train"]}
        for fam in sorted({family[n] for n in test}):
            names = [n for n in test if family[n] == fam]
            m = lambda key, metric: float(np.nanmean([scores[n][key][metric] if key in scores[n]  # noqa: E731
                                                      else np.nan for n in names]))
            rows.append({"k": k, "draw": d, "family": fam, "in_folder": sum(family[n] == fam for n in report["train"]),
                         "test_chars": len(names), "default_l1": m("default", "l1"),
                         "trained_l1": m(f"k{k}_d{d}", "l1"), "ungated_l1": m(f"k{k}_d{d}_ungated", "l1"),
                         "default_deform": m("default", "deform_mean"),
                         "trained_deform": m(f"k{k}_d{d}", "deform_mean"),
                         "unweighted": m(f"k{k}_d{d}", "unweighted"),
                         "train_seconds": round(seconds, 1), "in": fam in folder})
    write_csv(args, rows)
    table = []
    for r in sorted(rows, key=lambda r: (r["k"], r["draw"], not r["in"], r["family"])):
        if r["in"] or r["trained_l1"] != r["default_l1"]:
            table.append([r["k"], r["draw"], r["family"], r["in_folder"], r["test_chars"], f"{r['default_l1']:.3f}",
                          f"{r['trained_l1']:.3f}", f"{r['trained_l1'] / r['default_l1']:.3f}",
                          f"{r['ungated_l1'] / r['default_l1']:.3f}",
                          f"{r['default_deform']:.3f}", f"{r['trained_deform']:.3f}"])
    summary = []
    for k in sorted({r["k"] for r in rows}):
        for inside in (True, False):
            rs = [r for r in rows if r["k"] == k and r["in"] == inside]
            if not rs:
                continue
            ratios = [r["trained_l1"] / r["default_l1"] for r in rs]
            worse = sum(r["trained_deform"] > r["default_deform"] + 1e-9 for r in rs)
            ungated = [r["ungated_l1"] / r["default_l1"] for r in rs]
            summary.append([k, "in the folder" if inside else "not in the folder", len(rs),
                            f"{np.mean(ratios):.3f}", f"{np.max(ratios):.3f}", f"{np.nanmean(ungated):.3f}",
                            f"{np.nanmax(ungated):.3f}", worse,
                            f"{np.mean([r['train_seconds'] for r in rs]):.0f}"])
    text = (f"# Auto Skin trained on a mixed folder of {args.source} ({args.draws} draws per k)\n\n"
            "Per family: the trained (gated) model's L1 on its characters not in the folder / the default "
            "model's; *ungated*: the trained network used for every rig (what the gate holds back).\n\n"
            + markdown_table(["k", "families", "family-draws", "mean trained / default L1", "max",
                              "ungated mean", "ungated max", "deformation worse", "train s"], summary)
            + "\n\nFamilies in the folder, and any other whose weights changed:\n\n"
            + markdown_table(["k", "draw", "family", "in folder", "test chars", "default L1", "trained L1",
                              "ratio", "ungated ratio", "default deform %", "trained deform %"], table))
    (args.out / f"{args.tag}.md").write_text(text + "\n")
    print(text)


def write(args, rows, ks):
    write_csv(args, rows)
    table = []
    for k in ks:
        for method in ("bone heat", "prior", "default model", "fine-tuned"):
            rs = [r for r in rows if r["k"] == k and r["method"] == method]
            if not rs or not rs[0]["test_chars"]:
                continue
            m = lambda key: float(np.mean([r[key] for r in rs]))  # noqa: E731
            secs = f"{m('train_seconds'):.0f}" if method == "fine-tuned" else ""
            table.append([k, method, f"{m('test_chars'):.0f}", f"{m('l1'):.3f}", f"{m('precision'):.3f}",
                          f"{m('recall'):.3f}", f"{m('deform_mean'):.3f}", f"{m('deform_max'):.2f}",
                          f"{m('unweighted'):.1f}", secs])
        default = np.mean([r["l1"] for r in rows if r["k"] == k and r["method"] == "default model"])
        tuned = np.mean([r["l1"] for r in rows if r["k"] == k and r["method"] == "fine-tuned"])
        table.append([k, "**fine-tuned / default L1**", "", f"**{tuned / default:.3f}**", "", "", "", "", "", ""])
    what = (f"variants of {args.within}: trained on k of them, tested on the others" if args.within
            else f"{args.leave_out}, trained on every other family" if args.leave_out
            else "families not trained on")
    text = (f"# Auto Skin fine-tuned on a new studio ({args.source}, {args.draws} draws per k)\n\n"
            f"Mean over draws of the mean over test characters ({what}).\n\n"
            + markdown_table(["k", "method", "test chars", "L1", "precision", "recall", "deform mean %",
                              "deform max %", "unweighted verts", "train s"], table))
    (args.out / f"{args.tag}.md").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    sys.exit(main())
