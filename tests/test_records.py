# SPDX-License-Identifier: GPL-3.0-or-later
"""core.records: the one reader of Bonesmith .npz records, and its errors."""
import numpy as np
import pytest

from bonesmith.core import records
from bonesmith.core.errors import BonesmithError


@pytest.fixture
def rig_record(tmp_path):
    path = tmp_path / "hero.npz"
    arrays = dict(verts=np.eye(3), faces=np.array([[0, 1, 2]]), joints=np.zeros((2, 3)),
                  parents=np.array([-1, 0]), weights=np.full((3, 2), 0.5), family=np.array("heroes"))
    np.savez(path, **arrays)
    return path, arrays


def test_reads_required_and_present_optional_arrays(rig_record):
    path, arrays = rig_record
    got = records.read(path, records.RIG, optional=("family", "pose_rot"))
    assert sorted(got) == sorted([*records.RIG, "family"])
    for key, value in got.items():
        assert np.array_equal(value, arrays[key]), key


def test_a_missing_array_is_named(rig_record):
    path, _ = rig_record
    with pytest.raises(records.InvalidRecordError,
                       match=r"hero.npz is not a posed record: it has no 'pose_rot', 'pose_verts' arrays") as info:
        records.read(path, records.RIG + records.POSES, needed_for="a posed record")
    assert isinstance(info.value, BonesmithError)


@pytest.mark.parametrize("content", [b"", b"PK\x03\x04 truncated", b"not a zip at all"])
def test_broken_files_are_a_clear_error(tmp_path, content):
    path = tmp_path / "broken.npz"
    path.write_bytes(content)
    with pytest.raises(records.InvalidRecordError, match="Could not read broken.npz: it is not a readable"):
        records.read(path)


def test_a_single_array_file_is_not_a_record(tmp_path):
    path = tmp_path / "one.npz"
    with open(path, "wb") as fh:
        np.save(fh, np.zeros(3))
    with pytest.raises(records.InvalidRecordError, match="single array"):
        records.read(path)


def test_a_truncated_record_is_a_clear_error(rig_record, tmp_path):
    path, _ = rig_record
    cut = tmp_path / "cut.npz"
    cut.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(records.InvalidRecordError, match="Could not read cut.npz"):
        records.read(cut, records.RIG)
