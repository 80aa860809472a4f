# SPDX-License-Identifier: GPL-3.0-or-later
"""The skeleton extractors the benchmark compares, each behind one function.

Every `run_*` takes the rest mesh (V, F) in its own units, runs inside a benchmark
worker process, and returns a plain dict:
    joints (N,3), bones (K,2,3), n_components, one_tree, seconds, info
where `seconds` times the method itself (library imports excluded).

Competitors are used through their public PyPI APIs only (see requirements-bench.txt):
- skeletor (Schlegel): the Au et al. 2008 pipeline it ships — `pre.fix_mesh`,
  `pre.contract` (its defaults: epsilon 0.1, robust Laplacian when installed) and
  `skeletonize.by_edge_collapse`. Its skeleton graph: nodes = joints, edges = bones.
- pygel3d (PyGEL, Bærentzen): `graph.LS_skeleton(graph.from_mesh(Manifold))`, the
  local-separator skeleton. Nodes = joints, edges = bones.
Both get the mesh centred and scaled to a unit box (as Bonesmith does internally) and
their output is mapped back to the input frame. Isolated graph nodes count as joints
and as zero-length bones.
"""
from __future__ import annotations

import importlib
import time

import numpy as np

from common import graph_tree_stats, normalise, parents_tree_stats


def warm_up(method: str, impl: str | None = None) -> str:
    """Import a method's libraries (so a later call times the method, not the imports)."""
    if method == "bonesmith":
        _resolve(impl or BONESMITH_IMPL)
    elif method == "skeletor":
        import skeletor  # noqa: F401
        import trimesh  # noqa: F401
        import skeletor.pre, skeletor.skeletonize  # noqa: F401,E401
    elif method == "pygel3d":
        from pygel3d import graph, hmesh  # noqa: F401
    return method


BONESMITH_IMPL = "bonesmith.core.skeleton:extract_skeleton"


def _resolve(target: str):
    module, _, func = target.partition(":")
    return getattr(importlib.import_module(module), func)


def _graph_result(P, E, seconds, info):
    P = np.asarray(P, dtype=np.float64).reshape(-1, 3)
    E = np.asarray(E, dtype=np.int64).reshape(-1, 2)
    E = E[E[:, 0] != E[:, 1]]
    if len(E):
        E = np.unique(np.sort(E, axis=1), axis=0)
    n_comp, one_tree = graph_tree_stats(len(P), E)
    isolated = np.setdiff1d(np.arange(len(P)), E.reshape(-1))
    bones = np.concatenate([np.stack([P[E[:, 0]], P[E[:, 1]]], axis=1),
                            np.stack([P[isolated], P[isolated]], axis=1)])
    info = dict(info, n_edges=int(len(E)), n_isolated=int(len(isolated)))
    return {"joints": P, "bones": bones, "n_components": n_comp, "one_tree": one_tree,
            "seconds": seconds, "info": info}


def run_bonesmith(V, F, detail: float = 1.0, impl: str | None = None, cache: str | None = None) -> dict:
    if cache:
        cache_contraction(cache)
    extract = _resolve(impl or BONESMITH_IMPL)
    t0 = time.perf_counter()
    sk = extract(V, F, detail=detail)
    seconds = time.perf_counter() - t0
    J = np.asarray(sk.joints, dtype=np.float64).reshape(-1, 3)
    T = np.asarray(sk.tails, dtype=np.float64).reshape(-1, 3)
    parents = np.asarray(sk.parents, dtype=np.int64).reshape(-1)
    roots, one_tree = parents_tree_stats(parents)
    info = {}
    sk_info = getattr(sk, "info", None)
    if isinstance(sk_info, dict):
        info = {k: v for k, v in sk_info.items() if isinstance(v, (int, float, str, bool))}
    return {"joints": J, "bones": np.stack([J, T], axis=1), "parents": parents,
            "n_components": roots, "one_tree": one_tree, "seconds": seconds, "info": info}


def cache_contraction(folder: str) -> None:
    """Make this worker's `extract_skeleton` reuse contractions saved in `folder` (keyed by
    the proxy mesh, the options and the text of core/contraction.py, so a change there
    starts afresh): for tuning the stages after it, which then run 2-3x faster. Seconds
    measured so are not Auto Skeleton's."""
    import hashlib
    import json
    from pathlib import Path

    from bonesmith.core import contraction, skeleton
    if getattr(skeleton.contract, "cached", False):
        return
    code = Path(contraction.__file__).read_bytes()
    original, folder = skeleton.contract, Path(folder)
    folder.mkdir(parents=True, exist_ok=True)

    def contract(V, F, progress=None, **options):
        key = hashlib.sha256(code + np.ascontiguousarray(V, np.float64).tobytes()
                             + np.ascontiguousarray(F, np.int64).tobytes()
                             + repr(sorted(options.items())).encode()).hexdigest()[:24]
        path = folder / f"{key}.npz"
        if path.is_file():
            with np.load(path) as d:
                return d["Vc"], json.loads(str(d["info"]))
        Vc, info = original(V, F, progress=progress, **options)
        np.savez(path, Vc=Vc, info=json.dumps(info))
        return Vc, info

    contract.cached = True
    skeleton.contract = contract


def run_skeletor(V, F) -> dict:
    import skeletor as sk
    import trimesh
    Vn, centre, scale = normalise(V)
    t0 = time.perf_counter()
    mesh = trimesh.Trimesh(Vn, F, process=False)
    fixed = sk.pre.fix_mesh(mesh, inplace=False)
    cont = sk.pre.contract(fixed, progress=False)
    skel = sk.skeletonize.by_edge_collapse(cont, progress=False)
    seconds = time.perf_counter() - t0
    P = np.asarray(skel.vertices, dtype=np.float64) * scale + centre
    info = {"contraction_area_ratio": float(getattr(cont, "epsilon", np.nan))}
    return _graph_result(P, np.asarray(skel.edges), seconds, info)


def run_pygel3d(V, F) -> dict:
    from pygel3d import graph, hmesh
    Vn, centre, scale = normalise(V)
    t0 = time.perf_counter()
    m = hmesh.Manifold.from_triangles(Vn, np.asarray(F, dtype=np.int64))
    g = graph.from_mesh(m)
    s = graph.LS_skeleton(g)
    seconds = time.perf_counter() - t0
    nodes = np.asarray(list(s.nodes()), dtype=np.int64)
    pos = np.asarray(s.positions(), dtype=np.float64)
    index = -np.ones(len(pos), dtype=np.int64)
    index[nodes] = np.arange(len(nodes))
    E = [(index[n], index[k]) for n in nodes for k in s.neighbors(int(n)) if n < k]
    P = pos[nodes] * scale + centre
    return _graph_result(P, np.asarray(E, dtype=np.int64).reshape(-1, 2), seconds, {})


METHODS = {
    "bonesmith": "skeleton_methods:run_bonesmith",
    "skeletor": "skeleton_methods:run_skeletor",
    "pygel3d": "skeleton_methods:run_pygel3d",
}
