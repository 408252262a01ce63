# SPDX-License-Identifier: GPL-2.0-only
"""attribution/irqthreads.py: a threaded IRQ handler's 15-character comm named whole
from the action its irq_handler_entry records name."""
from jtrpy.attribution import irqthreads as I
from jtrpy.trace import events as E

T0 = 1_000_000_000_000


def log_of(tmp_path, actions):
    """A log with one irq_handler_entry per (irq, action)."""
    evs = [(T0 + 1000 * k, 117, 1, E.IRQ_ENTRY, 0, irq, 0, action)
           for k, (irq, action) in enumerate(actions)]
    E.write_events(str(tmp_path), evs, T0, T0 + 10 ** 9, meta={"cpus": [1]})
    return E.read_events(str(tmp_path))


def test_the_cut_comms_and_their_full_names(tmp_path):
    log = log_of(tmp_path, [(25, "virtio0-requests"), (25, "virtio0-requests"),
                            (4, "ttyS0"), (36, "virtio1-req.0")])
    # irq/4-ttyS0 fits in a comm: nothing to name
    assert I.full_names(log) == {"irq/25-virtio0-": "irq/25-virtio0-requests",
                                 "irq/36-virtio1-": "irq/36-virtio1-req.0"}


def test_every_text_of_the_section_says_the_full_name_once():
    names = {"irq/25-virtio0-": "irq/25-virtio0-requests"}
    a = {"causes": [{"category": "task preemption", "name": "irq/25-virtio0-", "count": 3,
                     "tasks": [{"comm": "irq/25-virtio0-", "pid": 117, "prio": 49}],
                     "example_chain": "preempted by irq/25-virtio0- (pid 117, softirq BLOCK, "
                                      "prio 49) for 140.1 us"}],
         "worst": [{"chain": "hardirq 25 virtio0-requests; then preempted by "
                             "irq/25-virtio0-requests (pid 117) for 1 us"}],
         "other": "irq/26-virtio0- stays"}
    got = I.named(a, names)
    assert got["causes"][0]["name"] == "irq/25-virtio0-requests"
    assert got["causes"][0]["tasks"][0]["comm"] == "irq/25-virtio0-requests"
    assert got["causes"][0]["example_chain"].startswith(
        "preempted by irq/25-virtio0-requests (pid 117, ")
    assert got["worst"][0]["chain"] == a["worst"][0]["chain"]   # whole already
    assert got["other"] == "irq/26-virtio0- stays" and got["causes"][0]["count"] == 3
    assert I.named(a, {}) is a
