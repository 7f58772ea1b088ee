#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""debian-agent.py: the host's shell into the napping Debian guest
(tests/test_debian.py).  Listens on TCP port 7777; each connection sends
one shell command and shuts its side down; the agent runs it with
sh -c and answers with its output (stdout and stderr) followed by a line
"@@rc=N".  The command "@@quit" ends the agent (and so vm-run's
command: the guest powers off).  Prints "AGENT READY" when it listens.

Why TCP and not the 9p share that vm-run's commands poll: a napping guest
runs nothing until its NIC wakes it, and a connection is what wakes it.
napd's ports (80, 11211) do not include 7777, so an idle agent does not
hold a nap back.

debian_guest.py imports this file for the protocol (PORT, QUIT,
recv_all(), split_status()), so both sides speak it from one place."""

import re
import socket
import subprocess
import sys

PORT = 7777
QUIT = "@@quit"
STATUS = re.compile(r"\n@@rc=(\d+)\n$")


def recv_all(sock):
    """Everything sock receives until its peer shuts its side down."""
    chunks = []
    while True:
        data = sock.recv(65536)
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks)


def status(rc):
    return b"\n@@rc=%d\n" % rc


def split_status(answer):
    """(rc, output) of an answer, or None without its status line."""
    m = STATUS.search(answer)
    if not m:
        return None
    return int(m.group(1)), answer[:m.start()]


def serve_one(conn):
    with conn:
        conn.settimeout(60)
        cmd = recv_all(conn).decode(errors="replace")
        if cmd == QUIT:
            conn.sendall(status(0))
            return False
        try:
            p = subprocess.run(["sh", "-c", cmd], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL, timeout=300)
            out, rc = p.stdout, p.returncode
        except subprocess.TimeoutExpired as e:
            out, rc = (e.stdout or b"") + b"\nagent: timeout\n", 124
        conn.sendall(out + status(rc))
    return True


def main():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", PORT))
    s.listen(8)
    print("AGENT READY", flush=True)
    while True:
        conn, _ = s.accept()
        try:
            if not serve_one(conn):
                return
        except OSError as e:
            print("agent: %s" % e, file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
