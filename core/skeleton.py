# SPDX-License-Identifier: GPL-3.0-or-later
"""Auto Skeleton: mesh in, rig out (docs/auto_skeleton.md).

Pipeline: clean + normalise the mesh -> decimated proxy -> Laplacian contraction
(contraction.py) -> greedy edge collapse (collapse.py) -> refinement and rig
building (rig.py). Everything here works in the caller's units and frame.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

import numpy as np
from scipy.spatial import cKDTree

from . import centering, rig
from .collapse import collapse_to_graph
from .contraction import contract, one_ring_areas
from .meshprep import clean_mesh, resample
from .metrics import inside_mesh


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


ABSORB = 0.5   # body radii within which another part's skeleton merges into the body's
SYMMETRY_TOLERANCE = 0.005  # mirrored vertices this close (median) to the mesh: a symmetric mesh
PAIR_TOLERANCE = 0.03  # joints this close to each other's mirror image are a left/right pair
CENTRE_TOLERANCE = 0.02  # joints this close to the plane of symmetry are on it
SOLID_RATIO = 0.005  # volume / area^1.5 below this: an open sheet, not a body part
END_REACH = 0.5   # an end bone spans this fraction of the way to its tip near the skin (measured)

DEFAULTS = dict(
    proxy_vertices=5000,   # contraction runs on a proxy of about this size
    min_part=0.08,         # parts smaller than this (longest side = 1) get no bones
    min_branch=0.05,       # shortest branch a separate part may add
    spur_length=0.04,      # leaf branches shorter than this are collapse noise
    bone_length=0.10,      # target bone length at detail 1
    merge_length=0.025,    # internal bones shorter than this are merged
)


def extract_skeleton(vertices, faces, *, detail: float = 1.0, progress=None, **options) -> Skeleton:
    """Build a rig for a triangle mesh.

    vertices (V,3), faces (F,3) int (polygons must be triangulated by the caller).
    detail: 1.0 = default joint density; 2.0 roughly doubles joints per chain.
    progress: optional callable(fraction: float, message: str); it may raise
    errors.Cancelled to stop the job.
    options: override DEFAULTS, or contraction options (wl0, max_iterations...).
    Raises InvalidMeshError on input that cannot be rigged.
    """
    unknown = set(options) - set(DEFAULTS) - {"wl0", "wl_scale", "max_iterations", "area_ratio"}
    if unknown:
        raise TypeError(f"unknown options: {sorted(unknown)}")
    if not detail > 0:
        raise ValueError("detail must be positive")
    opt = {**DEFAULTS, **{k: v for k, v in options.items() if k in DEFAULTS}}
    contract_opt = {k: v for k, v in options.items() if k not in DEFAULTS}
    report = progress or (lambda fraction, message: None)
    timings = {}
    t0 = time.perf_counter()

    report(0.0, "Cleaning mesh")
    mesh = clean_mesh(vertices, faces)
    V, F = resample(mesh.vertices, mesh.faces, opt["proxy_vertices"])
    timings["prepare"] = time.perf_counter() - t0

    t = time.perf_counter()
    Vc, cinfo = contract(V, F, progress=lambda f, m: report(0.05 + 0.55 * f, m), **contract_opt)
    timings["contract"] = time.perf_counter() - t

    t = time.perf_counter()
    report(0.6, "Collapsing edges")
    nodes, edges, members = collapse_to_graph(Vc, F)
    timings["collapse"] = time.perf_counter() - t

    t = time.perf_counter()
    report(0.9, "Building rig")
    pos, par, socket = _rig_tree(mesh, V, F, Vc, nodes, edges, members, opt, detail)
    heads, tails, parents = rig.to_bones(pos, par, socket)
    tails = _shorten_end_bones(heads, tails, parents)
    names = rig.bone_names(heads, tails, parents, side_tolerance=0.02)
    timings["rig"] = time.perf_counter() - t
    timings["total"] = time.perf_counter() - t0
    report(1.0, "Done")
    info = {"timings": timings, "contraction": cinfo, "proxy_vertices": len(V),
            "graph_nodes": len(nodes)}
    return Skeleton(mesh.to_world(heads), parents, mesh.to_world(tails), names,
                    rig.default_up(heads, tails), info)


def _rig_tree(mesh, V, F, Vc, nodes, edges, members, opt, detail):
    """Skeleton graph of the proxy -> simplified rooted tree (positions, parents)."""
    X, radius = rig.refine_nodes(V, Vc, nodes, members)
    vertex_area = one_ring_areas(V, F) / 3
    mass = np.array([vertex_area[m].sum() for m in members])
    comp = rig._components(len(nodes), edges)
    comp_mass = np.bincount(comp, weights=mass)
    comp_extent = np.zeros(comp.max() + 1)
    for c in range(len(comp_extent)):
        pts = V[np.concatenate([members[k] for k in np.flatnonzero(comp == c)])]
        comp_extent[c] = np.ptp(pts, axis=0).max()
    owner = np.empty(len(V), np.int64)
    for k, m in enumerate(members):
        owner[m] = k
    solid = _solid_parts(V, F, comp[owner], comp_mass)
    if solid.any():       # a sheet (a tail fan, a cape) is no centre of mass
        vertex_area = vertex_area * solid[comp[owner]]

    def inside_body(points, kept_nodes):
        mine = np.zeros(len(nodes), bool)
        mine[kept_nodes] = True
        body = F[mine[owner[F]].all(axis=1)]
        return inside_mesh(points, V, body) if len(body) else np.zeros(len(points), bool)

    order = comp_mass * np.where(solid, 1.0, 1e-6)     # the body is the biggest solid part
    kept, joined = rig.join_parts(X, edges, radius, order[comp], comp_extent[comp], [V[m] for m in members],
                                  min_part=opt["min_part"], min_branch=opt["min_branch"],
                                  inside_body=inside_body, absorb=ABSORB)
    tree = rig.spanning_tree(X, kept, joined)
    adj = rig.adjacency(0, tree)
    if len(kept) == 1:
        adj[int(kept[0])]
    centroid = (vertex_area[:, None] * V).sum(axis=0) / vertex_area.sum()
    X = _extend_leaves(X, adj, V, F)      # before pruning: a head is long once it reaches its top
    adj = rig.prune_spurs(X, adj, radius, opt["spur_length"] / detail)
    root = rig.choose_root(X, adj, centroid)
    if len(adj) < 2 or np.ptp(X[list(adj)], axis=0).max() < opt["merge_length"]:
        return (*_single_bone(V, vertex_area), np.zeros(2, bool))
    pos, par, rad, socket = rig.simplify_chains(X, radius, adj, root, bone_length=opt["bone_length"] / detail,
                                      merge_length=opt["merge_length"] / detail)
    symmetric = _mirror_symmetric(mesh.vertices)
    if symmetric:
        pos, par, rad, socket = rig.mirror_tree(pos, par, rad, socket, centre=CENTRE_TOLERANCE,
                                                tolerance=2 * PAIR_TOLERANCE)
    has_child = np.zeros(len(pos), bool)
    has_child[par[par >= 0]] = True
    pos = _center(pos, par, rad, socket, V, F)
    if len(V) < len(mesh.vertices):      # decimated: test on the proxy, cheap on huge meshes
        inside = lambda P: _clearly_inside(P, V, F)
    else:
        inside = lambda P: _clearly_inside(P, mesh.vertices, mesh.surface_faces)
    pos, _ = rig.push_inside(pos, has_child, np.vstack([Vc, X]), inside)
    outside = has_child.copy()
    outside[has_child] = ~inside(pos[has_child])
    if outside.any():       # thin parts of coarse meshes: look right under the surface
        extra = centering.inward_midpoints(V, F, pos[outside])
        if len(extra):
            pos, _ = rig.push_inside(pos, outside, extra, inside)
    if symmetric:     # a symmetric character gets a symmetric rig
        mirrored = rig.mirror_pairs(pos, PAIR_TOLERANCE)
        moved = np.flatnonzero(np.any(mirrored != pos, axis=1))
        ok = inside(mirrored[moved]) | ~has_child[moved]
        pos[moved[ok]] = mirrored[moved[ok]]
    return pos, par, socket


def _solid_parts(V, F, part, area, min_ratio: float = SOLID_RATIO):
    """Per part: does it enclose volume? volume / area^1.5 is 0.094 for a sphere,
    about 0.02 for a limb 100 radii long and ~0 for an open flat sheet."""
    fp = part[F[:, 0]]
    n = len(area)
    count = np.maximum(np.bincount(fp, minlength=n), 1)[:, None]
    centre = np.stack([np.bincount(fp, V[F].mean(axis=1)[:, k], n) for k in range(3)], 1) / count
    a, b, c = (V[F[:, k]] - centre[fp] for k in range(3))
    volume = np.abs(np.bincount(fp, np.einsum("ij,ij->i", a, np.cross(b, c)), n)) / 6
    return volume > min_ratio * np.maximum(area, 1e-30) ** 1.5


def _mirror_symmetric(V, tolerance: float = SYMMETRY_TOLERANCE, sample: int = 20000) -> bool:
    """Is the (normalised) mesh its own mirror image in x = 0? Median distance from a
    mirrored vertex to the nearest vertex (a sample of them on big meshes)."""
    pick = np.unique(np.linspace(0, len(V) - 1, min(len(V), sample)).astype(np.int64))
    d, _ = cKDTree(V).query(V[pick] * rig.MIRROR)
    return float(np.median(d)) < tolerance


def _single_bone(V, vertex_area):
    """Blob-like meshes (a slime, a fruit) contract to a point: one bone along the main axis."""
    c = (vertex_area[:, None] * V).sum(axis=0) / vertex_area.sum()
    _, _, vt = np.linalg.svd((V - c) * np.sqrt(vertex_area)[:, None], full_matrices=False)
    axis = vt[0] if abs(vt[0][2]) < 0.5 or vt[0][2] > 0 else -vt[0]
    half = 0.35 * np.ptp((V - c) @ axis)
    return np.array([c - half * axis, c + half * axis]), np.array([-1, 0])


def _center(pos, par, rad, socket, V, F):
    """Centre joints in their cross-section, perpendicular to the bone they start.

    Sockets (hips, shoulders) stay put: their cross-section is the whole pelvis.
    """
    axes = np.zeros_like(pos)
    for v in range(1, len(pos)):          # the bone into v, then the first bone out of v
        axes[v] = pos[v] - pos[par[v]]
    first_child = {}
    for v in range(len(pos) - 1, 0, -1):
        first_child[par[v]] = v
    for v, c in first_child.items():
        axes[v] = pos[c] - pos[v]
    axes[socket] = 0.0
    return centering.center_joints(pos, axes, V, F, 2.5 * rad + 1e-3, iterations=2)


def _extend_leaves(X, adj, V, F, reach: float = 0.85):
    """Contraction pulls limb ends back from the tips: push each leaf node out along
    its chain's direction, most of the way to the surface (fingertips, snouts, tails)."""
    X = X.copy()
    T0 = V[F[:, 0]]
    E1, E2 = V[F[:, 1]] - T0, V[F[:, 2]] - T0
    for leaf in [v for v in adj if len(adj[v]) == 1]:
        path = rig._walk_to_junction(adj, leaf)
        if len(path) < 2:
            continue
        u = X[path[0]] - X[path[-1]]      # the whole branch's direction: a head grows up, not into the nose
        n = np.linalg.norm(u)
        if n < 1e-9:
            continue
        u /= n
        t = centering.ray_hits(X[leaf], u[None], T0, E1, E2)[0]
        if np.isfinite(t) and t < 0.5:
            X[leaf] = X[leaf] + reach * t * u
    return X


def _shorten_end_bones(heads, tails, parents, reach: float = END_REACH):
    """End bones (head, hand, foot, tail tip) stop inside their part, as artists' do:
    the leaf node was pushed most of the way to the skin so that the chain gets its
    joints, but the bone itself ends at `reach` of that length."""
    leaf = np.ones(len(heads), bool)
    leaf[parents[parents >= 0]] = False
    tails = tails.copy()
    tails[leaf] = heads[leaf] + reach * (tails[leaf] - heads[leaf])
    return tails


def _clearly_inside(P, V, F, margin: float = 0.6):
    """inside_mesh with a margin: a point on an open sheet (winding ~0.5) is not inside."""
    ok, det = inside_mesh(P, V, F, return_details=True)
    return ok & ((np.abs(det["winding"]) > margin) | (det["part_winding"] > margin) | (det["rule"] == 3))
