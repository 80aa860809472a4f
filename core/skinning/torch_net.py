# SPDX-License-Identifier: GPL-3.0-or-later
"""The torch side of Auto Skin's network (docs/auto_skin.md#network): TorchSkinNet, the
torch twin of network.forward that training optimises, and the lazy import of torch.

torch is imported inside the functions that need it (_torch), so importing this module
never needs it: inference stays in numpy (network.py).
"""
from __future__ import annotations

import numpy as np

from ..errors import BonesmithError
from .network import PARAM_NAMES

TORCH_REQUIREMENT = "torch==2.13.0"


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


def TorchSkinNet(params: dict):
    """torch.nn.Module with network.forward's maths, initialised from numpy params."""
    torch = _torch()
    nn = torch.nn

    class _Net(nn.Module):
        def __init__(self):
            super().__init__()
            for name in PARAM_NAMES:
                self.register_parameter(name, nn.Parameter(torch.tensor(np.asarray(params[name], np.float32))))

        def parts(self, shared, cand, valid, logprior):
            """(per-candidate embeddings e (n,K,E), pooled g (n,E), logits (n,K) with the
            invalid candidates at -1e9): what forward turns into probabilities."""
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
            return e, g, torch.where(valid, logits, torch.full_like(logits, -1e9))

        def forward(self, shared, cand, valid, logprior):
            return torch.log_softmax(self.parts(shared, cand, valid, logprior)[2], dim=1)   # log-probabilities (n,K)

        def numpy_params(self) -> dict:
            return {k: v.detach().cpu().numpy().astype(np.float32).copy()
                    for k, v in self.named_parameters()}

    return _Net()
