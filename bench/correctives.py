# SPDX-License-Identifier: GPL-3.0-or-later
"""Learned correctives benchmark (docs/correctives.md, issue 4): how much of an expensive
deformer stack plain LBS + refined weights + baked shape keys reproduce, and at what cost.

    .venv/bin/python bench/correctives.py [--only NAME[,NAME]] [--train 500] [--test 50]
        [--max-degrees 45] [--budget-ms 4] [--seed 0]

Ground truth: each character's artist weights on an Armature modifier with Preserve
Volume, followed by a Corrective Smooth modifier (Blender defaults), evaluated by Blender
for random poses (every non-root bone turned about a random axis by up to --max-degrees;
training and held-out poses are independent draws). Rows, on the held-out poses (mean and
max vertex distance to the ground truth, % of the rest bounding-box diagonal):
- plain LBS: the artist's weights, no correctives (what a game engine runs);
- refined W: LBS with weights refitted to the ground truth (fit_correctives without
  pose correctives);
- full rank: Pose_net with all 9 components per joint (an upper bound, not baked);
- baked model: the compact Pose_net with as many shape keys as the live-driver budget
  allows for this vertex count (core.correctives.key_budget), refined W;
- Blender live: that model baked onto a plain-LBS copy of the mesh (refined weights in
  vertex groups, shape keys driven by simple-expression drivers), evaluated by Blender.
Cost: CPU milliseconds per frame of the copy with its driven keys minus with the keys
muted, over the held-out poses keyed on frames (best of 5 passes); the ~15k-vertex
character is a record subdivided once in Blender (NAME@1).
Output: bench/results/correctives.md and .csv.
"""
from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import DATA_DEFAULT, RESULTS, fmt, markdown_table  # noqa: E402

# NAME@N: the record's mesh subdivided N times (quat_Alien_Helmet@1: ~15k vertices)
DEFAULT = ("mpfb_game_engine_neutral", "quat_Alien_Helmet@1", "quat_Smooth_Female_Casual",
           "quat_Alien", "quat_Rat")


def errors(pred, truth, diag) -> tuple[float, float]:
    d = np.linalg.norm(pred - truth, axis=-1) / diag * 100
    return float(d.mean()), float(d.max())


def build_scene(path, levels: int = 0):
    """The character with its ground-truth deformer stack, its mesh first subdivided
    `levels` times (Catmull-Clark, applied: weights interpolated by Blender).
    Returns (armature, mesh)."""
    import bpy
    from bonesmith.bridge.file_import import load_rigged_npz

    bpy.ops.wm.read_factory_settings(use_empty=True)
    armature, obj = load_rigged_npz(path)
    if levels:
        subsurf = obj.modifiers.new("Subdivision", 'SUBSURF')
        subsurf.levels = levels
        obj.modifiers.move(len(obj.modifiers) - 1, 0)
        with bpy.context.temp_override(object=obj, active_object=obj):
            bpy.ops.object.modifier_apply(modifier=subsurf.name)
    obj.modifiers[0].use_deform_preserve_volume = True
    obj.modifiers.new("CorrectiveSmooth", 'CORRECTIVE_SMOOTH')
    return armature, obj


def frame_cost(armature, copy, rotations, names) -> float:
    """CPU ms per frame that the copy's driven shape keys add (best of 5 passes)."""
    import bpy
    from bonesmith.bridge import correctives as bc

    scene = bpy.context.scene
    for f, pose in enumerate(rotations, start=1):
        bc.set_pose(armature, names, pose)
        for name in names:
            armature.pose.bones[name].keyframe_insert("rotation_quaternion", frame=f)
    keys = bc.corrective_keys(copy)

    def per_frame(muted: bool) -> float:
        for kb in keys:
            kb.mute = muted
        best = np.inf
        for _ in range(5):
            start = time.process_time()
            for f in range(1, len(rotations) + 1):
                scene.frame_set(f)
                copy.evaluated_get(bpy.context.evaluated_depsgraph_get())
            best = min(best, (time.process_time() - start) / len(rotations) * 1000)
        return best

    cost = per_frame(False) - per_frame(True)
    for kb in keys:
        kb.mute = False
    return cost


def run(path, levels, args) -> dict:
    from bonesmith.bridge import correctives as bc
    from bonesmith.core import correctives as cc
    from bonesmith.core.mesh import bbox_diagonal

    armature, obj = build_scene(path, levels)
    ch = bc.character_arrays(armature, [obj])
    names, T, W = ch["names"], ch["vertices"], ch["weights"]
    args_fit = ([T], ch["faces"], [ch["joints"]], ch["parents"], W)
    diag = bbox_diagonal(T)
    B = bc.bone_rest_rotations(armature, names)
    R = cc.random_rotations(ch["parents"], args.train + args.test, max_degrees=args.max_degrees,
                            seed=args.seed)
    start = time.perf_counter()
    G = bc.sample_posed_vertices(armature, [obj], R, names)
    gt_s = time.perf_counter() - start
    tr, te = slice(0, args.train), slice(args.train, None)
    A = cc.skinning_matrices(ch["joints"], ch["parents"], R[te])

    row = {"name": path.stem + (f" (subdivided {levels}x)" if levels else ""), "vertices": len(T), "joints": len(names), "gt_s": gt_s}
    row["lbs"] = errors(cc.lbs(T, W, A), G[te], diag)
    fits = {}
    for label, options in (("refined_w", dict(pose_correctives=False)), ("full", {}),
                           ("model", dict(max_keys=cc.key_budget(len(T), args.budget_ms)))):
        start = time.perf_counter()
        fits[label] = cc.fit_correctives(*args_fit, [R[tr]], [G[tr]], **options)
        row[f"{label}_s"] = time.perf_counter() - start
        row[label] = errors(fits[label].pose(R[te]), G[te], diag)

    model = fits["model"]
    keys = model.live_keys(B, names=names)
    copy = bc.lbs_copy(obj, armature)
    bc.write_refined_weights([copy], ch["mesh_set"], model.weights, names)
    bc.write_live_keys([copy], ch["mesh_set"], armature, keys, names)
    row["keys"] = len(keys)
    row["live"] = errors(bc.sample_posed_vertices(armature, [copy], R[te], names), G[te], diag)
    row["ms"] = frame_cost(armature, copy, R[te], names)
    return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA_DEFAULT)
    parser.add_argument("--only", default=",".join(DEFAULT),
                        help="comma-separated record names; NAME@N subdivides the mesh N times")
    parser.add_argument("--train", type=int, default=500)
    parser.add_argument("--test", type=int, default=50)
    parser.add_argument("--max-degrees", type=float, default=45.0)
    parser.add_argument("--budget-ms", type=float, default=4.0,
                        help="CPU ms per frame the live keys may cost (sets the key count)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RESULTS / "correctives")
    args = parser.parse_args(argv)

    rows = []
    for item in args.only.split(","):
        name, _, levels = item.strip().partition("@")
        path = args.data / f"{name}.npz"
        print(f"{item} ...", flush=True)
        rows.append(run(path, int(levels or 0), args))
        print(format_row(rows[-1]), flush=True)
    write(rows, args)
    return 0


def format_row(r) -> str:
    ratio = r["model"][0] / r["lbs"][0]
    return (f"  LBS {fmt(r['lbs'][0], 4)}/{fmt(r['lbs'][1], 3)}  refined W {fmt(r['refined_w'][0], 4)}"
            f"  full {fmt(r['full'][0], 4)}  model {fmt(r['model'][0], 4)}/{fmt(r['model'][1], 3)}"
            f" ({ratio:.0%} of LBS)  live {fmt(r['live'][0], 4)}  keys {r['keys']}  {fmt(r['ms'], 2)} ms")


def write(rows, args) -> None:
    header = ["character", "V", "J", "plain LBS mean / max", "refined W", "full rank",
              "baked model", "model / LBS", "Blender live", "live / model", "keys",
              "ms/frame", "fit s", "ground truth s"]
    table = []
    for r in rows:
        pair = lambda e: f"{fmt(e[0], 4)} / {fmt(e[1], 3)}"  # noqa: E731
        table.append([r["name"], r["vertices"], r["joints"], pair(r["lbs"]), pair(r["refined_w"]),
                      pair(r["full"]), pair(r["model"]), f"{r['model'][0] / r['lbs'][0]:.0%}",
                      pair(r["live"]), f"{r['live'][0] / r['model'][0]:.3f}", r["keys"],
                      fmt(r["ms"], 2), fmt(r["model_s"], 1), fmt(r["gt_s"], 1)])
    text = (f"Held-out poses: {args.test}, training poses: {args.train}, random rotations up to "
            f"{args.max_degrees:g}° per bone, key budget {args.budget_ms:g} ms/frame; errors in % of "
            "the bbox diagonal (mean / max over held-out poses and vertices).\n\n"
            + markdown_table(header, table))
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".md").write_text(text + "\n")
    with open(args.out.with_suffix(".csv"), "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(table)


if __name__ == "__main__":
    sys.exit(main())
