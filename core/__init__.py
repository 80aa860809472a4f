# SPDX-License-Identifier: GPL-3.0-or-later
"""Bonesmith's engine: plain functions on numpy arrays. Never imports bpy.

Skeleton and extract_skeleton load Auto Skeleton (core/skeleton.py and the rig package)
on first use, so that Auto Skin's modules do not load it."""
from .errors import BonesmithError, InvalidArmatureError, InvalidMeshError

__all__ = ["BonesmithError", "InvalidArmatureError", "InvalidMeshError", "Skeleton", "extract_skeleton"]


def __getattr__(name):
    if name in ("Skeleton", "extract_skeleton"):
        from . import skeleton
        return getattr(skeleton, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
