# SPDX-License-Identifier: GPL-2.0-only
"""ports - a loopback port free for both TCP and UDP now, for the programs the
tests and benchmarks start (a fixed port can be in TIME_WAIT from the round
before, or taken by another program on the machine)."""
import socket


def free_port(host="127.0.0.1"):
    """A port of @host that a TCP and a UDP socket can both bind now: the
    kernel's pick for TCP, tried for UDP, again until both take it."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind((host, 0))
            port = s.getsockname()[1]
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
            try:
                u.bind((host, port))
            except OSError:
                continue
        return port
