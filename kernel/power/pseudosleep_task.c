// SPDX-License-Identifier: GPL-2.0
/*
 * Pseudo-sleep, wake on work: pseudosleep.wake_on=task.
 *
 * On a LAN the armed NIC vectors fire many times a second for frames the
 * kernel handles on its own: ARP and neighbour solicitations are answered,
 * pings echoed, a SYN to a closed port gets a RST, broadcasts for ports
 * nobody bound are dropped.  With wake_on=task an armed IRQ neither ends
 * the nap, in any phase, nor counts as a wakeup event for the wakeup_count
 * handshake.  Its work does when it is for user space: a connection ready
 * to accept, data for an open socket, a datagram for a bound one.
 *
 * The frozen server does not wait on its socket: the freezer's fake signal
 * took it out of accept() or poll() into the refrigerator, and it will
 * restart the call after the thaw and find what arrived.  What marks work
 * for user space is sock_def_readable(), the default sk_data_ready of TCP,
 * UDP and packet sockets, which runs for each such event whether anyone
 * waits or not; it calls pseudosleep_sock_readable().  For a user's TCP,
 * UDP or packet socket, once an armed IRQ has arrived since the count was
 * last read, that is what an armed IRQ is with wake_on=irq: the handshake's
 * wakeup event, and the end of a nap in progress, whether it is still
 * being entered (tasks may not all be frozen yet) or its CPUs halt.
 *
 * So noise that arrives while the nap is entered no longer aborts it, and
 * noise after the count was read no longer makes the count write fail.
 */

#define pr_fmt(fmt) "pseudosleep: " fmt

#include <linux/atomic.h>
#include <linux/init.h>
#include <linux/irq_work.h>
#include <linux/jump_label.h>
#include <linux/moduleparam.h>
#include <linux/string.h>
#include <linux/suspend.h>
#include <linux/sysfs.h>
#include <linux/socket.h>
#include <net/sock.h>

#include "pseudosleep.h"

#undef MODULE_PARAM_PREFIX
#define MODULE_PARAM_PREFIX "pseudosleep."

enum { WAKE_ON_IRQ, WAKE_ON_TASK };

static const char * const wake_on_names[] = {
	[WAKE_ON_IRQ] = "irq",
	[WAKE_ON_TASK] = "task",
};

static int wake_on = WAKE_ON_IRQ;
DEFINE_STATIC_KEY_FALSE(pseudosleep_task_key);

/* Armed IRQs served during the halt of the current nap (wake_on=task). */
static atomic_t nap_armed_irqs;
/* An armed IRQ arrived since the wakeup_count was last read. */
static int task_irq_seen;

/*
 * In every phase of a nap: s2idle_loop() may leave s2idle_enter() for a
 * wakeup the platform then swallows (an EC event) and enter it again, and
 * a request in between must still end the nap.  A wakeup reported after
 * the nap ended is forgotten by the next freeze (pm_wakeup_clear()).
 */
static void pseudosleep_task_fn(struct irq_work *work)
{
	if (pseudosleep_in_progress())
		pseudosleep_wake_on_work();
}

static DEFINE_IRQ_WORK(pseudosleep_task_work, pseudosleep_task_fn);

/**
 * pseudosleep_wake_on_task - does an armed IRQ leave the decision to its work
 *
 * The mode changes only between naps (pseudosleep_set_wake_on()).
 *
 * Return: true with wake_on=task.
 */
bool pseudosleep_wake_on_task(void)
{
	return READ_ONCE(wake_on) == WAKE_ON_TASK;
}

/* An armed IRQ arrived with wake_on=task: its work decides. */
void pseudosleep_task_note_irq(void)
{
	if (!READ_ONCE(task_irq_seen))
		WRITE_ONCE(task_irq_seen, 1);
	if (READ_ONCE(pseudosleep_phase) == PSEUDOSLEEP_NAPPING)
		atomic_inc(&nap_armed_irqs);
}

/*
 * The wakeup_count is about to be read: the armed IRQs seen so far came
 * before it, as their work did or will be seen by the caller's check of
 * its servers.
 */
void pseudosleep_task_forget_irqs(void)
{
	/* Another reader's count read must not lose a nap's armed IRQ. */
	if (!pseudosleep_in_progress())
		WRITE_ONCE(task_irq_seen, 0);
}

/* A nap starts: no armed IRQ has arrived during its halt yet. */
void pseudosleep_task_reset(void)
{
	atomic_set(&nap_armed_irqs, 0);
}

/* Armed IRQs the last nap served while its CPUs halted (wake_on=task). */
unsigned int pseudosleep_task_armed_irqs(void)
{
	return atomic_read(&nap_armed_irqs);
}

/*
 * Work that comes through the network: a user's TCP, UDP or packet socket.
 * Unix and netlink sockets carry local traffic and the kernel's own
 * notifications (a neighbour table update for an ARP request, the reply
 * to a daemon's sock_diag dump), not requests.
 */
static bool network_socket(const struct sock *sk)
{
	return !sk->sk_kern_sock &&
	       (sk->sk_family == AF_INET || sk->sk_family == AF_INET6 ||
		sk->sk_family == AF_PACKET);
}

/**
 * __pseudosleep_sock_readable - a socket has data for user space
 * @sk: the socket
 *
 * Called from sock_def_readable() with wake_on=task, in any context and
 * possibly under socket locks: the nap is ended from irq_work.
 */
void __pseudosleep_sock_readable(struct sock *sk)
{
	if (!READ_ONCE(task_irq_seen) || !network_socket(sk))
		return;
	pseudosleep_note_event();
	if (pseudosleep_in_progress())
		irq_work_queue(&pseudosleep_task_work);
}

/**
 * pseudosleep_set_wake_on - select what ends a nap: an armed IRQ or its work
 * @val: "irq" or "task", with or without a trailing newline
 *
 * The mode changes only between naps (system_transition_mutex), together
 * with the static key, so that try_to_wake_up() pays nothing with irq.
 *
 * Return: 0, or -EINVAL for anything else (nothing changes).
 */
int pseudosleep_set_wake_on(const char *val)
{
	unsigned int flags;
	int mode;

	mode = sysfs_match_string(wake_on_names, val);
	if (mode < 0)
		return -EINVAL;
	flags = lock_system_sleep();
	WRITE_ONCE(wake_on, mode);
	if (mode == WAKE_ON_TASK)
		static_branch_enable(&pseudosleep_task_key);
	else
		static_branch_disable(&pseudosleep_task_key);
	unlock_system_sleep(flags);
	return 0;
}

static int wake_on_set(const char *val, const struct kernel_param *kp)
{
	return pseudosleep_set_wake_on(val);
}

static int wake_on_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", wake_on_names[READ_ONCE(wake_on)]);
}

static const struct kernel_param_ops wake_on_ops = {
	.set = wake_on_set,
	.get = wake_on_get,
};
module_param_cb(wake_on, &wake_on_ops, NULL, 0644);
MODULE_PARM_DESC(wake_on,
		 "irq: an armed IRQ ends a nap (default); task: only when its work is for a user socket");
