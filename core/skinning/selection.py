# SPDX-License-Identifier: GPL-3.0-or-later
"""Model selection for Auto Skin training (docs/auto_skin.md#training): which epoch's
network is kept, run by train.py's training loop (`run`: its _Runner).

- "folds" (up to FOLDS_MAX_GROUPS rig templates): cross-validation by character, each rig
  template's characters dealt to different folds, so a held-out character of a template
  with two or more characters is judged with its siblings in training (within the
  family); one whose template has no other character is trained on in every fold and
  judged on one region of its body per fold (the bones' territories dealt to the folds),
  since no sibling can show what it teaches. Each fold trains from the start model on
  the other folds for `epochs` epochs and records every held-out unit's L1 after every
  epoch. Then the gate (docs/auto_skin.md#house-style): each template gets the epoch
  count with its largest total held-out gain (its characters', or a single character's
  regions') among those where the gain is clear (clear_gain), or none; all characters
  are trained for the longest count chosen, the network kept at each chosen count.
  Epoch 0 is the start model itself, so a run that helps no template hands back the
  start model.
- "holdout" (more families, or `val_families` given): a share of the families is held
  out, early stopping after `patience` epochs without a better validation L1 (never
  before `min_epochs`), the best epoch kept; epoch 0 again is the start model. The
  surface smoothing is then chosen on the held-out families (choose_smoothing).
Either way the kept network must beat the start model clearly (clear_gain).
"""
from __future__ import annotations

import json
import math
import time

import numpy as np

from .training_data import candidate_l1

FOLDS = 5                   # cross-validation folds (fewer when there are fewer families)
FOLDS_MAX_GROUPS = 12       # up to this many families: cross-validation, more: a held-out share
MIN_EPOCHS = 20             # holdout: never stop before this many epochs
IMPROVEMENT = 1e-4          # validation L1 must drop by more than this to replace the start model
SIGNIFICANCE = 2.0          # ... and by more than this many standard errors of the per-character gains


def select_holdout(run, train_p, val_p, start_params, resume_state, epochs, patience, min_epochs):
    """Early stopping on held-out families. Returns (params, best epoch, history,
    stopped_early); epoch 0 is the start model."""
    s = run.s
    net, opt = run.network(start_params)
    start_l1 = [l1 for _, l1 in run.start_scores(val_p)]
    history, best = [], {"l1": float(np.mean(start_l1)) if val_p else math.inf, "epoch": 0,
                         "params": start_params}
    first, bad, since_decay = 1, 0, 0
    if resume_state is not None:
        net.load_state_dict(resume_state["net"])
        opt.load_state_dict(resume_state["opt"])
        history = json.loads(resume_state["history"])
        best = {"l1": resume_state["best_l1"], "epoch": resume_state["best_epoch"],
                "params": _params_of(resume_state["best_params"])}
        first, bad, since_decay = resume_state["epoch"] + 1, resume_state["bad_epochs"], resume_state["since_decay"]
    stopped_early = False
    for epoch in range(first, epochs + 1):
        if val_p and bad >= patience and epoch > min_epochs:
            stopped_early = True
            break
        t0 = time.perf_counter()
        loss = run.epoch(net, opt, train_p, [s["seed"], epoch], {"epoch": epoch, "epochs": epochs})
        params = net.numpy_params()
        val = run.scores(params, val_p)
        val_loss = float(np.mean([v[0] for v in val])) if val else float("nan")
        val_l1 = float(np.mean([v[1] for v in val])) if val else float("nan")
        metric = val_l1 if val else loss
        if metric < best["l1"] - (IMPROVEMENT if val else 0.0):
            best, bad, since_decay = {"l1": metric, "epoch": epoch, "params": params}, 0, 0
        else:
            bad += 1
            since_decay += 1
            if s["lr_decay"] < 1 and since_decay >= s["decay_patience"]:
                for group in opt.param_groups:
                    group["lr"] *= s["lr_decay"]
                since_decay = 0
        history.append({"epoch": epoch, "lr": opt.param_groups[0]["lr"], "train_loss": loss,
                        "val_loss": val_loss, "val_l1": val_l1, "seconds": round(time.perf_counter() - t0, 3)})
        run.save(epoch=epoch, net=net.state_dict(), opt=opt.state_dict(), history=json.dumps(history),
                 best_l1=float(best["l1"]), best_epoch=int(best["epoch"]),
                 best_params=_tensors_of(run.torch, best["params"]), bad_epochs=bad, since_decay=since_decay)
        run.notify({"stage": "epoch", "epoch": epoch, "epochs": epochs, "train_loss": loss,
                    "val_loss": val_loss, "val_l1": val_l1, "best_l1": float(best["l1"]),
                    "best_epoch": int(best["epoch"])})
    else:
        stopped_early = bool(val_p) and bad >= patience
    if val_p and best["epoch"] > 0:
        best_l1 = [l1 for _, l1 in run.scores(best["params"], val_p)]
        if not clear_gain(np.subtract(start_l1, best_l1)):
            best = {"l1": float(np.mean(start_l1)), "epoch": 0, "params": start_params}
    return best["params"], int(best["epoch"]), history, stopped_early


def _params_of(tensors: dict) -> dict:
    return {k: v.cpu().numpy() for k, v in tensors.items()}


def _tensors_of(torch, params: dict) -> dict:
    return {k: torch.from_numpy(np.asarray(v)) for k, v in params.items()}


def clear_gain(gains) -> bool:
    """Whether per-character validation gains (start L1 - trained L1) show a real
    improvement: a mean above IMPROVEMENT and above SIGNIFICANCE standard errors. The best
    of many epochs on a few characters is an optimistic estimate; a gain within the noise
    of the characters does not replace the start model."""
    gains = np.asarray(gains, dtype=np.float64)
    gains = gains[np.isfinite(gains)]
    if not len(gains):
        return False
    mean = float(gains.mean())
    se = float(gains.std(ddof=1) / math.sqrt(len(gains))) if len(gains) > 1 else math.inf
    return mean > IMPROVEMENT and mean > SIGNIFICANCE * se


def fold_groups(preps, n_folds: int, seed: int) -> list:
    """Fold index per character: each rig template's characters (shuffled with `seed`)
    dealt round-robin, one template after the other, so a template's characters land in
    different folds and the folds stay even."""
    rng = np.random.default_rng([seed, 7])
    by_template = gate_groups(preps)
    fold, k = [0] * len(preps), 0
    for t in sorted(by_template, key=lambda t: (-len(by_template[t]), t)):
        for i in rng.permutation(by_template[t]):
            fold[int(i)], k = k % n_folds, k + 1
    return fold


def gate_groups(preps) -> dict:
    """{rig template: character indices} (train.py sets each prep's "template"): the
    characters the gate judges together."""
    out = {}
    for i, p in enumerate(preps):
        out.setdefault(p.get("template", i), []).append(i)
    return out


def choose_gate(table, groups) -> dict:
    """{group: epoch count} from the held-out L1 table (units x epochs, column 0 the start
    model; groups: {group: unit rows}): per group the epoch count with its largest total
    gain among those where its gains are clear (clear_gain); 0 (the start model) where
    they are clear at none."""
    chosen = {}
    for g, idx in groups.items():
        best, best_total = 0, 0.0
        for e in range(1, table.shape[1]):
            gains = table[idx, 0] - table[idx, e]
            total = float(np.nansum(gains))
            if total > best_total and clear_gain(gains):
                best, best_total = e, total
        chosen[g] = best
    return chosen


def body_regions(prep, n_regions: int, seed) -> np.ndarray:
    """Region (0 .. n_regions - 1) of each row of a character: the rows nearest each bone
    (its first candidate) go together, the bones dealt to the regions in an order drawn
    from `seed`, so that a region is a few bones' whole territories."""
    nearest = np.asarray(prep["features"].candidates)[:, 0]
    n_bones = int(nearest.max()) + 1 if len(nearest) else 0
    region = np.empty(n_bones, dtype=np.int64)
    region[np.random.default_rng([seed, 11]).permutation(n_bones)] = np.arange(n_bones) % n_regions
    return region[nearest]


def region_views(prep, regions, f) -> tuple:
    """(training view, held-out view) of a character: its rows outside region f, and in
    it (the loss and the scores use only a view's `mask` and `weighted` rows)."""
    held = regions == f
    return ({**prep, "mask": prep["mask"] & ~held, "weighted": prep["weighted"] & ~held},
            {**prep, "mask": prep["mask"] & held, "weighted": prep["weighted"] & held})


def validation_units(preps, n_folds: int) -> tuple:
    """(units, singles): what cross-validation scores. A character whose rig template has
    siblings is one unit (None: held out whole in its fold); a character alone on its
    template is n_folds units, one per body region (held out in fold f: trained on its
    other regions, scored on region f), since no other character can show what it teaches."""
    by_template = gate_groups(preps)
    singles = sorted(idx[0] for idx in by_template.values() if len(idx) == 1)
    units = [(i, None) for i in range(len(preps)) if i not in singles]
    units += [(i, f) for i in singles for f in range(n_folds)]
    return units, singles


def select_folds(run, preps, start_params, resume_state, epochs, n_folds):
    """Cross-validation over epoch counts per rig template (the gate), then all
    characters trained for the longest chosen count. Returns (snapshots {epoch count:
    params} for each count chosen, epochs_for, history, curves, mean curve):
    epochs_for[i] is the count chosen for character i's template (0: the start model),
    curves[i] its held-out L1 after epochs 0..epochs (a single character's: over its
    held-out regions, weighted by their rows)."""
    s = run.s
    fold = fold_groups(preps, n_folds, s["seed"])
    units, singles = validation_units(preps, n_folds)
    regions = {i: body_regions(preps[i], n_folds, [s["seed"], i]) for i in singles}
    phase, first, curves, history = 0, 1, [None] * len(units), []
    if resume_state is not None:
        phase, first = int(resume_state["phase"]), int(resume_state["epoch"]) + 1
        curves, history = json.loads(resume_state["curves"]), json.loads(resume_state["history"])
    total = n_folds * epochs + epochs
    for f in range(phase, n_folds):
        views = {i: region_views(preps[i], regions[i], f) for i in singles}
        train_p = [p for i, (p, k) in enumerate(zip(preps, fold)) if k != f and i not in views]
        train_p += [views[i][0] for i in singles]
        held = [u for u, (i, r) in enumerate(units) if (r is None and fold[i] == f) or r == f]
        val_p = [preps[units[u][0]] if units[u][1] is None else views[units[u][0]][1] for u in held]
        net, opt = run.network(start_params)
        if resume_state is not None and f == phase:
            net.load_state_dict(resume_state["net"])
            opt.load_state_dict(resume_state["opt"])
        else:
            first = 1
            for u, (_, l1) in zip(held, run.start_scores(val_p)):
                curves[u] = [l1]
        for epoch in range(first, epochs + 1):
            loss = run.epoch(net, opt, train_p, [s["seed"], f, epoch],
                             {"epoch": f * epochs + epoch, "epochs": total})
            for u, (_, l1) in zip(held, run.scores(net.numpy_params(), val_p)):
                curves[u].append(l1)
            run.save(phase=f, epoch=epoch, net=net.state_dict(), opt=opt.state_dict(),
                     curves=json.dumps(curves), history=json.dumps(history))
            run.notify({"stage": "epoch", "epoch": f * epochs + epoch, "epochs": total, "train_loss": loss,
                        "val_loss": float("nan"), "val_l1": _mean([curves[u][-1] for u in held]),
                        "phase": f"fold {f + 1}/{n_folds}"})
        run.release([v for pair in views.values() for v in pair])
        resume_state = None
    table = np.array(curves, dtype=np.float64)
    by_template = gate_groups(preps)
    chosen = choose_gate(table, {t: [u for u, (i, _) in enumerate(units) if i in idx]
                                 for t, idx in by_template.items()})
    epochs_for = [0] * len(preps)
    for t, idx in by_template.items():
        for i in idx:
            epochs_for[i] = chosen[t]
    by_character = _character_curves(table, units, regions, len(preps))
    mean_curve = np.nanmean(by_character, axis=0)
    best = max(epochs_for)
    wanted = {e for e in epochs_for if e > 0}
    net, opt = run.network(start_params)
    first, snapshots = 1, {}
    if phase == n_folds and resume_state is not None:
        net.load_state_dict(resume_state["net"])
        opt.load_state_dict(resume_state["opt"])
        first = int(resume_state["epoch"]) + 1
        snapshots = {int(e): _params_of(p) for e, p in resume_state.get("snapshots", {}).items()}
    for epoch in range(first, best + 1):
        t0 = time.perf_counter()
        loss = run.epoch(net, opt, preps, [s["seed"], n_folds, epoch],
                         {"epoch": n_folds * epochs + epoch, "epochs": n_folds * epochs + best})
        if epoch in wanted:
            snapshots[epoch] = net.numpy_params()
        history.append({"epoch": epoch, "lr": s["lr"], "train_loss": loss, "val_loss": float("nan"),
                        "val_l1": float(mean_curve[epoch]), "seconds": round(time.perf_counter() - t0, 3)})
        run.save(phase=n_folds, epoch=epoch, net=net.state_dict(), opt=opt.state_dict(),
                 curves=json.dumps(curves), history=json.dumps(history),
                 snapshots={str(e): _tensors_of(run.torch, p) for e, p in snapshots.items()})
        run.notify({"stage": "epoch", "epoch": n_folds * epochs + epoch, "epochs": n_folds * epochs + best,
                    "train_loss": loss, "val_loss": float("nan"), "val_l1": float(mean_curve[epoch]),
                    "best_l1": float(mean_curve[best]), "best_epoch": best, "phase": "all characters"})
    return snapshots, epochs_for, history, by_character.tolist(), mean_curve


def _mean(values) -> float:
    """Mean of the finite values (a region with no rows scores nan); nan without any."""
    values = np.asarray(values, dtype=np.float64)
    values = values[np.isfinite(values)]
    return float(values.mean()) if len(values) else float("nan")


def _character_curves(table, units, regions, n) -> np.ndarray:
    """Per character, its units' curves: a whole character's own, a single character's
    regions' averaged by their rows."""
    out = np.full((n, table.shape[1]), np.nan)
    for i in range(n):
        rows = [u for u, (j, _) in enumerate(units) if j == i]
        if i in regions:
            size = np.array([np.sum(regions[i] == units[u][1]) for u in rows], dtype=np.float64)
            part = table[rows]
            ok = np.isfinite(part)
            weight = (ok * size[:, None]).sum(0)
            total = (np.where(ok, part, 0) * size[:, None]).sum(0)
            out[i] = np.divide(total, weight, out=np.full(len(total), np.nan), where=weight > 0)
        else:
            out[i] = table[rows[0]]
    return out


def choose_smoothing(model, val_p, iterations, group, strength: float = 0.5) -> dict:
    """Validation L1 per surface-smoothing iteration count (model.predict with it)."""
    iterations = sorted({int(i) for i in iterations})
    if len(iterations) <= 1 or not val_p:
        return {}
    keep = dict(model.config.get("smooth") or {})
    table = {}
    try:
        for i in iterations:
            model.config["smooth"] = {"iterations": i, "strength": strength}
            local = {k: candidate_l1(model.predict(p["features"]), p)
                     for k, p in enumerate(val_p) if group.owns(p)}
            table[i] = float(np.mean(list(group.gather(local).values())))
    finally:
        model.config["smooth"] = keep
    return table
