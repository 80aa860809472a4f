# SPDX-License-Identifier: GPL-3.0-or-later
"""Domain exceptions. Messages are written for the user: say what is wrong and what to do."""


class BonesmithError(Exception):
    """Base class for every error Bonesmith reports to a user."""


class InvalidMeshError(BonesmithError):
    """The input mesh cannot be rigged as it is (empty, no faces, NaN, zero area...)."""


class InvalidArmatureError(BonesmithError):
    """The armature cannot drive skin weights (no deforming bones, NaN positions, bad parents...)."""


class Cancelled(BonesmithError):
    """The user cancelled a long-running job."""
