// SPDX-License-Identifier: GPL-2.0
/*
 * Host-side unit tests for napd, KTAP output, no framework.
 *
 *   tests/test_napd [path/to/napd]
 *
 * With the napd binary given, also runs it against a fake sysfs/procfs
 * tree built in a temporary directory (napping there just writes "mem"
 * into a plain file).  The last line is "N passed, N failed"; the exit
 * status is non-zero if anything failed.
 */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/epoll.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/tcp.h>

#include "alarm.h"
#include "backoff.h"
#include "checks.h"
#include "compiler.h"
#include "ctl.h"
#include "diag.h"
#include "inhibit.h"
#include "notify.h"
#include "irqs.h"
#include "opts.h"
#include "preflight.h"
#include "procnet.h"
#include "devpolicy.h"
#include "devtiming.h"
#include "setup.h"
#include "stats.h"
#include "sysfs.h"
#include "timers.h"
#include "watch.h"
#include "wcount.h"

static bool t_failed;
static const char *t_skip;
static const char *napd_bin;
static char tmp_root[PATH_MAX];
static char state_dir[PATH_MAX];	/* the latest new_tree()'s */

#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			printf("# %s:%d: CHECK(%s) failed\n", __FILE__,	\
			       __LINE__, #cond);			\
			t_failed = true;				\
		}							\
	} while (0)

#define CHECK_STR(a, b)							\
	do {								\
		const char *_a = (a), *_b = (b);			\
		if (strcmp(_a, _b)) {					\
			printf("# %s:%d: '%s' != '%s'\n", __FILE__,	\
			       __LINE__, _a, _b);			\
			t_failed = true;				\
		}							\
	} while (0)

/* @b is in @a; both printed if not. */
#define CHECK_HAS(a, b)							\
	do {								\
		const char *_a = (a), *_b = (b);			\
		if (!strstr(_a, _b)) {					\
			printf("# %s:%d: '%s' not in '%s'\n", __FILE__,	\
			       __LINE__, _b, _a);			\
			t_failed = true;				\
		}							\
	} while (0)

/* @what is in the output file @out (out_has() prints it if not). */
#define CHECK_OUT(out, what)	CHECK(out_has(out, what))

/* ---- helpers for the fake tree ---- */

static void mkdir_p(const char *fmt, ...)
{
	char path[PATH_MAX], *p;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	for (p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	mkdir(path, 0755);
}

static void put(const char *content, const char *fmt, ...)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8], *slash;
	va_list ap;
	FILE *f;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	slash = strrchr(path, '/');
	*slash = '\0';
	mkdir_p("%s", path);
	*slash = '/';
	/* Whole or not at all: a running napd may be reading it. */
	path_fmt(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f) {
		printf("# cannot create %s\n", path);
		t_failed = true;
		return;
	}
	fputs(content, f);
	fclose(f);
	if (rename(tmp, path)) {
		printf("# cannot rename to %s\n", path);
		t_failed = true;
	}
}

static void link_to(const char *target, const char *fmt, ...)
{
	char path[PATH_MAX], *slash;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	slash = strrchr(path, '/');
	*slash = '\0';
	mkdir_p("%s", path);
	*slash = '/';
	if (symlink(target, path)) {
		printf("# cannot link %s\n", path);
		t_failed = true;
	}
}

/* Contents of a fake file, newline stripped, "<missing>" if absent. */
static const char *get(const char *fmt, ...)
{
	static char buf[4][512];
	static int slot;
	char path[PATH_MAX], *b = buf[slot++ % 4];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	if (sysfs_read(path, b, 512) < 0)
		snprintf(b, sizeof(buf[0]), "<missing>");
	return b;
}

static void rm_rf(const char *path)
{
	char cmd[PATH_MAX + 16];

	path_fmt(cmd, sizeof(cmd), "rm -rf '%s'", path);
	if (system(cmd))
		printf("# cannot remove %s\n", path);
}

/* A fresh tree under tmp_root/NAME; returns its path. */
static const char *new_tree(const char *name)
{
	static char dir[PATH_MAX];

	path_fmt(dir, sizeof(dir), "%s/%s", tmp_root, name);
	rm_rf(dir);
	mkdir_p("%s", dir);
	/* napd creates it, and never uses the real /run/napd here */
	path_fmt(state_dir, sizeof(state_dir), "%s/state", dir);
	return dir;
}

static const char tcp_idle[] = {
"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
"   0: 00000000:0050 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1149 1 000000005f451c5a 100 0 0 10 0\n"
"   1: 0F02000A:0050 0202000A:C350 06 00000000:00000000 03:000016A8 00000000     0        0 0 3 00000000a1b2c3d4\n"
};

static const char tcp_busy[] = {
"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
"   0: 00000000:0050 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1149 1 000000005f451c5a 100 0 0 10 0\n"
"   1: 0F02000A:0050 0202000A:C350 01 00000000:00000000 00:00000000 00000000     0        0 2210 1 00000000a1b2c3d4 20 4 30 10 -1\n"
};

static const char tcp6_idle[] = {
"  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
"   0: 00000000000000000000000000000000:2BCB 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 3001 1 0000000011223344 100 0 0 10 0\n"
};

/* As the kernel prints it: blanks after the last CPU too (\x20: one). */
static const char interrupts_virtio[] =
"           CPU0       CPU1       CPU2       CPU3      \x20\n"
"  0:         35          0          0          0   IO-APIC   2-edge      timer\n"
"  4:          0          0        412          0   IO-APIC   4-edge      ttyS0\n"
" 11:          0          0          0          0   IO-APIC  11-fasteoi   virtio9, uhci_hcd:usb1\n"
" 24:          0          0          0          0  PCI-MSIX-0000:00:02.0   0-edge      virtio0-config\n"
" 25:          0         12          0          3  PCI-MSIX-0000:00:02.0   1-edge      virtio0-input.0\n"
" 26:          1          0          0          0  PCI-MSIX-0000:00:02.0   2-edge      virtio0-output.0\n"
" 27:          0          0          0          0  PCI-MSIX-0000:00:03.0   0-edge      virtio1-config\n"
" 40:          0          0          0          0  PCI-MSIX-0000:00:0a.0   0-edge      virtio10-input.0\n"
" 41:          9          0          0          0  PCI-MSI-0000:00:19.0   0-edge      eth1\n"
" 43:          0          0          0          0  PCI-MSI-0000:00:1a.0   0-edge      myeth1\n"
"NMI:          0          0          0          0   Non-maskable interrupts\n"
"LOC:      12345      23456      34567      45678   Local timer interrupts\n"
"ERR:          0\n"
"MIS:          0\n";

/* procs_running 1: napd itself */
static const char proc_stat_idle[] =
"cpu  1000 20 300 50000 40 0 10 0 0 0\n"
"cpu0 500 10 150 25000 20 0 5 0 0 0\n"
"cpu1 500 10 150 25000 20 0 5 0 0 0\n"
"intr 12345 0 0\n"
"ctxt 999\n"
"btime 1700000000\n"
"processes 300\n"
"procs_running 1\n"
"procs_blocked 0\n"
"softirq 1 0 0\n";

static const char diskstats_idle[] =
"   8       0 sda 1000 10 20000 300 500 20 8000 700 0 900 1000 0 0 0 0 30 5\n"
"   8       1 sda1 900 10 18000 280 500 20 8000 700 0 880 980 0 0 0 0 0 0\n"
"   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0\n";

/*
 * A virtio-net NIC in the fake tree: PCI function @pci with MSI-X vectors
 * @irq to @irq + 2, virtio device virtio@vio and netdev @dev, which has
 * received @rx packets so far.
 */
static void fake_virtio_nic(const char *t, const char *pci, int vio,
			    const char *dev, int irq, const char *rx)
{
	char d[PATH_MAX], target[PATH_MAX];
	int i;

	snprintf(d, sizeof(d), "%s/sys/devices/pci0000:00/%s", t, pci);
	for (i = 0; i < 3; i++)
		mkdir_p("%s/msi_irqs/%d", d, irq + i);
	put("0\n", "%s/virtio%d/power/nosleep", d, vio);
	put(rx, "%s/virtio%d/net/%s/statistics/rx_packets", d, vio, dev);
	put("up\n", "%s/virtio%d/net/%s/operstate", d, vio, dev);
	snprintf(target, sizeof(target), "../../../virtio%d", vio);
	link_to(target, "%s/virtio%d/net/%s/device", d, vio, dev);
	snprintf(target, sizeof(target),
		 "../../devices/pci0000:00/%s/virtio%d/net/%s", pci, vio, dev);
	link_to(target, "%s/sys/class/net/%s", t, dev);
}

/*
 * A virtio-net NIC behind PCI with MSI-X, a legacy-IRQ NIC, a NIC whose
 * IRQs are only in /proc/interrupts, and a serial port.
 */
static void build_tree(const char *t, bool pseudo)
{
	put("[s2idle] deep pseudo\n", "%s/sys/power/mem_sleep", t);
	if (!pseudo)
		put("[s2idle] deep\n", "%s/sys/power/mem_sleep", t);
	put("freeze mem disk\n", "%s/sys/power/state", t);
	put("7\n", "%s/sys/power/wakeup_count", t);
	put("\n", "%s/sys/power/wake_irq", t);
	put("25\n", "%s/sys/power/pm_wakeup_irq", t);
	put("1\n", "%s/sys/power/sync_on_suspend", t);
	if (pseudo) {
		put("0\n", "%s/sys/power/pseudosleep/naps", t);
		put("1000000\n", "%s/sys/power/pseudosleep/last_nap_ns", t);
		put("4000\n", "%s/sys/power/pseudosleep/wake_latency_ns", t);
	}

	/* eth0: virtio0 on PCI 0000:00:02.0 with MSI-X 24-26 */
	fake_virtio_nic(t, "0000:00:02.0", 0, "eth0", 24, "1000\n");
	put("11\n", "%s/sys/devices/pci0000:00/0000:00:02.0/irq", t);
	put("0\n", "%s/sys/devices/pci0000:00/0000:00:02.0/power/nosleep", t);

	/* eth1: legacy PCI NIC, irq file only (empty msi_irqs) */
	mkdir_p("%s/sys/devices/pci0000:00/0000:00:03.0/msi_irqs", t);
	put("10\n", "%s/sys/devices/pci0000:00/0000:00:03.0/irq", t);
	put("0\n", "%s/sys/devices/pci0000:00/0000:00:03.0/power/nosleep", t);
	put("5\n", "%s/sys/devices/pci0000:00/0000:00:03.0/net/eth1/statistics/rx_packets", t);
	link_to("../../../0000:00:03.0",
		"%s/sys/devices/pci0000:00/0000:00:03.0/net/eth1/device", t);
	link_to("../../devices/pci0000:00/0000:00:03.0/net/eth1", "%s/sys/class/net/eth1", t);

	/* eth2: virtio1 on a platform bus: only /proc/interrupts knows */
	put("0\n", "%s/sys/devices/platform/virtio-mmio.0/virtio1/power/nosleep", t);
	put("0\n",
	    "%s/sys/devices/platform/virtio-mmio.0/virtio1/net/eth2/statistics/rx_packets",
	    t);
	link_to("../../../virtio1",
		"%s/sys/devices/platform/virtio-mmio.0/virtio1/net/eth2/device", t);
	link_to("../../devices/platform/virtio-mmio.0/virtio1/net/eth2",
		"%s/sys/class/net/eth2", t);

	/* lo: no device at all */
	put("0\n", "%s/sys/devices/virtual/net/lo/statistics/rx_packets", t);
	link_to("../../devices/virtual/net/lo", "%s/sys/class/net/lo", t);

	/* ttyS0 for --keep-awake */
	put("0\n", "%s/sys/devices/platform/serial8250/power/nosleep", t);
	mkdir_p("%s/sys/devices/platform/serial8250/tty/ttyS0", t);
	link_to("../../../serial8250", "%s/sys/devices/platform/serial8250/tty/ttyS0/device", t);
	link_to("../../devices/platform/serial8250/tty/ttyS0", "%s/sys/class/tty/ttyS0", t);

	put(interrupts_virtio, "%s/proc/interrupts", t);
	put(tcp_idle, "%s/proc/net/tcp", t);
	put(tcp6_idle, "%s/proc/net/tcp6", t);
	put(proc_stat_idle, "%s/proc/stat", t);
	put(diskstats_idle, "%s/proc/diskstats", t);
	mkdir_p("%s/proc/1", t);
	put("1 (init) S 0 1 1 0 -1 4194560 1 0 0 0\n", "%s/proc/1/stat", t);
	put("init\n", "%s/proc/1/comm", t);
}

#define NOSLEEP_ETH0 "sys/devices/pci0000:00/0000:00:02.0/virtio0/power/nosleep"
#define NOSLEEP_TTY "sys/devices/platform/serial8250/power/nosleep"

static int parse(struct napd_opts *o, char *err, size_t errlen, ...)
{
	char *argv[64];
	int argc = 0;
	va_list ap;

	argv[argc++] = "napd";
	va_start(ap, errlen);
	while ((argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	return napd_parse_opts(o, argc, argv, err, errlen);
}

/* Silence stdout (dry-run chatter) so the KTAP stream stays clean. */
static int quiet_begin(void)
{
	int saved, null;

	fflush(stdout);
	saved = dup(1);
	null = open("/dev/null", O_WRONLY);
	dup2(null, 1);
	close(null);
	return saved;
}

static void quiet_end(int saved)
{
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
}

/* ---- option parsing ---- */

static void test_opts_defaults(void)
{
	struct napd_opts o;
	char err[256];

	CHECK(!parse(&o, err, sizeof(err), "--port", "80", "--wake-dev",
		     "eth0", NULL));
	CHECK(o.nr_ports == 1 && o.ports[0] == 80);
	CHECK(o.nr_wake_devs == 1);
	CHECK_STR(o.wake_devs[0], "eth0");
	CHECK(o.idle_ms == 5);
	CHECK(o.mode == NAPD_MODE_PSEUDO);
	CHECK(!o.dry_run && !o.stats && !o.log && !o.max_naps);
	CHECK(o.nr_keep == 0);
	CHECK_STR(o.sysfs_root, "/sys");
	CHECK_STR(o.proc_root, "/proc");
}

static void test_opts_full(void)
{
	struct napd_opts o;
	char err[256];

	CHECK(!parse(&o, err, sizeof(err), "--port", "80", "--port=11211",
		     "--port", "80", "--idle-ms", "3600000", "--wake-dev=eth1",
		     "--mode", "deep", "--keep-awake", "ttyS0",
		     "--keep-awake", "/sys/devices/platform/serial8250",
		     "--dry-run", "--stats", "--log", "--max-naps", "3",
		     "--sysfs-root", "/tmp/s", "--proc-root=/tmp/p", NULL));
	CHECK(o.nr_ports == 2);	/* the repeated 80 is folded */
	CHECK(o.ports[0] == 80 && o.ports[1] == 11211);
	CHECK(o.idle_ms == 3600000);
	CHECK(o.nr_wake_devs == 1);
	CHECK_STR(o.wake_devs[0], "eth1");
	CHECK(o.mode == NAPD_MODE_DEEP);
	CHECK(o.nr_keep == 2);
	CHECK_STR(o.keep_awake[1], "/sys/devices/platform/serial8250");
	CHECK(o.dry_run && o.stats && o.log && o.max_naps == 3);
	CHECK_STR(o.sysfs_root, "/tmp/s");
	CHECK_STR(o.proc_root, "/tmp/p");

	CHECK(!parse(&o, err, sizeof(err), "--port", "1", "--port", "65535",
		     "--idle-ms", "1", "--wake-dev", "eth0", "--mode",
		     "s2idle", NULL));
	CHECK(o.nr_ports == 2 && o.ports[1] == 65535 && o.idle_ms == 1);
	CHECK(o.mode == NAPD_MODE_S2IDLE);
	CHECK(!parse(&o, err, sizeof(err), "--help", NULL) && o.help);
	CHECK(!parse(&o, err, sizeof(err), "--version", NULL) && o.version);
	CHECK(!parse(&o, err, sizeof(err), "-h", NULL) && o.help);
}

static void test_opts_bad(void)
{
	static const char *const bad[][8] = {
		{ NULL },
		{ "--wake-dev", "eth0", NULL },
		{ "--port", "80", NULL },
		{ "--port", "0", "--wake-dev", "eth0", NULL },
		{ "--port", "65536", "--wake-dev", "eth0", NULL },
		{ "--port", "99999999999999999999999", "--wake-dev", "eth0", NULL },
		{ "--port", "abc", "--wake-dev", "eth0", NULL },
		{ "--port", "", "--wake-dev", "eth0", NULL },
		{ "--port", "-1", "--wake-dev", "eth0", NULL },
		{ "--port", "+80", "--wake-dev", "eth0", NULL },
		{ "--port", " 80", "--wake-dev", "eth0", NULL },
		{ "--port", "0x50", "--wake-dev", "eth0", NULL },
		{ "--port", "80abc", "--wake-dev", "eth0", NULL },
		{ "--port", "80", "--wake-dev", "eth0", "--idle-ms", "0", NULL },
		{ "--port", "80", "--wake-dev", "eth0", "--idle-ms", "3600001", NULL },
		{ "--port", "80", "--wake-dev", "eth0", "--idle-ms", "1.5", NULL },
		{ "--port", "80", "--wake-dev", "eth0", "--mode", "sleep", NULL },
		{ "--port", "80", "--wake-dev", "eth0", "--mode", NULL },
		{ "--port", "80", "--wake-dev", NULL },
		{ "--port", "80", "--wake-dev", "", NULL },
		{ "--port", "80", "--wake-dev", "eth0", "--bogus", NULL },
		{ "--port", "80", "--wake-dev", "eth0", "extra", NULL },
		{ "--port", "80", "--wake-dev", "eth0", "-p", NULL },
		{ "--port", "80", "--wake-dev", "eth0", "--", NULL },
		{ "--port", "80", "--wake-dev", "eth0", "--dry-run=1", NULL },
		{ "--port", "80", "--wake-dev", "eth0", "--max-naps", "0", NULL },
		{ "--port", "80", "--wake-dev", "eth0", "--max-naps", "x", NULL },
		{ "--port", "80", "--wake-dev", "eth0", "--keep-awake", "", NULL },
		{ "--port", "80", "--wake-dev", "eth0", "--sysfs-root", "", NULL },
		{ "--port=", "--wake-dev", "eth0", NULL },
		{ "--portx", "80", "--wake-dev", "eth0", NULL },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		char *argv[10] = { "napd" }, err[256];
		struct napd_opts o;
		int argc = 1, j;

		for (j = 0; bad[i][j]; j++)
			argv[argc++] = (char *)bad[i][j];
		if (napd_parse_opts(&o, argc, argv, err, sizeof(err)) != -1 ||
		    !err[0]) {
			printf("# bad command line %u was accepted\n", i);
			t_failed = true;
		}
	}

	/* Too many ports is refused, not truncated. */
	{
		char *argv[2 + 2 * (NAPD_MAX_PORTS + 1) + 2], ports[NAPD_MAX_PORTS + 1][8];
		char err[256];
		struct napd_opts o;
		int argc = 0, j;

		argv[argc++] = "napd";
		for (j = 0; j <= NAPD_MAX_PORTS; j++) {
			path_fmt(ports[j], sizeof(ports[j]), "%d", 1000 + j);
			argv[argc++] = "--port";
			argv[argc++] = ports[j];
		}
		argv[argc++] = "--wake-dev";
		argv[argc++] = "eth0";
		CHECK(napd_parse_opts(&o, argc, argv, err, sizeof(err)) == -1);
	}
}

/* ---- procfs parsing ---- */

static void test_interrupts(void)
{
	static const char * const eth0[] = { "eth0", "virtio0" };
	static const char * const eth1[] = { "eth1" };
	static const char * const v1[] = { "virtio1" };
	static const char * const v9[] = { "eth9", "virtio9" };
	static const char * const lo[] = { "lo" };
	unsigned int irqs[8];
	int n;

	n = procnet_irqs_by_name(interrupts_virtio, eth0, 2, irqs, 8);
	CHECK(n == 3);
	CHECK(n == 3 && irqs[0] == 24 && irqs[1] == 25 && irqs[2] == 26);

	/* eth1 must not match myeth1 */
	n = procnet_irqs_by_name(interrupts_virtio, eth1, 1, irqs, 8);
	CHECK(n == 1 && irqs[0] == 41);

	/* virtio1 must not match virtio10-input.0 */
	n = procnet_irqs_by_name(interrupts_virtio, v1, 1, irqs, 8);
	CHECK(n == 1 && irqs[0] == 27);

	/* first action of a shared line: not the last field */
	n = procnet_irqs_by_name(interrupts_virtio, v9, 2, irqs, 8);
	CHECK(n == 1 && irqs[0] == 11);

	/* "lo" is not a word in "Local timer interrupts" or "IO-APIC" */
	CHECK(procnet_irqs_by_name(interrupts_virtio, lo, 1, irqs, 8) == 0);

	/* @max is honoured */
	CHECK(procnet_irqs_by_name(interrupts_virtio, eth0, 2, irqs, 2) == 2);

	/* no trailing newline, header only */
	CHECK(procnet_irqs_by_name(" 7: 1 2 X 7-edge eth1", eth1, 1, irqs,
				   8) == 1 && irqs[0] == 7);
	CHECK(procnet_irqs_by_name("           CPU0\n", eth1, 1, irqs, 8) == 0);
}

static void test_proc_net_tcp(void)
{
	static const char tcp[] = {
"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
"   0: 00000000:0050 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1149 1 000000005f451c5a 100 0 0 10 0\n"
"   1: 00000000:2BCB 00000000:0000 0A 00000000:00000000 00:00000000 00000000   101        0 1150 1 000000007a8b9c0d 100 0 0 10 0\n"
"   2: 0F02000A:0050 0202000A:C350 01 00000000:00000000 00:00000000 00000000     0        0 2210 1 00000000a1b2c3d4 20 4 30 10 -1\n"
"   3: 0F02000A:0050 0202000A:C352 06 00000000:00000000 03:000016A8 00000000     0        0 0 3 00000000b1b2c3d4\n"
"   4: 0F02000A:2BCB 0202000A:D001 03 00000000:00000000 01:00000064 00000000     0        0 0 0 00000000c1b2c3d4\n"
"   5: 0F02000A:0050 0202000A:C354 08 00000001:00000000 00:00000000 00000000     0        0 2211 1 00000000d1b2c3d4 20 4 0 10 -1\n"
"   6: 0F02000A:A3F0 0202000A:0050 01 00000000:00000000 00:00000000 00000000     0        0 2212 1 00000000e1b2c3d4 20 4 30 10 -1\n"
"   7: 0F02000A:1F90 0202000A:C356 04 00000000:00000000 00:00000000 00000000     0        0 2213 1 00000000f1b2c3d4 20 4 30 10 -1\n"
	};
	static const char tcp6[] = {
"  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
"   0: 00000000000000000000000000000000:0050 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4001 1 0000000011223344 100 0 0 10 0\n"
"   1: 0000000000000000FFFF00000F02000A:0050 0000000000000000FFFF00000202000A:C358 09 00000001:00000000 01:00000020 00000000     0        0 0 1 0000000022334455 20 4 0 10 -1\n"
"   2: 0000000000000000FFFF00000F02000A:0050 0000000000000000FFFF00000202000A:C35A 06 00000000:00000000 03:00001000 00000000     0        0 0 3 0000000033445566\n"
"   3: 00000000000000000000000000000001:2BCB 00000000000000000000000000000001:E000 0B 00000000:00000000 00:00000000 00000000     0        0 4002 1 0000000044556677 20 4 0 10 -1\n"
	};
	static const unsigned short p80[] = { 80 }, p11211[] = { 11211 };
	static const unsigned short p22[] = { 22 }, both[] = { 80, 11211 };
	static const unsigned short p8080[] = { 8080 };

	/*
	 * ESTABLISHED and CLOSE_WAIT on :80; LISTEN, TIME_WAIT and the
	 * client socket whose *remote* port is 80 do not count.
	 */
	CHECK(procnet_tcp_busy(tcp, p80, 1) == 2);
	CHECK(procnet_tcp_busy(tcp, p11211, 1) == 1);	/* SYN_RECV */
	CHECK(procnet_tcp_busy(tcp, both, 2) == 3);
	CHECK(procnet_tcp_busy(tcp, p22, 1) == 0);
	CHECK(procnet_tcp_busy(tcp, p8080, 1) == 1);	/* FIN_WAIT1 */
	CHECK(procnet_tcp_busy(tcp_idle, p80, 1) == 0);
	CHECK(procnet_tcp_busy(tcp_busy, p80, 1) == 1);

	CHECK(procnet_tcp_busy(tcp6, p80, 1) == 1);	/* LAST_ACK */
	CHECK(procnet_tcp_busy(tcp6, p11211, 1) == 1);	/* CLOSING */
	CHECK(procnet_tcp_busy(tcp6_idle, both, 2) == 0);

	CHECK(procnet_tcp_busy("", p80, 1) == 0);
	CHECK(procnet_tcp_busy("garbage\n", p80, 1) == -1);
	CHECK(procnet_tcp_busy("   0: 0100:0050 00000000:0000 01\n", p80, 1)
	      == -1);
}

static void test_tcp_states(void)
{
	unsigned int s;

	for (s = 0; s < 16; s++) {
		bool want = s >= 1 && s <= 12 && s != 6 && s != 10;

		if (tcp_state_busy(s) != want) {
			printf("# state %u busy=%d\n", s, !want);
			t_failed = true;
		}
	}
}

static void test_irqlist(void)
{
	unsigned int a[] = { 26, 24, 30, 25, 24 }, b[] = { 7 }, c[] = { 1, 3 };
	char out[64];

	CHECK(!irqlist_format(a, 5, out, sizeof(out)));
	CHECK_STR(out, "24-26,30");
	CHECK(!irqlist_format(b, 1, out, sizeof(out)));
	CHECK_STR(out, "7");
	CHECK(!irqlist_format(c, 2, out, sizeof(out)));
	CHECK_STR(out, "1,3");
	CHECK(!irqlist_format(b, 0, out, sizeof(out)));
	CHECK_STR(out, "");
	CHECK(irqlist_format(a, 5, out, 4) == -1);
}

static void test_mem_sleep(void)
{
	char cur[16];

	CHECK(!mem_sleep_current("[s2idle] deep pseudo", cur, sizeof(cur)));
	CHECK_STR(cur, "s2idle");
	CHECK(!mem_sleep_current("s2idle deep [pseudo]", cur, sizeof(cur)));
	CHECK_STR(cur, "pseudo");
	CHECK(mem_sleep_current("s2idle deep", cur, sizeof(cur)) == -1);
	CHECK(mem_sleep_offers("[s2idle] deep pseudo", "pseudo"));
	CHECK(mem_sleep_offers("[s2idle] deep pseudo", "s2idle"));
	CHECK(!mem_sleep_offers("[s2idle] deep", "pseudo"));
	CHECK(!mem_sleep_offers("[s2idle] deeper", "deep"));
}

static void test_stats_json(void)
{
	struct napd_stats st = { .naps = 3, .aborted = 1, .refused = 2,
				 .nap_ns = 123456789 };
	char buf[512];

	st.blocked[CHECK_HANDSHAKE] = 2;
	st.blocked[CHECK_WAKE_SOURCE] = 5;
	FILE *f;

	stats_wake_irq(&st, 25);
	stats_wake_irq(&st, 24);
	stats_wake_irq(&st, 25);
	f = fmemopen(buf, sizeof(buf), "w");
	stats_print_json(&st, f);
	fclose(f);
	CHECK_STR(buf,
		  "{\"naps\":3,\"aborted\":1,\"handshake_refused\":2,\"nap_ns\":123456789,\"wake_irqs\":{\"25\":2,\"24\":1},\"held_back\":{\"handshake\":2,\"wake_source\":5}}\n");
}

/* ---- IRQ resolution against a fake sysfs ---- */

static void test_irq_resolve(void)
{
	const char *t = new_tree("irqs");
	char sys[PATH_MAX], proc[PATH_MAX];
	struct irq_source src;
	unsigned int irqs[8];
	int n;

	build_tree(t, true);
	path_fmt(sys, sizeof(sys), "%s/sys", t);
	path_fmt(proc, sizeof(proc), "%s/proc", t);

	/*
	 * MSI-X on the PCI parent of virtio0 wins over its irq file; of
	 * 24-26 only the receive vector 25 (virtio0-input.0) is armed.
	 */
	n = irqs_resolve(sys, proc, "eth0", irqs, 8, &src);
	CHECK(n == 1 && irqs[0] == 25);
	CHECK(strstr(src.armed,
		     "receive vectors only (virtio0-input.0), 2 other vectors not armed"));
	CHECK_STR(src.devname, "virtio0");

	/* no names in /proc/interrupts: every vector of the device */
	put("           CPU0\n 24:  0  PCI-MSIX-0000:00:02.0 0-edge  foo\n",
	    "%s/proc/interrupts", t);
	n = irqs_resolve(sys, proc, "eth0", irqs, 8, &src);
	CHECK(n == 3);
	CHECK(strstr(src.armed, "all vectors (receive vectors not named apart"));
	put(interrupts_virtio, "%s/proc/interrupts", t);

	/* empty msi_irqs/: the irq file is used instead */
	n = irqs_resolve(sys, proc, "eth1", irqs, 8, &src);
	CHECK(n == 1 && irqs[0] == 10);

	/* nothing in sysfs: /proc/interrupts by device name "virtio1" */
	n = irqs_resolve(sys, proc, "eth2", irqs, 8, &src);
	CHECK(n == 1 && irqs[0] == 27);	/* virtio1-config: all there is */
	CHECK_STR(src.devname, "virtio1");
	CHECK(strstr(src.from, "/proc/interrupts"));

	/* no device, no interrupt line */
	CHECK(irqs_resolve(sys, proc, "lo", irqs, 8, &src) == 0);
	CHECK(irqs_resolve(sys, proc, "nosuch", irqs, 8, &src) == 0);
}

/* ---- setup and restore against a fake sysfs ---- */

static void fake_opts(struct napd_opts *o, const char *t, const char *dev,
		      const char *mode, const char *keep, bool dry)
{
	static char sys[PATH_MAX], proc[PATH_MAX], state[PATH_MAX];
	char err[256];

	path_fmt(sys, sizeof(sys), "%s/sys", t);
	path_fmt(proc, sizeof(proc), "%s/proc", t);
	path_fmt(state, sizeof(state), "%s/state", t);
	mkdir_p("%s", state);
	if (parse(o, err, sizeof(err), "--port", "80", "--wake-dev", dev,
		  "--mode", mode, "--sysfs-root", sys, "--proc-root", proc,
		  "--state-dir", state,
		  dry ? "--dry-run" : "--log", keep ? "--keep-awake" : NULL,
		  keep, NULL)) {
		printf("# %s: %s\n", __func__, err);
		t_failed = true;
	}
}

static void test_setup_restore(void)
{
	const char *t = new_tree("setup");
	char err[512], dir[PATH_MAX];
	struct napd_setup s;
	struct napd_opts o;

	build_tree(t, true);
	fake_opts(&o, t, "eth0", "pseudo", "ttyS0", false);
	if (napd_setup(&o, &s, err, sizeof(err))) {
		printf("# napd_setup: %s\n", err);
		t_failed = true;
	}
	CHECK(s.have_pseudo && s.nr_irqs == 1);
	CHECK_STR(get("%s/sys/power/mem_sleep", t), "pseudo");
	CHECK_STR(get("%s/sys/power/wake_irq", t), "25");
	CHECK_STR(get("%s/" NOSLEEP_ETH0, t), "1");
	CHECK_STR(get("%s/" NOSLEEP_TTY, t), "1");
	CHECK_STR(get("%s/sys/power/sync_on_suspend", t), "0");
	/* the parent keeps running by kernel rule, not by our write */
	CHECK_STR(get("%s/sys/devices/pci0000:00/0000:00:02.0/power/nosleep",
		      t), "0");

	CHECK(!napd_restore(&s));
	CHECK_STR(get("%s/sys/power/mem_sleep", t), "s2idle");
	CHECK_STR(get("%s/sys/power/wake_irq", t), "");
	CHECK_STR(get("%s/" NOSLEEP_ETH0, t), "0");
	CHECK_STR(get("%s/" NOSLEEP_TTY, t), "0");
	CHECK_STR(get("%s/sys/power/sync_on_suspend", t), "1");
	CHECK(s.settings.nr == 0);

	/* --sync yes: the PM core's sync stays as the admin set it */
	o.sync_fs = true;
	put("[s2idle] deep pseudo\n", "%s/sys/power/mem_sleep", t);
	if (napd_setup(&o, &s, err, sizeof(err))) {
		printf("# napd_setup --sync yes: %s\n", err);
		t_failed = true;
	}
	CHECK_STR(get("%s/sys/power/sync_on_suspend", t), "1");
	CHECK(!napd_restore(&s));
	o.sync_fs = false;

	/* a keep-awake given as a directory path, and prior values kept */
	put("[deep] s2idle pseudo\n", "%s/sys/power/mem_sleep", t);
	put("5,9\n", "%s/sys/power/wake_irq", t);
	put("1\n", "%s/" NOSLEEP_TTY, t);
	path_fmt(dir, sizeof(dir), "%s/sys/devices/platform/serial8250", t);
	fake_opts(&o, t, "eth0", "pseudo", dir, false);
	CHECK(!napd_setup(&o, &s, err, sizeof(err)));
	CHECK_STR(get("%s/sys/power/wake_irq", t), "25");
	CHECK(!napd_restore(&s));
	CHECK_STR(get("%s/sys/power/mem_sleep", t), "deep");
	CHECK_STR(get("%s/sys/power/wake_irq", t), "5,9");
	CHECK_STR(get("%s/" NOSLEEP_TTY, t), "1");
}

/*
 * The kernel drops an IRQ from wake_irq when its handler is freed (a
 * driver reallocating its vectors, a link going down and up): napd
 * writes the NIC's IRQs again, and leaves wake_irq alone otherwise.
 */
static void test_setup_rearm(void)
{
	const char *t = new_tree("rearm");
	struct napd_setup s;
	struct napd_opts o;
	char err[512];

	build_tree(t, true);
	fake_opts(&o, t, "eth0", "pseudo", NULL, false);
	CHECK(!napd_setup(&o, &s, err, sizeof(err)));
	CHECK_STR(get("%s/sys/power/wake_irq", t), "25");
	CHECK(napd_rearm(&o, &s) == 0);
	put("\n", "%s/sys/power/wake_irq", t);
	CHECK(napd_rearm(&o, &s) == 1);
	CHECK_STR(get("%s/sys/power/wake_irq", t), "25");
	CHECK(napd_rearm(&o, &s) == 0);
	/* restore still puts back what was there before napd */
	CHECK(!napd_restore(&s));
	CHECK_STR(get("%s/sys/power/wake_irq", t), "");
}

/* ---- several wake devices, bonds and VLANs ---- */

/*
 * On top of build_tree(): eth3, a second virtio NIC (virtio2, MSI-X
 * 30-32, receive vector 31); bond0 over eth0 and eth3 (lower_* links);
 * bond1 over eth0 and eth1 named only in bonding/slaves; eth0.100, a VLAN
 * on eth0; bond0.5, a VLAN on bond0; bond2, a bond without ports; dummy0.
 */
static void build_bond_tree(const char *t)
{
	static const char more_irqs[] = {
		" 30:          0          0          0          0  PCI-MSIX-0000:00:04.0   0-edge      virtio2-config\n"
		" 31:          7          0          0          0  PCI-MSIX-0000:00:04.0   1-edge      virtio2-input.0\n"
		" 32:          0          0          0          0  PCI-MSIX-0000:00:04.0   2-edge      virtio2-output.0\n"
	};
	const char *v = "%s/sys/devices/virtual/net/%s";
	const char *nmi = strstr(interrupts_virtio, "NMI:");
	char irqs[4096];

	build_tree(t, true);
	snprintf(irqs, sizeof(irqs), "%.*s%s%s", (int)(nmi - interrupts_virtio),
		 interrupts_virtio, more_irqs, nmi);
	put(irqs, "%s/proc/interrupts", t);

	fake_virtio_nic(t, "0000:00:04.0", 2, "eth3", 30, "300\n");

	put("50\n", "%s/sys/devices/virtual/net/bond0/statistics/rx_packets", t);
	link_to("../../../pci0000:00/0000:00:02.0/virtio0/net/eth0",
		"%s/sys/devices/virtual/net/bond0/lower_eth0", t);
	link_to("../../../pci0000:00/0000:00:04.0/virtio2/net/eth3",
		"%s/sys/devices/virtual/net/bond0/lower_eth3", t);
	link_to("../../devices/virtual/net/bond0", "%s/sys/class/net/bond0", t);

	put("60\n", "%s/sys/devices/virtual/net/bond1/statistics/rx_packets", t);
	put("eth0 eth1\n", "%s/sys/devices/virtual/net/bond1/bonding/slaves", t);
	link_to("../../devices/virtual/net/bond1", "%s/sys/class/net/bond1", t);

	put("70\n", "%s/sys/devices/virtual/net/eth0.100/statistics/rx_packets", t);
	link_to("../../../pci0000:00/0000:00:02.0/virtio0/net/eth0",
		"%s/sys/devices/virtual/net/eth0.100/lower_eth0", t);
	link_to("../../devices/virtual/net/eth0.100", "%s/sys/class/net/eth0.100", t);

	put("80\n", "%s/sys/devices/virtual/net/bond0.5/statistics/rx_packets", t);
	link_to("../bond0", "%s/sys/devices/virtual/net/bond0.5/lower_bond0", t);
	link_to("../../devices/virtual/net/bond0.5", "%s/sys/class/net/bond0.5", t);

	put("0\n", v, t, "bond2/statistics/rx_packets");
	put("\n", v, t, "bond2/bonding/slaves");
	link_to("../../devices/virtual/net/bond2", "%s/sys/class/net/bond2", t);
	put("0\n", v, t, "dummy0/statistics/rx_packets");
	link_to("../../devices/virtual/net/dummy0", "%s/sys/class/net/dummy0", t);
}

#define NOSLEEP_ETH1 "sys/devices/pci0000:00/0000:00:03.0/power/nosleep"
#define NOSLEEP_ETH3 "sys/devices/pci0000:00/0000:00:04.0/virtio2/power/nosleep"

/* napd_setup() with --wake-dev for each of @devs ("a b"); 0 or -1. */
static int setup_devs(const char *t, const char *devs, struct napd_setup *s,
		      char *err, size_t errlen)
{
	static char sys[PATH_MAX], proc[PATH_MAX], state[PATH_MAX];
	static char names[8][32];
	char *argv[40] = { "napd", "--port", "80", "--sysfs-root", sys,
			   "--proc-root", proc, "--state-dir", state,
			   "--wake-on", "irq" };
	int argc = 11, nr = 0;
	struct napd_opts o;
	const char *p = devs;

	path_fmt(sys, sizeof(sys), "%s/sys", t);
	path_fmt(proc, sizeof(proc), "%s/proc", t);
	path_fmt(state, sizeof(state), "%s/state", t);
	mkdir_p("%s", state);
	while (*p && nr < 8) {
		size_t len = strcspn(p, " ");

		snprintf(names[nr], sizeof(names[nr]), "%.*s", (int)len, p);
		argv[argc++] = "--wake-dev";
		argv[argc++] = names[nr++];
		p += len + (p[len] == ' ');
	}
	if (napd_parse_opts(&o, argc, argv, err, errlen)) {
		printf("# %s\n", err);
		return -2;
	}
	return napd_setup(&o, s, err, errlen);
}

static void test_setup_many_nics(void)
{
	static const struct {
		const char *devs;
		const char *irqs;
		const char *nics;
		int nr_rx;
	} good[] = {
		{ "eth0 eth3", "25,31", "eth0 eth3", 2 },
		{ "bond0", "25,31", "eth0 eth3", 1 },
		{ "bond1", "10,25", "eth0 eth1", 1 },	/* bonding/slaves */
		{ "eth0.100", "25", "eth0", 1 },
		{ "bond0.5", "25,31", "eth0 eth3", 1 },	/* VLAN on a bond */
		{ "eth0 bond0 eth0.100", "25,31", "eth0 eth3", 3 },
		{ "eth1 eth2", "10,27", "eth1 eth2", 2 },
	};
	const char *t = new_tree("nics");
	static struct napd_setup s;
	char err[1024], nics[256];
	unsigned int i;
	int j;

	build_bond_tree(t);
	for (i = 0; i < ARRAY_SIZE(good); i++) {
		if (setup_devs(t, good[i].devs, &s, err, sizeof(err))) {
			printf("# %s: %s\n", good[i].devs, err);
			t_failed = true;
			continue;
		}
		nics[0] = '\0';
		for (j = 0; j < s.nr_nics; j++)
			snprintf(nics + strlen(nics), sizeof(nics) - strlen(nics),
				 "%s%s", j ? " " : "", s.nics[j]);
		if (strcmp(get("%s/sys/power/wake_irq", t), good[i].irqs) ||
		    strcmp(nics, good[i].nics) || s.nr_rx != good[i].nr_rx) {
			printf("# %s: irqs %s nics '%s' rx %d\n", good[i].devs,
			       get("%s/sys/power/wake_irq", t), nics, s.nr_rx);
			t_failed = true;
		}
		/* every NIC kept awake, none of the others */
		CHECK_STR(get("%s/" NOSLEEP_ETH0, t),
			  strstr(good[i].nics, "eth0") ? "1" : "0");
		CHECK_STR(get("%s/" NOSLEEP_ETH1, t),
			  strstr(good[i].nics, "eth1") ? "1" : "0");
		CHECK_STR(get("%s/" NOSLEEP_ETH3, t),
			  strstr(good[i].nics, "eth3") ? "1" : "0");
		CHECK(!napd_restore(&s));
		CHECK_STR(get("%s/sys/power/wake_irq", t), "");
		CHECK_STR(get("%s/" NOSLEEP_ETH3, t), "0");
		put("[s2idle] deep pseudo\n", "%s/sys/power/mem_sleep", t);
	}
	/* the counters of the devices as named: the bond's, the VLAN's */
	CHECK(!setup_devs(t, "bond0 eth0.100", &s, err, sizeof(err)));
	CHECK(strstr(s.rx_packets[0], "/bond0/statistics/rx_packets") &&
	      strstr(s.rx_packets[1], "/eth0.100/statistics/rx_packets"));
	CHECK(!napd_restore(&s));
	put("[s2idle] deep pseudo\n", "%s/sys/power/mem_sleep", t);

	/* no IRQ to wake on: refused, with why, nothing changed */
	CHECK(setup_devs(t, "eth0 bond2", &s, err, sizeof(err)) == -1);
	CHECK_HAS(err,
		  "'bond2' has no IRQ: a virtual device with no lower devices (a bond or team without ports?)");
	CHECK(s.settings.nr == 0);
	CHECK(setup_devs(t, "dummy0", &s, err, sizeof(err)) == -1);
	CHECK(strstr(err, "'dummy0' has no IRQ"));
	CHECK(setup_devs(t, "eth0 eth9", &s, err, sizeof(err)) == -1);
	CHECK(strstr(err, "no network device 'eth9'"));
	/* a port of a bond that is gone */
	put("eth0 eth8\n", "%s/sys/devices/virtual/net/bond1/bonding/slaves", t);
	CHECK(setup_devs(t, "bond1", &s, err, sizeof(err)) == -1);
	CHECK(strstr(err, "wake-dev 'bond1': no network device 'eth8'"));
	CHECK(s.settings.nr == 0);
	CHECK_STR(get("%s/sys/power/mem_sleep", t), "[s2idle] deep pseudo");
	CHECK_STR(get("%s/sys/power/wake_irq", t), "");
	CHECK_STR(get("%s/" NOSLEEP_ETH0, t), "0");
}

static void test_opts_wake_devs(void)
{
	struct napd_opts o;
	char err[512], path[PATH_MAX], devs[64];
	char *const argv[] = { "napd", "--config", path, "--port", "80", NULL };
	char *const cli[] = { "napd", "--config", path, "--wake-dev", "eth7",
			      "--wake-dev", "eth8", NULL };

	CHECK(!parse(&o, err, sizeof(err), "--port", "80", "--wake-dev", "eth0",
		     "--wake-dev", "bond0", "--wake-dev", "eth0", NULL));
	CHECK(o.nr_wake_devs == 2);
	CHECK_STR(napd_wake_devs_str(&o, devs, sizeof(devs)), "eth0,bond0");
	CHECK(parse(&o, err, sizeof(err), "--port", "80", "--wake-dev", "a",
		    "--wake-dev", "b", "--wake-dev", "c", "--wake-dev", "d",
		    "--wake-dev", "e", "--wake-dev", "f", "--wake-dev", "g",
		    "--wake-dev", "h", "--wake-dev", "i", NULL) == -1);
	CHECK(strstr(err, "too many --wake-dev (max 8)"));

	/* the file lists several; the command line replaces the list */
	path_fmt(path, sizeof(path), "%s/devs.conf", tmp_root);
	put("port = 80\nwake-dev = eth0, eth3\nwake-dev = bond0\n", "%s", path);
	CHECK(!napd_load_opts(&o, 5, argv, err, sizeof(err)));
	CHECK_STR(napd_wake_devs_str(&o, devs, sizeof(devs)), "eth0,eth3,bond0");
	napd_opts_free(&o);
	CHECK(!napd_load_opts(&o, 7, cli, err, sizeof(err)));
	CHECK_STR(napd_wake_devs_str(&o, devs, sizeof(devs)), "eth7,eth8");
	napd_opts_free(&o);
}

/* ---- the saved settings file ---- */

static void test_settings_file(void)
{
	const char *t = new_tree("saved");
	static struct settings st, back;
	char a[PATH_MAX], b[PATH_MAX], gone[PATH_MAX], err[512];
	char *text;

	path_fmt(a, sizeof(a), "%s/a", t);
	path_fmt(b, sizeof(b), "%s/b", t);
	path_fmt(gone, sizeof(gone), "%s/gone", t);
	put("old a\n", "%s", a);
	put("\n", "%s", b);
	memset(&st, 0, sizeof(st));
	path_fmt(st.file, sizeof(st.file), "%s/nodir/settings", t);

	/* the file cannot be written: refused, and the value not touched */
	CHECK(settings_change(&st, a, "old a", "new") == -ENOENT);
	CHECK(st.nr == 0);
	CHECK_STR(get("%s", a), "old a");

	/* saved before the change, escapes and an empty value included */
	path_fmt(st.file, sizeof(st.file), "%s/settings", t);
	CHECK(!settings_change(&st, a, "old a", "new"));
	CHECK(!settings_change(&st, b, "", "x"));
	/* gone cannot be written: recorded all the same */
	CHECK(settings_change(&st, gone, "t\tab\\nl\n", "y") == -ENOENT);
	CHECK(st.nr == 3);
	CHECK_STR(get("%s", a), "new");
	text = read_whole(st.file);
	CHECK(text && strstr(text, "\nnapd-settings 1\n"));
	CHECK(text && strstr(text, "/a\told a\n"));
	CHECK(text && strstr(text, "/b\t\n"));
	CHECK(text && strstr(text, "/gone\tt\\x09ab\\x5cnl\\x0a\n"));
	free(text);
	CHECK(!path_fmt(err, sizeof(err), "%s.tmp", st.file) &&
	      !path_exists(err));

	memset(&back, 0, sizeof(back));
	snprintf(back.file, sizeof(back.file), "%s", st.file);
	CHECK(settings_load(&back, err, sizeof(err)) == 3);
	CHECK_STR(back.pending[0].old, "old a");
	CHECK_STR(back.pending[1].old, "");
	CHECK_STR(back.pending[2].old, "t\tab\\nl\n");

	/* a path that is gone is a warning, not a failure; file removed */
	{
		int saved = dup(2), null = open("/dev/null", O_WRONLY);

		dup2(null, 2);
		close(null);
		CHECK(!settings_restore(&st));
		dup2(saved, 2);
		close(saved);
	}
	CHECK_STR(get("%s", a), "old a");
	CHECK_STR(get("%s", b), "");
	CHECK(!path_exists(st.file));
	CHECK(settings_load(&back, err, sizeof(err)) == 0);

	/* files that are not ours: refused with the line, nothing loaded */
	put("napd-settings 1\n/x\tok\nno tab here\n", "%s", st.file);
	CHECK(settings_load(&back, err, sizeof(err)) == -1);
	CHECK(strstr(err, "settings:3: not a napd settings file line"));
	CHECK(back.nr_pending == 0);
	put("/x\tok\n", "%s", st.file);
	CHECK(settings_load(&back, err, sizeof(err)) == -1);
	CHECK(strstr(err, "settings:1: not a napd settings file line"));
	put("# only a comment\n", "%s", st.file);
	CHECK(settings_load(&back, err, sizeof(err)) == -1);
	CHECK(strstr(err, "no 'napd-settings 1' line"));
	put("napd-settings 1\n/x\tbad \\q escape\n", "%s", st.file);
	CHECK(settings_load(&back, err, sizeof(err)) == -1);
}

/*
 * napd killed with SIGKILL after setup: the next one takes the saved
 * originals, not the killed one's settings, and restores those.
 */
static void test_setup_crash_recovery(void)
{
	const char *t = new_tree("crash");
	static struct napd_setup s1, s2;
	struct napd_opts o;
	char err[512], file[PATH_MAX];

	build_tree(t, true);
	put("3\n", "%s/sys/power/wake_irq", t);
	path_fmt(file, sizeof(file), "%s/state/settings", t);
	fake_opts(&o, t, "eth0", "pseudo", "ttyS0", false);
	CHECK(!napd_setup(&o, &s1, err, sizeof(err)));
	CHECK(s1.recovered == 0);
	CHECK_STR(get("%s/sys/power/wake_irq", t), "25");
	CHECK_STR(get("%s/" NOSLEEP_TTY, t), "1");
	CHECK(path_exists(file));

	/* SIGKILL: s1 is never restored.  The kernel shows its list. */
	put("s2idle deep [pseudo]\n", "%s/sys/power/mem_sleep", t);
	fake_opts(&o, t, "eth0", "pseudo", "ttyS0", false);
	if (napd_setup(&o, &s2, err, sizeof(err)))
		printf("# %s\n", err);
	CHECK(s2.recovered == 5);
	CHECK(s2.settings.nr == 5 && s2.settings.nr_pending == 0);
	CHECK_STR(get("%s/sys/power/wake_irq", t), "25");
	/* the killed napd left 0: the original is still 1 */
	CHECK_STR(get("%s/sys/power/sync_on_suspend", t), "0");
	CHECK(!napd_restore(&s2));
	CHECK_STR(get("%s/sys/power/mem_sleep", t), "s2idle");
	CHECK_STR(get("%s/sys/power/sync_on_suspend", t), "1");
	CHECK_STR(get("%s/sys/power/wake_irq", t), "3");
	CHECK_STR(get("%s/" NOSLEEP_ETH0, t), "0");
	CHECK_STR(get("%s/" NOSLEEP_TTY, t), "0");
	CHECK(!path_exists(file));

	/* killed again; the next run keeps ttyS0 no more: put back at once */
	put("[s2idle] deep pseudo\n", "%s/sys/power/mem_sleep", t);
	fake_opts(&o, t, "eth0", "pseudo", "ttyS0", false);
	CHECK(!napd_setup(&o, &s1, err, sizeof(err)));
	put("s2idle deep [pseudo]\n", "%s/sys/power/mem_sleep", t);
	fake_opts(&o, t, "eth0", "pseudo", NULL, false);
	CHECK(!napd_setup(&o, &s2, err, sizeof(err)));
	CHECK(s2.recovered == 5 && s2.settings.nr == 4);
	CHECK_STR(get("%s/" NOSLEEP_TTY, t), "0");
	{
		char *text = read_whole(file);

		CHECK(text && !strstr(text, "serial8250"));
		free(text);
	}
	CHECK(!napd_restore(&s2));
	CHECK_STR(get("%s/sys/power/wake_irq", t), "3");
	CHECK(!path_exists(file));

	/* killed, then a start that is refused: the originals still back */
	put("[s2idle] deep pseudo\n", "%s/sys/power/mem_sleep", t);
	fake_opts(&o, t, "eth0", "pseudo", "ttyS0", false);
	CHECK(!napd_setup(&o, &s1, err, sizeof(err)));
	fake_opts(&o, t, "eth0", "pseudo", "ttyS9", false);
	CHECK(napd_setup(&o, &s2, err, sizeof(err)) == -1);
	CHECK(!napd_restore(&s2));
	CHECK_STR(get("%s/sys/power/mem_sleep", t), "s2idle");
	CHECK_STR(get("%s/sys/power/wake_irq", t), "3");
	CHECK_STR(get("%s/" NOSLEEP_ETH0, t), "0");
	CHECK_STR(get("%s/" NOSLEEP_TTY, t), "0");
	CHECK(!path_exists(file));
}

static void test_setup_dry_run(void)
{
	const char *t = new_tree("dry");
	struct napd_setup s;
	struct napd_opts o;
	char err[512];
	int saved, ret;

	build_tree(t, true);
	fake_opts(&o, t, "eth0", "pseudo", "ttyS0", true);
	saved = quiet_begin();
	ret = napd_setup(&o, &s, err, sizeof(err));
	napd_restore(&s);
	quiet_end(saved);
	CHECK(ret == 0);
	CHECK_STR(get("%s/sys/power/mem_sleep", t), "[s2idle] deep pseudo");
	CHECK_STR(get("%s/sys/power/wake_irq", t), "");
	CHECK_STR(get("%s/" NOSLEEP_ETH0, t), "0");
	CHECK_STR(get("%s/" NOSLEEP_TTY, t), "0");
}

static void test_setup_refusals(void)
{
	const char *t = new_tree("refuse");
	struct napd_setup s;
	struct napd_opts o;
	char err[512];

	/* no pseudo-sleep kernel: refused with a clear reason, no change */
	build_tree(t, false);
	fake_opts(&o, t, "eth0", "pseudo", NULL, false);
	CHECK(napd_setup(&o, &s, err, sizeof(err)) == -1);
	CHECK(strstr(err, "pseudo-sleep"));
	CHECK(s.settings.nr == 0);
	CHECK_STR(get("%s/sys/power/mem_sleep", t), "[s2idle] deep");

	/* pseudosleep dir but "pseudo" not in mem_sleep */
	put("0\n", "%s/sys/power/pseudosleep/naps", t);
	CHECK(napd_setup(&o, &s, err, sizeof(err)) == -1);
	CHECK(s.settings.nr == 0);

	t = new_tree("refuse2");
	build_tree(t, true);
	/* pseudo needs IRQs to wake on: lo has none */
	fake_opts(&o, t, "lo", "pseudo", NULL, false);
	CHECK(napd_setup(&o, &s, err, sizeof(err)) == -1);
	CHECK(s.settings.nr == 0);
	/* unknown netdev, unknown keep-awake */
	fake_opts(&o, t, "eth7", "pseudo", NULL, false);
	CHECK(napd_setup(&o, &s, err, sizeof(err)) == -1);
	fake_opts(&o, t, "eth0", "pseudo", "ttyS9", false);
	CHECK(napd_setup(&o, &s, err, sizeof(err)) == -1);
	CHECK(s.settings.nr == 0);
	/* pseudo needs nosleep on the wake device */
	{
		char p[PATH_MAX];

		path_fmt(p, sizeof(p), "%s/" NOSLEEP_ETH0, t);
		unlink(p);
	}
	fake_opts(&o, t, "eth0", "pseudo", NULL, false);
	CHECK(napd_setup(&o, &s, err, sizeof(err)) == -1);
	CHECK(s.settings.nr == 0);
	CHECK_STR(get("%s/sys/power/mem_sleep", t), "[s2idle] deep pseudo");
}

static void test_setup_s2idle(void)
{
	const char *t = new_tree("s2idle");
	struct napd_setup s;
	struct napd_opts o;
	char err[512], p[PATH_MAX];
	int saved, null, ret;

	/* an upstream kernel: no wake_irq, no nosleep files */
	build_tree(t, false);
	path_fmt(p, sizeof(p), "%s/sys/power/wake_irq", t);
	unlink(p);
	path_fmt(p, sizeof(p), "%s/" NOSLEEP_ETH0, t);
	unlink(p);
	fake_opts(&o, t, "eth0", "deep", NULL, false);
	saved = dup(2);		/* the "not keeping awake" note */
	null = open("/dev/null", O_WRONLY);
	dup2(null, 2);
	close(null);
	ret = napd_setup(&o, &s, err, sizeof(err));
	dup2(saved, 2);
	close(saved);
	CHECK(ret == 0);
	CHECK(s.settings.nr == 1);
	CHECK_STR(get("%s/sys/power/mem_sleep", t), "deep");
	CHECK(!napd_restore(&s));
	CHECK_STR(get("%s/sys/power/mem_sleep", t), "s2idle");

	/* a mode the kernel does not list */
	put("[s2idle]\n", "%s/sys/power/mem_sleep", t);
	CHECK(napd_setup(&o, &s, err, sizeof(err)) == -1);
	CHECK(s.settings.nr == 0);
}

/* ---- sock_diag reply parsing ---- */

struct diag_reply {
	struct nlmsghdr h;
	struct inet_diag_msg m;
};

static void diag_msg(struct diag_reply *r, unsigned int state,
		     unsigned short sport, unsigned short dport)
{
	memset(r, 0, sizeof(*r));
	r->h.nlmsg_len = NLMSG_LENGTH(sizeof(r->m));
	r->h.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	r->m.idiag_family = AF_INET;
	r->m.idiag_state = state;
	r->m.id.idiag_sport = htons(sport);
	r->m.id.idiag_dport = htons(dport);
}

/*
 * An ESTABLISHED reply on port 80 with a tcp_info attribute, at @p: data
 * last received @recv_ms ago, sent (and acknowledged) @sent_ms ago.
 */
static size_t diag_msg_info(void *p, unsigned int rq, unsigned int unacked,
			    unsigned int recv_ms, unsigned int sent_ms)
{
	struct nlmsghdr *h = p;
	struct inet_diag_msg *m = NLMSG_DATA(h);
	struct rtattr *a = (struct rtattr *)(m + 1);
	struct tcp_info ti;

	memset(&ti, 0, sizeof(ti));
	ti.tcpi_unacked = unacked;
	ti.tcpi_last_data_recv = recv_ms;
	ti.tcpi_last_data_sent = sent_ms;
	ti.tcpi_last_ack_recv = sent_ms;
	memset(m, 0, sizeof(*m));
	m->idiag_family = AF_INET;
	m->idiag_state = NAPD_TCP_ESTABLISHED;
	m->idiag_rqueue = rq;
	m->id.idiag_sport = htons(80);
	a->rta_type = INET_DIAG_INFO;
	a->rta_len = RTA_LENGTH(sizeof(ti));
	/* RTA_DATA is 4-aligned only: copied, not assigned */
	memcpy(RTA_DATA(a), &ti, sizeof(ti));
	h->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	h->nlmsg_flags = NLM_F_MULTI;
	h->nlmsg_len = NLMSG_LENGTH(sizeof(*m)) + RTA_ALIGN(a->rta_len);
	return NLMSG_ALIGN(h->nlmsg_len);
}

/* Set tcpi_data_segs_in or _out of the diag_msg_info() reply at @p. */
static void diag_msg_set(void *p, size_t off, __u32 n)
{
	struct inet_diag_msg *m = NLMSG_DATA((struct nlmsghdr *)p);

	memcpy((char *)RTA_DATA((struct rtattr *)(m + 1)) + off, &n, sizeof(n));
}

static void diag_msg_segs_in(void *p, __u32 n)
{
	diag_msg_set(p, offsetof(struct tcp_info, tcpi_data_segs_in), n);
}

static void diag_msg_segs_out(void *p, __u32 n)
{
	diag_msg_set(p, offsetof(struct tcp_info, tcpi_data_segs_out), n);
}

/*
 * Two replies with one data segment in each, at @ms_a and @ms_b ms (data
 * received and sent alike), the second with @out_b segments out: the
 * first must count busy and the second idle at idle-ms 50.
 */
static void check_segs_pair(void *info, unsigned int ms_a,
			    unsigned int ms_b, __u32 out_b)
{
	static const unsigned short p80[] = { 80 };
	struct conn_count c = { 0, 0 };
	size_t len, second;

	len = diag_msg_info(info, 0, 0, ms_a, ms_a);
	diag_msg_segs_in(info, 1);
	second = len;
	len += diag_msg_info((char *)info + len, 0, 0, ms_b, ms_b);
	diag_msg_segs_in((char *)info + second, 1);
	diag_msg_segs_out((char *)info + second, out_b);
	CHECK(diag_parse(info, len, p80, 1, 50, &c) == 0);
	CHECK(c.idle == 1 && c.busy == 1);
}

static void test_diag_parse(void)
{
	static const unsigned short p80[] = { 80 };
	struct {
		struct diag_reply r[5];
		struct nlmsghdr done;
		int done_payload;
	} buf;
	struct {
		struct nlmsghdr h;
		struct nlmsgerr e;
	} err = { .h = { .nlmsg_len = NLMSG_LENGTH(sizeof(struct nlmsgerr)),
			 .nlmsg_type = NLMSG_ERROR },
		  .e = { .error = -ENOENT } };
	long info[4 * 512 / sizeof(long)];	/* aligned for nlmsghdr */
	struct conn_count c = { 0, 0 };
	size_t len = 0;

	diag_msg(&buf.r[0], NAPD_TCP_ESTABLISHED, 80, 40000);	/* ours */
	diag_msg(&buf.r[1], NAPD_TCP_ESTABLISHED, 40000, 80);	/* client */
	diag_msg(&buf.r[2], NAPD_TCP_CLOSE_WAIT, 80, 40002);	/* ours */
	diag_msg(&buf.r[3], NAPD_TCP_TIME_WAIT, 80, 40004);
	diag_msg(&buf.r[4], NAPD_TCP_LISTEN, 80, 0);
	memset(&buf.done, 0, sizeof(buf.done) + sizeof(int));
	buf.done.nlmsg_len = NLMSG_LENGTH(sizeof(int));
	buf.done.nlmsg_type = NLMSG_DONE;

	/* a part of a dump: more to come; no tcp_info: busy */
	CHECK(diag_parse(&buf, 2 * sizeof(buf.r[0]), p80, 1, 50, &c) == 0);
	CHECK(c.busy == 1 && c.idle == 0);
	c.busy = 0;
	CHECK(diag_parse(&buf, sizeof(buf), p80, 1, 50, &c) == 1);
	CHECK(c.busy == 2 && c.idle == 0);
	c.busy = 0;
	CHECK(diag_parse(&err, sizeof(err), p80, 1, 50, &c) == -ENOENT);
	CHECK(c.busy == 0);

	/* quiet 60 ms at idle-ms 50; then unread bytes, unacked, 40 ms */
	len += diag_msg_info((char *)info + len, 0, 0, 60, 60);
	len += diag_msg_info((char *)info + len, 5, 0, 60, 60);
	len += diag_msg_info((char *)info + len, 0, 1, 60, 60);
	len += diag_msg_info((char *)info + len, 0, 0, 40, 40);
	CHECK(diag_parse(info, len, p80, 1, 50, &c) == 0);
	CHECK(c.idle == 1 && c.busy == 3);
	/*
	 * a request read 60 ms ago and not answered: busy; answered: idle;
	 * one read 5 s ago and never answered: the client had the last
	 * word, idle
	 */
	len = diag_msg_info(info, 0, 0, 60, 200);
	len += diag_msg_info((char *)info + len, 0, 0, 200, 60);
	len += diag_msg_info((char *)info + len, 0, 0, 5000, 6000);
	c.idle = 0;
	c.busy = 0;
	CHECK(diag_parse(info, len, p80, 1, 50, &c) == 0);
	CHECK(c.idle == 2 && c.busy == 1);
	/*
	 * times alike (the request came in the jiffy of the handshake): one
	 * data segment in and none out is busy; one out too is idle.  Data
	 * in, none out, 4999 ms ago: busy; 5000 ms: idle.
	 */
	check_segs_pair(info, 60, 60, 1);
	check_segs_pair(info, 4999, 5000, 0);
}

/* ---- sock_diag and /proc/net/tcp against the running kernel ---- */

static int live_count(struct diag *d, bool use_diag, unsigned short port)
{
	struct conn_count c;
	char *text;
	int a, b = 0;

	/* every open one, idle or not */
	if (use_diag)
		return diag_tcp_count(d, &port, 1, 1, &c) ? -1 :
		       c.busy + c.idle;
	text = read_whole("/proc/net/tcp");
	if (!text)
		return -1;
	a = procnet_tcp_busy(text, &port, 1);
	free(text);
	text = read_whole("/proc/net/tcp6");
	if (text) {
		b = procnet_tcp_busy(text, &port, 1);
		free(text);
	}
	return a < 0 || b < 0 ? -1 : a + b;
}

static void test_live_tcp(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	unsigned short port;
	struct diag d = { -1 };
	bool have_diag;
	int l, c, a, pass, i;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(l, 4) || getsockname(l, (struct sockaddr *)&sa, &len)) {
		t_skip = "no loopback TCP";
		if (l >= 0)
			close(l);
		return;
	}
	port = ntohs(sa.sin_port);
	have_diag = !diag_open(&d) && live_count(&d, true, port) >= 0;

	for (pass = have_diag ? 0 : 1; pass < 2; pass++) {
		bool use_diag = pass == 0;

		/* only LISTEN so far */
		CHECK(live_count(&d, use_diag, port) == 0);
		c = socket(AF_INET, SOCK_STREAM, 0);
		CHECK(!connect(c, (struct sockaddr *)&sa, sizeof(sa)));
		a = accept(l, NULL, NULL);
		CHECK(a >= 0);
		/* the accepted socket, not the client (local port differs) */
		CHECK(live_count(&d, use_diag, port) == 1);
		close(c);
		close(a);	/* CLOSE_WAIT -> LAST_ACK -> gone */
		for (i = 0; i < 100 && live_count(&d, use_diag, port); i++)
			usleep(10000);
		CHECK(live_count(&d, use_diag, port) == 0);
	}
	diag_close(&d);
	close(l);
	if (!have_diag)
		t_skip = "sock_diag unavailable, /proc/net/tcp only";
}

/* ---- idle kept-alive connections, real ones on loopback ---- */

static unsigned long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

/* A listener on 127.0.0.1 and one connection to it: 0, or -1. */
static int tcp_pair(int *l, int *cl, int *sv, unsigned short *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);

	*cl = *sv = -1;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	*l = socket(AF_INET, SOCK_STREAM, 0);
	if (*l < 0 || bind(*l, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(*l, 4) || getsockname(*l, (struct sockaddr *)&sa, &len))
		return -1;
	*port = ntohs(sa.sin_port);
	*cl = socket(AF_INET, SOCK_STREAM, 0);
	if (*cl < 0 || connect(*cl, (struct sockaddr *)&sa, sizeof(sa)))
		return -1;
	*sv = accept(*l, NULL, NULL);
	return *sv < 0 ? -1 : 0;
}

static void close_pair(int l, int cl, int sv)
{
	if (sv >= 0)
		close(sv);
	if (cl >= 0)
		close(cl);
	if (l >= 0)
		close(l);
}

/* A request and its answer on the kept-alive connection. */
static bool exchange(int cl, int sv)
{
	char buf[8];

	return write(cl, "GET", 3) == 3 && read(sv, buf, 3) == 3 &&
	       write(sv, "200", 3) == 3 && read(cl, buf, 3) == 3;
}

/* The served side of @port as sock_diag sees it at @idle_ms. */
static struct conn_count count_at(struct diag *d, unsigned short port,
				  unsigned long idle_ms)
{
	struct conn_count c = { -1, -1 };

	if (diag_tcp_count(d, &port, 1, idle_ms, &c)) {
		c.busy = -1;
		c.idle = -1;
	}
	return c;
}

static void test_live_tcp_idle(void)
{
	int l[4], cl[4], sv[4], i, tries, big = 0;
	unsigned short port[4];
	struct diag d = { -1 };
	struct conn_count c;
	char buf[65536];
	bool premise = false;

	for (i = 0; i < 4; i++) {
		l[i] = -1;
		cl[i] = -1;
		sv[i] = -1;
	}
	if (diag_open(&d) || count_at(&d, 9, 50).busy < 0) {
		t_skip = "no sock_diag";
		diag_close(&d);
		return;
	}
	for (i = 0; i < 4; i++) {
		if (tcp_pair(&l[i], &cl[i], &sv[i], &port[i])) {
			t_skip = "no loopback TCP";
			goto out;
		}
		CHECK(exchange(cl[i], sv[i]));
	}
	/*
	 * [0] stays quiet; [1] gets unread bytes; [2] unsent ones.  [1]'s
	 * come a few jiffies after the exchange's answer: sock_diag's times
	 * are in jiffies, and a request received in the jiffy of the last
	 * answer cannot be told from one that came before it.
	 */
	usleep(20000);
	CHECK(write(cl[1], "hello", 5) == 5);
	CHECK(!fcntl(sv[2], F_SETFL, O_NONBLOCK));
	memset(buf, 'x', sizeof(buf));
	while (write(sv[2], buf, sizeof(buf)) > 0 && big < 1000)
		big++;
	/* the peer stopped reading: the socket buffer filled */
	CHECK(big > 0 && big < 1000);
	usleep(100000);

	/* every one of them is open, quiet for 100 ms */
	c = count_at(&d, port[0], 50);
	CHECK(c.idle == 1 && c.busy == 0);
	c = count_at(&d, port[1], 50);
	CHECK(c.idle == 0 && c.busy == 1);
	c = count_at(&d, port[2], 50);
	CHECK(c.idle == 0 && c.busy == 1);
	/* read, [1] is still busy: a request read and not answered */
	CHECK(read(sv[1], buf, sizeof(buf)) == 5);
	c = count_at(&d, port[1], 50);
	CHECK(c.idle == 0 && c.busy == 1);
	/*
	 * answered, and quiet: idle.  The client acknowledges "ok" late
	 * (delayed ACK, up to 200 ms): wait well past that.
	 */
	CHECK(write(sv[1], "ok", 2) == 2 && read(cl[1], buf, 2) == 2);
	usleep(400000);
	c = count_at(&d, port[1], 50);
	CHECK(c.idle == 1 && c.busy == 0);

	/*
	 * [3]: quiet for 300 ms, then a request and its answer.  Right after,
	 * it is busy at idle-ms 300; were the test itself held up for 300 ms
	 * between the exchange and the dump, that would say nothing: again.
	 */
	for (tries = 0; tries < 5 && !premise; tries++) {
		unsigned long long t;

		usleep(300000);
		c = count_at(&d, port[3], 300);
		CHECK(c.idle == 1 && c.busy == 0);
		t = mono_ms();
		CHECK(exchange(cl[3], sv[3]));
		c = count_at(&d, port[3], 300);
		premise = mono_ms() - t < 250;
	}
	CHECK(premise);
	CHECK(c.idle == 0 && c.busy == 1);
	/* a new connection that moved nothing yet is busy for idle-ms too */
	close_pair(-1, cl[0], sv[0]);
	cl[0] = socket(AF_INET, SOCK_STREAM, 0);
	{
		struct sockaddr_in sa = { .sin_family = AF_INET };

		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sa.sin_port = htons(port[0]);
		CHECK(!connect(cl[0], (struct sockaddr *)&sa, sizeof(sa)));
		sv[0] = accept(l[0], NULL, NULL);
	}
	c = count_at(&d, port[0], 3600000);
	CHECK(c.idle == 0 && c.busy == 1);
out:
	for (i = 0; i < 4; i++)
		close_pair(l[i], cl[i], sv[i]);
	diag_close(&d);
}

/* ---- bounded naps: max-nap and systemd timers ---- */

static void test_max_nap_opts(void)
{
	static const struct {
		const char *arg;
		unsigned long ms;
	} good[] = {
		{ "5", 5000 }, { "500ms", 500 }, { "2s", 2000 },
		{ "2min", 120000 }, { "1h", 3600000 }, { "0", 0 },
		{ "24h", 86400000 }, { "10ms", 10 },
	};
	struct napd_opts o;
	char err[256];
	unsigned int i;

	CHECK(!parse(&o, err, sizeof(err), "--port", "80", "--wake-dev",
		     "eth0", NULL));
	CHECK(o.max_nap_ms == 5000 && o.systemd_timers);
	for (i = 0; i < ARRAY_SIZE(good); i++) {
		CHECK(!parse(&o, err, sizeof(err), "--port", "80",
			     "--wake-dev", "eth0", "--max-nap", good[i].arg,
			     "--systemd-timers", "no", NULL));
		CHECK(o.max_nap_ms == good[i].ms && !o.systemd_timers);
	}
	CHECK(parse(&o, err, sizeof(err), "--port", "80", "--wake-dev",
		    "eth0", "--max-nap", "9ms", NULL) == -1);
	CHECK(strstr(err, "bad --max-nap '9ms'"));
	CHECK(parse(&o, err, sizeof(err), "--port", "80", "--wake-dev",
		    "eth0", "--max-nap", "", NULL) == -1);
}

static void test_nap_bound(void)
{
	const unsigned long long now = 1764226800000000ULL;

	/* no timer: max-nap, or no bound at all */
	CHECK(nap_bound_ms(5000, 0, now) == 5000);
	CHECK(nap_bound_ms(0, 0, now) == 0);
	/* a timer due sooner ends the nap then, rounded up to the ms */
	CHECK(nap_bound_ms(5000, now + 1200000, now) == 1200);
	CHECK(nap_bound_ms(5000, now + 1200001, now) == 1201);
	CHECK(nap_bound_ms(0, now + 90000000, now) == 90000);
	/* one due later leaves max-nap */
	CHECK(nap_bound_ms(5000, now + 60000000, now) == 5000);
	/* due now or already: as short as an alarm can be */
	CHECK(nap_bound_ms(5000, now, now) == 1);
	CHECK(nap_bound_ms(5000, now - 5, now) == 1);
}

/*
 * As systemd 252 prints it, columns sorted by next: all on one line, one
 * timer a macro here.
 */
#define TIMER_PHPSESSIONCLEAN "{\"next\":1764226860000000,\"left\":1764226860000000,\"last\":1764226800001234,\"passed\":1764226800001234,\"unit\":\"phpsessionclean.timer\",\"activates\":\"phpsessionclean.service\"}"
#define TIMER_LOGROTATE "{\"next\":1764226805500000,\"left\":1764226805500000,\"last\":null,\"passed\":null,\"unit\":\"logrotate.timer\",\"activates\":\"logrotate.service\"}"
#define TIMER_OVERDUE "{\"next\": 1764226790000000,\"left\":1764226790000000,\"last\":null,\"passed\":null,\"unit\":\"overdue.timer\",\"activates\":\"overdue.service\"}"
#define TIMER_DONE "{\"next\":null,\"left\":null,\"last\":1764200000000000,\"passed\":1764200000000000,\"unit\":\"done.timer\",\"activates\":\"done.service\"}"

static const char timers_json[] =
	"[" TIMER_PHPSESSIONCLEAN "," TIMER_LOGROTATE "," TIMER_OVERDUE ","
	TIMER_DONE "]\n";

static void test_timers_json(void)
{
	const unsigned long long now = 1764226800000000ULL;
	unsigned long long next = 42;

	CHECK(timers_parse_json(timers_json, now, &next) == 0);
	CHECK(next == 1764226805500000ULL);
	/* the overdue one is left out: systemd runs it within AccuracySec= */
	CHECK(timers_parse_json(timers_json, 1764226805500000ULL, &next) == 0);
	CHECK(next == 1764226860000000ULL);
	CHECK(timers_parse_json("[]\n", now, &next) == 0 && next == 0);
	CHECK(timers_parse_json("[{\"next\":null}]", now, &next) == 0 &&
	      next == 0);
	CHECK(timers_parse_json("", now, &next) == -1);
	CHECK(timers_parse_json("NEXT LEFT LAST PASSED UNIT\n", now, &next) == -1);
	CHECK(timers_parse_json("[{\"next\":\"soon\"}]", now, &next) == -1);
	CHECK(timers_parse_json("[{\"next\" 5}]", now, &next) == -1);
}

/*
 * Aborted entries in a row (a task that will not freeze fails every
 * entry): after BACKOFF_AFTER of them naps are held off for 1 s, then
 * twice as long after each further one, bounded; one nap that works
 * ends it.  The back-off starts (and is logged) once.
 */
static void test_backoff(void)
{
	const unsigned long long s = 1000000000ULL;
	unsigned long long now = 5 * s;
	struct backoff b = { 0 };
	unsigned long want = BACKOFF_MIN_MS;
	int i, starts = 0;

	/* the first aborted entries are retried at once: a request raced */
	for (i = 1; i < BACKOFF_AFTER; i++) {
		CHECK(!backoff_aborted(&b, now));
		CHECK(backoff_left_ms(&b, now) == 0);
	}
	CHECK(backoff_aborted(&b, now));
	CHECK(backoff_left_ms(&b, now) == BACKOFF_MIN_MS);
	CHECK(backoff_left_ms(&b, now + 400000000ULL) == BACKOFF_MIN_MS - 400);
	CHECK(backoff_left_ms(&b, now + BACKOFF_MIN_MS * 1000000ULL) == 0);
	/* each further one doubles the hold-off, up to the bound */
	for (i = 0; i < 20; i++) {
		now += want * 1000000ULL;
		want = want * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : want * 2;
		starts += backoff_aborted(&b, now);
		CHECK(backoff_left_ms(&b, now) == want);
	}
	CHECK(starts == 0);
	CHECK(want == BACKOFF_MAX_MS);
	CHECK(b.aborted == BACKOFF_AFTER + 20);
	/* a nap that works: over, and says how many it ends */
	CHECK(backoff_nap_ok(&b) == BACKOFF_AFTER + 20);
	CHECK(backoff_left_ms(&b, now) == 0);
	CHECK(backoff_nap_ok(&b) == 0);
	/* the count starts again: a few aborted entries are no back-off */
	CHECK(!backoff_aborted(&b, now));
	CHECK(backoff_nap_ok(&b) == 0);
	for (i = 1; i < BACKOFF_AFTER; i++)
		CHECK(!backoff_aborted(&b, now));
	CHECK(backoff_aborted(&b, now));
	CHECK(backoff_left_ms(&b, now) == BACKOFF_MIN_MS);
}

/*
 * Aborted entries lengthen the quiet time napd waits for (doubling, up
 * to ADAPT_MAX_MS, never below idle-ms); naps that work shorten it
 * again, a step each.
 */
static void test_adapt_quiet(void)
{
	struct backoff b = { 0 };
	int i;

	CHECK(backoff_quiet_ms(&b, 5) == 5);
	CHECK(!backoff_aborted(&b, 0));
	CHECK(backoff_quiet_ms(&b, 5) == 10);
	CHECK(backoff_quiet_ms(&b, 1) == 2);
	/* an idle-ms at or above the bound is left as it is */
	CHECK(backoff_quiet_ms(&b, 64) == 64);
	CHECK(backoff_quiet_ms(&b, 1000) == 1000);
	/* below it, up to the bound and no further */
	CHECK(backoff_quiet_ms(&b, 50) == 64);
	CHECK(!backoff_aborted(&b, 0));
	CHECK(backoff_quiet_ms(&b, 5) == 20);
	for (i = 0; i < 10; i++)
		backoff_aborted(&b, 0);
	CHECK(backoff_quiet_ms(&b, 5) == ADAPT_MAX_MS);
	CHECK(backoff_quiet_ms(&b, 1) == ADAPT_MAX_MS);
	/* each nap that works: one step back */
	backoff_nap_ok(&b);
	CHECK(backoff_quiet_ms(&b, 1) == 32);
	backoff_nap_ok(&b);
	CHECK(backoff_quiet_ms(&b, 1) == 16);
	for (i = 0; i < 10; i++)
		backoff_nap_ok(&b);
	CHECK(backoff_quiet_ms(&b, 5) == 5);
	CHECK(backoff_quiet_ms(&b, 1) == 1);
}

/* ---- units with WatchdogSec= ---- */

/* As systemd 252's systemctl show prints three services (and a stopped one). */
static const char watchdog_show[] =
	"Id=systemd-journald.service\nActiveState=active\nWatchdogUSec=3min\n"
	"\n"
	"Id=mydaemon.service\nWatchdogUSec=1min 30s\nActiveState=reloading\n"
	"\n"
	"Id=stopped.service\nActiveState=inactive\nWatchdogUSec=2s\n"
	"\n"
	"Id=cron.service\nActiveState=active\nWatchdogUSec=0\n";

static void test_watchdog_parse(void)
{
	unsigned long long us = 42;
	char unit[64];

	/* systemd's format_timespan() output, exact (accuracy 0) */
	CHECK(!timespan_parse_us("3min", &us) && us == 180000000ULL);
	CHECK(!timespan_parse_us("1min 30s", &us) && us == 90000000ULL);
	CHECK(!timespan_parse_us("1.500000s", &us) && us == 1500000ULL);
	CHECK(!timespan_parse_us("2s 500ms", &us) && us == 2500000ULL);
	CHECK(!timespan_parse_us("1h 2min 3s 4ms 5us", &us) &&
	      us == 3723004005ULL);
	CHECK(!timespan_parse_us("250\xc2\xb5s", &us) && us == 250);
	CHECK(!timespan_parse_us("1w 1d", &us) && us == 8 * 86400000000ULL);
	CHECK(!timespan_parse_us("0", &us) && us == 0);
	CHECK(!timespan_parse_us("infinity", &us) && us == 0);
	/* the property's own unit, as older systemctl printed it */
	CHECK(!timespan_parse_us("180000000", &us) && us == 180000000ULL);
	CHECK(timespan_parse_us("", &us) == -1);
	CHECK(timespan_parse_us("soon", &us) == -1);
	CHECK(timespan_parse_us("3 fortnights", &us) == -1);
	CHECK(timespan_parse_us("3mins", &us) == -1);

	/* the shortest of the running ones: not the stopped unit's 2 s */
	CHECK(!watchdog_parse_show(watchdog_show, &us, unit, sizeof(unit)));
	CHECK(us == 90000000ULL);
	CHECK_STR(unit, "mydaemon.service");
	CHECK(!watchdog_parse_show("Id=a.service\nActiveState=active\n"
				   "WatchdogUSec=0\n", &us, unit,
				   sizeof(unit)) && us == 0);
	CHECK(!watchdog_parse_show("", &us, unit, sizeof(unit)) && us == 0);
	/* not systemctl show's answer: refused, not "no watchdog" */
	CHECK(watchdog_parse_show("Failed to connect to bus\n", &us, unit,
				  sizeof(unit)) == -1);
	CHECK(watchdog_parse_show("Id=a.service\nActiveState=active\n"
				  "WatchdogUSec=soon\n", &us, unit,
				  sizeof(unit)) == -1);

	/* the bound: a quarter of the shortest, below max-nap */
	CHECK(watchdog_bound_ms(5000, 0) == 5000);
	CHECK(watchdog_bound_ms(0, 0) == 0);
	CHECK(watchdog_bound_ms(5000, 180000000ULL) == 5000);
	CHECK(watchdog_bound_ms(0, 180000000ULL) == 45000);
	CHECK(watchdog_bound_ms(5000, 8000000ULL) == 2000);
	CHECK(watchdog_bound_ms(5000, 1000ULL) == 1);
}

/* A systemctl for show: prints @out if called as napd calls it. */
static const char *fake_systemctl_show(const char *t, const char *out,
				       int rc)
{
	static char path[PATH_MAX];
	char script[PATH_MAX + 256], file[PATH_MAX];

	path_fmt(file, sizeof(file), "%s/show.txt", t);
	put(out, "%s", file);
	path_fmt(path, sizeof(path), "%s/systemctl", t);
	snprintf(script, sizeof(script),
		 "#!/bin/sh\n"
		 "[ \"$*\" = \"--no-pager show --property=Id,ActiveState,WatchdogUSec *.service\" ] || exit 3\n"
		 "cat '%s'\nexit %d\n", file, rc);
	put(script, "%s", path);
	chmod(path, 0755);
	return path;
}

static void test_watchdog_query(void)
{
	const char *t = new_tree("watchdog");
	unsigned long long us = 0;
	char unit[64];

	CHECK(!watchdog_query(fake_systemctl_show(t, watchdog_show, 0), 5000,
			      &us, unit, sizeof(unit)));
	CHECK(us == 90000000ULL);
	CHECK_STR(unit, "mydaemon.service");
	CHECK(watchdog_query(fake_systemctl_show(t, watchdog_show, 1), 5000,
			     &us, unit, sizeof(unit)) == -EPROTO);
	CHECK(watchdog_query("/nonexistent/systemctl", 5000, &us, unit,
			     sizeof(unit)) == -EPROTO);
}

/* A systemctl that prints @out and exits with @rc after @delay. */
static const char *fake_systemctl(const char *t, const char *out, int rc,
				  const char *delay)
{
	static char path[PATH_MAX];
	char script[PATH_MAX + 256], json[PATH_MAX];

	path_fmt(json, sizeof(json), "%s/timers.json", t);
	put(out, "%s", json);
	path_fmt(path, sizeof(path), "%s/systemctl", t);
	/* the arguments napd must pass, or no answer */
	snprintf(script, sizeof(script),
		 "#!/bin/sh\n"
		 "[ \"$*\" = \"--output=json --no-pager list-timers --all\" ] || exit 3\n"
		 "sleep %s\ncat '%s'\nexit %d\n", delay, json, rc);
	put(script, "%s", path);
	chmod(path, 0755);
	return path;
}

static void test_timers_query(void)
{
	const char *t = new_tree("timers");
	const unsigned long long now = 1764226800000000ULL;
	unsigned long long next = 0;

	CHECK(timers_query(fake_systemctl(t, timers_json, 0, "0"), now, 5000,
			   &next) == 0);
	CHECK(next == 1764226805500000ULL);
	CHECK(timers_query(fake_systemctl(t, timers_json, 1, "0"), now, 5000,
			   &next) == -EPROTO);
	CHECK(timers_query(fake_systemctl(t, "Failed to connect to bus\n", 0,
					  "0"), now, 5000, &next) == -EPROTO);
	/* a systemd that does not answer is given up on, not waited for */
	CHECK(timers_query(fake_systemctl(t, timers_json, 0, "30"), now, 300,
			   &next) == -ETIMEDOUT);
	CHECK(timers_query("/nonexistent/systemctl", now, 5000, &next) ==
	      -EPROTO);
	/* sd_booted() */
	CHECK(!timers_systemd_booted(t));
	mkdir_p("%s/systemd/system", t);
	CHECK(timers_systemd_booted(t));
}

static void test_alarm_timerfd(void)
{
	int fd = alarm_open();

	if (fd == -EPERM || fd == -EOPNOTSUPP || fd == -EINVAL) {
		t_skip = "no CLOCK_BOOTTIME_ALARM here";
		return;
	}
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	/* armed and disarmed before it is due: did not fire */
	CHECK(alarm_arm(fd, 10000) == 0);
	CHECK(!alarm_disarm(fd));
	/* due while we wait: fired, and disarm says so once */
	CHECK(alarm_arm(fd, 20) == 0);
	usleep(100000);
	CHECK(alarm_disarm(fd));
	CHECK(!alarm_disarm(fd));
	close(fd);
}

#define NOSLEEP_ALARM "sys/devices/pnp0/00:05/rtc/rtc0/alarmtimer.0.auto/power/nosleep"

/* A bounded nap keeps the alarmtimer device awake; max-nap 0 does not. */
static void test_setup_alarmtimer(void)
{
	const char *t = new_tree("alarmtimer");
	char err[512], sys[PATH_MAX], state[PATH_MAX];
	struct napd_setup s;
	struct napd_opts o;

	build_tree(t, true);
	put("0\n", "%s/" NOSLEEP_ALARM, t);
	link_to("../../../devices/pnp0/00:05/rtc/rtc0/alarmtimer.0.auto",
		"%s/sys/bus/platform/devices/alarmtimer.0.auto", t);
	fake_opts(&o, t, "eth0", "pseudo", NULL, false);
	if (napd_setup(&o, &s, err, sizeof(err))) {
		printf("# napd_setup: %s\n", err);
		t_failed = true;
	}
	CHECK_STR(get("%s/" NOSLEEP_ALARM, t), "1");
	CHECK(!napd_restore(&s));
	CHECK_STR(get("%s/" NOSLEEP_ALARM, t), "0");

	path_fmt(sys, sizeof(sys), "%s/sys", t);
	path_fmt(state, sizeof(state), "%s/state", t);
	put("[s2idle] deep pseudo\n", "%s/sys/power/mem_sleep", t);
	CHECK(!parse(&o, err, sizeof(err), "--port", "80", "--wake-dev",
		     "eth0", "--sysfs-root", sys, "--state-dir", state,
		     "--max-nap", "0", "--systemd-timers", "no", NULL));
	if (napd_setup(&o, &s, err, sizeof(err))) {
		printf("# napd_setup: %s\n", err);
		t_failed = true;
	}
	CHECK_STR(get("%s/" NOSLEEP_ALARM, t), "0");
	CHECK(!napd_restore(&s));
}

/* ---- logind sleep inhibitors ---- */

static const char lock_sleep[] =
	"# This is private data. Do not parse.\n"
	"WHAT=shutdown:sleep\nMODE=block\nUID=0\nPID=99\n"
	"WHO=backup\nWHY=nightly backup\nFIFO=/run/systemd/inhibit/7.ref\n";

static void test_inhibit_parse(void)
{
	char why[192] = "";

	CHECK(inhibit_parse(lock_sleep, why, sizeof(why)) == 1);
	CHECK_STR(why, "sleep inhibitor held by backup (pid 99): nightly backup");
	/* delay mode only delays logind's own suspend; napd does not ask */
	CHECK(inhibit_parse("WHAT=sleep\nMODE=delay\n", why, sizeof(why)) == 0);
	CHECK(inhibit_parse("WHAT=shutdown:idle\nMODE=block\n", why,
			    sizeof(why)) == 0);
	/* a whole word of the list, not a part of one */
	CHECK(inhibit_parse("WHAT=sleepy\nMODE=block\n", why, sizeof(why)) == 0);
	CHECK(inhibit_parse("WHAT=sleep\nMODE=block\n", why, sizeof(why)) == 1);
	CHECK_STR(why, "sleep inhibitor held by ? (pid ?)");
	CHECK(inhibit_parse("", why, sizeof(why)) == 0);
}

static void test_inhibit_dir(void)
{
	const char *t = new_tree("inhibit");
	char dir[PATH_MAX], fifo[PATH_MAX], why[192];

	path_fmt(dir, sizeof(dir), "%s/inhibit", t);
	/* no logind: no directory, no lock */
	CHECK(inhibit_sleep_held(dir, why, sizeof(why)) == 0);
	mkdir_p("%s", dir);
	put("WHAT=shutdown\nMODE=block\nWHO=a\n", "%s/3", dir);
	put("WHAT=sleep\nMODE=delay\nWHO=b\n", "%s/4", dir);
	/* each lock's FIFO sits beside it: never opened for reading */
	path_fmt(fifo, sizeof(fifo), "%s/3.ref", dir);
	CHECK(!mkfifo(fifo, 0600));
	path_fmt(fifo, sizeof(fifo), "%s/7.ref", dir);
	CHECK(!mkfifo(fifo, 0600));
	CHECK(inhibit_sleep_held(dir, why, sizeof(why)) == 0);
	put(lock_sleep, "%s/7", dir);
	CHECK(inhibit_sleep_held(dir, why, sizeof(why)) == 1);
	CHECK_STR(why, "sleep inhibitor held by backup (pid 99): nightly backup");
	/* a FIFO that is not named .ref does not block the walk either */
	path_fmt(fifo, sizeof(fifo), "%s/8", dir);
	CHECK(!mkfifo(fifo, 0600));
	path_fmt(fifo, sizeof(fifo), "%s/7", dir);
	unlink(fifo);
	CHECK(inhibit_sleep_held(dir, why, sizeof(why)) == 0);
}

/* ---- config file ---- */

static void test_config_good(void)
{
	static const char conf[] =
		"# napd settings\n"
		"\n"
		"port = 80, 443\n"
		"  port=8080 \x20\n"		/* \x20: a trailing blank too */
		"udp-port = 53 123\n"
		"wake-dev = eth0\n"
		"idle-ms = 200\n"
		"mode = s2idle\n"
		"process = rsync\n"
		"process = backup.sh\n"
		"cpu-max = 25\n"
		"runnable-max = 2\n"
		"disk-check = no\n"
		"log = yes\n"
		"stats = off\n"
		"status-socket = /tmp/x.sock\n";
	struct napd_opts o;
	char err[256], path[PATH_MAX];
	char *const argv[] = { "napd", "--config", path, "--idle-ms", "7",
			       "--process", "make", NULL };

	napd_parse_opts(&o, 1, (char *[]){ "napd", NULL }, err, sizeof(err));
	CHECK(!napd_parse_config(&o, "t.conf", conf, err, sizeof(err)));
	CHECK(o.nr_ports == 3 && o.ports[0] == 80 && o.ports[1] == 443 &&
	      o.ports[2] == 8080);
	CHECK(o.nr_udp_ports == 2 && o.udp_ports[1] == 123);
	CHECK(o.nr_wake_devs == 1);
	CHECK_STR(o.wake_devs[0], "eth0");
	CHECK(o.idle_ms == 200 && o.mode == NAPD_MODE_S2IDLE);
	CHECK(o.nr_procs == 2);
	CHECK_STR(o.procs[1], "backup.sh");
	CHECK(o.cpu_max == 25 && o.runnable_max == 2 && !o.disk_check);
	CHECK(o.log && !o.stats);
	CHECK_STR(o.status_socket, "/tmp/x.sock");
	napd_opts_free(&o);

	/* defaults without a file */
	napd_parse_opts(&o, 1, (char *[]){ "napd", NULL }, err, sizeof(err));
	CHECK(o.cpu_max == 10 && o.runnable_max == 0 && o.disk_check);
	CHECK_STR(o.status_socket, "/run/napd.sock");

	/* the command line wins; a list option replaces the file's list */
	path_fmt(path, sizeof(path), "%s/good.conf", tmp_root);
	put(conf, "%s", path);
	CHECK(!napd_load_opts(&o, 7, argv, err, sizeof(err)));
	CHECK(o.idle_ms == 7 && o.nr_procs == 1);
	CHECK_STR(o.procs[0], "make");
	CHECK(o.nr_ports == 3 && o.cpu_max == 25);
	napd_opts_free(&o);

	/* an explicit --config must exist */
	path_fmt(path, sizeof(path), "%s/none.conf", tmp_root);
	CHECK(napd_load_opts(&o, 3, argv, err, sizeof(err)) == -1);
	CHECK(strstr(err, "cannot read") && strstr(err, "none.conf"));

	/* a file without port: the message says where it may go */
	path_fmt(path, sizeof(path), "%s/noport.conf", tmp_root);
	put("wake-dev = eth0\n", "%s", path);
	CHECK(napd_load_opts(&o, 3, argv, err, sizeof(err)) == -1);
	CHECK(strstr(err, "missing --port (or port in "));
	napd_opts_free(&o);
}

static void test_config_bad(void)
{
	static const struct {
		const char *text;
		const char *msg;
	} bad[] = {
		{ "port = 80\nbogus = 1\n", "bad.conf:2: unknown key 'bogus'" },
		{ "\n\n\nidle-ms = 0\n", "bad.conf:4: bad idle-ms '0' (1..3600000)" },
		{ "idle-ms = 1.5\n", "bad.conf:1: bad idle-ms '1.5'" },
		{ "port = 80, 0\n", "bad.conf:1: bad port '0' (1..65535)" },
		{ "port 80\n", "bad.conf:1: expected 'key = value'" },
		{ "# c\nmode = sleep\n", "bad.conf:2: bad mode 'sleep'" },
		{ "wake-dev =\n", "bad.conf:1: wake-dev needs a value" },
		{ "cpu-max = 101\n", "bad.conf:1: bad cpu-max '101' (1..100)" },
		{ "runnable-max = -1\n", "bad.conf:1: bad runnable-max '-1'" },
		{ "disk-check = maybe\n", "bad.conf:1: bad disk-check 'maybe' (yes or no)" },
		{ "log = 2\n", "bad.conf:1: bad log '2' (yes or no)" },
		{ "process = a/b\n", "bad.conf:1: bad process 'a/b'" },
		{ "process = averyveryverylongname\n", "bad.conf:1: bad process" },
		{ "help = yes\n", "bad.conf:1: unknown key 'help'" },
		{ "config = /x\n", "bad.conf:1: unknown key 'config'" },
		{ "udp-port = 70000\n", "bad.conf:1: bad udp-port '70000'" },
		{ "max-naps = 0\n", "bad.conf:1: bad max-naps '0'" },
		{ "max-nap = 5x\n", "bad.conf:1: bad max-nap '5x' (0 for none, or 10ms..24h" },
		{ "max-nap = 5ms\n", "bad.conf:1: bad max-nap '5ms'" },
		{ "max-nap = 25h\n", "bad.conf:1: bad max-nap '25h'" },
		{ "max-nap = -1\n", "bad.conf:1: bad max-nap '-1'" },
		{ "max-nap = 1 s\n", "bad.conf:1: bad max-nap '1 s'" },
		{ "systemd-timers = sometimes\n",
		  "bad.conf:1: bad systemd-timers 'sometimes' (yes or no)" },
		{ "sync = sometimes\n",
		  "bad.conf:1: bad sync 'sometimes' (yes or no)" },
		{ "idle-ms = 5\n\nidle-ms = 5\n",
		  "bad.conf:3: duplicate idle-ms (first set on line 1)" },
		{ "log = yes\nlog = no\n", "bad.conf:2: duplicate log" },
		{ "port = ,\n", "bad.conf:1: port needs a value" },
		{ "= 80\n", "bad.conf:1: expected 'key = value', no key" },
		{ "port = 80\x01\n", "bad.conf:1: control character 0x01" },
		{ "\x7f\x80\xfe garbage\n", "bad.conf:1: control character 0x7f" },
		{ "port = 80\r\nwake-dev\r\n",
		  "bad.conf:2: expected 'key = value', got 'wake-dev'" },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		struct napd_opts o;
		char err[256];

		napd_parse_opts(&o, 1, (char *[]){ "napd", NULL }, err,
				sizeof(err));
		/* exactly one error each */
		if (napd_parse_config(&o, "bad.conf", bad[i].text, err,
				      sizeof(err)) != 1 ||
		    !strstr(err, bad[i].msg)) {
			printf("# bad config %u: got '%s', want '%s'\n", i,
			       err, bad[i].msg);
			t_failed = true;
		}
		napd_opts_free(&o);
	}
}

/* Every bad line is reported, each with its line number, in order. */
static void test_config_all_errors(void)
{
	static const char conf[] =
		"port = 80\n"				/* 1: fine */
		"bogus = 1\n"				/* 2: unknown key */
		"idle-ms = 1.5\n"			/* 3: bad number */
		"cpu-max = 101\n"			/* 4: out of range */
		"wake-dev =\n"				/* 5: missing value */
		"# comment\n"				/* 6 */
		"cpu-max = 20\n"			/* 7: duplicate */
		"@@@ ###\n"				/* 8: garbage */
		"port = 443, 0, 99999\n"		/* 9: two bad values */
		"mode = s2idle\n";			/* 10: fine */
	static const char *const want[] = {
		"c.conf:2: unknown key 'bogus'",
		"c.conf:3: bad idle-ms '1.5' (1..3600000)",
		"c.conf:4: bad cpu-max '101' (1..100)",
		"c.conf:5: wake-dev needs a value",
		"c.conf:7: duplicate cpu-max (first set on line 4)",
		"c.conf:8: expected 'key = value', got '@@@ ###'",
		"c.conf:9: bad port '0' (1..65535)",
		"c.conf:9: bad port '99999' (1..65535)",
	};
	char err[2048], small[200], *p = err;
	struct napd_opts o;
	unsigned int i;

	napd_parse_opts(&o, 1, (char *[]){ "napd", NULL }, err, sizeof(err));
	CHECK(napd_parse_config(&o, "c.conf", conf, err, sizeof(err)) == 8);
	for (i = 0; i < ARRAY_SIZE(want); i++) {
		size_t len = strcspn(p, "\n");
		char line[256];

		snprintf(line, sizeof(line), "%.*s", (int)len, p);
		CHECK_STR(line, want[i]);
		p += len + (p[len] == '\n');
	}
	CHECK(!*p);
	/* the good lines still applied: nothing is lost to a bad one */
	CHECK(o.mode == NAPD_MODE_S2IDLE && o.nr_ports == 2);
	napd_opts_free(&o);

	/* what does not fit is counted, never cut in the middle */
	napd_parse_opts(&o, 1, (char *[]){ "napd", NULL }, err, sizeof(err));
	CHECK(napd_parse_config(&o, "c.conf", conf, small, sizeof(small)) ==
	      8);
	CHECK(strstr(small, "c.conf:2: unknown key 'bogus'\n") == small);
	CHECK(strstr(small, " more errors"));
	CHECK(strlen(small) < sizeof(small));
	napd_opts_free(&o);

	/* a good file: 0, nothing in err */
	napd_parse_opts(&o, 1, (char *[]){ "napd", NULL }, err, sizeof(err));
	CHECK(napd_parse_config(&o, "c.conf", "port = 80\n# x\n\nlog = 1\n",
				err, sizeof(err)) == 0);
	CHECK_STR(err, "");
	napd_opts_free(&o);
}

static void test_opts_new_bad(void)
{
	static const char *const bad[][4] = {
		{ "--cpu-max", "0" }, { "--cpu-max", "x" },
		{ "--runnable-max", "" }, { "--disk-check", "1x" },
		{ "--process", "" }, { "--udp-port", "0" },
		{ "--status-socket", "" }, { "--config", "" },
		{ "--status=1" }, { "--log=yes" },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		char *argv[8] = { "napd", "--port", "80", "--wake-dev",
				  "eth0" }, err[256];
		struct napd_opts o;
		int argc = 5;

		argv[argc++] = (char *)bad[i][0];
		if (bad[i][1])
			argv[argc++] = (char *)bad[i][1];
		if (napd_parse_opts(&o, argc, argv, err, sizeof(err)) != -1) {
			printf("# bad option %s accepted\n", bad[i][0]);
			t_failed = true;
		}
	}
}

/* ---- idle checks on canned /proc files ---- */

static void test_proc_stat(void)
{
	struct cpu_sample a, b;

	CHECK(!parse_proc_stat(proc_stat_idle, &a));
	CHECK(a.busy == 1330 && a.total == 51370 && a.running == 1);
	CHECK(!parse_proc_stat("cpu  1500 20 300 50500 40 0 10 0 0 0\n"
			       "procs_running 3\n", &b));
	CHECK(b.running == 3);
	/* 500 busy of 1000 ticks: 50.0 % */
	CHECK(cpu_use_permille(&a, &b) == 500);
	CHECK(cpu_use_permille(&a, &a) == 0);
	CHECK(cpu_use_permille(&b, &a) == 0);
	/* napd's own 300 ticks of it are not the machine's work */
	a.self = 100;
	b.self = 400;
	CHECK(cpu_use_permille(&a, &b) == 200);
	/* sampled apart, own ticks may exceed the busy ones: 0, not less */
	b.self = 100000;
	CHECK(cpu_use_permille(&a, &b) == 0);
	CHECK(!parse_proc_stat(proc_stat_idle, &a) && a.self == 0);
	/* a kernel before 2.6.11 or garbage: refused, not idle */
	CHECK(parse_proc_stat("cpu  1 2 3\nprocs_running 1\n", &b) == -1);
	CHECK(parse_proc_stat("cpu  1 2 3 4\n", &b) == -1);
	CHECK(parse_proc_stat("cpu0 1 2 3 4\nprocs_running 1\n", &b) == -1);
}

static void test_diskstats(void)
{
	struct disk_sample d;

	CHECK(!parse_diskstats(diskstats_idle, &d));
	/* sda 1000+500+0(discards)+30(flushes), sda1 900+500 */
	CHECK(d.ios == 2930 && d.in_flight == 0);
	CHECK(!parse_diskstats(" 253 0 vda 10 0 0 0 5 0 0 0 2 0 0\n", &d));
	CHECK(d.ios == 15 && d.in_flight == 2);
	CHECK(!parse_diskstats("", &d) && d.ios == 0);
	CHECK(parse_diskstats(" 8 0 sda 1 2 3\n", &d) == -1);
}

static void test_processes(void)
{
	const char *t = new_tree("procs");
	static const char *const names[] = { "rsync", "my job)" };
	char proc[PATH_MAX], found[64], comm[32];

	CHECK(parse_pid_stat("42 (a b) c) R 1 2", comm, sizeof(comm)) == 'R');
	CHECK_STR(comm, "a b) c");
	CHECK(parse_pid_stat("42 sh S", comm, sizeof(comm)) == 0);

	path_fmt(proc, sizeof(proc), "%s/proc", t);
	put("1 (init) S 0\n", "%s/proc/1/stat", t);
	put("init\n", "%s/proc/1/comm", t);
	put("7 (rsync) Z 1\n", "%s/proc/7/stat", t);		/* zombie */
	put("rsync\n", "%s/proc/7/comm", t);
	put("9 (rsync) S 1\n", "%s/proc/self/stat", t);	/* not a pid */
	put("rsync\n", "%s/proc/self/comm", t);
	mkdir_p("%s/proc/8", t);				/* gone */
	CHECK(find_process(proc, names, 2, 0, found, sizeof(found)) == 0);
	put("12 (rsync) D 1\n", "%s/proc/12/stat", t);
	put("rsync\n", "%s/proc/12/comm", t);
	CHECK(find_process(proc, names, 2, 0, found, sizeof(found)) == 1);
	CHECK_STR(found, "rsync (pid 12)");
	/* napd itself never counts */
	CHECK(find_process(proc, names, 2, 12, found, sizeof(found)) == 0);
	put("13 (my job)) R 1\n", "%s/proc/13/stat", t);
	put("my job)\n", "%s/proc/13/comm", t);
	CHECK(find_process(proc, names, 2, 12, found, sizeof(found)) == 1);
	CHECK(find_process(proc, names, 0, 0, found, sizeof(found)) == 0);
	path_fmt(proc, sizeof(proc), "%s/nonexistent", t);
	CHECK(find_process(proc, names, 2, 0, found, sizeof(found)) < 0);
}

static void test_udp(void)
{
	static const char udp[] = {
"   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops\n"
"  123: 00000000:0035 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 1111 2 0000000000000000 0\n"
"  124: 00000000:007B 00000000:0000 07 00000000:00000340 00:00000000 00000000     0        0 1112 2 0000000000000000 0\n"
"  125: 0100007F:0202 00000000:0000 07 00000100:00000000 00:00000000 00000000     0        0 1113 2 0000000000000000 0\n"
	};
	unsigned short dns[] = { 53 }, ntp[] = { 123 }, both[] = { 53, 514, 123 };

	CHECK(procnet_udp_busy(udp, dns, 1) == 0);	/* bound, nothing queued */
	CHECK(procnet_udp_busy(udp, ntp, 1) == 1);	/* rx_queue 0x340 */
	CHECK(procnet_udp_busy(udp, both, 3) == 2);	/* 514: tx_queue */
	CHECK(procnet_udp_busy("  1: 0000:0035\n", dns, 1) == -1);
}

/* ---- RX vectors of the wake device ---- */

static void test_rx_vectors(void)
{
	static const char ixgbe[] =
"            CPU0       CPU1\n"
"  60:          1          0   PCI-MSI 1048576-edge      eth0-TxRx-0\n"
"  61:          0          1   PCI-MSI 1048577-edge      eth0-TxRx-1\n"
"  62:          0          0   PCI-MSI 1048578-edge      eth0\n";
	static const char split[] =
"  70:          1   PCI-MSI 1-edge      enp1s0-rx-0\n"
"  71:          1   PCI-MSI 2-edge      enp1s0-rx-1\n"
"  72:          1   PCI-MSI 3-edge      enp1s0-tx-0\n"
"  73:          1   PCI-MSI 4-edge      enp1s0-tx-1\n";
	unsigned int a[] = { 24, 25, 26 }, b[] = { 62, 61, 60 };
	unsigned int c[] = { 73, 72, 71, 70 }, d[] = { 41 };
	char names[64];

	/* virtio: input.0 only, config and output stay unarmed */
	CHECK(procnet_rx_vectors(interrupts_virtio, a, 3, names,
				 sizeof(names)) == 1);
	CHECK(a[0] == 25);
	CHECK_STR(names, "virtio0-input.0");
	/* combined TxRx vectors receive too; the link vector does not */
	CHECK(procnet_rx_vectors(ixgbe, b, 3, names, sizeof(names)) == 2);
	CHECK((b[0] == 61 && b[1] == 60) || (b[0] == 60 && b[1] == 61));
	CHECK(b[2] == 62);
	CHECK(procnet_rx_vectors(split, c, 4, names, sizeof(names)) == 2);
	CHECK(c[0] == 71 || c[0] == 70);
	CHECK_STR(names, "enp1s0-rx-0,enp1s0-rx-1");
	/* one vector named after the device: cannot tell, none picked */
	CHECK(procnet_rx_vectors(interrupts_virtio, d, 1, names,
				 sizeof(names)) == 0);
	/* small names buffer: cut, not overrun */
	CHECK(procnet_rx_vectors(split, c, 4, names, 8) == 2);
	CHECK(strlen(names) < 8);
}

/* ---- sd_notify and the status socket ---- */

static void test_notify_format(void)
{
	char buf[128];

	CHECK(notify_format(buf, sizeof(buf), true, false, "ok") == 18);
	CHECK_STR(buf, "READY=1\nSTATUS=ok\n");
	CHECK(notify_format(buf, sizeof(buf), false, true, NULL) > 0);
	CHECK_STR(buf, "STOPPING=1\n");
	CHECK(notify_format(buf, sizeof(buf), false, false, "a\nb") > 0);
	CHECK_STR(buf, "STATUS=a b\n");
	CHECK(notify_format(buf, 10, true, false, "too long") == -1);
}

static bool notify_roundtrip(const char *path, bool abstract)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len = sizeof(sa);
	char buf[128];
	ssize_t n;
	int fd;

	fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (abstract) {
		sa.sun_path[0] = '\0';
		len = offsetof(struct sockaddr_un, sun_path) + strlen(path);
	} else {
		unlink(path);
	}
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, len)) {
		printf("# cannot bind %s\n", path);
		return false;
	}
	setenv("NOTIFY_SOCKET", path, 1);
	CHECK(notify(true, false, "serving") == 0);
	unsetenv("NOTIFY_SOCKET");
	n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
	close(fd);
	if (!abstract)
		unlink(path);
	if (n < 0)
		return false;
	buf[n] = '\0';
	CHECK_STR(buf, "READY=1\nSTATUS=serving\n");
	return true;
}

static void test_notify_send(void)
{
	char path[PATH_MAX];

	path_fmt(path, sizeof(path), "%s/notify", tmp_root);
	CHECK(notify_roundtrip(path, false));
	path_fmt(path, sizeof(path), "@napd-test-%d", (int)getpid());
	CHECK(notify_roundtrip(path, true));
	/* no NOTIFY_SOCKET: nothing to do, no error */
	unsetenv("NOTIFY_SOCKET");
	CHECK(notify(true, false, NULL) == 0);
	CHECK(notify_send("relative", "READY=1\n") == -EINVAL);
	path_fmt(path, sizeof(path), "%s/nobody", tmp_root);
	CHECK(notify_send(path, "READY=1\n") < 0);
}

static void echo_req(void *ctx, const char *req, char *answer, size_t size)
{
	(void)ctx;
	snprintf(answer, size, "{\"req\":\"%s\"}\n", req);
}

static void test_status_json(void)
{
	char gfile[PATH_MAX], gname[64];
	struct stat sst;
	bool shared;
	struct napd_stats st;
	char buf[1024], path[PATH_MAX], err[256];
	FILE *f;
	int fd, fd2;

	stats_init(&st);
	CHECK(stats_format_status(&st, 42, 50, buf, sizeof(buf)) > 0);
	CHECK_STR(buf,
		  "{\"pid\":42,\"idle_ms\":50,\"naps\":0,\"aborted\":0,\"handshake_refused\":0,\"asleep_ns\":0,\"alarm_wakes\":0,\"paused\":null,\"last_wake_irq\":null,\"last_wake_latency_ns\":null,\"last_blocked\":null,\"blocked\":{\"connections\":0,\"packets\":0,\"udp\":0,\"process\":0,\"cpu\":0,\"runnable\":0,\"disk\":0,\"handshake\":0,\"inhibitor\":0,\"paused\":0,\"backoff\":0,\"wake_source\":0,\"link\":0},\"wake_irqs\":{}}\n");
	st.naps = 3;
	st.nap_ns = 1500;
	stats_wake_irq(&st, 25);
	st.last_latency_ns = 4000;
	st.blocked[CHECK_CPU] = 2;
	st.last_blocked = CHECK_PROCESS;
	snprintf(st.last_why, sizeof(st.last_why), "a \"q\"\\\x20\n");
	CHECK(stats_format_status(&st, 42, 50, buf, sizeof(buf)) > 0);
	CHECK(strstr(buf, "\"naps\":3,") && strstr(buf, "\"asleep_ns\":1500,"));
	CHECK(strstr(buf, "\"last_wake_irq\":25,\"last_wake_latency_ns\":4000,"));
	CHECK_HAS(buf,
		  "\"last_blocked\":{\"check\":\"process\",\"why\":\"a \\\"q\\\"\\\\ \\u000a\"}");
	CHECK(strstr(buf, "\"cpu\":2,"));
	CHECK(strstr(buf, "\"wake_irqs\":{\"25\":1}}"));
	CHECK(stats_format_status(&st, 42, 50, buf, 40) == -1);
	st.pause_left_ms = 1500;
	CHECK(stats_format_status(&st, 42, 50, buf, sizeof(buf)) > 0);
	CHECK(strstr(buf, "\"paused\":{\"left_ms\":1500},"));
	st.pause_left_ms = -2;
	CHECK(stats_format_status(&st, 42, 50, buf, sizeof(buf)) > 0);
	CHECK(strstr(buf, "\"paused\":{\"left_ms\":null},"));

	/* the socket: serve one answer, refuse a second live listener */
	path_fmt(path, sizeof(path), "%s/ctl.sock", tmp_root);
	fd = ctl_listen(path, -1, &shared, err, sizeof(err));
	CHECK(fd >= 0);
	CHECK(!stat(path, &sst) && (sst.st_mode & 0777) == 0600);
	fd2 = ctl_listen(path, -1, &shared, err, sizeof(err));
	CHECK(fd2 < 0 && strstr(err, "another napd"));
	if (fd >= 0) {
		int s = socket(AF_UNIX, SOCK_STREAM, 0);
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		char got[64] = "";
		ssize_t n;

		CHECK(!path_fmt(sa.sun_path, sizeof(sa.sun_path), "%s", path));
		/* a client that sends nothing: request "", after a wait */
		CHECK(!connect(s, (struct sockaddr *)&sa, sizeof(sa)));
		ctl_serve(fd, echo_req, NULL);
		n = read(s, got, sizeof(got) - 1);
		got[n > 0 ? n : 0] = '\0';
		CHECK_STR(got, "{\"req\":\"\"}\n");
		close(s);
		/* one that sends its line first */
		s = socket(AF_UNIX, SOCK_STREAM, 0);
		CHECK(!connect(s, (struct sockaddr *)&sa, sizeof(sa)));
		CHECK(write(s, "pause 5s\r\n", 10) == 10);
		ctl_serve(fd, echo_req, NULL);
		n = read(s, got, sizeof(got) - 1);
		got[n > 0 ? n : 0] = '\0';
		CHECK_STR(got, "{\"req\":\"pause 5s\"}\n");
		close(s);
		close(fd);	/* "killed": the socket file stays */
	}
	/* a stale socket file is replaced; a group's socket is 0660 */
	fd = ctl_listen(path, getgid(), &shared, err, sizeof(err));
	CHECK(fd >= 0);
	CHECK(shared && !stat(path, &sst) && (sst.st_mode & 0777) == 0660 &&
	      sst.st_gid == getgid());
	/* /etc/group by hand: napd is static, without NSS */
	path_fmt(gfile, sizeof(gfile), "%s/group", tmp_root);
	put("root:x:0:\nnapd:x:998:alice,bob\nbad:x:zz:\nnapdx:x:5:\n", "%s", gfile);
	CHECK(ctl_group_gid(gfile, "napd") == 998);
	CHECK(ctl_group_gid(gfile, "nap") == -1);
	CHECK(ctl_group_gid(gfile, "bad") == -1);
	ctl_group_name(gfile, 998, gname, sizeof(gname));
	CHECK_STR(gname, "napd");
	ctl_group_name(gfile, 7, gname, sizeof(gname));
	CHECK_STR(gname, "gid 7");
	unlink(gfile);
	/* who may use it, when one may not */
	ctl_explain(path, -EACCES, 30, err, sizeof(err));
	CHECK(strstr(err, "permission denied on ") && strstr(err, "(mode 0660, group ") &&
	      strstr(err, "run as root or as a member of group "));
	CHECK(!chmod(path, 0600));
	ctl_explain(path, -EACCES, 30, err, sizeof(err));
	CHECK(strstr(err, "(mode 0600): root only; set socket-group"));
	ctl_explain(path, -ECONNREFUSED, 30, err, sizeof(err));
	CHECK(strstr(err, "nobody listens on ") && strstr(err, "napd is not running"));
	ctl_explain(path, -ETIMEDOUT, 30, err, sizeof(err));
	CHECK(strstr(err, "did not answer") && strstr(err, "within 30 s"));
	ctl_close(fd, path);
	CHECK(!path_exists(path));
	f = fopen("/dev/null", "w");
	CHECK(ctl_query(path, "status", f, 1) == -ENOENT);
	fclose(f);
	ctl_explain(path, -ENOENT, 30, err, sizeof(err));
	CHECK(strstr(err, "does not exist: napd is not running"));
	/* not a socket: refused, not removed */
	put("x", "%s", path);
	CHECK(ctl_listen(path, -1, &shared, err, sizeof(err)) < 0);
	CHECK(path_exists(path));
	unlink(path);
}

/* ---- the napd binary against the fake tree ---- */

#define NAPD_TIMEOUT_MS		5000

/*
 * Run napd with @argv, stdout and stderr to @out, and SIGTERM it after
 * @term_after_ms if that is nonzero.  Returns the exit code, or -1 if it
 * did not exit by itself in time.
 */
/*
 * Like a kernel's, the fake /proc/stat moves on with time: 10 idle ticks
 * per poll of the test, the other lines kept, before the test's own
 * tick (which may rewrite the file).  napd never takes a window
 * without ticks for an idle one, so a stalled test only delays it.
 */
static void idle_ticks(const char *proc)
{
	unsigned long long f[4];
	char path[PATH_MAX], *text, *rest, line[512];

	path_fmt(path, sizeof(path), "%s/stat", proc);
	text = read_whole(path);
	if (!text)
		return;
	rest = strchr(text, '\n');
	if (sscanf(text, "cpu %llu %llu %llu %llu", &f[0], &f[1], &f[2],
		   &f[3]) == 4) {
		snprintf(line, sizeof(line), "cpu  %llu %llu %llu %llu 0 0 0 0 0 0%s",
			 f[0], f[1], f[2], f[3] + 10, rest ? rest : "\n");
		put(line, "%s", path);
	}
	free(text);
}

static void busy_cpu(void *arg);

static int run_napd_tick(char *const argv[], const char *out,
			 int term_after_ms, void (*tick)(void *), void *arg)
{
	const char *proc = NULL;
	int status, ms, i;
	pid_t pid;

	for (i = 0; argv[i] && argv[i + 1]; i++)
		if (!strcmp(argv[i], "--proc-root"))
			proc = argv[i + 1];
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		dup2(fd, 1);
		dup2(fd, 2);
		execv(napd_bin, argv);
		_exit(127);
	}
	/*
	 * Poll rather than block so that a napd that never naps (or never
	 * exits) fails the test instead of hanging it.
	 */
	for (ms = 0; ; ms += 10) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		if ((term_after_ms && ms == term_after_ms) ||
		    ms == NAPD_TIMEOUT_MS) {
			if (ms == NAPD_TIMEOUT_MS)
				printf("# napd still running after %d ms\n", ms);
			kill(pid, SIGTERM);
		}
		if (ms >= NAPD_TIMEOUT_MS + 2000) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return -1;
		}
		/* busy_cpu() plays the kernel's /proc/stat by itself */
		if (proc && tick != busy_cpu)
			idle_ticks(proc);
		if (tick)
			tick(arg);
		usleep(10000);
	}
	if (!WIFEXITED(status) || (ms >= NAPD_TIMEOUT_MS && !term_after_ms))
		return -1;
	return WEXITSTATUS(status);
}

static int run_napd(char *const argv[], const char *out, int term_after_ms)
{
	return run_napd_tick(argv, out, term_after_ms, NULL, NULL);
}

static bool out_has(const char *out, const char *what)
{
	char *text = read_whole(out);
	bool found = text && strstr(text, what);

	if (!found)
		printf("# '%s' not in output:\n# %s\n", what,
		       text ? text : "(none)");
	free(text);
	return found;
}

/* Like out_has(), without the diagnostics: for what must be absent. */
static bool out_has_quiet(const char *out, const char *what)
{
	char *text = read_whole(out);
	bool found = text && strstr(text, what);

	free(text);
	return found;
}

static char ctl_sock[PATH_MAX];

#define NAPD_ARGS(sys, proc)						\
	(char *)napd_bin, "--port", "80", "--port", "11211",		\
	"--wake-dev", "eth0", "--idle-ms", "5", "--keep-awake",		\
	"ttyS0", "--sysfs-root", sys, "--proc-root", proc, "--stats",	\
	"--config", "/dev/null", "--status-socket", ctl_sock,		\
	"--state-dir", state_dir, "--inhibitors", "no",			\
	"--systemd-timers", "no"

static void check_restored(const char *t)
{
	CHECK_STR(get("%s/sys/power/mem_sleep", t), "s2idle");
	CHECK_STR(get("%s/sys/power/sync_on_suspend", t), "1");
	CHECK_STR(get("%s/sys/power/wake_irq", t), "");
	CHECK_STR(get("%s/" NOSLEEP_ETH0, t), "0");
	CHECK_STR(get("%s/" NOSLEEP_TTY, t), "0");
}

static void test_napd_exit_codes(void)
{
	char *const bogus[] = { (char *)napd_bin, "--bogus", NULL };
	char *const help[] = { (char *)napd_bin, "--help", NULL };
	char *const noport[] = { (char *)napd_bin, "--wake-dev", "eth0", NULL };
	char out[PATH_MAX];

	path_fmt(out, sizeof(out), "%s/out-codes", tmp_root);
	CHECK(run_napd(bogus, out, 0) == 2);
	CHECK(out_has(out, "Usage:"));
	CHECK(run_napd(noport, out, 0) == 2);
	CHECK(run_napd(help, out, 0) == 0);
}

/* The --sysfs-root, --proc-root and output file of a run in tree @t. */
static void tree_paths(const char *t, char *sys, char *proc, char *out)
{
	path_fmt(sys, PATH_MAX, "%s/sys", t);
	path_fmt(proc, PATH_MAX, "%s/proc", t);
	path_fmt(out, PATH_MAX, "%s/out", t);
}

static void test_napd_naps(void)
{
	const char *t = new_tree("run");
	char sys[PATH_MAX], proc[PATH_MAX], out[PATH_MAX];
	char *const argv[] = { NAPD_ARGS(sys, proc), "--log", "--max-naps", "2",
			       NULL };

	build_tree(t, true);
	tree_paths(t, sys, proc, out);

	CHECK(run_napd(argv, out, 0) == 0);
	CHECK_OUT(out,
		  "{\"naps\":2,\"aborted\":0,\"handshake_refused\":0,\"nap_ns\":2000000,\"wake_irqs\":{\"25\":2},\"held_back\":{");
	CHECK(out_has(out,
		      "duration_ns=1000000 wake_irq=25 wake_latency_ns=4000 aborted=0"));
	CHECK(out_has(out, "napd: summary naps=2"));
	/* the handshake wrote the count back, then "mem" */
	CHECK_STR(get("%s/sys/power/wakeup_count", t), "7");
	CHECK_STR(get("%s/sys/power/state", t), "mem");
	check_restored(t);

	/* without CONFIG_PM_SLEEP_DEBUG: pseudosleep/last_wake_irq */
	path_fmt(out, sizeof(out), "%s/sys/power/pm_wakeup_irq", t);
	unlink(out);
	put("24\n", "%s/sys/power/pseudosleep/last_wake_irq", t);
	put("[s2idle] deep pseudo\n", "%s/sys/power/mem_sleep", t);
	path_fmt(out, sizeof(out), "%s/out", t);
	CHECK(run_napd(argv, out, 0) == 0);
	CHECK(out_has(out, "\"wake_irqs\":{\"24\":2},"));
}

static void test_napd_sigterm_busy(void)
{
	const char *t = new_tree("busy");
	char sys[PATH_MAX], proc[PATH_MAX], out[PATH_MAX];
	char *const argv[] = { NAPD_ARGS(sys, proc), NULL };

	build_tree(t, true);
	put(tcp_busy, "%s/proc/net/tcp", t);
	tree_paths(t, sys, proc, out);

	/* an ESTABLISHED connection on :80 keeps it awake until SIGTERM */
	CHECK(run_napd(argv, out, 300) == 0);
	CHECK(out_has(out, "{\"naps\":0,"));
	CHECK_STR(get("%s/sys/power/state", t), "freeze mem disk");
	check_restored(t);
}

/*
 * Count a packet in place: napd keeps rx_packets open and preads it, and
 * a truncating rewrite could show it an empty file.  Same width, no
 * truncation.
 */
static void bump_rx(void *path)
{
	static unsigned long rx = 200000;
	char val[32];
	int fd, len;

	len = snprintf(val, sizeof(val), "%lu\n", rx++);
	fd = open(path, O_WRONLY);
	if (fd < 0 || pwrite(fd, val, len, 0) != len)
		t_failed = true;
	if (fd >= 0)
		close(fd);
}

static void test_napd_rx_traffic(void)
{
	const char *t = new_tree("rx");
	char sys[PATH_MAX], proc[PATH_MAX], out[PATH_MAX], rx[PATH_MAX];
	/* the later --idle-ms wins */
	char *const argv[] = { NAPD_ARGS(sys, proc), "--idle-ms", "200", NULL };

	build_tree(t, true);
	tree_paths(t, sys, proc, out);
	path_fmt(rx, sizeof(rx), "%s/sys/class/net/eth0/statistics/rx_packets",
		 t);

	/* packets every 10 ms, no connection: never 200 ms of quiet */
	CHECK(run_napd_tick(argv, out, 500, bump_rx, rx) == 0);
	CHECK(out_has(out, "{\"naps\":0,"));
	CHECK_STR(get("%s/sys/power/state", t), "freeze mem disk");
	check_restored(t);
}

static void test_napd_dry_run(void)
{
	const char *t = new_tree("dryrun");
	char sys[PATH_MAX], proc[PATH_MAX], out[PATH_MAX];
	char *const argv[] = { NAPD_ARGS(sys, proc), "--dry-run", "--max-naps",
			       "1", NULL };

	build_tree(t, true);
	tree_paths(t, sys, proc, out);

	CHECK(run_napd(argv, out, 0) == 0);
	CHECK(out_has(out, "would nap"));
	CHECK(out_has(out, "would write 'pseudo' to"));
	CHECK(out_has(out, "would write '25' to"));
	CHECK_STR(get("%s/sys/power/mem_sleep", t), "[s2idle] deep pseudo");
	CHECK_STR(get("%s/sys/power/state", t), "freeze mem disk");
	CHECK_STR(get("%s/" NOSLEEP_ETH0, t), "0");
}

static void test_napd_errors(void)
{
	const char *t = new_tree("errors");
	char sys[PATH_MAX], proc[PATH_MAX], out[PATH_MAX];
	char *const argv[] = { NAPD_ARGS(sys, proc), "--max-naps", "1", NULL };

	tree_paths(t, sys, proc, out);

	/* no pseudo-sleep: exit 1 with a clear message, nothing touched */
	build_tree(t, false);
	CHECK(run_napd(argv, out, 0) == 1);
	CHECK(out_has(out, "no pseudo-sleep"));
	CHECK_STR(get("%s/sys/power/mem_sleep", t), "[s2idle] deep");

	/* writing "mem" fails hard (EISDIR): exit 1, all restored */
	t = new_tree("errors2");
	path_fmt(sys, sizeof(sys), "%s/sys", t);
	path_fmt(proc, sizeof(proc), "%s/proc", t);
	build_tree(t, true);
	path_fmt(out, sizeof(out), "%s/sys/power/state", t);
	unlink(out);
	mkdir_p("%s", out);
	path_fmt(out, sizeof(out), "%s/out", t);
	CHECK(run_napd(argv, out, 0) == 1);
	CHECK(out_has(out, "cannot write 'mem'"));
	check_restored(t);

	/* setup fails half way (ttyS0's nosleep unreadable): undone */
	t = new_tree("errors3");
	path_fmt(sys, sizeof(sys), "%s/sys", t);
	path_fmt(proc, sizeof(proc), "%s/proc", t);
	build_tree(t, true);
	path_fmt(out, sizeof(out), "%s/" NOSLEEP_TTY, t);
	unlink(out);
	mkdir_p("%s", out);
	path_fmt(out, sizeof(out), "%s/out", t);
	CHECK(run_napd(argv, out, 0) == 1);
	CHECK(out_has(out, "cannot read"));
	CHECK_STR(get("%s/sys/power/mem_sleep", t), "s2idle");
	CHECK_STR(get("%s/sys/power/wake_irq", t), "");
	CHECK_STR(get("%s/" NOSLEEP_ETH0, t), "0");
}

/* A fake tree and the napd command line for it, --log on. */
struct fake_run {
	char t[PATH_MAX], sys[PATH_MAX], proc[PATH_MAX], out[PATH_MAX];
	char *argv[40];
	int argc;
	int ticks;
};

static void fake_run(struct fake_run *r, const char *name, ...)
{
	char *const base[] = { NAPD_ARGS(r->sys, r->proc), "--log", NULL };
	va_list ap;
	char *a;
	int i;

	path_fmt(r->t, sizeof(r->t), "%s", new_tree(name));
	build_tree(r->t, true);
	path_fmt(r->sys, sizeof(r->sys), "%s/sys", r->t);
	path_fmt(r->proc, sizeof(r->proc), "%s/proc", r->t);
	path_fmt(r->out, sizeof(r->out), "%s/out", r->t);
	r->ticks = 0;
	for (i = 0; base[i]; i++)
		r->argv[i] = base[i];
	va_start(ap, name);
	while ((a = va_arg(ap, char *)) && i < 39)
		r->argv[i++] = a;
	va_end(ap);
	r->argv[i] = NULL;
	r->argc = i;
}

static const char net_dev[] = {
"Inter-|   Receive                                                |  Transmit\n"
" face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n"
"    lo:  123456     100    0    0    0     0          0         0   123456     100    0    0    0     0       0          0\n"
"  eth0: 9876543    2000    0    0    0     0          0         0   555555    1500    0    0    0     0       0          0\n"
};

static void test_net_dev(void)
{
	unsigned long long rx;

	CHECK(!procnet_dev_rx(net_dev, &rx) && rx == 2100);
	CHECK(!procnet_dev_rx("", &rx) && rx == 0);
	CHECK(procnet_dev_rx("  eth0 1 2\n", &rx) == -1);
}

static const char snmp_text[] =
	"Ip: Forwarding DefaultTTL InReceives\n"
	"Ip: 2 64 500\n"
	"Icmp: InMsgs InErrors\n"
	"Icmp: 40 0\n"
	"Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails EstabResets CurrEstab InSegs OutSegs RetransSegs InErrs OutRsts\n"
	"Tcp: 1 200 120000 -1 0 3 0 0 1 123 130 0 0 20\n"
	"Udp: InDatagrams NoPorts InErrors OutDatagrams\n"
	"Udp: 7 55 0 7\n"
	"UdpLite: InDatagrams NoPorts\n"
	"UdpLite: 0 0\n";

/*
 * Wake on task: only what reaches sockets counts (not NoPorts, not ICMP,
 * not a SYN to a closed port, which the kernel answers with a reset).
 */
static void test_snmp_in(void)
{
	unsigned long long in = 0, before;

	CHECK(!procnet_snmp_in(snmp_text, &in) && in == 123 - 20 + 7);
	CHECK(procnet_snmp_in("Ip: a\nIp: 1\n", &in) == -1);
	CHECK(procnet_snmp_in("Tcp: InSegs\nUdp: 5\n", &in) == -1);
	CHECK(procnet_snmp_in("Tcp: InSegs\nTcp: 5\nUdp: InDatagrams\nUdp: 1\n",
			      &in) == -1);
	/* A SYN to a closed port and its reset: no change. */
	CHECK(!procnet_snmp_in("Tcp: InSegs OutRsts\nTcp: 10 4\nUdp: InDatagrams\nUdp: 1\n",
			       &before));
	CHECK(!procnet_snmp_in("Tcp: InSegs OutRsts\nTcp: 11 5\nUdp: InDatagrams\nUdp: 1\n",
			       &in) && in == before);
	/* A segment for a socket: a change. */
	CHECK(!procnet_snmp_in("Tcp: InSegs OutRsts\nTcp: 12 5\nUdp: InDatagrams\nUdp: 1\n",
			       &in) && in != before);
	/* IPv6 UDP is counted in snmp6 only. */
	CHECK(!procnet_snmp6_in("Udp6InErrors 3\nUdp6InDatagrams   \t42\nUdp6NoPorts 9\n",
				&in) && in == 42);
	CHECK(procnet_snmp6_in("Ip6InReceives 5\nUdp6NoPorts 9\n", &in) == -1);
	CHECK(procnet_snmp6_in("Udp6InDatagrams x\n", &in) == -1);
}

/* CapEff for a fake --proc-root: CAP_SYS_PTRACE 19, CAP_BLOCK_SUSPEND 36. */
static void put_caps(const char *t, unsigned long long caps)
{
	char text[128];

	snprintf(text, sizeof(text), "Name:\tnapd\nCapEff:\t%016llx\n", caps);
	put(text, "%s/proc/self/status", t);
}

#define CAPS_TASK	((1ULL << 19) | (1ULL << 36))

/*
 * --wake-on: auto picks task where the kernel ends naps on work and napd
 * has the capabilities for its watches; task is then refused with why.
 * Task mode arms no IRQ and never touches a module parameter.
 */
static void test_setup_wake_on(void)
{
	const char *t = new_tree("wakeon");
	const char *mem_sleep_list = "[s2idle] deep pseudo\n";
	static struct napd_setup s;
	struct napd_opts o;
	char err[512];

	build_tree(t, true);
	put(snmp_text, "%s/proc/net/snmp", t);
	put("3\n", "%s/sys/power/wake_irq", t);
	put_caps(t, CAPS_TASK);
	/* a kernel without wake on work: auto arms IRQs, task is refused */
	fake_opts(&o, t, "eth0", "pseudo", NULL, false);
	CHECK(!napd_setup(&o, &s, err, sizeof(err)) && !s.rx_snmp &&
	      !s.wake_task);
	CHECK(strstr(s.wake_why, "cannot end a nap on work"));
	CHECK_STR(get("%s/sys/power/wake_irq", t), "25");
	CHECK(!napd_restore(&s));
	put(mem_sleep_list, "%s/sys/power/mem_sleep", t);
	o.wake_on = NAPD_WAKE_TASK;
	CHECK(napd_setup(&o, &s, err, sizeof(err)) &&
	      strstr(err, "--wake-on task: this kernel cannot end a nap on work") &&
	      strstr(err, "last_wake_source"));
	CHECK(!napd_restore(&s));

	/* wake on work: auto is task, no IRQ armed, the snmp counters */
	put("\n", "%s/sys/power/pseudosleep/last_wake_source", t);
	put(mem_sleep_list, "%s/sys/power/mem_sleep", t);
	fake_opts(&o, t, "eth0", "pseudo", NULL, false);
	if (napd_setup(&o, &s, err, sizeof(err)))
		printf("# %s\n", err);
	CHECK(s.wake_task && s.rx_snmp && !s.wake_why[0]);
	CHECK(strstr(s.rx_packets[0], "/proc/net/snmp"));
	CHECK(s.nr_rx == 1 && s.nr_irqs_armed == 0);
	/* what was left armed is disarmed for the run, and put back */
	CHECK_STR(get("%s/sys/power/wake_irq", t), "");
	CHECK_STR(get("%s/" NOSLEEP_ETH0, t), "1");
	CHECK(!path_exists(get("%s/sys/module/pseudosleep", t)));
	CHECK(!napd_restore(&s));
	CHECK_STR(get("%s/sys/power/wake_irq", t), "3");

	/* no CAP_BLOCK_SUSPEND: EPOLLWAKEUP would be dropped */
	put_caps(t, 1ULL << 19);
	put(mem_sleep_list, "%s/sys/power/mem_sleep", t);
	CHECK(!napd_setup(&o, &s, err, sizeof(err)) && !s.wake_task);
	CHECK(strstr(s.wake_why, "CAP_BLOCK_SUSPEND"));
	CHECK(!napd_restore(&s));
	put(mem_sleep_list, "%s/sys/power/mem_sleep", t);
	o.wake_on = NAPD_WAKE_TASK;
	CHECK(napd_setup(&o, &s, err, sizeof(err)) &&
	      strstr(err, "CAP_BLOCK_SUSPEND") && strstr(err, "EPOLLWAKEUP"));
	CHECK(!napd_restore(&s));

	/* no CAP_SYS_PTRACE and no server of napd's uid found */
	put_caps(t, 1ULL << 36);
	put(mem_sleep_list, "%s/sys/power/mem_sleep", t);
	CHECK(napd_setup(&o, &s, err, sizeof(err)) &&
	      strstr(err, "CAP_SYS_PTRACE"));
	CHECK(!napd_restore(&s));
	put_caps(t, CAPS_TASK);

	put(mem_sleep_list, "%s/sys/power/mem_sleep", t);
	o.wake_on = NAPD_WAKE_IRQ;
	CHECK(!napd_setup(&o, &s, err, sizeof(err)) && !s.rx_snmp &&
	      !s.wake_task);
	CHECK_STR(get("%s/sys/power/wake_irq", t), "25");
	CHECK(!napd_restore(&s));

	/* s2idle has no wake rule to choose */
	put(mem_sleep_list, "%s/sys/power/mem_sleep", t);
	fake_opts(&o, t, "eth0", "s2idle", NULL, false);
	CHECK(!napd_setup(&o, &s, err, sizeof(err)) && !s.rx_snmp &&
	      !s.wake_task);
	CHECK(!napd_restore(&s));
}

/*
 * --wake-on task: no IRQ armed, naps as usual (no server behind the fake
 * /proc: nothing watched); a wakeup_count read that blocks (a FIFO, as
 * with a wakeup source active) holds naps back by wake_source, and napd
 * goes on.
 */
static void test_napd_wake_task(void)
{
	const char *t = new_tree("task");
	char sys[PATH_MAX], proc[PATH_MAX], out[PATH_MAX], path[PATH_MAX];
	char *const argv[] = { NAPD_ARGS(sys, proc), "--log", "--max-naps", "2",
			       "--wake-on", "task", NULL };

	build_tree(t, true);
	put("\n", "%s/sys/power/pseudosleep/last_wake_source", t);
	put_caps(t, CAPS_TASK);
	put(snmp_text, "%s/proc/net/snmp", t);
	put("3\n", "%s/sys/power/wake_irq", t);
	tree_paths(t, sys, proc, out);

	put("eth0-rx\n", "%s/sys/power/pseudosleep/last_wake_source", t);
	CHECK(run_napd(argv, out, 0) == 0);
	CHECK(out_has(out, "naps end on the servers' work"));
	CHECK(out_has(out, "{\"naps\":2,"));
	CHECK(out_has(out, "aborted=0 wake_source=eth0-rx"));
	CHECK_STR(get("%s/sys/power/wake_irq", t), "3");
	CHECK(out_has(out, "wake irqs none (wake on task)"));

	path_fmt(path, sizeof(path), "%s/sys/power/wakeup_count", t);
	unlink(path);
	CHECK(!mkfifo(path, 0600));
	put("[s2idle] deep pseudo\n", "%s/sys/power/mem_sleep", t);
	CHECK(run_napd(argv, out, 400) == 0);
	CHECK(out_has(out, "nap held back by wake_source: a wakeup source active for 50 ms"));
	CHECK(out_has(out, "{\"naps\":0,"));
	CHECK(!out_has_quiet(out, "\"wake_source\":0"));

	/* without a kernel that ends naps on work: refused, nothing changed */
	unlink(path);
	put("7\n", "%s", path);
	path_fmt(path, sizeof(path), "%s/sys/power/pseudosleep/last_wake_source", t);
	unlink(path);
	put("[s2idle] deep pseudo\n", "%s/sys/power/mem_sleep", t);
	CHECK(run_napd(argv, out, 0) == 1);
	CHECK(out_has(out, "--wake-on task: this kernel cannot end a nap on work"));
	CHECK_STR(get("%s/sys/power/mem_sleep", t), "[s2idle] deep pseudo");
}

static void test_sock_lines(void)
{
	const char *text =
		"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
		"   0: 00000000:0050 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1065 1 0000000060d5f76a 100 0 0 10 0\n"
		"   1: 0100007F:0050 0100007F:D431 01 00000000:00000000 02:000A7A5B 0 33 0 0 2\n";
	const char *pos = text;
	struct procnet_sock sk;

	CHECK(procnet_sock_next(&pos, &sk) == 1 && sk.lport == 80 &&
	      sk.state == NAPD_TCP_LISTEN && sk.inode == 1065);
	CHECK(procnet_sock_next(&pos, &sk) == 1 && sk.lport == 80 &&
	      sk.state == NAPD_TCP_ESTABLISHED && sk.inode == 0);
	CHECK(procnet_sock_next(&pos, &sk) == 0);
	pos = "   0: 00000000:0050 00000000:0000 0A\n";
	CHECK(procnet_sock_next(&pos, &sk) == -1);
}

/*
 * A server for the watch tests, in a child: a listening TCP socket and a
 * bound UDP socket on 127.0.0.1, an epoll of its own holding the
 * listener and @pair (the parent holds the other end).  It reports its
 * ports on @ack and then obeys one byte at a time on @cmd: 'a' accepts a
 * connection and hands it to a forked handler (fork per connection)
 * that holds it until killed, 'c' closes the listener, 'q' (or EOF)
 * quits.  Each command is acked.
 */
static void watch_server(int cmd, int ack, int pair)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct epoll_event ev = { .events = EPOLLIN };
	socklen_t len = sizeof(a);
	unsigned short ports[2];
	int lfd, ufd, ep, cfd, one = 1;
	char c;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	ufd = socket(AF_INET, SOCK_DGRAM, 0);
	ep = epoll_create1(0);
	/* as servers do: a restart may bind while connections linger */
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (lfd < 0 || ufd < 0 || ep < 0 ||
	    bind(lfd, (struct sockaddr *)&a, sizeof(a)) || listen(lfd, 8) ||
	    getsockname(lfd, (struct sockaddr *)&a, &len))
		_exit(1);
	ports[0] = ntohs(a.sin_port);
	a.sin_port = 0;
	if (bind(ufd, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(ufd, (struct sockaddr *)&a, &len))
		_exit(1);
	ports[1] = ntohs(a.sin_port);
	ev.data.fd = lfd;
	epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
	ev.data.fd = pair;
	epoll_ctl(ep, EPOLL_CTL_ADD, pair, &ev);
	if (write(ack, ports, sizeof(ports)) != sizeof(ports))
		_exit(1);
	while (read(cmd, &c, 1) == 1 && c != 'q') {
		if (c == 'a') {
			cfd = accept(lfd, NULL, NULL);
			if (cfd >= 0 && !fork()) {
				/* the handler: holds the connection until killed */
				close(lfd);
				close(ufd);
				close(ep);
				close(cmd);
				close(ack);
				for (;;)
					pause();
			}
			close(cfd);
		} else if (c == 'c') {
			close(lfd);
		}
		if (write(ack, &c, 1) != 1)
			_exit(1);
	}
	_exit(0);
}

/* The server whose fd of @kind this attempt watches (@pid if not 0). */
static pid_t watched(const struct watch *w, enum watch_kind kind, pid_t pid)
{
	int i;

	for (i = 0; i < w->nr_fds; i++)
		if (w->fds[i].kind == kind && (!pid || w->fds[i].pid == pid))
			return w->fds[i].pid;
	return 0;
}

/* Can a new listener bind @port (SO_REUSEADDR: only a listener conflicts)? */
static bool port_free(unsigned short port)
{
	struct sockaddr_in a = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	bool ok;

	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	ok = !bind(fd, (struct sockaddr *)&a, sizeof(a)) && !listen(fd, 1);
	close(fd);
	return ok;
}

/* Count napd's own open fds, to see that the copies are closed. */
static int own_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	while (d && (de = readdir(d)))
		n += de->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

/*
 * After work for the server, napd's set has an event, described as
 * @what.  Loopback delivers before the send returns; the wait is margin.
 */
static bool work_seen(struct watch *w, const char *what)
{
	char why[256] = "";

	usleep(20000);
	return watch_drain(w, why, sizeof(why)) > 0 && strstr(why, what);
}

/* napd's own fds a watch holds between attempts. */
static int watch_fds(const struct watch *w)
{
	return 2 + (w->diag.fd >= 0) + w->nr_pids;	/* + the epoll sets */
}

static bool cmd_ack(int cmd, int ack, char c)
{
	char got;

	return write(cmd, &c, 1) == 1 && read(ack, &got, 1) == 1 && got == c;
}

/*
 * wake on task: a real server found from its port; a new connection, a
 * request on a kept-alive connection (held by a handler forked after the
 * first scan), a datagram and work in its own epoll each make napd's
 * watch set ready; after each attempt the copies are closed, so a port
 * the server closes is free again.
 */
static void test_watch_server(void)
{
	static struct watch w;
	struct sockaddr_in a = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	unsigned short ports[2], tcp[1], udp[1];
	struct watch_ports wp = { tcp, 1, udp, 1 };
	int cmd[2], ack[2], pair[2], cli, ufd, fds0, status;
	pid_t handler = 0;
	char why[256] = "", buf[8];
	struct pollfd pfd;
	pid_t pid;

	if (pipe(cmd) || pipe(ack) ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, pair)) {
		CHECK(!"pipes");
		return;
	}
	pid = fork();
	if (!pid) {
		close(cmd[1]);
		close(ack[0]);
		close(pair[0]);
		watch_server(cmd[0], ack[1], pair[1]);
	}
	close(cmd[0]);
	close(ack[1]);
	close(pair[1]);
	if (read(ack[0], ports, sizeof(ports)) != sizeof(ports)) {
		CHECK(!"server started");
		goto out;
	}
	tcp[0] = ports[0];
	udp[0] = ports[1];
	fds0 = own_fds();
	CHECK(!watch_init(&w, "/proc"));

	/* idle: listener, UDP socket and epoll watched, nothing ready */
	CHECK(watch_add(&w, &wp) == 3);
	CHECK(w.err == 0 && w.scans == 1);
	CHECK(watched(&w, WATCH_LISTEN, pid) && watched(&w, WATCH_UDP, pid) &&
	      watched(&w, WATCH_EPOLL, pid));
	CHECK(watch_drain(&w, why, sizeof(why)) == 0);
	watch_drop(&w);
	/* the same from /proc/net, without sock_diag */
	if (w.diag.fd >= 0) {
		static struct watch wp2;

		CHECK(!watch_init(&wp2, "/proc"));
		diag_close(&wp2.diag);
		CHECK(watch_add(&wp2, &wp) == 3 && wp2.err == 0);
		CHECK(watched(&wp2, WATCH_LISTEN, pid) &&
		      watched(&wp2, WATCH_UDP, pid) &&
		      watched(&wp2, WATCH_EPOLL, pid));
		watch_close(&wp2);
	} else {
		printf("# no sock_diag here: /proc/net only\n");
	}
	CHECK(watch_add(&w, &wp) == 3);
	/* a new connection, after the copies were added */
	cli = socket(AF_INET, SOCK_STREAM, 0);
	a.sin_port = htons(tcp[0]);
	CHECK(!connect(cli, (struct sockaddr *)&a, sizeof(a)));
	CHECK(work_seen(&w, "listening socket on port"));
	watch_drop(&w);
	/* the epoll sets, sock_diag, cli and the servers' pidfds stay */
	CHECK(w.nr_fds == 0 && own_fds() == fds0 + 1 + watch_fds(&w));

	/* not accepted yet: the next attempt sees it at once, no rescan */
	CHECK(watch_add(&w, &wp) == 3 && w.scans == 1);
	CHECK(watch_drain(&w, why, sizeof(why)) > 0);
	watch_drop(&w);

	/* accepted by a handler forked now: found by a second scan */
	CHECK(cmd_ack(cmd[1], ack[0], 'a'));
	CHECK(watch_add(&w, &wp) == 4 && w.scans == 2);
	handler = watched(&w, WATCH_CONN, 0);
	CHECK(handler && handler != pid);
	CHECK(watch_drain(&w, why, sizeof(why)) == 0);
	/* a request on the idle kept-alive connection */
	CHECK(write(cli, "GET", 3) == 3);
	CHECK(work_seen(&w, "connection on port"));
	watch_drop(&w);
	CHECK(w.nr_pids == 2 && own_fds() == fds0 + 1 + watch_fds(&w));

	/* work in the server's own epoll (an event-loop server) */
	CHECK(watch_add(&w, &wp) >= 4 && w.scans == 2);
	CHECK(watch_drain(&w, why, sizeof(why)) > 0);	/* GET unread */
	CHECK(write(pair[0], "x", 1) == 1);
	CHECK(work_seen(&w, "its epoll"));
	watch_drop(&w);

	/* a datagram */
	CHECK(watch_add(&w, &wp) >= 4);
	watch_drain(&w, why, sizeof(why));
	ufd = socket(AF_INET, SOCK_DGRAM, 0);
	a.sin_port = htons(udp[0]);
	CHECK(sendto(ufd, "q", 1, 0, (struct sockaddr *)&a, sizeof(a)) == 1);
	close(ufd);
	CHECK(work_seen(&w, "UDP socket on port"));

	/*
	 * The server closes its listener and the handler exits: while the
	 * copies are held the port stays bound and the connection open;
	 * once the attempt is over the port is free and the connection
	 * closed (its unread GET makes that a reset rather than a FIN).
	 */
	CHECK(cmd_ack(cmd[1], ack[0], 'c'));
	CHECK(handler > 0 && !kill(handler, SIGKILL));
	pfd.fd = cli;
	pfd.events = POLLIN;
	CHECK(!port_free(tcp[0]));
	CHECK(poll(&pfd, 1, 200) == 0);
	watch_drop(&w);
	CHECK(port_free(tcp[0]));
	CHECK(poll(&pfd, 1, 2000) == 1);
	CHECK(read(cli, buf, sizeof(buf)) == 0 || errno == ECONNRESET);
	close(cli);

	/* the server exits: its pidfd says so, and the list is walked again */
	close(cmd[1]);
	cmd[1] = -1;
	waitpid(pid, &status, 0);
	pid = 0;
	CHECK(watch_add(&w, &wp) == 0 && w.stale);
	CHECK(watch_add(&w, &wp) == 0 && !w.stale && w.nr_pids == 0);
	watch_drop(&w);
	watch_close(&w);
	CHECK(own_fds() == fds0 - 1);	/* cmd[1] closed too */
out:
	if (cmd[1] >= 0)
		close(cmd[1]);
	close(pair[0]);
	if (pid)
		waitpid(pid, &status, 0);
	close(ack[0]);
}

/*
 * EPOLLWAKEUP kept on napd's items: where the kernel has wakeup sources
 * (CONFIG_PM_SLEEP: /sys/power/wakeup_count) and napd CAP_BLOCK_SUSPEND.
 */
static void test_watch_wakeup_kept(void)
{
	unsigned long long caps = 0;
	int want;

	CHECK(!watch_cap_eff("/proc", &caps));
	want = path_exists("/sys/power/wakeup_count") && (caps & (1ULL << 36));
	printf("# EPOLLWAKEUP %s here\n", want ? "kept" : "dropped");
	CHECK(watch_wakeup_kept() == want);
}

/*
 * The bounded wakeup_count read: a FIFO with no writer blocks like a
 * wakeup_count with a wakeup source active; the read gives up after the
 * timeout with ETIMEDOUT.
 */
static void test_wcount_bounded(void)
{
	const char *t = new_tree("wcount");
	char path[PATH_MAX], buf[32];
	unsigned long long t0;
	struct timespec ts;

	path_fmt(path, sizeof(path), "%s/wakeup_count", t);
	put("42\n", "%s", path);
	CHECK(wcount_read(path, buf, sizeof(buf), 50) == 2);
	CHECK_STR(buf, "42");
	unlink(path);
	CHECK(!mkfifo(path, 0600));
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t0 = ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
	CHECK(wcount_read(path, buf, sizeof(buf), 50) == -ETIMEDOUT);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t0 = ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000 - t0;
	CHECK(t0 >= 50 && t0 < 1000);
	/* again: the timer is one-shot and re-armed per read */
	CHECK(wcount_read(path, buf, sizeof(buf), 20) == -ETIMEDOUT);
	unlink(path);
	CHECK(wcount_read(path, buf, sizeof(buf), 20) == -ENOENT);
}

static void new_conn(void *arg)
{
	struct fake_run *r = arg;
	char text[512];

	/* at ~150 ms a client connects: packets on lo, a socket on :80 */
	if (++r->ticks == 15) {
		snprintf(text, sizeof(text), "%s%s", net_dev,
			 "  eth1: 1 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n");
		put(tcp_busy, "%s/net/tcp", r->proc);
		put(text, "%s/net/dev", r->proc);
	}
}

static void test_napd_dump_skipped(void)
{
	struct fake_run r;

	fake_run(&r, "netdev", NULL);
	put(net_dev, "%s/net/dev", r.proc);
	CHECK(run_napd_tick(r.argv, r.out, 400, new_conn, &r) == 0);
	CHECK(out_has(r.out, "nap held back by connections: 1 connection open"));
	check_restored(r.t);
}

static void drop_blocker(void *arg)
{
	struct fake_run *r = arg;
	char path[PATH_MAX];

	/* after ~150 ms the listed process exits */
	if (++r->ticks == 15) {
		path_fmt(path, sizeof(path), "%s/55", r->proc);
		rm_rf(path);
	}
}

static void test_napd_process_blocks(void)
{
	struct fake_run r;

	fake_run(&r, "proc-block", "--process", "blockme", "--max-naps", "2",
		 NULL);
	put("55 (blockme) S 1 55 55 0\n", "%s/55/stat", r.proc);
	put("blockme\n", "%s/55/comm", r.proc);
	CHECK(run_napd_tick(r.argv, r.out, 0, drop_blocker, &r) == 0);
	CHECK(out_has(r.out, "nap held back by process: blockme (pid 55)"));
	CHECK(out_has(r.out, "{\"naps\":2,"));
	check_restored(r.t);
}

static void busy_cpu(void *arg)
{
	struct fake_run *r = arg;
	char text[256];

	/* 10 busy ticks of 10 on each poll: 100 % */
	r->ticks++;
	snprintf(text, sizeof(text),
		 "cpu  %d 0 0 50000 0 0 0 0 0 0\nprocs_running 1\n",
		 1000 + 10 * r->ticks);
	put(text, "%s/stat", r->proc);
}

static void test_napd_idle_checks(void)
{
	struct fake_run r;

	/*
	 * CPU use above --cpu-max: no nap until SIGTERM.  The busy series
	 * starts before napd does: its first sample may come before the
	 * test's first tick, and the tree's idle /proc/stat would make that
	 * first window look idle.
	 */
	fake_run(&r, "cpu", "--cpu-max", "50", NULL);
	busy_cpu(&r);
	CHECK(run_napd_tick(r.argv, r.out, 300, busy_cpu, &r) == 0);
	CHECK(out_has(r.out, "nap held back by cpu: CPU use 100.0% > 50%"));
	CHECK(out_has(r.out, "{\"naps\":0,"));
	check_restored(r.t);
	/* --cpu-max 100 turns the check off */
	fake_run(&r, "cpu2", "--cpu-max", "100", "--max-naps", "1", NULL);
	busy_cpu(&r);
	CHECK(run_napd_tick(r.argv, r.out, 0, busy_cpu, &r) == 0);
	CHECK(out_has(r.out, "{\"naps\":1,"));

	/* two runnable tasks besides napd */
	fake_run(&r, "runnable", NULL);
	put("cpu  1 0 0 5 0 0 0 0 0 0\nprocs_running 3\n", "%s/stat", r.proc);
	CHECK(run_napd(r.argv, r.out, 300) == 0);
	CHECK(out_has(r.out, "nap held back by runnable: 2 runnable tasks besides napd > 0"));
	CHECK(out_has(r.out, "{\"naps\":0,"));
	fake_run(&r, "runnable2", "--runnable-max", "2", "--max-naps", "1",
		 NULL);
	put("cpu  1 0 0 5 0 0 0 0 0 0\nprocs_running 3\n", "%s/stat", r.proc);
	CHECK(run_napd(r.argv, r.out, 0) == 0);

	/* an I/O in flight */
	fake_run(&r, "disk", NULL);
	put(" 8 0 sda 1 0 0 0 1 0 0 0 1 0 0\n", "%s/diskstats", r.proc);
	CHECK(run_napd(r.argv, r.out, 300) == 0);
	CHECK(out_has(r.out, "nap held back by disk: disk I/O: 1 in flight"));
	CHECK(out_has(r.out, "{\"naps\":0,"));
	fake_run(&r, "disk2", "--disk-check", "no", "--max-naps", "1", NULL);
	put(" 8 0 sda 1 0 0 0 1 0 0 0 1 0 0\n", "%s/diskstats", r.proc);
	CHECK(run_napd(r.argv, r.out, 0) == 0);

	/* queued UDP data on a served port; unreadable /proc/stat is fatal */
	fake_run(&r, "udp", "--udp-port", "53", NULL);
	put("  sl  local_address rem_address   st tx_queue rx_queue\n"
	    "   1: 00000000:0035 00000000:0000 07 00000000:00000010 00:0\n",
	    "%s/net/udp", r.proc);
	CHECK(run_napd(r.argv, r.out, 300) == 0);
	CHECK(out_has(r.out, "nap held back by udp: 1 UDP socket with queued data"));
	CHECK(out_has(r.out, "{\"naps\":0,"));
	fake_run(&r, "nostat", NULL);
	path_fmt(r.out, sizeof(r.out), "%s/stat", r.proc);
	unlink(r.out);
	path_fmt(r.out, sizeof(r.out), "%s/out", r.t);
	CHECK(run_napd(r.argv, r.out, 0) == 1);
	CHECK(out_has(r.out, "/stat"));
	check_restored(r.t);
}

static void test_napd_notify(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct fake_run r;
	char buf[256], all[1024] = "";
	int fd, first = 1;
	ssize_t n;

	fake_run(&r, "notify", "--max-naps", "1", NULL);
	path_fmt(sa.sun_path, sizeof(sa.sun_path), "%s/notify.sock", r.t);
	fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		t_failed = true;
		return;
	}
	setenv("NOTIFY_SOCKET", sa.sun_path, 1);
	CHECK(run_napd(r.argv, r.out, 0) == 0);
	unsetenv("NOTIFY_SOCKET");
	while ((n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT)) > 0) {
		buf[n] = '\0';
		if (first)
			CHECK(!strncmp(buf, "READY=1\nSTATUS=napping when idle", 32));
		first = 0;
		strncat(all, buf, sizeof(all) - strlen(all) - 1);
	}
	close(fd);
	CHECK(strstr(all, "STATUS=1 naps,"));
	CHECK(strstr(all, "STOPPING=1\nSTATUS=stopping, restoring settings\n"));
	check_restored(r.t);
}

struct status_run {
	struct fake_run r;
	char conf[PATH_MAX];
	char got[2][2048];
	long pid;
	char *const *argv;
	int second_rc;
	bool second_ok;
};

static void query(char *buf, size_t size)
{
	FILE *f = fmemopen(buf, size, "w");

	if (!f || ctl_query(ctl_sock, "status", f, 5))
		snprintf(buf, size, "(no answer)");
	if (f)
		fclose(f);
}

static void status_tick(void *arg)
{
	struct status_run *s = arg;
	char out[PATH_MAX];
	const char *p;

	switch (++s->r.ticks) {
	case 20:
		query(s->got[0], sizeof(s->got[0]));
		p = strstr(s->got[0], "\"pid\":");
		s->pid = p ? atol(p + 6) : 0;
		break;
	case 25:
		put("idle-ms = 9\n", "%s", s->conf);
		if (s->pid > 0)
			kill(s->pid, SIGHUP);
		break;
	case 45:
		query(s->got[1], sizeof(s->got[1]));
		break;
	case 50:
		/* a second napd on the same socket: refused before setup */
		path_fmt(out, sizeof(out), "%s/out2", s->r.t);
		s->second_rc = run_napd(s->argv, out, 0);
		s->second_ok = out_has(out, "another napd is running");
		break;
	}
}

static void test_napd_status_reload(void)
{
	static struct status_run s;
	struct fake_run *r = &s.r;
	char *const argv[] = { (char *)napd_bin, "--config", s.conf, "--port",
			       "80", "--wake-dev", "eth0",
			       "--sysfs-root", r->sys, "--proc-root", r->proc,
			       "--status-socket", ctl_sock,
			       "--state-dir", state_dir,
			       "--log", "--process", "blockme", NULL };

	fake_run(r, "status", NULL);
	s.argv = argv;
	path_fmt(s.conf, sizeof(s.conf), "%s/napd.conf", r->t);
	put("# test\nidle-ms = 5\n", "%s", s.conf);
	put("55 (blockme) S 1 55 55 0\n", "%s/55/stat", r->proc);
	put("blockme\n", "%s/55/comm", r->proc);
	CHECK(run_napd_tick(argv, r->out, 700, status_tick, &s) == 0);
	CHECK(strstr(s.got[0], "\"idle_ms\":5,"));
	CHECK(strstr(s.got[0],
		     "\"last_blocked\":{\"check\":\"process\",\"why\":\"blockme (pid 55)\"}"));
	CHECK(strstr(s.got[1], "\"idle_ms\":9,"));
	if (t_failed)
		printf("# status: %s# after SIGHUP: %s", s.got[0], s.got[1]);
	CHECK(out_has(r->out, "napd: reloaded: idle 9 ms"));
	CHECK(s.second_rc == 1 && s.second_ok);
	CHECK(!path_exists(ctl_sock));
	check_restored(r->t);

	/*
	 * a bad file on SIGHUP is refused and the old settings kept: covered
	 * by napd_load_opts(); a bad file at start: exit 2, nothing changed
	 */
	put("idle-ms = 5\nbogus = 1\n", "%s", s.conf);
	put("[s2idle] deep pseudo\n", "%s/power/mem_sleep", r->sys);
	CHECK(run_napd(argv, r->out, 0) == 2);
	CHECK(out_has(r->out, "napd.conf:2: unknown key 'bogus'"));
	CHECK_STR(get("%s/power/mem_sleep", r->sys), "[s2idle] deep pseudo");
}

/* Snapshot of every host setting napd may change in a fake tree. */
static void settings_snapshot(const char *t, char *buf, size_t size)
{
	static const char *const files[] = {
		"sys/power/mem_sleep", "sys/power/wake_irq", NOSLEEP_ETH0,
		NOSLEEP_TTY,
	};
	size_t len = 0;
	unsigned int i;

	/* get() has four buffers: one at a time */
	buf[0] = '\0';
	for (i = 0; i < ARRAY_SIZE(files); i++)
		len += snprintf(buf + len, size - len, "%s|",
				get("%s/%s", t, files[i]));
}

static void test_napd_check_config(void)
{
	const char *t = new_tree("checkconf");
	char sys[PATH_MAX], proc[PATH_MAX], out[PATH_MAX], good[PATH_MAX];
	char bad[PATH_MAX], none[PATH_MAX], want[PATH_MAX + 64];
	char before[2048], after[2048];
	char *const check_good[] = { (char *)napd_bin, "--check-config", good,
				     NULL };
	char *const check_bad[] = { (char *)napd_bin, "--check-config", bad,
				    NULL };
	char *const check_via[] = { (char *)napd_bin, "--config", bad,
				    "--check-config", NULL };
	char *const check_none[] = { (char *)napd_bin, "--check-config=",
				     NULL };
	char *const check_missing[] = { (char *)napd_bin, "--check-config",
					none, NULL };
	char *const start_bad[] = { NAPD_ARGS(sys, proc), "--config", bad,
				    NULL };
	static const int lines[] = { 2, 3, 4, 5, 7, 9 };
	unsigned int i;

	build_tree(t, true);
	tree_paths(t, sys, proc, out);
	path_fmt(good, sizeof(good), "%s/good.conf", t);
	path_fmt(bad, sizeof(bad), "%s/bad.conf", t);
	path_fmt(none, sizeof(none), "%s/none.conf", t);
	put("# fine\nport = 80, 443\nwake-dev = eth0\nidle-ms = 50\n", "%s",
	    good);
	put("port = 80\n"
	    "bogus = 1\n"			/* 2: unknown key */
	    "idle-ms = 1.5\n"		/* 3: bad number */
	    "cpu-max = 101\n"		/* 4: out of range */
	    "wake-dev =\n"			/* 5: missing value */
	    "wake-dev = eth0\n"
	    "port80\n"			/* 7: garbage */
	    "mode = s2idle\nmode = deep\n",	/* 9: duplicate */
	    "%s", bad);

	CHECK(run_napd(check_good, out, 0) == 0);
	path_fmt(want, sizeof(want), "%s: ok", good);
	CHECK(out_has(out, want));

	CHECK(run_napd(check_bad, out, 0) == 2);
	for (i = 0; i < ARRAY_SIZE(lines); i++) {
		path_fmt(want, sizeof(want), "\n%s:%d: ", bad, lines[i]);
		/* the first line of output has no newline before it */
		CHECK(out_has(out, want + (i == 0)));
	}
	path_fmt(want, sizeof(want), "%s:9: duplicate mode (first set on line 8)",
		 bad);
	CHECK(out_has(out, want));
	CHECK(!out_has_quiet(out, "Usage:"));

	/* --config FILE --check-config: the same file */
	CHECK(run_napd(check_via, out, 0) == 2);
	CHECK(out_has(out, "bad.conf:5: wake-dev needs a value"));
	CHECK(run_napd(check_none, out, 0) == 2);
	CHECK(run_napd(check_missing, out, 0) == 2);
	CHECK(out_has(out, "cannot read"));

	/* napd does not start on the bad file: exit 2, nothing changed */
	settings_snapshot(t, before, sizeof(before));
	CHECK(run_napd(start_bad, out, 0) == 2);
	CHECK(out_has(out, "napd: "));
	path_fmt(want, sizeof(want), "napd: %s:7: expected 'key = value'", bad);
	CHECK(out_has(out, want));
	settings_snapshot(t, after, sizeof(after));
	CHECK_STR(after, before);
	CHECK_STR(get("%s/sys/power/state", t), "freeze mem disk");
	CHECK(!path_exists(ctl_sock));
	CHECK(!path_exists(state_dir));
}

/* Start napd in the background, output to @out; its pid. */
static pid_t spawn_napd(char *const argv[], const char *out)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (!pid) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		dup2(fd, 1);
		dup2(fd, 2);
		execv(napd_bin, argv);
		_exit(127);
	}
	return pid;
}

/* Wait up to 5 s for the fake file to read @want. */
static bool wait_value(const char *want, const char *fmt, const char *t)
{
	int i;

	for (i = 0; i < 500; i++) {
		if (!strcmp(get(fmt, t), want))
			return true;
		usleep(10000);
	}
	printf("# %s: '%s', want '%s'\n", fmt, get(fmt, t), want);
	return false;
}

/*
 * kill -9 leaves napd's settings on the host and the originals in the
 * state directory: the next napd restores those on stop, and
 * napd --restore restores them without starting.
 */
static void test_napd_kill9(void)
{
	const char *t = new_tree("kill9");
	char sys[PATH_MAX], proc[PATH_MAX], out[PATH_MAX], file[PATH_MAX];
	char before[2048], after[2048];
	char *const argv[] = { NAPD_ARGS(sys, proc), "--log", NULL };
	char *const restore[] = { (char *)napd_bin, "--restore", "--state-dir",
				  state_dir, NULL };
	int status;
	pid_t pid;

	build_tree(t, true);
	put("3,4\n", "%s/sys/power/wake_irq", t);
	tree_paths(t, sys, proc, out);
	path_fmt(file, sizeof(file), "%s/settings", state_dir);
	/* as the kernel shows it after napd's write and after the restore */
	settings_snapshot(t, before, sizeof(before));
	put("s2idle\n", "%s/sys/power/mem_sleep", t);
	settings_snapshot(t, after, sizeof(after));
	snprintf(before, sizeof(before), "%s", after);
	put("[s2idle] deep pseudo\n", "%s/sys/power/mem_sleep", t);

	/* start, let it change everything, SIGKILL */
	pid = spawn_napd(argv, out);
	CHECK(wait_value("1", "%s/" NOSLEEP_TTY, t));
	CHECK(path_exists(file));
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	CHECK(WIFSIGNALED(status));
	CHECK_STR(get("%s/sys/power/wake_irq", t), "25");
	CHECK(path_exists(file));

	/* start again (the kernel lists its modes), stop: as before */
	put("s2idle deep [pseudo]\n", "%s/sys/power/mem_sleep", t);
	CHECK(run_napd(argv, out, 300) == 0);
	CHECK(out_has(out, "left by a napd that did not stop cleanly"));
	settings_snapshot(t, after, sizeof(after));
	CHECK_STR(after, before);
	CHECK(!path_exists(file));

	/* SIGKILL, then napd --restore; while a napd runs it is refused */
	put("[s2idle] deep pseudo\n", "%s/sys/power/mem_sleep", t);
	pid = spawn_napd(argv, out);
	CHECK(wait_value("1", "%s/" NOSLEEP_TTY, t));
	path_fmt(out, sizeof(out), "%s/out-restore", t);
	CHECK(run_napd(restore, out, 0) == 1);
	CHECK(out_has(out, "another napd (pid "));
	CHECK_STR(get("%s/" NOSLEEP_TTY, t), "1");
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	CHECK(run_napd(restore, out, 0) == 0);
	CHECK(out_has(out, "restored 5 settings from"));
	settings_snapshot(t, after, sizeof(after));
	CHECK_STR(after, before);
	CHECK(!path_exists(file));
	CHECK(run_napd(restore, out, 0) == 0);
	CHECK(out_has(out, "nothing to restore"));

	/* a state directory that cannot be made: refused, nothing changed */
	put("[s2idle] deep pseudo\n", "%s/sys/power/mem_sleep", t);
	settings_snapshot(t, before, sizeof(before));
	put("", "%s/plainfile", t);
	path_fmt(state_dir, sizeof(state_dir), "%s/plainfile/state", t);
	path_fmt(out, sizeof(out), "%s/out", t);
	CHECK(run_napd(argv, out, 0) == 1);
	CHECK(out_has(out, "cannot create state directory"));
	settings_snapshot(t, after, sizeof(after));
	CHECK_STR(after, before);
}

/* Two wake devices: both armed, and the second one's packets count. */
static void test_napd_two_nics(void)
{
	const char *t = new_tree("twonics");
	char sys[PATH_MAX], proc[PATH_MAX], out[PATH_MAX], rx[PATH_MAX];
	char *const argv[] = { NAPD_ARGS(sys, proc), "--wake-dev", "eth3",
			       "--wake-on", "irq", "--log", "--idle-ms", "200",
			       NULL };
	char *const naps[] = { NAPD_ARGS(sys, proc), "--wake-dev", "bond0",
			       "--wake-on", "irq", "--log", "--max-naps", "1",
			       NULL };

	build_bond_tree(t);
	tree_paths(t, sys, proc, out);
	path_fmt(rx, sizeof(rx), "%s/sys/class/net/eth3/statistics/rx_packets",
		 t);

	/* packets on eth3 every 10 ms: never 200 ms of quiet */
	CHECK(run_napd_tick(argv, out, 500, bump_rx, rx) == 0);
	CHECK(out_has(out, "{\"naps\":0,"));
	CHECK_OUT(out,
		  "napd: mode pseudo, idle 200 ms, wake devices eth0,eth3, wake irqs 25,31 (from eth0,eth3)");
	CHECK(out_has(out, "napd: NIC eth3 (wake-dev eth3): IRQs from "));
	CHECK(out_has(out, "nap held back by packets"));
	CHECK_STR(get("%s/sys/power/state", t), "freeze mem disk");
	check_restored(t);
	CHECK_STR(get("%s/" NOSLEEP_ETH3, t), "0");

	/* a bond: its NICs armed, kept awake while it naps, then restored */
	put("[s2idle] deep pseudo\n", "%s/sys/power/mem_sleep", t);
	CHECK(run_napd(naps, out, 0) == 0);
	CHECK(out_has(out, "wake devices eth0,bond0, wake irqs 25,31 (from eth0,eth3)"));
	CHECK(out_has(out, "napd: NIC eth3 (wake-dev bond0): IRQs from "));
	CHECK(out_has(out, "{\"naps\":1,"));
	check_restored(t);
	CHECK_STR(get("%s/" NOSLEEP_ETH3, t), "0");
}

/* ---- journal priorities ---- */

static void test_journal_stream(void)
{
	char path[PATH_MAX], env[64];
	struct stat st;
	int fd;

	path_fmt(path, sizeof(path), "%s/stream", tmp_root);
	fd = open(path, O_RDWR | O_CREAT, 0600);
	CHECK(fd >= 0 && !fstat(fd, &st));
	snprintf(env, sizeof(env), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	CHECK(journal_stream_is(fd, env));
	snprintf(env, sizeof(env), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino + 1);
	CHECK(!journal_stream_is(fd, env));
	snprintf(env, sizeof(env), "%llu:%llux", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	CHECK(!journal_stream_is(fd, env));
	CHECK(!journal_stream_is(fd, NULL));
	CHECK(!journal_stream_is(fd, ""));
	CHECK(!journal_stream_is(fd, "garbage"));
	close(fd);
	unlink(path);
}

/* Point $JOURNAL_STREAM at @out, as systemd does at the journal. */
static void journal_env(const char *out)
{
	struct stat st;
	char env[64];
	int fd = open(out, O_WRONLY | O_CREAT, 0644);

	if (fd < 0 || fstat(fd, &st)) {
		t_failed = true;
		return;
	}
	close(fd);
	snprintf(env, sizeof(env), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	setenv("JOURNAL_STREAM", env, 1);
}

/* Every line of @out starts with "<N>" (or is --stats JSON on stdout). */
static bool all_prefixed(const char *out)
{
	char *text = read_whole(out), *p;
	bool ok = text;

	for (p = text; ok && *p; ) {
		size_t len = strcspn(p, "\n");

		if (*p != '{' && (len < 3 || p[0] != '<' || p[1] < '0' ||
				  p[1] > '7' || p[2] != '>')) {
			printf("# not prefixed: %.*s\n", (int)len, p);
			ok = false;
		}
		p += len + (p[len] == '\n');
	}
	free(text);
	return ok;
}

static void test_napd_journal(void)
{
	const char *t = new_tree("journal");
	char sys[PATH_MAX], proc[PATH_MAX], out[PATH_MAX], bad[PATH_MAX];
	char *const naps[] = { NAPD_ARGS(sys, proc), "--log", "--max-naps", "1",
			       NULL };
	char *const busy[] = { NAPD_ARGS(sys, proc), "--log", NULL };
	char *const check[] = { (char *)napd_bin, "--check-config", bad, NULL };

	build_tree(t, true);
	tree_paths(t, sys, proc, out);
	path_fmt(bad, sizeof(bad), "%s/bad.conf", t);

	journal_env(out);
	CHECK(run_napd(naps, out, 0) == 0);
	CHECK(out_has(out, "<6>mode pseudo, idle 5 ms, wake device eth0"));
	CHECK(out_has(out, "<7>nap 1 slept "));
	CHECK(out_has(out, "<6>summary naps=1 "));
	CHECK(out_has(out, "<6>stopped; settings restored"));
	CHECK(all_prefixed(out));
	check_restored(t);

	/* a connection holds naps back: debug */
	put("[s2idle] deep pseudo\n", "%s/sys/power/mem_sleep", t);
	put(tcp_busy, "%s/proc/net/tcp", t);
	CHECK(run_napd(busy, out, 300) == 0);
	CHECK(out_has(out, "<7>nap held back by connections: 1 connection open"));
	CHECK(all_prefixed(out));
	put(tcp_idle, "%s/proc/net/tcp", t);

	/* a stale settings file: warning; an error: err */
	put("[s2idle] deep pseudo\n", "%s/sys/power/mem_sleep", t);
	mkdir_p("%s", state_dir);
	{
		char line[PATH_MAX + 64];

		path_fmt(line, sizeof(line), "napd-settings 1\n%s/" NOSLEEP_TTY "\t0\n", t);
		put(line, "%s/settings", state_dir);
	}
	CHECK(run_napd(naps, out, 0) == 0);
	CHECK(out_has(out, "<4>"));
	CHECK(out_has(out, "left by a napd that did not stop cleanly"));
	CHECK(all_prefixed(out));
	put("[s2idle] deep\n", "%s/sys/power/mem_sleep", t);
	CHECK(run_napd(naps, out, 0) == 1);
	CHECK(out_has(out, "<3>"));
	CHECK(out_has(out, "offers '[s2idle] deep', not 'pseudo'"));
	CHECK(all_prefixed(out));
	put("port = 80\nbogus = 1\n", "%s", bad);
	CHECK(run_napd(check, out, 0) == 2);
	CHECK(out_has(out, "<3>"));
	CHECK(out_has(out, "bad.conf:2: unknown key 'bogus'"));
	CHECK(all_prefixed(out));
	unsetenv("JOURNAL_STREAM");

	/* a terminal or a file: "napd: " as ever, no priorities */
	CHECK(run_napd(check, out, 0) == 2);
	CHECK(!out_has_quiet(out, "<3>"));
	path_fmt(bad, sizeof(bad), "%s/bad.conf:2: unknown key", t);
	CHECK(out_has(out, bad));
}

/* ---- Prometheus metrics ---- */

static void test_metrics_format(void)
{
	static const char *const families[] = {
		"napd_naps_total counter", "napd_asleep_seconds_total counter",
		"napd_aborted_naps_total counter",
		"napd_skipped_naps_total counter", "napd_wakeups_total counter",
		"napd_last_entry_seconds gauge", "napd_last_exit_seconds gauge",
	};
	struct napd_stats st;
	char buf[8192], want[128];
	unsigned int i;

	stats_init(&st);
	st.naps = 3;
	st.nap_ns = 1500000123ULL;
	st.aborted = 1;
	st.blocked[CHECK_CONN] = 4;
	st.blocked[CHECK_CPU] = 2;
	stats_wake_irq(&st, 25);
	stats_wake_irq(&st, 25);
	st.last_entry_ns = 1700000000123456789LL;
	st.last_exit_ns = 1700000001500000000LL;
	CHECK(stats_format_metrics(&st, buf, sizeof(buf)) > 0);
	for (i = 0; i < ARRAY_SIZE(families); i++) {
		snprintf(want, sizeof(want), "\n# TYPE %s\n", families[i]);
		CHECK(strstr(buf, want) || !strncmp(buf, want + 1, strlen(want + 1)));
		snprintf(want, sizeof(want), "# HELP %.*s ",
			 (int)strcspn(families[i], " "), families[i]);
		CHECK(strstr(buf, want));
	}
	CHECK(strstr(buf, "\nnapd_naps_total 3\n"));
	CHECK(strstr(buf, "\nnapd_asleep_seconds_total 1.500000123\n"));
	CHECK(strstr(buf, "\nnapd_aborted_naps_total 1\n"));
	CHECK(strstr(buf, "\nnapd_skipped_naps_total{reason=\"connections\"} 4\n"));
	CHECK(strstr(buf, "\nnapd_skipped_naps_total{reason=\"cpu\"} 2\n"));
	CHECK(strstr(buf, "\nnapd_skipped_naps_total{reason=\"handshake\"} 0\n"));
	CHECK(strstr(buf, "\nnapd_wakeups_total{reason=\"irq\",irq=\"25\"} 2\n"));
	CHECK(strstr(buf, "\nnapd_wakeups_total{reason=\"unknown\",irq=\"\"} 1\n"));
	CHECK(strstr(buf, "\nnapd_last_entry_seconds 1700000000.123\n"));
	CHECK(strstr(buf, "\nnapd_last_exit_seconds 1700000001.500\n"));
	CHECK(buf[strlen(buf) - 1] == '\n');
	CHECK(stats_format_metrics(&st, buf, 100) == -1);
}

/*
 * Parse @file with the reference parser (python3-prometheus-client) into
 * "sample NAME LABELS VALUE" lines in @out.  1 parsed, 0 no parser, -1
 * the parser refused the file.
 */
static int prom_parse(const char *file, const char *out)
{
	static const char script[] =
		"import sys\n"
		"try:\n"
		"    from prometheus_client.parser import text_string_to_metric_families\n"
		"except ImportError:\n"
		"    sys.exit(77)\n"
		"for fam in text_string_to_metric_families(open(sys.argv[1]).read()):\n"
		"    print('family', fam.name, fam.type, bool(fam.documentation))\n"
		"    for s in fam.samples:\n"
		"        labels = ','.join('%s=%s' % kv for kv in sorted(s.labels.items()))\n"
		"        print('sample', s.name, labels or '-', repr(float(s.value)))\n";
	static const char *const pythons[] = { "/usr/bin/python3", "python3" };
	char py[PATH_MAX], cmd[3 * PATH_MAX + 64];
	unsigned int i;
	int ret;

	path_fmt(py, sizeof(py), "%s/prom_samples.py", tmp_root);
	put(script, "%s", py);
	for (i = 0; i < ARRAY_SIZE(pythons); i++) {
		snprintf(cmd, sizeof(cmd), "%s '%s' '%s' > '%s' 2>&1",
			 pythons[i], py, file, out);
		ret = system(cmd);
		if (WIFEXITED(ret) && WEXITSTATUS(ret) == 0)
			return 1;
		/* no such python (127), or no parser module (77) */
		if (!WIFEXITED(ret) || (WEXITSTATUS(ret) != 77 &&
					WEXITSTATUS(ret) != 127))
			return -1;
	}
	return 0;
}

struct metrics_run {
	const char *file;
	int ticks;
	char mid[8192];		/* the file while napd still ran */
};

static void metrics_tick(void *arg)
{
	struct metrics_run *m = arg;
	char *text;

	/* after 1.5 s, with --metrics-interval 1: written while running */
	if (++m->ticks != 150)
		return;
	text = read_whole(m->file);
	snprintf(m->mid, sizeof(m->mid), "%s", text ? text : "");
	free(text);
}

static void test_napd_metrics(void)
{
	const char *t = new_tree("metrics");
	char sys[PATH_MAX], proc[PATH_MAX], out[PATH_MAX], prom[PATH_MAX];
	char parsed[PATH_MAX], tmp[PATH_MAX + 8], before[2048], after[2048];
	char *const naps[] = { NAPD_ARGS(sys, proc), "--metrics-file", prom,
			       "--max-naps", "2", NULL };
	char *const running[] = { NAPD_ARGS(sys, proc), "--metrics-file", prom,
				  "--metrics-interval", "1", "--idle-ms", "50",
				  NULL };
	char *const relative[] = { NAPD_ARGS(sys, proc), "--metrics-file",
				   "napd.prom", NULL };
	struct metrics_run m = { .file = prom };
	mode_t old_umask;
	struct stat st;
	const char *p;
	char *text;
	int ret;

	build_tree(t, true);
	tree_paths(t, sys, proc, out);
	path_fmt(prom, sizeof(prom), "%s/textfile/napd.prom", t);
	path_fmt(parsed, sizeof(parsed), "%s/parsed", t);
	path_fmt(tmp, sizeof(tmp), "%s.tmp", prom);

	/* a directory that is not there: refused before any change */
	settings_snapshot(t, before, sizeof(before));
	CHECK(run_napd(naps, out, 0) == 1);
	CHECK(out_has(out, "cannot write metrics file"));
	settings_snapshot(t, after, sizeof(after));
	CHECK_STR(after, before);
	CHECK(run_napd(relative, out, 0) == 2);
	CHECK(out_has(out, "bad --metrics-file 'napd.prom' (an absolute path ending in .prom)"));

	mkdir_p("%s/textfile", t);
	/* as under napd.service's UMask=0077: still readable by others */
	old_umask = umask(077);
	CHECK(run_napd(naps, out, 0) == 0);
	umask(old_umask);
	CHECK(!stat(prom, &st) && (st.st_mode & 0777) == 0644);
	CHECK(!path_exists(tmp));
	text = read_whole(prom);
	CHECK(text && strstr(text, "\nnapd_naps_total 2\n"));
	CHECK(text && strstr(text, "\nnapd_asleep_seconds_total 0.002000000\n"));
	CHECK(text && strstr(text, "\nnapd_wakeups_total{reason=\"irq\",irq=\"25\"} 2\n"));
	/* a real clock: the last nap began this century, ended after */
	p = text ? strstr(text, "\nnapd_last_entry_seconds ") : NULL;
	CHECK(p && strtod(p + 25, NULL) > 1.6e9);
	free(text);

	ret = prom_parse(prom, parsed);
	if (ret == 0) {
		t_skip = "no python3-prometheus-client: not parsed";
	} else {
		text = read_whole(parsed);
		CHECK(ret == 1);
		CHECK(text && strstr(text, "family napd_naps counter True\n"));
		CHECK(text && strstr(text, "family napd_last_exit_seconds gauge True\n"));
		CHECK(text && strstr(text, "sample napd_naps_total - 2.0\n"));
		CHECK(text && strstr(text, "sample napd_asleep_seconds_total - 0.002\n"));
		CHECK(text && strstr(text, "sample napd_aborted_naps_total - 0.0\n"));
		CHECK(text && strstr(text,
				     "sample napd_skipped_naps_total reason=connections 0.0\n"));
		CHECK(text && strstr(text, "sample napd_wakeups_total irq=25,reason=irq 2.0\n"));
		CHECK(text && strstr(text, "sample napd_wakeups_total irq=,reason=unknown 0.0\n"));
		if (t_failed)
			printf("# parsed:\n%s\n", text ? text : "(none)");
		free(text);
	}

	/* written every --metrics-interval while it runs, not only at exit */
	put("[s2idle] deep pseudo\n", "%s/sys/power/mem_sleep", t);
	unlink(prom);
	CHECK(run_napd_tick(running, out, 2500, metrics_tick, &m) == 0);
	CHECK(strstr(m.mid, "# TYPE napd_naps_total counter\n"));
	p = strstr(m.mid, "\nnapd_naps_total ");
	CHECK(p && strtoul(p + 17, NULL, 10) > 0);
	check_restored(t);
}

/* ---- napctl and sleep inhibitors against the napd binary ---- */

/* napctl ARGS... on the test's socket: its exit status, output to @out. */
static int napctl(const char *out, ...)
{
	char bin[PATH_MAX], *argv[8];
	const char *slash = strrchr(napd_bin, '/');
	int status, i = 0;
	va_list ap;
	pid_t pid;

	path_fmt(bin, sizeof(bin), "%.*snapctl",
		 slash ? (int)(slash - napd_bin + 1) : 0, napd_bin);
	argv[i++] = bin;
	argv[i++] = "--socket";
	argv[i++] = ctl_sock;
	va_start(ap, out);
	while (i < 7 && (argv[i] = va_arg(ap, char *)))
		i++;
	va_end(ap);
	argv[i] = NULL;
	fflush(stdout);
	pid = fork();
	if (!pid) {
		int fd = open(out, O_WRONLY | O_CREAT | O_APPEND, 0644);

		dup2(fd, 1);
		dup2(fd, 2);
		execv(bin, argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

struct ctl_run {
	struct fake_run r;
	char lock[PATH_MAX], ctl_out[PATH_MAX];
	const char *pause;	/* napctl pause's DURATION, or NULL */
	int paused_at, unlocked_at, resumed_at;
};

/*
 * A sleep inhibitor holds naps off from the start.  Once napd logged
 * that, napctl pauses it; then the lock goes; then, without a DURATION,
 * napctl resumes it some 200 ms later.
 */
static void ctl_tick(void *arg)
{
	struct ctl_run *c = arg;

	c->r.ticks++;
	if (!c->paused_at) {
		/* the lock seen first, then the pause */
		if (out_has_quiet(c->r.out, "held back by inhibitor") &&
		    napctl(c->ctl_out, "pause", c->pause, NULL) == 0)
			c->paused_at = c->r.ticks;
		return;
	}
	if (!c->unlocked_at && c->r.ticks >= c->paused_at + 5) {
		unlink(c->lock);
		c->unlocked_at = c->r.ticks;
	}
	if (!c->pause && !c->resumed_at && c->unlocked_at &&
	    c->r.ticks >= c->unlocked_at + 20 &&
	    napctl(c->ctl_out, "resume", NULL) == 0)
		c->resumed_at = c->r.ticks;
}

static void ctl_run_start(struct ctl_run *c, const char *name,
			  const char *pause)
{
	static char dir[PATH_MAX];

	memset(c, 0, sizeof(*c));
	fake_run(&c->r, name, "--max-naps", "2", NULL);
	path_fmt(dir, sizeof(dir), "%s/inhibit", c->r.t);
	/* after NAPD_ARGS' "--inhibitors no": the last one wins */
	c->r.argv[c->r.argc++] = "--inhibitors";
	c->r.argv[c->r.argc++] = "yes";
	c->r.argv[c->r.argc++] = "--inhibit-dir";
	c->r.argv[c->r.argc++] = dir;
	c->r.argv[c->r.argc] = NULL;
	path_fmt(c->lock, sizeof(c->lock), "%s/7", dir);
	put(lock_sleep, "%s", c->lock);
	path_fmt(c->ctl_out, sizeof(c->ctl_out), "%s/napctl.out", c->r.t);
	c->pause = pause;
}

/* @a is in the output before @b. */
static bool out_before(const char *out, const char *a, const char *b)
{
	char *text = read_whole(out);
	const char *pa = text ? strstr(text, a) : NULL;
	const char *pb = text ? strstr(text, b) : NULL;
	bool ok = pa && pb && pa < pb;

	if (!ok)
		printf("# not '%s' before '%s' in:\n# %s\n", a, b,
		       text ? text : "(none)");
	free(text);
	return ok;
}

static void test_napd_inhibitor_pause(void)
{
	struct ctl_run c;

	ctl_run_start(&c, "ctl-pause", NULL);
	CHECK(run_napd_tick(c.r.argv, c.r.out, 0, ctl_tick, &c) == 0);
	CHECK(c.paused_at && c.unlocked_at && c.resumed_at);
	CHECK_OUT(c.r.out,
		  "nap held back by inhibitor: sleep inhibitor held by backup (pid 99): nightly backup");
	CHECK(out_has(c.r.out, "nap held back by paused: paused by napctl until napctl resume"));
	/* no nap before the resume, two after */
	CHECK(out_before(c.r.out, "resumed by napctl", "nap 1 slept"));
	CHECK(out_has(c.r.out, "{\"naps\":2,"));
	CHECK(out_has(c.ctl_out, "{\"paused\":true,\"for_ms\":null}"));
	CHECK(out_has(c.ctl_out, "{\"paused\":false,\"was_paused\":true}"));
	check_restored(c.r.t);

	/* a pause with an end: over by itself */
	ctl_run_start(&c, "ctl-pause-for", "300ms");
	CHECK(run_napd_tick(c.r.argv, c.r.out, 0, ctl_tick, &c) == 0);
	CHECK(out_has(c.r.out, "nap held back by paused: paused by napctl for"));
	CHECK(out_before(c.r.out, "pause over, napping again", "nap 1 slept"));
	CHECK(out_has(c.r.out, "{\"naps\":2,"));
	CHECK(out_has(c.ctl_out, "{\"paused\":true,\"for_ms\":300}"));
	check_restored(c.r.t);
}

struct link_run {
	struct fake_run r;
	char operstate[PATH_MAX];
	int up_at;
};

/* The link comes up once napd said it holds naps back for it. */
static void link_tick(void *arg)
{
	struct link_run *l = arg;

	l->r.ticks++;
	if (!l->up_at && out_has_quiet(l->r.out, "held back by link")) {
		put("up\n", "%s", l->operstate);
		l->up_at = l->r.ticks;
	}
}

/*
 * No nap while the wake device's link is down: no request could come to
 * end it.  "unknown" (a driver that does not report its link) is up.
 */
static void test_napd_link_down(void)
{
	struct link_run l;

	CHECK(operstate_up("up\n") && operstate_up("up") &&
	      operstate_up("unknown"));
	CHECK(!operstate_up("down") && !operstate_up("dormant") &&
	      !operstate_up("lowerlayerdown") && !operstate_up("upper") &&
	      !operstate_up(""));

	memset(&l, 0, sizeof(l));
	fake_run(&l.r, "link-down", "--max-naps", "1", NULL);
	path_fmt(l.operstate, sizeof(l.operstate),
		 "%s/sys/class/net/eth0/operstate", l.r.t);
	put("down\n", "%s", l.operstate);
	CHECK(run_napd_tick(l.r.argv, l.r.out, 0, link_tick, &l) == 0);
	CHECK(l.up_at);
	CHECK_OUT(l.r.out, "nap held back by link: eth0: operstate down");
	CHECK(out_has(l.r.out, "no nap until a wake device's link is up (eth0: operstate down)"));
	CHECK(out_before(l.r.out, "eth0: link up, napping again", "nap 1 slept"));
	CHECK(out_has(l.r.out, "{\"naps\":1,"));
	check_restored(l.r.t);

	/* a wake device gone (no operstate) is not up either */
	memset(&l, 0, sizeof(l));
	fake_run(&l.r, "link-gone", "--max-naps", "1", NULL);
	path_fmt(l.operstate, sizeof(l.operstate),
		 "%s/sys/class/net/eth0/operstate", l.r.t);
	unlink(l.operstate);
	CHECK(run_napd_tick(l.r.argv, l.r.out, 0, link_tick, &l) == 0);
	CHECK(l.up_at);
	CHECK(out_has(l.r.out,
		      "nap held back by link: eth0: no operstate: No such file or directory"));
	check_restored(l.r.t);
}

static void test_napctl_errors(void)
{
	const char *t = new_tree("napctl");
	char out[PATH_MAX];

	path_fmt(out, sizeof(out), "%s/out", t);
	/* bad input: usage, exit 2, nothing sent */
	CHECK(napctl(out, "pause", "5x", NULL) == 2);
	CHECK(out_has(out, "napctl: bad DURATION '5x'"));
	CHECK(out_has(out, "Usage: napctl"));
	CHECK(napctl(out, "pause", "1s", "2s", NULL) == 2);
	CHECK(napctl(out, "frobnicate", NULL) == 2);
	CHECK(out_has(out, "unknown command 'frobnicate'"));
	CHECK(napctl(out, "resume", "now", NULL) == 2);
	CHECK(napctl(out, NULL) == 2);
	/* no napd: says so */
	unlink(ctl_sock);
	CHECK(napctl(out, "status", NULL) == 1);
	CHECK(out_has(out, "does not exist: napd is not running"));
}

/* ---- the device policy (issue 35) ---- */

#define PCI0 "sys/devices/pci0000:00"
#define NS_XHCI PCI0 "/0000:00:04.0/power/nosleep"
#define NS_HUB PCI0 "/0000:00:04.0/usb1/power/nosleep"
#define NS_NVME PCI0 "/0000:00:05.0/power/nosleep"
#define NS_AHCI PCI0 "/0000:00:1f.2/power/nosleep"
#define NS_PLAT "sys/devices/platform/xhci-hcd.0/power/nosleep"

/* A PCI device of class @cls with power/nosleep 0 and a driver. */
static void fake_pci(const char *t, const char *addr, const char *cls)
{
	mkdir_p("%s/sys/bus/pci/drivers/fake", t);
	link_to("../../../bus/pci/drivers/fake", "%s/" PCI0 "/%s/driver", t,
		addr);
	put(cls, "%s/" PCI0 "/%s/class", t, addr);
	put("0\n", "%s/" PCI0 "/%s/power/nosleep", t, addr);
	put("active\n", "%s/" PCI0 "/%s/power/runtime_status", t, addr);
}

/*
 * On top of build_tree(): an xHCI (0000:00:04.0) with root hub usb1, an
 * NVMe (05.0) with nvme0 below it, an AHCI (1f.2), a sound card (06.0)
 * and a platform xHCI with root hub usb2: a q35 server.
 */
static void build_server_tree(const char *t)
{
	build_tree(t, true);
	fake_pci(t, "0000:00:04.0", "0x0c0330\n");
	put("0\n", "%s/" NS_HUB, t);
	link_to("../../../../bus/usb", "%s/" PCI0 "/0000:00:04.0/usb1/subsystem", t);
	fake_pci(t, "0000:00:05.0", "0x010802\n");
	put("0\n", "%s/" PCI0 "/0000:00:05.0/nvme/nvme0/power/nosleep", t);
	fake_pci(t, "0000:00:1f.2", "0x010601\n");
	fake_pci(t, "0000:00:06.0", "0x040300\n");
	/* a SATA function without a driver: no class rule, the no-driver one */
	put("0x010601\n", "%s/" PCI0 "/0000:00:07.0/class", t);
	put("0\n", "%s/" PCI0 "/0000:00:07.0/power/nosleep", t);
	/* a bridge without a driver, a sound card below it: left to naps */
	put("0x060400\n", "%s/" PCI0 "/0000:00:08.0/class", t);
	put("0\n", "%s/" PCI0 "/0000:00:08.0/power/nosleep", t);
	put("0x040300\n", "%s/" PCI0 "/0000:00:08.0/0000:01:00.0/class", t);
	put("0\n", "%s/" PCI0 "/0000:00:08.0/0000:01:00.0/power/nosleep", t);
	link_to("../../../../bus/pci/drivers/fake",
		"%s/" PCI0 "/0000:00:08.0/0000:01:00.0/driver", t);
	/* a driverless function behind a port: left to naps, for the port */
	put("0x028000\n", "%s/" PCI0 "/0000:00:08.0/0000:01:00.1/class", t);
	put("0\n", "%s/" PCI0 "/0000:00:08.0/0000:01:00.1/power/nosleep", t);
	/* class 0 (a pre-2.0 "unclassified" function) is PCI all the same */
	put("0x000000\n", "%s/" PCI0 "/0000:00:0a.0/class", t);
	put("0\n", "%s/" PCI0 "/0000:00:0a.0/power/nosleep", t);
	put("0\n", "%s/" NS_PLAT, t);
	link_to("../../../bus/pci/drivers/fake", "%s/sys/devices/platform/xhci-hcd.0/driver", t);
	put("0\n", "%s/sys/devices/platform/xhci-hcd.0/usb2/power/nosleep", t);
	link_to("../../../../bus/usb", "%s/sys/devices/platform/xhci-hcd.0/usb2/subsystem", t);
	mkdir_p("%s/sys/bus/usb", t);
}

static int setup_with(const char *t, struct napd_setup *s, char *err,
		      size_t errlen, ...)
{
	char sys[PATH_MAX], proc[PATH_MAX], state[PATH_MAX];
	char *argv[32] = { "napd", "--port", "80", "--wake-dev", "eth0",
			   "--sysfs-root", sys, "--proc-root", proc,
			   "--state-dir", state };
	struct napd_opts o;
	int argc = 11, ret;
	va_list ap;

	path_fmt(sys, sizeof(sys), "%s/sys", t);
	path_fmt(proc, sizeof(proc), "%s/proc", t);
	path_fmt(state, sizeof(state), "%s/state", t);
	mkdir_p("%s", state);
	/* a restore leaves the fake file with the bare word in it */
	put("[s2idle] deep pseudo\n", "%s/sys/power/mem_sleep", t);
	va_start(ap, errlen);
	while ((argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	if (napd_parse_opts(&o, argc, argv, err, errlen)) {
		printf("# %s: %s\n", __func__, err);
		return -2;
	}
	ret = napd_setup(&o, s, err, errlen);
	if (ret)
		napd_restore(s);
	return ret;
}

static void test_devpolicy_lean(void)
{
	const char *t = new_tree("devpolicy");
	char err[512], path[PATH_MAX];
	struct napd_setup s;

	build_server_tree(t);
	/* lean: the controllers, not what is below them (the kernel's job) */
	if (setup_with(t, &s, err, sizeof(err), NULL)) {
		printf("# %s\n", err);
		t_failed = true;
		return;
	}
	CHECK(s.nr_policy == 6);
	CHECK_STR(get("%s/" NS_XHCI, t), "1");
	CHECK_STR(get("%s/" NS_NVME, t), "1");
	CHECK_STR(get("%s/" NS_AHCI, t), "1");
	CHECK_STR(get("%s/" NS_PLAT, t), "1");
	CHECK_STR(get("%s/" NS_HUB, t), "0");
	CHECK_STR(get("%s/" PCI0 "/0000:00:06.0/power/nosleep", t), "0");
	CHECK_STR(get("%s/" PCI0 "/0000:00:07.0/power/nosleep", t), "1");
	CHECK_STR(get("%s/" PCI0 "/0000:00:08.0/power/nosleep", t), "0");
	CHECK_STR(get("%s/" PCI0 "/0000:00:08.0/0000:01:00.0/power/nosleep",
		      t), "0");
	CHECK_STR(get("%s/" PCI0 "/0000:00:08.0/0000:01:00.1/power/nosleep",
		      t), "0");
	CHECK_STR(get("%s/" PCI0 "/0000:00:0a.0/power/nosleep", t), "1");
	CHECK(!napd_restore(&s));
	CHECK_STR(get("%s/" PCI0 "/0000:00:07.0/power/nosleep", t), "0");
	CHECK_STR(get("%s/" PCI0 "/0000:00:0a.0/power/nosleep", t), "0");
	CHECK_STR(get("%s/" NS_XHCI, t), "0");
	CHECK_STR(get("%s/" NS_NVME, t), "0");
	CHECK_STR(get("%s/" NS_PLAT, t), "0");

	/* all: no class rule */
	CHECK(!setup_with(t, &s, err, sizeof(err), "--device-policy", "all",
			  NULL));
	CHECK(s.nr_policy == 0);
	CHECK_STR(get("%s/" NS_XHCI, t), "0");
	CHECK(!napd_restore(&s));

	/* overrides by PCI address (short and long) and by path */
	path_fmt(path, sizeof(path), "%s/" PCI0 "/0000:00:06.0", t);
	put("1\n", "%s/" NS_AHCI, t);
	CHECK(!setup_with(t, &s, err, sizeof(err), "--nap-suspend", "00:05.0",
			  "--nap-suspend", "0000:00:1f.2", "--nap-keep", path,
			  NULL));
	CHECK_STR(get("%s/" NS_NVME, t), "0");
	CHECK_STR(get("%s/" NS_AHCI, t), "0");	/* was 1: cleared */
	CHECK_STR(get("%s/" PCI0 "/0000:00:06.0/power/nosleep", t), "1");
	CHECK_STR(get("%s/" NS_XHCI, t), "1");
	CHECK(!napd_restore(&s));
	CHECK_STR(get("%s/" NS_AHCI, t), "1");
	CHECK_STR(get("%s/" PCI0 "/0000:00:06.0/power/nosleep", t), "0");
	put("0\n", "%s/" NS_AHCI, t);

	/* a device that is not there: refused, nothing changed */
	CHECK(setup_with(t, &s, err, sizeof(err), "--nap-keep", "00:09.0",
			 NULL) == -1);
	CHECK(strstr(err, "nap-keep '00:09.0': no such device"));
	CHECK_STR(get("%s/sys/power/mem_sleep", t), "[s2idle] deep pseudo");
	CHECK_STR(get("%s/" NS_XHCI, t), "0");
}

static void test_devpolicy_config(void)
{
	static const struct {
		const char *text;
		const char *msg;
	} bad[] = {
		{ "nap-keep = sda\n",
		  "bad.conf:1: bad nap-keep 'sda' (a sysfs device path or a PCI address" },
		{ "\nnap-suspend = 0:1f.2\n", "bad.conf:2: bad nap-suspend '0:1f.2'" },
		{ "nap-keep = 00:1f.2\nnap-suspend = 00:1f.2\n",
		  "bad.conf:2: nap-suspend '00:1f.2': also given as nap-keep" },
		{ "device-policy = some\n", "bad.conf:1: bad device-policy 'some' (lean or all)" },
		{ "nap-keep = /sys/devices/../x\n", "bad.conf:1: bad nap-keep" },
	};
	struct napd_opts o;
	char err[256];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		napd_parse_opts(&o, 1, (char *[]){ "napd", NULL }, err,
				sizeof(err));
		if (napd_parse_config(&o, "bad.conf", bad[i].text, err,
				      sizeof(err)) != 1 ||
		    !strstr(err, bad[i].msg)) {
			printf("# devpolicy config %u: got '%s', want '%s'\n",
			       i, err, bad[i].msg);
			t_failed = true;
		}
		napd_opts_free(&o);
	}
	napd_parse_opts(&o, 1, (char *[]){ "napd", NULL }, err, sizeof(err));
	CHECK(napd_parse_config(&o, "good.conf",
				"device-policy = all\nnap-keep = 0000:00:1F.2, 00:03.0\n"
				"nap-suspend = /sys/devices/pci0000:00/0000:00:04.0\n",
				err, sizeof(err)) == 0);
	CHECK(o.dev_policy == NAPD_POLICY_ALL && o.nr_nap_keep == 2 &&
	      o.nr_nap_suspend == 1);
	napd_opts_free(&o);
}

static const char trace_text[] =
"# tracer: nop\n"
"  sh-80 [000] .....  10.000000: suspend_resume: dpm_prepare[2] begin\n"
"  sh-80 [000] .....  10.000100: device_pm_callback_start: nvme 0000:00:05.0, parent: pci0000:00, bus [suspend]\n"
"  sh-80 [000] .....  10.009100: device_pm_callback_end: nvme 0000:00:05.0, err=0\n"
"  sh-80 [000] .....  10.100000: suspend_resume: dpm_prepare[2] begin\n"
"  sh-80 [000] .....  10.100100: device_pm_callback_start: nvme 0000:00:05.0, parent: pci0000:00, noirq bus [suspend]\n"
"  kworker/0:1-9 [001] .....  10.101000: device_pm_callback_start:  usb1, parent: 0000:00:04.0, type [resume]\n"
"  sh-80 [000] .....  10.102100: device_pm_callback_end: nvme 0000:00:05.0, err=0\n"
"  kworker/0:1-9 [001] .....  10.301000: device_pm_callback_end:  usb1, err=0\n"
"  sh-80 [000] .....  10.400000: device_pm_callback_start: nvme 0000:00:05.0, parent: pci0000:00, bus [resume]\n"
"  sh-80 [000] .....  10.403500: device_pm_callback_end: nvme 0000:00:05.0, err=0\n"
"  sh-80 [000] .....  10.500000: device_pm_callback_start: xhci_hcd 0000:00:04.0, parent: pci0000:00, [resume]\n"
"  sh-80 [000] .....  10.500010: device_pm_callback_end: xhci_hcd 0000:00:04.0, err=0\n";

static void test_devtiming_parse(void)
{
	const struct devcost *c;
	struct devcosts costs;

	CHECK(!devtiming_parse(trace_text, &costs));
	CHECK(costs.naps == 2);
	c = devcost_find(&costs, "0000:00:05.0");
	/* the last nap only: 2 ms suspend, 3.5 ms resume */
	CHECK(c && c->suspend_ms > 1.99 && c->suspend_ms < 2.01);
	CHECK(c && c->resume_ms > 3.49 && c->resume_ms < 3.51);
	CHECK(c && c->callbacks == 2);
	c = devcost_find(&costs, "usb1");
	CHECK(c && c->resume_ms > 199.9 && c->resume_ms < 200.1 &&
	      c->suspend_ms == 0);
	/* complete only: the PM core's walk of a kept device, no callback */
	c = devcost_find(&costs, "0000:00:04.0");
	CHECK(c && c->callbacks == 0);
	devcosts_free(&costs);
	CHECK(!devtiming_parse("no nap here\n", &costs) && costs.naps == 0 &&
	      costs.nr == 0);
	devcosts_free(&costs);
}

static void test_napd_list_devices(void)
{
	const char *t = new_tree("listdev");
	char sys[PATH_MAX], out[PATH_MAX], conf[PATH_MAX];
	char *const list[] = { (char *)napd_bin, "--sysfs-root", sys,
			       "--config", conf, "--list-devices", NULL };
	char *const check[] = { (char *)napd_bin, "--check-config", conf,
				NULL };

	build_server_tree(t);
	path_fmt(sys, sizeof(sys), "%s/sys", t);
	path_fmt(out, sizeof(out), "%s/out", t);
	path_fmt(conf, sizeof(conf), "%s/napd.conf", t);
	put("wake-dev = eth0\nnap-suspend = 00:05.0\n", "%s", conf);
	CHECK(run_napd(list, out, 0) == 0);
	CHECK(out_has(out, "pci0000:00/0000:00:04.0"));
	CHECK(out_has(out, "class rule: USB host controller (PCI class 0c03)"));
	CHECK(out_has(out, "usb1"));
	CHECK(out_has(out, "under kept 0000:00:04.0"));
	CHECK(out_has(out, "override: nap-suspend"));
	CHECK(out_has(out, "class rule: SATA controller"));
	CHECK(out_has(out, "rule: PCI function on a root bus without a driver"));
	CHECK(out_has(out, "(has a USB root hub)"));
	CHECK(out_has(out, "nap costs: none (no trace instance"));
	/* nothing was written */
	CHECK_STR(get("%s/" NS_XHCI, t), "0");

	put("port = 80\nwake-dev = eth0\nnap-keep = disk0\n", "%s", conf);
	CHECK(run_napd(check, out, 0) == 2);
	CHECK(out_has(out, ":3: bad nap-keep 'disk0'"));
}

static void test_preflight_parse(void)
{
	static const struct {
		const char *in;
		unsigned long long ms;
	} spans[] = {
		{ "3min", 180000 }, { "20s", 20000 }, { "30", 30000 },
		{ "500ms", 500 }, { "1min 30s", 90000 }, { "2h", 7200000 },
		{ "1500us", 2 }, { "0", 0 }, { "infinity", 0 }, { "", 0 },
	};
	static const char *const bad[] = { "3 parsecs", "s", "-1s", "1x" };
	const char *pos = interrupts_virtio;
	unsigned long long c, ms;
	unsigned int irq, i;
	char names[64];
	int ncpu = 0, n = 0;

	while (procnet_irq_next(&pos, &ncpu, &irq, &c, names, sizeof(names))) {
		n++;
		if (irq == 25)
			CHECK(c == 15 && !strcmp(names, "virtio0-input.0"));
		if (irq == 4)
			CHECK(c == 412 && !strcmp(names, "ttyS0"));
		if (irq == 11)
			CHECK_STR(names, "virtio9, uhci_hcd:usb1");
	}
	/* the numbered lines only, four CPU columns each */
	CHECK(n == 10);
	CHECK(ncpu == 4);
	pos = "  CPU0 CPU1\n 9: 3 4 IO-APIC 9-fasteoi acpi";
	ncpu = 0;
	CHECK(procnet_irq_next(&pos, &ncpu, &irq, &c, names, sizeof(names)) &&
	      irq == 9 && c == 7 && !strcmp(names, "acpi"));
	CHECK(!procnet_irq_next(&pos, &ncpu, &irq, &c, names, sizeof(names)));

	for (i = 0; i < ARRAY_SIZE(spans); i++) {
		ms = 12345;
		if (preflight_timespan_ms(spans[i].in, &ms) ||
		    ms != spans[i].ms) {
			printf("# timespan '%s': %llu, want %llu\n",
			       spans[i].in, ms, spans[i].ms);
			t_failed = true;
		}
	}
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		CHECK(preflight_timespan_ms(bad[i], &ms) == -1);
}

/* A host for napd --check: pseudo-sleep, idle states, watchdogs, units. */
static void build_check_tree(const char *t)
{
	build_tree(t, true);
	put("", "%s/sys/power/pseudosleep/arm", t);
	put("\n", "%s/sys/power/pseudosleep/last_wake_source", t);
	put_caps(t, CAPS_TASK);
	put("N\n", "%s/sys/module/pseudosleep/parameters/deep_idle", t);
	put("intel_idle\n", "%s/sys/devices/system/cpu/cpuidle/current_driver", t);
	put("POLL\n", "%s/sys/devices/system/cpu/cpu0/cpuidle/state0/name", t);
	put("0\n", "%s/sys/devices/system/cpu/cpu0/cpuidle/state0/latency", t);
	put("C1\n", "%s/sys/devices/system/cpu/cpu0/cpuidle/state1/name", t);
	put("2\n", "%s/sys/devices/system/cpu/cpu0/cpuidle/state1/latency", t);
	put("C6\n", "%s/sys/devices/system/cpu/cpu0/cpuidle/state2/name", t);
	put("133\n", "%s/sys/devices/system/cpu/cpu0/cpuidle/state2/latency", t);
	put("iTCO_wdt\n", "%s/sys/class/watchdog/watchdog0/identity", t);
	put("active\n", "%s/sys/class/watchdog/watchdog0/state", t);
	put("3\n", "%s/sys/class/watchdog/watchdog0/timeout", t);
	put("[Service]\nWatchdogSec=2s\n", "%s/etc/systemd/system/quick.service", t);
	put("[Service]\nWatchdogSec=3min\n", "%s/lib/systemd/system/slow.service", t);
	put("[Service]\nExecStart=/bin/true\n", "%s/lib/systemd/system/none.service", t);
}

static void test_napd_check(void)
{
	const char *t = new_tree("check");
	char sys[PATH_MAX], proc[PATH_MAX], out[PATH_MAX], conf[PATH_MAX];
	char *const argv[] = { (char *)napd_bin, "--sysfs-root", sys,
			       "--proc-root", proc, "--config", conf, "--check",
			       NULL };

	build_check_tree(t);
	tree_paths(t, sys, proc, out);
	path_fmt(conf, sizeof(conf), "%s/napd.conf", t);
	put("port = 80\nwake-dev = eth0\n", "%s", conf);

	/* a watchdog and a service a nap outlasts: unsafe */
	CHECK(run_napd(argv, out, 0) == 2);
	CHECK(out_has(out, "ok    kernel: "));
	CHECK(out_has(out, "offers pseudo ('[s2idle] deep pseudo'; napd selects it)"));
	CHECK(out_has(out, "pseudosleep/arm: the wakeup_count handshake's arm step"));
	CHECK(out_has(out, "ok    kernel: wake on work supported"));
	CHECK(out_has(out, "sync_on_suspend is 1: napd makes it 0 while it runs"));
	CHECK(out_has(out, "ok    nic eth0: pci0000:00/0000:00:02.0/virtio0, driver none,"));
	CHECK(out_has(out, " vectors 24-26; napd would arm 25: receive vectors only"));
	CHECK(out_has(out, "fail  nic eth0: no driver bound"));
	CHECK(out_has(out, "nic eth1: pci0000:00/0000:00:03.0, driver none, vectors 10; not a"));
	CHECK(out_has(out, "device keep    pci0000:00/0000:00:02.0/virtio0 (kept NIC (wake-dev))"));
	CHECK(out_has(out, "ok    devices: a nap would keep 2 and suspend 0 of the 2 listed"));
	CHECK(out_has(out, "warn  idle: pseudosleep.deep_idle=N: napping CPUs halt, but"));
	CHECK(out_has(out, " idle ones reach C6 (133 us)"));
	CHECK(out_has(out, "ok    interrupts: no IRQ above 100/s"));
	CHECK(out_has(out, "fail  watchdog: watchdog0 (iTCO_wdt), state active, timeout 3 s"));
	CHECK(out_has(out, "quick.service: WatchdogSec=2s, no longer than max-nap"));
	CHECK(!out_has_quiet(out, "slow.service"));
	CHECK(out_has(out, "naps would fail or be unsafe here"));

	/* every NIC when no wake-dev is configured */
	put("port = 80\n", "%s", conf);
	CHECK(run_napd(argv, out, 0) == 2);
	CHECK(out_has(out, "n/a   nic: no wake-dev configured"));
	CHECK(out_has(out, "0000:00:03.0, driver none, vectors 10; napd would arm 10"));
	CHECK(out_has(out, "nic eth2: platform/virtio-mmio.0/virtio1, driver none, vectors 27;"));
	CHECK(out_has(out, "vectors 27; napd would arm 27"));

	/* safe watchdogs, drivers bound: the idle warning is left */
	put("port = 80\nwake-dev = eth0\nmax-nap = 2s\n", "%s", conf);
	put("[Service]\nWatchdogSec=1min\n", "%s/etc/systemd/system/quick.service", t);
	mkdir_p("%s/sys/bus/pci/drivers/virtio-pci", t);
	link_to("../../../bus/pci/drivers/virtio-pci",
		"%s/sys/devices/pci0000:00/0000:00:02.0/virtio0/driver", t);
	CHECK(run_napd(argv, out, 0) == 1);
	CHECK(out_has(out, "driver virtio-pci"));
	CHECK(out_has(out, "ok    watchdog: watchdog0 (iTCO_wdt), state active, timeout 3 s:"));
	CHECK(out_has(out, "timeout 3 s: naps end after max-nap 2.0 s"));
	CHECK(out_has(out, "ok    watchdog: 2 services with WatchdogSec=, each longer than a nap"));
	CHECK(out_has(out, "# "));
	CHECK(out_has(out, " 0 fail, "));

	/* under systemd napd bounds naps by the units' watchdogs itself */
	put("[Service]\nWatchdogSec=2s\n", "%s/etc/systemd/system/quick.service", t);
	mkdir_p("%s/run/systemd/system", t);
	CHECK(run_napd(argv, out, 0) == 1);
	CHECK(out_has(out, "ok    watchdog: 2 services with WatchdogSec=: naps end within"));
	CHECK(!out_has_quiet(out, "quick.service"));
	put("port = 80\nwake-dev = eth0\nmax-nap = 2s\nsystemd-timers = no\n", "%s", conf);
	CHECK(run_napd(argv, out, 0) == 2);
	CHECK(out_has(out, "quick.service: WatchdogSec=2s, no longer than max-nap"));
	put("port = 80\nwake-dev = eth0\nmax-nap = 2s\n", "%s", conf);
	put("[Service]\nWatchdogSec=1min\n", "%s/etc/systemd/system/quick.service", t);

	/* deep_idle: nothing left to warn about */
	put("Y\n", "%s/sys/module/pseudosleep/parameters/deep_idle", t);
	CHECK(run_napd(argv, out, 0) == 0);
	CHECK(out_has(out, "this host suits naps"));

	/* the wake device's link down: a warning */
	put("down\n", "%s/sys/class/net/eth0/operstate", t);
	CHECK(run_napd(argv, out, 0) == 1);
	CHECK(out_has(out, "warn  wake-dev eth0: operstate down: napd naps only while"));
	put("up\n", "%s/sys/class/net/eth0/operstate", t);

	/* a kernel without pseudo-sleep: not supported, exit 2 */
	put("[s2idle] deep\n", "%s/sys/power/mem_sleep", t);
	CHECK(run_napd(argv, out, 0) == 2);
	CHECK(out_has(out, "fail  kernel: pseudo-sleep not supported"));
	CHECK(out_has(out, "pseudo-sleep not supported by this kernel"));
	/* no suspend at all */
	path_fmt(conf, sizeof(conf), "%s/sys/power/mem_sleep", t);
	unlink(conf);
	path_fmt(conf, sizeof(conf), "%s/napd.conf", t);
	CHECK(run_napd(argv, out, 0) == 2);
	CHECK(out_has(out, "cannot read"));
	CHECK(out_has(out, "no suspend support in this kernel"));
}

/* --check on a server: the kept controllers' own idle power management. */
static void test_napd_check_server(void)
{
	const char *t = new_tree("check-server");
	char sys[PATH_MAX], proc[PATH_MAX], out[PATH_MAX], conf[PATH_MAX];
	char *const argv[] = { (char *)napd_bin, "--sysfs-root", sys,
			       "--proc-root", proc, "--config", conf, "--check",
			       NULL };

	build_server_tree(t);
	put("", "%s/sys/power/pseudosleep/arm", t);
	link_to("../../../bus/pci/drivers/virtio-pci",
		"%s/" PCI0 "/0000:00:02.0/virtio0/driver", t);
	tree_paths(t, sys, proc, out);
	path_fmt(conf, sizeof(conf), "%s/napd.conf", t);
	put("port = 80\nwake-dev = eth0\n", "%s", conf);
	put("on\n", "%s/" PCI0 "/0000:00:04.0/power/control", t);
	put("0\n", "%s/sys/module/nvme_core/parameters/default_ps_max_latency_us",
	    t);
	put("max_performance\n", "%s/" PCI0 "/0000:00:1f.2/ata1/host0/scsi_host/host0/%s",
	    t, "link_power_management_policy");

	CHECK(run_napd(argv, out, 0) == 1);
	CHECK(out_has(out, "warn  device keep    pci0000:00/0000:00:04.0 (class rule: USB"));
	CHECK(out_has(out, "runtime PM off (power/control on): it cannot suspend"));
	CHECK(out_has(out, "warn  device keep    pci0000:00/0000:00:05.0 (class rule: NVMe"));
	CHECK(out_has(out, "APST off (nvme_core.default_ps_max_latency_us=0)"));
	CHECK(out_has(out, "warn  device keep    pci0000:00/0000:00:1f.2 (class rule: SATA"));
	CHECK(out_has(out, "link power management off on 1 port"));
	CHECK(out_has(out, " 0 fail, "));

	put("auto\n", "%s/" PCI0 "/0000:00:04.0/power/control", t);
	put("100000\n", "%s/sys/module/nvme_core/parameters/default_ps_max_latency_us",
	    t);
	put("med_power_with_dipm\n", "%s/" PCI0 "/0000:00:1f.2/ata1/host0/scsi_host/host0/%s",
	    t, "link_power_management_policy");
	CHECK(run_napd(argv, out, 0) == 0);
	CHECK(out_has(out, "ok    device keep    pci0000:00/0000:00:05.0 (class rule: NVMe"));
	CHECK(out_has(out, "this host suits naps"));
}

static const struct {
	const char *name;
	void (*fn)(void);
	bool needs_bin;
} tests[] = {
	{ "opts_defaults", test_opts_defaults, false },
	{ "opts_full", test_opts_full, false },
	{ "opts_bad_rejected", test_opts_bad, false },
	{ "proc_interrupts", test_interrupts, false },
	{ "proc_net_tcp", test_proc_net_tcp, false },
	{ "tcp_states", test_tcp_states, false },
	{ "irqlist_format", test_irqlist, false },
	{ "mem_sleep_parse", test_mem_sleep, false },
	{ "stats_json", test_stats_json, false },
	{ "irq_resolve", test_irq_resolve, false },
	{ "setup_restore", test_setup_restore, false },
	{ "setup_rearm", test_setup_rearm, false },
	{ "opts_wake_dev_repeated", test_opts_wake_devs, false },
	{ "setup_many_nics_bond_vlan", test_setup_many_nics, false },
	{ "settings_saved_file", test_settings_file, false },
	{ "setup_crash_recovery", test_setup_crash_recovery, false },
	{ "setup_dry_run", test_setup_dry_run, false },
	{ "setup_refusals", test_setup_refusals, false },
	{ "setup_s2idle_upstream", test_setup_s2idle, false },
	{ "diag_parse", test_diag_parse, false },
	{ "live_tcp_count", test_live_tcp, false },
	{ "live_tcp_idle_keepalive", test_live_tcp_idle, false },
	{ "max_nap_opts", test_max_nap_opts, false },
	{ "nap_bound_max_nap_and_timer", test_nap_bound, false },
	{ "backoff_after_aborted_entries", test_backoff, false },
	{ "backoff_quiet_time_adapts", test_adapt_quiet, false },
	{ "systemd_timers_json", test_timers_json, false },
	{ "systemd_timers_query", test_timers_query, false },
	{ "watchdog_units_parse_and_bound", test_watchdog_parse, false },
	{ "watchdog_units_query", test_watchdog_query, false },
	{ "alarm_timerfd", test_alarm_timerfd, false },
	{ "setup_keeps_alarmtimer_awake", test_setup_alarmtimer, false },
	{ "inhibit_parse", test_inhibit_parse, false },
	{ "inhibit_dir_fifo_safe", test_inhibit_dir, false },
	{ "config_file", test_config_good, false },
	{ "config_bad_file_line", test_config_bad, false },
	{ "config_every_error_reported", test_config_all_errors, false },
	{ "opts_new_bad_rejected", test_opts_new_bad, false },
	{ "idle_proc_stat_cpu", test_proc_stat, false },
	{ "idle_diskstats", test_diskstats, false },
	{ "idle_process_names", test_processes, false },
	{ "idle_udp_queued", test_udp, false },
	{ "rx_vector_selection", test_rx_vectors, false },
	{ "proc_net_dev_rx", test_net_dev, false },
	{ "proc_net_snmp_in", test_snmp_in, false },
	{ "setup_wake_on", test_setup_wake_on, false },
	{ "proc_net_sock_lines", test_sock_lines, false },
	{ "watch_server_work_and_copies_closed", test_watch_server, false },
	{ "watch_wakeup_kept", test_watch_wakeup_kept, false },
	{ "wcount_read_bounded", test_wcount_bounded, false },
	{ "notify_format", test_notify_format, false },
	{ "notify_send_listener", test_notify_send, false },
	{ "status_json_and_socket", test_status_json, false },
	{ "napd_exit_codes", test_napd_exit_codes, true },
	{ "napd_naps_and_restore", test_napd_naps, true },
	{ "napd_sigterm_restore", test_napd_sigterm_busy, true },
	{ "napd_wake_on_task", test_napd_wake_task, true },
	{ "napd_rx_keeps_awake", test_napd_rx_traffic, true },
	{ "napd_dry_run", test_napd_dry_run, true },
	{ "napd_error_restore", test_napd_errors, true },
	{ "napd_process_blocks_naps", test_napd_process_blocks, true },
	{ "napd_cpu_runnable_disk_udp_block", test_napd_idle_checks, true },
	{ "napd_sd_notify_ready_stopping", test_napd_notify, true },
	{ "napd_new_connection_seen", test_napd_dump_skipped, true },
	{ "napd_status_and_sighup_reload", test_napd_status_reload, true },
	{ "napd_check_config", test_napd_check_config, true },
	{ "napd_kill9_restart_restore", test_napd_kill9, true },
	{ "napd_two_nics_and_a_bond", test_napd_two_nics, true },
	{ "journal_stream_detected", test_journal_stream, false },
	{ "napd_journal_priorities", test_napd_journal, true },
	{ "metrics_format", test_metrics_format, false },
	{ "napd_metrics_file", test_napd_metrics, true },
	{ "napd_inhibitor_and_napctl_pause", test_napd_inhibitor_pause, true },
	{ "napd_link_down_holds_naps", test_napd_link_down, true },
	{ "napctl_errors", test_napctl_errors, true },
	{ "devpolicy_lean_overrides_restore", test_devpolicy_lean, false },
	{ "devpolicy_config_bad_file_line", test_devpolicy_config, false },
	{ "devtiming_parse_last_nap", test_devtiming_parse, false },
	{ "napd_list_devices_check_config", test_napd_list_devices, true },
	{ "preflight_irq_counts_timespans", test_preflight_parse, false },
	{ "napd_check_preflight", test_napd_check, true },
	{ "napd_check_server_idle_pm", test_napd_check_server, true },
};

int main(int argc, char *argv[])
{
	unsigned int i, n = ARRAY_SIZE(tests);
	int passed = 0, failed = 0, skipped = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	napd_bin = argc > 1 ? argv[1] : NULL;
	path_fmt(tmp_root, sizeof(tmp_root), "%s/napd-test.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmp_root)) {
		perror("mkdtemp");
		return 1;
	}
	path_fmt(ctl_sock, sizeof(ctl_sock), "%s/napd.sock", tmp_root);

	printf("TAP version 13\n1..%u\n", n);
	for (i = 0; i < n; i++) {
		t_failed = false;
		t_skip = NULL;
		if (tests[i].needs_bin && !napd_bin)
			t_skip = "no napd binary given";
		else
			tests[i].fn();
		if (t_failed) {
			failed++;
			printf("not ok %u - %s\n", i + 1, tests[i].name);
		} else if (t_skip) {
			skipped++;
			printf("ok %u - %s # SKIP %s\n", i + 1, tests[i].name,
			       t_skip);
		} else {
			passed++;
			printf("ok %u - %s\n", i + 1, tests[i].name);
		}
	}
	rm_rf(tmp_root);
	if (skipped)
		printf("# %d skipped\n", skipped);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
