# SPDX-License-Identifier: GPL-3.0-or-later
"""Pictures of humanoid rigs for the README (docs/images/):

    .venv/bin/python bench/humanoid_picture.py [--data ../shared/data]

- humanoid_sample_rigify.png: the bundled sample (tests/data, CC0) with the Rigify metarig
  of `extract_skeleton(naming="rigify")`, then the deforming bones (DEF-*) of the control
  rig Rigify's Generate Rig made from it;
- humanoid_mpfb_mixamo.png: the MPFB body of ../shared/data (A-pose, CC0) with its
  Mixamo-named standard skeleton. Front views (core.picture), 512 pixels;
- humanoid_hand_rigify.png: the left hand of the CC0 woman in tests/data seen from above,
  with her Rigify metarig's palm and finger bones (left), and the deforming bones Rigify
  generated from them (right).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
from common import DATA_DEFAULT  # noqa: E402

OUT = REPO / "docs" / "images"


def bones_of(armature, prefix=""):
    M = np.array(armature.matrix_world)
    chosen = [b for b in armature.data.bones if b.name.startswith(prefix)]
    heads = np.array([(M @ np.append(b.head_local, 1))[:3] for b in chosen])
    tails = np.array([(M @ np.append(b.tail_local, 1))[:3] for b in chosen])
    return heads, tails


def main(argv=None) -> int:
    import bpy
    import addon_utils  # noqa: I001 - importable once bpy is
    from bonesmith.bridge.armature import skeleton_to_armature
    from bonesmith.core.picture import draw_front_view
    from bonesmith.core.skeleton import extract_skeleton

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA_DEFAULT)
    args = ap.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)

    with np.load(REPO / "samples" / "quat_Male_Casual.npz") as d:
        V, F = d["verts"].astype(float), d["faces"]
    metarig = skeleton_to_armature(extract_skeleton(V, F, naming="rigify"), name="metarig")
    addon_utils.enable("rigify", default_set=True)
    bpy.context.view_layer.objects.active = metarig
    with bpy.context.temp_override(object=metarig):
        bpy.ops.pose.rigify_generate()
    rig = next(o for o in bpy.data.objects if o.type == 'ARMATURE' and o is not metarig)
    meta, deform = bones_of(metarig), bones_of(rig, "DEF-")
    shift = np.array([np.ptp(V[:, 0]) * 1.1, 0, 0])
    draw_front_view(OUT / "humanoid_sample_rigify.png", np.vstack([V - shift / 2, V + shift / 2]),
                    np.vstack([F, F + len(V)]),
                    (np.vstack([meta[0] - shift / 2, deform[0] + shift / 2]),
                     np.vstack([meta[1] - shift / 2, deform[1] + shift / 2])),
                    np.vstack([V - shift / 2, V + shift / 2]), 768)

    _hand_picture(draw_front_view, skeleton_to_armature, extract_skeleton)

    with np.load(args.data / "mpfb_game_engine_neutral.npz") as d:
        V, F = d["verts"].astype(float), d["faces"]
    sk = extract_skeleton(V, F, naming="mixamo")
    draw_front_view(OUT / "humanoid_mpfb_mixamo.png", V, F, (sk.joints, sk.tails), V, 512)
    print("wrote", *sorted(p.name for p in OUT.glob("humanoid_*.png")))
    return 0


def _hand_picture(draw_front_view, skeleton_to_armature, extract_skeleton):
    import bpy
    with np.load(REPO / "tests" / "data" / "quatU_women_casual.npz") as d:
        V, F = d["verts"].astype(float), d["faces"]
    sk = extract_skeleton(V, F, naming="rigify")
    metarig = skeleton_to_armature(sk, name="metarig")
    before = set(bpy.data.objects)
    bpy.context.view_layer.objects.active = metarig
    with bpy.context.temp_override(object=metarig):
        bpy.ops.pose.rigify_generate()
    rig = next(o for o in bpy.data.objects if o.type == 'ARMATURE' and o not in before)
    wrist = sk.joints[sk.names.index("hand.L")]
    reach = 1.6 * np.linalg.norm(sk.tails[sk.names.index("f_middle.03.L")] - wrist)
    near = lambda points: np.linalg.norm(points - wrist, axis=1) < reach  # noqa: E731
    top = np.array([[1.0, 0, 0], [0, 0, -1.0], [0, 1.0, 0]])             # looking down: y up the picture
    meta, deform = bones_of(metarig), bones_of(rig, "DEF-")
    keep_m, keep_d = near(meta[0]) & near(meta[1]), near(deform[0]) & near(deform[1])
    hand = near(V)
    faces = F[hand[F].all(axis=1)]
    shift = np.array([reach * 2.2, 0, 0])
    W = V @ top.T
    draw_front_view(OUT / "humanoid_hand_rigify.png", np.vstack([W - shift / 2, W + shift / 2]),
                    np.vstack([faces, faces + len(V)]),
                    (np.vstack([meta[0][keep_m] @ top.T - shift / 2, deform[0][keep_d] @ top.T + shift / 2]),
                     np.vstack([meta[1][keep_m] @ top.T - shift / 2, deform[1][keep_d] @ top.T + shift / 2])),
                    np.vstack([W[hand] - shift / 2, W[hand] + shift / 2]), 768)


if __name__ == "__main__":
    sys.exit(main())
