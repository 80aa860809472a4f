# SPDX-License-Identifier: GPL-3.0-or-later
"""The skin-weight methods bench/skin.py compares, each behind one function that runs
inside a benchmark worker process:

    run_<method>(verts, faces, joints, tails, parents, **kw) -> dict(W (V,J), seconds, info)

- blender:   Blender's own Automatic Weights (bone heat): the mesh and the artist's
             armature are built with bpy, `bpy.ops.object.parent_set(type='ARMATURE_AUTO')`,
             vertex groups read back. Rows that got no weight stay 0 (unweighted).
- geodesic:  a geodesic-softmax baseline: softmax over the 5 geodesically nearest bones
             (core.skinning.geodesic) of -l / tau, tau a fixed share of the model size.
- prior:     Bonesmith's heat prior alone (predict_weights(model="prior")).
- autoskin:  predict_weights with the default model (or --model PATH).
`seconds` times the method itself, library imports excluded.
"""
from __future__ import annotations

import time

import numpy as np

GEO_TAU = 0.02     # softmax temperature in units of the longest bbox side (chosen on train families)


def warm_up(method: str) -> str:
    if method == "blender":
        import bpy  # noqa: F401
    import bonesmith.core.skinning  # noqa: F401
    return method


def run_blender(verts, faces, joints, tails, parents, **kw):
    import bpy
    bpy.ops.wm.read_factory_settings(use_empty=True)
    t0 = time.perf_counter()
    V = np.asarray(verts, dtype=np.float64)
    F = np.asarray(faces, dtype=np.int64)
    me = bpy.data.meshes.new("body")
    me.vertices.add(len(V))
    me.vertices.foreach_set("co", V.astype(np.float32).ravel())
    me.loops.add(F.size)
    me.loops.foreach_set("vertex_index", F.astype(np.int32).ravel())
    me.polygons.add(len(F))
    me.polygons.foreach_set("loop_start", np.arange(0, F.size, 3, dtype=np.int32))
    me.update()
    ob = bpy.data.objects.new("body", me)
    bpy.context.scene.collection.objects.link(ob)
    arm = bpy.data.armatures.new("rig")
    ao = bpy.data.objects.new("rig", arm)
    bpy.context.scene.collection.objects.link(ao)
    bpy.context.view_layer.objects.active = ao
    bpy.ops.object.mode_set(mode="EDIT")
    names = [f"b{j:03d}" for j in range(len(joints))]
    ebs = []
    for j in range(len(joints)):
        eb = arm.edit_bones.new(names[j])
        h = np.asarray(joints[j], float)
        t = np.asarray(tails[j], float)
        if np.linalg.norm(t - h) < 1e-6 * max(1.0, float(np.abs(h).max())):
            t = h + np.array([0, 0, 1e-3 * max(1.0, float(np.ptp(V, axis=0).max()))])
        eb.head = h.tolist()
        eb.tail = t.tolist()
        ebs.append(eb)
    for j, p in enumerate(parents):
        if p >= 0:
            ebs[j].parent = ebs[int(p)]
    bpy.ops.object.mode_set(mode="OBJECT")
    for o in bpy.context.view_layer.objects:
        o.select_set(False)
    ob.select_set(True)
    ao.select_set(True)
    bpy.context.view_layer.objects.active = ao
    t1 = time.perf_counter()
    bpy.ops.object.parent_set(type="ARMATURE_AUTO")
    seconds = time.perf_counter() - t1
    W = np.zeros((len(V), len(joints)))
    index = {vg.index: names.index(vg.name) for vg in ob.vertex_groups if vg.name in names}
    for v in me.vertices:
        for g in v.groups:
            j = index.get(g.group)
            if j is not None:
                W[v.index, j] = g.weight
    return {"W": W, "seconds": seconds, "info": {"setup_s": t1 - t0}}


def run_geodesic(verts, faces, joints, tails, parents, tau=GEO_TAU, **kw):
    from bonesmith.core.skinning.features import vertex_features
    from bonesmith.core.skinning.weights import prune, scatter
    t0 = time.perf_counter()
    fs = vertex_features(verts, faces, joints, parents, tails)
    g = fs.geodesic.astype(np.float64)
    z = -(g - g[:, :1]) / tau
    p = np.exp(z) * fs.mask
    p /= p.sum(axis=1, keepdims=True)
    Wn = prune(scatter(fs.candidates, p, fs.n_bones), 4, 0.01)
    return {"W": Wn[fs.vmap], "seconds": time.perf_counter() - t0, "info": {}}


def run_prior(verts, faces, joints, tails, parents, **kw):
    from bonesmith.core.skinning import predict_weights
    t0 = time.perf_counter()
    W, info = predict_weights(verts, faces, joints, parents, tails, model="prior", return_info=True,
                              heat_options=kw.get("heat_options"))
    return {"W": W, "seconds": time.perf_counter() - t0, "info": {k: v for k, v in info.items()
                                                                  if isinstance(v, (int, float, str))}}


def run_autoskin(verts, faces, joints, tails, parents, model=None, **kw):
    from bonesmith.core.skinning import predict_weights
    t0 = time.perf_counter()
    W, info = predict_weights(verts, faces, joints, parents, tails, model=model, return_info=True)
    return {"W": W, "seconds": time.perf_counter() - t0, "info": {k: v for k, v in info.items()
                                                                  if isinstance(v, (int, float, str))}}


# Auto Skin's stages for --profile: (label, module file, function) whose cumulative
# seconds cProfile reports; nested stages are inside "features" (see docs/auto_skin.md).
PROFILE_STAGES = [
    ("prepare (weld, clean, stand up)", "skinning/prep.py", "prepare"),
    ("dense proxy (decimate)", "skinning/prep.py", "dense_proxy"),
    ("features, all", "skinning/features.py", "compute_features"),
    ("  bone distances", "skinning/geometry.py", "bone_distances"),
    ("  visibility tests", "skinning/heat.py", "visible_nearest"),
    ("  heat: factorisation", "scipy/sparse/linalg/_dsolve/linsolve.py", "splu"),
    ("  heat: solves", "~", "<method 'solve' of 'SuperLU' objects>"),
    ("  geodesics", "skinning/geodesic.py", "bone_geodesics"),
    ("network", "skinning/network.py", "forward"),
    ("weights back to the mesh", "skinning/prep.py", "transfer_weights"),
    ("pruning", "skinning/weights.py", "prune"),
]


def profile_autoskin(verts, faces, joints, tails, parents, model=None, **kw):
    """run_autoskin under cProfile: seconds per stage (PROFILE_STAGES) and in all."""
    import cProfile
    import pstats
    profiler = cProfile.Profile()
    profiler.enable()
    result = run_autoskin(verts, faces, joints, tails, parents, model=model)
    profiler.disable()
    stats = pstats.Stats(profiler).stats
    stages = {}
    for label, where, name in PROFILE_STAGES:
        stages[label] = sum(v[3] for (path, _, func), v in stats.items() if func == name and path.endswith(where))
    return {"W": result["W"], "seconds": result["seconds"], "stages": stages}


METHODS = {"blender": run_blender, "geodesic": run_geodesic, "prior": run_prior, "autoskin": run_autoskin}
