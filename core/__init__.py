# SPDX-License-Identifier: GPL-3.0-or-later
"""Bonesmith's engine: plain functions on numpy arrays. Never imports bpy."""
from .errors import BonesmithError, InvalidMeshError
from .skeleton import Skeleton, extract_skeleton

__all__ = ["BonesmithError", "InvalidMeshError", "Skeleton", "extract_skeleton"]
