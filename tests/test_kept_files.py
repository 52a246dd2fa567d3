"""qosbound/kept_files.py: a cache folder is checked before any work, naming what named it; a record is written
whole or not at all."""

from __future__ import annotations

import pytest

from qosbound.errors import ScenarioError
from qosbound.kept_files import writable_folder, write_atomically


def test_a_missing_folder_is_created_and_one_that_cannot_be_is_an_error_naming_its_option(tmp_path):
    assert writable_folder(tmp_path / "a" / "b", field="--cache") == tmp_path / "a" / "b"
    assert (tmp_path / "a" / "b").is_dir()
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(ScenarioError, match="cannot create the cache folder") as e:
        writable_folder(blocker / "sub", file="QOSBOUND_CACHE_DIR")
    assert (e.value.file, e.value.field) == ("QOSBOUND_CACHE_DIR", None)


def test_a_record_is_replaced_whole_and_a_failed_write_leaves_the_old_one_and_no_temporary_file(tmp_path):
    target = tmp_path / "r.json"
    write_atomically(target, lambda f: f.write("old"), binary=False, sync=True)
    assert target.read_text() == "old"

    def fails(f):
        f.write("half")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_atomically(target, fails, binary=False)
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]
    write_atomically(target, lambda f: f.write(b"new"), binary=True)
    assert target.read_bytes() == b"new"
