# SPDX-License-Identifier: GPL-3.0-or-later
"""Whether a humanoid's feet show its front (docs/auto_skeleton.md#orientation).

The rig is turned to face +Y when its feet bones point +Y (core/orientation.py); a heel or
a boot's back can end a generic leg pointing backwards, and the rig then faces the wrong
way. A foot reaches farther ahead of the ankle (the toes) than behind it (the heel): where
the feet bones turned a humanoid but its feet do not show that reach, the turn is not
confirmed and the file's front is kept.
"""
from __future__ import annotations

import numpy as np

from .recognition import Humanoid
from .skeleton import ankle_joints

FOOT_SIDE = 0.08     # the foot: vertices below the ankle within this share of the height sideways
FOOT_ALONG = 0.3     # ... and front to back
TOES_LEAD = 0.15     # (ahead - behind) / (ahead + behind) of the feet at least this: the toes lead


def toes_lead(humanoid: Humanoid) -> float:
    """(reach ahead - reach behind) / (their sum) of the feet about the ankles, mean of the
    two sides (front -Y; +1: all toes, -1: all heel; 0 where no foot shows)."""
    V = humanoid.vertices
    height = float(np.ptp(V[:, 2]))
    leads = []
    for ankle in ankle_joints(humanoid).values():
        near = ((V[:, 2] <= ankle[2]) & (np.abs(V[:, 0] - ankle[0]) < FOOT_SIDE * height)
                & (np.abs(V[:, 1] - ankle[1]) < FOOT_ALONG * height))
        if near.sum() < 3:
            continue
        dy = V[near, 1] - ankle[1]
        ahead, behind = max(-dy.min(), 0.0), max(dy.max(), 0.0)
        leads.append((ahead - behind) / max(ahead + behind, 1e-12))
    return float(np.mean(leads)) if leads else 0.0


def feet_confirm_front(humanoid: Humanoid) -> bool:
    """Whether the humanoid's toes lead its ankles by TOES_LEAD (see the module)."""
    return toes_lead(humanoid) >= TOES_LEAD
