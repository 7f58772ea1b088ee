/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Trace events of the polling list: each polling session and each change
 * of a CPU's polling window, as power:guest_halt_poll_ns does for
 * haltpoll.  Created by cpuidle-pollist.c (its Makefile line adds this
 * directory to the include path for define_trace.h).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM pollist

#if !defined(_POLLIST_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _POLLIST_TRACE_H

#include <linux/tracepoint.h>
#include <linux/types.h>

#include "cpuidle-pollist.h"

TRACE_DEFINE_ENUM(POLLIST_RESCHED);
TRACE_DEFINE_ENUM(POLLIST_WORK);
TRACE_DEFINE_ENUM(POLLIST_TIMEOUT);
TRACE_DEFINE_ENUM(POLLIST_BUSY);

#define show_pollist_outcome(o)					\
	__print_symbolic(o,					\
			 { POLLIST_RESCHED, "resched" },	\
			 { POLLIST_WORK, "work" },		\
			 { POLLIST_TIMEOUT, "timeout" },	\
			 { POLLIST_BUSY, "busy" })

/*
 * A polling session ended: how, its hits and passes over the list, its
 * length and the time it was given.  Emitted on the CPU that polled, also
 * when another CPU owned the list (outcome busy: nothing was polled).
 */
TRACE_EVENT(pollist_session,
	    TP_PROTO(const struct pollist_session *s),
	    TP_ARGS(s),
	    TP_STRUCT__entry(__field(u64, elapsed_ns)
			     __field(u64, limit_ns)
			     __field(unsigned int, hits)
			     __field(unsigned int, passes)
			     __field(unsigned int, outcome)),
	    TP_fast_assign(__entry->elapsed_ns = s->elapsed_ns;
			   __entry->limit_ns = s->limit_ns;
			   __entry->hits = s->hits;
			   __entry->passes = s->passes;
			   __entry->outcome = s->outcome;),
	    TP_printk("outcome=%s hits=%u passes=%u elapsed_ns=%llu limit_ns=%llu",
		      show_pollist_outcome(__entry->outcome), __entry->hits,
		      __entry->passes, __entry->elapsed_ns,
		      __entry->limit_ns)
);

/*
 * A CPU's polling window changed from @old_ns to @new_ns, learning from
 * an event @event_ns after the start of the window: a hit, or the window
 * plus the idle period that followed it.
 */
TRACE_EVENT(pollist_window,
	    TP_PROTO(u64 old_ns, u64 new_ns, u64 event_ns),
	    TP_ARGS(old_ns, new_ns, event_ns),
	    TP_STRUCT__entry(__field(u64, old_ns)
			     __field(u64, new_ns)
			     __field(u64, event_ns)),
	    TP_fast_assign(__entry->old_ns = old_ns;
			   __entry->new_ns = new_ns;
			   __entry->event_ns = event_ns;),
	    TP_printk("old_ns=%llu new_ns=%llu event_ns=%llu",
		      __entry->old_ns, __entry->new_ns, __entry->event_ns)
);

#endif /* _POLLIST_TRACE_H */

/* This part must be outside protection */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE pollist_trace
#include <trace/define_trace.h>
