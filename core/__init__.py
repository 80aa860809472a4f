# SPDX-License-Identifier: GPL-3.0-or-later
"""Bonesmith's engine: plain functions on numpy arrays. Never imports bpy."""
from .errors import BonesmithError, InvalidArmatureError, InvalidMeshError
from .skeleton import Skeleton, extract_skeleton

__all__ = ["BonesmithError", "InvalidArmatureError", "InvalidMeshError", "Skeleton", "extract_skeleton"]
