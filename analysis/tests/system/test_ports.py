# SPDX-License-Identifier: GPL-2.0-only
import socket

from jtrpy.system.ports import free_port


def test_the_port_binds_for_tcp_and_udp():
    for _ in range(20):
        port = free_port()
        assert 1024 <= port <= 65535
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as t, \
                socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
            t.bind(("127.0.0.1", port))
            u.bind(("127.0.0.1", port))


def test_a_port_taken_for_udp_is_passed_over(monkeypatch):
    # the kernel offers for TCP a port a UDP socket holds: the next one is taken
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
        port = free_port()
    finally:
        held.close()
    assert port != busy and port != 0
