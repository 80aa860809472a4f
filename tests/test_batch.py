# SPDX-License-Identifier: GPL-3.0-or-later
"""`python -m bonesmith batch IN_DIR --out OUT_DIR`, in a subprocess as a user runs it: real
rigging of a small folder (two good characters, a broken one, a text file), --resume,
--shard, --format, --timeout, Ctrl-C and the usage errors."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from conftest import extremities, inside

PROGRESS = re.compile(r"^\[\s*(\d+)/(\d+)\] ok (\d+) failed (\d+) \| \d\d:\d\d elapsed, ETA \d\d:\d\d \| "
                      r"(\S+) (ok|failed) \d+\.\d s$", re.MULTILINE)


def make_assets(folder: Path, humanoid, write_obj, sample_path) -> Path:
    """folder/body.obj (good), folder/body.npz (broken: empty), folder/sub/<sample>.npz
    (good), folder/notes.txt (not a character)."""
    (folder / "sub").mkdir(parents=True)
    write_obj(folder / "body.obj", *humanoid)
    (folder / "body.npz").write_bytes(b"")
    shutil.copy(sample_path, folder / "sub" / sample_path.name)
    (folder / "notes.txt").write_text("not a character\n")
    return folder


@pytest.fixture(scope="module")
def first_run(cli_with_bpy, tmp_path_factory, humanoid, write_obj, sample_path):
    """One batch of the assets into assets/rigged (OUT_DIR inside IN_DIR), --jobs 2; the
    report as it was right after it."""
    assets = make_assets(tmp_path_factory.mktemp("batch") / "assets", humanoid, write_obj, sample_path)
    out = assets / "rigged"
    started = time.monotonic()
    result = cli_with_bpy("batch", assets, "--out", out, "--jobs", "2", timeout=300)
    seconds = time.monotonic() - started
    report = json.loads((out / "report.json").read_text())
    return dict(result=result, assets=assets, out=out, report=report, seconds=seconds,
                sample=f"sub/{sample_path.name}")


def by_input(report, assets):
    return {Path(entry["input"]).relative_to(assets).as_posix(): entry for entry in report}


def test_batch_rigs_the_character_files_of_a_folder(first_run):
    result, assets, out, report = (first_run[k] for k in ("result", "assets", "out", "report"))
    assert result.returncode == 1, result.stderr      # one file failed, the others are kept
    entries = by_input(report, assets)
    assert list(entries) == ["body.npz", "body.obj", first_run["sample"]]   # sorted, no .txt
    assert [e["status"] for e in entries.values()] == ["failed", "ok", "ok"]

    broken = entries["body.npz"]
    assert broken["output"] is None and "\n" not in broken["error"]
    assert "not a readable .npz record" in broken["error"], broken["error"]
    assert not (out / "body_npz.glb").exists() and not (out / "body.glb").exists()

    expected = {"body.obj": out / "body_obj.glb",     # body.obj and body.npz share a stem
                first_run["sample"]: out / "sub" / (Path(first_run["sample"]).stem + ".glb")}
    for name, path in expected.items():
        assert entries[name]["output"] == str(path) and entries[name]["error"] is None
        assert path.read_bytes()[:4] == b"glTF"
        assert entries[name]["seconds"] > 0.5
    written = sorted(p for p in out.rglob("*") if p.is_file())
    assert written == sorted([out / "report.json", *expected.values()])     # no partial, no stray file
    assert not (out / ".bonesmith-partial").exists()

    assert "failed body.npz: Could not read body.npz" in result.stdout
    assert "3 files, 2 ok, 1 failed" in result.stdout and str(out / "report.json") in result.stdout
    lines = PROGRESS.findall(result.stderr)                 # not a terminal: one line per file
    assert [(int(n), int(total)) for n, total, *_ in lines] == [(1, 3), (2, 3), (3, 3)], result.stderr
    assert sorted(name for *_, name, status in lines) == sorted(entries)
    assert lines[-1][2:4] == ("2", "1")


def test_batch_outputs_are_rigged_and_weighted(first_run, bridge, scene):
    (mesh,) = bridge.file_import.import_file(first_run["out"] / "body_obj.glb")
    armature = mesh.parent
    assert armature is not None and armature.type == 'ARMATURE'
    bones = {b.name for b in armature.data.bones}
    assert len(bones) >= 10                                   # spine, arms, legs of Auto Skeleton
    groups = {g.index: g.name for g in mesh.vertex_groups}
    assert set(groups.values()) <= bones
    sums = np.array([sum(g.weight for g in v.groups) for v in mesh.data.vertices])
    np.testing.assert_allclose(sums, 1.0, atol=1e-3)
    # the blocky humanoid's joints inside it (glTF keeps heads, not tails: an importer
    # makes the tails up), and its hands and soles wholly on their own limb's bones (the
    # extremities are two bone lengths from any other bone)
    A, M = np.array(armature.matrix_world), np.array(mesh.matrix_world)
    vertices = np.array([v.co[:] for v in mesh.data.vertices]) @ M[:3, :3].T + M[:3, 3]   # Z up
    mesh.data.calc_loop_triangles()
    faces = np.array([t.vertices[:] for t in mesh.data.loop_triangles])
    heads = np.array([A @ (*b.head_local, 1.0) for b in armature.data.bones])[:, :3]
    assert inside(heads, vertices, faces).all()
    weights = np.zeros((len(vertices), len(groups)))
    for v in mesh.data.vertices:
        for g in v.groups:
            weights[v.index, g.group] = g.weight
    names = [groups[k] for k in range(len(groups))]
    for tip, mask in extremities(vertices).items():
        if tip == "crown":
            continue
        limb = "arm" if tip.startswith("hand") else "leg"
        own = [j for j, n in enumerate(names) if n.startswith(limb) and n.endswith(tip[-2:])]
        assert weights[mask][:, own].sum(axis=1).min() > 0.9, tip


def test_batch_resume_skips_what_is_done(first_run, cli_with_bpy):
    assets, out = first_run["assets"], first_run["out"]
    before = by_input(first_run["report"], assets)
    outputs = [Path(e["output"]) for e in before.values() if e["status"] == "ok"]
    stamps = [p.stat().st_mtime_ns for p in outputs]
    result = cli_with_bpy("batch", assets, "--out", out, "--jobs", "2", "--resume", timeout=300)
    assert result.returncode == 1, result.stderr
    assert "2 skipped" in result.stdout and "1 to rig" in result.stdout
    assert [p.stat().st_mtime_ns for p in outputs] == stamps                  # not rewritten
    after = by_input(json.loads((out / "report.json").read_text()), assets)
    assert list(after) == list(before)
    for name in ("body.obj", first_run["sample"]):
        assert after[name] == before[name]                # the entry of the run that made it
    assert after["body.npz"]["status"] == "failed" and "not a readable" in after["body.npz"]["error"]
    assert [int(n) for n, *_ in PROGRESS.findall(result.stderr)] == [1]      # only the broken file ran
    assert "[1/1]" in result.stderr


def test_batch_shards_split_the_files(first_run, cli_with_bpy, tmp_path):
    """Shards 1/2 and 2/2 (with --resume on a copy of the first run: only the broken file
    runs again) cover every file once, each with its own report."""
    assets = Path(shutil.copytree(first_run["assets"], tmp_path / "assets"))
    out = assets / "rigged"
    (out / "report.json").unlink()
    runs = [cli_with_bpy("batch", assets, "--out", out, "--shard", f"{i}/2", "--resume", timeout=300)
            for i in (1, 2)]
    assert [r.returncode for r in runs] == [1, 0], [r.stderr for r in runs]
    reports = [by_input(json.loads((out / f"report-{i}-of-2.json").read_text()), assets) for i in (1, 2)]
    assert list(reports[0]) == ["body.npz", first_run["sample"]]     # sorted index % 2 == 0
    assert list(reports[1]) == ["body.obj"]
    assert not (out / "report.json").exists()
    assert reports[0]["body.npz"]["status"] == "failed"
    assert reports[0][first_run["sample"]]["status"] == reports[1]["body.obj"]["status"] == "ok"
    assert "shard 1/2" in runs[0].stdout and str(out / "report-1-of-2.json") in runs[0].stdout


def test_batch_fbx(cli_with_bpy, sample_path, tmp_path):
    (tmp_path / "in").mkdir()
    shutil.copy(sample_path, tmp_path / "in" / "body.npz")
    result = cli_with_bpy("batch", tmp_path / "in", "--out", tmp_path / "out", "--format", "fbx", timeout=300)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out" / "body.fbx").read_bytes()[:18] == b"Kaydara FBX Binary"
    (entry,) = json.loads((tmp_path / "out" / "report.json").read_text())
    assert entry["status"] == "ok" and entry["output"] == str(tmp_path / "out" / "body.fbx")
    assert "1 files, 1 ok, 0 failed" in result.stdout


def processes_mentioning(text: str) -> list:
    """Pids of live processes whose command line contains `text` (Linux; [] elsewhere)."""
    found = []
    for pid in os.listdir("/proc") if os.path.isdir("/proc") else []:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if text.encode() in fh.read():
                    found.append(int(pid))
        except (OSError, ValueError):
            pass
    return found


def test_batch_timeout_kills_the_file(cli_with_bpy, sample_path, tmp_path):
    (tmp_path / "in").mkdir()
    shutil.copy(sample_path, tmp_path / "in" / "slow.npz")     # needs about 4 s
    out = tmp_path / "out"
    result = cli_with_bpy("batch", tmp_path / "in", "--out", out, "--timeout", "1", timeout=300)
    assert result.returncode == 1, result.stderr
    (entry,) = json.loads((out / "report.json").read_text())
    assert entry["status"] == "failed" and entry["error"] == "timed out after 1 s"
    assert entry["output"] is None and 1.0 <= entry["seconds"] < 3.0
    assert sorted(p.name for p in out.iterdir()) == ["report.json"]      # no output, no partial folder
    assert processes_mentioning(str(tmp_path / "in" / "slow.npz")) == []


@pytest.mark.parametrize("inherited", [signal.SIG_DFL, signal.SIG_IGN], ids=["sigint-default", "sigint-ignored"])
def test_batch_interrupt_stops_the_children(cli_bpy, sample_path, tmp_path, inherited):
    # sigint-ignored: started as a script's background job, which inherits SIGINT ignored
    (tmp_path / "in").mkdir()
    shutil.copy(sample_path, tmp_path / "in" / "a.npz")
    out = tmp_path / "out"
    command = [sys.executable, "-m", "bonesmith", "batch", str(tmp_path / "in"), "--out", str(out)]
    process = subprocess.Popen(command, env=cli_bpy, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, inherited))
    deadline = time.monotonic() + 60
    while not processes_mentioning(f"skin\0{tmp_path / 'in' / 'a.npz'}"):       # the child runs
        assert time.monotonic() < deadline and process.poll() is None, process.communicate()
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert "interrupted" in stderr and "Traceback" not in stderr
    assert json.loads((out / "report.json").read_text()) == []
    assert sorted(p.name for p in out.iterdir()) == ["report.json"]
    assert processes_mentioning(str(tmp_path / "in" / "a.npz")) == []


@pytest.mark.skipif(not hasattr(os, "killpg"), reason="POSIX signals and sessions")
def test_interrupt_while_a_child_starts_stops_that_child(tmp_path):
    # Ctrl-C that lands after the fork but before the batch has noted the child: that child
    # must be stopped too (it used to run on, and could outlive the batch)
    import tempfile
    from bonesmith.cli import batch
    task = batch.Task(0, tmp_path / "a.npz", "a.npz", tmp_path / "out" / "a.fbx")
    started = []

    def launch(task):
        process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
        started.append(process)
        os.kill(os.getpid(), signal.SIGINT)
        return batch.Running(task, tmp_path / "partial.fbx", process, tempfile.TemporaryFile(), time.monotonic())

    previous = signal.signal(signal.SIGINT, batch._raise_interrupt)
    try:
        with pytest.raises(KeyboardInterrupt):
            batch.run_all([task], 1, 60.0, launch, lambda task, entry: None)
    finally:
        signal.signal(signal.SIGINT, previous)
        for process in started:
            if process.poll() is None:
                process.kill()
                process.wait()
    assert len(started) == 1 and started[0].returncode == -signal.SIGTERM


def test_batch_help(cli):
    assert "batch" in cli("--help", timeout=60).stdout
    result = cli("batch", "--help", timeout=60)
    assert result.returncode == 0
    text = "".join(result.stdout.split())                    # argparse wraps at hyphens
    for option in ("--out", "--jobs", "--format", "--shard", "--resume", "--timeout", "report-I-of-N.json"):
        assert option in text


def test_batch_usage_errors(cli, humanoid, write_obj, tmp_path):
    good = tmp_path / "good"
    good.mkdir()
    write_obj(good / "body.obj", *humanoid)
    (tmp_path / "text").mkdir()
    (tmp_path / "text" / "notes.txt").write_text("hello")
    (tmp_path / "a_file").write_text("x")
    out = tmp_path / "out"
    cases = [
        ((tmp_path / "missing", "--out", out), "Folder not found"),
        ((tmp_path / "a_file", "--out", out), "is not a folder"),
        ((good, "--out", out, "--shard", "3/2"), "--shard 3/2: I must be from 1 to N"),
        ((good, "--out", out, "--shard", "0/2"), "I must be from 1 to N"),
        ((good, "--out", out, "--shard", "half"), "use I/N"),
        ((good, "--out", out, "--jobs", "0"), "--jobs must be at least 1"),
        ((good, "--out", out, "--timeout", "0"), "--timeout must be more than 0"),
        ((tmp_path / "text", "--out", out), "No character files"),
        ((good, "--out", good), "--out must be another folder than IN_DIR"),
        ((good, "--out", tmp_path / "a_file"), "Cannot write"),
    ]
    for args, message in cases:
        result = cli("batch", *args, timeout=60)
        assert result.returncode == 2, (args, result.stdout, result.stderr)
        assert "bonesmith: error:" in result.stderr and message in result.stderr, (args, result.stderr)
        assert "Traceback" not in result.stderr
        assert not out.exists()                                         # nothing done
    bad_format = cli("batch", good, "--out", out, "--format", "obj", timeout=60)
    assert bad_format.returncode == 2 and "invalid choice" in bad_format.stderr
