# SPDX-License-Identifier: GPL-2.0-only
"""ports - a loopback port free for both TCP and UDP now, for the programs the
tests and benchmarks start (a fixed port can be in TIME_WAIT from the round
before, or taken by another program on the machine).

The port is drawn below the kernel's ephemeral range
(net.ipv4.ip_local_port_range): a port the kernel hands out itself (to a socket
that connects or sends before it binds) can be taken by any other program
between the moment it is picked here and the moment the program binds it,
which on a busy machine running tests side by side happens (a pong that found
its port in use). Below that range only another explicit bind can take it."""
import random
import socket

RANGE_FILE = "/proc/sys/net/ipv4/ip_local_port_range"
LOWEST = 10000      # below: the ports services are configured on


def ephemeral_range(path=RANGE_FILE):
    """The kernel's (first, last) ephemeral port, or None when unknown."""
    try:
        with open(path) as f:
            lo, hi = (int(x) for x in f.read().split())
    except (OSError, ValueError):
        return None
    return lo, hi


def binds(host, port):
    """True when a TCP and a UDP socket can both bind @host:@port now."""
    for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
        with socket.socket(socket.AF_INET, kind) as s:
            try:
                s.bind((host, port))
            except OSError:
                return False
    return True


def free_port(host="127.0.0.1", path=RANGE_FILE):
    """A port of @host that a TCP and a UDP socket can both bind now: drawn
    at random below the kernel's ephemeral range, or (when that range leaves
    too little below it) the kernel's pick for TCP, tried for UDP."""
    r = ephemeral_range(path)
    if r is not None and r[0] - LOWEST >= 1000:
        for _ in range(200):
            port = random.randrange(LOWEST, r[0])
            if binds(host, port):
                return port
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind((host, 0))
            port = s.getsockname()[1]
        if binds(host, port):
            return port
