# SPDX-License-Identifier: GPL-3.0-or-later
"""Character families and the train / validation split of ../shared/data — the one
place that defines them (bench/skin.py and skin-weight training both use it).

Variants of one body stay together (docs/metrics.md#data): `quat_Smooth_X` and `quat_X`,
Quaternius' Male_* / Female_* outfits, the newer packs' men / women / astronauts / toon
characters on one rig each and their dogs, cattle, deer and horses, 0 A.D. clothing variants on one skeleton, MPFB
body shapes on one rig.

- CC0 sources that may train a shipped model (TRAIN_SOURCES: `quat_`, `quatU_`, `mpfb_`,
  `kenney_`, `ojg_`): the families in VALIDATION_FAMILIES are held out, the rest train.
  `kenney_` is one family (12 chibi minis on one body and rig), held out whole: the one
  measure of a CC0 style that no shipped model trained on.
- Evaluation only, never training data for a shipped model: `zad_` (0 A.D., CC-BY-SA-3.0),
  `gdq_` (CC-BY-4.0) and `m2m_` (CC0 mostly, but its weights may be Blender's Automatic
  Weights rather than an artist's: ../shared/data/README.md).

    from splits import family_of, split_of, split_names
    split_of("quat_Smooth_Male_Shirt")  # -> "val"
"""
from __future__ import annotations

import re

# Families held out for validation (family ids as returned by family_of).
VALIDATION_FAMILIES = frozenset({
    # Quaternius: humans, a multi-part alien, quadrupeds, creatures, a fruit
    "quat_Male", "quat_Alien", "quat_Cat", "quat_Horse", "quat_Dragon", "quat_Frog",
    "quat_Shark", "quat_Spider", "quat_Pineapple", "quat_Goblin", "quat_Stegosaurus",
    # MPFB: the base body with two rigs the training set does not have
    "mpfb_cmu_mb", "mpfb_default",
    # Quaternius' newer packs (quatU_): women, dogs, astronauts, toon soldiers, a mech, a
    # fish, a skull, a flying drone
    "quatU_women", "quatU_canine", "quatU_space_astronaut", "quatU_toon", "quatU_mech_leela",
    "quatU_fish_sunfish", "quatU_platformer_skull", "quatU_cyber_enemy_flying",
    # Kenney's Mini Characters: the whole source (one body, one rig)
    "kenney_mini",
})
TRAIN_SOURCES = ("quat_", "quatU_", "mpfb_", "kenney_", "ojg_")   # CC0, artists' weights

_QUAT_MERGE = {
    "Alien_Helmet": "Alien", "Snake_Angry": "Snake", "Animated_Woman_smooth": "Animated_Woman",
    "Fish1": "Fish", "Fish2": "Fish", "Fish3": "Fish", "Whale_FishPackAnimated": "Whale",
}
_QUATU_RULES = [   # (regex on the name after quatU_, family): one body or one rig template
    (r"^men_", "men"), (r"^women_", "women"), (r"^space_astronaut_", "space_astronaut"),
    (r"^space_mech_", "space_mech"), (r"^toon_", "toon"),
    (r"^animal_(husky|shibainu|wolf|fox)$", "canine"), (r"^animal_(bull|cow)$", "bovine"),
    (r"^animal_(deer|stag)$", "deer"), (r"^animal_(horse|donkey)$", "equine"),
]
_ZAD_RULES = [   # (regex on the name after zad_, family)
    (r"^new_[mf]_", "biped"), (r"^elephant_|^maur_elephant_", "elephant"),
    (r"^horse|^pony", "horse"), (r"^(cattle|bull|auroch|sanga_cattle|zebu)", "bovid"),
    (r"^(animal_)?(boar|piglet|pig)$", "pig"), (r"^animal_lion", "lion"),
    (r"^bear", "bear"), (r"^camel", "camel"), (r"^giraffe", "giraffe"),
    (r"^goat", "goat"), (r"^mastiff", "mastiff"), (r"^rabbit", "rabbit"),
    (r"^fish_", "fish"),
]


def family_of(name: str) -> str:
    """Family id of a record name (stem of the .npz)."""
    if name.startswith("quat_"):
        s = name[5:]
        s = re.sub(r"^Smooth_", "", s)
        s = _QUAT_MERGE.get(s, s)
        if s.startswith(("Male_", "Female_")):
            s = s.split("_")[0]
        return "quat_" + s
    if name.startswith("quatU_"):
        return _by_rules("quatU_", name, _QUATU_RULES)
    if name.startswith("mpfb_"):
        s = name[5:]
        for rig in ("game_engine", "cmu_mb", "default", "mixamo"):
            if s.startswith(rig):
                return "mpfb_" + rig          # game_engine_with_breast joins game_engine
        return "mpfb_" + s
    if name.startswith("zad_"):
        return _by_rules("zad_", name, _ZAD_RULES)
    if name.startswith("kenney_mini_"):
        return "kenney_mini"                  # 12 outfits of one body and rig
    return name


def _by_rules(prefix: str, name: str, rules) -> str:
    """prefix + the family of the first (regex, family) rule matching the name after the
    prefix, else prefix + that name."""
    s = name[len(prefix):]
    return prefix + next((fam for pat, fam in rules if re.search(pat, s)), s)


def split_of(name: str) -> str:
    """"train" or "val" for a record name."""
    if not name.startswith(TRAIN_SOURCES):
        return "val"
    return "val" if family_of(name) in VALIDATION_FAMILIES else "train"


def split_names(names):
    """(train names, validation names), order kept."""
    train = [n for n in names if split_of(n) == "train"]
    val = [n for n in names if split_of(n) == "val"]
    return train, val
