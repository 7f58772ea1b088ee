#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# mkrootfs.sh OUT.qcow2: a Debian 12 server root file system (systemd,
# apache2, memcached, ...) for the QEMU guest, built with mmdebstrap from
# the host's own apt sources, as one ext4 file system without a partition
# table (the guest's /dev/nvme0n1) in a qcow2 image.
#
# napd goes in as the README tells a host's operator to install it: its
# package (make -C tools/power/napd deb), `apt install ./napd_*.deb`, the
# settings of napd.conf.local added to the shipped /etc/napd.conf, then
# `systemctl enable napd`.
#
# Rebuilt only when the package list, this script, the overlay, napd's
# settings or napd's sources change (their hash is kept in OUT.key), so
# make test always boots the napd of the tree.  With DEBIAN_KERNEL=1 it
# also installs Debian's linux-image-amd64 and initramfs-tools in the
# image and copies the kernel and the initrd the image made next to OUT
# (OUT-vmlinuz, OUT-initrd.img): a known-good kernel to check the image
# with.  memcached listens on every address (Debian's: 127.0.0.1 only),
# so that the host's clients reach it.
set -euo pipefail
out=$(realpath -m "$1")
here=$(cd "$(dirname "$0")" && pwd)
suite=${SUITE:-bookworm}
size=${ROOTFS_SIZE:-2G}
kernel=${DEBIAN_KERNEL:-0}
napd_src=$(cd "$here/../../../power/napd" && pwd)

pkgs=$(sed 's/#.*//' "$here/packages" | xargs)
[ "$kernel" = 1 ] && pkgs="$pkgs linux-image-amd64 initramfs-tools"
# napd's sources: what its deb target builds from (not its unit tests nor
# the objects of a local build).
napd_files() {
	cd "$napd_src" && find . -maxdepth 2 -type f \
		\( -name '*.[ch]' -o -name '*.in' -o -name napd.8 \
		   -o -name napd.conf.example -o -name Makefile -o -path './pkg/*' \) \
		! -path './tests/*' | LC_ALL=C sort
}
key=$( { echo "$suite $size $pkgs"; cat "$0" "$here/napd.conf.local";
	 (cd "$here/overlay" && find . -type f | LC_ALL=C sort | xargs cat);
	 napd_files | (cd "$napd_src" && xargs sha256sum); } |
	sha256sum | cut -c1-16)
if [ -f "$out" ] && [ "$(cat "$out.key" 2>/dev/null)" = "$key" ]; then
	echo "  ROOTFS  $out up to date ($key)"
	exit 0
fi
for t in mmdebstrap mkfs.ext4 qemu-img dpkg-deb; do
	command -v $t >/dev/null ||
		{ echo "mkrootfs: $t missing (make deps)" >&2; exit 1; }
done

# The host's apt sources for this suite (bookworm, -updates, -security),
# without third-party repositories; no mirror is named here.
srcs=()
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
	 /etc/apt/sources.list.d/*.sources; do
	[ -f "$f" ] && grep -qE "(^|[[:space:]])$suite(-updates|-security)?([[:space:]]|$)" "$f" &&
		srcs+=("$f")
done
[ ${#srcs[@]} -gt 0 ] ||
	{ echo "mkrootfs: no apt source for $suite in /etc/apt" >&2; exit 1; }

work=$(mktemp -d "${out%/*}/.mkrootfs.XXXXXX" 2>/dev/null ||
	{ mkdir -p "${out%/*}"; mktemp -d "${out%/*}/.mkrootfs.XXXXXX"; })
trap 'rm -rf "$work"' EXIT
root=$work/root
t0=$(date +%s)
echo "  NAPD    deb from $napd_src"
make -s -C "$napd_src" deb DEB_DIR="$work/napd" >"$work/napd.log" 2>&1 ||
	{ cat "$work/napd.log" >&2; echo "mkrootfs: napd's deb did not build" >&2; exit 1; }
deb=$(ls "$work"/napd/napd_*.deb)
echo "  MMDEBSTRAP $suite: $pkgs"
# Neither documentation nor translations: the image stays small.
mmdebstrap --variant=apt --mode=root --format=directory --quiet \
	--include="${pkgs// /,}" \
	--dpkgopt='path-exclude=/usr/share/man/*' \
	--dpkgopt='path-exclude=/usr/share/locale/*' \
	--dpkgopt='path-include=/usr/share/locale/locale.alias' \
	--dpkgopt='path-exclude=/usr/share/doc/*' \
	--dpkgopt='path-include=/usr/share/doc/*/copyright' \
	--dpkgopt='path-exclude=/usr/share/info/*' \
	--customize-hook="sync-in $here/overlay /" \
	--customize-hook='chroot "$1" systemctl enable systemd-networkd.service pseudosleep-report.service' \
	--customize-hook="copy-in $deb /root" \
	--customize-hook='chroot "$1" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q /root/'"${deb##*/}"' >/dev/null' \
	--customize-hook='rm "$1"/root/napd_*.deb' \
	--customize-hook="cat $here/napd.conf.local >> \"\$1/etc/napd.conf\"" \
	--customize-hook='chroot "$1" napd --check-config /etc/napd.conf' \
	--customize-hook='chroot "$1" systemctl enable napd.service' \
	--customize-hook='sed -i "s/^-l 127\.0\.0\.1$/-l 0.0.0.0/" "$1/etc/memcached.conf"' \
	--customize-hook='grep -qx -- "-l 0.0.0.0" "$1/etc/memcached.conf"' \
	--customize-hook='chroot "$1" systemctl disable systemd-networkd-wait-online.service' \
	--customize-hook='chroot "$1" systemctl mask serial-getty@hvc0.service' \
	--customize-hook='chroot "$1" passwd -d root' \
	--customize-hook='systemd-machine-id-setup --root="$1" >/dev/null' \
	"$suite" "$root" "${srcs[@]}"
if [ "$kernel" = 1 ]; then
	cp -L "$root/vmlinuz" "$out-vmlinuz"
	cp -L "$root/initrd.img" "$out-initrd.img"
fi
echo "  MKFS    ext4 $size, $(du -sh "$root" | cut -f1) of files"
mkfs.ext4 -q -F -L debian-root -d "$root" "$work/root.img" "$size"
qemu-img convert -O qcow2 "$work/root.img" "$out.tmp"
mv "$out.tmp" "$out"
echo "$key" > "$out.key"
echo "  ROOTFS  $out ($(du -h "$out" | cut -f1), $(( $(date +%s) - t0 )) s)"
