# SPDX-License-Identifier: GPL-3.0-or-later
"""Mesh validation and clean-up shared by every feature.

Real characters come with duplicate vertices, degenerate and repeated triangles,
loose vertices, several parts and units from millimetres to kilometres. These
functions turn such input into a clean triangle soup in a normalised frame, or
raise InvalidMeshError with a message a user can act on.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scipy.spatial import cKDTree

from .errors import InvalidMeshError
from .mesh import (bbox_diagonal, close_t_junctions, consistent_winding, edge_components, subdivide_midpoint,
                   row_keys, vertex_components, weld_positions)

WELD_TOLERANCE = 1e-6      # relative to the bounding-box diagonal
T_JUNCTION_TOLERANCE = 1e-5  # a vertex this close (x diagonal) to an open edge splits it
MIN_AREA_RATIO = 1e-12     # total area / diagonal^2 below this is "flat"
MIN_FACES = 4              # a tetrahedron is the smallest closed surface
CLUSTER_ABOVE = 8          # meshes above this x the proxy's size are clustered before decimation
CLUSTER_SHARE = 8          # ... to about this x the proxy's size
CLUSTER_MAX = 100000       # ... and at most this many vertices
PART_AREA = 1e-3           # parts with this share of the surface area make up bodies (less: crumbs)
BODY_GAP = 0.5             # parts within this x the smaller one's size of each other are one body
CRUMB_GAP = 0.1            # crumbs within this x the body's size of its bounding box belong to it
SECOND_BODY = 0.25         # a second body with this share of the largest one's area: two characters
TOUCH_GAP = 0.05           # parts within this x the smaller one's size of each other touch: one unit (a fish, its fins)
GROUP_SHARE = 0.25         # no unit with this share of the surface: a group of things (a shoal), not one body
MEMBER_SIZE = 0.5          # a group's members this x the group's size or larger are characters, not small things


@dataclass
class CleanMesh:
    """A welded, normalised triangle mesh and the map back to the caller's frame."""
    vertices: np.ndarray    # (n, 3) normalised: bbox centred at 0, longest side 1
    faces: np.ndarray       # (m, 3) int, no repeated indices
    center: np.ndarray      # (3,) caller-frame bbox centre
    scale: float            # caller units per normalised unit
    source_index: np.ndarray  # (n,) one input vertex index per clean vertex
    surface_faces: np.ndarray = None  # faces with repeats kept, for inside tests

    def to_world(self, points):
        return np.asarray(points) * self.scale + self.center

    @property
    def diagonal(self) -> float:
        return bbox_diagonal(self.vertices)


def numeric(error, what: str, *values_and_dtypes):
    """np.asarray of each (values, dtype) pair, or `error` saying the `what` data is not numeric."""
    try:
        return [np.asarray(values, dtype=dtype) for values, dtype in values_and_dtypes]
    except (TypeError, ValueError) as exc:
        raise error(f"The {what} data is not numeric: {exc}") from None


def check_points(error, X, empty: str, wrong_shape: str) -> None:
    """`error(empty)` when X has no entries, `error(wrong_shape + " array, got shape ...")`
    when it is not (n, 3)."""
    if X.size == 0:
        raise error(empty)
    if X.ndim != 2 or X.shape[1] != 3:
        raise error(f"{wrong_shape} array, got shape {X.shape}.")


def validate(vertices, faces):
    """Check shapes and values; return float64 (V,3) and int64 (F,3) arrays."""
    V, F = numeric(InvalidMeshError, "mesh", (vertices, np.float64), (faces, None))
    check_points(InvalidMeshError, V, "The mesh is empty: it has no vertices.", "Vertices must be an (N, 3)")
    if F.size == 0:
        raise InvalidMeshError(
            "The mesh has no faces (only loose vertices or edges). "
            "Rigging and skinning need a surface: fill the mesh or pick another object.")
    if F.ndim != 2 or F.shape[1] != 3:
        raise InvalidMeshError(f"Faces must be an (M, 3) array of triangles, got shape {F.shape}.")
    if not np.issubdtype(F.dtype, np.integer):
        raise InvalidMeshError("Face indices must be integers.")
    F = F.astype(np.int64)
    if F.min() < 0 or F.max() >= len(V):
        raise InvalidMeshError("Face indices point past the vertex list; the mesh data is corrupt.")
    bad = ~np.isfinite(V).all(axis=1)
    used = np.zeros(len(V), bool)
    used[F.ravel()] = True
    if (bad & used).any():
        raise InvalidMeshError(
            f"{int((bad & used).sum())} vertices have NaN or infinite coordinates. "
            "Fix or delete them (Mesh > Clean Up) and try again.")
    return V, F


def triangle_areas(V, F):
    a, b, c = V[F[:, 0]], V[F[:, 1]], V[F[:, 2]]
    u, v = b - a, c - a
    n = np.stack([u[:, 1] * v[:, 2] - u[:, 2] * v[:, 1], u[:, 2] * v[:, 0] - u[:, 0] * v[:, 2],
                  u[:, 0] * v[:, 1] - u[:, 1] * v[:, 0]], axis=1)      # np.cross, several times faster
    return 0.5 * np.sqrt(np.einsum("ij,ij->i", n, n))


@dataclass
class Welded:
    """A validated mesh in the normalised frame (bbox centred, longest side 1), its
    coincident vertices merged; what both Auto Skeleton and Auto Skin start from."""
    vertices: np.ndarray    # (n, 3) welded vertices used by a face
    faces: np.ndarray       # (m, 3) into vertices; faces with a repeated index dropped
    weld: np.ndarray        # (V_in,) welded vertex of each input vertex, -1 if in no face
    source: np.ndarray      # (n,) one input vertex per welded vertex
    normalised: np.ndarray  # (V_in, 3) every input vertex in the normalised frame (NaN -> 0)
    center: np.ndarray
    extent: float           # caller units per normalised unit
    diagonal: float         # normalised bounding-box diagonal


def weld_normalised(V, F, *, weld: bool = True, purpose: str = "rig", radius: float | None = None) -> Welded:
    """Normalise validated arrays and merge vertices closer than WELD_TOLERANCE (split
    normals and UV seams must not cut the surface); weld=False only renumbers.
    radius (share of the diagonal): merge the vertices within this distance of each
    other instead (weld_by_distance: no grid, so the same in every frame)."""
    used = np.unique(F)
    lo, hi = V[used].min(axis=0), V[used].max(axis=0)
    extent = float((hi - lo).max())
    if not extent > 0 or not np.isfinite(extent):
        raise InvalidMeshError(f"All vertices of the mesh are at one point; there is nothing to {purpose}.")
    center = (lo + hi) / 2
    diagonal = float(np.linalg.norm((hi - lo) / extent))
    Vn = np.where(np.isfinite(V).all(axis=1)[:, None], (V - center) / extent, 0.0)
    if weld and radius is not None:
        first, inverse = weld_by_distance(Vn[used], radius * diagonal)
    elif weld:
        first, inverse, _ = weld_positions(Vn[used], WELD_TOLERANCE * diagonal)
    else:
        first, inverse = np.arange(len(used)), np.arange(len(used))
    remap = np.full(len(V), -1, np.int64)
    remap[used] = inverse.reshape(-1)
    Fw = remap[F]
    Fw = Fw[(Fw[:, 0] != Fw[:, 1]) & (Fw[:, 1] != Fw[:, 2]) & (Fw[:, 0] != Fw[:, 2])]
    return Welded(Vn[used[first]], Fw, remap, used[first], Vn, center, extent, diagonal)


def weld_by_distance(V, radius: float):
    """(first, inverse) as weld_positions, for the groups of points linked by distances
    <= radius (k-d tree pairs, connected components): unlike a grid, it does not depend
    on the frame (a pair straddling a cell boundary) and keeps the input's order
    (groups numbered by their first point), so ties later break the same way in any
    frame (docs/auto_skin.md#frame-invariance)."""
    n = len(V)
    pairs = cKDTree(V, balanced_tree=False).query_pairs(radius, output_type="ndarray")   # quicker to build
    if not len(pairs):
        return np.arange(n), np.arange(n)
    _, lab = edge_components(n, pairs)
    first = np.full(lab.max() + 1, n, np.int64)
    np.minimum.at(first, lab, np.arange(n))
    order = np.argsort(first, kind="stable")       # groups in the order of their first point
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return first[order], rank[lab]


def unique_faces(F):
    """Drop repeated triangles (same three vertices in any order), keeping the first."""
    _, first = np.unique(row_keys(np.sort(F, axis=1).astype(np.int64)), return_index=True)
    return F[np.sort(first)]


def compact(V, F):
    """Drop vertices no face uses: (V', F', kept vertex indices, old -> new index or -1)."""
    keep = np.unique(F)
    re = np.full(len(V), -1, np.int64)
    re[keep] = np.arange(len(keep))
    return V[keep], re[F], keep, re


def clean_mesh(vertices, faces) -> CleanMesh:
    """Validate, drop loose vertices, weld duplicates, close T-junction cracks, drop
    degenerate faces, normalise."""
    w = weld_normalised(*validate(vertices, faces))
    if len(w.faces) == 0:
        raise InvalidMeshError("Every face of the mesh is degenerate (repeated vertices); there is no surface to rig.")
    faces = close_t_junctions(w.vertices, w.faces, T_JUNCTION_TOLERANCE * w.diagonal)   # cracks grew chains
    faces = consistent_winding(w.vertices, faces)     # half-flipped rips: part volumes, inside tests
    Fw = unique_faces(faces)
    if len(Fw) < MIN_FACES:
        raise InvalidMeshError(
            f"The mesh has only {len(Fw)} usable triangle(s); Auto Skeleton needs a body "
            "surface (a closed or nearly closed mesh), not a single polygon.")
    if triangle_areas(w.vertices, Fw).sum() <= MIN_AREA_RATIO * w.diagonal ** 2:
        raise InvalidMeshError("The mesh has zero area (all faces are flat lines or points); there is nothing to rig.")
    Vw, Fw, keep, re = compact(w.vertices, Fw)
    # surface_faces keeps repeated triangles: a double-sided sheet encloses nothing.
    return CleanMesh(Vw, Fw, w.center, w.extent, w.source[keep], re[faces])


def resample(V, F, target_vertices: int):
    """The contraction proxy, within a factor 2 of target_vertices: big meshes are
    decimated, small low-poly ones subdivided (their long edges contract and collapse
    coarsely: a 400-vertex animal's legs cross its belly). A subdivided mesh is not
    decimated again (quadric decimation of its flat patches can leave a singular system)."""
    if len(V) > target_vertices:
        return decimate(V, F, target_vertices)
    while 2 * len(V) < target_vertices:
        V, F = subdivide_midpoint(V, F)
    return V, F


def cluster_vertices(V, F, target_vertices: int):
    """Vertex clustering to roughly `CLUSTER_SHARE` x target_vertices (at most
    CLUSTER_MAX: quadric decimation of the rest takes seconds): vertices in one
    cell of a grid (spaced for that count on the surface area) merge at their mean, faces
    that collapse go. Linear in the mesh and indifferent to how it is triangulated."""
    cell = np.sqrt(triangle_areas(V, F).sum() / min(CLUSTER_SHARE * target_vertices, CLUSTER_MAX))
    _, inverse, counts = weld_positions(V, cell, snap="floor")
    Vc = np.stack([np.bincount(inverse, V[:, k]) for k in range(3)], axis=1) / counts[:, None]
    Fc = inverse[F]
    Fc = unique_faces(Fc[(Fc[:, 0] != Fc[:, 1]) & (Fc[:, 1] != Fc[:, 2]) & (Fc[:, 0] != Fc[:, 2])])
    return compact(Vc, Fc)[:2]


def decimate(V, F, target_vertices: int):
    """Quadric decimation to about target_vertices (parts and topology preserved).

    A mesh above CLUSTER_ABOVE x the target is first clustered (cluster_vertices): on a
    densely subdivided flat-faceted mesh (a 949k-vertex midpoint subdivision) quadric
    decimation alone lost whole regions (5 % of the body further than 2 % of its size
    from the proxy) and the rig its sides; clustered first, the proxy stays within 1.2 %."""
    if len(V) <= target_vertices:
        return V, F
    if len(V) > CLUSTER_ABOVE * target_vertices:
        V, F = cluster_vertices(V, F, target_vertices)
    import fast_simplification
    ratio = 1.0 - target_vertices / len(V)
    Vd, Fd = fast_simplification.simplify(V.astype(np.float32), F.astype(np.int32), target_reduction=ratio)
    Fd = Fd.astype(np.int64)
    ok = (Fd[:, 0] != Fd[:, 1]) & (Fd[:, 1] != Fd[:, 2]) & (Fd[:, 0] != Fd[:, 2])
    Fd = Fd[ok]
    keep = np.unique(Fd)
    re = np.full(len(Vd), -1, np.int64)
    re[keep] = np.arange(len(keep))
    return Vd[keep].astype(np.float64), re[Fd]



def component_boxes(V, comp, parts):
    """(lo, hi) bounding boxes (k, 3) of the components `parts` (every label in comp
    has a vertex)."""
    order = np.argsort(comp, kind="stable")
    starts = np.searchsorted(comp[order], np.arange(comp.max() + 1))
    lo = np.minimum.reduceat(V[order], starts, axis=0)
    hi = np.maximum.reduceat(V[order], starts, axis=0)
    return lo[parts].reshape(-1, 3), hi[parts].reshape(-1, 3)


def box_gaps(lo_a, hi_a, lo_b, hi_b):
    """(a, b) distances between axis-aligned boxes (0 where they overlap)."""
    g = np.maximum(lo_a[:, None] - hi_b[None], lo_b[None] - hi_a[:, None])
    return np.linalg.norm(np.maximum(g, 0.0), axis=2)



def separate_bodies(V, F):
    """The separate characters in one mesh.

    Parts (connected components) with at least PART_AREA of the surface are joined when
    their bounding boxes are within BODY_GAP x the smaller one's size of each other (so
    the pieces of a modular character, floating hands and a body join, one by one); each
    group is a body. Smaller crumbs (eyes, buttons, hair cards) are in no body.
    V, F: a clean mesh.

    Returns (bodies, comp): bodies a list of (area, component ids) largest first, comp
    (V,) the component label of every vertex."""
    n_comp, comp = vertex_components(len(V), F)
    area = np.bincount(comp[F[:, 0]], triangle_areas(V, F), minlength=n_comp)
    parts = np.flatnonzero(area >= PART_AREA * area.sum())
    lo, hi = component_boxes(V, comp, parts)
    size = (hi - lo).max(axis=1)
    near = box_gaps(lo, hi, lo, hi) <= BODY_GAP * np.minimum(size[:, None], size[None])
    n_groups, group = edge_components(len(parts), np.argwhere(near))
    bodies = [(float(area[parts[group == g]].sum()), parts[group == g]) for g in range(n_groups)]
    return sorted(bodies, key=lambda b: -b[0]), comp

def check_one_character(V, F, what: str = "Auto Skeleton"):
    """InvalidMeshError when the mesh holds two or more characters (separate_bodies: a
    second one with SECOND_BODY of the largest one's area): one rig cannot serve them.
    Returns separate_bodies(V, F) for body_faces."""
    bodies, comp = separate_bodies(V, F)
    second = [b for b in bodies[1:] if b[0] >= SECOND_BODY * bodies[0][0]]
    if second:
        raise InvalidMeshError(
            f"The mesh holds {len(second) + 1} separate characters (parts far apart from each other). "
            f"{what} rigs one character at a time: separate them (Edit Mode > Mesh > Separate > "
            "By Loose Parts, then join each character's parts) and rig each.")
    return bodies, comp


def group_members(V, F):
    """The members of a group of small separate things (a shoal of fish, a swarm), or
    None for a mesh with a body (docs/auto_skeleton.md#groups).

    Parts with at least PART_AREA of the surface that touch (_touching) are one unit (a
    fish and its fins). When no unit holds GROUP_SHARE of the surface, the units with
    SECOND_BODY of the largest one's area are the members (at least three; crumbs and
    smaller units belong to none).
    V, F: a clean mesh. Returns a list of (n_i,) vertex indices, or None.
    """
    n_comp, comp = vertex_components(len(V), F)
    area = np.bincount(comp[F[:, 0]], triangle_areas(V, F), minlength=n_comp)
    parts = np.flatnonzero(area >= PART_AREA * area.sum())
    if len(parts) < 3:
        return None
    lo, hi = component_boxes(V, comp, parts)
    touch = _touching(V, comp, parts, lo, hi, (hi - lo).max(axis=1))
    n_units, unit = edge_components(len(parts), touch)
    unit_area = np.bincount(unit, area[parts], minlength=n_units)
    members = np.flatnonzero(unit_area >= SECOND_BODY * unit_area.max())
    if unit_area.max() >= GROUP_SHARE * area.sum() or len(members) < 3:
        return None
    unit_of = np.full(n_comp, -1)
    unit_of[parts] = unit
    vertices = _indices_by_label(unit_of[comp], n_units)
    return [vertices[u] for u in members]


def _indices_by_label(label, n):
    """[(k_i,) indices of the entries with label i for i < n] (negative labels: none)."""
    order = np.argsort(label, kind="stable")
    return np.split(order, np.searchsorted(label[order], np.arange(n + 1)))[1:n + 1]


def members_are_small(V, members) -> bool:
    """Is every group member (group_members) smaller than MEMBER_SIZE x the group's size?
    Otherwise they are characters side by side, which one rig cannot serve."""
    group_size = np.ptp(V, axis=0).max()
    return max(np.ptp(V[idx], axis=0).max() for idx in members) < MEMBER_SIZE * group_size


def check_small_members(V, members, what: str = "Auto Skeleton"):
    """InvalidMeshError when the group members are characters side by side
    (members_are_small)."""
    if not members_are_small(V, members):
        raise InvalidMeshError(
            f"The mesh holds {len(members)} separate characters side by side. {what} rigs one character at a "
            "time: separate them (Edit Mode > Mesh > Separate > By Loose Parts, then join each character's "
            "parts) and rig each.")


def _touching(V, comp, parts, lo, hi, size):
    """(k, 2) pairs of `parts` that touch: within TOUCH_GAP x the smaller one's size of
    each other both in the mesh's axes and in its principal axes (parts that cross or
    pierce each other always touch; a turned shoal is told apart in its principal axes).
    lo, hi: the parts' bounding boxes in the mesh's axes; size: their longest sides."""
    _, axes = np.linalg.eigh(np.cov((V - V.mean(axis=0)).T))
    plo, phi = component_boxes(V @ axes, comp, parts)
    gap = np.maximum(box_gaps(lo, hi, lo, hi), box_gaps(plo, phi, plo, phi))
    return np.argwhere(np.triu(gap <= TOUCH_GAP * np.minimum(size[:, None], size[None]), 1))


def body_faces(V, F, bodies_and_parts=None) -> np.ndarray:
    """(m,) bool: the faces of the character, less parts far from it (a prop lying
    beside it, a second small figure): the parts of the largest body (separate_bodies)
    and every crumb, or smaller body, whose bounding box is within CRUMB_GAP x the body's
    size of the body's or of one kept so far (a ragdoll's hand half its own length from
    its forearm is no body of the forearm's, yet the character's; a wooden mannequin's
    hand lies beyond its wrist's ball). Far parts would stretch the normalised frame
    (a 10 % prop one size away cut the sample's joints from 38 to 21) and get bones of
    their own. bodies_and_parts: what separate_bodies(V, F) returned, when the caller
    has it."""
    bodies, comp = bodies_and_parts or separate_bodies(V, F)
    if not bodies:                             # all crumbs: nothing to tell apart
        return np.ones(len(F), bool)
    body = np.isin(comp, bodies[0][1])
    lo, hi = V[body].min(axis=0), V[body].max(axis=0)
    in_body = np.zeros(comp.max() + 1, bool)
    in_body[np.concatenate([b[1] for b in bodies])] = True
    units = [[c] for c in np.flatnonzero(~in_body)] + [list(parts) for _, parts in bodies[1:]]
    clo, chi = component_boxes(V, comp, np.arange(comp.max() + 1))
    boxes = np.array([(clo[u].min(axis=0), chi[u].max(axis=0)) for u in units]).reshape(-1, 2, 3)
    keep = np.zeros(comp.max() + 1, bool)
    keep[bodies[0][1]] = True
    near = CRUMB_GAP * (hi - lo).max()
    kept_lo, kept_hi = lo[None], hi[None]
    todo = np.ones(len(units), bool)
    while todo.any():                          # a hand beyond a ball beyond a forearm: in turn
        close = todo & (box_gaps(boxes[:, 0], boxes[:, 1], kept_lo, kept_hi).min(axis=1, initial=np.inf) <= near)
        if not close.any():
            break
        for u in np.flatnonzero(close):
            keep[units[u]] = True
        todo &= ~close
        kept_lo, kept_hi = boxes[close, 0], boxes[close, 1]
    return keep[comp[F[:, 0]]]
