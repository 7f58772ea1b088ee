// SPDX-License-Identifier: GPL-2.0
/*
 * Pseudo-sleep sysfs ABI: the files exist, only root writes them, valid
 * input is read back in canonical form, and every malformed input is
 * rejected with -EINVAL or -ERANGE and changes nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "pseudosleep_util.h"

#define WAKE_IRQ "/sys/power/wake_irq"
#define MEM_SLEEP "/sys/power/mem_sleep"
#define ARM "/sys/power/pseudosleep/arm"
#define NOSLEEP "/sys/class/rtc/rtc0/device/power/nosleep"

static const char * const stat_files[] = {
	"naps", "aborted_naps", "last_wake_irq", "spurious_wakeups",
	"total_nap_ns", "last_nap_ns", "wake_latency_ns", "entry_sync_ns",
	"entry_freeze_ns", "entry_suspend_devices_ns", "entry_cpu_halt_ns",
	"exit_cpu_wake_ns", "exit_resume_devices_ns", "exit_thaw_ns",
	"wake_irq_dropped",
};

/* Two IRQs that have handlers: the RTC's and a virtio NIC's. */
static int irq_a(void) { return ps_find_irq("rtc0"); }
static int irq_b(void) { return ps_find_irq("virtio"); }

FIXTURE(wake_irq) {
	char saved[4096];
};

FIXTURE_SETUP(wake_irq)
{
	if (!ps_have_pseudosleep())
		SKIP(return, "kernel without CONFIG_PM_PSEUDOSLEEP");
	ASSERT_LE(0, ps_read(WAKE_IRQ, self->saved, sizeof(self->saved)));
}

FIXTURE_TEARDOWN(wake_irq)
{
	char buf[4100];

	snprintf(buf, sizeof(buf), "%s\n", self->saved);
	ps_write(WAKE_IRQ, buf);
}

TEST_F(wake_irq, accepts_lists)
{
	char want[64], got[4096];
	int a = irq_a(), b = irq_b();

	ASSERT_LT(0, a) TH_LOG("no rtc0 line in /proc/interrupts");
	ASSERT_LT(0, b) TH_LOG("no virtio line in /proc/interrupts");

	snprintf(want, sizeof(want), "%d", a);
	ASSERT_EQ(0, ps_write(WAKE_IRQ, want));
	ASSERT_LE(0, ps_read(WAKE_IRQ, got, sizeof(got)));
	EXPECT_STREQ(want, got);

	snprintf(want, sizeof(want), "%d,%d\n", b, a);
	ASSERT_EQ(0, ps_write(WAKE_IRQ, want));
	ASSERT_LE(0, ps_read(WAKE_IRQ, got, sizeof(got)));
	snprintf(want, sizeof(want), "%d,%d", a < b ? a : b, a < b ? b : a);
	EXPECT_STREQ(want, got);

	/* A range of one is a range too. */
	snprintf(want, sizeof(want), "%d-%d", a, a);
	ASSERT_EQ(0, ps_write(WAKE_IRQ, want));
	ASSERT_LE(0, ps_read(WAKE_IRQ, got, sizeof(got)));
	snprintf(want, sizeof(want), "%d", a);
	EXPECT_STREQ(want, got);

	/* An empty write clears. */
	ASSERT_EQ(0, ps_write(WAKE_IRQ, "\n"));
	ASSERT_LE(0, ps_read(WAKE_IRQ, got, sizeof(got)));
	EXPECT_STREQ("", got);
}

static void expect_rejected(struct __test_metadata *_metadata,
			    const char *input, const char *before)
{
	char got[4096];
	int ret = ps_write(WAKE_IRQ, input);

	EXPECT_TRUE(ret == -EINVAL || ret == -ERANGE || ret == -E2BIG)
		TH_LOG("\"%.40s\" gave %d", input, ret);
	ASSERT_LE(0, ps_read(WAKE_IRQ, got, sizeof(got)));
	EXPECT_STREQ(before, got) TH_LOG("\"%.40s\" changed the list", input);
}

TEST_F(wake_irq, rejects_malformed)
{
	static const char * const bad[] = {
		"abc", "-1", "-5", "1.5", "0x8", "5-3", "3-", "--", "8;9",
		"twenty", "8,x", "99999999999999999999", "4294967296",
		"2147483648", "1000000", "65535-65536", "8 nine",
	};
	char before[64], buf[80];
	int a = irq_a(), noaction, i;
	char *huge;

	ASSERT_LT(0, a);
	snprintf(before, sizeof(before), "%d", a);
	ASSERT_EQ(0, ps_write(WAKE_IRQ, before));

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		expect_rejected(_metadata, bad[i], before);

	/* An IRQ that exists but has no handler. */
	noaction = ps_irq_without_handler();
	if (noaction >= 0) {
		snprintf(buf, sizeof(buf), "%d", noaction);
		expect_rejected(_metadata, buf, before);
		snprintf(buf, sizeof(buf), "%d,%d", a, noaction);
		expect_rejected(_metadata, buf, before);
	}
	/* A number with no IRQ descriptor at all. */
	for (i = 1; i < 4096; i++) {
		char path[64];

		snprintf(path, sizeof(path), "/sys/kernel/irq/%d", i);
		if (access(path, F_OK)) {
			snprintf(buf, sizeof(buf), "%d", i);
			expect_rejected(_metadata, buf, before);
			break;
		}
	}
	/* Overlong: a page of digits, and more than a page. */
	huge = malloc(8192);
	ASSERT_NE(NULL, huge);
	memset(huge, '9', 4095);
	huge[4095] = '\0';
	expect_rejected(_metadata, huge, before);
	memset(huge, '1', 8191);
	huge[8191] = '\0';
	expect_rejected(_metadata, huge, before);
	free(huge);
}

TEST(stats_files_exist)
{
	char path[256];
	struct stat st;
	int i;

	if (!ps_have_pseudosleep())
		SKIP(return, "kernel without CONFIG_PM_PSEUDOSLEEP");
	for (i = 0; i < ARRAY_SIZE(stat_files); i++) {
		snprintf(path, sizeof(path), PS_STATS "%s", stat_files[i]);
		ASSERT_EQ(0, stat(path, &st)) TH_LOG("%s missing", path);
		EXPECT_EQ(0444, st.st_mode & 0777) TH_LOG("%s mode", path);
		EXPECT_LE(0, ps_read_num(path)) TH_LOG("%s not a number", path);
		EXPECT_NE(0, ps_write(path, "0")) TH_LOG("%s writable", path);
	}
	/* A name, not a number: "" until a wakeup source ends a nap. */
	ASSERT_EQ(0, stat(PS_STATS "last_wake_source", &st));
	EXPECT_EQ(0444, st.st_mode & 0777);
	EXPECT_NE(0, ps_write(PS_STATS "last_wake_source", "x"));
	ASSERT_EQ(0, stat(WAKE_IRQ, &st));
	EXPECT_EQ(0644, st.st_mode & 0777);
}

TEST(root_only_writes)
{
	static const char * const files[] = { WAKE_IRQ, NOSLEEP, MEM_SLEEP };
	int i, status;
	pid_t pid;

	if (!ps_have_pseudosleep())
		SKIP(return, "kernel without CONFIG_PM_PSEUDOSLEEP");
	ASSERT_EQ(0, getuid()) TH_LOG("run as root");
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (setgid(65534) || setuid(65534))
			_exit(2);
		for (i = 0; i < 3; i++)
			if (ps_write(files[i], "0") != -EACCES)
				_exit(10 + i);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("file %d writable by nobody",
						 WEXITSTATUS(status) - 10);
}

/* Each of @bad fails with @err and leaves @path reading @keep. */
static void expect_each_rejected(struct __test_metadata *_metadata,
				 const char *path, const char * const *bad,
				 int n, int err, const char *keep)
{
	char got[64];
	int i;

	for (i = 0; i < n; i++) {
		EXPECT_EQ(err, ps_write(path, bad[i]))
			TH_LOG("\"%s\" accepted", bad[i]);
		ASSERT_LT(0, ps_read(path, got, sizeof(got)));
		EXPECT_STREQ(keep, got) TH_LOG("\"%s\" changed it", bad[i]);
	}
}

TEST(nosleep)
{
	static const char * const bad[] = {
		"2", "10", "-1", "yellow", " ", "1 1", "on/off", "01", "truee",
	};
	char got[16];

	if (!ps_have_pseudosleep())
		SKIP(return, "kernel without CONFIG_PM_PSEUDOSLEEP");
	ASSERT_LT(0, ps_read(NOSLEEP, got, sizeof(got)));
	ASSERT_STREQ("0", got);
	ASSERT_EQ(0, ps_write(NOSLEEP, "1\n"));
	ASSERT_LT(0, ps_read(NOSLEEP, got, sizeof(got)));
	EXPECT_STREQ("1", got);
	expect_each_rejected(_metadata, NOSLEEP, bad, ARRAY_SIZE(bad), -EINVAL, "1");
	ASSERT_EQ(0, ps_write(NOSLEEP, "off"));
	ASSERT_LT(0, ps_read(NOSLEEP, got, sizeof(got)));
	EXPECT_STREQ("0", got);
}

/*
 * A strict boolean module parameter: mode 0644, its default @def, @set
 * gives the other value, each of @bad is rejected and changes nothing,
 * @reset gives @def back.
 */
static void check_bool_param(struct __test_metadata *_metadata,
			     const char *path, const char *def,
			     const char *set, const char *reset,
			     const char * const *bad, int nbad)
{
	const char *other = strcmp(def, "0") ? "0" : "1";
	struct stat st;
	char got[16];

	ASSERT_EQ(0, stat(path, &st));
	EXPECT_EQ(0644, st.st_mode & 07777);
	ASSERT_LT(0, ps_read(path, got, sizeof(got)));
	ASSERT_STREQ(def, got) TH_LOG("%s: not the documented default", path);
	ASSERT_EQ(0, ps_write(path, set));
	ASSERT_LT(0, ps_read(path, got, sizeof(got)));
	EXPECT_STREQ(other, got);
	expect_each_rejected(_metadata, path, bad, nbad, -EINVAL, other);
	ASSERT_EQ(0, ps_write(path, reset));
	ASSERT_LT(0, ps_read(path, got, sizeof(got)));
	EXPECT_STREQ(def, got);
}

#define DEEP_IDLE PS_PARAM "deep_idle"

/* HLT is the default. */
TEST(deep_idle_param)
{
	static const char * const bad[] = {
		"2", "10", "-1", "yellow", " ", "1 1", "01", "truee",
	};

	if (!ps_have_pseudosleep())
		SKIP(return, "kernel without CONFIG_PM_PSEUDOSLEEP");
	check_bool_param(_metadata, DEEP_IDLE, "0", "1\n", "n", bad,
			 ARRAY_SIZE(bad));
}

/* Devices with no PM work sit out a nap by default. */
TEST(skip_no_pm_work_param)
{
	static const char * const bad[] = { "2", "-1", "skip", " ", "1 0", "0x" };

	if (!ps_have_pseudosleep())
		SKIP(return, "kernel without CONFIG_PM_PSEUDOSLEEP");
	check_bool_param(_metadata, SKIP_NO_PM_WORK, "1", "no", "true\n", bad,
			 ARRAY_SIZE(bad));
}

#define REPORT_BUTTONS PS_PARAM "report_buttons"

/* Buttons are reported by default. */
TEST(report_buttons_param)
{
	static const char * const bad[] = { "2", "-1", "maybe", " ", "0 0", "1x" };

	if (!ps_have_pseudosleep())
		SKIP(return, "kernel without CONFIG_PM_PSEUDOSLEEP");
	check_bool_param(_metadata, REPORT_BUTTONS, "1", "off", "Y\n", bad,
			 ARRAY_SIZE(bad));
}

TEST(mem_sleep_pseudo)
{
	char saved[128], got[128], *cur, *end;

	if (!ps_have_pseudosleep())
		SKIP(return, "kernel without CONFIG_PM_PSEUDOSLEEP");
	ASSERT_LT(0, ps_read(MEM_SLEEP, saved, sizeof(saved)));
	ASSERT_NE(NULL, strstr(saved, "pseudo"));
	ASSERT_EQ(0, ps_write(MEM_SLEEP, "pseudo"));
	ASSERT_LT(0, ps_read(MEM_SLEEP, got, sizeof(got)));
	EXPECT_NE(NULL, strstr(got, "[pseudo]")) TH_LOG("mem_sleep: %s", got);
	/* A flavour of s2idle: only one of the two is selected. */
	EXPECT_EQ(NULL, strstr(got, "[s2idle]")) TH_LOG("mem_sleep: %s", got);
	EXPECT_EQ(-EINVAL, ps_write(MEM_SLEEP, "pseudox"));
	EXPECT_EQ(-EINVAL, ps_write(MEM_SLEEP, "pseud"));
	EXPECT_EQ(-EINVAL, ps_write(MEM_SLEEP, "pseudo pseudo"));
	ASSERT_LT(0, ps_read(MEM_SLEEP, got, sizeof(got)));
	EXPECT_NE(NULL, strstr(got, "[pseudo]"));
	ASSERT_EQ(0, ps_write(MEM_SLEEP, "s2idle\n"));
	ASSERT_LT(0, ps_read(MEM_SLEEP, got, sizeof(got)));
	EXPECT_NE(NULL, strstr(got, "[s2idle]")) TH_LOG("mem_sleep: %s", got);
	EXPECT_EQ(NULL, strstr(got, "[pseudo]")) TH_LOG("mem_sleep: %s", got);
	/* Put back the state that was selected. */
	cur = strchr(saved, '[');
	ASSERT_NE(NULL, cur);
	end = strchr(cur, ']');
	ASSERT_NE(NULL, end);
	*end = '\0';
	EXPECT_EQ(0, ps_write(MEM_SLEEP, cur + 1));
}

/*
 * The handshake's arm step takes "1" only, and only with pseudo selected;
 * it cannot be read.
 */
TEST(arm_step)
{
	static const char * const bad[] = { "0", "2", "11", "yes", "-1", " " };
	char saved[128], buf[8], *cur, *end;
	struct stat st;
	int i;

	if (!ps_have_pseudosleep())
		SKIP(return, "kernel without CONFIG_PM_PSEUDOSLEEP");
	ASSERT_EQ(0, stat(ARM, &st));
	EXPECT_EQ(0200, st.st_mode & 0777);
	EXPECT_GT(0, ps_read(ARM, buf, sizeof(buf)));
	ASSERT_LT(0, ps_read(MEM_SLEEP, saved, sizeof(saved)));
	ASSERT_EQ(0, ps_write(MEM_SLEEP, "pseudo"));
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		EXPECT_EQ(-EINVAL, ps_write(ARM, bad[i]))
			TH_LOG("bad value %d accepted", i);
	EXPECT_EQ(0, ps_write(ARM, "1\n"));
	ASSERT_EQ(0, ps_write(MEM_SLEEP, "s2idle"));
	EXPECT_EQ(-EINVAL, ps_write(ARM, "1"));
	cur = strchr(saved, '[');
	ASSERT_NE(NULL, cur);
	end = strchr(cur, ']');
	ASSERT_NE(NULL, end);
	*end = '\0';
	EXPECT_EQ(0, ps_write(MEM_SLEEP, cur + 1));
}

TEST_HARNESS_MAIN
