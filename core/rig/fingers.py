# SPDX-License-Identifier: GPL-3.0-or-later
"""Fingers of a humanoid's hand, found on the mesh (docs/auto_skeleton.md#fingers).

The hand is the surface beyond the wrist (the plane through the wrist across the forearm,
within HAND_REACH hand lengths of it), cut from the arm: the piece of it that reaches
farthest (not a separate cuff the plane also cuts). Its geodesic distance from the
cut (Dijkstra along the mesh edges) rises to a peak at every fingertip. Sweeping the
distance down from the highest tip, each tip starts a region that grows until it meets a
neighbour's: the level where the two meet is the web between them, and the distance from
a tip down to its web is how far that digit stands out of the hand (its persistence). A
digit stands out at least FINGER_PROMINENCE of the hand's geodesic length; a hand with 4
or 5 digits has separable fingers, fewer is a mitten (one hand bone), more is a hand
holding something (one hand bone too).

Each digit's centre line runs from its web to its tip (centroids of its vertices in
distance bands), and its three joints lie at fractions of that line's length (JOINTS;
negative: into the palm, along the line's first direction): the knuckle, the middle and
the last joint of a finger; for the thumb the base of its metacarpal, its knuckle and its
last joint. The thumb is the digit that leaves the hand first (lowest web); the others
are index, middle, ring, pinky in order of distance from it.
"""
from __future__ import annotations

import numpy as np
from scipy.sparse.csgraph import connected_components, dijkstra

from ..mesh import unique_edges
from .graph import length_graph
from .polyline import point_at

HAND_REACH = 1.5          # the hand lies within this many hand lengths (wrist -> tip) of the wrist
SEED_REACH = 0.6          # the cut's vertices this close to the wrist (hand lengths) start the distance
FINGER_PROMINENCE = 0.15  # a digit stands out this share of the hand's geodesic length
DIGITS = (4, 5)           # a hand with this many digits gets fingers
WRIST_BACK = 0.2          # a cut that found too few digits is retried this many hand lengths up the forearm
BANDS = 6                 # distance bands along a digit for its centre line
# Joint positions along a digit, as fractions of its web -> tip centre line (negative:
# into the palm): the median over the three CC0 families with five-finger rigs of the
# family medians (MPFB, Quaternius' modular men and women; docs/auto_skeleton.md#fingers;
# bench/humanoid.py --calibrate-fingers now gives -0.18 / 0.17 / 0.56 for the fingers).
# Fingers agree within 0.15; the thumb's base does not (MPFB -1.31 at the wrist,
# Quaternius -0.52): the middle.
JOINTS = {"thumb": (-0.90, -0.25, 0.34), "finger": (-0.20, 0.16, 0.56)}
NAMES = ("thumb", "index", "middle", "ring", "pinky")


def find_fingers(vertices, faces, wrist, elbow, tip) -> dict | None:
    """{digit name: (4, 3) joints (three joints and the tip)} for a hand whose mesh has
    separable fingers, else None. vertices (V,3), faces (F,3) welded; wrist, elbow, tip:
    the hand's joint, the forearm's and the hand's far end (the generic rig's tip).
    A wrist that is only a proportion of the arm can lie in the palm, above the thumb's
    web, and the cut there loses the thumb (a cartoon hand's three digits left, or a
    hand's four named from the index): with fewer digits than a hand can have, the cut
    is tried once more WRIST_BACK hand lengths back up the forearm, and the cut that
    finds more digits is kept."""
    lines, found = _digit_lines(vertices, faces, wrist, elbow, tip)
    if 0 < found < max(DIGITS):
        wrist, elbow, tip = (np.asarray(p, dtype=np.float64) for p in (wrist, elbow, tip))
        axis = wrist - elbow
        back = WRIST_BACK * np.linalg.norm(tip - wrist) * axis / max(np.linalg.norm(axis), 1e-12)
        if np.linalg.norm(back) < np.linalg.norm(axis):          # not past the elbow
            retried, more = _digit_lines(vertices, faces, wrist - back, elbow, tip)
            if retried is not None and more > found:
                lines = retried
    if lines is None:
        return None
    return {name: np.vstack([point_on(line, f) for f in JOINTS["thumb" if name == "thumb" else "finger"]]
                            + [line[-1]])
            for name, line in lines.items()}


def digit_lines(vertices, faces, wrist, elbow, tip) -> dict | None:
    """{digit name: (k, 3) centre line from its web to its tip}, or None (a mitten, a
    hand holding something, no hand beyond the wrist)."""
    return _digit_lines(vertices, faces, wrist, elbow, tip)[0]


def _digit_lines(vertices, faces, wrist, elbow, tip):
    """(digit_lines' result, the number of digits the cut found)."""
    V, F = np.asarray(vertices, dtype=np.float64), np.asarray(faces, dtype=np.int64)
    wrist, elbow, tip = (np.asarray(p, dtype=np.float64) for p in (wrist, elbow, tip))
    length = float(np.linalg.norm(tip - wrist))
    axis = wrist - elbow
    if length <= 0 or not np.linalg.norm(axis) > 0:
        return None, 0
    hand = ((V - wrist) @ axis > 0) & (np.linalg.norm(V - wrist, axis=1) < HAND_REACH * length)
    graph, seeds = _hand_graph(V, unique_edges(F), hand, wrist, SEED_REACH * length)
    if not len(seeds):
        return None, 0
    dist = _on_the_hand(graph, dijkstra(graph, indices=seeds, min_only=True))
    digits = _digits(graph, dist, FINGER_PROMINENCE)
    if len(digits) not in DIGITS:
        return None, len(digits)
    lines = [_centre_line(V, graph, dist, t, web) for t, web in digits]
    order = _name_order([web for _, web in digits], lines)
    return {name: lines[k] for name, k in zip(NAMES, order)}, len(digits)


def _hand_graph(V, edges, hand, wrist, seed_reach):
    """The edge graph of the hand's vertices (weights: lengths) and the seeds: hand
    vertices on the cut (an edge to a vertex outside) near the wrist."""
    inner = hand[edges[:, 0]] & hand[edges[:, 1]]
    cut = hand[edges[:, 0]] != hand[edges[:, 1]]
    seeds = np.unique(np.where(hand[edges[cut, 0]], edges[cut, 0], edges[cut, 1]))
    seeds = seeds[np.linalg.norm(V[seeds] - wrist, axis=1) < seed_reach]
    return length_graph(V, edges[inner]), seeds


def _on_the_hand(graph, dist):
    """The distances on the piece of the cut surface that reaches farthest (the hand); a
    separate cuff or bracelet that the wrist's plane also cuts gets inf: its rim would
    stand out as a digit."""
    finite = np.isfinite(dist)
    if not finite.any():
        return dist
    _, piece = connected_components(graph, directed=False)
    farthest = np.flatnonzero(finite)[np.argmax(dist[finite])]
    return np.where(piece == piece[farthest], dist, np.inf)


def _digits(graph, dist, prominence) -> list:
    """(tip vertex, web level) of each digit standing out more than `prominence` of the
    largest distance: the 0-dimensional persistence of the distance swept downwards
    (union-find; a region dies when it meets one with a higher tip, at the level of the
    meeting vertex). A region that never dies has its web where the last digit that
    stood out met it (the first, sweeping down)."""
    finite = np.isfinite(dist)
    if not finite.any():
        return []
    least = prominence * float(dist[finite].max())
    order = np.flatnonzero(finite)[np.argsort(-dist[finite], kind="stable")]
    root = np.full(len(dist), -1)
    tip = {}

    def find(a):
        while root[a] != a:
            root[a] = root[root[a]]
            a = root[a]
        return a

    deaths = []                                    # (tip, level, the tip of the region it met)
    indptr, indices = graph.indptr, graph.indices
    for v in order:
        root[v], tip[v] = v, v
        regions = {find(u) for u in indices[indptr[v]:indptr[v + 1]] if root[u] >= 0} - {v}
        if not regions:
            continue
        regions = sorted(regions, key=lambda r: -dist[tip[r]])
        root[v] = regions[0]
        for r in regions[1:]:
            deaths.append((tip[r], float(dist[v]), tip[regions[0]]))
            root[r] = regions[0]
    digits = [(t, level) for t, level, _ in deaths if dist[t] - level >= least]
    for t in {tip[find(v)] for v in order}:
        if dist[t] >= least:
            met = [level for d, level, into in deaths if into == t and dist[d] - level >= least]
            digits.append((t, max(met, default=0.0)))
    return digits


def _centre_line(V, graph, dist, tip, web) -> np.ndarray:
    """(k, 3) centroids of a digit's vertices (the region above its web around its tip)
    in BANDS distance bands, from the web to the tip vertex."""
    above = dist > web
    sub = graph[above][:, above]
    _, label = connected_components(sub, directed=False)
    index = np.flatnonzero(above)
    mine = index[label == label[np.searchsorted(index, tip)]]
    d = dist[mine]
    edges = np.linspace(web, dist[tip], BANDS + 1)
    band = np.clip(np.searchsorted(edges, d, side="right") - 1, 0, BANDS - 1)
    points = [V[mine[band == b]].mean(axis=0) for b in range(BANDS) if (band == b).any()]
    return np.vstack(points + [V[tip]])


def point_on(line, fraction) -> np.ndarray:
    """The point at `fraction` of a polyline's length; negative: back along its first
    direction (the first half of the line)."""
    if fraction >= 0:
        return point_at(line, fraction)
    arc = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(line, axis=0), axis=1))])
    half = line[min(int(np.searchsorted(arc, 0.5 * arc[-1])), len(line) - 1)]
    direction = half - line[0]
    direction /= max(np.linalg.norm(direction), 1e-12)
    return line[0] + fraction * arc[-1] * direction


def _name_order(webs, lines) -> list:
    """Digit indices in NAMES order: the thumb (lowest web), then by distance of their
    base from the thumb's."""
    thumb = int(np.argmin(webs))
    rest = sorted((k for k in range(len(webs)) if k != thumb),
                  key=lambda k: np.linalg.norm(lines[k][0] - lines[thumb][0]))
    return [thumb] + rest
