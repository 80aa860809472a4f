# SPDX-License-Identifier: GPL-3.0-or-later
"""Auto Skeleton: mesh in, rig out (SPEC section A).

Pipeline: clean + normalise the mesh -> decimated proxy -> Laplacian contraction
(contraction.py) -> greedy edge collapse (collapse.py) -> refinement and rig
building (rig.py). Everything here works in the caller's units and frame.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np


@dataclass
class Skeleton:
    """A rig as arrays. Bone r goes from joints[r] (head) to tails[r]."""
    joints: np.ndarray          # (J, 3) bone heads
    parents: np.ndarray         # (J,) parent bone index, -1 for the root
    tails: np.ndarray           # (J, 3) bone tails
    names: list                 # J unique bone names
    up: np.ndarray = None       # (J, 3) unit vector for each bone's local Z (sets roll)
    info: dict = field(default_factory=dict)  # timings and diagnostics

    def __post_init__(self):
        self.joints = np.asarray(self.joints, dtype=np.float64).reshape(-1, 3)
        self.tails = np.asarray(self.tails, dtype=np.float64).reshape(-1, 3)
        self.parents = np.asarray(self.parents, dtype=np.int64).reshape(-1)
        self.names = [str(n) for n in self.names]
        if self.up is None:
            from .rig import default_up
            self.up = default_up(self.joints, self.tails)
        self.up = np.asarray(self.up, dtype=np.float64).reshape(-1, 3)

    def __len__(self):
        return len(self.joints)

    def to_dict(self) -> dict:
        return {
            "joints": self.joints.tolist(), "tails": self.tails.tolist(),
            "parents": self.parents.tolist(), "names": list(self.names),
            "up": self.up.tolist(), "info": self.info,
        }

    @classmethod
    def from_dict(cls, d: dict) -> "Skeleton":
        return cls(d["joints"], d["parents"], d["tails"], d["names"], d.get("up"), d.get("info", {}))

    def save_json(self, path) -> None:
        with open(path, "w") as fh:
            json.dump(self.to_dict(), fh, indent=1)

    @classmethod
    def load_json(cls, path) -> "Skeleton":
        with open(path) as fh:
            return cls.from_dict(json.load(fh))


def extract_skeleton(vertices, faces, *, detail: float = 1.0, progress=None, **options) -> Skeleton:
    """Build a rig for a triangle mesh.

    vertices (V,3), faces (F,3) int (polygons must be triangulated by the caller).
    detail: 1.0 = default joint density; 2.0 roughly doubles joints per chain.
    progress: optional callable(fraction: float, message: str); it may raise
    errors.Cancelled to stop the job.
    Raises InvalidMeshError on input that cannot be rigged.
    """
    raise NotImplementedError("being written")
