# SPDX-License-Identifier: GPL-3.0-or-later
"""What each robustness step of the heat prior buys: the prior with one step switched
off at a time, against the artist's weights, per source (all records or one split).

    .venv/bin/python bench/skin_ablation.py [--split all|val|train] [--only quat_]
        [--variants default,no_weld,...] [--jobs 2]

Variants (core/skinning/heat.py HeatOptions unless said):
  default        the prior as shipped
  blender        Blender's algorithm re-implemented: no weld, input winding, no weak heat
                 (parts without heat fall back to their nearest bone), plain pruning
  no_weld        duplicate positions (seams) not merged (prep.prepare_mesh(weld=False))
  no_orient      the input winding for normals and front-facing occluders (as Blender)
  no_front_only  any triangle blocks a vertex's view of a bone (not only facing ones)
  no_normal_penalty   plain distance picks the nearest bone
  no_visibility  the nearest bone always gives heat
  k1             heat strength 1 on the mixed-Voronoi Laplacian (4x weaker than Blender)
  tries4         a hidden nearest bone passes heat to the next visible one (Baran)
  no_limit       no Blender weight limit (w < 0.025 -> 0)
  plain_prune    pruned weight spread over the kept bones (not to the nearest in the tree)
Metrics as bench/skin.py (L1, deformation error mean %, unweighted vertices), means
over characters; "heat ok" = characters where Blender's bone heat left no vertex
unweighted (needs bench/results/cache/blender from a bench/skin.py run).
Output: bench/results/skin_ablation.md.
"""
from __future__ import annotations

import argparse
import sys
import time
from multiprocessing import Pool
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import DATA_DEFAULT, RESULTS, SOURCES, list_records, markdown_table  # noqa: E402
from skin import load_skin_record, score  # noqa: E402
from splits import split_of  # noqa: E402

VARIANTS = {
    "default": {},
    "blender": {"weld": False, "orient": False, "weak": False, "redistribute": False},
    "no_weld": {"weld": False},
    "no_orient": {"orient": False},
    "no_front_only": {"front_only": False},
    "no_normal_penalty": {"normal_penalty": False},
    "no_visibility": {"visibility": False},
    "k1": {"k": 1.0},
    "tries4": {"max_visibility_tries": 4},
    "no_limit": {"limit_weights": False},
    "plain_prune": {"redistribute": False},
}


def run_variant(rec, spec):
    from bonesmith.core.skinning.heat import HeatOptions, bone_heat
    from bonesmith.core.skinning.prep import prepare_bones, prepare_mesh
    from bonesmith.core.skinning.weights import prune
    spec = dict(spec)
    weld = spec.pop("weld", True)
    redistribute = spec.pop("redistribute", True)
    weak = spec.pop("weak", True)
    if not weak:
        spec["weak_heat"] = 1e-9          # parts without heat: (numerically) no heat
    mesh = prepare_mesh(rec["verts"], rec["faces"], weld=weld)
    bones = prepare_bones(mesh, rec["joints"], rec["parents"], rec["tails"])
    res = bone_heat(mesh, bones, HeatOptions(**spec))
    W = res.W
    if not weak:                          # what Blender leaves: no weights on those parts
        has = np.bincount(mesh.comp, weights=(res.source_bone >= 0).astype(float),
                          minlength=mesh.n_comp) > 0
        W = np.where(has[mesh.comp][:, None], W, 0.0)
    out = np.zeros_like(W)
    ok = W.sum(axis=1) > 0
    out[ok] = prune(W[ok], 4, 0.0, parents=bones.parents if redistribute else None)
    return out[mesh.vmap]


def _job(args):
    path, names = args
    rec = load_skin_record(path)
    cache = RESULTS / "cache" / "blender" / f"{rec['name']}.npz"
    heat_ok = None
    if cache.exists():
        with np.load(cache) as c:
            heat_ok = bool((c["W"].sum(axis=1) > 0).all())
    out = {}
    for name in names:
        t0 = time.perf_counter()
        try:
            W = run_variant(rec, VARIANTS[name])
            s = score(rec, W)
            s["seconds"] = time.perf_counter() - t0
        except Exception as exc:  # noqa: BLE001 - a failed variant is a result
            s = {"error": f"{type(exc).__name__}: {exc}"}
        out[name] = s
    return rec["name"], heat_ok, out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA_DEFAULT)
    ap.add_argument("--split", default="all", choices=["all", "val", "train"])
    ap.add_argument("--only", default=None)
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args(argv)
    names = [v for v in a.variants.split(",") if v]
    paths = list_records(a.data, a.only)
    if a.split != "all":
        paths = [p for p in paths if split_of(p.stem) == a.split]
    t0 = time.perf_counter()
    with Pool(a.jobs) as pool:
        results = pool.map(_job, [(p, names) for p in paths])
    rows = []
    for src in SOURCES:
        sub = [r for r in results if r[0].startswith(src)]
        if not sub:
            continue
        for name in names:
            def mean(rs, key):
                v = [r[2][name][key] for r in rs if key in r[2][name] and np.isfinite(r[2][name][key])]
                return f"{np.mean(v):.3f}" if v else "–"
            good = [r for r in sub if r[1]]
            fails = sum(1 for r in sub if "error" in r[2][name])
            unw = sum(r[2][name].get("unweighted", 0) for r in sub)
            rows.append([src.rstrip("_"), name, len(sub), mean(sub, "l1"), mean(sub, "deform_mean"),
                         mean(good, "l1"), mean(good, "deform_mean"), unw, fails])
    header = ["source", "variant", "chars", "L1", "deform mean %", "L1 (heat ok)",
              "deform mean % (heat ok)", "unweighted verts", "failed"]
    cmd = "bench/skin_ablation.py " + " ".join(sys.argv[1:] if argv is None else argv)
    text = (f"# Heat prior ablation\n\n`{cmd}` — {len(results)} characters, "
            f"{time.perf_counter() - t0:.0f} s.\n\n" + markdown_table(header, rows) + "\n")
    print(text)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "skin_ablation.md").write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
