# SPDX-License-Identifier: GPL-3.0-or-later
"""The processes one Auto Skin training run spans (docs/auto_skin.md#distributed-training).

One process (the default) or the N processes `torchrun --nproc_per_node N` starts: torch's
own DistributedDataParallel (gloo on CPU, NCCL on CUDA), no scheduler of our own. Each
character belongs to one process (`owners`), which alone computes its features, trains on
it and scores it; scores and reports are gathered so that every process takes the same
decisions (best epoch, early stopping, the kept model). Process 0 alone reports progress
and writes files.

torch is imported only when a run is distributed.
"""
from __future__ import annotations

import gc
import os

import numpy as np

from ..errors import BonesmithError

__all__ = ["Group", "group_from_environment", "owners", "launched_by_torchrun"]


def launched_by_torchrun() -> bool:
    """Whether this process is one of several that torchrun (or another launcher setting
    torch.distributed's environment variables) started."""
    return int(os.environ.get("WORLD_SIZE", "1")) > 1 and "RANK" in os.environ


class Group:
    """One process, or a torch.distributed process group. The methods are collectives:
    every process calls them in the same order."""

    def __init__(self, torch=None, backend: str | None = None, created: bool = False):
        self.torch, self.backend, self._created = torch, backend, created
        self.distributed = torch is not None
        if self.distributed:
            self.rank, self.size = torch.distributed.get_rank(), torch.distributed.get_world_size()
        else:
            self.rank, self.size = 0, 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def owns(self, prep: dict) -> bool:
        """Whether this process computes and scores the character of `prep` (its "owner";
        a prep without one belongs to every process)."""
        return prep.get("owner", self.rank) == self.rank

    def describe(self) -> str:
        return f"distributed: {self.size} processes ({self.backend})" if self.distributed else "1 process"

    def gather(self, local: dict) -> dict:
        """The union of every process's {index: value} (values must pickle)."""
        if not self.distributed:
            return dict(local)
        parts = [None] * self.size
        self.torch.distributed.all_gather_object(parts, local)
        merged = {}
        for part in parts:
            merged.update(part)
        return merged

    def sum(self, values) -> np.ndarray:
        """Element-wise sum over the processes of a float64 array."""
        values = np.asarray(values, dtype=np.float64)
        if not self.distributed:
            return values
        t = self.torch.from_numpy(values.copy())
        if self.backend == "nccl":
            t = t.cuda()
        self.torch.distributed.all_reduce(t)
        return t.cpu().numpy()

    def wrap(self, net, device):
        """`net` for training: DistributedDataParallel when distributed (it averages the
        gradients over the processes and starts them all from process 0's parameters)."""
        if not self.distributed:
            return net
        ddp = self.torch.nn.parallel.DistributedDataParallel
        return ddp(net, device_ids=[device.index] if device.type == "cuda" else None)

    def barrier(self) -> None:
        if self.distributed:
            self.torch.distributed.barrier()

    def close(self) -> None:
        """Ends the process group if this Group started it. A DistributedDataParallel
        model lives in reference cycles; collected only at interpreter exit, after the
        group is gone, its gloo work can abort the process ("terminate called without an
        active exception", seen once in CI under load), so it is collected first."""
        if self._created and self.torch.distributed.is_initialized():
            gc.collect()
            self.torch.distributed.destroy_process_group()
            self._created = False


def group_from_environment(torch, device_type: str) -> Group:
    """The process group torchrun's environment describes (joined once per process:
    a group already initialised is reused), or a one-process Group."""
    dist = torch.distributed
    if dist.is_available() and dist.is_initialized():
        return Group(torch, dist.get_backend())
    if not launched_by_torchrun():
        return Group()
    if not dist.is_available():
        raise BonesmithError("This PyTorch build has no torch.distributed: train in one process")
    backend = "nccl" if device_type == "cuda" else "gloo"
    if device_type == "cuda":
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    dist.init_process_group(backend=backend)
    return Group(torch, backend, created=True)


def owners(sizes, n: int) -> np.ndarray:
    """Process index per item: items dealt largest first in snake order (0..n-1, n-1..0,
    ...), so every process gets as many items as the others (+-1) and about as much work."""
    order = np.argsort(-np.asarray(sizes, dtype=np.float64), kind="stable")
    owner = np.empty(len(order), dtype=np.int64)
    for position, item in enumerate(order):
        lap, slot = divmod(position, n)
        owner[item] = slot if lap % 2 == 0 else n - 1 - slot
    return owner
