# SPDX-License-Identifier: GPL-3.0-or-later
"""Training Auto Skin's network (docs/auto_skin.md#training) with torch; inference stays in
numpy (network.py).

torch is imported inside the functions that need it, so `import bonesmith.core.skinning`
never needs it. `train_skin_model` works on plain arrays (one dict per character,
training_data.py); `load_record` reads Bonesmith .npz records, `bridge.training_data`
reads Blender files.

Training fine-tunes a start model (`init`: the shipped default, a user's model, or None
for a fresh one, which returns the heat prior until trained). Loss: cross entropy between
the predicted distribution over each vertex's 5 candidate bones and the artist's weights
restricted to those candidates and renormalised, plus `l1_weight` x their L1 distance.

Model selection (which epoch is kept and for which rig templates: cross-validation by
character within templates, or a held-out share of families) is in selection.py, the rig
templates in templates.py, the torch network in torch_net.py; the command line's text progress bar
is cli/text_progress.py.

A checkpoint (`<out>.ckpt`) is written after every epoch; `resume=True` continues from it
and gives the same result as an uninterrupted run. Runs are deterministic for a seed (on
one device and thread count).
"""
from __future__ import annotations

import hashlib
import json
import math
import time
from datetime import date
from pathlib import Path

import numpy as np

from ..errors import BonesmithError, Cancelled
from ..safe_write import save_atomic
from .distributed import Group, group_from_environment, owners
from .network import SkinModel, candidate_mask, forward, load_model
from .selection import (FOLDS, FOLDS_MAX_GROUPS, IMPROVEMENT, MIN_EPOCHS, choose_smoothing,
                        select_folds, select_holdout)
from . import exemplars, templates
from .torch_net import TorchSkinNet, _torch
from .training_data import (check_characters, coverage, cross_entropy, candidate_l1, family,
                            load_record, load_records, prepare_character, split_by_family)

__all__ = ["load_record", "load_records", "split_by_family", "train_skin_model", "prepare_character",
           "evaluate_model", "start_model"]

STD_FLOOR = 1e-3            # feature normalisation: std below this counts as this


# -- the start model --------------------------------------------------------------------------

def start_model(init):
    """The model training starts from: None (a fresh one, made once the features are
    known), "default" (the shipped model), a path, or a SkinModel. A gated model (one
    trained for some rig templates) is the start as a whole: training starts from its
    network, and each character is judged against what the gated model gives it."""
    if init is None:
        return None
    if isinstance(init, str) and init == "default":
        from .network import default_model
        model = default_model()
        if model is None:
            raise BonesmithError("No shipped skin model to start from: train with init=None (--init none)")
    else:
        model = init if isinstance(init, SkinModel) else load_model(init)
    return model


def _copy(model: SkinModel) -> SkinModel:
    """A deep copy of the model's own network (a gated model's gate left behind)."""
    net = model.ungated()
    return SkinModel({k: np.array(v, np.float32) for k, v in net.params.items()},
                     {k: np.array(v, np.float32) for k, v in net.stats.items()}, json.loads(json.dumps(net.config)))


def _check_start(model: SkinModel, prep) -> None:
    x = np.asarray(prep["features"].x)
    if model.config.get("n_features") != x.shape[1] or (
            prep["layout"] and model.config.get("layout") != {k: [list(c) if isinstance(c, (list, tuple)) else c
                                                              for c in v] for k, v in prep["layout"].items()}):
        raise BonesmithError(
            f"The start model was trained for {model.config.get('n_features')} features per vertex, this "
            f"Bonesmith computes {x.shape[1]}: train from scratch (--init none, or pick the shipped "
            "default as the active Skin Model)")


def _stats(preps, model: SkinModel, group):
    """Vertex-weighted mean and std of the network inputs over the training characters
    (each process sums its own)."""
    from .network import candidate_inputs
    sums = []
    for p in preps:      # every process owns at least one training character
        fs = p["features"]
        s, c, valid, _ = candidate_inputs(fs.x, fs.prior, fs.candidates, model.config["layout"])
        s, cv = s.astype(np.float64), c[valid].astype(np.float64)
        ds, dc = s.shape[1], c.shape[2]
        sums.append(np.concatenate([s.sum(0), (s * s).sum(0), [len(s)], cv.sum(0), (cv * cv).sum(0), [len(cv)]]))
    total = group.sum(np.sum(sums, axis=0))
    sums, sq, n = total[:ds], total[ds:2 * ds], total[2 * ds]
    csums, csq, cn = total[2 * ds + 1:2 * ds + 1 + dc], total[2 * ds + 1 + dc:2 * ds + 1 + 2 * dc], total[-1]
    mean, cmean = sums / max(n, 1), csums / max(cn, 1)
    std = np.sqrt(np.maximum(sq / max(n, 1) - mean ** 2, 0.0))
    cstd = np.sqrt(np.maximum(csq / max(cn, 1) - cmean ** 2, 0.0))
    return {"shared_mean": mean.astype(np.float32), "shared_std": np.maximum(std, STD_FLOOR).astype(np.float32),
            "cand_mean": cmean.astype(np.float32), "cand_std": np.maximum(cstd, STD_FLOOR).astype(np.float32)}


def _fingerprint(names, settings) -> str:
    text = json.dumps([names, settings], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# -- one training run ---------------------------------------------------------------------------

class _Runner:
    """What every training run of one call shares: torch, the device, the process group,
    the model that normalises the inputs, the settings, progress and the checkpoint."""

    def __init__(self, torch, dev, model, settings, notify, ckpt_path, fingerprint, group, autocast, any_mine):
        self.torch, self.dev, self.model, self.s = torch, dev, model, settings
        self.notify, self.ckpt_path, self.fingerprint = notify, ckpt_path, fingerprint
        self.group, self.autocast = group, autocast
        self.any_mine = any_mine          # a training character of this process (zero-weight steps)
        self._tensors, self._wrapped = {}, (None, None)

    def tensors(self, p):
        """The training rows of character (or region view) `p` as tensors, cached while
        `p` lives: the cache holds `p` itself, so a later dict cannot take over its id."""
        key = id(p)
        if key not in self._tensors:
            s, c, v, lp = self.model.inputs(p["features"])
            m = p["mask"]
            self._tensors[key] = (p, tuple(self.torch.from_numpy(np.ascontiguousarray(a)).to(self.dev)
                                           for a in (s[m], c[m], v[m], lp[m], p["target"][m])))
        return self._tensors[key][1]

    def release(self, preps):
        """Drop the cached tensors of `preps` (a fold's region views, once it is done)."""
        for p in preps:
            self._tensors.pop(id(p), None)

    def network(self, params):
        net = TorchSkinNet(params).to(self.dev)
        trainable = self.s.get("trainable")
        for name, p in net.named_parameters():
            p.requires_grad_(not trainable or name in trainable)
        opt = self.torch.optim.Adam([p for p in net.parameters() if p.requires_grad], lr=self.s["lr"],
                                    weight_decay=self.s["weight_decay"])
        self._wrapped = (net, self.group.wrap(net, self.dev))
        return net, opt

    def batches(self, train_p, key) -> list:
        """This process's characters (indices into `train_p`) for each step of an epoch
        drawn from `key`. One process: `batch_characters` per step. N processes: each
        takes batch_characters / N (at least 1) of its own characters per step, cycling
        through them when it has fewer than the others, so all take the same steps."""
        size = self.s["batch_characters"]
        if self.group.size == 1:
            order = np.random.default_rng(key).permutation(len(train_p))
            return [order[i:i + size] for i in range(0, len(order), size)]
        per = max(1, round(size / self.group.size))
        counts = np.bincount([p["owner"] for p in train_p], minlength=self.group.size)
        steps = math.ceil(counts.max() / per)
        mine = [i for i, p in enumerate(train_p) if self.group.owns(p)]
        if not mine:
            return [[] for _ in range(steps)]
        order = np.resize(np.random.default_rng([*key, self.group.rank]).permutation(mine), steps * per)
        return [order[k * per:(k + 1) * per] for k in range(steps)]

    def loss(self, net, preps, scale: float = 1.0):
        """Mean over `preps` of (cross entropy + l1_weight x L1), each character's terms a
        mean over its vertices; one forward pass over all their rows."""
        torch = self.torch
        parts = [self.tensors(p) for p in preps]
        s, c, v, lp, t = parts[0] if len(parts) == 1 else [torch.cat(x) for x in zip(*parts)]
        row_weight = torch.cat([torch.full((len(x[0]),), scale / (len(parts) * len(x[0])), device=self.dev)
                                for x in parts])
        with torch.autocast(self.dev.type, dtype=torch.bfloat16, enabled=self.autocast):
            logp = net(s, c, v, lp)
        logp = logp.float()
        per_row = -(t * logp).sum(dim=1)
        if self.s["l1_weight"]:
            per_row = per_row + self.s["l1_weight"] * (logp.exp() - t).abs().sum(dim=1)
        return (per_row * row_weight).sum()

    def epoch(self, net, opt, train_p, key, progress) -> float:
        """One pass over `train_p` in an order drawn from `key`; the mean step loss (over
        all processes)."""
        batches = self.batches(train_p, key)
        forward = self._wrapped[1] if self._wrapped[0] is net else net
        net.train()
        total, real = 0.0, 0
        for step, batch in enumerate(batches, 1):
            opt.zero_grad()
            if len(batch):
                loss = self.loss(forward, [train_p[i] for i in batch])
                total, real = total + float(loss.detach()), real + 1
            else:   # none of this step's characters is here: a zero term keeps in step with the others
                loss = self.loss(forward, [self.any_mine], scale=0.0)
            loss.backward()
            opt.step()
            self.notify({"stage": "step", **progress, "step": step, "steps": len(batches)})
        total, real = self.group.sum([total, real])
        return float(total / max(real, 1))

    def scores(self, params, preps):
        """(cross entropy, candidate L1) per character for numpy params; each process
        scores its own characters."""
        local = {}
        for i, p in enumerate(preps):
            if self.group.owns(p):
                probs = forward(params, *self.model.inputs(p["features"]))
                local[i] = (cross_entropy(probs, p), candidate_l1(probs, p))
        merged = self.group.gather(local)
        return [merged[i] for i in range(len(preps))]

    def start_scores(self, preps):
        """(cross entropy, candidate L1) per character of what the start model gives it
        (a gated start model: its network or its fallback, by the character's rig)."""
        local = {}
        for i, p in enumerate(preps):
            if self.group.owns(p):
                probs = p["start_model"].predict(p["features"])
                local[i] = (cross_entropy(probs, p), candidate_l1(probs, p))
        merged = self.group.gather(local)
        return [merged[i] for i in range(len(preps))]

    def save(self, **state):
        if not self.group.is_main:
            return
        torch = self.torch
        state = {"fingerprint": self.fingerprint, **state}
        save_atomic(lambda partial: torch.save(state, str(partial)), self.ckpt_path)

    def load(self):
        if not self.ckpt_path.is_file():
            return None
        ck = self.torch.load(self.ckpt_path, map_location=self.dev, weights_only=True)
        if ck.get("fingerprint") != self.fingerprint:
            raise BonesmithError(f"The checkpoint {self.ckpt_path.name} belongs to another training run "
                                 "(other characters or settings); delete it or train without --resume")
        return ck


# -- training ---------------------------------------------------------------------------------

def train_skin_model(characters, out_path, *, init=None, epochs: int = 200, lr: float = 1e-3,
                     batch_characters: int = 2, seed: int = 0, resume: bool = False,
                     progress=None, selection: str = "auto", folds: int = FOLDS,
                     patience: int = 30, min_epochs: int = MIN_EPOCHS, val_fraction: float = 0.2,
                     val_families=None, validation=None, hidden: int = 32, embed: int = 16,
                     hidden2: int = 32, weight_decay: float = 0.0, device=None, precision: str = "auto",
                     checkpoint_path=None, feature_fn=None, smoothing=(0,),
                     threads: int | None = 1, lr_decay: float = 0.5, decay_patience: int = 8,
                     l1_weight: float = 30.0, trainable=None, info: dict | None = None,
                     carry_weights: bool = True) -> dict:
    """Train Auto Skin's network on `characters` and write the chosen model to `out_path`.

    characters: dicts with vertices (V,3), faces (F,3), joints (J,3), parents (J,),
    tails (J,3) or None, weights (V,J), names (J bone names; optional: without them rig
    templates compare the hierarchy only) and family (str; variants of one body share
    it); two or more. init: the model to start from (None: a fresh one, which returns the heat
    prior; "default": the shipped model; a path or a SkinModel); hidden/embed/hidden2
    only size a fresh one. selection: "folds", "holdout" or "auto" (folds up to
    FOLDS_MAX_GROUPS rig templates; `val_families` given means holdout); see the module
    doc and selection.py. Folds write a gated model: its trained network for the rig
    templates on which cross-validation showed a clear gain, the start model for every
    other armature (`report["templates"]`). The written model is never worse on
    validation than the start model: when training improves no template, the start model
    is written and `report["kept_start"]` is True.
    `validation`: more characters that are only evaluated. `progress(info)` is called
    with dicts (stage = features / step / epoch / done); returning False cancels: the
    checkpoint stays for `resume`, `out_path` is left as it was, and Cancelled is raised.
    `smoothing`: surface-smoothing iteration counts tried on the held-out families
    (holdout only). `threads`: torch CPU threads (default 1: the network is small and one
    thread is fastest on a busy machine; None leaves torch's setting). In holdout, the
    learning rate is multiplied by `lr_decay` after `decay_patience` epochs without a
    better validation L1; folds use a constant rate. `l1_weight`: weight of the candidate
    L1 added to the cross entropy (cross entropy alone makes the network hedge; see
    models/skin_default.md). `trainable`: names of the parameters to train (None: all;
    e.g. ("W2b", "b2b", "alpha") fine-tunes only the score head). `device`: None or
    "auto" (CUDA when there is a GPU), "cpu", "cuda". `precision`: "auto" (bfloat16
    autocast on a CUDA GPU that has it, float32 otherwise), "fp32" or "bf16".
    Under torchrun the call is one of N processes (distributed.py): the characters are
    shared out, gradients averaged, and process 0 alone reports and writes files.
    Returns a report dict (also saved as MODEL.json).
    """
    torch = _torch()
    started = time.perf_counter()
    out_path = Path(out_path)
    ckpt_path = Path(checkpoint_path) if checkpoint_path else out_path.with_name(out_path.name + ".ckpt")
    characters, extra = list(characters), list(validation or [])
    if not characters:
        raise BonesmithError("Training needs one or more rigged characters; got none")
    check_characters(characters + extra)
    start = start_model(init)
    n_groups = len(templates.group(characters)[1])
    mode = selection if selection != "auto" else (
        "holdout" if val_families is not None or n_groups > FOLDS_MAX_GROUPS else "folds")
    if mode not in ("folds", "holdout"):
        raise ValueError(f"selection must be 'auto', 'folds' or 'holdout', not {selection!r}")
    if mode == "holdout":
        train_chars, val_chars = split_by_family(characters, val_fraction=val_fraction, seed=seed,
                                                 val_families=val_families)
        if not train_chars:
            raise BonesmithError("Every character is in a validation family; nothing is left to train on")
    else:
        train_chars, val_chars = characters, []
    dev_type = device_type(torch, device)
    group = group_from_environment(torch, dev_type)
    try:
        if len(train_chars) < group.size:
            raise BonesmithError(f"{group.size} training processes need at least as many training characters "
                                 f"(got {len(train_chars)}): start fewer processes")
        dev = torch.device(f"cuda:{torch.cuda.current_device()}" if dev_type == "cuda" and group.distributed
                           else device if device not in (None, "auto") else dev_type)
        return _train(torch, dev, group, train_chars, val_chars, extra, out_path, ckpt_path, start, init,
                      mode, progress, feature_fn, dict(
                          epochs=epochs, lr=lr, batch_characters=batch_characters, seed=seed, resume=resume,
                          folds=folds, patience=patience, min_epochs=min_epochs, hidden=hidden, embed=embed,
                          hidden2=hidden2, weight_decay=weight_decay, smoothing=smoothing, threads=threads,
                          lr_decay=lr_decay, decay_patience=decay_patience, l1_weight=l1_weight,
                          trainable=trainable, info=info, precision=precision,
                          carry_weights=carry_weights), started)
    finally:
        group.close()


def device_type(torch, device) -> str:
    """"cpu" or "cuda" for a `device` setting (None/"auto": CUDA when torch sees a GPU)."""
    if device in (None, "auto"):
        return "cuda" if torch.cuda.is_available() else "cpu"
    kind = torch.device(device).type
    if kind == "cuda" and not torch.cuda.is_available():
        raise BonesmithError("Training on CUDA was asked for, but this PyTorch sees no CUDA GPU (a CPU-only "
                             "build, or no driver): use --device cpu or auto")
    if kind not in ("cpu", "cuda"):
        raise BonesmithError(f"Cannot train on device {device!r}: use auto, cpu or cuda")
    return kind


def _use_autocast(torch, dev, precision: str) -> bool:
    if precision not in ("auto", "fp32", "bf16"):
        raise ValueError(f"precision must be 'auto', 'fp32' or 'bf16', not {precision!r}")
    if precision == "auto":
        return dev.type == "cuda" and torch.cuda.is_bf16_supported()
    return precision == "bf16"


def _prepare_shared(lists, group, notify, feature_fn) -> list:
    """Preps of the characters of `lists` (training, validation, extra), in order: features
    for the characters this process owns, stubs (name, family, owner) for the others. Each
    list is shared out on its own, so each process gets its share of each."""
    characters = [ch for chars in lists for ch in chars]
    owner = np.concatenate([owners([len(c["vertices"]) for c in chars], group.size) if chars
                            else np.zeros(0, np.int64) for chars in lists])
    mine = [i for i in range(len(characters)) if owner[i] == group.rank]
    preps = [{"name": ch.get("name", ""), "family": family(ch), "owner": int(owner[i])}
             for i, ch in enumerate(characters)]
    for done, i in enumerate(mine):
        notify({"stage": "features", "done": done, "total": len(mine), "name": characters[i].get("name", "")})
        preps[i] = {**prepare_character(characters[i], feature_fn), "owner": int(owner[i])}
    notify({"stage": "features", "done": len(mine), "total": len(mine), "name": ""})
    return preps


def _train(torch, dev, group, train_chars, val_chars, extra, out_path, ckpt_path, start, init, mode,
           progress, feature_fn, o, started) -> dict:
    """train_skin_model once the characters are checked and the processes joined; `o`
    holds its remaining options."""
    def notify(payload):
        if group.is_main and progress is not None and progress(payload) is False:
            raise Cancelled("Training was cancelled")

    if group.distributed:
        notify({"stage": "message", "message": group.describe()})
    t_features = time.perf_counter()
    preps = _prepare_shared((train_chars, val_chars, extra), group, notify, feature_fn)
    group.barrier()
    feature_seconds = time.perf_counter() - t_features
    train_p = preps[:len(train_chars)]
    val_p = preps[len(train_chars):len(train_chars) + len(val_chars)]
    extra_p = preps[len(train_chars) + len(val_chars):]
    template_of, rig_templates = templates.group(train_chars)
    for p, t in zip(train_p, template_of):
        p["template"] = t
    first_mine = next(p for p in train_p if group.owns(p))
    n_features = int(np.asarray(first_mine["features"].x).shape[1])

    if start is None:
        model = SkinModel.untrained(n_features, first_mine["layout"], hidden=o["hidden"], embed=o["embed"],
                                    hidden2=o["hidden2"], seed=o["seed"])
        model.stats = _stats([p for p in train_p if group.owns(p)], model, group)
        init_name = "none (a fresh network: the heat prior)"
    else:
        _check_start(start, first_mine)
        model = _copy(start)
        init_name = ("the shipped default model" if isinstance(init, str) and init == "default"
                     else str(init) if isinstance(init, (str, Path)) else "the given model")
    start_params = {k: np.array(v, np.float32) for k, v in model.params.items()}
    start_whole = start if start is not None else SkinModel(start_params, model.stats, json.loads(json.dumps(
        model.config)))
    for p, ch in zip(preps, [*train_chars, *val_chars, *extra]):   # what the start model gives each
        p["start_model"] = start_whole.for_rig(ch.get("names"), ch["parents"])[0]
    # a character alone on its rig is judged on `folds` regions of its body, so all folds run
    alone = any(template_of.count(t) == 1 for t in set(template_of))
    n_folds = max(2, int(o["folds"]) if alone else min(int(o["folds"]), len(train_p))) if mode == "folds" else 0
    trainable = o["trainable"]
    settings = dict(epochs=o["epochs"], lr=o["lr"], batch_characters=o["batch_characters"], seed=o["seed"],
                    selection=mode, folds=n_folds, patience=o["patience"], min_epochs=o["min_epochs"],
                    lr_decay=o["lr_decay"], decay_patience=o["decay_patience"], l1_weight=o["l1_weight"],
                    hidden=model.config["hidden"], embed=model.config["embed"],
                    hidden2=model.config["hidden2"], weight_decay=o["weight_decay"], n_features=n_features,
                    trainable=sorted(trainable) if trainable else None,
                    init=hashlib.sha256(b"".join(start_params[k].tobytes() for k in sorted(start_params)))
                    .hexdigest()[:12])
    fingerprint = _fingerprint([[p["name"] for p in train_p], [p["name"] for p in val_p]], settings)

    autocast = _use_autocast(torch, dev, o["precision"])
    run = _Runner(torch, dev, model, settings, notify, ckpt_path, fingerprint, group, autocast, first_mine)
    resume_state = run.load() if o["resume"] else None

    det_before = torch.are_deterministic_algorithms_enabled()
    threads_before = torch.get_num_threads()
    if o["threads"] and dev.type == "cpu":
        torch.set_num_threads(int(o["threads"]))
    torch.use_deterministic_algorithms(True, warn_only=True)
    curves, mean_curve, stopped_early, epochs_for = [], None, False, None
    try:
        if mode == "holdout":
            params, best_epoch, history, stopped_early = select_holdout(
                run, train_p, val_p, start_params, resume_state, o["epochs"], o["patience"], o["min_epochs"])
        else:
            snapshots, epochs_for, history, curves, mean_curve = select_folds(
                run, train_p, start_params, resume_state, o["epochs"], n_folds)
            best_epoch = max(epochs_for)
            params = snapshots.get(best_epoch, start_params)
    finally:
        torch.use_deterministic_algorithms(det_before)
        torch.set_num_threads(threads_before)

    kept_start = best_epoch == 0
    model.params = params
    if kept_start and start is not None:      # the start model as it was (a gated one with its gate)
        model.config.update({k: v for k, v in start.config.items() if k == "gate"})
        model.fallback = start.fallback
    smooth_table = {}
    if mode == "holdout" and not kept_start:
        smooth_table = choose_smoothing(model, val_p, o["smoothing"], group)
        if smooth_table:
            model.config["smooth"] = {"iterations": int(min(smooth_table, key=smooth_table.get)), "strength": 0.5}

    if mode == "holdout":
        rows = _rows(model, val_p, group)
        template_rows = None
    else:
        rows = _rows(model, train_p, group, [c[e or best_epoch] for c, e in zip(curves, epochs_for)])
        template_rows = _template_rows(rig_templates, template_of, rows, epochs_for)
        for row, t in zip(rows, template_of):     # what the gated model gives each character
            if not template_rows[t]["use"]:
                row["network_l1"], row["l1"] = row["l1"], row["start_l1"]
        if not kept_start:
            model = _gated_chain(model, snapshots, template_rows, start_whole, init_name)
    mean = lambda key: float(np.mean([r[key] for r in rows])) if rows else None  # noqa: E731
    report = {
        "out": str(out_path), "date": date.today().isoformat(), "device": str(dev),
        "processes": group.size, "backend": group.backend, "precision": "bf16" if autocast else "fp32",
        "torch": torch.__version__, "settings": settings, "fingerprint": fingerprint,
        "n_parameters": model.n_parameters, "init": init_name, "selection": mode, "folds": n_folds,
        "epochs_run": len(history) if mode == "holdout" else n_folds * o["epochs"] + best_epoch,
        "best_epoch": best_epoch, "kept_start": kept_start,
        "improved_characters": [int(sum(r["l1"] < r["start_l1"] - IMPROVEMENT for r in rows)), len(rows)],
        "best_val_l1": mean("l1"), "start_val_l1": mean("start_l1"), "prior_val_l1": mean("prior_l1"),
        "stopped_early": stopped_early, "history": history,
        "cv_curve": [round(float(v), 5) for v in mean_curve] if mean_curve is not None else None,
        "train": [p["name"] for p in train_p], "val": [p["name"] for p in (val_p if mode == "holdout" else train_p)],
        "val_families": sorted({p["family"] for p in val_p}),
        "smoothing_val_l1": {str(k): v for k, v in smooth_table.items()},
        "val_characters": rows,
        "templates": [{k: v for k, v in t.items() if k != "pairs"} for t in template_rows or []],
        "extra_characters": _rows(model, extra_p, group),
        "seconds": round(time.perf_counter() - started, 1), "feature_seconds": round(feature_seconds, 2),
    }
    model.config["info"] = {**model.config.get("info", {}),
                            "date": report["date"], "train_characters": len(train_p),
                            "val_characters": len(report["val"]), "selection": mode,
                            "best_epoch": best_epoch, "kept_start": kept_start,
                            "improved_characters": report["improved_characters"],
                            "best_val_l1": report["best_val_l1"], "start_val_l1": report["start_val_l1"],
                            "prior_val_l1": report["prior_val_l1"], "init": init_name,
                            "settings": settings, **(o["info"] or {})}
    if o["carry_weights"]:
        model.exemplars = _exemplars([*train_chars, *val_chars], start if kept_start else None)
        report["carried_characters"] = len(model.exemplars)
    if group.is_main:
        model.save(out_path)
        Path(str(out_path) + ".json").write_text(json.dumps(report, indent=1))
        ckpt_path.unlink(missing_ok=True)     # the run is complete: nothing left to resume
    notify({"stage": "done", "message": summary(report)})
    group.barrier()                           # the model is written before any process returns
    return report


def _exemplars(characters, start) -> list:
    """The characters kept in the model, whose own weights Auto Skin carries over where a
    new character's surface coincides with theirs (exemplars.py); first the start
    model's own when it is written back as it was (a trained model's fallback keeps its)."""
    template_of, rig_templates = templates.group(characters)
    kept = list(start.exemplars) if start is not None else []
    return kept + [exemplars.make(ch, {k: rig_templates[t][k] for k in ("label", "by_index", "bones", "pairs")})
                   for ch, t in zip(characters, template_of)]


def _gated_chain(model, snapshots, template_rows, start, start_name):
    """The trained model: per epoch count chosen for some rig template, the network
    trained that long, gated to those templates; each falls back on the one chosen for
    fewer epochs, the shortest on the start model (SkinModel.for_rig walks the chain)."""
    inner, inner_name = start, start_name
    for e in sorted(snapshots):
        outer = SkinModel(snapshots[e], model.stats, json.loads(json.dumps(model.config)))
        outer.config["gate"] = {"templates": [{**t, "use": t["epochs"] == e} for t in template_rows],
                                "fallback_name": inner_name, "chained": inner is not start}
        outer.fallback = inner
        inner, inner_name = outer, f"the trained model ({e} epochs)"
    return inner


def _template_rows(rig_templates, template_of, rows, epochs_for) -> list:
    """Per rig template: its members, their mean held-out L1 with the start model and with
    the trained one, the epoch count chosen for it and whether a trained network is used
    for it."""
    out = []
    for t, tmpl in enumerate(rig_templates):
        idx = [i for i, k in enumerate(template_of) if k == t]
        mean = lambda key: float(np.nanmean([rows[i][key] for i in idx]))  # noqa: E731
        out.append({**tmpl, "start_l1": mean("start_l1"), "epochs": int(epochs_for[idx[0]]),
                    "trained_l1": mean("l1"), "use": bool(epochs_for[idx[0]] > 0),
                    "validated": ("within the template" if len(idx) >= 2
                                  else "on held-out regions of the character")})
    return out


def templates_text(report: dict) -> list:
    """One line per rig template of a folds run: start -> trained L1, used or not."""
    lines = []
    for t in report.get("templates") or []:
        use = (f"uses the trained model ({t['epochs']} epochs)" if t["use"] and t.get("epochs")
               else "uses the trained model" if t["use"] else "keeps the start model")
        lines.append(f"{t['label']}: L1 {t['start_l1']:.4f} -> {t['trained_l1']:.4f} ({t['validated']}), {use}")
    return lines


def summary(report: dict) -> str:
    """One line for the user: what training did on validation, and the characters kept."""
    carried = report.get("carried_characters")
    line = _validation_summary(report)
    if carried:
        line += (f"; the model keeps its {carried} character{'s' * (carried != 1)}: Auto Skin gives their own "
                 "weights to variants of their bodies on their rigs, where the surfaces coincide")
    return line


def _validation_summary(report: dict) -> str:
    b, s, p = report["best_val_l1"], report["start_val_l1"], report["prior_val_l1"]
    if b is None:
        return f"wrote {report['out']} (no validation characters)"
    how = "cross-validated" if report["selection"] == "folds" else "held-out"
    if report["kept_start"]:
        return (f"training did not clearly improve the start model on {how} validation (L1 {s:.4f}; heat "
                f"prior {p:.4f}): kept the start model")
    better, total = report.get("improved_characters", (None, None))
    line = (f"{how} validation L1 {s:.4f} -> {b:.4f} (start model -> trained, {100 * (b / s - 1):+.1f} %, "
            f"better on {better} of {total} characters; heat prior {p:.4f}), {report['best_epoch']} epochs")
    rigs = report.get("templates") or []
    if rigs:
        used = [t["label"] for t in rigs if t["use"]]
        line += (f"; used for {len(used)} of {len(rigs)} rig templates ({', '.join(used)}), the start model "
                 "for any other armature")
    return line


def _rows(model, preps, group, trained_l1=None) -> list:
    """Per character: L1 (and cross entropy) of the trained network (or `trained_l1[name]`,
    the out-of-fold figures, aligned with `preps`), of what the start model gives it
    (prep["start_model"]) and of the heat prior; the candidates' coverage. Each process
    scores its own characters."""
    local = {}
    for i, p in enumerate(preps):
        if not group.owns(p):
            continue
        fs = p["features"]
        probs = model.predict(fs)
        prior = np.where(candidate_mask(fs.candidates), fs.prior, 0.0)
        prior = prior / np.maximum(prior.sum(1, keepdims=True), 1e-12)
        row = {"name": p["name"], "family": p["family"], "coverage": coverage(p),
               "l1": candidate_l1(probs, p), "prior_l1": candidate_l1(prior, p),
               "ce": cross_entropy(probs, p), "prior_ce": cross_entropy(prior, p)}
        if "start_model" in p:
            row["start_l1"] = candidate_l1(p["start_model"].predict(fs), p)
        if trained_l1 is not None:
            row["l1"] = float(trained_l1[i])
        local[i] = row
    rows = group.gather(local)
    return [rows[i] for i in range(len(preps))]


def evaluate_model(model: SkinModel, characters, feature_fn=None) -> list:
    """Per character: candidate-space L1 (welded vertices, before pruning) and cross
    entropy of `model` and of the heat prior alone, and the candidates' coverage."""
    return _rows(model, [prepare_character(ch, feature_fn) for ch in characters], Group())
