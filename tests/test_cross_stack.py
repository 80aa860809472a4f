# SPDX-License-Identifier: GPL-3.0-or-later
"""The two stacks users have (Python 3.11 + numpy 1.26 for Blender 4.2-5.0, Python 3.13 +
numpy 2.x for Blender 5.1-5.2) compute the same rig for the sample character: skeleton,
skin weights (shipped model and heat prior) and learned correctives agree within 1e-6.

`make test` runs the suite on both stacks and names the other stack's interpreter in
BONESMITH_CROSS_PYTHON; this test then runs this file as a script there (core only, no bpy)
and compares. Run as a script: `python tests/test_cross_stack.py OUT.npz`.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

SAMPLE = Path(__file__).resolve().parents[1] / "samples" / "quat_Male_Casual.npz"
TOLERANCE = 1e-6


def rig_sample() -> dict[str, np.ndarray]:
    """Everything the engine computes for the sample, as arrays."""
    from bonesmith.core import correctives as cc
    from bonesmith.core.skeleton import extract_skeleton
    from bonesmith.core.skinning import PRIOR, predict_weights

    with np.load(SAMPLE) as record:
        r = {k: record[k] for k in ("verts", "faces", "joints", "joint_tails", "parents",
                                    "weights", "pose_rot", "pose_verts")}
    verts, faces = r["verts"].astype(np.float64), r["faces"].astype(np.int64)
    skeleton = extract_skeleton(verts, faces)
    out = {"skeleton_joints": skeleton.joints, "skeleton_tails": skeleton.tails,
           "skeleton_parents": skeleton.parents.astype(np.float64)}
    out["auto_weights"] = predict_weights(verts, faces, skeleton.joints, skeleton.parents, skeleton.tails)
    out["artist_rig_weights"] = predict_weights(verts, faces, r["joints"], r["parents"], r["joint_tails"])
    out["artist_rig_prior"] = predict_weights(verts, faces, r["joints"], r["parents"], r["joint_tails"],
                                              model=PRIOR)
    model = cc.fit_correctives([verts], faces, [r["joints"]], r["parents"], r["weights"],
                               [r["pose_rot"]], [r["pose_verts"]], max_keys=20)
    out["corrective_weights"] = model.weights
    out["corrective_poses"] = model.pose(r["pose_rot"])
    return out


def _stack(python: str) -> str:
    code = "import sys, numpy; print(sys.version.split()[0], 'numpy', numpy.__version__)"
    return subprocess.run([python, "-c", code], capture_output=True, text=True).stdout.strip()


def test_other_stack_computes_the_same_rig(cli_env, tmp_path):
    other = os.environ.get("BONESMITH_CROSS_PYTHON")
    if not other:
        pytest.skip("BONESMITH_CROSS_PYTHON names no other interpreter (`make test` sets it)")
    assert Path(other).is_file(), f"BONESMITH_CROSS_PYTHON={other} does not exist: run `make venv venv313`"
    out = tmp_path / "other.npz"
    proc = subprocess.run([other, __file__, str(out)], env=cli_env, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stderr
    here = rig_sample()
    with np.load(out) as there:
        assert sorted(there.files) == sorted(here)
        for name, ours in here.items():
            theirs = there[name]
            assert theirs.shape == ours.shape, (name, theirs.shape, ours.shape)
            diff = float(np.abs(theirs - ours).max()) if ours.size else 0.0
            print(f"{name}: max |difference| {diff:.2e}")
            assert diff <= TOLERANCE, (f"{name} differs by {diff:.3g} between "
                                       f"{_stack(sys.executable)} and {_stack(other)}")


if __name__ == "__main__":
    results = rig_sample()
    np.savez(sys.argv[1], **results)
