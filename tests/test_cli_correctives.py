# SPDX-License-Identifier: GPL-3.0-or-later
"""`python -m bonesmith correctives`: learn from a record's poses or from a rigged .blend
whose deformer stack is the ground truth."""
import re

import numpy as np

from bonesmith.core import correctives as cc
from bonesmith.core.correctives.model import rotation_features

from conftest import SAMPLE


def errors_of(stdout: str) -> dict:
    return {label: float(value) for label, value in
            re.findall(r"(plain LBS|learned)\s+mean ([0-9.]+) %", stdout)}


def test_learns_from_a_record_with_poses(cli, tmp_path):
    with np.load(SAMPLE) as d:
        record = {k: d[k] for k in ("verts", "faces", "joints", "parents", "weights")}
    T, parents = record["verts"], record["parents"]
    R = cc.random_rotations(parents, 60, max_degrees=40, seed=1)
    # a deformation plain LBS cannot make: LBS plus a bulge that grows with each bone's bend
    bulge = 0.02 * np.linalg.norm(np.ptp(T, axis=0))
    bend = np.abs(rotation_features(R)).sum(axis=2)  # (P, J)
    W = record["weights"] / record["weights"].sum(axis=1, keepdims=True)
    rest = T[None] + bulge * (bend @ W.T)[..., None] * np.array([0.0, 1.0, 0.0])
    posed = cc.lbs(rest, W, cc.skinning_matrices(record["joints"], parents, R))
    source = tmp_path / "poses.npz"
    np.savez(source, **record, pose_rot=R, pose_verts=posed)
    out = tmp_path / "model.npz"
    result = cli("correctives", source, "--out", out, "--max-keys", "30", timeout=600)
    assert result.returncode == 0, result.stderr
    found = errors_of(result.stdout)
    assert found["learned"] < 0.5 * found["plain LBS"]
    model = cc.CorrectiveModel.load(out)
    assert len(model.live_keys(np.tile(np.eye(3), (len(parents), 1, 1)))) == 30


def test_learns_from_a_blend_with_preserve_volume(cli_with_bpy, ext_module, scene, tmp_path):
    import bpy
    bpy.context.view_layer.update()   # the view layer forgets objects the fixture removed
    armature, obj = ext_module("bridge.file_import").load_rigged_npz(SAMPLE)
    obj.modifiers[0].use_deform_preserve_volume = True
    source = tmp_path / "rig.blend"
    bpy.data.libraries.write(str(source), {armature, obj})
    out = tmp_path / "model.npz"
    result = cli_with_bpy("correctives", source, "--out", out, "--poses", "60", timeout=600)
    assert result.returncode == 0, result.stderr
    found = errors_of(result.stdout)
    assert found["learned"] < 0.6 * found["plain LBS"]
    assert cc.CorrectiveModel.load(out).rest_verts.shape == (len(obj.data.vertices), 3)


def test_record_without_poses_is_a_clear_error(cli, tmp_path):
    with np.load(SAMPLE) as d:
        source = tmp_path / "still.npz"
        np.savez(source, **{k: d[k] for k in ("verts", "faces", "joints", "parents", "weights")})
    result = cli("correctives", source, "--out", tmp_path / "m.npz", timeout=120)
    assert result.returncode == 2
    assert "pose_rot" in result.stderr and not (tmp_path / "m.npz").exists()


def test_a_single_pose_is_a_clear_error(cli, tmp_path):
    with np.load(SAMPLE) as d:
        source = tmp_path / "one.npz"
        np.savez(source, **{k: d[k] for k in ("verts", "faces", "joints", "parents", "weights")},
                 pose_rot=d["pose_rot"][:1], pose_verts=d["pose_verts"][:1])
    result = cli("correctives", source, "--out", tmp_path / "m.npz", timeout=120)
    assert result.returncode == 2 and "several poses" in result.stderr


def test_a_record_without_poses_or_a_broken_file_is_one_clear_line(cli, tmp_path):
    with np.load(SAMPLE) as d:
        np.savez(tmp_path / "rest_only.npz", **{k: d[k] for k in ("verts", "faces", "joints", "parents", "weights")})
    (tmp_path / "truncated.npz").write_bytes((tmp_path / "rest_only.npz").read_bytes()[:100])
    expected = {"rest_only.npz": "rest_only.npz is not a rigged record with poses: it has no 'pose_rot', "
                                 "'pose_verts' arrays",
                "truncated.npz": "Could not read truncated.npz: it is not a readable .npz record"}
    for name, message in expected.items():
        result = cli("correctives", tmp_path / name, "--out", tmp_path / "model.npz", timeout=120)
        assert result.returncode == 2 and message in result.stderr, result.stderr
        assert "Traceback" not in result.stderr and not (tmp_path / "model.npz").exists()
