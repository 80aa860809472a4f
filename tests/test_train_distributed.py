# SPDX-License-Identifier: GPL-3.0-or-later
"""Train Skin on several processes (torchrun, gloo on CPU), devices and precision: as good
as one process, resumable, refused clearly where it cannot run (no bpy needed)."""
import json
import subprocess
import sys

import numpy as np
import pytest

from bonesmith.core.errors import BonesmithError, Cancelled
from bonesmith.core.skinning import network as N
from bonesmith.core.skinning.distributed import owners
from test_skin_network import tube_character, write_record


def test_owners_share_items_evenly():
    sizes = [900, 100, 500, 300, 700, 200, 800]
    owner = owners(sizes, 3)
    counts = np.bincount(owner, minlength=3)
    assert counts.max() - counts.min() <= 1
    work = np.bincount(owner, weights=sizes, minlength=3)
    assert work.max() <= 1.35 * work.min()              # the largest items are not all on one process
    assert owners(sizes, 3).tolist() == owner.tolist()  # deterministic: every process computes the same
    assert (owners(sizes, 1) == 0).all()


def rigid_family(n=6):
    """Families in one near-rigid style the heat prior blurs: something to learn."""
    return [tube_character(1.6 + 0.2 * i, 3 + i % 2, softness=0.02, family=f"f{i}", name=f"f{i}",
                           bend=0.1 * (i % 3)) for i in range(n)]


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    folder = tmp_path_factory.mktemp("records")
    for ch in rigid_family():
        write_record(folder / f"{ch['name']}.npz", ch)
    return folder


def torchrun(cli_env, *args, processes=2, timeout=600):
    env = {**cli_env, "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone",
                           f"--nproc_per_node={processes}", "-m", "bonesmith", *map(str, args)],
                          env=env, capture_output=True, text=True, timeout=timeout)


TRAIN = ("--epochs", "8", "--lr", "1e-2", "--init", "none", "--seed", "1")


def test_two_processes_train_as_well_as_one(cli, cli_env, records, tmp_path, torch):
    one = cli("train-skin", records, "--out", tmp_path / "one.npz", *TRAIN, timeout=600)
    assert one.returncode == 0, one.stderr
    two = torchrun(cli_env, "train-skin", records, "--out", tmp_path / "two.npz", *TRAIN)
    assert two.returncode == 0, two.stderr[-3000:]
    assert "distributed: 2 processes (gloo)" in two.stderr
    assert two.stdout.count("wrote") == 1 and two.stdout.count("train-skin: 6 characters") == 1  # rank 0 alone
    assert "x 2 processes (fp32)" in two.stdout
    reports = {n: json.loads((tmp_path / f"{n}.npz.json").read_text()) for n in ("one", "two")}
    assert reports["two"]["processes"] == 2 and reports["two"]["backend"] == "gloo"
    assert reports["one"]["processes"] == 1
    for report in reports.values():     # both learn the style: cross-validated L1 well below the prior
        assert report["best_val_l1"] < 0.6 * report["prior_val_l1"] and not report["kept_start"]
    # the same cross-validated quality: every character scored by a fold that did not see it
    assert reports["two"]["best_val_l1"] <= 1.1 * reports["one"]["best_val_l1"] + 0.005
    assert sorted(r["name"] for r in reports["two"]["val_characters"]) == [f"f{i}" for i in range(6)]
    N.SkinModel.load(tmp_path / "two.npz")          # a model Auto Skin loads


def test_distributed_run_resumes_a_checkpoint(cli_env, records, tmp_path, torch):
    """A run stopped after 3 epochs (its checkpoint) continues on 2 processes."""
    from bonesmith.core.skinning import train
    out = tmp_path / "m.npz"
    chars = train.load_records(sorted(records.glob("*.npz")))
    options = dict(epochs=6, lr=1e-2, seed=1, selection="holdout", init=None)
    with pytest.raises(Cancelled):
        train.train_skin_model(chars, out, progress=lambda i: not (i["stage"] == "epoch" and i["epoch"] == 3),
                               **options)
    stopped = json.loads(torch.load(str(out) + ".ckpt", weights_only=True)["history"])
    assert [h["epoch"] for h in stopped] == [1, 2, 3]
    result = torchrun(cli_env, "train-skin", records, "--out", out, "--epochs", "6", "--lr", "1e-2",
                      "--seed", "1", "--selection", "holdout", "--init", "none", "--resume")
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads((tmp_path / "m.npz.json").read_text())
    assert report["processes"] == 2 and [h["epoch"] for h in report["history"]] == list(range(1, 7))
    assert [h["train_loss"] for h in report["history"][:3]] == [h["train_loss"] for h in stopped]
    assert report["history"][-1]["train_loss"] < report["history"][0]["train_loss"]
    assert not (tmp_path / "m.npz.ckpt").exists()


def test_more_processes_than_characters_is_refused(cli_env, records, tmp_path, torch):
    few = tmp_path / "few"
    few.mkdir()
    for name in ("f0", "f1"):
        (few / f"{name}.npz").write_bytes((records / f"{name}.npz").read_bytes())
    result = torchrun(cli_env, "train-skin", few, "--out", tmp_path / "m.npz", "--epochs", "1", processes=3)
    assert result.returncode != 0
    assert "3 training processes need at least as many training characters (got 2)" in result.stderr


def test_bf16_mixed_precision_trains(records, tmp_path, torch):
    """The mixed-precision path (what a GPU uses) runs and learns; here on the CPU."""
    from bonesmith.core.skinning import train
    chars = train.load_records(sorted(records.glob("*.npz")))
    report = train.train_skin_model(chars, tmp_path / "m.npz", epochs=6, lr=1e-2, seed=1, init=None,
                                    selection="holdout", precision="bf16", device="cpu")
    assert report["precision"] == "bf16" and report["device"] == "cpu"
    assert report["history"][-1]["train_loss"] < 0.8 * report["history"][0]["train_loss"]
    with pytest.raises(ValueError, match="precision"):
        train.train_skin_model(chars, tmp_path / "x.npz", epochs=1, init=None, precision="fp8")


def test_cuda_without_a_gpu_is_a_clear_error(cli, records, tmp_path, torch):
    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA GPU")
    result = cli("train-skin", records, "--out", tmp_path / "m.npz", "--device", "cuda", timeout=300)
    assert result.returncode == 2 and "sees no CUDA GPU" in result.stderr
    from bonesmith.core.skinning import train
    with pytest.raises(BonesmithError, match="no CUDA GPU"):
        train.device_type(torch, "cuda")
    assert train.device_type(torch, "auto") == "cpu" and train.device_type(torch, None) == "cpu"
