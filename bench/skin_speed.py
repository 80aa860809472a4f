# SPDX-License-Identifier: GPL-3.0-or-later
"""Auto Skin speed of two or more checkouts, compared in one process.

    git worktree add /tmp/before COMMIT
    .venv/bin/python bench/skin_speed.py /tmp/before . [--reps 12] [--every 29]

`predict_weights` with each tree's shipped model on the sample and every `--every`-th
character of ../shared/data; each tree is imported as its own package, and the trees
take turns call by call, so the machine's load (which moves separate runs by several per
cent on the 2-core machine) falls on all of them alike. Per character the best of
`--reps` calls; the total is their sum, and the ratios are to the first tree.
"""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"


def load_tree(root: Path, name: str):
    """(predict_weights, load_record) of the extension checked out at `root`."""
    spec = importlib.util.spec_from_file_location(name, root / "__init__.py",
                                                  submodule_search_locations=[str(root)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    skinning = importlib.import_module(name + ".core.skinning")
    train = importlib.import_module(name + ".core.skinning.train")
    return skinning.predict_weights, train.load_record


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trees", nargs="+", type=Path, help="checkouts of the extension (the first is the base)")
    ap.add_argument("--reps", type=int, default=12, help="calls per character and tree (the best counts)")
    ap.add_argument("--every", type=int, default=29, help="every N-th character of ../shared/data")
    args = ap.parse_args(argv)
    trees = [load_tree(t.resolve(), f"bonesmith_speed{k}") for k, t in enumerate(args.trees)]
    paths = [ROOT / "samples" / "quat_Male_Casual.npz"] + sorted(DATA.glob("*.npz"))[::args.every]
    records = [trees[0][1](p) for p in paths]
    total = np.zeros(len(trees))
    print("| character | vertices | " + " | ".join(f"ms ({t})" for t in args.trees) + " |")
    print("|---|---:|" + "---:|" * len(trees))
    for rec in records:
        call = (rec["vertices"], rec["faces"], rec["joints"], rec["parents"], rec["tails"])
        best = np.full(len(trees), np.inf)
        for predict, _ in trees:
            predict(*call)                      # warm: the model loaded, caches filled
        for _ in range(args.reps):
            for k, (predict, _) in enumerate(trees):
                start = time.perf_counter()
                predict(*call)
                best[k] = min(best[k], time.perf_counter() - start)
        total += best
        print(f"| {rec['name']} | {len(rec['vertices'])} | " + " | ".join(f"{1000 * b:.1f}" for b in best) + " |",
              flush=True)
    print("| total | | " + " | ".join(f"{1000 * t:.1f} ({t / total[0]:.3f}x)" for t in total) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
