# SPDX-License-Identifier: GPL-3.0-or-later
"""`python -m bonesmith ...` in a subprocess, as a user runs it."""
import json

import numpy as np

from conftest import check_bones_in_place, ground_plane, is_one_tree


def test_help_lists_commands(cli):
    result = cli("--help", timeout=60)
    assert result.returncode == 0, result.stderr
    assert "skeleton" in result.stdout and "demo" in result.stdout
    for command in ("skeleton", "demo"):
        sub = cli(command, "--help", timeout=60)
        assert sub.returncode == 0 and "--out" in sub.stdout


def test_no_command_is_an_error(cli):
    result = cli(timeout=60)
    assert result.returncode == 2 and "COMMAND" in result.stderr


def test_skeleton_obj_to_json_and_fbx(cli_with_bpy, core, humanoid, write_obj, tmp_path):
    vertices, faces = humanoid
    source = tmp_path / "body.obj"
    write_obj(source, vertices, faces)
    out_json, out_fbx = tmp_path / "out" / "body.json", tmp_path / "out" / "body.fbx"
    result = cli_with_bpy("skeleton", source, "--out", out_json, "--out", out_fbx, "--detail", "1.0")
    assert result.returncode == 0, result.stderr

    skeleton = core.Skeleton.load_json(out_json)
    assert f"body.obj: {len(vertices)} vertices -> {len(skeleton)} joints (facing -Y, up +Z) in" in result.stdout
    assert len(skeleton) > 1 and is_one_tree(skeleton.parents)
    # world units and frame: the joints lie in the body's box (the OBJ axes were converted)
    lo, hi = vertices.min(0), vertices.max(0)
    slack = 1e-3 * np.linalg.norm(hi - lo)
    assert np.all(skeleton.joints >= lo - slack) and np.all(skeleton.joints <= hi + slack)
    assert json.loads(out_json.read_text())["names"] == skeleton.names
    assert out_fbx.read_bytes()[:18] == b"Kaydara FBX Binary"


def test_a_ground_plane_in_the_file_is_left_out_with_a_note(cli_with_bpy, core, sample, tmp_path):
    """A scene exported with its ground plane (an object of its own): the plane used to be
    rigged with the character (the sample's 26-bone humanoid became a 15-bone generic rig).
    It gets no rig now, and stderr says so."""
    parts = {"body": sample, "Ground": ground_plane(sample[0])}
    source = tmp_path / "scene.obj"
    with open(source, "w") as fh:          # OBJ is Y-up: (x, y, z) written as (x, z, -y)
        offset = 1
        for name, (vertices, faces) in parts.items():
            fh.write(f"o {name}\n")
            fh.writelines(f"v {x:.9f} {z:.9f} {-y:.9f}\n" for x, y, z in vertices)
            fh.writelines(f"f {a} {b} {c}\n" for a, b, c in np.asarray(faces) + offset)
            offset += len(vertices)
    out = tmp_path / "scene.json"
    result = cli_with_bpy("skeleton", source, "--out", out)
    assert result.returncode == 0, result.stderr
    assert "note: 'Ground' left out: a flat plate under the character" in result.stderr
    alone = core.extract_skeleton(sample[0].astype(np.float32), sample[1])     # Blender keeps float32
    assert sorted(core.Skeleton.load_json(out).names) == sorted(alone.names)


def test_skeleton_npz_to_blend(cli_with_bpy, sample_path, tmp_path):
    out = tmp_path / "rigged.blend"
    result = cli_with_bpy("skeleton", sample_path, "--out", out)
    assert result.returncode == 0, result.stderr
    # plain or zstd-compressed (Blender 5's default)
    assert out.read_bytes()[:7].startswith((b"BLENDER", b"\x28\xb5\x2f\xfd"))


def test_skeleton_blend_output_contains_the_rig(cli_with_bpy, sample, tmp_path, bridge, scene, core):
    import bpy
    source = tmp_path / "sample.npz"
    np.savez(source, verts=sample[0], faces=sample[1])
    out = tmp_path / "rigged.blend"
    assert cli_with_bpy("skeleton", source, "--out", out).returncode == 0
    objects = bridge.file_import.import_file(out)
    (mesh,) = objects
    assert mesh.parent is not None and mesh.parent.type == 'ARMATURE'
    assert mesh.parent.name in bpy.context.scene.objects
    assert [m.object for m in mesh.modifiers if m.type == 'ARMATURE'] == [mesh.parent]
    # the rig is Auto Skeleton's on the sample, where the sample's bones go
    assert sorted(b.name for b in mesh.parent.data.bones) == sorted(core.extract_skeleton(*sample).names)
    check_bones_in_place(mesh.parent, mesh, *sample)


def test_skeleton_bad_inputs(cli_with_bpy, tmp_path):
    cases = []
    broken = tmp_path / "broken.obj"
    broken.write_text("this is not a mesh\n")
    cases.append(((broken, "--out", tmp_path / "x.json"), "no mesh"))
    cases.append(((tmp_path / "missing.obj", "--out", tmp_path / "x.json"), "File not found"))
    cases.append(((broken, "--out", tmp_path / "x.txt"), "Cannot write x.txt"))
    text = tmp_path / "mesh.txt"
    text.write_text("1 2 3\n")
    cases.append(((text, "--out", tmp_path / "x.json"), "Cannot import mesh.txt"))
    # glTF keeps an armature only on a weighted mesh (unweighted, its bones came back as
    # empties): refused before any work, pointing to `skin --auto-skeleton`
    cases.append(((broken, "--out", tmp_path / "x.json", "--out", tmp_path / "x.glb"),
                  "keeps the armature only on a mesh weighted to it"))
    for args, message in cases:
        result = cli_with_bpy("skeleton", *args)
        assert result.returncode == 2, (args, result.stdout, result.stderr)
        assert "bonesmith: error:" in result.stderr and message in result.stderr, result.stderr
        assert "Traceback" not in result.stderr
        assert not (tmp_path / "x.json").exists()


def test_outputs_that_cannot_be_written_are_refused_before_any_work(cli, humanoid, write_obj, tmp_path):
    source = tmp_path / "body.obj"
    write_obj(source, *humanoid)
    a_file = tmp_path / "notes.txt"
    a_file.write_text("x")
    (tmp_path / "folder.json").mkdir()
    for out, message in ((a_file / "x.json", "is not a writable folder"),
                         (tmp_path / "folder.json", "it is a folder")):
        result = cli("skeleton", source, "--out", tmp_path / "fine.json", "--out", out, timeout=120)
        assert result.returncode == 2 and message in result.stderr, result.stderr
        assert "Traceback" not in result.stderr and "vertices" not in result.stdout   # nothing computed
        assert not (tmp_path / "fine.json").exists()


def test_unexpected_errors_are_one_line_unless_verbose(monkeypatch, capsys):
    from bonesmith import cli as cli_module
    from bonesmith.cli import demo

    def broken(args):
        raise ValueError("something nobody expected")
    monkeypatch.setattr(demo, "run", broken)
    assert cli_module.main(["demo"]) == cli_module.EXIT_FAILED
    err = capsys.readouterr().err
    assert err.strip() == ("bonesmith: error: ValueError: something nobody expected "
                           "(run with --verbose for the traceback)")
    assert cli_module.main(["--verbose", "demo"]) == cli_module.EXIT_FAILED
    err = capsys.readouterr().err
    assert "Traceback" in err and err.strip().endswith("ValueError: something nobody expected")


def test_skeleton_invalid_mesh_reports_core_message(cli_with_bpy, tmp_path):
    source = tmp_path / "point.npz"
    np.savez(source, verts=np.ones((4, 3)), faces=np.array([[0, 1, 2], [0, 2, 3]]))
    result = cli_with_bpy("skeleton", source, "--out", tmp_path / "x.json")
    assert result.returncode == 2
    assert "bonesmith: error:" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "x.json").exists()


def test_demo(cli_with_bpy, tmp_path):
    result = cli_with_bpy("demo", "--out", tmp_path)
    assert result.returncode == 0, result.stderr
    for line in ("vertices", "joints", "seconds", "demo.fbx", "demo.png"):
        assert line in result.stdout
    assert (tmp_path / "demo.fbx").read_bytes()[:18] == b"Kaydara FBX Binary"
    png = (tmp_path / "demo.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
