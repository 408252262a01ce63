/* SPDX-License-Identifier: GPL-2.0-only */
/* trace_names.h - the words of the event log (trace.h) as people and the Python
 * side read them: each record type's tracepoint (trace.json "per_type";
 * events.py TYPE_NAMES) and a switch's prev_state letters (events.task_state).
 */
#ifndef JTR_TRACE_NAMES_H
#define JTR_TRACE_NAMES_H

#include "trace.h"

/* names of enum jtr_ev_type */
static const char *const jtr_ev_type_names[JTR_EV_NTYPES] = {
	[JTR_EV_IRQ_ENTRY] = "irq_handler_entry", [JTR_EV_IRQ_EXIT] = "irq_handler_exit",
	[JTR_EV_SOFTIRQ_RAISE] = "softirq_raise", [JTR_EV_SOFTIRQ_ENTRY] = "softirq_entry",
	[JTR_EV_SOFTIRQ_EXIT] = "softirq_exit", [JTR_EV_VEC_ENTRY] = "vector_entry",
	[JTR_EV_VEC_EXIT] = "vector_exit", [JTR_EV_NMI] = "nmi_handler",
	[JTR_EV_SWITCH] = "sched_switch", [JTR_EV_WAKEUP] = "sched_wakeup",
	[JTR_EV_WAKING] = "sched_waking", [JTR_EV_MIGRATE] = "sched_migrate_task",
	[JTR_EV_PF_USER] = "page_fault_user", [JTR_EV_PF_KERNEL] = "page_fault_kernel",
	[JTR_EV_WQ_START] = "workqueue_execute_start", [JTR_EV_WQ_END] = "workqueue_execute_end",
	[JTR_EV_HRTIMER_ENTRY] = "hrtimer_expire_entry", [JTR_EV_HRTIMER_EXIT] = "hrtimer_expire_exit",
	[JTR_EV_TIMER_ENTRY] = "timer_expire_entry", [JTR_EV_TIMER_EXIT] = "timer_expire_exit",
	[JTR_EV_STEAL] = "steal_time", [JTR_EV_TASK] = "task_groups",
	[JTR_EV_CALL] = "app_call", [JTR_EV_BLOCK] = "app_block",
	[JTR_EV_TICK_STOP] = "tick_stop",
};

/* jtr_ev_task_state - a switch's prev_state as sched_switch prints it into
 * @buf (9 bytes at least): R+ when preempted, else the letters of its bits
 * (S D T t X Z P I), or R */
static inline void jtr_ev_task_state(unsigned long long state, int preempted, char *buf)
{
	static const char letters[] = "SDTtXZPI";
	int n = 0;

	if (preempted) {
		buf[0] = 'R';
		buf[1] = '+';
		buf[2] = '\0';
		return;
	}
	for (int i = 0; i < 8; i++)
		if (state & (1ULL << i))
			buf[n++] = letters[i];
	if (!n)
		buf[n++] = 'R';
	buf[n] = '\0';
}

#endif
