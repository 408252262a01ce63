"""system.files: what a writer killed half-way leaves is removed once it is dead."""
import os
import subprocess

from jtrpy.system.files import remove_stale_tmp, write_atomic


def test_stale_temporary_files_of_dead_pids_are_removed(tmp_path):
    p = subprocess.Popen(["true"])
    p.wait()
    dead, live = p.pid, os.getpid()
    for name in (".a.json.tmp-%d" % dead, ".b.tmp-%d" % live, "c.tmp-%d" % dead,
                 ".d.tmp-x", "e"):
        (tmp_path / name).write_text("x")
    assert remove_stale_tmp(str(tmp_path)) == [str(tmp_path / (".a.json.tmp-%d" % dead))]
    assert sorted(os.listdir(tmp_path)) == sorted(
        [".b.tmp-%d" % live, "c.tmp-%d" % dead, ".d.tmp-x", "e"])
    assert remove_stale_tmp(str(tmp_path / "missing")) == []


def test_write_atomic_names_its_temporary_file_as_remove_stale_tmp_expects(tmp_path,
                                                                          monkeypatch):
    seen = []
    real = os.replace

    def spy(src, dst):
        seen.append(os.path.basename(src))
        real(src, dst)
    monkeypatch.setattr(os, "replace", spy)
    write_atomic(str(tmp_path / "x.json"), "{}")
    assert seen == [".x.json.tmp-%d" % os.getpid()]
