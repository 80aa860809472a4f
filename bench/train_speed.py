# SPDX-License-Identifier: GPL-3.0-or-later
"""Train Skin throughput: characters per second on one CPU process, on N CPU processes
(torchrun, gloo) and, where torch sees a GPU, on the GPU (and on every GPU with NCCL).

    .venv/bin/python bench/train_speed.py [--characters 24] [--epochs 10] [--processes N]

Each run is the user's command (`python -m bonesmith train-skin`, under torchrun for
several processes) on the same CC0 training records of ../shared/data (--characters of
the training split with at most --max-vertices vertices, evenly spaced over the sorted
names), fine-tuning the shipped model (--init default; lr 3e-3) with held-out-family
validation and no early stopping. Columns:
- features s: wall seconds to compute every character's features (shared out among the
  processes);
- epoch s: mean wall seconds of one epoch (the steps over the training characters and
  the scoring of the validation ones);
- characters/s: training characters per epoch / epoch s;
- val L1, chosen: the chosen model's validation L1 and which it is (the runs should agree).
Writes bench/results/train_speed.md.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from common import DATA_DEFAULT, RESULTS, list_records, markdown_table  # noqa: E402


def training_records(data_dir: Path, n: int, max_vertices: int) -> list:
    """`n` CC0 training-split records with at most `max_vertices` vertices, evenly spaced
    over the sorted list (so every source is in)."""
    import numpy as np
    import splits
    from train_skin_default import manifest

    rows = manifest(data_dir)
    eligible = []
    for path in list_records(data_dir, only="quat_,quatU_,mpfb_"):
        row = rows.get(path.stem)
        if row is None or not row["licence"].startswith("CC0") or splits.split_of(path.stem) != "train":
            continue
        if int(row["vertices"]) <= max_vertices:
            eligible.append(path)
    picks = np.linspace(0, len(eligible) - 1, min(n, len(eligible))).round().astype(int)
    return [eligible[i] for i in picks]


def run_config(folder: Path, out: Path, processes: int, device: str, epochs: int, init: str, env: dict) -> dict:
    command = ["-m", "bonesmith", "train-skin", str(folder), "--out", str(out), "--epochs", str(epochs),
               "--init", init, "--lr", "3e-3",
               "--selection", "holdout", "--patience", str(epochs), "--device", device]
    if processes > 1:
        command = ["-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={processes}"] + command
    started = time.perf_counter()
    result = subprocess.run([sys.executable, *command], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"train-skin failed ({processes} x {device}):\n{result.stderr[-3000:]}")
    report = json.loads(Path(str(out) + ".json").read_text())
    epoch_seconds = sum(h["seconds"] for h in report["history"]) / max(1, len(report["history"]))
    return {"processes": processes, "device": report["device"], "precision": report.get("precision", "fp32"),
            "features": report["feature_seconds"], "epoch": epoch_seconds,
            "rate": len(report["train"]) / epoch_seconds, "val_l1": report["best_val_l1"], "wall": wall,
            "chosen": "start model" if report["kept_start"] else f"epoch {report['best_epoch']}",
            "train": len(report["train"]), "val": len(report["val"])}


def configurations(processes: int) -> list:
    import torch
    configs = [(1, "cpu")]
    if processes > 1:
        configs.append((processes, "cpu"))
    if torch.cuda.is_available():
        configs.append((1, "cuda"))
        if torch.cuda.device_count() > 1:
            configs.append((torch.cuda.device_count(), "cuda"))
    return configs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA_DEFAULT)
    ap.add_argument("--characters", type=int, default=24)
    ap.add_argument("--max-vertices", type=int, default=20000)
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--init", default="default", help="start model: default (the shipped one) or none")
    ap.add_argument("--processes", type=int, default=os.cpu_count() or 1,
                    help="CPU processes of the torchrun run (default: the cores)")
    args = ap.parse_args(argv)

    records = training_records(args.data, args.characters, args.max_vertices)
    env = {**os.environ, "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(REPO.parent), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "records"
        folder.mkdir()
        for path in records:
            (folder / path.name).symlink_to(path)
        for processes, device in configurations(args.processes):
            r = run_config(folder, Path(tmp) / f"m{processes}{device}.npz", processes, device, args.epochs, args.init, env)
            print(f"{processes} x {r['device']}: {r['rate']:.2f} characters/s", flush=True)
            rows.append([f"{processes}", r["device"], r["precision"], f"{r['features']:.1f}", f"{r['epoch']:.2f}",
                         f"{r['rate']:.2f}", f"{r['val_l1']:.4f}", r["chosen"], f"{r['wall']:.0f}"])
    header = ["processes", "device", "precision", "features s", "epoch s", "characters/s", "val L1", "chosen", "wall s"]
    table = markdown_table(header, rows)
    print(f"\n{len(records)} CC0 records ({r['train']} training, {r['val']} validation), {args.epochs} epochs\n")
    print(table)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "train_speed.md").write_text(
        f"# Train Skin speed\n\n{len(records)} records, {args.epochs} epochs, `python bench/train_speed.py "
        f"{' '.join(argv or sys.argv[1:])}`\n\n{table}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
