# SPDX-License-Identifier: GPL-3.0-or-later
"""Rig templates: which characters share an armature design (docs/auto_skin.md#house-style).

A trained skin model remembers the rig templates it learned and was validated on, and Auto
Skin uses its trained network only for an armature of one of them (network.SkinModel.for_rig).
A template is the armature's bones as (name, parent's name) pairs; names are compared
without case and without the namespace prefixes exporters and control rigs add
("mixamorig:", "DEF-"). Without names (an armature given as arrays only) the pairs are
(index, parent index): the hierarchy alone.

Two armatures are of one template when the Jaccard similarity of their pairs is at least
MATCH: an outfit that adds a prop bone or two to its family's rig still matches, another
family's rig does not (bench/skin_adapt.py --templates measures this on ../shared/data).
"""
from __future__ import annotations

import re

import numpy as np

MATCH = 0.8                 # Jaccard similarity of the (bone, parent) pairs: one template at or above
_PREFIX = re.compile(r"^(?:[^:|]*[:|])+|^(?:def|org|mch)[-_.]", re.IGNORECASE)


def clean(name: str) -> str:
    return _PREFIX.sub("", str(name)).strip().lower()


def pairs(names, parents) -> frozenset:
    """The armature's (bone, parent) pairs; `names` None: by index."""
    parents = np.asarray(parents, dtype=np.int64).ravel()
    if names is None:
        labels = [f"#{i}" for i in range(len(parents))]
    else:
        if len(names) != len(parents):
            raise ValueError(f"{len(names)} bone names for {len(parents)} bones")
        labels = [clean(n) for n in names]
    return frozenset((labels[i], labels[p] if p >= 0 else "") for i, p in enumerate(parents))


def similarity(a: frozenset, b: frozenset) -> float:
    """Jaccard similarity of two pair sets (1 = the same rig)."""
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def by_index(template: dict) -> bool:
    return bool(template.get("by_index"))


def make(names, parents, label: str = "") -> dict:
    """A template as stored in a model file (JSON-friendly)."""
    p = pairs(names, parents)
    return {"label": label, "by_index": names is None, "bones": len(np.ravel(parents)),
            "pairs": sorted([list(x) for x in p])}


def stored_pairs(template: dict) -> frozenset:
    return frozenset(tuple(x) for x in template["pairs"])


def match(templates, names, parents):
    """(index of the best-matching template, its similarity), or (None, best similarity)
    when none reaches MATCH. A template stored by name is compared by name, one stored by
    index by index (then `names` is not needed)."""
    by_name = pairs(names, parents) if names is not None else None
    by_number = pairs(None, parents)
    best, best_s = None, 0.0
    for i, t in enumerate(templates):
        mine = by_number if by_index(t) else by_name
        if mine is None:                # stored by name, asked without names: cannot match
            continue
        s = similarity(mine, stored_pairs(t))
        if s > best_s:
            best, best_s = i, s
    return (best, best_s) if best_s >= MATCH else (None, best_s)


def group(characters) -> tuple:
    """(template index per character, the templates [{label, members, ...}]): each
    character joins the first template it matches (characters are taken in order)."""
    templates, index, families = [], [], []
    for ch in characters:
        names = ch.get("names")
        j, _ = match(templates, names, ch["parents"])
        if j is None:
            templates.append({**make(names, ch["parents"]), "members": []})
            families.append([])
            j = len(templates) - 1
        templates[j]["members"].append(ch.get("name", ""))
        families[j].append(str(ch.get("family") or ch.get("name") or ""))
        index.append(j)
    for t, fams in zip(templates, families):
        t["label"] = _label(fams)
    return index, templates


def _label(families) -> str:
    """A short name for a template from its characters' families: the family, their
    longest common prefix, or the first and a count."""
    names = [f for f in families if f] or ["unnamed rig"]
    if len(set(names)) == 1:
        return names[0] if len(names) == 1 else f"{names[0]} ({len(names)})"
    prefix = names[0]
    for n in names[1:]:
        while not n.startswith(prefix):
            prefix = prefix[:-1]
    prefix = prefix.rstrip("_- .")
    if len(prefix) >= 3:
        return f"{prefix}* ({len(names)})"
    return f"{names[0]} and {len(names) - 1} more"
