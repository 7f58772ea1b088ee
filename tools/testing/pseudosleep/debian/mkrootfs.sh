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
# Our kernel goes in the same way, when KERNEL_DEB names its linux-image
# package (make kernel-deb: the kernel's bindeb-pkg): `apt install
# ./linux-image-*.deb`, as the README tells a host's operator.  The kernel
# that package put in /boot is copied next to OUT (OUT-vmlinuz), and
# vm-run --rootfs OUT boots it: QEMU's direct kernel boot stands in for
# the boot loader.  It needs no initrd (the guest's drivers are built in).
# With DEBIAN_KERNEL=1 the image gets Debian's linux-image-amd64 and
# initramfs-tools instead, and OUT-vmlinuz, OUT-initrd.img are theirs: a
# known-good kernel to check the image with.
#
# Rebuilt only when the package list, this script, the overlay, napd's
# settings, napd's sources or the kernel package change (their hash is
# kept in OUT.key), so make test always boots the napd and the kernel of
# the tree.  memcached listens on every address (Debian's: 127.0.0.1 only),
# so that the host's clients reach it.
set -euo pipefail
out=$(realpath -m "$1")
here=$(cd "$(dirname "$0")" && pwd)
suite=${SUITE:-bookworm}
size=${ROOTFS_SIZE:-2G}
kernel=${DEBIAN_KERNEL:-0}
kdeb=${KERNEL_DEB:-}
napd_src=$(cd "$here/../../../power/napd" && pwd)

pkgs=$(sed 's/#.*//' "$here/packages" | xargs)
[ "$kernel" = 1 ] && pkgs="$pkgs linux-image-amd64 initramfs-tools"
if [ "$kernel" = 1 ] && [ -n "$kdeb" ]; then
	echo "mkrootfs: DEBIAN_KERNEL=1 and KERNEL_DEB: one kernel only" >&2; exit 2
fi
if [ -n "$kdeb" ]; then
	case ${kdeb##*/} in
	linux-image-*.deb) [ -f "$kdeb" ] ||
		{ echo "mkrootfs: KERNEL_DEB=$kdeb: no such file (make kernel-deb)" >&2; exit 1; } ;;
	*) echo "mkrootfs: KERNEL_DEB=$kdeb: not a linux-image-*.deb" >&2; exit 1 ;;
	esac
	kdeb=$(realpath "$kdeb")
fi
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
	 napd_files | (cd "$napd_src" && xargs sha256sum);
	 [ -z "$kdeb" ] || sha256sum < "$kdeb"; } |
	sha256sum | cut -c1-16)
if [ -f "$out" ] && [ "$(cat "$out.key" 2>/dev/null)" = "$key" ] &&
   { [ -z "$kdeb" ] || [ -f "$out-vmlinuz" ]; }; then
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
# Our kernel's package, installed like napd's; none with DEBIAN_KERNEL=1.
khooks=()
if [ -n "$kdeb" ]; then
	echo "  KERNEL  ${kdeb##*/}"
	khooks=(--customize-hook="copy-in $kdeb /root"
		--customize-hook='chroot "$1" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q /root/'"${kdeb##*/}"' >/dev/null'
		--customize-hook='rm "$1"/root/linux-image-*.deb')
fi
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
	"${khooks[@]}" \
	--customize-hook="cat $here/napd.conf.local >> \"\$1/etc/napd.conf\"" \
	--customize-hook='chroot "$1" napd --check-config /etc/napd.conf' \
	--customize-hook='chroot "$1" systemctl enable napd.service' \
	--customize-hook='sed -i "s/^-l 127\.0\.0\.1$/-l 0.0.0.0/" "$1/etc/memcached.conf"' \
	--customize-hook='grep -qx -- "-l 0.0.0.0" "$1/etc/memcached.conf"' \
	--customize-hook='chroot "$1" systemctl mask serial-getty@hvc0.service' \
	--customize-hook='chroot "$1" passwd -d root' \
	--customize-hook='systemd-machine-id-setup --root="$1" >/dev/null' \
	"$suite" "$root" "${srcs[@]}"
if [ "$kernel" = 1 ]; then
	cp -L "$root/vmlinuz" "$work/vmlinuz"
	cp -L "$root/initrd.img" "$work/initrd.img"
elif [ -n "$kdeb" ]; then
	# The one kernel in /boot: the package's (dpkg -L names it).
	pkg=$(dpkg-deb -f "$kdeb" Package)
	vmlinuz=$(chroot "$root" dpkg -L "$pkg" | grep '^/boot/vmlinuz-')
	[ "$(echo "$vmlinuz" | wc -l)" = 1 ] ||
		{ echo "mkrootfs: $pkg installed no single /boot/vmlinuz-*: $vmlinuz" >&2; exit 1; }
	cp "$root$vmlinuz" "$work/vmlinuz"
fi
echo "  MKFS    ext4 $size, $(du -sh "$root" | cut -f1) of files"
mkfs.ext4 -q -F -L debian-root -d "$root" "$work/root.img" "$size"
qemu-img convert -O qcow2 "$work/root.img" "$out.tmp"
mv "$out.tmp" "$out"
rm -f "$out-vmlinuz" "$out-initrd.img"
for f in vmlinuz initrd.img; do
	[ ! -f "$work/$f" ] || mv "$work/$f" "$out-$f"
done
echo "$key" > "$out.key"
echo "  ROOTFS  $out ($(du -h "$out" | cut -f1), $(( $(date +%s) - t0 )) s)"
