# SPDX-License-Identifier: GPL-3.0-or-later
"""`python -m bonesmith correctives A.npz B.npz ... --out family.npz` learns a family model;
`correctives --apply family.npz BODY --out ...` serves a body it never saw: a record (its
model) or a rigged .blend (armature fitted, refined weights, driven shape keys)."""
import re

import numpy as np
import pytest

from bonesmith.core import correctives as cc

from test_correctives_family import make_family


@pytest.fixture(scope="module")
def family_files(tmp_path_factory):
    """Four training records with poses and one new body (rest mesh, true joints, poses)."""
    fam = make_family(count=5, poses=30)
    folder = tmp_path_factory.mktemp("family")
    paths = []
    for i, b in enumerate(fam["bodies"]):
        path = folder / f"body{i}.npz"
        np.savez(path, verts=b["T"], faces=fam["F"], joints=b["J"], joint_tails=b["tails"],
                 joint_names=fam["names"], parents=fam["parents"], weights=fam["W"],
                 pose_rot=b["R"], pose_verts=b["G"])
        paths.append(path)
    return fam, paths


def error(posed, truth):
    return float(np.linalg.norm(posed - truth, axis=-1).mean())


@pytest.fixture(scope="module")
def learned(cli, family_files, tmp_path_factory):
    fam, paths = family_files
    out = tmp_path_factory.mktemp("model") / "family.npz"
    result = cli("correctives", *paths[:4], "--out", out, timeout=600)
    assert result.returncode == 0, result.stderr
    return out, result.stdout


def test_several_records_learn_a_family(learned, family_files):
    out, stdout = learned
    model = cc.CorrectiveModel.load(out)
    assert model.is_family and model.info["identities"] == 4
    assert model.names == [str(n) for n in family_files[0]["names"]]
    rows = re.findall(r"body\d\.npz: (plain LBS|learned)\s+mean ([0-9.]+) %", stdout)
    assert len(rows) == 8
    for plain, learned_row in zip(rows[0::2], rows[1::2]):
        assert float(learned_row[1]) < 0.2 * float(plain[1])
    loo = float(re.search(r"left-out body: ([0-9.]+) %", stdout).group(1))
    assert loo < 0.1          # the bodies differ by up to 15 % in each axis: joints move by % of the size


def test_apply_to_a_new_record_gives_its_model(cli, learned, family_files, tmp_path):
    fam, paths = family_files
    new = fam["bodies"][4]
    out = tmp_path / "body.npz"
    result = cli("correctives", "--apply", learned[0], paths[4], "--out", out)
    assert result.returncode == 0, result.stderr
    body = cc.CorrectiveModel.load(out)
    size = np.linalg.norm(np.ptp(new["T"], axis=0))
    assert np.linalg.norm(body.joints - new["J"], axis=1).mean() / size < 1e-4
    plain = cc.lbs(new["T"], fam["W"], cc.skinning_matrices(new["J"], fam["parents"], new["R"]))
    assert error(body.pose(new["R"]), new["G"]) < 0.2 * error(plain, new["G"])
    assert re.search(r"joints: [0-9.]+ % of the size from the body's own", result.stdout)


def test_apply_to_a_rigged_blend_fits_the_armature_and_bakes_keys(cli_with_bpy, ext_module, scene,
                                                                  learned, family_files, tmp_path):
    import bpy
    fam, paths = family_files
    bpy.context.view_layer.update()
    armature, obj = ext_module("bridge.file_import").load_rigged_npz(paths[4])
    # the body arrives with a stale skeleton: the family's mean one
    model = cc.CorrectiveModel.load(learned[0])
    ext_module("bridge.correctives").fit_armature(
        armature, model.joints, model.joints + (fam["bodies"][4]["tails"] - fam["bodies"][4]["J"]),
        model.names)
    source = tmp_path / "body.blend"
    bpy.data.libraries.write(str(source), {armature, obj})
    out = tmp_path / "rigged.blend"
    result = cli_with_bpy("correctives", "--apply", learned[0], source, "--out", out, timeout=600)
    assert result.returncode == 0, result.stderr
    # read the written file's objects (open_mainfile would change the session's file path)
    with bpy.data.libraries.load(str(out)) as (source, target):
        target.objects = list(source.objects)
    rig = next(o for o in target.objects if o.type == 'ARMATURE')
    mesh = next(o for o in target.objects if o.type == 'MESH')
    heads = np.array([list(rig.matrix_world @ rig.data.bones[n].head_local) for n in model.names])
    expected = model.for_body(fam["bodies"][4]["T"]).joints
    assert np.abs(heads - expected).max() < 1e-4 * np.linalg.norm(np.ptp(expected, axis=0))
    keys = [k for k in mesh.data.shape_keys.key_blocks[1:]]
    assert len(keys) == int(re.search(r"(\d+) driven shape keys", result.stdout).group(1)) > 0
    drivers = mesh.data.shape_keys.animation_data.drivers
    assert len(drivers) == len(keys)


def test_apply_refuses_a_single_character_model_and_other_topologies(cli, family_files, tmp_path):
    fam, paths = family_files
    single = tmp_path / "single.npz"
    assert cli("correctives", paths[0], "--out", single, "--max-keys", "5").returncode == 0
    result = cli("correctives", "--apply", single, paths[4], "--out", tmp_path / "x.npz")
    assert result.returncode == 2 and "learned from one character" in result.stderr
    other = tmp_path / "other.npz"
    np.savez(other, verts=fam["bodies"][4]["T"][:-10], faces=fam["F"][:5])
    family = tmp_path / "fam.npz"
    assert cli("correctives", *paths[:2], "--out", family, "--max-keys", "5").returncode == 0
    result = cli("correctives", "--apply", family, other, "--out", tmp_path / "y.npz")
    assert result.returncode == 2 and "shares its topology" in result.stderr
    assert not (tmp_path / "y.npz").exists()
