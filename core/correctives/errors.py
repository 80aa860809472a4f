# SPDX-License-Identifier: GPL-3.0-or-later
"""Errors of the correctives engine."""
from ..errors import BonesmithError


class CorrectivesError(BonesmithError):
    """The character or its poses cannot train or run correctives (message says why)."""
