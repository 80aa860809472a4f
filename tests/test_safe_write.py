# SPDX-License-Identifier: GPL-3.0-or-later
"""core.safe_write.save_atomic: an older file stays until the new one is complete."""
import numpy as np
import pytest

from bonesmith.core.safe_write import save_atomic


def test_replaces_only_when_the_save_completes(tmp_path):
    path = tmp_path / "models" / "skin.npz"
    save_atomic(lambda partial: np.savez_compressed(partial, a=np.arange(3)), path)
    with np.load(path) as d:  # numpy appended no second ".npz" to the temporary name
        assert d["a"].tolist() == [0, 1, 2]

    def broken(partial):
        partial.write_bytes(b"half a fi")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        save_atomic(broken, path)
    with np.load(path) as d:
        assert d["a"].tolist() == [0, 1, 2]
    assert sorted(p.name for p in path.parent.iterdir()) == ["skin.npz"]  # no partial file left
