# SPDX-License-Identifier: GPL-3.0-or-later
"""Learned correctives (docs/correctives.md): refined skin weights, local pose correctives
and a joint regressor, fitted on arrays; numpy/scipy only (no bpy, no torch)."""
from .errors import CorrectivesError
from .fit import fit_correctives, vertex_errors
from .joints import (JointRegressor, family_joint_regressor, fit_joint_regressor,
                     leave_one_out_error, shipped_joint_regressors)
from .kinematics import (axis_angle_to_matrix, in_bone_order, lbs, local_quaternions,
                         matrix_to_quaternion, quaternion_to_matrix, random_rotations,
                         skinning_matrices)
from .model import MONOMIALS, CorrectiveModel, LiveKey, key_budget, key_values, monomials

__all__ = [
    "CorrectivesError", "fit_correctives", "vertex_errors", "JointRegressor", "fit_joint_regressor",
    "leave_one_out_error", "family_joint_regressor", "shipped_joint_regressors",
    "axis_angle_to_matrix", "in_bone_order", "lbs", "local_quaternions", "matrix_to_quaternion",
    "quaternion_to_matrix", "random_rotations", "skinning_matrices",
    "MONOMIALS", "CorrectiveModel", "LiveKey", "key_budget", "key_values", "monomials",
]
