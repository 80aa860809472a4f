# SPDX-License-Identifier: GPL-3.0-or-later
"""A text progress bar for Auto Skin training (docs/auto_skin.md#training): the callback
train_skin_model's `progress` gets, for the command line and the benchmark scripts.
"""
from __future__ import annotations

import math
import sys
import time


def text_progress(stream=None, width: int = 24):
    """A progress callback that prints a text bar (for the CLI): on a terminal one line
    redrawn with \\r, otherwise one line per feature set and per epoch
    ("features i/n NAME", "epoch e/E [###   ] train ... val ...")."""
    stream = stream or sys.stderr
    tty = bool(getattr(stream, "isatty", lambda: False)())
    state = {"last": 0.0}

    def show(info: dict):
        stage = info.get("stage")
        now = time.monotonic()
        if stage == "features":
            line, final = f"features {info['done']}/{info['total']} {info.get('name', '')}", \
                info["done"] == info["total"]
        elif stage == "epoch":
            bar = "#" * int(round(info["epoch"] / max(1, info["epochs"]) * width))
            line = (f"epoch {info['epoch']:>4}/{info['epochs']} [{bar:<{width}}] "
                    f"train {info['train_loss']:.4f}")
            if info.get("val_loss") is not None and not math.isnan(info["val_loss"]):
                line += (f"  val {info['val_loss']:.4f}  L1 {info['val_l1']:.4f}  "
                         f"best {info['best_l1']:.4f} @ {info['best_epoch']}")
            final = True
        elif stage == "step":
            if not tty or now - state["last"] < 0.5:
                return
            line, final = f"epoch {info['epoch']:>4}/{info['epochs']} step {info['step']}/{info['steps']}", False
        else:
            line, final = info.get("message", ""), True
        state["last"] = now
        if tty:
            stream.write("\r" + line[:110].ljust(110) + ("\n" if final else ""))
        else:
            stream.write(line + "\n")
        stream.flush()

    return show
