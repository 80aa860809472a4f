# SPDX-License-Identifier: GPL-3.0-or-later
"""Input checks and the welded, normalised mesh + bones every skinning step works on.

Skin weights are computed on a *welded* copy of the mesh (duplicate positions from UV or
normal seams merged, so seams do not cut the surface into parts that receive no heat),
in a normalised frame (bounding box centred, longest side 1) so that every tolerance is
independent of the asset's units. `SkinMesh.vmap` maps each input vertex to its welded
vertex; vertices that belong to no usable face map to their nearest welded vertex.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp
from scipy.spatial import cKDTree

from ..errors import InvalidArmatureError, InvalidMeshError
from ..mesh import bbox_diagonal, vertex_components
from ..orientation import MIN_LEGS, count_legs, feet_give_front, upright_turn
from ..symmetry import is_side_turn, symmetry_turn
from ..unsubdivide import undo_midpoint_subdivision
from ..meshprep import box_gaps, component_boxes, check_points, compact, numeric, unique_faces, validate, weld_normalised

DEGENERATE_AREA = 1e-14      # face area / diagonal^2 below this is dropped
SLIVER_HEIGHT = 1e-5         # a face thinner than this (x diagonal) is dropped: its normal is noise
                             # (docs/auto_skin.md#frame-invariance)
WELD_RADIUS = 1e-5           # vertices this close (x diagonal) are one: 10x a float32 file's rounding
                             # (docs/auto_skin.md#frame-invariance)


@dataclass
class SkinMesh:
    """Welded mesh in the normalised frame (caller = V * scale + center)."""
    V: np.ndarray            # (n, 3) welded vertices, normalised
    F: np.ndarray            # (m, 3) int64 faces into V (no repeated index, no zero area)
    vmap: np.ndarray         # (V_in,) welded vertex of every input vertex
    source_index: np.ndarray  # (n,) one input vertex per welded vertex
    comp: np.ndarray         # (n,) connected component label through faces
    n_comp: int
    center: np.ndarray
    scale: float
    # (V_in, n) sparse: each input vertex's weights as a blend of the mesh's, when the mesh is
    # the coarse mesh under a midpoint subdivision (prepare_mesh(undo_subdivision=True));
    # vmap then names the nearest mesh vertex. None: the input vertex takes vmap's weights.
    interp: sp.csr_matrix | None = None
    subdivisions: int = 0     # midpoint subdivisions undone
    # upright: the frame's front (-Y) comes from the armature's feet; False: the file's
    # front kept (no foot bones), which may be the character's back
    front_from_armature: bool = False

    @property
    def n(self) -> int:
        return len(self.V)


@dataclass
class Bones:
    """Bone segments head -> tail in the normalised frame of a SkinMesh."""
    heads: np.ndarray        # (J, 3)
    tails: np.ndarray        # (J, 3)
    parents: np.ndarray      # (J,)

    @property
    def J(self) -> int:
        return len(self.heads)


def prepare_mesh(vertices, faces, *, weld: bool = True, undo_subdivision: bool = False) -> SkinMesh:
    """Validate (InvalidMeshError), weld (unless weld=False: only for measurements),
    drop degenerate faces, normalise. undo_subdivision: a mesh that is a midpoint
    subdivision becomes the coarse mesh under it, with `interp` to carry weights back
    (docs/auto_skin.md#subdivided-meshes)."""
    V, F = validate(vertices, faces)
    coarse = _subdivision_base(V, F) if undo_subdivision else None
    if coarse is not None:
        return coarse
    w = weld_normalised(V, F, weld=weld, purpose="skin", radius=WELD_RADIUS)
    Fw = unique_faces(w.faces) if len(w.faces) else w.faces
    Fw = Fw[solid_faces(w.vertices, Fw, w.diagonal)]
    if len(Fw) == 0:
        raise InvalidMeshError("The mesh has zero area (every face is a line or a point); there is nothing to skin.")
    Vk, Fk, keep, re = compact(w.vertices, Fw)
    vmap = np.where(w.weld >= 0, re[np.maximum(w.weld, 0)], -1)
    # Input vertices with no usable face (loose, on degenerate faces only, NaN): nearest
    # welded vertex (NaN ones: vertex 0, they have no position to be near).
    lost = np.flatnonzero(vmap < 0)
    if len(lost):
        _, nn = cKDTree(Vk).query(w.normalised[lost])
        vmap[lost] = np.where(np.isfinite(V[lost]).all(axis=1), nn, 0)
    n_comp, comp = vertex_components(len(Vk), Fk)
    return SkinMesh(Vk, Fk, vmap, w.source[keep], comp, n_comp, w.center, w.extent)


def solid_faces(V, F, diagonal: float) -> np.ndarray:
    """(m,) bool: faces of area above DEGENERATE_AREA x diagonal^2 and height (twice the
    area over the longest edge) above SLIVER_HEIGHT x diagonal. A sliver's normal turns
    with any sub-micro move of its corners (a 1e-6 jitter turned normals by up to 37
    degrees on the sample), and it has no area to weight anyway."""
    if not len(F):
        return np.zeros(0, bool)
    a, b, c = V[F[:, 0]], V[F[:, 1]], V[F[:, 2]]
    u, v, w = b - a, c - a, c - b
    n = np.cross(u, v)
    area2 = np.einsum("ij,ij->i", n, n)                 # (2 area)^2
    longest2 = np.maximum(np.maximum(np.einsum("ij,ij->i", u, u), np.einsum("ij,ij->i", v, v)),
                          np.einsum("ij,ij->i", w, w))
    return (area2 > (2 * DEGENERATE_AREA * diagonal ** 2) ** 2) & (area2 > (SLIVER_HEIGHT * diagonal) ** 2 * longest2)


def _subdivision_base(V, F) -> SkinMesh | None:
    """The prepared coarse mesh under a midpoint subdivision of the input (before welding:
    seams and degenerate faces are subdivided as exactly as the rest), with `interp` from
    the input vertices; None when the input is not one."""
    used = np.unique(F)
    Vu = V[used]
    coarse = undo_midpoint_subdivision(Vu, np.searchsorted(used, F))
    if coarse is None:
        return None
    mesh = prepare_mesh(Vu[coarse.index], coarse.faces)
    # used input vertex -> coarse input vertices -> their welded vertices
    S = sp.csr_matrix((np.ones(len(coarse.index)), (np.arange(len(coarse.index)), mesh.vmap)),
                      shape=(len(coarse.index), mesh.n))
    blend = (coarse.interp @ S).tocsr()
    # loose input vertices: their nearest used vertex's blend (NaN ones: the first's)
    row = np.full(len(V), -1)
    row[used] = np.arange(len(used))
    lost = np.flatnonzero(row < 0)
    if len(lost):
        finite = np.isfinite(V[lost]).all(axis=1)
        row[lost] = 0
        if finite.any():
            row[lost[finite]] = cKDTree(Vu).query(V[lost[finite]])[1]
    interp = blend[row]
    return replace(mesh, vmap=_heaviest(interp), interp=interp, subdivisions=coarse.levels)


def _heaviest(P: sp.csr_matrix) -> np.ndarray:
    """Per row of P (no empty rows) the column of its largest entry (scipy's argmax loops in Python)."""
    rows = np.repeat(np.arange(P.shape[0]), np.diff(P.indptr))
    order = np.lexsort((-P.data, rows))               # rows stay in CSR order, largest first
    return P.indices[order[P.indptr[:-1]]]


def default_tails(joints, parents):
    """Bone tails when the caller has none: the mean of the children's heads when it is
    away from the head; a leaf continues its parent's direction for half its length;
    a lone root is a point (zero-length bones are fine)."""
    J = len(joints)
    tails = joints.copy()
    child_sum = np.zeros_like(joints)
    n_child = np.zeros(J)
    for j, p in enumerate(parents):
        if 0 <= p < J and p != j:
            child_sum[p] += joints[j]
            n_child[p] += 1
    has = n_child > 0
    tails[has] = child_sum[has] / n_child[has, None]
    for j in range(J):
        if not has[j] or np.linalg.norm(tails[j] - joints[j]) == 0:
            p = parents[j]
            if 0 <= p < J and p != j:
                tails[j] = joints[j] + 0.5 * (joints[j] - joints[p])
    return tails


CONNECTED = 0.25      # a tail within this share of the head-to-child distance of a child's head is connected
IMPORTED = 0.5        # a skeleton with fewer connected parents than this share has arbitrary tails
CHILDREN_REACH = 0.5  # repair only when the children are at least this share of the tail's length away
LEAF_STUB = 0.1       # a leaf shorter than this share of its parent's head-to-head distance is a stub


def deforming_tails(joints, parents, tails):
    """Tails that span what each bone deforms. Skeletons imported from formats without
    tails (FBX, Collada, glTF) carry arbitrary ones: fixed-length stubs along an axis,
    away from the children. Such a skeleton is recognised by its bones with children:
    fewer than half have the tail at a child's head. Then a bone whose tail is near none
    of its children's heads, while the children lie at least half a tail-length away,
    gets the default tail (the mean of its children's heads), and a leaf stub its
    parent's direction. A skeleton made with tails (most bones connected) is kept as
    it is: there a disconnected tail is the rigger's choice (docs/auto_skin.md#preparation)."""
    T = np.array(tails, dtype=np.float64)
    J = len(joints)
    children = [[] for _ in range(J)]
    for j, p in enumerate(parents):
        if 0 <= p < J and p != j:
            children[p].append(j)
    connected = np.zeros(J, bool)
    for b, kids in enumerate(children):
        if kids:
            reach = np.linalg.norm(joints[kids] - joints[b], axis=1)
            gap = np.linalg.norm(joints[kids] - T[b], axis=1)
            connected[b] = (gap <= CONNECTED * np.maximum(reach, 1e-12)).any()
    has_kids = np.array([bool(k) for k in children])
    if not has_kids.any() or connected[has_kids].mean() >= IMPORTED:
        return T
    D = default_tails(joints, parents)
    length = np.linalg.norm(T - joints, axis=1)
    for b in range(J):
        if has_kids[b]:
            if not connected[b] and np.linalg.norm(D[b] - joints[b]) >= CHILDREN_REACH * length[b]:
                T[b] = D[b]
        elif 0 <= parents[b] < J and length[b] < LEAF_STUB * np.linalg.norm(joints[b] - joints[parents[b]]):
            T[b] = D[b]
    return T


def prepare_bones(mesh: SkinMesh, joints, parents, tails=None) -> Bones:
    """Validate the armature (InvalidArmatureError) and map it to the mesh's frame."""
    H, P = numeric(InvalidArmatureError, "bone", (joints, np.float64), (parents, None))
    check_points(InvalidArmatureError, H,
                 "The armature has no deforming bones. Add bones (or tick Deform on the bones "
                 "that should move the mesh) and try again.", "Bone heads must be a (J, 3)")
    J = len(H)
    P = P.reshape(-1)
    if len(P) != J:
        raise InvalidArmatureError(f"There are {J} bones but {len(P)} parent indices.")
    if not np.issubdtype(P.dtype, np.integer):
        try:                                             # whole floats or Python numbers, not strings
            Pf = P.astype(np.float64) if P.dtype.kind in "fO" else None
        except (TypeError, ValueError):
            Pf = None
        if Pf is None or not (np.isfinite(Pf).all() and (Pf == np.round(Pf)).all()):
            raise InvalidArmatureError("Bone parent indices must be integers (-1 for a root).")
        P = Pf
    P = P.astype(np.int64)
    if P.min() < -1 or P.max() >= J:
        raise InvalidArmatureError("A bone parent index points past the bone list; the armature data is corrupt.")
    if not np.isfinite(H).all():
        raise InvalidArmatureError(
            f"{int((~np.isfinite(H).all(axis=1)).sum())} bones have NaN or infinite positions; fix the armature.")
    if tails is None:
        T = default_tails(H, P)
    else:
        T = np.asarray(tails, dtype=np.float64)
        if T.shape != H.shape:
            raise InvalidArmatureError(f"Bone tails must have the heads' shape {H.shape}, got {T.shape}.")
        if not np.isfinite(T).all():
            raise InvalidArmatureError("Some bone tails have NaN or infinite positions; fix the armature.")
        T = deforming_tails(H, P, T)
    return Bones((H - mesh.center) / mesh.scale, (T - mesh.center) / mesh.scale, P)


def prepare(vertices, faces, joints, parents, tails=None, *,
            undo_subdivision: bool = False) -> tuple[SkinMesh, Bones]:
    """prepare_mesh and prepare_bones, then both turned upright (+Z up, facing -Y; see
    `upright`)."""
    mesh = prepare_mesh(vertices, faces, undo_subdivision=undo_subdivision)
    return character_frame(*upright(mesh, prepare_bones(mesh, joints, parents, tails)))


FRAME_REACH = 0.25    # a part farther than this share of the character's size from it is not the character


def character_frame(mesh: SkinMesh, bones: Bones) -> tuple[SkinMesh, Bones]:
    """Mesh and bones re-normalised to the character: the bounding box of the armature
    and of the mesh's connected parts that lie within FRAME_REACH of it (grown part by
    part: fins beside a body are in), centred, longest side 1. A prop far from the
    character (a sword on the floor beside it, in the same mesh) would otherwise shrink
    the character in the frame the network learned in (the sample with one: L1 0.056 ->
    0.081 with the facing-free model). When every part is near (each of the 254 records
    of ../shared/data) nothing changes."""
    pts = np.concatenate([bones.heads, bones.tails])
    lo_c, hi_c = pts.min(axis=0), pts.max(axis=0)
    lo, hi = component_boxes(mesh.V, mesh.comp, np.arange(mesh.n_comp))
    near = np.zeros(mesh.n_comp, bool)
    while True:
        grown = box_gaps(lo, hi, lo_c[None], hi_c[None])[:, 0] <= FRAME_REACH * max((hi_c - lo_c).max(), 1e-12)
        if (grown == near).all():
            break
        near = grown
        lo_c, hi_c = np.minimum(pts.min(axis=0), lo[near].min(axis=0)), np.maximum(pts.max(axis=0), hi[near].max(axis=0))
    if near.all() or not near.any():
        return mesh, bones
    lo_c, hi_c = lo[near].min(axis=0), hi[near].max(axis=0)
    center, extent = (lo_c + hi_c) / 2, float((hi_c - lo_c).max())
    if not extent > 0:
        return mesh, bones
    return (replace(mesh, V=(mesh.V - center) / extent, center=mesh.center + center * mesh.scale,
                    scale=mesh.scale * extent),
            Bones((bones.heads - center) / extent, (bones.tails - center) / extent, bones.parents))


def upright(mesh: SkinMesh, bones: Bones) -> tuple[SkinMesh, Bones]:
    """The mesh and bones turned so that the character stands up facing -Y, found as for
    Auto Skeleton (symmetry.symmetry_turn, then orientation.upright_turn on the armature's limbs), when
    the armature turned so has legs to confirm it.
    The network's features hold positions and normals in the mesh's axes and were learned
    on upright characters facing -Y: a character facing +X or lying down doubled its L1.
    Weights do not depend on the frame, so nothing is turned back.
    `front_from_armature` on the mesh says whether the feet gave the front."""
    plane = symmetry_turn(mesh.V)
    turn = upright_turn(bones.heads @ plane.T, bones.tails @ plane.T, bones.parents,
                        on_its_side=is_side_turn(plane)) @ plane
    if not np.array_equal(turn, np.eye(3)) and \
            count_legs(bones.heads, bones.tails, bones.parents, turn) < MIN_LEGS:
        turn = np.eye(3)        # no limbs to confirm it (a prop, a tentacle): the file's axes
    mesh = replace(mesh, front_from_armature=feet_give_front(bones.heads, bones.tails, bones.parents, turn))
    if np.array_equal(turn, np.eye(3)):
        return mesh, bones
    return (replace(mesh, V=mesh.V @ turn.T),
            Bones(bones.heads @ turn.T, bones.tails @ turn.T, bones.parents))


PROXY_VERTICES = 15000     # a welded mesh above this is weighted on a decimated proxy of about this size
                           # (time and memory bounded; 15k vs 20k and 50k: docs/auto_skin.md#preparation)


def dense_proxy(mesh: SkinMesh, target: int | None = None) -> SkinMesh:
    """The mesh itself, or for a mesh of more than `target` (default PROXY_VERTICES)
    welded vertices a decimated copy of about `target` (meshprep.decimate: clustered, then quadric) whose weights
    transfer_weights brings back. Bounds the time and memory of the heat solves, the
    visibility tests and the features on sculpted and subdivided meshes (949k vertices
    took 189 s and 6.3 GB in Auto Rig)."""
    target = PROXY_VERTICES if target is None else target
    if mesh.n <= target:
        return mesh
    from ..meshprep import decimate
    V, F = decimate(mesh.V, mesh.F, target)
    F = F[solid_faces(V, F, bbox_diagonal(V))]
    V, F, _, _ = compact(V, F)
    n_comp, comp = vertex_components(len(V), F)
    return SkinMesh(V, F, np.arange(len(V)), np.arange(len(V)), comp, n_comp, mesh.center, mesh.scale)


TRANSFER_NEIGHBOURS = 4    # proxy vertices each mesh vertex takes its weights from
TRANSFER_CHUNK = 200000    # rows at a time (bounds memory at a million vertices)


def transfer_weights(W_proxy, proxy: SkinMesh, mesh: SkinMesh, max_influences: int, parents=None) -> np.ndarray:
    """(mesh.n, J) weights of the full mesh from a proxy's (proxy.n, J): each vertex
    mixes its TRANSFER_NEIGHBOURS nearest proxy vertices, inversely to the squared
    distance, and its row is pruned back to `max_influences` (weights.prune with
    `parents`). Rows stay compact (their few bones) until the end: linear in the vertex
    count, TRANSFER_CHUNK rows at a time."""
    tree = cKDTree(proxy.V)

    def neighbours(start, stop):
        d, idx = tree.query(mesh.V[start:stop], k=min(TRANSFER_NEIGHBOURS, proxy.n))
        d, idx = d.reshape(stop - start, -1), idx.reshape(stop - start, -1)
        w = 1.0 / np.maximum(d, 1e-9) ** 2
        return idx, w / w.sum(axis=1, keepdims=True)
    return _blend_rows(W_proxy, mesh.n, neighbours, max_influences, parents)


def interpolate_weights(W, interp: sp.csr_matrix, max_influences: int, parents=None) -> np.ndarray:
    """(rows, J) weights interp @ W (a coarse mesh's weights blended onto the subdivided
    mesh's vertices), each row pruned back to `max_influences` as in transfer_weights."""
    interp = interp.tocsr()
    width = max(int(np.diff(interp.indptr).max(initial=1)), 1)
    idx = np.zeros((interp.shape[0], width), np.int64)
    val = np.zeros((interp.shape[0], width))
    row = np.repeat(np.arange(interp.shape[0]), np.diff(interp.indptr))
    slot = np.arange(interp.nnz) - interp.indptr[row]
    idx[row, slot], val[row, slot] = interp.indices, interp.data
    return _blend_rows(W, interp.shape[0], lambda a, b: (idx[a:b], val[a:b]), max_influences, parents)


def _blend_rows(W_from, rows: int, sources, max_influences: int, parents) -> np.ndarray:
    """(rows, J): row i = sum_k w_ik W_from[idx_ik] for (idx, w) = sources(start, stop),
    pruned; compact rows, TRANSFER_CHUNK at a time."""
    from .weights import merge_entries, prune, to_compact, to_dense
    J = W_from.shape[1]
    bones, values = to_compact(W_from)              # (n_from, m): the few influences of each row
    out = np.empty((rows, J))
    for start in range(0, rows, TRANSFER_CHUNK):
        stop = min(start + TRANSFER_CHUNK, rows)
        idx, w = sources(start, stop)
        row_bones, row_values = merge_entries(bones[idx].reshape(stop - start, -1),
                                              (w[:, :, None] * values[idx]).reshape(stop - start, -1))
        kept = prune(row_values, max_influences, parents=parents, columns=row_bones)
        out[start:stop] = to_dense(row_bones, kept, J)
    return out
