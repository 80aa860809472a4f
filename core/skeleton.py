# SPDX-License-Identifier: GPL-3.0-or-later
"""Auto Skeleton: mesh in, rig out (docs/auto_skeleton.md).

Pipeline: clean + normalise the mesh -> decimated proxy -> Laplacian contraction
(contraction.py) -> greedy edge collapse (collapse.py) -> refinement and rig
building (the rig package, one module per stage). Everything here works in the
caller's units and frame; the stages work in the normalised frame.
"""
from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field, replace
from typing import NamedTuple

import numpy as np

from . import centering, orientation, rig, symmetry
from .collapse import collapse_to_graph
from .contraction import contract, one_ring_areas
from .ground import ground_vertices
from .rig import rigify_roles
from .limbs import SIDE_TOLERANCE   # chains this close to the plane get no .L/.R suffix
from .meshprep import (body_faces, check_one_character, check_small_members, clean_mesh, group_members, resample,
                       validate)
from .proximity import inside_mesh
from .unsubdivide import coarse_mesh


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
            self.up = rig.default_up(self.joints, self.tails)
        self.up = np.asarray(self.up, dtype=np.float64).reshape(-1, 3)

    def __len__(self):
        return len(self.joints)

    @property
    def facing_text(self) -> str:
        """'facing -Y, up +Z': which axes the rig took as the character's front and up
        (orientation.upright_turn); for a group of separate things (a shoal), how many;
        empty for a skeleton made elsewhere."""
        if "group_members" in self.info:
            return f"a group of {self.info['group_members']} separate things, a bone each"
        if "front" not in self.info:
            return ""
        return f"facing {self.info['front']}, up {self.info['up']}"

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


PROXY_MIN = 100   # the contraction's proxy keeps at least this many vertices
ABSORB = 0.5   # body radii within which another part's skeleton merges into the body's
PAIR_TOLERANCE = 0.03  # joints this close to each other's mirror image are a left/right pair
CENTRE_TOLERANCE = 0.02  # joints this close to the plane of symmetry are on it
LIMB_END_PART = 0.5     # share of min_part below which a part gets no bones in the tree the humanoid test reads
STANDING = 0.9   # the file's up this near the body's (cosine): its front outline is a standing body's

DEFAULTS = dict(
    proxy_vertices=5000,   # contraction runs on a proxy of about this size
    min_part=0.08,         # parts smaller than this (longest side = 1) get no bones
    min_branch=0.05,       # shortest branch a separate part may add
    spur_length=0.04,      # leaf branches shorter than this are collapse noise
    head_span=0.17,        # a central end cluster (head) this small keeps one branch
    bone_length=0.10,      # target bone length at detail 1
    merge_length=0.025,    # internal bones shorter than this are merged
    min_support=2,         # vertices a bone needs nearest to it (÷ detail, rounded up); 0: no budget (rig.budget)
    limb_landmarks=True,   # a humanoid's generic rig bends at its elbows, knees ..., legs knee-ankle-foot (rig.humanoid.snap_limbs)
    straight_bone_length=0.20,   # other characters: a chain joint without bend or narrowing goes if the bone it leaves is at most this (÷ detail; 0: off; rig.straighten_chains)
    flat_bone_length=0.20,       # other characters: flat chains (fins, ears) get one bone per this (÷ detail; 0: bone_length)
)


def _check_options(opt: dict) -> None:
    """ValueError for an option that cannot work: every size or count finite and not
    negative, a proxy of at least PROXY_MIN vertices and bones of some length."""
    for key, value in opt.items():
        if isinstance(value, bool):
            continue
        if not (isinstance(value, (int, float, np.integer, np.floating)) and np.isfinite(value) and value >= 0):
            raise ValueError(f"{key} must be a finite number, not negative (got {value!r})")
    if opt["proxy_vertices"] < PROXY_MIN:
        raise ValueError(f"proxy_vertices must be at least {PROXY_MIN} (got {opt['proxy_vertices']!r})")
    if not opt["bone_length"] > 0:
        raise ValueError(f"bone_length must be positive (got {opt['bone_length']!r})")


def extract_skeleton(vertices, faces, *, detail: float = 1.0, naming: str = "bonesmith",
                     progress=None, markers=None, **options) -> Skeleton:
    """Build a rig for a triangle mesh.

    vertices (V,3), faces (F,3) int (polygons must be triangulated by the caller).
    detail: 1.0 = default joint density; 2.0 roughly doubles joints per chain.
    naming: "bonesmith" (generic names: spine_01, arm_02.L ...) or a humanoid preset,
    "mixamo", "unreal", "unity", "rigify": a humanoid then gets the standard humanoid
    skeleton with that preset's names (rigify: a metarig, with heel and palm bones);
    anything else keeps the generic skeleton and names. Hands with separable fingers
    get three bones a digit in every naming (thumb_01.L ... with generic names).
    info["humanoid"] says whether the mesh was
    recognised as one; info["roles"] gives each standard bone's role ("forearm.L").
    progress: optional callable(fraction: float, message: str); it may raise
    errors.Cancelled to stop the job.
    markers: optional {landmark: (x, y, z)} in the caller's frame ("knee.L", "chin" ...:
    rig.markers.NAMES): a humanoid's standard joints there, the rest derived around them
    (docs/auto_skeleton.md#markers); info["landmarks"] gives every landmark's position
    (caller's frame) for a humanoid and info["landmark_cues"] what placed each ("bend",
    "narrowing", "gap", "turn", "sole", "proportion", "marker" ...;
    docs/auto_skeleton.md#landmark-cues), info["markers_ignored"] is True when markers were
    given for a character not recognised as one.
    options: override DEFAULTS, or contraction options (wl0, max_iterations...).
    Raises InvalidMeshError on input that cannot be rigged (also a mesh holding several
    characters far apart: meshprep.check_one_character).
    """
    unknown = set(options) - set(DEFAULTS) - {"wl0", "wl_scale", "max_iterations", "area_ratio"}
    if unknown:
        raise TypeError(f"unknown options: {sorted(unknown)}")
    if not (detail > 0 and np.isfinite(detail)):
        raise ValueError("detail must be a positive, finite number")
    rig.presets.check(naming)
    user_markers = rig.markers.check(markers)
    opt = {**DEFAULTS, **{k: v for k, v in options.items() if k in DEFAULTS}}
    _check_options(opt)
    contract_opt = {k: v for k, v in options.items() if k not in DEFAULTS}
    report = progress or (lambda fraction, message: None)
    timings = {}
    t0 = time.perf_counter()

    report(0.0, "Cleaning mesh")
    # an exact midpoint subdivision has the surface of the mesh under it: a subdivided
    # copy gets the original's rig (and the bones' support counts the original's vertices)
    vertices, faces = validate(vertices, faces)
    vertices, faces = coarse_mesh(vertices, faces) or (vertices, faces)
    mesh, on_ground = _without_ground(clean_mesh(vertices, faces))
    body = body_faces(mesh.vertices, mesh.faces, check_one_character(mesh.vertices, mesh.faces))
    if not body.all():                           # far props get no bones nor stretch the frame
        mesh = clean_mesh(mesh.to_world(mesh.vertices), mesh.faces[body])
    members = group_members(mesh.vertices, mesh.faces)
    if members is not None:                      # a shoal, a swarm: a bone per member
        check_small_members(mesh.vertices, members)
        timings["total"] = time.perf_counter() - t0
        report(1.0, "Done")
        return _group_skeleton(mesh, members, {"timings": timings, "far_faces_left_out": int((~body).sum()),
                                             "ground_faces_left_out": on_ground}, naming)
    mesh, turn, symmetric = _symmetry_frame(mesh)
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
    X, radius = rig.refine_nodes(V, Vc, nodes, members)
    parts = _parts(V, F, nodes, edges, members)
    # the tree the humanoid test reads keeps smaller parts: a ragdoll's hands and feet
    # (docs/auto_skeleton.md#segmented-mannequins); the lean rig is joined again with min_part
    tree = _rig_tree(X, radius, edges, members, parts, V, F, dict(opt, min_part=LIMB_END_PART * opt["min_part"]),
                     detail, symmetric, end_pieces=True)

    def joints(lean):
        t = tree
        # no landmarks: rigid pieces at the ends follow the bone they sit on, and the parts
        # are joined nearest first (docs/auto_skeleton.md#parts)
        if lean:
            rigid = _rigid_leaves(V, parts, radius, opt["min_part"])
            if rigid.any() or len(parts.extent) > 1:
                t = _rig_tree(X, radius, edges, members, parts._replace(boneless=parts.boneless | rigid),
                              V, F, opt, detail, symmetric, nearest_first=True)
        return _rig_joints(mesh, V, F, Vc, members, t, opt, detail, symmetric, lean)
    bones = joints(False)
    heads, tails, parents, upright = _upright_bones(*bones, turn)
    # the upright turn keeps the plane x = 0, so the mesh stays symmetric in it
    surface = (V, F) if len(V) < len(mesh.vertices) else (mesh.vertices, mesh.surface_faces)   # decimated: the proxy

    def recognised(heads, tails, parents, upright):
        def inside(P):
            return rig.clearly_inside(P @ upright, *surface)
        found = rig.humanoid.recognise(heads, tails, parents, mesh.vertices @ upright.T, symmetric,
                                       inside=inside, faces=mesh.faces)   # faces: for the fingers
        if found is None and (upright @ turn)[2, 2] > STANDING:
            # interpenetrating pieces hide a standing body in the tree; its front outline shows it
            found = rig.humanoid.outline_humanoid(mesh.vertices @ upright.T, mesh.faces, symmetric, inside)
        return found
    human = recognised(heads, tails, parents, upright)
    if human is not None:
        kept = _upright_bones(*bones, turn, feet=False)     # the file's front, if still a humanoid
        if _front_unconfirmed(human, kept[3], upright, turn) and (found := recognised(*kept)) is not None:
            (heads, tails, parents, upright), human = kept, found
    if human is None:            # no landmarks: a joint must bend or narrow
        heads, tails, parents, upright = _upright_bones(*joints(True), turn)
    turn = upright @ turn
    if human is not None and user_markers:
        human.markers = {k: (p - mesh.center) / mesh.scale @ turn.T for k, p in user_markers.items()}
    names = rig.bone_names(heads, tails, parents, side_tolerance=SIDE_TOLERANCE)
    roles = digits = None
    if human is not None:
        diagonal = float(np.linalg.norm(np.ptp(mesh.vertices @ upright.T, axis=0)))
    if human is not None and naming != "bonesmith":
        heads, tails, parents, roles = rig.humanoid.standard_bones(human, metarig=naming == "rigify")
        names = rig.presets.names(roles, naming)
    elif human is not None and human.outline:    # the generic tree did not show the body: the standard one
        heads, tails, parents, _ = rig.humanoid.standard_bones(human)
    elif human is not None and opt["limb_landmarks"]:
        heads, tails, parents = rig.humanoid.snap_limbs(heads, tails, parents, human, diagonal)
    if human is not None and not roles:          # arms and legs named by limb, not by direction
        limbs = rig.humanoid.limb_bones(heads, parents, human, SIDE_TOLERANCE)
        names = rig.bone_names(heads, tails, parents, side_tolerance=SIDE_TOLERANCE, limbs=limbs)
        if opt["limb_landmarks"]:
            names, digits = rig.humanoid.finger_names(heads, parents, names, human, diagonal)
    if not roles:                                # generic names: a centre bone never follows a side one
        parents = rig.centre_off_sides(names, parents)
    timings["rig"] = time.perf_counter() - t
    timings["total"] = time.perf_counter() - t0
    report(1.0, "Done")
    info = {"timings": timings, "contraction": cinfo, "proxy_vertices": len(V),
            "graph_nodes": len(nodes), "far_faces_left_out": int((~body).sum()), "ground_faces_left_out": on_ground,
            **orientation.facing(turn),
            "humanoid": human is not None, "naming": naming if roles else "bonesmith"}
    if roles:
        info["roles"] = roles
    if human is not None:
        found = rig.markers.landmarks(rig.humanoid.standard_joints(human))
        info["landmarks"] = {k: mesh.to_world(p @ turn).tolist() for k, p in found.items()}
        info["landmark_cues"] = rig.markers.cues(human)
    elif user_markers:
        info["markers_ignored"] = True
    up = rig.default_up(heads, tails)
    if roles or digits:          # digits face the back of the hand, in every naming
        up = rig.humanoid.finger_ups(heads, tails, roles or digits, up)
    if naming == "rigify" and not roles:         # any other character: a creature's metarig
        world_up = turn[:, 2]          # the caller's +Z in the upright frame (p @ turn: caller's frame)
        ground = rigify_roles.ground_points(mesh.vertices @ upright.T, world_up)
        names = _metarig_names(names, parents)
        info["rigify"] = rigify_roles.creature_metarig(heads, tails, parents, ground, world_up,
                                                       SIDE_TOLERANCE).as_info()
    return Skeleton(mesh.to_world(heads @ turn), parents, mesh.to_world(tails @ turn), names,
                    up @ turn, info)


def _without_ground(mesh):
    """(mesh, faces left out): the mesh less the flat plates it stands on (a ground plane,
    a shadow disc: ground.ground_vertices), cleaned again; they get no bones."""
    plate = ground_vertices(mesh.vertices, mesh.faces)[mesh.faces[:, 0]]
    if not plate.any():
        return mesh, 0
    return clean_mesh(mesh.to_world(mesh.vertices), mesh.faces[~plate]), int(plate.sum())


def _symmetry_frame(mesh):
    """(mesh, turn, symmetric): the mesh turned so that its plane of symmetry is x = 0
    (facing +-X, lying on a side, off the box's centre: symmetry_frame; turned by any
    angle: oblique_frame, the mesh then normalised again), the turn (points @ turn.T),
    and whether it is symmetric in x = 0 now (docs/auto_skeleton.md#symmetry)."""
    turn, shift = symmetry.symmetry_frame(mesh.vertices)
    mesh = replace(mesh, vertices=mesh.vertices @ turn.T - [shift, 0.0, 0.0],
                   center=mesh.center + ([shift, 0.0, 0.0] @ turn) * mesh.scale)
    symmetric = symmetry.is_mirror_symmetric(mesh.vertices)
    if symmetric or not np.array_equal(turn, np.eye(3)) or shift != 0.0:
        return mesh, turn, symmetric
    oblique = symmetry.oblique_frame(mesh.vertices)
    if oblique is None:
        return mesh, turn, symmetric
    turn, centre, size, shift = oblique
    centre = centre + [shift * size, 0.0, 0.0]          # the plane x = shift onto x = 0
    mesh = replace(mesh, vertices=(mesh.vertices @ turn.T - centre) / size,
                   center=mesh.center + (centre @ turn) * mesh.scale, scale=mesh.scale * size)
    return mesh, turn, True


def _metarig_names(names, parents):
    """A creature metarig's names: Rigify keeps a bone named "root" as its own root
    control, without a deforming bone, so the root bone is named rig_roles' ROOT_NAME."""
    return [rigify_roles.ROOT_NAME if p < 0 and n == "root" else n for n, p in zip(names, parents)]


def _group_skeleton(mesh, members, info, naming) -> Skeleton:
    """A group of small separate things: the root and one bone per member (rig.group_bones)."""
    heads, tails, parents = rig.group_bones(mesh.vertices, one_ring_areas(mesh.vertices, mesh.faces) / 3, members)
    names = ["root"] + [f"member_{k:02d}" for k in range(1, len(members) + 1)]
    info = {**info, "group_members": len(members), "humanoid": False, "naming": "bonesmith"}
    if naming == "rigify":
        names = _metarig_names(names, parents)
        info["rigify"] = rigify_roles.group_metarig(len(members)).as_info()
    return Skeleton(mesh.to_world(heads), parents, mesh.to_world(tails), names, rig.default_up(heads, tails), info)


def _upright_bones(pos, par, socket, turn, feet: bool = True):
    """Bones of the joint tree (rig.to_bones), turned upright: (heads, tails, parents,
    upright turn); lying, facing +Y, the rig is turned to up +Z, front -Y (by its feet
    bones unless `feet` is False: orientation.upright_turn)."""
    heads, tails, parents = rig.to_bones(pos, par, socket)
    tails = rig.shorten_end_bones(heads, tails, parents)
    upright = orientation.upright_turn(heads, tails, parents, SIDE_TOLERANCE, on_its_side=symmetry.is_side_turn(turn),
                                       feet=feet)
    return heads @ upright.T, tails @ upright.T, parents, upright


def _front_unconfirmed(human, kept, upright, turn) -> bool:
    """Whether the feet bones turned a humanoid (`upright`; `kept`: the upright turn without
    them) half about the vertical away from the file's front (-Y) while its feet do not
    show the toes ahead (humanoid.front.feet_confirm_front): a heel or a boot's back can
    end a generic leg pointing back (docs/auto_skeleton.md#orientation)."""
    return (not np.allclose(kept, upright) and orientation.facing(kept @ turn)["front"] == "-Y"
            and not rig.humanoid.feet_confirm_front(human))


def _rig_tree(X, radius, edges, members, parts, V, F, opt, detail, symmetric, nearest_first=False, end_pieces=False):
    """Skeleton graph of the proxy (refined node positions X, radii, edges, members,
    parts) -> rooted tree for _rig_joints: (X (k, 3) node positions, radius (k,), adj,
    root, parts); adj is None for a blob (no tree to cut) and for a rigid solid in one
    part (rig.rigid_solid: a cube, an egg). nearest_first: rig.join_parts'."""
    if len(parts.extent) == 1 and rig.rigid_solid(V):
        return X, radius, None, 0, parts
    X, adj, root = _tree(X, radius, edges, members, parts, V, F, opt, detail, symmetric, nearest_first, end_pieces)
    if len(adj) < 2 or np.ptp(X[list(adj)], axis=0).max() < opt["merge_length"]:
        adj = None
    return X, radius, adj, root, parts


def _rig_joints(mesh, V, F, Vc, members, tree, opt, detail, symmetric, lean: bool = False):
    """The rooted tree's joints; the mesh's vertices (the coarse mesh's of a subdivided
    one) are the bones' support (rig.prune_unsupported). lean: a character without the
    humanoid's landmarks, whose joints must bend or narrow (rig.straighten_chains) and
    whose flat chains get one bone per `flat_bone_length`
    (docs/auto_skeleton.md#straight-chains).

    Returns (pos (n, 3) joint positions, par (n,) parent joints, socket (n,) bool),
    in the normalised frame, joint 0 = root.
    """
    X, radius, adj, root, parts = tree
    if adj is None:
        return (*rig.single_bone(V, parts.vertex_area), np.zeros(2, bool))
    flat_bone = opt["flat_bone_length"] / detail if lean and opt["flat_bone_length"] else None
    pos, par, rad, socket = rig.simplify_chains(X, radius, adj, root, bone_length=opt["bone_length"] / detail,
                                                merge_length=opt["merge_length"] / detail, sections=(V, members),
                                                flat_bone_length=flat_bone)
    pairs = 2 * PAIR_TOLERANCE if symmetric else None
    if symmetric:
        pos, par, rad, socket = rig.mirror_tree(pos, par, rad, socket, centre=CENTRE_TOLERANCE,
                                                tolerance=2 * PAIR_TOLERANCE)
    if opt["min_support"] > 0:     # a bone needs vertices to move (on the coarse mesh of a subdivided one)
        pos, par, rad, socket = rig.prune_unsupported(
            pos, par, rad, socket, mesh.vertices, math.ceil(opt["min_support"] / detail), pair_tolerance=pairs)
        if len(pos) < 3:           # one bone left (a subdivided cube): the blob's bone
            return (*rig.single_bone(V, parts.vertex_area), np.zeros(2, bool))
    if lean and opt["straight_bone_length"] > 0:
        pos, par, rad, socket = rig.straighten_chains(pos, par, rad, socket, opt["straight_bone_length"] / detail,
                                                      pair_tolerance=pairs)
    pos = _place_joints(mesh, V, F, Vc, X, pos, par, rad, socket, symmetric)
    return pos, par, socket


class _Parts(NamedTuple):
    """The mesh parts (components of the collapse graph) of a proxy."""
    comp: np.ndarray         # (k,) part of each graph node
    weight: np.ndarray       # (C,) per part, its weight in the choice of the body
    extent: np.ndarray       # (C,) per part, its longest bounding-box side
    owner: np.ndarray        # (V,) graph node each proxy vertex was merged into
    vertex_area: np.ndarray  # (V,) area per vertex for the centre of mass (0 on sheets)
    boneless: np.ndarray     # (C,) per part, whether it gets no bones (a rib; without landmarks, a rigid leaf part)


def _parts(V, F, nodes, edges, members):
    """Parts of the proxy (V, F) from its collapse graph (nodes, edges, members)."""
    vertex_area = one_ring_areas(V, F) / 3
    mass = np.array([vertex_area[m].sum() for m in members])
    comp = rig.node_components(len(nodes), edges)
    comp_mass = np.bincount(comp, weights=mass)
    extent = rig.part_extents(V, members, comp)
    owner = np.empty(len(V), np.int64)
    for k, m in enumerate(members):
        owner[m] = k
    solid = rig.solid_parts(V, F, comp[owner], comp_mass)
    ring = rig.ring_parts(V, F, comp[owner], vertex_area)
    if solid.any():       # a sheet (a tail fan, a cape) is no centre of mass
        vertex_area = vertex_area * solid[comp[owner]]
    return _Parts(comp, rig.body_weights(comp_mass, solid), extent, owner, vertex_area, ring)


def _rigid_leaves(V, parts, radius, min_part):
    """(C,) per part, a rigid leaf part (rig.rigid_leaf_parts) of a character without
    landmarks; radius (k,) per graph node (refine_nodes)."""
    body = rig.parts_by_mass(parts.comp, parts.weight[parts.comp])[0]      # join_parts' body
    thickness = rig.part_thickness(radius, parts.comp, len(parts.extent))
    return rig.rigid_leaf_parts(V, parts.comp[parts.owner], body, parts.boneless | (parts.extent < min_part), thickness)


def _tree(X, radius, edges, members, parts, V, F, opt, detail, symmetric, nearest_first=False, end_pieces=False):
    """One pruned tree out of the per-part graphs, and its root.

    Returns (X (k, 3) with the leaves extended, adj: the tree, root node).
    """
    centroid = (parts.vertex_area[:, None] * V).sum(axis=0) / parts.vertex_area.sum()
    X = rig.straighten_convex_parts(X, parts.comp, members, V, centroid)
    kept, joined = rig.join_parts(X, edges, radius, parts.weight[parts.comp], parts.extent[parts.comp],
                                  [V[m] for m in members], min_part=opt["min_part"],
                                  min_branch=opt["min_branch"],
                                  inside_body=_inside_body(V, F, parts.owner, len(parts.comp)),
                                  absorb=ABSORB, boneless=parts.boneless[parts.comp],
                                  nearest_first=nearest_first, end_pieces=end_pieces, mirror=symmetric)
    tree = rig.spanning_tree(X, kept, joined)
    adj = rig.adjacency(0, tree)
    if len(kept) == 1:
        adj[int(kept[0])]     # a lone node has no edge to put it in the tree
    X = rig.extend_leaves(X, adj, V, F)      # before pruning: a head is long once it reaches its top
    if symmetric:     # a flat fish's spine through its thick middle, not up into its fins
        X = rig.centre_flat_body(X, adj, V, members, centre=CENTRE_TOLERANCE)
    adj = rig.prune_spurs(X, adj, radius, opt["spur_length"] / detail)
    if symmetric:     # fins in the plane of symmetry, a flat fish's medial sheet
        adj = rig.prune_plane_sheets(X, adj, V, members, centre=CENTRE_TOLERANCE)
    root = rig.choose_root(X, adj, centroid)
    if symmetric:     # a head is one chain, not a nose beside a crown
        adj = rig.merge_end_clusters(X, adj, root, max_span=opt["head_span"] / detail,
                                     centre=CENTRE_TOLERANCE)
    return X, adj, root


def _inside_body(V, F, owner, n_nodes):
    """inside_body(points (n, 3), kept nodes) -> (n,) bool for join_parts: inside the
    faces of the proxy whose vertices all merged into kept nodes."""
    def inside_body(points, kept_nodes):
        mine = np.zeros(n_nodes, bool)
        mine[kept_nodes] = True
        body = F[mine[owner[F]].all(axis=1)]
        return inside_mesh(points, V, body) if len(body) else np.zeros(len(points), bool)
    return inside_body


def _place_joints(mesh, V, F, Vc, X, pos, par, rad, socket, symmetric):
    """Joints centred in their cross-section, moved inside the surface and, on a
    symmetric character, made symmetric. Joints without children (ends) may stay outside.

    Returns the new positions (n, 3).
    """
    has_child = np.zeros(len(pos), bool)
    has_child[par[par >= 0]] = True
    pos = rig.center_in_sections(pos, par, rad, socket, V, F)
    if len(V) < len(mesh.vertices):      # decimated: test on the proxy, cheap on huge meshes
        inside = lambda P: rig.clearly_inside(P, V, F)
    else:
        inside = lambda P: rig.clearly_inside(P, mesh.vertices, mesh.surface_faces)
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
        if len(moved):      # none moved: the inside test refuses an empty set of points
            ok = inside(mirrored[moved]) | ~has_child[moved]
            pos[moved[ok]] = mirrored[moved[ok]]
    return pos
