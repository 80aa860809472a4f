# SPDX-License-Identifier: GPL-3.0-or-later
"""Which way is up and which way is front, found from the rig's limbs
(docs/auto_skeleton.md#orientation).

The naming expects the left-right axis on x (symmetry.symmetry_turn sees to that), up +Z
and the front -Y. Up and front then lie in the y-z plane, one of four quarter turns about
x away. The file's up is kept when the rig has a leg that way (a side chain pointing
down); a rig with no leg that way but legs when another quarter turn is up (a character
lying on its back, front or side) is turned. Then the front: legs whose
last bones (the feet) point +Y belong to a character facing +Y, turned half about the
vertical. Everything here is rotations (3, 3) applied as `points @ R.T`.
"""
from __future__ import annotations

import numpy as np

from .limbs import SIDE_TOLERANCE, labelled_chains

LEG_LENGTH = 0.15        # a leg spans at least this share of the rig's size
MIN_LEGS = 2             # a turn must give at least this many legs to be taken
FLOOR_REACH = 0.10       # a turned rig stands on legs that reach this share of its height from the bottom
FEET_FORWARD = 0.3       # feet pointing +Y by more than this share of their length: facing +Y
HALF_TURN = np.diag([-1.0, -1.0, 1.0])     # half a turn about the vertical: +Y-facing -> -Y
HALF_TURN_Y = np.diag([-1.0, 1.0, -1.0])   # half a turn about y: upside down -> up, front kept
AXES = {(0, 1): "+X", (0, -1): "-X", (1, 1): "+Y", (1, -1): "-Y", (2, 1): "+Z", (2, -1): "-Z"}


def x_turn(quarters: int) -> np.ndarray:
    """Rotation by quarters * 90 degrees about x; one quarter takes +Y to +Z."""
    c, s = np.round(np.cos(np.pi / 2 * quarters)), np.round(np.sin(np.pi / 2 * quarters))
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def _legs(heads, tails, parents, turn, side_tolerance):
    """The leg chains (bone index lists) of the rig seen turned by `turn`, at least
    LEG_LENGTH of the rig's size long (a finger or a toe pointing down is no leg)."""
    h, t = heads @ turn.T, tails @ turn.T
    size = np.ptp(np.concatenate([h, t]), axis=0).max()
    return [chain for chain, (label, _) in labelled_chains(h, t, parents, side_tolerance)
            if label == "leg" and np.linalg.norm(t[chain[-1]] - h[chain[0]]) >= LEG_LENGTH * size]


def count_legs(heads, tails, parents, turn=None, side_tolerance: float = SIDE_TOLERANCE) -> int:
    """How many legs (side chains pointing down, LEG_LENGTH long) the rig has turned by `turn`."""
    turn = np.eye(3) if turn is None else np.asarray(turn)
    return len(_legs(np.asarray(heads, np.float64), np.asarray(tails, np.float64), parents, turn, side_tolerance))


def _standing_legs(heads, tails, parents, turn, side_tolerance):
    """How many legs the rig turned by `turn` stands on: its leg count when a leg reaches
    down to within FLOOR_REACH of the rig's height from its lowest point, else 0 (a fish
    stood on its tail has fins pointing down, but its tail is lower)."""
    legs = _legs(heads, tails, parents, turn, side_tolerance)
    if not legs:
        return 0
    z = np.concatenate([heads, tails]) @ turn.T[:, 2]
    feet = min(min(heads[b] @ turn[2], tails[b] @ turn[2]) for chain in legs for b in chain)
    return len(legs) if feet - z.min() <= FLOOR_REACH * np.ptp(z) else 0


def upright_turn(heads, tails, parents, side_tolerance: float = SIDE_TOLERANCE, *,
                 on_its_side: bool = False, feet: bool = True) -> np.ndarray:
    """Rotation (3, 3) that stands a rig (its left-right axis on x) up: +Z up, facing -Y.

    Up: the identity when the rig has legs as it is or is taller than it is long (y);
    else (lying) the quarter turn about x, either way, that gives the most legs reaching
    the floor (its lowest point), at least MIN_LEGS; else the identity. Upside-down rigs
    are not turned (a character with ears or horns would be stood on them), unless
    on_its_side: the rig was turned from lying on its side (symmetry.SIDE_TURN), so the
    file's up says nothing; then a half turn about y (front kept) is tried too.
    Front: a half turn about the vertical when the legs' last bones point +Y on average by
    more than FEET_FORWARD of their length (unless `feet` is False). Rigs without legs keep
    the file's axes."""
    heads, tails = np.asarray(heads, np.float64), np.asarray(tails, np.float64)
    turn = np.eye(3)
    if not _legs(heads, tails, parents, turn, side_tolerance):
        points = np.concatenate([heads, tails])
        lying = np.ptp(points[:, 1]) > np.ptp(points[:, 2])        # longer along y than tall
        turns = [x_turn(1), x_turn(3)] if lying or on_its_side else []
        if on_its_side:
            turns.append(HALF_TURN_Y)      # upside down: stood up keeping the file's front
        counts = [_standing_legs(heads, tails, parents, t, side_tolerance) for t in turns]
        if counts and max(counts) >= MIN_LEGS:
            turn = turns[int(np.argmax(counts))]
    if feet and _feet_forward(heads, tails, parents, turn, side_tolerance) > FEET_FORWARD:
        turn = HALF_TURN @ turn
    return turn


def _feet_forward(heads, tails, parents, turn, side_tolerance) -> float:
    """How far the legs' last bones point +Y in the rig turned by `turn`, on average, as a
    share of their length (0 without legs)."""
    legs = _legs(heads, tails, parents, turn, side_tolerance)
    if not legs:
        return 0.0
    feet = np.array([tails[c[-1]] - heads[c[-1]] for c in legs]) @ turn.T
    return float((feet[:, 1] / np.maximum(np.linalg.norm(feet, axis=1), 1e-12)).mean())


def feet_give_front(heads, tails, parents, turn=None, side_tolerance: float = SIDE_TOLERANCE) -> bool:
    """Whether the rig turned by `turn` has legs whose feet point forward or back by more
    than FEET_FORWARD of their length: then its front comes from the rig; otherwise
    (legs ending at the ankle, feet pointing down, no legs) it is the file's."""
    turn = np.eye(3) if turn is None else np.asarray(turn)
    heads, tails = np.asarray(heads, np.float64), np.asarray(tails, np.float64)
    return abs(_feet_forward(heads, tails, parents, turn, side_tolerance)) > FEET_FORWARD


def axis_name(direction) -> str:
    """'+X', '-Y' ... for the coordinate axis nearest to a direction (3,)."""
    k = int(np.argmax(np.abs(direction)))
    return AXES[(k, 1 if direction[k] > 0 else -1)]


def facing(turn) -> dict:
    """{'front': '-Y', 'up': '+Z'}: the caller's axes that a rig turned by `turn` (points @
    turn.T are upright, facing -Y) takes as the character's front and up."""
    turn = np.asarray(turn)
    return {"front": axis_name(turn.T @ [0.0, -1.0, 0.0]), "up": axis_name(turn.T @ [0.0, 0.0, 1.0])}
