// SPDX-License-Identifier: GPL-2.0
/*
 * The polling list seen from user space, polled from the polling state of
 * the platform's cpuidle driver (cpuidle_pollist.enable=1; acpi_idle in a
 * guest booted with vm-run --cstates), whose deeper states stay in use.  Its parameters take
 * valid values and reject bad ones without changing, an idle machine
 * goes deeper instead of polling, and with /sys/class/net/eth0/napi_idle_poll
 * set a reply to our ping is found by polling the NIC's NAPI instances
 * ("hits"), whatever the NIC's driver (virtio-net, e1000 or e1000e),
 * the sessions and window changes show as trace events, and with polling
 * turned off nothing is polled.
 * The tests skip what the command line did not enable.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../kselftest_harness.h"

#define CPUIDLE		"/sys/devices/system/cpu/cpuidle/"
#define PARAMS		"/sys/module/cpuidle_pollist/parameters/"
#define DEBUGFS		"/sys/kernel/debug/pollist/"
#define GATEWAY		"10.0.2.2"
#define NIC		"eth0"
#define IDLE_POLL	"/sys/class/net/" NIC "/napi_idle_poll"

static int read_str(const char *path, char *buf, int len)
{
	int fd, n;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n < 0)
		return n;
	buf[n] = '\0';
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return n;
}

/* One write() of str; 0 or -errno. */
static int write_str(const char *path, const char *str)
{
	size_t len = strlen(str);
	int fd, ret = 0;

	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	if (write(fd, str, len) != (ssize_t)len)
		ret = -errno;
	close(fd);
	return ret;
}

static bool cmdline_has(const char *opt)
{
	char buf[4096], *tok, *save;

	if (read_str("/proc/cmdline", buf, sizeof(buf)) < 0)
		return false;
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
		if (!strcmp(tok, opt))
			return true;
	return false;
}

static bool enable_given(void)
{
	return cmdline_has("cpuidle_pollist.enable=1");
}

/* The list is polled: asked for, and a platform driver with a polling state 0. */
static bool pollist_enabled(void)
{
	char buf[16];

	return enable_given() &&
	       read_str("/sys/devices/system/cpu/cpu0/cpuidle/state0/name",
			buf, sizeof(buf)) > 0 && !strcmp(buf, "POLL");
}

/* Column sums of /sys/kernel/debug/pollist/stats. */
struct totals {
	unsigned long long polls, hits, poll_ns, fallbacks, resched, busy, deep;
};

static int read_totals(struct totals *t)
{
	unsigned long long v[8];
	char line[256];
	FILE *f;
	int cpu, n = 0;

	memset(t, 0, sizeof(*t));
	f = fopen(DEBUGFS "stats", "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%d %llu %llu %llu %llu %llu %llu %llu %llu", &cpu,
			   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) != 9)
			continue;
		t->polls += v[0];
		t->hits += v[1];
		t->poll_ns += v[2];
		t->fallbacks += v[3];
		t->resched += v[4];
		t->busy += v[5];
		t->deep += v[6];
		n++;
	}
	fclose(f);
	return n;
}

/* Hits of eth0's NAPI instances in the entries file; -1 if none. */
static long long nic_hits(int *nr_entries)
{
	char line[256], name[64];
	unsigned long long hits;
	long long sum = -1;
	unsigned int sub;
	FILE *f;

	*nr_entries = 0;
	f = fopen(DEBUGFS "entries", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%u %63s %llu", &sub, name, &hits) != 3)
			continue;
		if (strncmp(name, NIC "-napi-", strlen(NIC "-napi-")))
			continue;
		if (sum < 0)
			sum = 0;
		sum += hits;
		(*nr_entries)++;
	}
	fclose(f);
	return sum;
}

/*
 * The NIC's receive IRQ in /proc/interrupts, or -1: virtio-net's is
 * named "...-input.0", e1000e's MSI-X one "eth0-rx-0", e1000's after the
 * interface.  *count gets the sum of its per-CPU counts.
 */
static int rx_irq(long long *count)
{
	char line[1024];
	int irq = -1;
	FILE *f;

	*count = 0;
	f = fopen("/proc/interrupts", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *end, *p;
		long n = strtol(line, &end, 10);

		if (end == line || *end != ':')
			continue;
		if (!strstr(end, "-input.0") && !strstr(end, " " NIC "-rx-0\n") &&
		    !strstr(end, " " NIC "\n"))
			continue;
		irq = n;
		for (p = end + 1;;) {
			long long c = strtoll(p, &end, 10);

			if (end == p)
				break;
			*count += c;
			p = end;
		}
		break;
	}
	fclose(f);
	return irq;
}

/*
 * The platform's driver and governor stay, with the driver's polling
 * state 0 and a deeper one.
 */
TEST(current_driver)
{
	char buf[64];

	if (!pollist_enabled())
		SKIP(return, "boot without cpuidle_pollist.enable=1 and a polling state");
	ASSERT_LE(0, read_str(CPUIDLE "current_driver", buf, sizeof(buf)));
	EXPECT_STRNE("pollist", buf);
	EXPECT_STRNE("none", buf);
	if (read_str(CPUIDLE "current_governor_ro", buf, sizeof(buf)) >= 0 ||
	    read_str(CPUIDLE "current_governor", buf, sizeof(buf)) >= 0)
		EXPECT_STRNE("pollist", buf);
	ASSERT_LE(0, read_str("/sys/devices/system/cpu/cpu0/cpuidle/state1/name",
			      buf, sizeof(buf)));
	ASSERT_LE(0, read_str(PARAMS "enable", buf, sizeof(buf)));
	EXPECT_STREQ("Y", buf);
}

TEST(enable_is_read_only)
{
	char buf[16];

	if (access(PARAMS "enable", F_OK))
		SKIP(return, "kernel without CONFIG_CPUIDLE_POLLIST");
	EXPECT_NE(0, write_str(PARAMS "enable", "N\n"));
	ASSERT_LE(0, read_str(PARAMS "enable", buf, sizeof(buf)));
	EXPECT_STREQ(enable_given() ? "Y" : "N", buf);
}

static const char * const tunables[] = {
	"poll_limit_ns", "poll_grow_start_ns", "poll_grow", "poll_shrink",
};

#define NR_TUNABLES ARRAY_SIZE(tunables)

FIXTURE(params) {
	char saved[NR_TUNABLES][32];
};

FIXTURE_SETUP(params)
{
	char path[128];
	unsigned int i;

	if (access(PARAMS "poll_limit_ns", F_OK))
		SKIP(return, "kernel without CONFIG_CPUIDLE_POLLIST");
	for (i = 0; i < NR_TUNABLES; i++) {
		snprintf(path, sizeof(path), PARAMS "%s", tunables[i]);
		ASSERT_LT(0, read_str(path, self->saved[i], sizeof(self->saved[i])));
	}
}

FIXTURE_TEARDOWN(params)
{
	char path[128], buf[40];
	unsigned int i;

	for (i = 0; i < NR_TUNABLES; i++) {
		if (!self->saved[i][0])
			continue;
		snprintf(path, sizeof(path), PARAMS "%s", tunables[i]);
		snprintf(buf, sizeof(buf), "%s\n", self->saved[i]);
		write_str(path, buf);
	}
}

TEST_F(params, accept_valid)
{
	static const struct { const char *name, *in, *out; } ok[] = {
		{ "poll_limit_ns", "0\n", "0" },
		{ "poll_limit_ns", "10000000\n", "10000000" },
		{ "poll_limit_ns", "300000", "300000" },
		{ "poll_grow_start_ns", "1000\n", "1000" },
		{ "poll_grow_start_ns", "0x1000\n", "4096" },
		{ "poll_grow_start_ns", "10000000\n", "10000000" },
		{ "poll_grow", "1\n", "1" },
		{ "poll_grow", "16\n", "16" },
		{ "poll_shrink", "0\n", "0" },
		{ "poll_shrink", "16\n", "16" },
	};
	char path[128], buf[32];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ok); i++) {
		snprintf(path, sizeof(path), PARAMS "%s", ok[i].name);
		EXPECT_EQ(0, write_str(path, ok[i].in))
			TH_LOG("%s <- %s", ok[i].name, ok[i].in);
		ASSERT_LE(0, read_str(path, buf, sizeof(buf)));
		EXPECT_STREQ(ok[i].out, buf);
	}
}

TEST_F(params, reject_invalid)
{
	static const struct { const char *name, *in; int err; } bad[] = {
		{ "poll_limit_ns", "10000001\n", ERANGE },
		{ "poll_limit_ns", "4294967296\n", ERANGE },
		{ "poll_limit_ns", "-1\n", EINVAL },
		{ "poll_limit_ns", "abc\n", EINVAL },
		{ "poll_limit_ns", "\n", EINVAL },
		{ "poll_limit_ns", "1 2\n", EINVAL },
		{ "poll_grow_start_ns", "999\n", ERANGE },
		{ "poll_grow_start_ns", "0\n", ERANGE },
		{ "poll_grow_start_ns", "20000000\n", ERANGE },
		{ "poll_grow_start_ns", "1e6\n", EINVAL },
		{ "poll_grow", "0\n", ERANGE },
		{ "poll_grow", "17\n", ERANGE },
		{ "poll_grow", "two\n", EINVAL },
		{ "poll_shrink", "17\n", ERANGE },
		{ "poll_shrink", "-2\n", EINVAL },
		{ "poll_shrink", "2.5\n", EINVAL },
	};
	char path[128], before[32], after[32];
	unsigned int i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		snprintf(path, sizeof(path), PARAMS "%s", bad[i].name);
		ASSERT_LT(0, read_str(path, before, sizeof(before)));
		ret = write_str(path, bad[i].in);
		EXPECT_EQ(-bad[i].err, ret)
			TH_LOG("%s <- \"%.*s\": %s", bad[i].name,
			       (int)strcspn(bad[i].in, "\n"), bad[i].in,
			       ret ? strerror(-ret) : "accepted");
		ASSERT_LT(0, read_str(path, after, sizeof(after)));
		EXPECT_STREQ(before, after);
	}
}

/*
 * napi_idle_poll takes 0 or 1; anything else, a device without a NAPI
 * instance to peek at (lo) and a kernel where the driver does not run get
 * their error and change nothing; writing the current value succeeds.
 */
TEST(napi_idle_poll_rejects_bad)
{
	static const char * const bad[] = { "2\n", "-1\n", "abc\n", "\n", "1 1\n" };
	char before[8], after[8];
	unsigned int i;
	int ret;

	if (access(IDLE_POLL, F_OK))
		SKIP(return, "no " IDLE_POLL " (CONFIG_CPUIDLE_POLLIST, " NIC ")");
	ASSERT_LE(0, read_str(IDLE_POLL, before, sizeof(before)));
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		ret = write_str(IDLE_POLL, bad[i]);
		EXPECT_EQ(-EINVAL, ret)
			TH_LOG("\"%.*s\": %s", (int)strcspn(bad[i], "\n"), bad[i],
			       ret ? strerror(-ret) : "accepted");
		ASSERT_LE(0, read_str(IDLE_POLL, after, sizeof(after)));
		EXPECT_STREQ(before, after);
	}
	if (!pollist_enabled())
		EXPECT_EQ(-EOPNOTSUPP, write_str(IDLE_POLL, "1\n"));
	EXPECT_EQ(-EOPNOTSUPP,
		  write_str("/sys/class/net/lo/napi_idle_poll", "1\n"));
	ASSERT_LE(0, read_str("/sys/class/net/lo/napi_idle_poll",
			      after, sizeof(after)));
	EXPECT_STREQ("0", after);
	/* The current value is always accepted. */
	EXPECT_EQ(0, write_str("/sys/class/net/lo/napi_idle_poll", "0\n"));
	ASSERT_LE(0, read_str(IDLE_POLL, after, sizeof(after)));
	EXPECT_STREQ(before, after);
}

/*
 * Platform mode with nothing registered: the cpuidle core's hooks are
 * off, so nothing of pollist runs (no session, no deeper state seen).
 */
TEST(idle_without_entries)
{
	struct totals a, b;
	int entries;

	if (!pollist_enabled())
		SKIP(return, "boot without cpuidle_pollist.enable=1 and a polling state");
	nic_hits(&entries);
	if (entries)
		SKIP(return, "entries are registered");
	ASSERT_LT(0, read_totals(&a));
	sleep(1);
	ASSERT_LT(0, read_totals(&b));
	EXPECT_EQ(a.polls, b.polls);
	EXPECT_EQ(a.busy, b.busy);
	EXPECT_EQ(a.deep, b.deep);
}

/*
 * An idle machine must not burn its CPUs polling: with the NIC on the list
 * and the default window, the windows end and the CPUs go deeper.
 */
TEST(idle_falls_back_to_deeper_states)
{
	struct totals a, b;
	struct timespec t0, t1;
	double wall_ns, polled;
	int ncpu;

	if (!pollist_enabled())
		SKIP(return, "boot without cpuidle_pollist.enable=1 and a polling state");
	if (access(IDLE_POLL, W_OK))
		SKIP(return, "no " IDLE_POLL);
	ASSERT_EQ(0, write_str(IDLE_POLL, "1\n"));
	ncpu = read_totals(&a);
	ASSERT_LT(0, ncpu);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	sleep(2);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	write_str(IDLE_POLL, "0\n");
	ASSERT_LT(0, read_totals(&b));
	wall_ns = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
	polled = (double)(b.poll_ns - a.poll_ns);
	TH_LOG("2 s idle: %llu polls, %.1f ms polled, %llu fallbacks, %llu deep",
	       b.polls - a.polls, polled / 1e6, b.fallbacks - a.fallbacks,
	       b.deep - a.deep);
	EXPECT_LT(polled, wall_ns * ncpu / 4);
	EXPECT_LT(0, b.deep - a.deep);
}

/* Raw ICMP echo to the QEMU user-net gateway. */
static unsigned short csum(const void *data, int len)
{
	const unsigned short *p = data;
	unsigned int sum = 0;

	for (; len > 1; len -= 2)
		sum += *p++;
	if (len)
		sum += *(const unsigned char *)p;
	sum = (sum >> 16) + (sum & 0xffff);
	sum += sum >> 16;
	return ~sum;
}

static int ping_once(int fd, const struct sockaddr_in *to, int seq, int timeout_ms)
{
	struct icmphdr req = { .type = ICMP_ECHO };
	char buf[1500];
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	req.un.echo.id = htons(getpid() & 0xffff);
	req.un.echo.sequence = htons(seq);
	req.checksum = csum(&req, sizeof(req));
	if (sendto(fd, &req, sizeof(req), 0, (const struct sockaddr *)to,
		   sizeof(*to)) != sizeof(req))
		return -errno;
	while (poll(&pfd, 1, timeout_ms) == 1) {
		struct iphdr *ip = (struct iphdr *)buf;
		struct icmphdr *rep;
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		if (n < (ssize_t)sizeof(*ip))
			continue;
		rep = (struct icmphdr *)(buf + ip->ihl * 4);
		if (rep->type == ICMP_ECHOREPLY &&
		    rep->un.echo.id == req.un.echo.id &&
		    rep->un.echo.sequence == req.un.echo.sequence)
			return 0;
	}
	return -ETIMEDOUT;
}

static int ping_gateway(int count, int interval_ms)
{
	struct sockaddr_in to = { .sin_family = AF_INET };
	int fd, i, replies = 0;

	inet_pton(AF_INET, GATEWAY, &to.sin_addr);
	fd = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
	if (fd < 0)
		return -errno;
	for (i = 0; i < count; i++) {
		if (!ping_once(fd, &to, i + 1, 1000))
			replies++;
		usleep(interval_ms * 1000);
	}
	close(fd);
	return replies;
}

FIXTURE(nic) {
	char saved[NR_TUNABLES][32];
	char irq_affinity[64];
	int irq;
};

FIXTURE_SETUP(nic)
{
	/*
	 * A fixed 10 ms window (grow and shrink by 1 keep it): under TCG the
	 * gateway answers in 1 to 30 ms.
	 */
	static const char * const fixed[NR_TUNABLES] = {
		"10000000\n", "10000000\n", "1\n", "1\n",
	};
	char path[128];
	unsigned int i;
	long long count;
	cpu_set_t set;

	self->irq = -1;
	if (!pollist_enabled())
		SKIP(return, "boot without cpuidle_pollist.enable=1 and a polling state");
	ASSERT_EQ(0, write_str(IDLE_POLL, "1\n"))
		TH_LOG("cannot turn on " IDLE_POLL);
	for (i = 0; i < NR_TUNABLES; i++) {
		snprintf(path, sizeof(path), PARAMS "%s", tunables[i]);
		ASSERT_LT(0, read_str(path, self->saved[i], sizeof(self->saved[i])));
	}
	for (i = 0; i < NR_TUNABLES; i++) {
		snprintf(path, sizeof(path), PARAMS "%s", tunables[i]);
		ASSERT_EQ(0, write_str(path, fixed[i]));
	}

	/*
	 * The receive interrupt on CPU 0, ourselves on CPU 1: the CPU that
	 * idles after our request polls, while the interrupt has to wake
	 * another, halted, CPU.  The pings are spaced by more than the
	 * window so that CPU 0 is halted, not polling, when one is sent.
	 */
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return;
	self->irq = rx_irq(&count);
	if (self->irq >= 0) {
		snprintf(path, sizeof(path), "/proc/irq/%d/smp_affinity_list", self->irq);
		if (read_str(path, self->irq_affinity, sizeof(self->irq_affinity)) <= 0 ||
		    write_str(path, "0\n"))
			self->irq = -1;
	}
	CPU_ZERO(&set);
	CPU_SET(1, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

FIXTURE_TEARDOWN(nic)
{
	char path[128], buf[80];
	unsigned int i;

	for (i = 0; i < NR_TUNABLES; i++) {
		if (!self->saved[i][0])
			continue;
		snprintf(path, sizeof(path), PARAMS "%s", tunables[i]);
		snprintf(buf, sizeof(buf), "%s\n", self->saved[i]);
		write_str(path, buf);
	}
	if (pollist_enabled())
		write_str(IDLE_POLL, "0\n");
	if (self->irq >= 0) {
		snprintf(path, sizeof(path), "/proc/irq/%d/smp_affinity_list", self->irq);
		snprintf(buf, sizeof(buf), "%s\n", self->irq_affinity);
		write_str(path, buf);
	}
}

TEST_F(nic, napi_registered)
{
	char buf[8];
	int entries;

	ASSERT_LE(0, read_str(IDLE_POLL, buf, sizeof(buf)));
	EXPECT_STREQ("1", buf);
	EXPECT_LE(0, nic_hits(&entries));
	EXPECT_LT(0, entries) TH_LOG("no " NIC "-napi-* entry in " DEBUGFS "entries");
}

TEST_F(nic, ping_reply_found_by_polling)
{
	long long hits0, hits1, irqs0, irqs1;
	struct totals a, b;
	char spurious[128] = "", path[64];
	int entries, replies;

	hits0 = nic_hits(&entries);
	ASSERT_LE(0, hits0);
	ASSERT_LT(0, read_totals(&a));
	rx_irq(&irqs0);
	replies = ping_gateway(100, 30);
	rx_irq(&irqs1);
	ASSERT_LT(0, read_totals(&b));
	hits1 = nic_hits(&entries);
	if (self->irq >= 0) {
		snprintf(path, sizeof(path), "/proc/irq/%d/spurious", self->irq);
		read_str(path, spurious, sizeof(spurious));
		for (char *c = spurious; *c; c++)
			if (*c == '\n')
				*c = ' ';
	}
	TH_LOG("%d/100 replies, NAPI hits %lld, rx interrupts %lld (%s)",
	       replies, hits1 - hits0, irqs1 - irqs0, spurious);
	TH_LOG("all CPUs: %llu polls, %llu hits, %.1f ms polled, %llu fallbacks, %llu resched",
	       b.polls - a.polls, b.hits - a.hits,
	       (b.poll_ns - a.poll_ns) / 1e6, b.fallbacks - a.fallbacks,
	       b.resched - a.resched);
	ASSERT_LT(90, replies) TH_LOG("no ICMP echo replies from " GATEWAY);
	EXPECT_LT(0, hits1 - hits0);
	EXPECT_LE(hits1 - hits0, (long long)(b.hits - a.hits));
	EXPECT_LT(0, b.polls - a.polls);
}

/*
 * poll_limit_ns=0 turns polling off: under traffic no session runs and no
 * entry is polled, the CPUs halt and the interrupt receives.
 */
TEST_F(nic, disabled_polls_nothing)
{
	long long hits0, hits1;
	struct totals a, b;
	int entries, replies;

	ASSERT_EQ(0, write_str(PARAMS "poll_limit_ns", "0\n"));
	/* A session that began before the write ends with its window. */
	ping_gateway(2, 20);
	ASSERT_LT(0, read_totals(&a));
	hits0 = nic_hits(&entries);
	replies = ping_gateway(20, 10);
	ASSERT_LT(0, read_totals(&b));
	hits1 = nic_hits(&entries);
	TH_LOG("%d/20 replies, %llu polls, %llu hits, %lld NAPI hits, %llu deep",
	       replies, b.polls - a.polls, b.hits - a.hits, hits1 - hits0,
	       b.deep - a.deep);
	EXPECT_LT(15, replies);
	EXPECT_EQ(a.polls, b.polls);
	EXPECT_EQ(a.hits, b.hits);
	EXPECT_EQ(hits0, hits1);
	EXPECT_LT(a.deep, b.deep);
}

/*
 * napi_idle_poll=0 takes the NIC off the list: under traffic no session
 * runs (the list is empty) and no entry is left.
 */
TEST_F(nic, off_polls_nothing)
{
	struct totals a, b;
	int entries, replies;

	ASSERT_EQ(0, write_str(IDLE_POLL, "0\n"));
	EXPECT_EQ(-1, nic_hits(&entries));
	EXPECT_EQ(0, entries);
	ASSERT_LT(0, read_totals(&a));
	replies = ping_gateway(20, 10);
	ASSERT_LT(0, read_totals(&b));
	TH_LOG("%d/20 replies, %llu polls, %llu hits, %llu deep",
	       replies, b.polls - a.polls, b.hits - a.hits, b.deep - a.deep);
	EXPECT_LT(15, replies);
	EXPECT_EQ(a.polls, b.polls);
	EXPECT_EQ(a.hits, b.hits);
	/*
	 * The CPUs go deeper; with the list empty the core's hooks are off
	 * and do not even count that.
	 */
	EXPECT_EQ(a.deep, b.deep);
}

/* The usage count of a CPU's idle state, or -1 if it has no such state. */
static long long state_usage(int cpu, int state)
{
	char path[96], buf[32];

	snprintf(path, sizeof(path),
		 "/sys/devices/system/cpu/cpu%d/cpuidle/state%d/usage", cpu, state);
	if (read_str(path, buf, sizeof(buf)) <= 0)
		return -1;
	return atoll(buf);
}

/* The index of a CPU's deepest idle state. */
static int deepest_state(int cpu)
{
	int i = 0;

	while (state_usage(cpu, i + 1) >= 0)
		i++;
	return i;
}

/*
 * Platform mode: while the NIC is polled, the polling state walks the
 * list and the platform's deepest state is still entered on every CPU,
 * during the pings and the second after them.
 */
TEST_F(nic, deep_states_kept)
{
	long long poll0[2], poll1[2], deep0[2], deep1[2], hits0, hits1;
	int cpu, ncpu, deep, entries, replies;

	if (!pollist_enabled())
		SKIP(return, "boot without cpuidle_pollist.enable=1 and a polling state");
	ncpu = sysconf(_SC_NPROCESSORS_ONLN) < 2 ? 1 : 2;
	deep = deepest_state(0);
	ASSERT_LT(0, deep) TH_LOG("no state deeper than polling");
	for (cpu = 0; cpu < ncpu; cpu++) {
		poll0[cpu] = state_usage(cpu, 0);
		deep0[cpu] = state_usage(cpu, deep);
	}
	hits0 = nic_hits(&entries);
	replies = ping_gateway(50, 30);
	sleep(1);
	hits1 = nic_hits(&entries);
	for (cpu = 0; cpu < ncpu; cpu++) {
		poll1[cpu] = state_usage(cpu, 0);
		deep1[cpu] = state_usage(cpu, deep);
		TH_LOG("cpu%d: state0 (POLL) +%lld, state%d +%lld", cpu,
		       poll1[cpu] - poll0[cpu], deep, deep1[cpu] - deep0[cpu]);
		EXPECT_LT(deep0[cpu], deep1[cpu]);
	}
	TH_LOG("%d/50 replies, NAPI hits %lld", replies, hits1 - hits0);
	EXPECT_LT(40, replies);
	EXPECT_LT(poll0[0] + poll0[ncpu - 1], poll1[0] + poll1[ncpu - 1]);
}

#define TRACE_INST	"/sys/kernel/tracing/instances/pollist_test/"
#define WINDOW_NS	10000000ULL	/* the nic fixture's fixed window */

/* What the trace events of the instance's buffer say. */
struct traced {
	unsigned long long sessions, hits, grows, shrinks, odd;
};

static int read_traced(struct traced *t)
{
	unsigned long long old_ns, new_ns;
	unsigned int hits;
	char line[512], *p;
	FILE *f;

	memset(t, 0, sizeof(*t));
	f = fopen(TRACE_INST "trace", "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		p = strstr(line, " pollist_window: ");
		if (p) {
			if (sscanf(p, " pollist_window: old_ns=%llu new_ns=%llu",
				   &old_ns, &new_ns) != 2 || old_ns == new_ns ||
			    (new_ns && new_ns != WINDOW_NS))
				t->odd++;
			else if (new_ns > old_ns)
				t->grows++;
			else
				t->shrinks++;
			continue;
		}
		p = strstr(line, " pollist_session: ");
		if (!p || strstr(p, "outcome=busy"))
			continue;
		t->sessions++;
		p = strstr(p, " hits=");
		if (p && sscanf(p, " hits=%u", &hits) == 1)
			t->hits += hits;
	}
	fclose(f);
	return 0;
}

/*
 * Idle 0.5 s and 20 pings with the events on, poll_shrink=2 (the fixture's
 * 10 ms window drops to 0 after a longer idle period and comes back after
 * a shorter one).  0 or -errno; *a0 and *b1 are read before the events
 * are turned on and after they are off, *a1 and *b0 while they are on.
 */
static int trace_pings(struct totals *a0, struct totals *a1,
		       struct totals *b0, struct totals *b1, int *replies)
{
	int ret;

	ret = write_str(TRACE_INST "buffer_size_kb", "1024\n");
	if (!ret)
		ret = write_str(PARAMS "poll_shrink", "2\n");
	if (ret)
		return ret;
	read_totals(a0);
	ret = write_str(TRACE_INST "events/pollist/enable", "1\n");
	if (ret)
		return ret;
	read_totals(a1);
	usleep(500000);
	*replies = ping_gateway(20, 30);
	read_totals(b0);
	ret = write_str(TRACE_INST "events/pollist/enable", "0\n");
	read_totals(b1);
	return ret;
}

/*
 * The trace events pollist:pollist_session and pollist:pollist_window, in
 * a trace instance of the test's own.  Each session the statistics count
 * while the events are on is traced, and each traced one is counted: the
 * traced sessions and hits lie between the counts read while the events
 * were on and those read around turning them on and off, give or take a
 * session in flight per CPU.  Windows are traced as they shrink and grow,
 * between 0 and the fixed window only.
 */
TEST_F(nic, sessions_and_windows_traced)
{
	unsigned long long inner, outer, ncpu;
	struct totals a0, a1, b0, b1;
	int ret, replies = 0;
	struct traced t;

	rmdir(TRACE_INST);
	if (mkdir(TRACE_INST, 0755))
		SKIP(return, "no tracefs instance: %s", strerror(errno));
	ret = trace_pings(&a0, &a1, &b0, &b1, &replies);
	if (!ret)
		ret = read_traced(&t);
	rmdir(TRACE_INST);
	ASSERT_EQ(0, ret) TH_LOG("tracefs: %s", strerror(-ret));

	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	inner = b0.polls - a1.polls;
	outer = b1.polls - a0.polls;
	TH_LOG("%d/20 replies; traced: sessions %llu (counted %llu..%llu), hits %llu (%llu..%llu)",
	       replies, t.sessions, inner, outer, t.hits, b0.hits - a1.hits, b1.hits - a0.hits);
	TH_LOG("windows traced: %llu grown, %llu shrunk, %llu odd", t.grows, t.shrinks, t.odd);
	EXPECT_LT(0, inner);
	EXPECT_LE(inner, t.sessions + ncpu);
	EXPECT_LE(t.sessions, outer + ncpu);
	EXPECT_LE(b0.hits - a1.hits, t.hits + ncpu);
	EXPECT_LE(t.hits, b1.hits - a0.hits + ncpu);
	EXPECT_LT(0, t.grows);
	EXPECT_LT(0, t.shrinks);
	EXPECT_EQ(0, t.odd);
}

/* ETHTOOL_GRINGPARAM or ETHTOOL_SRINGPARAM on eth0; 0 or -errno. */
static int ringparam(struct ethtool_ringparam *r, __u32 cmd)
{
	struct ifreq ifr = { 0 };
	int fd, ret = 0;

	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		return -errno;
	r->cmd = cmd;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", NIC);
	ifr.ifr_data = (void *)r;
	if (ioctl(fd, SIOCETHTOOL, &ifr))
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * A ring resize disables and enables NAPI (twice here): the pollers keep
 * off the ring meanwhile, and afterwards the NIC is polled again.
 */
TEST_F(nic, polled_after_ring_resize)
{
	struct ethtool_ringparam r = { 0 }, bigger;
	long long hits0, hits1;
	int entries, replies, ret;

	ASSERT_EQ(0, ringparam(&r, ETHTOOL_GRINGPARAM));
	bigger = r;
	bigger.rx_pending = r.rx_pending * 2 <= r.rx_max_pending ?
			    r.rx_pending * 2 : r.rx_pending / 2;
	ret = ringparam(&bigger, ETHTOOL_SRINGPARAM);
	if (ret == -EOPNOTSUPP || ret == -EINVAL)
		SKIP(return, "%s cannot resize its receive ring: %s", NIC,
		     strerror(-ret));
	ASSERT_EQ(0, ret);
	ping_gateway(5, 20);
	ASSERT_EQ(0, ringparam(&r, ETHTOOL_SRINGPARAM));
	/* The link may take a moment to come back after the reset. */
	sleep(3);
	hits0 = nic_hits(&entries);
	ASSERT_LT(0, entries);
	replies = ping_gateway(100, 30);
	hits1 = nic_hits(&entries);
	TH_LOG("after two resizes (rx %u <-> %u): %d/100 replies, NAPI hits %lld",
	       r.rx_pending, bigger.rx_pending, replies, hits1 - hits0);
	ASSERT_LT(80, replies);
	EXPECT_LT(0, hits1 - hits0);
}

/* Sub-lists of an offline CPU are still polled: nothing moves or breaks. */
TEST_F(nic, cpu_offline)
{
	const char *online = "/sys/devices/system/cpu/cpu1/online";
	char buf[64];
	int before, after, replies;

	if (access(online, W_OK))
		SKIP(return, "CPU 1 cannot go offline");
	nic_hits(&before);
	ASSERT_EQ(0, write_str(online, "0\n"));
	replies = ping_gateway(20, 10);
	nic_hits(&after);
	EXPECT_EQ(0, write_str(online, "1\n"));
	EXPECT_LT(15, replies);
	EXPECT_EQ(before, after);
	ASSERT_LE(0, read_str("/sys/devices/system/cpu/cpu1/cpuidle/state0/name",
			      buf, sizeof(buf)));
	EXPECT_STREQ("POLL", buf);
}

TEST_HARNESS_MAIN
