// SPDX-License-Identifier: GPL-2.0
/*
 * Pseudo-sleep behaviour: a nap ends on an armed IRQ the guest raises
 * itself (the CMOS RTC alarm), the IRQ is reported in pm_wakeup_irq and the
 * statistics, interrupts that are not armed are served without ending the
 * nap, and the wakeup_count handshake refuses to nap once an armed IRQ has
 * arrived after the count was read.  The RTC's own wakeup source is turned
 * off meanwhile, so only pseudo-sleep's reports move the wakeup count.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/rtc.h>
#include <linux/vt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/select.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "pseudosleep_util.h"

#define WAKE_IRQ "/sys/power/wake_irq"
#define MEM_SLEEP "/sys/power/mem_sleep"
#define STATE "/sys/power/state"
#define WAKEUP_COUNT "/sys/power/wakeup_count"
#define ARM "/sys/power/pseudosleep/arm"
#define RTC_WAKEUP "/sys/class/rtc/rtc0/device/power/wakeup"

FIXTURE(nap) {
	char saved_irqs[4096];
	char saved_mem_sleep[64];
	char saved_rtc_wakeup[32];
	int rtc_irq;
	int rtc;
};

FIXTURE_SETUP(nap)
{
	char buf[128], *cur, *end;

	self->rtc = -1;
	if (!ps_have_pseudosleep())
		SKIP(return, "kernel without CONFIG_PM_PSEUDOSLEEP");
	self->rtc_irq = ps_find_irq("rtc0");
	ASSERT_LT(0, self->rtc_irq) TH_LOG("no rtc0 in /proc/interrupts");
	self->rtc = open("/dev/rtc0", O_RDONLY);
	ASSERT_LE(0, self->rtc);
	ASSERT_LE(0, ps_read(WAKE_IRQ, self->saved_irqs,
			     sizeof(self->saved_irqs)));
	ASSERT_LT(0, ps_read(MEM_SLEEP, buf, sizeof(buf)));
	cur = strchr(buf, '[');
	end = cur ? strchr(cur, ']') : NULL;
	ASSERT_NE(NULL, end);
	*end = '\0';
	snprintf(self->saved_mem_sleep, sizeof(self->saved_mem_sleep), "%s",
		 cur + 1);

	/* The RTC driver reports its alarms as wakeup events itself. */
	if (ps_read(RTC_WAKEUP, self->saved_rtc_wakeup,
		    sizeof(self->saved_rtc_wakeup)) > 0)
		ASSERT_EQ(0, ps_write(RTC_WAKEUP, "disabled"));

	snprintf(buf, sizeof(buf), "%d", self->rtc_irq);
	ASSERT_EQ(0, ps_write(WAKE_IRQ, buf));
	ASSERT_EQ(0, ps_write(MEM_SLEEP, "pseudo"));
}

FIXTURE_TEARDOWN(nap)
{
	char buf[4100];

	if (self->rtc >= 0) {
		ioctl(self->rtc, RTC_AIE_OFF, 0);
		close(self->rtc);
	}
	snprintf(buf, sizeof(buf), "%s\n", self->saved_irqs);
	ps_write(WAKE_IRQ, buf);
	if (self->saved_mem_sleep[0])
		ps_write(MEM_SLEEP, self->saved_mem_sleep);
	if (self->saved_rtc_wakeup[0])
		ps_write(RTC_WAKEUP, self->saved_rtc_wakeup);
}

/* event_count of the "pseudosleep" wakeup source, or -1. */
static long long ps_ws_events(void)
{
	char path[300], name[64];
	long long ret = -1;
	struct dirent *de;
	DIR *d;

	d = opendir("/sys/class/wakeup");
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/class/wakeup/%s/name",
			 de->d_name);
		if (ps_read(path, name, sizeof(name)) <= 0 ||
		    strcmp(name, "pseudosleep"))
			continue;
		snprintf(path, sizeof(path), "/sys/class/wakeup/%s/event_count",
			 de->d_name);
		ret = ps_read_num(path);
		break;
	}
	closedir(d);
	return ret;
}

/* Set the RTC alarm @secs seconds from now and enable its interrupt. */
static int set_alarm(int rtc, int secs)
{
	struct rtc_wkalrm alm = { .enabled = 1 };
	struct rtc_time tm;
	struct tm t = { 0 };
	time_t when;

	if (ioctl(rtc, RTC_RD_TIME, &tm))
		return -errno;
	t.tm_sec = tm.tm_sec;
	t.tm_min = tm.tm_min;
	t.tm_hour = tm.tm_hour;
	t.tm_mday = tm.tm_mday;
	t.tm_mon = tm.tm_mon;
	t.tm_year = tm.tm_year;
	when = timegm(&t) + secs;
	gmtime_r(&when, &t);
	memset(&alm.time, 0, sizeof(alm.time));
	alm.time.tm_sec = t.tm_sec;
	alm.time.tm_min = t.tm_min;
	alm.time.tm_hour = t.tm_hour;
	alm.time.tm_mday = t.tm_mday;
	alm.time.tm_mon = t.tm_mon;
	alm.time.tm_year = t.tm_year;
	if (ioctl(rtc, RTC_WKALM_SET, &alm))
		return -errno;
	return 0;
}

/* Wait for the RTC's next second; the CMOS RTC counts whole seconds. */
static int rtc_second_edge(int rtc)
{
	struct rtc_time t0, t;
	int i;

	if (ioctl(rtc, RTC_RD_TIME, &t0))
		return -errno;
	for (i = 0; i < 150; i++) {
		usleep(10000);
		if (ioctl(rtc, RTC_RD_TIME, &t))
			return -errno;
		if (t.tm_sec != t0.tm_sec)
			return 0;
	}
	return -ETIMEDOUT;
}

/* Block until the RTC interrupt has been delivered. */
static int wait_alarm(int rtc)
{
	unsigned long data;

	if (read(rtc, &data, sizeof(data)) != sizeof(data))
		return -errno;
	return 0;
}

/*
 * Nap until the RTC alarm @secs seconds away, set on an RTC second edge so
 * that entry has all of them.  On a loaded host a TCG guest's first entry
 * can take longer (the suspend path is translated as it first runs); the
 * alarm then comes during entry and rightly aborts the nap.  That abort is
 * checked (counted, reported as the RTC's) and the nap tried once more with
 * twice the time.  Returns what the last "mem" write returned.
 */
static int nap_on_alarm(struct __test_metadata *_metadata, int rtc,
			int rtc_irq, int secs)
{
	long long aborted;
	int ret, try;

	for (try = 0; try < 2; try++, secs *= 2) {
		aborted = ps_read_num(PS_STATS "aborted_naps");
		ret = rtc_second_edge(rtc);
		if (!ret)
			ret = set_alarm(rtc, secs);
		if (!ret)
			ret = ps_write(STATE, "mem");
		if (ret != -EBUSY ||
		    ps_read_num(PS_STATS "aborted_naps") != aborted + 1 ||
		    ps_read_num(PS_STATS "last_wake_irq") != rtc_irq)
			break;
		TH_LOG("the %d s alarm came during entry; again", secs);
		if (wait_alarm(rtc))
			break;
	}
	return ret;
}

TEST_F(nap, armed_rtc_alarm_ends_nap)
{
	long long naps, aborted, v;
	char path[128];
	static const char * const phases[] = {
		"entry_sync_ns", "entry_freeze_ns", "entry_suspend_devices_ns",
		"entry_cpu_halt_ns", "exit_cpu_wake_ns",
		"exit_resume_devices_ns", "exit_thaw_ns",
	};
	int i;

	naps = ps_read_num(PS_STATS "naps");
	aborted = ps_read_num(PS_STATS "aborted_naps");
	ASSERT_LE(0, naps);

	/*
	 * Timers run on time during a nap, so some interrupts come and are
	 * filtered: 3 s with a guest's housekeeping timers give a few.
	 */
	EXPECT_EQ(0, nap_on_alarm(_metadata, self->rtc, self->rtc_irq, 3));

	EXPECT_EQ(naps + 1, ps_read_num(PS_STATS "naps"));
	/* Only aborts by the alarm itself, logged above, are allowed. */
	EXPECT_GE(aborted + 1, ps_read_num(PS_STATS "aborted_naps"));
	EXPECT_EQ(self->rtc_irq, ps_read_num("/sys/power/pm_wakeup_irq"));
	EXPECT_EQ(self->rtc_irq, ps_read_num(PS_STATS "last_wake_irq"));
	EXPECT_LT(0, ps_read_num(PS_STATS "last_nap_ns"));
	EXPECT_LE(ps_read_num(PS_STATS "last_nap_ns"),
		  ps_read_num(PS_STATS "total_nap_ns"));
	EXPECT_LT(0, ps_read_num(PS_STATS "wake_latency_ns"));
	/*
	 * The nap lasted until the alarm, through ticks, IPIs and timer
	 * interrupts that were served and did not end it.
	 */
	v = ps_read_num(PS_STATS "spurious_wakeups");
	EXPECT_LT(0, v) TH_LOG("no interrupt was filtered during the nap");
	for (i = 0; i < ARRAY_SIZE(phases); i++) {
		snprintf(path, sizeof(path), PS_STATS "%s", phases[i]);
		EXPECT_LE(0, ps_read_num(path)) TH_LOG("%s", path);
	}
	EXPECT_LT(0, ps_read_num(PS_STATS "entry_suspend_devices_ns"));
	EXPECT_LT(0, ps_read_num(PS_STATS "exit_resume_devices_ns"));
	/* The alarm's interrupt reached the RTC driver. */
	EXPECT_EQ(0, wait_alarm(self->rtc));
}

TEST_F(nap, handshake_refuses_after_armed_irq)
{
	char count[32], count2[32];
	long long aborted;

	ASSERT_EQ(0, ps_write(ARM, "1"));
	ASSERT_LT(0, ps_read(WAKEUP_COUNT, count, sizeof(count)));
	/* A "request" arrives after the daemon armed and read the count. */
	ASSERT_EQ(0, set_alarm(self->rtc, 1));
	ASSERT_EQ(0, wait_alarm(self->rtc));
	EXPECT_EQ(-EINVAL, ps_write(WAKEUP_COUNT, count))
		TH_LOG("wakeup_count accepted a stale count");

	/* Count written, then the IRQ: the nap must not happen. */
	aborted = ps_read_num(PS_STATS "aborted_naps");
	ASSERT_EQ(0, ps_write(ARM, "1"));
	ASSERT_LT(0, ps_read(WAKEUP_COUNT, count2, sizeof(count2)));
	ASSERT_EQ(0, set_alarm(self->rtc, 1));
	ASSERT_EQ(0, ps_write(WAKEUP_COUNT, count2));
	ASSERT_EQ(0, wait_alarm(self->rtc));
	EXPECT_EQ(-EBUSY, ps_write(STATE, "mem"));
	EXPECT_EQ(aborted + 1, ps_read_num(PS_STATS "aborted_naps"));
}

/*
 * A CLOCK_BOOTTIME_ALARM timerfd, or -errno: -EOPNOTSUPP or -EINVAL without
 * alarm timers (no RTC for them).
 */
static int alarm_timerfd(void)
{
	int tfd = timerfd_create(CLOCK_BOOTTIME_ALARM, TFD_NONBLOCK);

	return tfd < 0 ? -errno : tfd;
}

static bool no_alarm_timers(int tfd)
{
	return tfd == -EOPNOTSUPP || tfd == -EINVAL;
}

/* The handshake's arm step, then one interrupt of the armed RTC. */
static int arm_then_rtc_irq(int rtc)
{
	int ret = ps_write(ARM, "1");

	if (!ret)
		ret = set_alarm(rtc, 1);
	return ret ? ret : wait_alarm(rtc);
}

/* Read the wakeup count and write it back, as a suspend manager does. */
static int write_back_count(void)
{
	char count[32];
	int n = ps_read(WAKEUP_COUNT, count, sizeof(count));

	if (n <= 0)
		return n ? n : -EIO;
	return ps_write(WAKEUP_COUNT, count);
}

/*
 * Two requests: the first armed IRQ comes before the count is read, which
 * counts it, and the second after the count was written back.  Only the
 * first is a wakeup event, so the nap must see the second by the line's
 * interrupt count: it fails with -EBUSY instead of napping with a request
 * unanswered.  Should it nap, a boottime alarm ends it.
 */
TEST_F(nap, handshake_sees_irq_after_counted_one)
{
	struct itimerspec its = { .it_value.tv_sec = 4 };
	long long aborted;
	int tfd;

	tfd = alarm_timerfd();
	if (no_alarm_timers(tfd))
		SKIP(return, "no alarm timers to end a wrong nap");
	ASSERT_LE(0, tfd);
	aborted = ps_read_num(PS_STATS "aborted_naps");
	ASSERT_EQ(0, arm_then_rtc_irq(self->rtc));
	ASSERT_EQ(0, write_back_count());
	ASSERT_EQ(0, set_alarm(self->rtc, 1));
	ASSERT_EQ(0, wait_alarm(self->rtc));
	ASSERT_EQ(0, timerfd_settime(tfd, 0, &its, NULL));
	EXPECT_EQ(-EBUSY, ps_write(STATE, "mem"))
		TH_LOG("napped with the second request unseen");
	EXPECT_EQ(aborted + 1, ps_read_num(PS_STATS "aborted_naps"));
	EXPECT_EQ(self->rtc_irq, ps_read_num(PS_STATS "last_wake_irq"));
	close(tfd);
}

/*
 * A refused arm step drops the counts of the one before: the nap that
 * follows is not that handshake's, so an interrupt since that arm step
 * must not fail it.  A boottime alarm ends the nap; it is 8 s away, as
 * the alarm timers refuse a nap whose alarm is due within 2 s and a busy
 * TCG host can make the entry slow.
 */
TEST_F(nap, failed_arm_drops_counts)
{
	struct itimerspec its = { .it_value.tv_sec = 8 };
	long long naps, aborted;
	int tfd;

	tfd = alarm_timerfd();
	if (no_alarm_timers(tfd))
		SKIP(return, "no alarm timers to end the nap");
	ASSERT_LE(0, tfd);
	ASSERT_EQ(0, arm_then_rtc_irq(self->rtc));
	ASSERT_EQ(0, ps_write(MEM_SLEEP, "s2idle"));
	EXPECT_EQ(-EINVAL, ps_write(ARM, "1"));
	ASSERT_EQ(0, ps_write(MEM_SLEEP, "pseudo"));
	naps = ps_read_num(PS_STATS "naps");
	aborted = ps_read_num(PS_STATS "aborted_naps");
	ASSERT_EQ(0, write_back_count());
	ASSERT_EQ(0, timerfd_settime(tfd, 0, &its, NULL));
	EXPECT_EQ(0, ps_write(STATE, "mem"))
		TH_LOG("aborted +%lld, last wake IRQ %lld (the RTC's, %d: old counts)",
		       ps_read_num(PS_STATS "aborted_naps") - aborted,
		       ps_read_num(PS_STATS "last_wake_irq"), self->rtc_irq);
	EXPECT_EQ(naps + 1, ps_read_num(PS_STATS "naps"));
	close(tfd);
}

/*
 * The ACPI SCI belongs to no device the nap can find: it would stay enabled
 * while its owner is suspended, so the nap is refused.
 */
TEST_F(nap, refuses_armed_irq_without_device)
{
	long long naps, aborted;
	char buf[64];
	int sci;

	sci = ps_find_irq("acpi");
	if (sci <= 0)
		SKIP(return, "no acpi line in /proc/interrupts");
	snprintf(buf, sizeof(buf), "%d,%d", self->rtc_irq, sci);
	ASSERT_EQ(0, ps_write(WAKE_IRQ, buf));
	naps = ps_read_num(PS_STATS "naps");
	aborted = ps_read_num(PS_STATS "aborted_naps");
	/* Should it nap anyway, the RTC ends the nap. */
	ASSERT_EQ(0, set_alarm(self->rtc, 2));
	EXPECT_EQ(-EINVAL, ps_write(STATE, "mem"));
	EXPECT_EQ(naps, ps_read_num(PS_STATS "naps"));
	EXPECT_EQ(aborted + 1, ps_read_num(PS_STATS "aborted_naps"));
	ioctl(self->rtc, RTC_AIE_OFF, 0);
}

#define TRACEFS "/sys/kernel/tracing"
#define PM_CB_EVENT TRACEFS "/events/power/device_pm_callback_start/enable"

/* Opening the trace for writing with O_TRUNC empties the buffer. */
static int clear_trace(void)
{
	int fd = open(TRACEFS "/trace", O_WRONLY | O_TRUNC);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/*
 * Nap on the RTC with power:device_pm_callback_start traced; the trace in
 * @trace.  Returns 1 if the nap happened, else 0 (the failure is logged).
 */
static int traced_nap(struct __test_metadata *_metadata, int rtc,
		      int rtc_irq, char *trace, size_t size)
{
	long long naps = ps_read_num(PS_STATS "naps");
	ssize_t n = 0, r;
	int fd, ok = 1;

	trace[0] = '\0';
	if (clear_trace() || ps_write(PM_CB_EVENT, "1") ||
	    ps_write(TRACEFS "/tracing_on", "1")) {
		TH_LOG("cannot set up the trace");
		return 0;
	}
	if (nap_on_alarm(_metadata, rtc, rtc_irq, 2) ||
	    ps_read_num(PS_STATS "naps") != naps + 1 || wait_alarm(rtc)) {
		TH_LOG("no nap ended by the RTC alarm");
		ok = 0;
	}
	ps_write(TRACEFS "/tracing_on", "0");
	ps_write(PM_CB_EVENT, "0");
	fd = open(TRACEFS "/trace", O_RDONLY);
	if (fd < 0)
		return 0;
	while (n < (ssize_t)size - 1 &&
	       (r = read(fd, trace + n, size - 1 - n)) > 0)
		n += r;
	close(fd);
	trace[n] = '\0';
	clear_trace();
	return ok;
}

/*
 * Devices with no PM callback (here /dev/null's device, class mem) sit out
 * a nap's device phases: the PM core calls nothing for them, not even the
 * prepare and complete steps it traces for every device it walks.  Devices
 * with PM work (the NIC, not kept here) still take part.  With
 * skip_no_pm_work=0 every device takes part again.
 */
TEST_F(nap, devices_without_pm_work_sit_out)
{
	static char trace[1 << 20];
	char saved[16];

	if (access(PM_CB_EVENT, W_OK))
		SKIP(return, "no tracefs or power:device_pm_callback_start");
	ASSERT_EQ(0, access("/sys/devices/virtual/mem/null", F_OK));
	ASSERT_LT(0, ps_read(SKIP_NO_PM_WORK, saved, sizeof(saved)));
	ASSERT_EQ(0, ps_write(TRACEFS "/tracing_on", "0"));

	ASSERT_EQ(0, ps_write(SKIP_NO_PM_WORK, "1"));
	EXPECT_EQ(1, traced_nap(_metadata, self->rtc, self->rtc_irq, trace,
				sizeof(trace)));
	EXPECT_NE(NULL, strstr(trace, "device_pm_callback_start"))
		TH_LOG("no device took part in the nap");
	EXPECT_EQ(NULL, strstr(trace, "mem null, parent:"))
		TH_LOG("the nap walked /dev/null's device through its phases");

	ASSERT_EQ(0, ps_write(SKIP_NO_PM_WORK, "0"));
	EXPECT_EQ(1, traced_nap(_metadata, self->rtc, self->rtc_irq, trace,
				sizeof(trace)));
	ASSERT_EQ(0, ps_write(SKIP_NO_PM_WORK, saved));
	EXPECT_NE(NULL, strstr(trace, "mem null, parent:"))
		TH_LOG("with skip_no_pm_work=0, /dev/null's device sat out");
}

/* With pseudosleep.deep_idle=1 the CPUs idle through cpuidle; same nap. */
TEST_F(nap, deep_idle_nap_ends_on_armed_irq)
{
	const char *param = PS_PARAM "deep_idle";
	long long naps;

	naps = ps_read_num(PS_STATS "naps");
	ASSERT_EQ(0, ps_write(param, "1"));
	EXPECT_EQ(0, nap_on_alarm(_metadata, self->rtc, self->rtc_irq, 2));
	ASSERT_EQ(0, ps_write(param, "0"));
	EXPECT_EQ(naps + 1, ps_read_num(PS_STATS "naps"));
	EXPECT_EQ(self->rtc_irq, ps_read_num(PS_STATS "last_wake_irq"));
	EXPECT_EQ(0, wait_alarm(self->rtc));
}

/*
 * An alarm timer that comes due during a nap ends it, as it ends a suspend,
 * although the RTC is armed and so kept awake, with the alarmtimer device
 * below it: nothing programs the RTC for the alarm.  The RTC alarm a minute
 * away is only a backstop; it must not be what ends the nap.
 */
TEST_F(nap, boottime_alarm_ends_nap)
{
	struct itimerspec its = { .it_value.tv_sec = 2 };
	long long naps;
	uint64_t n = 0;
	int tfd;

	tfd = alarm_timerfd();
	if (no_alarm_timers(tfd))
		SKIP(return, "no alarm timers (no RTC for them)");
	ASSERT_LE(0, tfd);
	naps = ps_read_num(PS_STATS "naps");
	ASSERT_EQ(0, set_alarm(self->rtc, 60));
	ASSERT_EQ(0, timerfd_settime(tfd, 0, &its, NULL));
	EXPECT_EQ(0, ps_write(STATE, "mem"));
	EXPECT_EQ(naps + 1, ps_read_num(PS_STATS "naps"));
	EXPECT_NE(self->rtc_irq, ps_read_num(PS_STATS "last_wake_irq"))
		TH_LOG("the backstop RTC alarm ended the nap after %lld ms",
		       ps_read_num(PS_STATS "last_nap_ns") / 1000000);
	EXPECT_EQ(sizeof(n), read(tfd, &n, sizeof(n)));
	EXPECT_EQ(1, n);
	close(tfd);
}

/*
 * A nap is a suspend to idle: the PM core counts it in its own suspend
 * statistics, and "freeze" in /sys/power/state is no nap even with pseudo
 * selected.  The interrupts served while the CPUs idled are counted.
 */
TEST_F(nap, counted_as_suspend_to_idle)
{
	long long naps, success;
	char buf[128];

	ASSERT_LT(0, ps_read(MEM_SLEEP, buf, sizeof(buf)));
	EXPECT_NE(NULL, strstr(buf, "[pseudo]")) TH_LOG("mem_sleep: %s", buf);
	EXPECT_EQ(NULL, strstr(buf, "[s2idle]")) TH_LOG("mem_sleep: %s", buf);
	ASSERT_LT(0, ps_read(STATE, buf, sizeof(buf)));
	EXPECT_EQ(NULL, strstr(buf, "pseudo")) TH_LOG("state: %s", buf);

	naps = ps_read_num(PS_STATS "naps");
	success = ps_read_num("/sys/power/suspend_stats/success");
	ASSERT_LE(0, success);
	ASSERT_EQ(0, nap_on_alarm(_metadata, self->rtc, self->rtc_irq, 2));
	ASSERT_EQ(0, wait_alarm(self->rtc));
	EXPECT_EQ(naps + 1, ps_read_num(PS_STATS "naps"));
	EXPECT_EQ(success + 1, ps_read_num("/sys/power/suspend_stats/success"));
	EXPECT_EQ(self->rtc_irq, ps_read_num(PS_STATS "last_wake_irq"));
	EXPECT_LE(0, ps_read_num(PS_STATS "spurious_wakeups"));
	TH_LOG("a 2 s nap served %lld interrupts besides its wake IRQ",
	       ps_read_num(PS_STATS "spurious_wakeups"));
}

/*
 * A busy server: many armed IRQs after one arm step are one wakeup event,
 * not one each, and they make the wakeup_count write fail.
 */
TEST_F(nap, one_event_per_arm)
{
	char count[32];
	long long before;

	ASSERT_EQ(0, ps_write(ARM, "1"));
	ASSERT_LT(0, ps_read(WAKEUP_COUNT, count, sizeof(count)));
	before = ps_ws_events();
	ASSERT_LE(0, before) TH_LOG("no pseudosleep wakeup source");
	ASSERT_EQ(0, set_alarm(self->rtc, 1));
	ASSERT_EQ(0, wait_alarm(self->rtc));
	ASSERT_EQ(0, set_alarm(self->rtc, 1));
	ASSERT_EQ(0, wait_alarm(self->rtc));
	EXPECT_EQ(before + 1, ps_ws_events());
	EXPECT_EQ(-EINVAL, ps_write(WAKEUP_COUNT, count));

	/* The next arm step re-arms the report. */
	ASSERT_EQ(0, ps_write(ARM, "1"));
	ASSERT_EQ(0, set_alarm(self->rtc, 1));
	ASSERT_EQ(0, wait_alarm(self->rtc));
	EXPECT_EQ(before + 2, ps_ws_events());
}

/*
 * Read the count, let the armed RTC IRQ fire: it must be no wakeup event,
 * and the count written back must be accepted.  @why names the bug if not.
 */
static void expect_alarm_not_counted(struct __test_metadata *_metadata,
				     int rtc, const char *why)
{
	char count[32];
	long long before;

	ASSERT_LT(0, ps_read(WAKEUP_COUNT, count, sizeof(count)));
	before = ps_ws_events();
	ASSERT_EQ(0, set_alarm(rtc, 1));
	ASSERT_EQ(0, wait_alarm(rtc));
	EXPECT_EQ(before, ps_ws_events());
	EXPECT_EQ(0, ps_write(WAKEUP_COUNT, count)) TH_LOG("%s", why);
}

/*
 * Reading wakeup_count has no side effect: without an arm step an armed
 * IRQ reports nothing, however many times the count is read.
 */
TEST_F(nap, count_read_has_no_side_effect)
{
	char count[32];

	/* A report armed by an earlier test is consumed first. */
	ASSERT_EQ(0, ps_write(ARM, "1"));
	ASSERT_EQ(0, set_alarm(self->rtc, 1));
	ASSERT_EQ(0, wait_alarm(self->rtc));

	ASSERT_LT(0, ps_read(WAKEUP_COUNT, count, sizeof(count)));
	expect_alarm_not_counted(_metadata, self->rtc,
				 "a count read armed the report");
}

/* With another mem_sleep state selected, nothing is armed or reported. */
TEST_F(nap, no_event_unless_pseudo_selected)
{
	ASSERT_EQ(0, ps_write(MEM_SLEEP, "s2idle"));
	EXPECT_EQ(-EINVAL, ps_write(ARM, "1"));
	expect_alarm_not_counted(_metadata, self->rtc,
				 "an armed IRQ counted as a wakeup event for s2idle");
}

/*
 * Nap with a CLOCK_MONOTONIC timerfd due in @secs seconds watched by an
 * epoll item, with EPOLLWAKEUP if @wakeup.  Timers run on time during a
 * nap, and the timerfd's wakeup sends it to its waiters as a socket's
 * readiness would.  The RTC alarm @backstop seconds away is armed.
 * Returns what the "mem" write returned.
 */
static int nap_with_timerfd(struct __test_metadata *_metadata, int rtc,
			    int secs, int backstop, bool wakeup)
{
	struct itimerspec its = { .it_value.tv_sec = secs };
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET };
	int ep, tfd, ret;

	if (wakeup)
		ev.events |= EPOLLWAKEUP;
	tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	ep = epoll_create1(0);
	if (tfd < 0 || ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev)) {
		ret = -errno;
		goto out;
	}
	ret = rtc_second_edge(rtc);
	if (!ret)
		ret = set_alarm(rtc, backstop);
	if (!ret && timerfd_settime(tfd, 0, &its, NULL))
		ret = -errno;
	if (!ret)
		ret = ps_write(STATE, "mem");
out:
	if (ep >= 0)
		close(ep);
	if (tfd >= 0)
		close(tfd);
	return ret;
}

/*
 * Work for a frozen task, seen as a wakeup source's activation (an epoll
 * item with EPOLLWAKEUP becoming ready), ends a nap although no armed IRQ
 * came: the source is named in last_wake_source.  On a loaded TCG guest
 * the timer may come before or during entry, which then fails with EBUSY
 * for the same reason; then again with twice the time.  EPOLLWAKEUP needs
 * CAP_BLOCK_SUSPEND (root), or it is silently dropped.
 */
TEST_F(nap, epollwakeup_ends_nap)
{
	char name[64];
	long long naps;
	int ret, secs;

	if (geteuid())
		SKIP(return, "EPOLLWAKEUP needs CAP_BLOCK_SUSPEND: run as root");
	for (secs = 2; secs <= 16; secs *= 2) {
		naps = ps_read_num(PS_STATS "naps");
		ret = nap_with_timerfd(_metadata, self->rtc, secs, 60, true);
		ASSERT_LT(0, ps_read(PS_STATS "last_wake_source", name,
				     sizeof(name)));
		if (ret != -EBUSY)
			break;
		TH_LOG("the %d s timer came before the nap (%s); again", secs,
		       name[0] ? name : "no source named");
	}
	EXPECT_EQ(0, ret);
	EXPECT_EQ(naps + 1, ps_read_num(PS_STATS "naps"));
	EXPECT_STREQ("[timerfd]", name);
	EXPECT_NE(self->rtc_irq, ps_read_num(PS_STATS "last_wake_irq"))
		TH_LOG("the backstop RTC alarm ended the nap after %lld ms",
		       ps_read_num(PS_STATS "last_nap_ns") / 1000000);
}

/*
 * The same timer without EPOLLWAKEUP is no work the PM core hears of: it
 * fires during the nap, and the armed RTC alarm ends the nap.
 */
TEST_F(nap, plain_epoll_does_not_end_nap)
{
	char name[64];
	long long naps;
	int ret, secs;

	for (secs = 4; secs <= 8; secs *= 2) {
		naps = ps_read_num(PS_STATS "naps");
		ret = nap_with_timerfd(_metadata, self->rtc, 1, secs, false);
		if (ret != -EBUSY ||
		    ps_read_num(PS_STATS "last_wake_irq") != self->rtc_irq)
			break;
		TH_LOG("the %d s alarm came during entry; again", secs);
		ASSERT_EQ(0, wait_alarm(self->rtc));
	}
	EXPECT_EQ(0, ret);
	EXPECT_EQ(naps + 1, ps_read_num(PS_STATS "naps"));
	EXPECT_EQ(self->rtc_irq, ps_read_num(PS_STATS "last_wake_irq"));
	ASSERT_LE(0, ps_read(PS_STATS "last_wake_source", name, sizeof(name)));
	EXPECT_STRNE("[timerfd]", name);
	EXPECT_EQ(0, wait_alarm(self->rtc));
}

/*
 * A nap leaves the user's VT on the screen: a suspend switches to the
 * suspend console and back, and each switch notifies tty0's "active"
 * attribute, which poll() reports as POLLPRI until the file is read again,
 * even to a task that was frozen meanwhile.  A real switch, made after the
 * nap, shows that the check sees one.
 */
TEST_F(nap, vt_stays_on_screen)
{
	struct pollfd pfd = { .events = POLLPRI };
	struct vt_stat st;
	char buf[32];
	int tty0, other;

	pfd.fd = open("/sys/class/tty/tty0/active", O_RDONLY);
	if (pfd.fd < 0)
		SKIP(return, "no virtual terminals (CONFIG_VT)");
	tty0 = open("/dev/tty0", O_RDWR);
	ASSERT_LE(0, tty0);
	ASSERT_EQ(0, ioctl(tty0, VT_GETSTATE, &st));
	ASSERT_LT(0, read(pfd.fd, buf, sizeof(buf)));

	EXPECT_EQ(0, nap_on_alarm(_metadata, self->rtc, self->rtc_irq, 2));
	EXPECT_EQ(0, wait_alarm(self->rtc));
	ASSERT_LE(0, poll(&pfd, 1, 0));
	EXPECT_FALSE(pfd.revents & POLLPRI) TH_LOG("the nap switched VTs");

	other = st.v_active == 1 ? 2 : 1;
	ASSERT_EQ(0, ioctl(tty0, VT_ACTIVATE, other));
	ASSERT_EQ(0, ioctl(tty0, VT_WAITACTIVE, other));
	ASSERT_EQ(0, ioctl(tty0, VT_ACTIVATE, st.v_active));
	ASSERT_EQ(0, ioctl(tty0, VT_WAITACTIVE, st.v_active));
	ASSERT_LE(0, poll(&pfd, 1, 0));
	EXPECT_TRUE(pfd.revents & POLLPRI) TH_LOG("a VT switch was not seen");
	close(tty0);
	close(pfd.fd);
}

/*
 * A nap is one of many suspends (pm_suspend_frequent()): the random
 * driver mixes its timestamps in but does not reseed the crng, which it
 * announces with "crng reseeded on system resumption" in the kernel log
 * after any other suspend once the crng is ready.
 */
TEST_F(nap, no_crng_reseed)
{
	char buf[1024];
	ssize_t n;
	int kmsg;

	if (getrandom(buf, 16, GRND_NONBLOCK) != 16)
		SKIP(return, "crng not ready: it would not reseed anyway");
	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, kmsg);
	ASSERT_LE(0, lseek(kmsg, 0, SEEK_END));

	EXPECT_EQ(0, nap_on_alarm(_metadata, self->rtc, self->rtc_irq, 2));
	EXPECT_EQ(0, wait_alarm(self->rtc));
	/* One record per read; EPIPE when records were overwritten. */
	while ((n = read(kmsg, buf, sizeof(buf) - 1)) != 0) {
		if (n < 0 && errno == EPIPE)
			continue;
		if (n < 0)
			break;
		buf[n] = '\0';
		EXPECT_EQ(NULL, strstr(buf, "crng reseeded"))
			TH_LOG("the nap reseeded the crng: %s", buf);
	}
	EXPECT_EQ(EAGAIN, errno);
	close(kmsg);
}

/* Context switches of @pid so far (/proc/PID/status), or -1. */
static long long ctxt_switches(pid_t pid)
{
	char path[64], line[128];
	long long sum = 0, n;
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "voluntary_ctxt_switches: %lld", &n) == 1 ||
		    sscanf(line, "nonvoluntary_ctxt_switches: %lld", &n) == 1) {
			sum += n;
			found++;
		}
	}
	fclose(f);
	return found == 2 ? sum : -1;
}

/* Sleep in epoll_wait(), poll() or select() on a pipe no one writes to. */
static void wait_forever(int how, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int ep = epoll_create1(0);
	fd_set set;

	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev))
		_exit(1);
	for (;;) {
		if (how == 0) {
			epoll_wait(ep, &ev, 1, -1);
		} else if (how == 1) {
			poll(&pfd, 1, -1);
		} else {
			FD_ZERO(&set);
			FD_SET(fd, &set);
			select(fd + 1, &set, NULL, NULL, NULL);
		}
	}
}

/*
 * Nap once on the RTC alarm and expect none of the @n tasks in @pid (named
 * in @what) to have been switched in by it.
 */
static void expect_not_switched(struct __test_metadata *_metadata, int rtc,
				int rtc_irq, const pid_t *pid,
				const char * const *what, int n)
{
	long long before[8], after;
	int i;

	ASSERT_GE(8, n);
	for (i = 0; i < n; i++)
		before[i] = ctxt_switches(pid[i]);
	EXPECT_EQ(0, nap_on_alarm(_metadata, rtc, rtc_irq, 2));
	EXPECT_EQ(0, wait_alarm(rtc));
	usleep(100000);		/* anything the thaw woke has run */
	for (i = 0; i < n; i++) {
		after = ctxt_switches(pid[i]);
		EXPECT_LE(0, before[i]);
		EXPECT_EQ(before[i], after)
			TH_LOG("%s was switched %lld times by the nap",
			       what[i], after - before[i]);
	}
}

/*
 * A task waiting for events in epoll_wait(), poll() or select() is frozen
 * where it sleeps (TASK_FREEZABLE): a nap neither wakes it to freeze it nor
 * at the thaw, so it is not switched in at all.  Before, each nap sent it a
 * fake signal, and it ran twice to enter and leave the refrigerator.
 */
TEST_F(nap, event_waiters_stay_asleep)
{
	static const char * const how[] = {
		"a task in epoll_wait", "a task in poll", "a task in select",
	};
	int pipefd[2], i;
	pid_t pid[3];

	ASSERT_EQ(0, pipe(pipefd));
	for (i = 0; i < 3; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (!pid[i])
			wait_forever(i, pipefd[0]);
	}
	usleep(300000);		/* each is asleep in its wait by now */
	expect_not_switched(_metadata, self->rtc, self->rtc_irq, pid, how, 3);
	for (i = 0; i < 3; i++) {
		kill(pid[i], SIGKILL);
		waitpid(pid[i], NULL, 0);
	}
	close(pipefd[0]);
	close(pipefd[1]);
}

/* The pid of the kernel thread named @comm, or -1. */
static pid_t kthread_pid(const char *comm)
{
	char path[300], name[32];
	struct dirent *de;
	pid_t pid = -1;
	DIR *d = opendir("/proc");
	FILE *f;

	while (d && pid < 0 && (de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(name, sizeof(name), f) &&
		    !strncmp(name, comm, strlen(comm)) &&
		    name[strlen(comm)] == '\n')
			pid = atoi(de->d_name);
		fclose(f);
	}
	if (d)
		closedir(d);
	return pid;
}

/*
 * kswapd sleeps TASK_FREEZABLE (hook patch 0033): a nap freezes it where
 * it sleeps and the thaw leaves it asleep, so it is not switched in.
 * Skipped when kswapd is reclaiming anyway (its count moves without a
 * nap).
 */
TEST_F(nap, kswapd_stays_asleep)
{
	static const char * const what[] = { "kswapd0" };
	pid_t pid = kthread_pid("kswapd0");
	long long before;

	if (pid < 0)
		SKIP(return, "no kswapd0");
	before = ctxt_switches(pid);
	usleep(300000);
	if (ctxt_switches(pid) != before)
		SKIP(return, "kswapd0 is reclaiming");
	expect_not_switched(_metadata, self->rtc, self->rtc_irq, &pid, what, 1);
}

TEST_HARNESS_MAIN
