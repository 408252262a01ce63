// SPDX-License-Identifier: GPL-2.0-only
/* test_watch.c - jtr watch's accounting (ebpf/watch.c) on synthetic events:
 * what counts as an interruption of the application, its cause, its bucket,
 * the name table's bound, the flight recorder and its dump window. After every
 * event, every category's histogram must hold as many interruptions, and as
 * much time, as its names' counters (agree()). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "watch.h"

static const char vecs[][48] = { "call_function", "local_timer", "reschedule", "thermal_apic" };
#define CPU 3
#define OTHER_CPU 0			/* not watched */
#define TICK 1				/* vecs[] index of local_timer */
#define RT 89				/* a SCHED_FIFO task's prio (chrt -f 10) */
#define PRE JTR_SW_PREEMPTED

static struct jtr_watch w;

static int setup(void **state)
{
	int cpus[] = { CPU };

	(void)state;
	if (jtr_watch_init(&w, cpus, 1, JTR_WATCH_NAMES, 64, 16, true) < 0)
		return -1;
	jtr_watch_vectors(&w, vecs, 4);
	w.cfg.settle_ns = 0;		/* test_the_first_second_decides sets it */
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	jtr_watch_free(&w);
	return 0;
}

/* agree - each category's histogram holds its names' interruptions and time */
static void agree(void)
{
	for (int i = 0; i < w.ncpus; i++)
		for (int k = 0; k < JTR_W_NCATS; k++) {
			const struct jtr_watch_cat_acct *a = &w.cpus[i].cat[k];
			const struct jtr_wcpu *st = &w.cpus[i].st;
			uint64_t count = 0, ns = 0, hist = 0;

			for (int m = 0; m <= w.names; m++) {
				count += a->cell[m].count;
				ns += a->cell[m].ns;
			}
			for (int b = 0; b < JTR_WATCH_BUCKETS; b++)
				hist += st->hist[k][b];
			if (count != hist || count != st->count[k] || ns != st->ns[k])
				fail_msg("%s: names count %llu, histogram %llu, category %llu; names %llu "
					 "ns, category %llu ns", jtr_watch_cats[k],
					 (unsigned long long)count, (unsigned long long)hist,
					 (unsigned long long)st->count[k], (unsigned long long)ns,
					 (unsigned long long)st->ns[k]);
		}
}

/* put - one record from @cpu, where @pid runs */
static void put(uint64_t ts, int cpu, uint32_t pid, int type, uint64_t a, uint64_t b,
		uint8_t flags, const char *s1, const char *s2)
{
	struct jtr_ev e;

	memset(&e, 0, sizeof(e));
	e.ts_ns = ts;
	e.pid = pid;
	e.cpu = (unsigned short)cpu;
	e.type = (unsigned char)type;
	e.a = a;
	e.b = b;
	e.flags = flags;
	if (s1)
		strncpy(e.str, s1, JTR_COMM_LEN);
	if (s2)
		strncpy(e.str + JTR_COMM_LEN, s2, JTR_COMM_LEN);
	jtr_watch_event(&w, &e);
	agree();
}

static void ev(uint64_t ts, int type, uint64_t a, uint64_t b, uint8_t flags, const char *s1,
	       const char *s2)
{
	put(ts, CPU, 0, type, a, b, flags, s1, s2);
}

/* a switch from @prev (prio @pp) to @next (prio @np); @flags: PRE when prev
 * is still runnable, JTR_FL_APP(_NEXT) */
static void swp(uint64_t ts, uint32_t prev, uint32_t next, uint8_t flags, unsigned int pp,
		unsigned int np, const char *pc, const char *nc)
{
	put(ts, CPU, prev, JTR_EV_SWITCH, prev | (uint64_t)next << 32, pp | (uint64_t)np << 16,
	    flags, pc, nc);
}

static void sw(uint64_t ts, uint32_t prev, uint32_t next, int preempted, const char *pc,
	       const char *nc)
{
	swp(ts, prev, next, preempted ? PRE : 0, 120, 120, pc, nc);
}

/* a tick from @from to @to */
static void tick(uint64_t from, uint64_t to)
{
	ev(from, JTR_EV_VEC_ENTRY, 236, TICK, 0, NULL, NULL);
	ev(to, JTR_EV_VEC_EXIT, 236, TICK, 0, NULL, NULL);
}

static const struct jtr_watch_cell *cell(int cat, const char *name)
{
	const struct jtr_watch_cat_acct *a = &w.cpus[0].cat[cat];

	for (int i = 0; i <= w.names; i++)
		if (!strcmp(a->cell[i].name, name))
			return &a->cell[i];
	return NULL;
}

static uint64_t count_of(int cat, const char *name)
{
	const struct jtr_watch_cell *c = cell(cat, name);

	return c ? c->count : 0;
}

static uint64_t ns_of(int cat, const char *name)
{
	const struct jtr_watch_cell *c = cell(cat, name);

	return c ? c->ns : 0;
}

/* interrupted - the time the application lost on the CPU, all causes */
static uint64_t interrupted(void)
{
	uint64_t ns = 0;

	for (int k = 0; k < JTR_W_NCATS; k++)
		ns += w.cpus[0].st.ns[k];
	return ns;
}

static void test_tick_while_a_task_runs(void **state)
{
	(void)state;
	sw(100, 0, 500, 0, "swapper/3", "app");
	tick(1000, 6000);
	ev(9000, JTR_EV_PF_USER, 0x1000, 0, 0, NULL, NULL);	/* ends the interrupt */
	assert_int_equal(count_of(JTR_W_TICK, "local timer"), 1);
	assert_int_equal(ns_of(JTR_W_TICK, "local timer"), 5000);
	assert_int_equal(w.cpus[0].st.hist[JTR_W_TICK][2], 1);	/* (2 us, 5 us] */
	/* a page fault has no length: a kernel event, not an interruption */
	assert_int_equal(cell(JTR_W_PF, "user")->events, 1);
	assert_int_equal(cell(JTR_W_PF, "user")->count, 0);
	assert_int_equal(w.cpus[0].st.count[JTR_W_PF], 0);
}

static void test_softirq_after_an_interrupt_is_part_of_it(void **state)
{
	(void)state;
	sw(100, 0, 500, 0, "swapper/3", "app");
	tick(1000, 3000);
	ev(3500, JTR_EV_SOFTIRQ_ENTRY, 1, 0, 0, NULL, NULL);
	ev(33500, JTR_EV_SOFTIRQ_EXIT, 1, 0, 0, NULL, NULL);
	jtr_watch_flush(&w);
	agree();
	/* one interruption of 32.5 us, charged to the softirq that took most of it */
	assert_int_equal(count_of(JTR_W_SOFTIRQ, "TIMER"), 1);
	assert_int_equal(ns_of(JTR_W_SOFTIRQ, "TIMER"), 32500);
	assert_int_equal(count_of(JTR_W_TICK, "local timer"), 0);
	assert_int_equal(cell(JTR_W_TICK, "local timer")->events, 1);
	assert_int_equal(w.cpus[0].st.count[JTR_W_SOFTIRQ], 1);
	/* a softirq on its own, later */
	ev(100000, JTR_EV_SOFTIRQ_ENTRY, 9, 0, 0, NULL, NULL);
	ev(104000, JTR_EV_SOFTIRQ_EXIT, 9, 0, 0, NULL, NULL);
	jtr_watch_flush(&w);
	agree();
	assert_int_equal(count_of(JTR_W_SOFTIRQ, "RCU"), 1);
}

static void test_nested_interrupt_self_time(void **state)
{
	(void)state;
	sw(100, 0, 500, 0, "swapper/3", "app");
	ev(1000, JTR_EV_IRQ_ENTRY, 36, 0, 0, "virtio1-req.0", NULL);
	ev(2000, JTR_EV_VEC_ENTRY, 236, 0, 0, NULL, NULL);	/* call_function inside */
	ev(2500, JTR_EV_VEC_EXIT, 236, 0, 0, NULL, NULL);
	ev(3000, JTR_EV_NMI, 0xffff1234, 200, 1, NULL, NULL);	/* an NMI inside */
	ev(9000, JTR_EV_IRQ_EXIT, 36, 1, 0, NULL, NULL);
	jtr_watch_flush(&w);
	agree();
	assert_int_equal(count_of(JTR_W_HARDIRQ, "36 virtio1-req.0"), 1);
	assert_int_equal(ns_of(JTR_W_HARDIRQ, "36 virtio1-req.0"), 8000);
	assert_int_equal(cell(JTR_W_IPI, "call_function")->events, 1);
	assert_int_equal(count_of(JTR_W_IPI, "call_function"), 0);
	assert_int_equal(count_of(JTR_W_NMI, "nmi"), 0);
	/* an NMI on its own is one */
	ev(20000, JTR_EV_NMI, 0xffff1234, 3000, 1, NULL, NULL);
	assert_int_equal(count_of(JTR_W_NMI, "nmi"), 1);
	assert_int_equal(ns_of(JTR_W_NMI, "nmi"), 3000);
	assert_int_equal(cell(JTR_W_NMI, "nmi")->events, 2);
}

static void test_preemptions_and_the_wait_they_open(void **state)
{
	(void)state;
	sw(100, 0, 500, 0, "swapper/3", "app");
	sw(10000000, 500, 600, 1, "app", "kworker/3:1");	/* app preempted: it waits */
	assert_int_equal(count_of(JTR_W_TASK, "kworker/3:1"), 0);	/* counted at its end */
	sw(10002000, 600, 700, 0, "kworker/3:1", "spin");	/* kworker blocks, spin runs */
	sw(10300000, 700, 500, 0, "spin", "app");		/* app back */
	/* one interruption: the whole wait, charged to the task that took the CPU
	 * (its full comm), as jtr attribute charges a preemption */
	assert_int_equal(count_of(JTR_W_TASK, "kworker/3:1"), 1);
	assert_int_equal(ns_of(JTR_W_TASK, "kworker/3:1"), 300000);
	assert_int_equal(cell(JTR_W_TASK, "kworker/3:1")->events, 1);
	assert_null(cell(JTR_W_TASK, "spin"));			/* it preempted nobody */
	assert_null(cell(JTR_W_TASK, "kworker"));
	assert_int_equal(w.cpus[0].st.hist[JTR_W_TASK][8], 1);	/* (200, 500] us */
	assert_int_equal(w.trigger.length_ns, 0);		/* no dumps asked for */
	/* a spinner preempted by a higher task inside the wait: one interruption */
	sw(10320000, 500, 700, 1, "app", "spin");
	sw(10321000, 700, 900, 1, "spin", "migration/3");
	sw(10322000, 900, 700, 0, "migration/3", "spin");
	sw(10330000, 700, 500, 0, "spin", "app");
	assert_int_equal(count_of(JTR_W_TASK, "spin"), 1);
	assert_int_equal(ns_of(JTR_W_TASK, "spin"), 10000);
	assert_int_equal(count_of(JTR_W_TASK, "migration/3"), 0);
	assert_int_equal(cell(JTR_W_TASK, "migration/3")->events, 1);
	assert_int_equal(w.cpus[0].st.hist[JTR_W_TASK][3], 1);	/* (5, 10] us */
	/* an interrupt while the app waits is in the wait, not one of its own */
	sw(10400000, 500, 800, 1, "app", "other/1");
	tick(10401000, 10402000);
	sw(10405000, 800, 500, 0, "other/1", "app");
	jtr_watch_flush(&w);
	agree();
	assert_int_equal(count_of(JTR_W_TICK, "local timer"), 0);
	assert_int_equal(cell(JTR_W_TICK, "local timer")->events, 1);
	assert_int_equal(count_of(JTR_W_TASK, "other/1"), 1);
	assert_int_equal(ns_of(JTR_W_TASK, "other/1"), 5000);
	assert_int_equal(w.cpus[0].st.app_ns, 9999900 + 20000 + 70000);
	/* the spinner ran 298 us, the app 10 ms: the app it stays */
	assert_string_equal(w.cpus[0].st.run[w.cpus[0].st.lead].comm, "app");
}

/* the application preempts a runnable task all the time (a nice hog sharing
 * its CPU): its own running is never an interruption, the hog's slices are */
static void test_the_application_is_never_its_own_interruption(void **state)
{
	(void)state;
	sw(100, 0, 500, 0, "swapper/3", "app");
	for (uint64_t i = 0, t = 1000000; i < 100; i++, t += 1000000) {
		sw(t, 500, 600, 1, "app", "hog");		/* the hog's turn */
		sw(t + 10000, 600, 500, 1, "hog", "app");	/* the app preempts it */
	}
	jtr_watch_end(&w, 101000000);
	agree();
	assert_int_equal(count_of(JTR_W_TASK, "app"), 0);
	assert_int_equal(ns_of(JTR_W_TASK, "app"), 0);
	assert_int_equal(cell(JTR_W_TASK, "app")->events, 100);	/* it did preempt */
	assert_int_equal(count_of(JTR_W_TASK, "hog"), 100);
	assert_int_equal(ns_of(JTR_W_TASK, "hog"), 100 * 10000);
	assert_true(interrupted() <= 101000000 - 100);
	assert_int_equal(w.cpus[0].st.app_ns, 101000000 - 100 - 100 * 10000);	/* to the end */
}

/* without --app the comm that ran longest is the application; --app says */
static void test_default_rule_and_app_option(void **state)
{
	(void)state;
	/* the hog runs 990 us of each ms, "app" 10 us: the hog is the application */
	sw(100, 0, 600, 0, "swapper/3", "hog");
	for (uint64_t i = 0, t = 1000000; i < 10; i++, t += 1000000) {
		sw(t, 600, 500, 1, "hog", "app");
		sw(t + 10000, 500, 600, 1, "app", "hog");
	}
	assert_int_equal(count_of(JTR_W_TASK, "app"), 10);
	assert_int_equal(count_of(JTR_W_TASK, "hog"), 0);
	assert_string_equal(w.cpus[0].st.run[w.cpus[0].st.lead].comm, "hog");
	teardown(state);
	setup(state);
	/* the same with --app app: the hog's slices are the interruptions */
	assert_int_equal(jtr_watch_app_comm(&w, "app"), 0);
	sw(100, 0, 600, 0, "swapper/3", "hog");
	for (uint64_t i = 0, t = 1000000; i < 10; i++, t += 1000000) {
		sw(t, 600, 500, 1, "hog", "app");
		sw(t + 10000, 500, 600, 1, "app", "hog");
	}
	sw(20000000, 600, 500, 1, "hog", "app");
	assert_int_equal(count_of(JTR_W_TASK, "app"), 0);
	assert_int_equal(count_of(JTR_W_TASK, "hog"), 10);
	assert_int_equal(ns_of(JTR_W_TASK, "hog"), 9 * 990000 + 20000000 - 10010000);
	/* an interrupt while the hog runs is not the application's */
	tick(20001000, 20002000);
	sw(20003000, 500, 600, 0, "app", "hog");	/* app blocks: no wait */
	tick(20004000, 20005000);
	jtr_watch_flush(&w);
	agree();
	assert_int_equal(count_of(JTR_W_TICK, "local timer"), 1);
	assert_int_equal(count_of(JTR_W_TASK, "hog"), 10);
}

/* another task is on the CPU when the watch begins, and is taken for the
 * application until the application has run longer: the wait it began then
 * is not the application's */
static void test_another_task_when_the_watch_begins(void **state)
{
	(void)state;
	put(500, CPU, 777, JTR_EV_VEC_ENTRY, 236, TICK, 0, NULL, NULL);	/* python runs */
	put(900, CPU, 777, JTR_EV_VEC_EXIT, 236, TICK, 0, NULL, NULL);
	sw(1000, 777, 500, 1, "python", "app");		/* the app takes the CPU */
	sw(5000000, 500, 777, 1, "app", "python");	/* now it leads: it waits */
	sw(5100000, 777, 500, 1, "python", "app");
	sw(6000000, 500, 600, 1, "app", "kworker/3:0");
	sw(6010000, 600, 500, 0, "kworker/3:0", "app");
	jtr_watch_end(&w, 7000000);
	agree();
	assert_int_equal(count_of(JTR_W_TASK, "app"), 0);
	assert_int_equal(ns_of(JTR_W_TASK, "app"), 0);
	assert_int_equal(count_of(JTR_W_TASK, "kworker/3:0"), 1);
	assert_int_equal(count_of(JTR_W_TASK, "python"), 1);
	assert_int_equal(ns_of(JTR_W_TASK, "python"), 100000);
	assert_string_equal(w.cpus[0].st.run[w.cpus[0].st.lead].comm, "app");
}

/* by the default rule, a CPU's first second decides which comm is the
 * application: what begins in it is not counted (another busy task on the
 * CPU when the watch begins would be taken for it) */
static void test_the_first_second_decides(void **state)
{
	(void)state;
	w.cfg.settle_ns = JTR_WATCH_SETTLE_NS;
	w.cfg.start_ns = 1000;
	put(2000, CPU, 777, JTR_EV_VEC_ENTRY, 236, TICK, 0, NULL, NULL);	/* python runs */
	put(3000, CPU, 777, JTR_EV_VEC_EXIT, 236, TICK, 0, NULL, NULL);
	sw(40000000, 777, 500, 1, "python", "app");	/* 40 ms of python since the start */
	sw(60000000, 500, 777, 1, "app", "python");	/* app 20 ms: python's wait ends */
	sw(61000000, 777, 500, 1, "python", "app");
	jtr_watch_flush(&w);
	agree();
	assert_int_equal(w.cpus[0].st.count[JTR_W_TASK], 0);
	assert_int_equal(w.cpus[0].st.count[JTR_W_TICK], 0);
	/* a second on, the app leads: its interruptions count */
	sw(1500000000, 500, 777, 1, "app", "python");
	sw(1500100000, 777, 500, 1, "python", "app");
	tick(1600000000, 1600002000);
	jtr_watch_flush(&w);
	agree();
	assert_int_equal(count_of(JTR_W_TASK, "app"), 0);
	assert_int_equal(count_of(JTR_W_TASK, "python"), 1);
	assert_int_equal(count_of(JTR_W_TICK, "local timer"), 1);
	/* with --app nothing needs deciding */
	teardown(state);
	setup(state);
	w.cfg.settle_ns = JTR_WATCH_SETTLE_NS;
	jtr_watch_app_comm(&w, "app");
	sw(1000, 0, 500, 0, "swapper/3", "app");
	tick(2000, 3000);
	jtr_watch_flush(&w);
	assert_int_equal(count_of(JTR_W_TICK, "local timer"), 1);
}

/* --app PID: the kernel side flags the switches of its threads */
static void test_app_by_pid(void **state)
{
	(void)state;
	assert_int_equal(jtr_watch_app_pid(&w, 42), 0);
	swp(100, 0, 43, JTR_FL_APP_NEXT, 120, 120, "swapper/3", "worker-2");
	swp(1000, 43, 44, PRE | JTR_FL_APP | JTR_FL_APP_NEXT, 120, 120, "worker-2", "worker-3");
	swp(2000, 44, 600, PRE | JTR_FL_APP, 120, 120, "worker-3", "kworker/3:0");
	swp(2500, 600, 43, JTR_FL_APP_NEXT, 120, 120, "kworker/3:0", "worker-2");
	/* one thread preempting another is the application's own business */
	assert_int_equal(count_of(JTR_W_TASK, "worker-3"), 0);
	assert_int_equal(count_of(JTR_W_TASK, "kworker/3:0"), 1);
	assert_int_equal(ns_of(JTR_W_TASK, "kworker/3:0"), 500);	/* worker-2 ended it */
	assert_string_equal(w.cpus[0].st.app_comm, "worker-2");
}

/* a task running before any switch is seen: the application by default, or
 * when it is one of the --app tasks found running at the start */
static void test_the_task_running_when_the_watch_begins(void **state)
{
	(void)state;
	put(1000, CPU, 777, JTR_EV_VEC_ENTRY, 236, TICK, 0, NULL, NULL);
	put(3000, CPU, 777, JTR_EV_VEC_EXIT, 236, TICK, 0, NULL, NULL);
	jtr_watch_flush(&w);
	agree();
	assert_int_equal(count_of(JTR_W_TICK, "local timer"), 1);
	teardown(state);
	setup(state);
	jtr_watch_app_comm(&w, "app");
	jtr_watch_app_tid(&w, 501);
	put(1000, CPU, 777, JTR_EV_VEC_ENTRY, 236, TICK, 0, NULL, NULL);	/* not the app */
	put(3000, CPU, 777, JTR_EV_VEC_EXIT, 236, TICK, 0, NULL, NULL);
	jtr_watch_flush(&w);
	assert_int_equal(count_of(JTR_W_TICK, "local timer"), 0);
	teardown(state);
	setup(state);
	jtr_watch_app_comm(&w, "app");
	jtr_watch_app_tid(&w, 501);
	put(1000, CPU, 501, JTR_EV_VEC_ENTRY, 236, TICK, 0, NULL, NULL);	/* the app */
	put(3000, CPU, 501, JTR_EV_VEC_EXIT, 236, TICK, 0, NULL, NULL);
	jtr_watch_flush(&w);
	agree();
	assert_int_equal(count_of(JTR_W_TICK, "local timer"), 1);
}

/* a SCHED_FIFO application switched out still runnable for the idle task or a
 * lower task: RT throttling, until it runs again */
static void test_rt_throttling(void **state)
{
	(void)state;
	swp(100, 0, 500, 0, 120, RT, "swapper/3", "rtapp");
	swp(950000100, 500, 0, PRE, RT, 120, "rtapp", "swapper/3");
	sw(960000000, 0, 600, 0, "swapper/3", "kworker/3:1");	/* runs in the throttled time */
	tick(960001000, 960002000);
	sw(960010000, 600, 0, 0, "kworker/3:1", "swapper/3");
	swp(1000000100, 0, 500, 0, 120, RT, "swapper/3", "rtapp");
	assert_int_equal(count_of(JTR_W_THROTTLE, JTR_WATCH_THROTTLE_NAME), 1);
	assert_int_equal(ns_of(JTR_W_THROTTLE, JTR_WATCH_THROTTLE_NAME), 50000000);
	assert_int_equal(w.cpus[0].st.hist[JTR_W_THROTTLE][14], 1);	/* (20, 50] ms */
	assert_int_equal(count_of(JTR_W_TASK, "kworker/3:1"), 0);
	assert_int_equal(count_of(JTR_W_TICK, "local timer"), 0);
	/* a lower task given the CPU (the fair server): throttling too */
	swp(1500000000, 500, 600, PRE, RT, 120, "rtapp", "kworker/3:1");
	swp(1500020000, 600, 500, 0, 120, RT, "kworker/3:1", "rtapp");
	assert_int_equal(count_of(JTR_W_THROTTLE, JTR_WATCH_THROTTLE_NAME), 2);
	assert_int_equal(ns_of(JTR_W_THROTTLE, JTR_WATCH_THROTTLE_NAME), 50020000);
	assert_int_equal(cell(JTR_W_THROTTLE, JTR_WATCH_THROTTLE_NAME)->events, 2);
	/* a higher task, or an equal one (SCHED_RR's turns): a preemption */
	swp(1600000000, 500, 700, PRE, RT, 0, "rtapp", "migration/3");
	swp(1600005000, 700, 500, 0, 0, RT, "migration/3", "rtapp");
	swp(1600100000, 500, 800, PRE, RT, RT, "rtapp", "rrpeer");
	swp(1600200000, 800, 500, PRE, RT, RT, "rrpeer", "rtapp");
	assert_int_equal(count_of(JTR_W_TASK, "migration/3"), 1);
	assert_int_equal(ns_of(JTR_W_TASK, "migration/3"), 5000);
	assert_int_equal(count_of(JTR_W_TASK, "rrpeer"), 1);
	/* an RT task that blocks is not throttled */
	swp(1700000000, 500, 0, 0, RT, 120, "rtapp", "swapper/3");
	swp(1800000000, 0, 500, 0, 120, RT, "swapper/3", "rtapp");
	assert_int_equal(count_of(JTR_W_THROTTLE, JTR_WATCH_THROTTLE_NAME), 2);
	assert_true(interrupted() < 1800000000);
}

/* woken while another task has the CPU: the application waits from its
 * wake-up (a record from another CPU says so), until it runs */
static void test_a_woken_application_waits(void **state)
{
	(void)state;
	sw(100, 0, 500, 0, "swapper/3", "app");
	sw(1000000, 500, 600, 0, "app", "kworker/3:1");		/* app blocks: no wait */
	put(1005000, OTHER_CPU, 9, JTR_EV_WAKEUP, 500, CPU, 0, "app", NULL);
	sw(1020000, 600, 500, 1, "kworker/3:1", "app");
	assert_int_equal(count_of(JTR_W_TASK, "kworker/3:1"), 1);
	assert_int_equal(ns_of(JTR_W_TASK, "kworker/3:1"), 15000);
	/* woken on an idle CPU: its wake-up's latency is no interruption */
	sw(2000000, 500, 0, 0, "app", "swapper/3");
	ev(2100000, JTR_EV_WAKEUP, 500, CPU, 0, "app", NULL);
	sw(2100500, 0, 500, 0, "swapper/3", "app");
	/* but a task that takes the CPU before it is */
	sw(3000000, 500, 0, 0, "app", "swapper/3");
	ev(3100000, JTR_EV_WAKEUP, 500, CPU, 0, "app", NULL);
	sw(3100500, 0, 700, 0, "swapper/3", "ksoftirqd/3");
	sw(3130500, 700, 500, 0, "ksoftirqd/3", "app");
	assert_int_equal(count_of(JTR_W_TASK, "ksoftirqd/3"), 1);
	assert_int_equal(ns_of(JTR_W_TASK, "ksoftirqd/3"), 30000);
	/* another task woken is nobody's wait */
	ev(3200000, JTR_EV_WAKEUP, 900, CPU, 0, "bash", NULL);
	sw(3200100, 500, 900, 1, "app", "bash");
	sw(3200300, 900, 500, 0, "bash", "app");
	assert_int_equal(count_of(JTR_W_TASK, "bash"), 1);
	assert_int_equal(ns_of(JTR_W_TASK, "bash"), 200);
	assert_int_equal(w.cpus[0].st.count[JTR_W_TASK], 3);
}

/* the waiting task moves to another CPU (pulled by that CPU, not watched) */
static void test_the_wait_ends_when_the_task_moves_away(void **state)
{
	(void)state;
	sw(100, 0, 500, 0, "swapper/3", "app");
	sw(1000000, 500, 600, 1, "app", "hog");
	put(1050000, OTHER_CPU, 0, JTR_EV_MIGRATE, 500, CPU | (uint64_t)OTHER_CPU << 32, 0, "app",
	    NULL);
	sw(2000000, 600, 0, 0, "hog", "swapper/3");
	assert_int_equal(count_of(JTR_W_TASK, "hog"), 1);
	assert_int_equal(ns_of(JTR_W_TASK, "hog"), 50000);
	/* the switch back to the waiting task was lost (a full ring buffer): when
	 * it ended is unknown, so it is no interruption, and never the app's */
	sw(2500000, 0, 500, 0, "swapper/3", "app");
	sw(2600000, 500, 700, 1, "app", "spin");
	sw(2700000, 500, 600, 1, "app", "hog");		/* spin -> app unseen */
	assert_int_equal(count_of(JTR_W_TASK, "spin"), 0);
	assert_int_equal(count_of(JTR_W_TASK, "app"), 0);
	sw(2800000, 600, 500, 0, "hog", "app");
	assert_int_equal(count_of(JTR_W_TASK, "hog"), 2);
	/* and a wait still open when the watch ends is counted up to the end */
	sw(3000000, 500, 0, 0, "app", "swapper/3");
	sw(3500000, 0, 500, 0, "swapper/3", "app");
	sw(4000000, 500, 600, 1, "app", "hog");
	jtr_watch_flush(&w);
	agree();
	assert_int_equal(count_of(JTR_W_TASK, "hog"), 2);
	jtr_watch_end(&w, 4500000);
	agree();
	assert_int_equal(count_of(JTR_W_TASK, "hog"), 3);
	assert_int_equal(ns_of(JTR_W_TASK, "hog"), 50000 + 100000 + 500000);
}

/* every path that counts, names past the table's bound included: the
 * histogram and the counters agree after each event (put checks it) */
static void test_counts_agree_with_the_histogram(void **state)
{
	char name[16];
	uint64_t t = 10000000;

	(void)state;
	sw(100, 0, 500, 0, "swapper/3", "app");
	for (int i = 0; i < JTR_WATCH_NAMES + 8; i++, t += 100000) {
		snprintf(name, sizeof(name), "kworker/3:%d", i);
		sw(t, 500, 600 + i, 1, "app", name);
		tick(t + 1000, t + 2000);			/* in the wait */
		sw(t + 3000, 600 + i, 500, 0, name, "app");
		tick(t + 10000, t + 11000);
		ev(t + 11500, JTR_EV_SOFTIRQ_ENTRY, 1, 0, 0, NULL, NULL);	/* joined */
		ev(t + 12000, JTR_EV_SOFTIRQ_EXIT, 1, 0, 0, NULL, NULL);
		ev(t + 20000, JTR_EV_NMI, 0xffff1234, 500, 1, NULL, NULL);
		ev(t + 30000, JTR_EV_PF_USER, 0x1000, 0, 0, NULL, NULL);
		snprintf(name, sizeof(name), "dev%d", i);
		ev(t + 40000, JTR_EV_IRQ_ENTRY, 40 + i, 0, 0, name, NULL);
		ev(t + 40100, JTR_EV_VEC_ENTRY, 236, 2, 0, NULL, NULL);	/* reschedule */
		ev(t + 40200, JTR_EV_VEC_EXIT, 236, 2, 0, NULL, NULL);
		ev(t + 40300, JTR_EV_IRQ_EXIT, 40 + i, 1, 0, NULL, NULL);
		jtr_watch_flush(&w);			/* a state line */
		agree();
	}
	assert_int_equal(w.cpus[0].st.count[JTR_W_TASK], JTR_WATCH_NAMES + 8);
	assert_int_equal(count_of(JTR_W_TASK, "other"), 8);
	assert_int_equal(count_of(JTR_W_HARDIRQ, "other"), 8);
	assert_int_equal(w.cpus[0].st.count[JTR_W_NMI], JTR_WATCH_NAMES + 8);
	assert_int_equal(w.cpus[0].st.count[JTR_W_PF], 0);
	assert_int_equal(w.cpus[0].st.count[JTR_W_TICK] + w.cpus[0].st.count[JTR_W_SOFTIRQ],
			 JTR_WATCH_NAMES + 8);
	assert_true(interrupted() <= t);
}

static void test_names_are_bounded(void **state)
{
	char name[16];

	(void)state;
	sw(100, 0, 500, 0, "swapper/3", "app");
	for (int i = 0; i < JTR_WATCH_NAMES + 5; i++) {
		snprintf(name, sizeof(name), "dev%d", i);
		ev(1000 + i * 100, JTR_EV_IRQ_ENTRY, 40 + i, 0, 0, name, NULL);
		ev(1050 + i * 100, JTR_EV_IRQ_EXIT, 40 + i, 1, 0, NULL, NULL);
	}
	jtr_watch_flush(&w);
	assert_int_equal(w.cpus[0].cat[JTR_W_HARDIRQ].n, JTR_WATCH_NAMES);
	assert_int_equal(cell(JTR_W_HARDIRQ, "other")->events, 5);
	assert_int_equal(w.cpus[0].st.count[JTR_W_HARDIRQ], JTR_WATCH_NAMES + 5);
}

static void test_task_names(void **state)
{
	char name[JTR_WATCH_NAME_LEN];

	(void)state;
	jtr_watch_task_name(name, "kworker/1:2", 41, sizeof(name));
	assert_string_equal(name, "kworker/1:2");
	jtr_watch_task_name(name, "", 41, sizeof(name));
	assert_string_equal(name, "pid 41");
	/* a comm of 16 bytes has no terminating NUL in a record */
	jtr_watch_task_name(name, "abcdefghijklmnopXYZ", 41, sizeof(name));
	assert_string_equal(name, "abcdefghijklmnop");
}

struct span {
	uint64_t first;
	size_t n;
};

static void span_of(void *arg, const struct jtr_ev *e)
{
	struct span *sp = arg;

	if (!sp->n++)
		sp->first = e->ts_ns;
}

static void test_recorder_and_dump(void **state)
{
	struct span sp = { 0, 0 };
	char buf[4096];
	FILE *f;

	(void)state;
	w.cfg.dump_above_ns = 100000;
	w.dump_after_ns = 1000000;
	sw(100, 0, 500, 0, "swapper/3", "app");
	for (int i = 0; i < 100; i++)		/* 100 records into a recorder of 64 */
		ev(1000 + i, JTR_EV_WAKEUP, 1, 0, 0, NULL, NULL);
	assert_int_equal(jtr_watch_records(&w, 0, UINT64_MAX, NULL, NULL), 64);
	sw(2000000, 500, 700, 1, "app", "spin");
	sw(2200000, 700, 500, 0, "spin", "app");		/* 200 us: a trigger */
	assert_int_equal(w.dump_due_ns, 2200000 + 1000000);
	assert_int_equal(w.trigger.length_ns, 200000);
	assert_int_equal(jtr_watch_records(&w, 1090, 2200000, span_of, &sp), 12);
	assert_int_equal(sp.n, 12);			/* wake-ups 1090..1099 and 2 switches */
	assert_int_equal(sp.first, 1090);
	f = fmemopen(buf, sizeof(buf), "w");
	assert_int_equal(jtr_watch_outliers(&w, f, 0, 3000000, 10000), 1);
	fclose(f);
	assert_string_equal(buf, "cpu,start_ns,length_ns,label\n3,2000000,200000,task preemption "
			    "spin\n");
}

static void test_state_line(void **state)
{
	char buf[16384];
	FILE *f;

	(void)state;
	sw(100, 0, 500, 0, "swapper/3", "app");
	ev(1000, JTR_EV_IRQ_ENTRY, 36, 0, 0, "a\"b", NULL);
	ev(2000, JTR_EV_IRQ_EXIT, 36, 1, 0, NULL, NULL);
	sw(5000, 500, 600, 1, "app", "kworker/3:1");
	sw(6000, 600, 500, 0, "kworker/3:1", "app");
	jtr_watch_flush(&w);
	f = fmemopen(buf, sizeof(buf), "w");
	jtr_watch_state(&w, f, 10000, 0, 7);
	fclose(f);
	assert_non_null(strstr(buf, "{\"cpu\":3,\"app\":\"app\",\"app_ns\":8900,"));
	assert_non_null(strstr(buf, "[\"36 a\\\"b\",1,1000,1]"));
	assert_non_null(strstr(buf, "{\"category\":\"task preemption\",\"count\":1,\"ns\":1000,"));
	assert_non_null(strstr(buf, "[\"kworker/3:1\",1,1000,1]"));
	assert_non_null(strstr(buf, "{\"category\":\"RT throttling\",\"count\":0"));
	assert_int_equal(buf[strlen(buf) - 1], '\n');
}

/* a task's cgroups (here: its pid as its v2 id), and their container label,
 * as the tracer's cgroups table gives them */
static void pid_ids(const void *ctx, uint32_t pid, uint64_t *v2, uint64_t *v1)
{
	(void)ctx;
	*v2 = pid;
	*v1 = 0;
}

static const char *boxes(const void *ctx, uint64_t v2, uint64_t v1)
{
	(void)ctx;
	(void)v1;
	return v2 == 600 ? "docker 0123456789ab" : v2 == 601 ? "nginx.service" : "";
}

static const struct jtr_watch_cell *group_cell(int cat, const char *name, const char *group)
{
	const struct jtr_watch_cat_acct *a = &w.cpus[0].cat[cat];

	for (int i = 0; i <= w.names; i++)
		if (!strcmp(a->cell[i].name, name) && !strcmp(a->cell[i].group, group))
			return &a->cell[i];
	return NULL;
}

static void test_preempting_tasks_by_container(void **state)
{
	char buf[8192];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	(void)state;
	w.ids_of = pid_ids;
	w.label_of = boxes;
	sw(100, 0, 500, 0, "swapper/3", "app");
	/* the same comm in a container and in a unit and in neither: three causes */
	sw(1000000, 500, 600, 1, "app", "stress");
	sw(1003000, 600, 500, 0, "stress", "app");
	sw(2000000, 500, 601, 1, "app", "stress");
	sw(2001000, 601, 500, 0, "stress", "app");
	sw(3000000, 500, 602, 1, "app", "stress");
	sw(3000500, 602, 500, 0, "stress", "app");
	/* woken while a container's task runs: the wait is that container's */
	sw(4000000, 500, 600, 0, "app", "stress");
	ev(4001000, JTR_EV_WAKEUP, 500, CPU, 0, "app", NULL);
	sw(4005000, 600, 500, 1, "stress", "app");
	assert_int_equal(group_cell(JTR_W_TASK, "stress", "docker 0123456789ab")->count, 2);
	assert_int_equal(group_cell(JTR_W_TASK, "stress", "docker 0123456789ab")->ns, 7000);
	assert_int_equal(group_cell(JTR_W_TASK, "stress", "nginx.service")->ns, 1000);
	assert_int_equal(group_cell(JTR_W_TASK, "stress", "")->ns, 500);
	jtr_watch_state(&w, f, 5000000, 0, 0);
	fclose(f);
	assert_non_null(strstr(buf, "[\"stress\",2,7000,1,\"docker 0123456789ab\"]"));
	assert_non_null(strstr(buf, "[\"stress\",1,500,1]"));
}

static void test_ipis_by_sender(void **state)
{
	(void)state;
	sw(100, 0, 500, 0, "swapper/3", "app");
	/* an IPI whose send was seen carries its sender's comm; one unseen has none */
	ev(1000, JTR_EV_VEC_ENTRY, 251, 0, JTR_VEC_SENDER, "java", NULL);
	ev(4000, JTR_EV_VEC_EXIT, 251, 0, 0, NULL, NULL);
	ev(10000, JTR_EV_VEC_ENTRY, 251, 0, JTR_VEC_SENDER, "java", NULL);
	ev(11000, JTR_EV_VEC_EXIT, 251, 0, 0, NULL, NULL);
	ev(20000, JTR_EV_VEC_ENTRY, 251, 0, 0, NULL, NULL);
	ev(20500, JTR_EV_VEC_EXIT, 251, 0, 0, NULL, NULL);
	/* a sender inside a device interrupt: the interrupt takes it, if it is longest */
	ev(30000, JTR_EV_IRQ_ENTRY, 36, 0, 0, "virtio1-req.0", NULL);
	ev(31000, JTR_EV_VEC_ENTRY, 251, 0, JTR_VEC_SENDER, "kswapd0", NULL);
	ev(39000, JTR_EV_VEC_EXIT, 251, 0, 0, NULL, NULL);
	ev(40000, JTR_EV_IRQ_EXIT, 36, 1, 0, NULL, NULL);
	ev(100000, JTR_EV_HRTIMER_EXIT, 0, 0, 0, NULL, NULL);	/* ends the last one */
	assert_int_equal(group_cell(JTR_W_IPI, "call_function", "java")->count, 2);
	assert_int_equal(group_cell(JTR_W_IPI, "call_function", "java")->ns, 4000);
	assert_int_equal(group_cell(JTR_W_IPI, "call_function", "")->count, 1);
	assert_int_equal(group_cell(JTR_W_IPI, "call_function", "kswapd0")->count, 1);
	assert_int_equal(group_cell(JTR_W_IPI, "call_function", "kswapd0")->ns, 10000);
	assert_null(group_cell(JTR_W_HARDIRQ, "36 virtio1-req.0", "kswapd0"));
}

/* a comm the kernel side read whole (trace.bpf.c T_COMM), padded as the
 * helper would pad it: the bytes up to the first NUL, zeros after, the 16th
 * zero; against a byte loop, on comms of every length whose bytes after the
 * NUL are left over from a longer name, and of bytes 0x01, 0x80, 0xff (the
 * borrows of the word trick) */
static void pad_like_the_helper(const unsigned char *in, unsigned char *out)
{
	int k = 0;

	memset(out, 0, JTR_COMM_LEN);
	for (; k < JTR_COMM_LEN - 1 && in[k]; k++)
		out[k] = in[k];
}

static void test_a_comm_read_whole_is_padded_as_the_helper_pads_it(void **state)
{
	static const unsigned char odd[] = { 0x01, 0x80, 0xff, 'a', 0x7f };
	unsigned char in[JTR_COMM_LEN], want[JTR_COMM_LEN], got[JTR_COMM_LEN];
	unsigned long long w0, w1;
	unsigned int seed = 7;

	(void)state;
#if JTR_COMM_PAD
	for (int round = 0; round < 20000; round++) {
		int len = round < 17 * 5 ? round % 17 : rand_r(&seed) % 17;

		for (int k = 0; k < JTR_COMM_LEN; k++)
			in[k] = round < 17 * 5 ? odd[(round / 17 + k) % 5] : (unsigned char)(rand_r(&seed) % 255 + 1);
		if (len < JTR_COMM_LEN)
			in[len] = 0;		/* the name; what follows, a longer one's */
		memcpy(&w0, in, 8);
		memcpy(&w1, in + 8, 8);
		jtr_comm_pad(&w0, &w1);
		memcpy(got, &w0, 8);
		memcpy(got + 8, &w1, 8);
		pad_like_the_helper(in, want);
		assert_memory_equal(got, want, JTR_COMM_LEN);
	}
#else
	skip();
#endif
	(void)in; (void)want; (void)got; (void)w0; (void)w1; (void)seed; (void)odd;
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_tick_while_a_task_runs),
		T(test_softirq_after_an_interrupt_is_part_of_it),
		T(test_nested_interrupt_self_time),
		T(test_preemptions_and_the_wait_they_open),
		T(test_the_application_is_never_its_own_interruption),
		T(test_default_rule_and_app_option),
		T(test_another_task_when_the_watch_begins),
		T(test_the_first_second_decides),
		T(test_app_by_pid),
		T(test_the_task_running_when_the_watch_begins),
		T(test_rt_throttling),
		T(test_a_woken_application_waits),
		T(test_the_wait_ends_when_the_task_moves_away),
		T(test_counts_agree_with_the_histogram),
		T(test_names_are_bounded),
		T(test_task_names),
		T(test_recorder_and_dump),
		T(test_state_line),
		T(test_preempting_tasks_by_container),
		T(test_ipis_by_sender),
		cmocka_unit_test(test_a_comm_read_whole_is_padded_as_the_helper_pads_it),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
