#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# keep-harness.sh: keep the harness's own channels to the guest (the 9p
# shares, the virtio console that carries vm-run's output) running
# through pseudo-sleep naps (power/nosleep).  virtio-9p cannot be restored
# after a suspend, and a request in flight then never ends; and a real
# server has none of them, so a benchmark of its devices leaves them out.
# The test initramfs's init runs it at boot; the Debian guest's harness
# runs it from vm-run's share.
for d in /sys/bus/virtio/drivers/9pnet_virtio/virtio* \
	 /sys/bus/virtio/drivers/virtio_console/virtio*; do
	[ -e "$d/power/nosleep" ] && echo 1 > "$d/power/nosleep"
done
true
