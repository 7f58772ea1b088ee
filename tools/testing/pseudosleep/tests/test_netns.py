# SPDX-License-Identifier: GPL-2.0
"""netns.py: a namespace is entered only once `ip netns add` has mounted
it, and a half-made or half-deleted one is told apart from a bad one."""

import os
import subprocess

import pytest

import netns

ORDER = 0
NAME = "ps-test-netns-%d" % os.getpid()
pytestmark = pytest.mark.skipif(not netns.bridge_usable()[0],
                                reason="network namespaces: " +
                                netns.bridge_usable()[1])


@pytest.fixture
def ns_path():
    path = "/var/run/netns/" + NAME
    yield path
    netns.remove(NAME)
    if os.path.exists(path):
        os.unlink(path)


def test_netns_ready_only_when_mounted(ns_path):
    """netns: a bare file where `ip netns` puts a namespace is not ready,
    entering it raises SetnsError; once added it is ready and entered."""
    assert not netns.ready(NAME)
    os.makedirs(os.path.dirname(ns_path), exist_ok=True)
    open(ns_path, "w").close()      # what `ip netns add` makes first
    assert netns.exists(NAME) and not netns.ready(NAME)
    with pytest.raises(netns.SetnsError):
        with netns.inside(NAME):
            pass
    os.unlink(ns_path)
    subprocess.run(["ip", "netns", "add", NAME], check=True)
    assert netns.ready(NAME)
    with netns.inside(NAME):
        with open("/proc/thread-self/net/dev") as f:
            devs = [line.split(":")[0].strip() for line in f if ":" in line]
    # A new namespace: loopback (and the tunnels' fallback devices, when
    # their modules are loaded), none of the host's devices.
    assert "lo" in devs and not set(devs) & {"eth0", "br0", "tap0"}
    netns.remove(NAME)
    assert not netns.ready(NAME)
    with pytest.raises(netns.SetnsError):
        with netns.inside(NAME):
            pass
