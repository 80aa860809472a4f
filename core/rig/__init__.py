# SPDX-License-Identifier: GPL-3.0-or-later
"""From a skeleton graph to a rig an animator can use, one module per stage
(docs/auto_skeleton.md, sections Refinement to Bones).

refine      refine_nodes: nodes moved back to the centre of their surface region.
parts       join_parts: one graph for a multi-part mesh: small parts get no bones,
            parts overlapping the body are absorbed, the rest hang off the nearest node;
            straighten_convex_parts: a box's graph is its axis.
tree        spanning_tree, extend_leaves, centre_flat_body, prune_spurs,
            prune_plane_sheets, choose_root, merge_end_clusters: a tree whose leaves
            reach the tips, a flat fish's spine through its thick middle, without spurs
            or fins in the plane of symmetry, rooted near the centre of mass, with a head
            as one chain.
chains      simplify_chains: chains between junctions resampled to a sensible joint count
            (flat chains, fins, without finger-like extra bones).
group       group_bones: a group of small separate things (a shoal), one bone per member.
symmetry    mirror_tree, mirror_pairs: a symmetric character gets a symmetric rig.
budget      prune_unsupported: no bone without vertices to move; straighten_chains: on
            a character without landmarks, no joint where its chain neither bends nor narrows.
placement   center_in_sections, push_inside: joints centred and inside the surface.
bones       to_bones, default_up: bones (head, tail, parent) and roll vectors.
naming      bone_names: readable, mirror-friendly names; centre_off_sides: no centre bone hangs from a side one.
humanoid    a package: recognition (recognise: two legs, two arms, a head), skeleton
            (standard_bones: the standard skeleton), limbs (snap_limbs, limb_bones: the
            generic rig's limb joints and limb names).
markers     check, apply: humanoid landmarks placed by the user, the rest derived around them.
fingers     find_fingers: a hand's thumb and fingers found on the mesh (standard skeleton).
presets     names: Mixamo / Unreal / Unity / Rigify names of the standard roles.
rigify_roles  creature_metarig: any other character's Rigify metarig, each chain's rig
            type from its role (body, spine, head, tail, leg on the ground, limb).
graph       adjacency sets, edge lists, connected components, length-weighted sparse
            graphs, parent arrays (shared helpers).
polyline    length, point_at, fraction_of on (k, 3) polylines (shared helpers).
Every length here is in the normalised frame (longest bounding-box side = 1).
core/skeleton.py runs them in this order (mirror_pairs last, with the placement).
"""
from . import fingers, humanoid, markers, presets
from .budget import bone_support, prune_unsupported, straighten_chains
from .bones import default_up, shorten_end_bones, single_bone, to_bones
from .chains import simplify_chains
from .graph import adjacency, edge_list, node_components
from .group import group_bones
from .naming import bone_names, centre_off_sides
from .parts import (body_weights, join_parts, part_extents, part_thickness, parts_by_mass, rigid_leaf_parts, rigid_solid,
                    ring_parts, solid_parts, straighten_convex_parts)
from .placement import center_in_sections, clearly_inside, push_inside
from .refine import refine_nodes
from .symmetry import mirror_pairs, mirror_tree
from .tree import (centre_flat_body, choose_root, extend_leaves, merge_end_clusters, orient, prune_plane_sheets, prune_spurs, spanning_tree,
                   walk_to_junction)

__all__ = [
    "adjacency", "body_weights", "bone_support", "bone_names", "center_in_sections", "centre_flat_body", "centre_off_sides",
    "choose_root",
    "clearly_inside", "default_up", "edge_list", "extend_leaves", "group_bones",
    "join_parts", "merge_end_clusters", "mirror_pairs", "mirror_tree", "node_components", "orient", "part_extents", "part_thickness", "parts_by_mass",
    "prune_plane_sheets", "prune_spurs", "prune_unsupported", "push_inside", "refine_nodes", "rigid_leaf_parts", "ring_parts", "shorten_end_bones", "simplify_chains",
    "rigid_solid", "single_bone", "solid_parts", "spanning_tree", "straighten_chains", "straighten_convex_parts", "to_bones",
    "walk_to_junction",
]
