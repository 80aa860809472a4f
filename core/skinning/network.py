# SPDX-License-Identifier: GPL-3.0-or-later
"""Auto Skin's learned part (docs/auto_skin.md#network), inference in plain numpy (no torch
needed).

The network is a *residual refinement of the heat-diffusion prior*: per vertex it sees its
5 candidate bones (`FeatureSet.candidates`) and their prior weights (`FeatureSet.prior`)
and only learns a correction of the prior's logits:

    u_k   = [shared features of the vertex, features of candidate k]       k = 1..5
    e_k   = W1b · tanh(W1a · u_k + b1a) + b1b        per-candidate MLP (one tanh layer)
    g     = max_k e_k                                 max-pool: condensed features
    z_k   = [e_k, g]                                  concat, groups in order
    s_k   = W2b · tanh(W2a · z_k + b2a) + b2b         attention MLP (one tanh layer)
    w_k   = softmax_k( alpha · log(prior_k + eps) + s_k )

`W2b` and `b2b` start at zero and `alpha` at 1, so an untrained model returns the prior
itself; training can only move away from it where the artists' weights say so (the
per-vertex network alone does not reach bone heat's quality: docs/auto_skin.md#network).
Invalid candidates
(index < 0 or a repeat of an earlier candidate, e.g. on skeletons with fewer than 5
bones) are masked out of the max-pool and the softmax.

A model may also carry a surface-smoothing step (`smooth_weights`) applied to the
scattered (V,J) weights before pruning; its strength is part of the model's config.

A model trained on a user's characters may carry a gate (docs/auto_skin.md#house-style): the
rig templates it learned (templates.py) and, per template, whether its trained network is
used for it; every other armature gets what the model it was trained from (`fallback`)
gives it.

`SkinModel.save/load` use a single `.npz`: `param/<name>` arrays, `stats/<name>` feature
normalisation, `config` (JSON text: version, sizes, feature layout, smoothing, gate), and
a gated model's fallback model the same way under `fallback/`.
`core/skinning/torch_net.py` holds the torch twin of `forward`, `train.py` trains it.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import BonesmithError
from ..records import UNREADABLE_NPZ
from ..safe_write import save_atomic
from ..mesh import bbox_diagonal, triangle_edges, weld_positions
from . import exemplars
from .features import K, flipped_columns
from .weights import scatter

__all__ = ["K", "VERSION", "SkinModel", "candidate_mask", "candidate_inputs", "forward",
           "init_params", "smooth_weights", "surface_adjacency",
           "load_model", "default_model", "DEFAULT_MODEL_PATH", "ANY_FRONT_MODEL_PATH"]

VERSION = 2                # 2: the gate (version 1 files read as ungated models)
PRIOR_EPS = 1e-4           # log(prior + eps): keeps zero-prior candidates reachable
MASKED = -1e9              # logit of a masked candidate
PARAM_NAMES = ("W1a", "b1a", "W1b", "b1b", "W2a", "b2a", "W2b", "b2b", "alpha")
_CHUNK = 32768             # vertices per forward chunk (bounds memory at 200k+ vertices)
DEFAULT_MODEL_PATH = Path(__file__).resolve().parents[2] / "models" / "skin_default.npz"
# trained also on half-turned copies: for characters whose armature does not give the front
ANY_FRONT_MODEL_PATH = DEFAULT_MODEL_PATH.with_name("skin_any_front.npz")


# -- inputs ---------------------------------------------------------------------------------

def candidate_mask(candidates) -> np.ndarray:
    """(V,K) bool: candidate k is a real bone (>= 0) and not a repeat of an earlier one."""
    c = np.asarray(candidates)
    valid = c >= 0
    for k in range(1, c.shape[1]):
        valid[:, k] &= ~np.any(c[:, :k] == c[:, k:k + 1], axis=1)
    return valid


def _per_candidate_columns(layout: dict, n_features: int):
    """(shared column indices, (K, Dc) per-candidate column indices) of FeatureSet.x."""
    cand = np.asarray(layout.get("candidate_columns", np.zeros((K, 0))), dtype=np.int64)
    cand = cand.reshape(K, -1)
    used = set(cand.ravel().tolist())
    shared = layout.get("shared_columns")
    if shared is None:
        shared = [i for i in range(n_features) if i not in used]
    return np.asarray(shared, dtype=np.int64), cand


def candidate_inputs(x, prior, candidates, layout: dict):
    """Split per-vertex features into the network's inputs.

    x (V,D), prior (V,K), candidates (V,K) -> shared (V,Ds) float32, per-candidate
    (V,K,Dc) float32, valid (V,K) bool, log prior (V,K) float32. Each candidate also gets
    its prior weight, log prior and a one-hot of its rank (candidates come sorted by
    geodesic distance)."""
    x = np.asarray(x, dtype=np.float32)
    prior = np.asarray(prior, dtype=np.float32)
    V = len(x)
    x = x.reshape(V, -1)
    valid = candidate_mask(candidates)
    prior = np.where(valid, np.clip(prior, 0.0, 1.0), 0.0).astype(np.float32)
    logprior = np.log(prior + np.float32(PRIOR_EPS)).astype(np.float32)
    shared_cols, cand_cols = _per_candidate_columns(layout, x.shape[1])
    shared = x[:, shared_cols]
    parts = [x[:, cand_cols]] if cand_cols.shape[1] else []          # (V,K,Dc)
    rank = np.broadcast_to(np.eye(K, dtype=np.float32), (V, K, K))
    parts += [prior[..., None], logprior[..., None], rank]
    per_cand = np.concatenate(parts, axis=2).astype(np.float32)
    return np.ascontiguousarray(shared), per_cand, valid, logprior


# -- the network ----------------------------------------------------------------------------

def init_params(n_shared: int, n_cand: int, hidden: int, embed: int, hidden2: int, seed: int = 0):
    """Glorot-style weights; the output layer starts at zero (model == prior)."""
    rng = np.random.default_rng(seed)
    n_in = n_shared + n_cand

    def glorot(a, b):
        return (rng.standard_normal((a, b)) * np.sqrt(2.0 / (a + b))).astype(np.float32)

    return {
        "W1a": glorot(n_in, hidden), "b1a": np.zeros(hidden, np.float32),
        "W1b": glorot(hidden, embed), "b1b": np.zeros(embed, np.float32),
        "W2a": glorot(2 * embed, hidden2), "b2a": np.zeros(hidden2, np.float32),
        "W2b": np.zeros((hidden2, 1), np.float32), "b2b": np.zeros(1, np.float32),
        "alpha": np.ones(1, np.float32),
    }


def forward(params: dict, shared, per_cand, valid, logprior) -> np.ndarray:
    """The network on normalised inputs: (V,K) probabilities (rows sum to 1 over valid
    candidates; a vertex without any valid candidate gets a zero row). float32 maths,
    like the torch twin, softmax in float64."""
    p = {k: np.asarray(v, dtype=np.float32) for k, v in params.items()}
    V = len(shared)
    out = np.zeros((V, K), dtype=np.float64)
    for a in range(0, V, _CHUNK):
        b = min(V, a + _CHUNK)
        s, c, m, lp = shared[a:b], per_cand[a:b], valid[a:b], logprior[a:b]
        # [shared, cand_k] @ W1a == shared @ W1a[:Ds] + cand_k @ W1a[Ds:]
        ds = s.shape[1]
        pre = (s @ p["W1a"][:ds])[:, None, :] + _per_row(c, p["W1a"][ds:]) + p["b1a"]
        e = _per_row(np.tanh(pre), p["W1b"]) + p["b1b"]                 # (n,K,E)
        g = np.where(m[..., None], e, np.float32(-np.inf)).max(axis=1)    # (n,E)
        g = np.where(np.isfinite(g), g, np.float32(0.0))
        E = e.shape[2]
        pre2 = _per_row(e, p["W2a"][:E]) + (g @ p["W2a"][E:])[:, None, :] + p["b2a"]
        score = _per_row(np.tanh(pre2), p["W2b"])[..., 0] + p["b2b"][0]   # (n,K)
        logits = (p["alpha"][0] * lp + score).astype(np.float64)
        logits = np.where(m, logits, MASKED)
        logits -= logits.max(axis=1, keepdims=True)
        ex = np.where(m, np.exp(logits), 0.0)
        total = ex.sum(axis=1, keepdims=True)
        out[a:b] = np.divide(ex, total, out=np.zeros_like(ex), where=total > 0)
    return out


def _per_row(x, W):
    """(n, K, D) @ (D, H) as one (n K, D) product: numpy would make n small ones."""
    n, k, d = x.shape
    return (x.reshape(n * k, d) @ W).reshape(n, k, W.shape[1])


# -- surface smoothing ----------------------------------------------------------------------

def surface_adjacency(vertices, faces, weld: float = 1e-6):
    """Row-normalised (V,V) sparse averaging operator over the surface: each vertex's
    neighbours through faces, with coincident vertices (within `weld` × bbox diagonal)
    treated as one, so seams and split normals do not cut the smoothing."""
    from scipy.sparse import coo_matrix, diags

    Vx = np.asarray(vertices, dtype=np.float64).reshape(-1, 3)
    F = np.asarray(faces, dtype=np.int64).reshape(-1, 3)
    n = len(Vx)
    _, weld_id, counts = weld_positions(Vx, max(weld * bbox_diagonal(Vx), 1e-12))
    m = int(weld_id.max()) + 1 if n else 0
    e = triangle_edges(F)
    a, b = weld_id[e[:, 0]], weld_id[e[:, 1]]
    keep = a != b
    a, b = a[keep], b[keep]
    A = coo_matrix((np.ones(2 * len(a)), (np.concatenate([a, b]), np.concatenate([b, a]))),
                   shape=(m, m)).tocsr()
    A.data[:] = 1.0                                   # duplicate edges count once
    deg = np.asarray(A.sum(axis=1)).ravel()
    A = diags(np.divide(1.0, deg, out=np.zeros_like(deg), where=deg > 0)) @ A
    # gather (V -> welded), average, scatter back (welded -> V)
    G = coo_matrix((1.0 / counts[weld_id], (weld_id, np.arange(n))), shape=(m, n)).tocsr()
    S = coo_matrix((np.ones(n), (np.arange(n), weld_id)), shape=(n, m)).tocsr()
    isolated = deg == 0
    return S, A, G, isolated


def smooth_weights(weights, vertices, faces, *, iterations: int, strength: float = 0.5,
                   operator=None) -> np.ndarray:
    """`iterations` steps of w <- (1 - strength) w + strength · mean(neighbours' w) on the
    surface (welded), rows renormalised. weights (V,J) dense; returns a new array."""
    W = np.asarray(weights, dtype=np.float64)
    if iterations <= 0 or strength <= 0 or len(W) == 0:
        return W.copy()
    S, A, G, isolated = operator if operator is not None else surface_adjacency(vertices, faces)
    w = G @ W
    for _ in range(int(iterations)):
        nb = A @ w
        nb[isolated] = w[isolated]
        w = (1.0 - strength) * w + strength * nb
    out = S @ w
    total = out.sum(axis=1, keepdims=True)
    return np.divide(out, total, out=np.zeros_like(out), where=total > 0)


# -- the model ------------------------------------------------------------------------------

@dataclass
class SkinModel:
    """A trained Auto Skin network: parameters, feature normalisation and config."""
    params: dict
    stats: dict                       # shared_mean, shared_std, cand_mean, cand_std (float32)
    config: dict = field(default_factory=dict)
    fallback: "SkinModel | None" = None   # gated models: the model it was trained from
    exemplars: list = field(default_factory=list)   # trained characters (exemplars.py)

    # config keys: version, n_shared, n_cand, hidden, embed, hidden2, n_features,
    # layout {shared_columns, candidate_columns}, smooth {iterations, strength}, info {...},
    # gate {templates: [{label, by_index, bones, pairs, members, use, start_l1, trained_l1}],
    #       fallback_name} (gated models only)

    @classmethod
    def untrained(cls, n_features: int, layout: dict | None = None, *, hidden: int = 32,
                  embed: int = 16, hidden2: int = 32, seed: int = 0) -> "SkinModel":
        """A fresh model (it returns the prior until trained); stats are identity."""
        layout = dict(layout or {})
        shared_cols, cand_cols = _per_candidate_columns(layout, n_features)
        n_shared, n_cand = len(shared_cols), cand_cols.shape[1] + 2 + K
        stats = {"shared_mean": np.zeros(n_shared, np.float32),
                 "shared_std": np.ones(n_shared, np.float32),
                 "cand_mean": np.zeros(n_cand, np.float32),
                 "cand_std": np.ones(n_cand, np.float32)}
        config = {"version": VERSION, "n_features": int(n_features), "n_shared": n_shared,
                  "n_cand": n_cand, "hidden": hidden, "embed": embed, "hidden2": hidden2,
                  "layout": {"shared_columns": shared_cols.tolist(),
                             "candidate_columns": cand_cols.tolist()},
                  "smooth": {"iterations": 0, "strength": 0.5}, "info": {}}
        return cls(init_params(n_shared, n_cand, hidden, embed, hidden2, seed), stats, config)

    # -- inference --
    def inputs(self, features):
        """Normalised network inputs for a FeatureSet (x, prior, candidates)."""
        x = np.asarray(features.x, dtype=np.float32)
        if x.ndim != 2 or x.shape[1] != self.config["n_features"]:
            raise BonesmithError(
                f"This skin model expects {self.config['n_features']} features per vertex but Auto "
                f"Skin computes {x.shape[1] if x.ndim == 2 else x.shape}: it was trained with another "
                "version of Bonesmith. Train it again (Train Skin) or pick another Skin Model (the "
                "shipped default works).")
        shared, cand, valid, logprior = candidate_inputs(x, features.prior, features.candidates,
                                                         self.config["layout"])
        st = self.stats
        shared = (shared - st["shared_mean"]) / st["shared_std"]
        cand = (cand - st["cand_mean"]) / st["cand_std"]
        return shared.astype(np.float32), cand.astype(np.float32), valid, logprior

    def predict(self, features) -> np.ndarray:
        """(n,K) weights over `features.candidates` (rows sum to 1 over valid candidates).

        With smoothing in the config (and the FeatureSet's welded mesh at hand) the
        network's output is scattered to all bones, smoothed over the surface and read
        back on the candidates."""
        return self._smoothed(forward(self.params, *self.inputs(features)), features)

    def predict_moved(self, features, moves) -> list:
        """predict() of the character moved by each diag(signs) of `moves` (features.mirrored),
        from one normalisation of the inputs: a moved vector column's normalised value is
        -(x + mean) / std, derived from (x - mean) / std."""
        shared, cand, valid, logprior = self.inputs(features)
        shared_cols, cand_cols = _per_candidate_columns(self.config["layout"], self.config["n_features"])
        st = self.stats
        out = []
        for signs in moves:
            if all(x > 0 for x in signs):               # the character as it is
                out.append(self._smoothed(forward(self.params, shared, cand, valid, logprior), features))
                continue
            flipped = flipped_columns(signs)
            s_flip = np.flatnonzero(np.isin(shared_cols, flipped))
            c_flip = np.zeros(cand.shape[1:], bool)
            c_flip[:, :cand_cols.shape[1]] = np.isin(cand_cols, flipped)
            s, c = shared.copy(), cand.copy()              # only the flipped columns change
            s[:, s_flip] = -shared[:, s_flip] - (2 * st["shared_mean"] / st["shared_std"])[s_flip]
            c[:, c_flip] = -cand[:, c_flip] - np.broadcast_to(2 * st["cand_mean"] / st["cand_std"], c_flip.shape)[c_flip]
            out.append(self._smoothed(forward(self.params, s, c, valid, logprior), features))
        return out

    def _smoothed(self, probs, features) -> np.ndarray:
        sm = self.config.get("smooth") or {}
        iterations = int(sm.get("iterations", 0))
        mesh = getattr(features, "mesh", None)
        if iterations > 0 and mesh is not None:
            cand = np.asarray(features.candidates, dtype=np.int64)
            valid = candidate_mask(cand)
            n_bones = int(getattr(features, "n_bones", cand.max() + 1))
            W = scatter(cand, np.where(valid, probs, 0.0), n_bones)
            W = smooth_weights(W, mesh.V, mesh.F, iterations=iterations,
                               strength=float(sm.get("strength", 0.5)))
            probs = np.where(valid, np.take_along_axis(W, cand, axis=1), 0.0)
            total = probs.sum(axis=1, keepdims=True)
            probs = np.divide(probs, total, out=np.zeros_like(probs), where=total > 0)
        return probs

    # -- the gate --
    @property
    def gate(self) -> dict | None:
        return self.config.get("gate") if self.fallback is not None else None

    def ungated(self) -> "SkinModel":
        """This model's own network for every armature (the gate and fallback left out)."""
        return SkinModel(self.params, self.stats, {k: v for k, v in self.config.items() if k != "gate"})

    def for_rig(self, names, parents):
        """(the model to weight this armature with, a line saying which and why; None
        without a gate). Without a gate: this model. With one: this model for an armature
        of a template it was validated on and kept for; for any other, what the model it
        was trained from (`fallback`, itself perhaps gated) gives it. The networks one
        training run kept for different epoch counts form a chain ("chained" gates,
        train._gated_chain): an armature passes down it to its own."""
        gate = self.gate
        if gate is None:
            return self, None
        from . import templates
        found, score = templates.match(gate["templates"], names, parents)
        if found is not None and gate["templates"][found].get("use"):
            return self, f"the trained model (rig template '{gate['templates'][found]['label']}')"
        if gate.get("chained"):          # the next network of one training run decides (train._gated_chain)
            return self.fallback.for_rig(names, parents)
        why = (f"the armature matches none of the rig templates it was trained on (best {score:.2f})"
               if found is None else
               f"training did not improve the rig template '{gate['templates'][found]['label']}'")
        model, inner = self.fallback.for_rig(names, parents)
        return model, f"{inner or gate.get('fallback_name', 'the start model')} ({why})"

    def exemplars_for(self, names, parents) -> list:
        """The trained characters (exemplars.py) of this armature's rig template, this
        model's and those of the models it was trained from."""
        inner = self.fallback.exemplars_for(names, parents) if self.fallback is not None else []
        return exemplars.matching(self.exemplars, names, parents) + inner

    # -- files --
    def save(self, path) -> Path:
        """Write the model to `path` (.npz), atomically (a failed write keeps the old file)."""
        arrays = self._arrays("")
        return save_atomic(lambda partial: np.savez_compressed(partial, **arrays), path)

    def _arrays(self, prefix: str) -> dict:
        """This model's arrays under `prefix`; a gated model's fallback under prefix + "fallback/"."""
        arrays = {f"{prefix}param/{k}": np.asarray(v, dtype=np.float32) for k, v in self.params.items()}
        arrays.update({f"{prefix}stats/{k}": np.asarray(v, dtype=np.float32) for k, v in self.stats.items()})
        config = {k: v for k, v in self.config.items() if k != "exemplars"}
        config["version"] = VERSION if self.gate is not None or self.exemplars else 1  # older readers read ungated
        if self.exemplars:
            ex_arrays, config["exemplars"] = exemplars.to_arrays(self.exemplars, prefix)
            arrays.update(ex_arrays)
        arrays[f"{prefix}config"] = np.array(json.dumps(config, sort_keys=True))
        if self.gate is not None:
            arrays.update(self.fallback._arrays(prefix + "fallback/"))
        return arrays

    @classmethod
    def load(cls, path) -> "SkinModel":
        path = Path(path)
        try:
            with np.load(path, allow_pickle=False) as d:
                return cls._from_arrays(d, "", path.name)
        except (*UNREADABLE_NPZ, KeyError) as error:
            raise BonesmithError(f"Could not read the skin model {path.name}: {error}") from None

    @classmethod
    def _from_arrays(cls, d, prefix: str, file_name: str) -> "SkinModel":
        config = json.loads(str(d[f"{prefix}config"]))
        part = lambda group: {k[len(prefix) + len(group):]: d[k].astype(np.float32)  # noqa: E731
                              for k in d.files if k.startswith(prefix + group) and "/" not in k[len(prefix + group):]}
        params, stats = part("param/"), part("stats/")
        if int(config.get("version", 0)) > VERSION:
            raise BonesmithError(f"{file_name} is a skin model of version {config['version']}; "
                                 f"this Bonesmith reads up to version {VERSION}: update Bonesmith")
        missing = [k for k in PARAM_NAMES if k not in params]
        if missing:
            raise BonesmithError(f"{file_name} is not a Bonesmith skin model (no {missing[0]})")
        fallback = None
        if "gate" in config:
            if f"{prefix}fallback/config" not in d.files:
                raise BonesmithError(f"{file_name} is a damaged skin model (its gate has no start model)")
            fallback = cls._from_arrays(d, prefix + "fallback/", file_name)
        try:
            carried = exemplars.from_arrays(d, prefix, config.get("exemplars"))
        except KeyError:
            raise BonesmithError(f"{file_name} is a damaged skin model (a trained character's arrays are missing)") from None
        return cls(params, stats, config, fallback, carried)

    @property
    def n_parameters(self) -> int:
        return int(sum(np.size(v) for v in self.params.values()))


_loaded: dict = {}


def load_model(path) -> SkinModel:
    """A SkinModel from a file, cached by path and modification time."""
    path = Path(path)
    try:
        key = (str(path.resolve()), path.stat().st_mtime_ns)
    except OSError:
        raise BonesmithError(f"Skin model not found: {path}") from None
    if key not in _loaded:
        if len(_loaded) >= 4:
            _loaded.clear()
        _loaded[key] = SkinModel.load(path)
    return _loaded[key]


def default_model(*, front_known: bool = True):
    """The shipped default model (models/skin_default.npz), or None without one. For a
    character whose front is not known (prep.upright kept the file's), the shipped model
    that does not depend on the facing (models/skin_any_front.npz) when there is one."""
    if not front_known and ANY_FRONT_MODEL_PATH.is_file():
        return load_model(ANY_FRONT_MODEL_PATH)
    return load_model(DEFAULT_MODEL_PATH) if DEFAULT_MODEL_PATH.is_file() else None
