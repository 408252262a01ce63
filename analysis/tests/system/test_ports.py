# SPDX-License-Identifier: GPL-2.0-only
import socket

from jtrpy.system.ports import LOWEST, ephemeral_range, free_port


def test_the_port_binds_for_tcp_and_udp():
    for _ in range(20):
        port = free_port()
        assert 1024 <= port <= 65535
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as t, \
                socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
            t.bind(("127.0.0.1", port))
            u.bind(("127.0.0.1", port))


def test_a_port_taken_for_udp_is_passed_over(monkeypatch, tmp_path):
    # the kernel offers for TCP a port a UDP socket holds: the next one is taken
    # (its pick is used when its ephemeral range leaves no room below it)
    no_room = tmp_path / "range"
    no_room.write_text("1024 65535\n")
    held = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    held.bind(("127.0.0.1", 0))
    busy = held.getsockname()[1]
    offers = iter([busy, 0])
    real_bind = socket.socket.bind

    class Offering(socket.socket):
        def bind(self, addr):
            if self.type == socket.SOCK_STREAM and addr[1] == 0:
                addr = (addr[0], next(offers))
            return real_bind(self, addr)

    monkeypatch.setattr(socket, "socket", Offering)
    try:
        port = free_port(path=str(no_room))
    finally:
        held.close()
    assert port != busy and port != 0


def test_the_port_is_below_the_kernels_ephemeral_range():
    # the kernel hands ports of its range to sockets that send before they
    # bind: another program could take such a port before ours binds it
    lo, hi = ephemeral_range()
    for _ in range(50):
        assert LOWEST <= free_port() < lo


def test_without_room_below_the_range_the_kernel_picks(tmp_path):
    f = tmp_path / "range"
    f.write_text("1024\t65535\n")
    assert ephemeral_range(str(f)) == (1024, 65535)
    port = free_port(path=str(f))
    assert 1024 <= port <= 65535
    f.write_text("garbage\n")
    assert ephemeral_range(str(f)) is None
    assert 1024 <= free_port(path=str(f)) <= 65535
