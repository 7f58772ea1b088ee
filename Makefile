# SPDX-License-Identifier: GPL-2.0
#
# pseudosleep: build a patched Linux 6.12 from Debian's linux-source-6.12,
# boot it under QEMU and run its tests.  `make help` lists the targets.

TOP        := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
BUILD_DIR  ?= $(TOP)/build
override BUILD_DIR := $(abspath $(BUILD_DIR))
TARBALL    ?= /usr/src/linux-source-6.12.tar.xz
KSRC       ?=
KDIR       := $(BUILD_DIR)/linux
KOBJ       := $(BUILD_DIR)/obj
BZIMAGE    := $(KOBJ)/arch/x86/boot/bzImage
INITRAMFS  := $(BUILD_DIR)/initramfs.cpio.gz
# DEBIAN_KERNEL=1: the image with Debian's own kernel installed, beside it.
ROOTFS     ?= $(BUILD_DIR)/debian/rootfs$(if $(filter 1,$(DEBIAN_KERNEL)),-debkernel).qcow2
JOBS       ?= $(shell nproc)
# The guest's fragments; the test kernel adds the debug and test ones.
GUEST_CONFIGS := configs/qemu-guest.config configs/pseudosleep.config \
              configs/pollist.config configs/rcu-nocb.config
# The test kernel also boots the Debian server guest (make rootfs).
CONFIGS    ?= $(GUEST_CONFIGS) configs/debug.config configs/tests.config \
	      configs/debian-guest.config $(EXTRA_CONFIGS)
T          := $(TOP)/tools/testing/pseudosleep
SELFTESTS  := pseudosleep pollist
STAMPS     := $(BUILD_DIR)/.stamps

# The trees of new files that are copied over the kernel source.
OVERLAY    := kernel drivers arch net include Documentation tools

# Everything the tests and the demo need from Debian.
DEPS := linux-source-6.12 qemu-system-x86 busybox-static flex bison bc cpio \
	libelf-dev libssl-dev ethtool iperf3 apache2-utils memcached \
	libmemcached-tools curl gnuplot-nox sparse xz-utils python3 git \
	make gcc libc6-dev rsync iproute2 iputils-ping kmod wireguard-tools \
	dpkg-dev debhelper systemd mmdebstrap qemu-utils e2fsprogs \
	python3-prometheus-client python3-pytest haproxy python3-matplotlib \
	wireguard-go acpica-tools

export BUILD_DIR KDIR KOBJ BZIMAGE INITRAMFS ROOTFS DEBIAN_KERNEL

.PHONY: all help deps kernel source config initramfs selftests test demo \
	patches checkpatch w1 bench stress clean distclean napd overlay napd-deb \
	rootfs debian-shell patchset check-series-quick check-series deb \
	kernel-deb

all: kernel

help:
	@echo "pseudosleep: patched Linux 6.12 + QEMU harness"
	@echo
	@echo "  make deps        install the Debian packages (apt-get, needs root)"
	@echo "  make / kernel    extract, patch, overlay, configure, build bzImage"
	@echo "  make initramfs   busybox initramfs with guest tools and kselftests"
	@echo "  make test        boot the kernel and run every test (pytest; PYTEST_ARGS=\"-k NAME\")"
	@echo "  make demo        build, boot and show a nap woken by a host request"
	@echo "  make bench       benchmarks on a non-debug kernel in build-bench/"
	@echo "                   (QUICK=1: short smoke run on the test kernel)"
	@echo "                   (ONLY=debian: the Debian guest awake vs napping, results/debian/)"
	@echo "  make stress      reliability suite: naps with requests in every phase,"
	@echo "                   noise, long nap, hotplug, fuzzing; results/stress/"
	@echo "                   (NAPS=n, SMP=\"2 4\", SHORT=1, DEBUG=1: KASAN/UBSAN kernel"
	@echo "                   in build-debug/)"
	@echo "  make patches     regenerate patches/ from the commits in $(KDIR)"
	@echo "  make checkpatch  scripts/checkpatch.pl --strict on our C files and patches"
	@echo "  make patchset    the git format-patch series (stable fix, PM speedups, pseudo-sleep, pollist): $(BUILD_DIR)/patchset/"
	@echo "  make check-series-quick  they apply to pristine and give the tree make"
	@echo "                   builds; checkpatch --strict on them, kernel-doc and"
	@echo "                   sparse on our kernel files (in make test)"
	@echo "  make check-series  build every prefix of the series (hours; not in CI)"
	@echo "  make deb         linux-image/linux-headers .debs (bindeb-pkg) with"
	@echo "                   configs/production.config: $(DEB_DIR)/"
	@echo "                   (DEB_BASE=config: the base, default this host's)"
	@echo "  make w1          build our C files with W=1"
	@echo "  make napd-deb    napd's Debian package: $(BUILD_DIR)/napd_<version>_<arch>.deb"
	@echo "  make kernel-deb  the test kernel's linux-image .deb (bindeb-pkg): $(BUILD_DIR)/"
	@echo "  make rootfs      Debian 12 server image (mmdebstrap) with that package"
	@echo "                   installed: $(ROOTFS)"
	@echo "                   (DEBIAN_KERNEL=1: with Debian's kernel and initrd)"
	@echo "  make debian-shell  boot it (NVMe root, AHCI, xHCI, e1000e on a bridge),"
	@echo "                   serial console here; needs configs/debian-guest.config"
	@echo "                   in the kernel; boots the image's kernel (KERNEL=, INITRD="
	@echo "                   boot another one;"
	@echo "                   DEBIAN_KERNEL=1: the image with Debian's kernel;"
	@echo "                   NAPD=0: napd masked, the guest stays awake)"
	@echo "  make clean       remove $(BUILD_DIR)"
	@echo
	@echo "  BUILD_DIR=dir    build directory (default: build/)"
	@echo "  KSRC=/path       use another 6.12.y tree instead of $(TARBALL)"
	@echo "  EXTRA_CONFIGS=configs/debug.config  add config fragments"
	@echo "  W=1              kernel extra warnings"

deps:
	@missing=""; for p in $(DEPS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then echo "deps: all installed"; else \
		echo "deps: installing$$missing"; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get update -q && apt-get install -y -q --no-install-recommends $$missing; \
	fi

# --- kernel source: pristine tree in git, hook patches as commits ---------
$(STAMPS)/source:
	@mkdir -p $(STAMPS)
	@rm -rf $(KDIR) && mkdir -p $(KDIR)
	@if [ -n "$(KSRC)" ]; then \
		echo "  SOURCE  $(KSRC)"; \
		rsync -a --exclude .git $(KSRC)/ $(KDIR)/; \
	else \
		test -r $(TARBALL) || { echo "error: $(TARBALL) missing: run 'make deps'" >&2; exit 1; }; \
		echo "  EXTRACT $(TARBALL)"; \
		tar -xf $(TARBALL) -C $(KDIR) --strip-components=1; \
	fi
	@echo "  GIT     pristine baseline"
	@cd $(KDIR) && git init -q -b upstream && \
		git config user.name "pseudosleep developers" && \
		git config user.email "kernel@pseudosleep.invalid" && \
		git config core.autocrlf false && \
		git add -A -f && git commit -q -m "pristine $$(make -s kernelversion)" && \
		git tag pristine
	@touch $@

# Re-apply the series when it or any patch changes.  Files whose patched
# content did not change keep their mtime, so the rebuild stays incremental.
$(STAMPS)/patched: $(STAMPS)/source patches/series $(wildcard patches/*.patch)
	@$(T)/apply-series $(TOP)/patches $(KDIR)
	@touch $@

source: $(STAMPS)/patched

# Copy our new files over the tree; only files whose content changed are
# rewritten, so make sees exactly what changed.
overlay: $(STAMPS)/patched
	@$(T)/overlay $(TOP) $(KDIR) $(OVERLAY)

# The list of fragments is a prerequisite too: rewrite the stamp only when
# it changes, so adding a fragment reconfigures and nothing else does.
CONFIGS_STAMP := $(STAMPS)/configs
ifneq ($(filter-out help deps clean distclean,$(or $(MAKECMDGOALS),all)),)
$(shell mkdir -p $(STAMPS); echo "$(CONFIGS)" | cmp -s - $(CONFIGS_STAMP) || \
	echo "$(CONFIGS)" > $(CONFIGS_STAMP))
endif

$(KOBJ)/.config: $(STAMPS)/patched $(CONFIGS) $(CONFIGS_STAMP)
	@mkdir -p $(KOBJ)
	@echo "  CONFIG  allnoconfig + $(notdir $(CONFIGS))"
	@$(MAKE) -s overlay
	@cd $(KDIR) && KCONFIG_CONFIG=$(KOBJ)/.config scripts/kconfig/merge_config.sh -n -O $(KOBJ) \
		$(addprefix $(TOP)/,$(CONFIGS)) > $(KOBJ)/merge_config.log 2>&1 || \
		{ cat $(KOBJ)/merge_config.log; exit 1; }
	@$(T)/check-config $(KOBJ)/.config $(addprefix $(TOP)/,$(CONFIGS))

config: $(KOBJ)/.config

kernel: $(KOBJ)/.config
	@$(MAKE) -s overlay
	@if [ -f $(BZIMAGE) ] && [ -z "$$(find $(KDIR) $(KOBJ)/.config -newer $(BZIMAGE) \
		-not -path '*/.git/*' -type f -print -quit)" ]; then \
		echo "  UPTODATE $(BZIMAGE)"; \
	else \
		echo "  BUILD   bzImage (-j$(JOBS))"; \
		$(MAKE) -C $(KDIR) O=$(KOBJ) -j$(JOBS) LOCALVERSION= $(if $(W),W=$(W)) bzImage || exit 1; \
	fi
	@echo "  KERNEL  $$(cat $(KOBJ)/include/config/kernel.release) $(BZIMAGE)"

$(BZIMAGE):
	@$(MAKE) -s kernel

# --- regenerate the hook patches from the commits on top of `pristine` -----
# Never re-applies the series first: that would drop unexported commits.
patches: $(STAMPS)/source
	@$(T)/export-series $(KDIR) $(TOP)/patches
	@touch $(STAMPS)/patched

checkpatch: $(STAMPS)/patched
	@$(T)/run-checkpatch $(TOP) $(KDIR)

# --- the submitted series: patches/ and the overlay as format-patch series ---
# patches/patchset/map assigns every overlay file to a patch; only the
# pristine commit of $(KDIR) is used, in a scratch work tree.
PATCHSET   := $(BUILD_DIR)/patchset
patchset: $(STAMPS)/source
	@$(T)/make-patchset $(TOP) $(KDIR) $(PATCHSET) $(OVERLAY)

# The series applies to pristine and is the tree make builds; checkpatch
# finds nothing beyond patches/patchset/checkpatch-known; kernel-doc -Wall
# and sparse (C=2, on our objects only, in the kernel build: make kernel
# first) find nothing in our new kernel files.  No kernel build.
check-series-quick: patchset
	@$(T)/check-patchset $(TOP) $(KDIR) $(PATCHSET) $(OVERLAY)
	@$(T)/run-checkpatch --series $(PATCHSET) $(KDIR) > $(PATCHSET)/checkpatch.log; \
		$(T)/checkpatch-known $(TOP)/patches/patchset/checkpatch-known \
		$(PATCHSET)/checkpatch.log
	@$(T)/check-kernel-src $(TOP) $(KDIR) $(KOBJ)

# Every prefix of the series builds (bisectable) with the production
# config: hours on 2 cores, not in CI.  CHECK_SERIES_DIR holds its tree.
CHECK_SERIES_DIR ?= $(BUILD_DIR)/check-series
check-series: patchset
	@$(T)/build-prefixes $(KDIR) $(PATCHSET) $(CHECK_SERIES_DIR) \
		$(TOP)/configs/production.config $(JOBS)

# W=1 for our own C files only (a tree-wide W=1 rebuilds everything and
# reports upstream's warnings); the next plain make rebuilds these objects.
OUR_OBJS = $(patsubst %.c,%.o,$(shell git -C $(TOP) ls-files -- kernel drivers arch net | grep '\.c$$'))
w1: $(KOBJ)/.config
	@$(MAKE) -s overlay
	@$(MAKE) -C $(KDIR) O=$(KOBJ) LOCALVERSION= W=1 $(OUR_OBJS) 2>&1 | tee $(BUILD_DIR)/w1.log | \
		grep -E 'warning|error' && exit 1 || echo "  W=1     clean: $(OUR_OBJS)"

# --- the host kernel as Debian packages ---------------------------------------
# bindeb-pkg in its own object directory; the .debs land in $(DEB_DIR).  The
# base config is this host's kernel's, as a distribution built it, else
# x86_64_defconfig; configs/production.config goes on top.
DEB_DIR    ?= $(BUILD_DIR)/deb
DEB_OBJ    := $(DEB_DIR)/obj
DEB_BASE   ?= $(wildcard /boot/config-$(shell uname -r))
deb: $(STAMPS)/patched
	@$(MAKE) -s overlay
	@$(T)/deb-config $(KDIR) $(DEB_OBJ) $(TOP)/configs/production.config $(DEB_BASE)
	@$(T)/kernel-deb $(KDIR) $(DEB_OBJ) -f >/dev/null
	@ls -l $(DEB_DIR)/*.deb

# --- guest userspace --------------------------------------------------------
napd:
	@$(MAKE) -s -C tools/power/napd

# napd's Debian package for a host (the kernel side is not packaged yet).
napd-deb:
	@$(MAKE) -s -C tools/power/napd deb DEB_DIR="$(BUILD_DIR)"

selftests: $(STAMPS)/patched
	@$(MAKE) -s overlay
	@mkdir -p $(BUILD_DIR)/selftests
	@for t in $(SELFTESTS); do \
		$(MAKE) -s -C $(KDIR)/tools/testing/selftests/$$t \
			OUTPUT=$(BUILD_DIR)/selftests || exit 1; \
	done

initramfs: selftests napd
	@$(T)/mkinitramfs $(INITRAMFS)

# The Debian 12 guest: a root file system from Debian's packages, rebuilt
# only when its package list, script or files change (mkrootfs.sh keeps
# their hash); our kernel boots it with configs/debian-guest.config.
# The test kernel goes into the image as a host gets it: its linux-image
# package (kernel-deb, bindeb-pkg), installed with apt; vm-run boots the
# kernel that package put in the image's /boot.
# kernel-deb prints the package's path (and packages only a newer kernel).
rootfs: $(if $(filter 1,$(DEBIAN_KERNEL)),,kernel)
	@$(if $(filter 1,$(DEBIAN_KERNEL)),,deb=$$($(T)/kernel-deb $(KDIR) $(KOBJ)) && \
		KERNEL_DEB=$$deb) $(T)/debian/mkrootfs.sh $(ROOTFS)

kernel-deb: kernel
	@$(T)/kernel-deb $(KDIR) $(KOBJ) >/dev/null

DEBIAN_SHELL_ARGS = --rootfs $(ROOTFS) --shell --mem 2G --smp 2 \
	--nic e1000e --net bridge --netns debian-shell \
	$(if $(filter 0,$(NAPD)),--append systemd.mask=napd.service) \
	$(if $(KERNEL),--kernel $(KERNEL)) $(if $(INITRD),--initrd $(INITRD))
debian-shell: rootfs
	@$(T)/vm-run $(DEBIAN_SHELL_ARGS)

# --- the two commands of the README -----------------------------------------
# pytest from Debian's python3-pytest (pytest-3 runs /usr/bin/python3, whatever
# python3 comes first in PATH); PYTEST_ARGS="-k NAME" runs some tests only,
# see tools/testing/pseudosleep/README.
PYTEST     ?= pytest-3
test: kernel initramfs kernel-deb
	@$(PYTEST) $(T)/tests $(PYTEST_ARGS)

demo: kernel initramfs
	@$(T)/demo

# The full benchmark measures a kernel without the debug options (lockdep
# alone multiplies lock costs under TCG) in its own build directory; the
# QUICK=1 smoke test reuses the test kernel.
BENCH_DIR ?= $(TOP)/build-bench
# configs/debian-guest.config: bench --only debian boots the Debian guest.
BENCH_CONFIGS := $(GUEST_CONFIGS) configs/debian-guest.config
# ONLY="debian wake": bench --only debian --only wake.
BENCH_ARGS += $(foreach o,$(ONLY),--only $(o))
ifeq ($(QUICK),)
bench:
	@$(MAKE) -s BUILD_DIR=$(BENCH_DIR) CONFIGS="$(BENCH_CONFIGS)" kernel initramfs kernel-deb
	@BUILD_DIR=$(BENCH_DIR) $(T)/bench $(BENCH_ARGS)
else
bench: kernel initramfs
	@$(T)/bench --quick --out $(BUILD_DIR)/bench-quick $(BENCH_ARGS)
endif

# The reliability suite.  DEBUG=1 builds and uses a sanitizer kernel (the
# test configs plus configs/sanitizers.config) in its own directory.
STRESS_DEBUG_DIR ?= $(TOP)/build-debug
STRESS_ARGS = $(if $(NAPS),--naps $(NAPS)) $(if $(SMP),--smp "$(SMP)") \
	$(if $(SHORT),--short)
ifeq ($(DEBUG),)
stress: kernel initramfs
	@$(T)/stress $(STRESS_ARGS)
else
stress:
	@$(MAKE) -s BUILD_DIR=$(STRESS_DEBUG_DIR) \
		CONFIGS="$(CONFIGS) configs/sanitizers.config" kernel initramfs
	@BUILD_DIR=$(STRESS_DEBUG_DIR) $(T)/stress \
		$(if $(SHORT),--short $(if $(NAPS),--naps $(NAPS)),--naps $(or $(NAPS),1000)) \
		$(if $(SMP),--smp "$(SMP)") --out $(TOP)/results/stress/debug
endif

clean:
	rm -rf $(BUILD_DIR)

distclean: clean
	@$(MAKE) -s -C tools/power/napd clean
