# SPDX-License-Identifier: GPL-3.0-or-later
"""Training Auto Skin's network (docs/auto_skin.md#training) with torch; inference stays in
numpy (network.py).

torch is imported inside the functions that need it, so `import bonesmith.core.skinning`
never needs it. `train_skin_model` works on plain arrays (one dict per character);
`load_record` reads Bonesmith .npz records, `bridge.training_data` reads Blender files.

Loss: cross entropy between the predicted distribution over each vertex's 5 candidate
bones and the artist's weights restricted to those candidates and renormalised
(`-sum_r w*_r log w_r`) plus `l1_weight` x the L1 distance between the two;
vertices whose artist weights miss every candidate, or that the artist left unweighted,
are left out. Each character weighs the same in a step (mean
over its vertices), `batch_characters` characters per step (patent: 2).

Validation is by character *family* (variants of one body stay on one side). Early
stopping watches the validation L1 (`sum_j |w_j - w*_j|` per vertex, mean per character,
mean over characters); the best epoch's parameters are kept. A checkpoint
(`<out>.ckpt`) is written after every epoch; `resume=True` continues from it and gives
the same result as an uninterrupted run. Runs are deterministic for a seed (on one
device and thread count).
"""
from __future__ import annotations

import hashlib
import json
import math
import sys
import time
from datetime import date
from pathlib import Path

import numpy as np

from .. import records
from ..files import save_atomic
from ..errors import BonesmithError, Cancelled
from .network import K, PARAM_NAMES, SkinModel, candidate_inputs, candidate_mask, forward

__all__ = ["TORCH_REQUIREMENT", "torch_available", "load_record", "load_records",
           "split_by_family", "train_skin_model", "prepare_character", "evaluate_model",
           "text_progress", "TorchSkinNet"]

TORCH_REQUIREMENT = "torch==2.13.0"
MIN_COVER = 1e-6            # a vertex whose artist weight on its candidates is below this is skipped
STD_FLOOR = 1e-3            # feature normalisation: std below this counts as this


def torch_available() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def _torch():
    try:
        import torch
    except ImportError:
        raise BonesmithError(
            "Training needs PyTorch, which is not installed in this Python. Install it with "
            f"'python -m pip install {TORCH_REQUIREMENT}' (for Blender: run Blender's own Python "
            "with -m pip). Auto Skin itself does not need it.") from None
    return torch


# -- data -----------------------------------------------------------------------------------

def load_record(path, *, poses: bool = False) -> dict:
    """A Bonesmith .npz record as a training dict (vertices, faces, joints, parents, tails,
    weights, unweighted, family, name). `poses=True` adds pose_A and pose_verts (for the
    deformation error) when the record has them."""
    path = Path(path)
    optional = ("joint_tails", "unweighted", "family") + (("pose_A", "pose_verts") if poses else ())
    d = records.read(path, records.RIG, optional, needed_for="a rigged-character record")
    joints = d["joints"].astype(np.float64)
    weights = d["weights"].astype(np.float64)
    ch = {
        "name": path.stem,
        "vertices": d["verts"].astype(np.float64),
        "faces": d["faces"].astype(np.int64),
        "joints": joints,
        "parents": d["parents"].astype(np.int64),
        "tails": d["joint_tails"].astype(np.float64) if "joint_tails" in d else None,
        "weights": weights,
        "unweighted": d["unweighted"].astype(bool) if "unweighted" in d else weights.sum(axis=1) <= 1e-12,
        "family": str(d["family"]) if "family" in d else path.stem,
    }
    if "pose_A" in d and "pose_verts" in d:
        ch["pose_A"] = d["pose_A"].astype(np.float64)
        ch["pose_verts"] = d["pose_verts"].astype(np.float64)
    if weights.shape != (len(ch["vertices"]), len(joints)):
        raise BonesmithError(f"{path.name}: weights are {weights.shape}, expected "
                             f"({len(ch['vertices'])}, {len(joints)})")
    return ch


def load_records(paths, **kw) -> list:
    return [load_record(p, **kw) for p in paths]


def split_by_family(characters, *, val_fraction: float = 0.2, seed: int = 0,
                    val_families=None):
    """(train, validation) lists: whole families go to one side. `val_families` (names)
    forces the validation families; otherwise about `val_fraction` of the families (at
    least one when there are two or more) are drawn with `seed`."""
    families = sorted({str(c.get("family") or c.get("name", "")) for c in characters})
    if val_families is None:
        if len(families) < 2 or val_fraction <= 0:
            chosen = set()
        else:
            rng = np.random.default_rng(seed)
            n = min(len(families) - 1, max(1, int(round(val_fraction * len(families)))))
            chosen = set(rng.choice(families, size=n, replace=False).tolist())
    else:
        chosen = {str(f) for f in val_families}
    fam = lambda c: str(c.get("family") or c.get("name", ""))  # noqa: E731
    return ([c for c in characters if fam(c) not in chosen],
            [c for c in characters if fam(c) in chosen])


def _feature_fn():
    from .features import vertex_features
    return vertex_features


def _layout_of(features) -> dict:
    """The FeatureSet's split of x into shared (vertex) and per-candidate (bone) columns:
    its own `layout` if it has one, else features.py's documented layout (a vertex block
    of VERTEX_DIM columns, then K blocks of BONE_DIM)."""
    layout = getattr(features, "layout", None)
    if callable(layout):
        layout = layout()
    if layout:
        return dict(layout)
    from . import features as feature_module
    vd, bd = feature_module.VERTEX_DIM, feature_module.BONE_DIM
    if np.asarray(features.x).shape[1] != vd + K * bd:
        return {}
    return {"shared_columns": list(range(vd)),
            "candidate_columns": [[vd + k * bd + i for i in range(bd)] for k in range(K)]}


def prepare_character(ch: dict, feature_fn=None) -> dict:
    """Features (core.skinning.features.vertex_features, on the welded mesh) and the
    artist's weights on each vertex's candidates (`FeatureSet.candidate_targets`)."""
    feature_fn = feature_fn or _feature_fn()
    fs = feature_fn(ch["vertices"], ch["faces"], ch["joints"], ch["parents"], ch.get("tails"))
    W = np.asarray(ch["weights"], dtype=np.float64)
    unweighted = np.asarray(ch.get("unweighted", W.sum(axis=1) <= 1e-12), dtype=bool)
    W = np.where(unweighted[:, None], 0.0, W)
    if hasattr(fs, "candidate_targets"):          # features.py: welded rows
        cand_w, cover = fs.candidate_targets(W)
        weighted = fs.gather(W).sum(axis=1) > 0
    else:                                         # a FeatureSet on the caller's vertices
        valid = candidate_mask(fs.candidates)
        cand_w = np.where(valid, np.take_along_axis(W, np.maximum(fs.candidates, 0), axis=1), 0.0)
        cover, weighted = cand_w.sum(axis=1), ~unweighted
    cand_w = cand_w * candidate_mask(fs.candidates)
    cover = np.minimum(cover, 1.0)
    mask = (cover > MIN_COVER) & weighted
    target = np.divide(cand_w, cover[:, None], out=np.zeros_like(cand_w), where=cover[:, None] > 0)
    return {"name": ch.get("name", ""), "family": str(ch.get("family") or ch.get("name", "")),
            "features": fs, "layout": _layout_of(fs), "target": target.astype(np.float32),
            "mask": mask, "cover": cover, "weighted": weighted, "cand_weights": cand_w,
            "n_joints": W.shape[1]}


def _l1_on_candidates(probs, prep) -> float:
    """Mean per-vertex L1 against the artist's full weights, for a prediction that lives on
    the candidates (mass the artist put on other bones counts as missed)."""
    w = prep["weighted"]
    if not w.any():
        return float("nan")
    l1 = np.abs(probs - prep["cand_weights"]).sum(axis=1) + (1.0 - prep["cover"])
    return float(l1[w].mean())


def _cross_entropy(probs, prep) -> float:
    m = prep["mask"]
    if not m.any():
        return float("nan")
    p = np.clip(probs[m], 1e-12, 1.0)
    return float(-(prep["target"][m] * np.log(p)).sum(axis=1).mean())


# -- torch twin of network.forward ------------------------------------------------------------

def TorchSkinNet(params: dict):
    """torch.nn.Module with network.forward's maths, initialised from numpy params."""
    torch = _torch()
    nn = torch.nn

    class _Net(nn.Module):
        def __init__(self):
            super().__init__()
            for name in PARAM_NAMES:
                self.register_parameter(name, nn.Parameter(torch.tensor(np.asarray(params[name], np.float32))))

        def forward(self, shared, cand, valid, logprior):
            n, k, dc = cand.shape
            ds = shared.shape[1]
            flat = lambda a: a.reshape(n * k, a.shape[2])          # noqa: E731 - 2-D matmuls
            pre = (shared @ self.W1a[:ds])[:, None, :] + (flat(cand) @ self.W1a[ds:]).reshape(n, k, -1) + self.b1a
            e = (flat(torch.tanh(pre)) @ self.W1b + self.b1b).reshape(n, k, -1)
            g = torch.where(valid[..., None], e, torch.full_like(e, -torch.inf)).amax(dim=1)
            g = torch.where(torch.isfinite(g), g, torch.zeros_like(g))
            E = e.shape[2]
            pre2 = (flat(e) @ self.W2a[:E]).reshape(n, k, -1) + (g @ self.W2a[E:])[:, None, :] + self.b2a
            score = (flat(torch.tanh(pre2)) @ self.W2b).reshape(n, k) + self.b2b[0]
            logits = self.alpha[0] * logprior + score
            logits = torch.where(valid, logits, torch.full_like(logits, -1e9))
            return torch.log_softmax(logits, dim=1)          # log-probabilities (n,K)

        def numpy_params(self) -> dict:
            return {k: v.detach().cpu().numpy().astype(np.float32).copy()
                    for k, v in self.named_parameters()}

    return _Net()


# -- progress -------------------------------------------------------------------------------

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


# -- training -------------------------------------------------------------------------------

def _stats(preps, model: SkinModel):
    """Vertex-weighted mean and std of the network inputs over the training characters."""
    sums, sq, n = None, None, 0
    csums, csq, cn = None, None, 0
    for p in preps:
        fs = p["features"]
        s, c, valid, _ = candidate_inputs(fs.x, fs.prior, fs.candidates, model.config["layout"])
        s = s.astype(np.float64)
        cv = c[valid].astype(np.float64)
        if sums is None:
            sums, sq = np.zeros(s.shape[1]), np.zeros(s.shape[1])
            csums, csq = np.zeros(c.shape[2]), np.zeros(c.shape[2])
        sums += s.sum(0); sq += (s * s).sum(0); n += len(s)
        csums += cv.sum(0); csq += (cv * cv).sum(0); cn += len(cv)
    mean, cmean = sums / max(n, 1), csums / max(cn, 1)
    std = np.sqrt(np.maximum(sq / max(n, 1) - mean ** 2, 0.0))
    cstd = np.sqrt(np.maximum(csq / max(cn, 1) - cmean ** 2, 0.0))
    return {"shared_mean": mean.astype(np.float32), "shared_std": np.maximum(std, STD_FLOOR).astype(np.float32),
            "cand_mean": cmean.astype(np.float32), "cand_std": np.maximum(cstd, STD_FLOOR).astype(np.float32)}


def _fingerprint(train_names, val_names, settings) -> str:
    text = json.dumps([sorted(train_names), sorted(val_names), settings], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def train_skin_model(characters, out_path, *, epochs: int = 200, lr: float = 1e-3,
                     batch_characters: int = 2, seed: int = 0, resume: bool = False,
                     progress=None, patience: int = 30, val_fraction: float = 0.2,
                     val_families=None, validation=None, hidden: int = 32, embed: int = 16,
                     hidden2: int = 32, weight_decay: float = 0.0, device=None,
                     checkpoint_path=None, feature_fn=None, smoothing=(0,),
                     threads: int | None = 1, lr_decay: float = 0.5, decay_patience: int = 8,
                     l1_weight: float = 30.0,
                     info: dict | None = None) -> dict:
    """Train Auto Skin's network on `characters` and write the best model to `out_path`.

    characters: dicts with vertices (V,3), faces (F,3), joints (J,3), parents (J,),
    tails (J,3) or None, weights (V,J) and family (str; variants of one body share it).
    Families are split into training and validation (`val_families` or `val_fraction`
    drawn with `seed`); `validation`: more characters that are only evaluated (reported
    per character, never used to stop). Early stopping after `patience` epochs without a
    better validation L1. `progress(info)` is called with dicts (stage = features / step /
    epoch / done); returning False cancels: the checkpoint stays for `resume`, `out_path`
    is left as it was, and Cancelled is raised. `smoothing`: surface-smoothing iteration
    counts tried on the validation characters after training (the best is kept in the
    model; (0,) = none). `threads`: torch CPU threads (default 1: the network is small
    and one thread is fastest on a busy machine; None leaves torch's setting). Returns a
    report dict (also saved next to the model as MODEL.json). The learning rate is
    multiplied by `lr_decay` after `decay_patience` epochs without a better validation L1
    (lr_decay=1 keeps it constant). `l1_weight` adds that much of the candidate L1
    (sum_k |w_k - w*_k|) to the cross entropy: cross entropy alone makes the network
    hedge (spread weight over every candidate), which lowers the cross entropy but raises
    L1 and the deformation error (measured on the validation families; see
    models/skin_default.md).
    """
    torch = _torch()
    started = time.perf_counter()
    out_path = Path(out_path)
    ckpt_path = Path(checkpoint_path) if checkpoint_path else out_path.with_name(out_path.name + ".ckpt")
    characters = list(characters)
    if not characters:
        raise BonesmithError("No characters to train on")
    train_chars, val_chars = split_by_family(characters, val_fraction=val_fraction, seed=seed,
                                             val_families=val_families)
    if not train_chars:
        raise BonesmithError("Every character is in a validation family; nothing is left to train on")
    extra = list(validation or [])

    def notify(payload):
        if progress is not None and progress(payload) is False:
            raise Cancelled("Training was cancelled")

    # features (the expensive part), once
    all_chars = train_chars + val_chars + extra
    preps = []
    for i, ch in enumerate(all_chars):
        notify({"stage": "features", "done": i, "total": len(all_chars), "name": ch.get("name", "")})
        preps.append(prepare_character(ch, feature_fn))
    notify({"stage": "features", "done": len(all_chars), "total": len(all_chars), "name": ""})
    train_p = preps[:len(train_chars)]
    val_p = preps[len(train_chars):len(train_chars) + len(val_chars)]
    extra_p = preps[len(train_chars) + len(val_chars):]
    n_features = int(np.asarray(train_p[0]["features"].x).shape[1])

    settings = dict(epochs=epochs, lr=lr, batch_characters=batch_characters, seed=seed,
                    patience=patience, lr_decay=lr_decay, decay_patience=decay_patience,
                    l1_weight=l1_weight,
                    hidden=hidden, embed=embed, hidden2=hidden2,
                    weight_decay=weight_decay, n_features=n_features)
    fingerprint = _fingerprint([p["name"] for p in train_p], [p["name"] for p in val_p], settings)

    model = SkinModel.untrained(n_features, train_p[0]["layout"], hidden=hidden, embed=embed,
                                hidden2=hidden2, seed=seed)
    model.stats = _stats(train_p, model)

    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    dev = torch.device(device)

    def tensors(p):
        s, c, v, lp = model.inputs(p["features"])
        m = p["mask"]
        return tuple(torch.from_numpy(np.ascontiguousarray(a)).to(dev) for a in
                     (s[m], c[m], v[m], lp[m], p["target"][m]))

    train_t = [tensors(p) for p in train_p]
    net = TorchSkinNet(model.params).to(dev)
    opt = torch.optim.Adam(net.parameters(), lr=lr, weight_decay=weight_decay)

    history, best = [], {"l1": math.inf, "epoch": 0, "params": net.numpy_params()}
    start_epoch, bad, since_decay = 1, 0, 0
    if resume and ckpt_path.is_file():
        ck = torch.load(ckpt_path, map_location=dev, weights_only=True)
        if ck.get("fingerprint") != fingerprint:
            raise BonesmithError(f"The checkpoint {ckpt_path.name} belongs to another training run "
                                 "(other characters or settings); delete it or train without --resume")
        net.load_state_dict(ck["net"])
        opt.load_state_dict(ck["opt"])
        history = json.loads(ck["history"])
        best = {"l1": ck["best_l1"], "epoch": ck["best_epoch"],
                "params": {k: v.cpu().numpy() for k, v in ck["best_params"].items()}}
        start_epoch, bad, since_decay = ck["epoch"] + 1, ck["bad_epochs"], ck["since_decay"]

    def evaluate(p_list, params):
        out = []
        for p in p_list:
            probs = forward(params, *model.inputs(p["features"]))
            out.append((_cross_entropy(probs, p), _l1_on_candidates(probs, p)))
        return out

    prior_val = evaluate(val_p, {**model.params, "W2b": np.zeros_like(model.params["W2b"])})

    det_before = torch.are_deterministic_algorithms_enabled()
    threads_before = torch.get_num_threads()
    if threads and dev.type == "cpu":
        torch.set_num_threads(int(threads))
    torch.use_deterministic_algorithms(True, warn_only=True)
    stopped_early = False
    try:
        for epoch in range(start_epoch, epochs + 1):
            if bad >= patience and val_p:
                stopped_early = True
                break
            t0 = time.perf_counter()
            order = np.random.default_rng([seed, epoch]).permutation(len(train_t))
            batches = [order[i:i + batch_characters] for i in range(0, len(order), batch_characters)]
            net.train()
            losses = []
            for step, batch in enumerate(batches, 1):
                opt.zero_grad()
                loss = 0.0
                for i in batch:
                    s, c, v, lp, t = train_t[i]
                    logp = net(s, c, v, lp)
                    term = -(t * logp).sum(dim=1).mean()
                    if l1_weight:
                        term = term + l1_weight * (logp.exp() - t).abs().sum(dim=1).mean()
                    loss = loss + term / len(batch)
                loss.backward()
                opt.step()
                losses.append(float(loss.detach()))
                notify({"stage": "step", "epoch": epoch, "epochs": epochs, "step": step,
                        "steps": len(batches)})
            params = net.numpy_params()
            val = evaluate(val_p, params)
            val_loss = float(np.mean([v[0] for v in val])) if val else float("nan")
            val_l1 = float(np.mean([v[1] for v in val])) if val else float("nan")
            metric = val_l1 if val else float(np.mean(losses))
            if metric < best["l1"] - 1e-6:
                best, bad, since_decay = {"l1": metric, "epoch": epoch, "params": params}, 0, 0
            else:
                bad += 1
                since_decay += 1
                if lr_decay < 1 and since_decay >= decay_patience:
                    for group in opt.param_groups:
                        group["lr"] *= lr_decay
                    since_decay = 0
            history.append({"epoch": epoch, "lr": opt.param_groups[0]["lr"],
                            "train_loss": float(np.mean(losses)),
                            "val_loss": val_loss, "val_l1": val_l1,
                            "seconds": round(time.perf_counter() - t0, 3)})
            state = {"fingerprint": fingerprint, "epoch": epoch, "net": net.state_dict(),
                     "opt": opt.state_dict(), "history": json.dumps(history),
                     "best_l1": float(best["l1"]), "best_epoch": int(best["epoch"]),
                     "best_params": {k: torch.from_numpy(v) for k, v in best["params"].items()},
                     "bad_epochs": bad, "since_decay": since_decay}
            save_atomic(lambda partial: torch.save(state, str(partial)), ckpt_path)
            notify({"stage": "epoch", "epoch": epoch, "epochs": epochs,
                    "train_loss": history[-1]["train_loss"], "val_loss": val_loss, "val_l1": val_l1,
                    "best_l1": float(best["l1"]), "best_epoch": int(best["epoch"])})
        else:
            stopped_early = bad >= patience and bool(val_p)
    finally:
        torch.use_deterministic_algorithms(det_before)
        torch.set_num_threads(threads_before)

    model.params = best["params"]
    smooth_table = _choose_smoothing(model, val_p, smoothing)
    best_iter = min(smooth_table, key=smooth_table.get) if smooth_table else 0
    model.config["smooth"] = {"iterations": int(best_iter), "strength": 0.5}

    report = {
        "out": str(out_path), "date": date.today().isoformat(), "device": str(dev),
        "torch": torch.__version__, "settings": settings, "fingerprint": fingerprint,
        "n_parameters": model.n_parameters, "epochs_run": len(history),
        "best_epoch": int(best["epoch"]), "best_val_l1": float(best["l1"]) if val_p else None,
        "prior_val_l1": float(np.mean([v[1] for v in prior_val])) if prior_val else None,
        "stopped_early": stopped_early, "history": history,
        "train": [p["name"] for p in train_p], "val": [p["name"] for p in val_p],
        "val_families": sorted({p["family"] for p in val_p}),
        "smoothing_val_l1": {str(k): v for k, v in smooth_table.items()},
        "val_characters": _rows(model, val_p),
        "extra_characters": _rows(model, extra_p),
        "seconds": round(time.perf_counter() - started, 1),
    }
    model.config["info"] = {"date": report["date"], "train_characters": len(train_p),
                            "val_characters": len(val_p), "best_epoch": report["best_epoch"],
                            "best_val_l1": report["best_val_l1"], "settings": settings,
                            **(info or {})}
    model.save(out_path)
    Path(str(out_path) + ".json").write_text(json.dumps(report, indent=1))
    ckpt_path.unlink(missing_ok=True)     # the run is complete: nothing left to resume
    notify({"stage": "done", "message": f"wrote {out_path} (best epoch {report['best_epoch']})"})
    return report


def _choose_smoothing(model, val_p, iterations, strength: float = 0.5) -> dict:
    """Validation L1 per surface-smoothing iteration count (model.predict with it)."""
    iterations = sorted({int(i) for i in iterations})
    if len(iterations) <= 1 or not val_p:
        return {}
    keep = dict(model.config.get("smooth") or {})
    table = {}
    try:
        for i in iterations:
            model.config["smooth"] = {"iterations": i, "strength": strength}
            table[i] = float(np.mean([_l1_on_candidates(model.predict(p["features"]), p) for p in val_p]))
    finally:
        model.config["smooth"] = keep
    return table


def _rows(model, preps) -> list:
    rows = []
    for p in preps:
        fs = p["features"]
        probs = model.predict(fs)
        prior = np.where(candidate_mask(fs.candidates), fs.prior, 0.0)
        prior = prior / np.maximum(prior.sum(1, keepdims=True), 1e-12)
        rows.append({"name": p["name"], "family": p["family"], "l1": _l1_on_candidates(probs, p),
                     "prior_l1": _l1_on_candidates(prior, p), "ce": _cross_entropy(probs, p),
                     "prior_ce": _cross_entropy(prior, p)})
    return rows


def evaluate_model(model: SkinModel, characters, feature_fn=None) -> list:
    """Per character: candidate-space L1 (welded vertices, before pruning) and cross
    entropy of `model` and of the heat prior alone."""
    return _rows(model, [prepare_character(ch, feature_fn) for ch in characters])
