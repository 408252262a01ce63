# SPDX-License-Identifier: GPL-2.0-only
"""system.cpus: CPU lists as the kernel writes them, and the default CPU."""
import os

import pytest

from jtrpy.errors import UsageError
from jtrpy.system.cpus import cpulist_of, default_cpu, read_cpulist


def test_cpulists(tmp_path):
    assert cpulist_of("1,3-4\n") == [1, 3, 4]
    assert cpulist_of("") == [] and cpulist_of("\n") == []
    with pytest.raises(UsageError, match="is not a CPU list"):
        cpulist_of("a-b")
    f = tmp_path / "online"
    f.write_text("0-1\n")
    assert read_cpulist(str(f)) == [0, 1]
    f.write_text("junk\n")
    assert read_cpulist(str(f)) == []
    assert read_cpulist(str(tmp_path / "missing")) == []
    assert default_cpu() in os.sched_getaffinity(0)
