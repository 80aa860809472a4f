# SPDX-License-Identifier: GPL-3.0-or-later
"""Does mesh context let a studio's other families teach a held-out family? An upper
bound for issue "Auto Skin learns": the shipped network, fine-tuned on every 0 A.D.
character outside FAMILY, with and without a message-passing head, tested on FAMILY.

    .venv/bin/python bench/skin_context.py [--leave-out zad_biped] [--epochs 60]
        [--hops 1,3,8] [--source zad_]

The message-passing head (RigNet's edge convolutions, reduced to averaging) sees, per
vertex and candidate bone, the network's own embedding of the candidate, the vertex's
pooled embedding averaged over its 1-, 3- and 8-ring neighbourhoods on the welded mesh,
and the network's and the heat prior's weight of that bone averaged over the same
neighbourhoods; its output, zero at the start, is added to the network's logits. Both
variants train with the same loss as `train-skin` (cross entropy + L1 on the candidates),
Adam, lr 1e-3, 4 characters a step. Test L1 is measured every 5 epochs on the candidates
(mass on other bones counts as missed); the best of those is optimistic (the test
family picks the epoch), which is what an upper bound may be. Features come from the
cache of bench/skin_adapt.py (bench/results/skin_features). Needs torch.

This is a measurement, not a model we ship: nothing here is used by Auto Skin.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from common import DATA_DEFAULT, RESULTS  # noqa: E402
from splits import family_of  # noqa: E402
from train_skin_default import CachedFeatures  # noqa: E402


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA_DEFAULT)
    ap.add_argument("--source", default="zad_")
    ap.add_argument("--leave-out", default="zad_biped", metavar="FAMILY")
    ap.add_argument("--epochs", type=int, default=60)
    ap.add_argument("--hops", default="1,3,8", help="neighbourhood sizes the head averages over")
    ap.add_argument("--seed", type=int, default=0)
    return ap.parse_args(argv)


def characters(args, model) -> list:
    """Per character: the network's inputs, its welded mesh's edges, the training targets."""
    from bonesmith.core.mesh import unique_edges
    from bonesmith.core.skinning.train import load_record
    from bonesmith.core.skinning.training_data import prepare_character
    feats = CachedFeatures(RESULTS / "skin_features")
    out = []
    for path in sorted(args.data.glob(f"{args.source}*.npz")):
        prep = prepare_character(load_record(path), feats)
        fs = prep["features"]
        shared, cand, valid, logprior = model.inputs(fs)
        out.append(dict(name=path.stem, family=family_of(path.stem), shared=shared, cand=cand, valid=valid,
                        logprior=logprior, candidates=fs.candidates, n_bones=fs.n_bones,
                        edges=unique_edges(fs.mesh.F), prep=prep))
    return out


def tensors(torch, ch) -> dict:
    """Torch inputs of a character (cached on it) and its row-normalised averaging
    operator over the welded mesh (each vertex and its one-ring)."""
    if "t" not in ch:
        n, E = len(ch["shared"]), ch["edges"]
        i = np.concatenate([E[:, 0], E[:, 1], np.arange(n)])
        j = np.concatenate([E[:, 1], E[:, 0], np.arange(n)])
        degree = np.bincount(i, minlength=n).astype(np.float32)
        A = torch.sparse_coo_tensor(np.stack([i, j]), 1.0 / degree[i], (n, n)).coalesce()
        p = ch["prep"]
        ch["t"] = {k: torch.from_numpy(np.ascontiguousarray(ch[k])) for k in
                   ("shared", "cand", "valid", "logprior", "candidates")}
        ch["t"].update(A=A, mask=torch.from_numpy(p["mask"]), target=torch.from_numpy(p["target"]))
    return ch["t"]


def network(torch, params: dict, hops: list, context: bool):
    """train-skin's network (core/skinning/torch_net.py: TorchSkinNet), plus the
    message-passing head when `context`."""
    from bonesmith.core.skinning.torch_net import TorchSkinNet
    nn = torch.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.base = TorchSkinNet(params)
            embed = params["W1b"].shape[1]
            if context:
                self.head1 = nn.Linear(embed * (2 + len(hops)) + 2 * len(hops) + 2, 32)
                self.head2 = nn.Linear(32, 1)
                nn.init.zeros_(self.head2.weight)
                nn.init.zeros_(self.head2.bias)

        def forward(self, t, n_bones):
            valid, lp = t["valid"], t["logprior"]
            e, g, logits = self.base.parts(t["shared"], t["cand"], valid, lp)
            if not context:
                return torch.log_softmax(logits, dim=1)
            n, k = logits.shape
            p0 = torch.softmax(logits, dim=1) * valid
            cand, A = t["candidates"], t["A"]
            P = torch.zeros(n, n_bones).scatter_add(1, cand, p0)                        # the network's weights
            Q = torch.zeros(n, n_bones).scatter_add(1, cand, torch.exp(lp) * valid)     # the prior's
            pooled, near, done, gh = [], [], 0, g
            for h in hops:
                for _ in range(h - done):
                    gh, P, Q = torch.sparse.mm(A, gh), torch.sparse.mm(A, P), torch.sparse.mm(A, Q)
                done = h
                pooled.append(gh)
                near += [P.gather(1, cand), Q.gather(1, cand)]
            ctx = torch.cat([g] + pooled, dim=1)[:, None, :].expand(n, k, -1)
            x = torch.cat([e, ctx, torch.stack(near, dim=2), p0[..., None], lp[..., None]], dim=2)
            logits = logits + self.head2(torch.tanh(self.head1(x)))[..., 0]
            logits = torch.where(valid, logits, torch.full_like(logits, -1e9))
            return torch.log_softmax(logits, dim=1)

    return Net()


def test_l1(torch, net, chars) -> float:
    """Mean candidate-space L1 (core/skinning/training_data.candidate_l1) over `chars`."""
    from bonesmith.core.skinning.training_data import candidate_l1
    with torch.no_grad():
        return float(np.mean([candidate_l1(net(tensors(torch, c), c["n_bones"]).exp().double().numpy(), c["prep"])
                              for c in chars]))


def run(torch, args, chars, params, context: bool) -> dict:
    torch.manual_seed(args.seed)
    hops = [int(h) for h in args.hops.split(",")]
    train = [c for c in chars if c["family"] != args.leave_out]
    test = [c for c in chars if c["family"] == args.leave_out]
    net = network(torch, params, hops, context)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3, weight_decay=1e-5)
    rng = np.random.default_rng(args.seed)
    start = test_l1(torch, net, test)
    curve, t0 = [], time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        order = rng.permutation(len(train))
        for b in range(0, len(order), 4):
            opt.zero_grad()
            loss = 0.0
            for i in order[b:b + 4]:
                t = tensors(torch, train[i])
                logp = net(t, train[i]["n_bones"])[t["mask"]]
                target = t["target"][t["mask"]]
                loss = loss + (-(target * logp).sum(1) + (logp.exp() - target).abs().sum(1)).mean() / 4
            loss.backward()
            opt.step()
        if epoch % 5 == 0:
            curve.append((epoch, test_l1(torch, net, train), test_l1(torch, net, test)))
            print(f"  {'context' if context else 'per vertex'} epoch {epoch}: train L1 {curve[-1][1]:.3f}, "
                  f"{args.leave_out} L1 {curve[-1][2]:.3f}", flush=True)
    best = min(curve, key=lambda c: c[2])
    return dict(train=len(train), test=len(test), start=start, best=best, final=curve[-1],
                seconds=time.perf_counter() - t0)


def main(argv=None) -> int:
    args = parse_args(argv)
    import torch
    torch.set_num_threads(1)
    from bonesmith.core.skinning.network import default_model
    model = default_model()
    chars = characters(args, model)
    rows = []
    for context in (False, True):
        r = run(torch, args, chars, model.params, context)
        rows.append((("message passing" if context else "per vertex (train-skin's network)"), r))
    print(f"\n{args.leave_out} left out: trained on {rows[0][1]['train']} characters, tested on "
          f"{rows[0][1]['test']}; candidate L1, default model {rows[0][1]['start']:.3f}\n")
    print("| network | best L1 (epoch) | ratio | L1 at the last epoch | train L1 at the last epoch | s |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, r in rows:
        print(f"| {label} | {r['best'][2]:.3f} ({r['best'][0]}) | {r['best'][2] / r['start']:.3f} | "
              f"{r['final'][2]:.3f} | {r['final'][1]:.3f} | {r['seconds']:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
