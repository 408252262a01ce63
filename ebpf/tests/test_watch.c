/* test_watch.c - jtr watch's accounting (ebpf/watch.c) on synthetic events:
 * what counts as an interruption, its cause, its bucket, the name table's
 * bound, the flight recorder and its dump window. */
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

static struct jtr_watch w;

static int setup(void **state)
{
	int cpus[] = { CPU };

	(void)state;
	if (jtr_watch_init(&w, cpus, 1, JTR_WATCH_NAMES, 64, 16) < 0)
		return -1;
	w.vec_names = vecs;
	w.nvecs = 4;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	jtr_watch_free(&w);
	return 0;
}

static void ev(uint64_t ts, int type, uint64_t a, uint64_t b, uint8_t flags, const char *s1,
	       const char *s2)
{
	struct jtr_ev e;

	memset(&e, 0, sizeof(e));
	e.ts_ns = ts;
	e.cpu = CPU;
	e.type = (unsigned char)type;
	e.a = a;
	e.b = b;
	e.flags = flags;
	if (s1)
		strncpy(e.str, s1, JTR_COMM_LEN);
	if (s2)
		strncpy(e.str + JTR_COMM_LEN, s2, JTR_COMM_LEN);
	jtr_watch_event(&w, &e);
}

/* a switch from @prev to @next; @preempted: prev still runnable */
static void sw(uint64_t ts, uint32_t prev, uint32_t next, int preempted, const char *pc,
	       const char *nc)
{
	ev(ts, JTR_EV_SWITCH, prev | (uint64_t)next << 32, 120 | 120 << 16, (uint8_t)preempted, pc,
	   nc);
}

static const struct jtr_watch_cell *cell(int cat, const char *name)
{
	const struct jtr_watch_cat_acct *a = &w.cpus[0].cat[cat];

	for (int i = 0; i <= w.names; i++)
		if (!strcmp(a->cell[i].name, name))
			return &a->cell[i];
	return NULL;
}

static void test_tick_while_a_task_runs(void **state)
{
	(void)state;
	sw(100, 0, 500, 0, "swapper/3", "app");
	ev(1000, JTR_EV_VEC_ENTRY, 236, 1, 0, NULL, NULL);
	ev(6000, JTR_EV_VEC_EXIT, 236, 1, 0, NULL, NULL);
	ev(9000, JTR_EV_PF_USER, 0x1000, 0, 0, NULL, NULL);	/* ends the interrupt */
	assert_non_null(cell(JTR_W_TICK, "local timer"));
	assert_int_equal(cell(JTR_W_TICK, "local timer")->count, 1);
	assert_int_equal(cell(JTR_W_TICK, "local timer")->ns, 5000);
	assert_int_equal(w.cpus[0].cat[JTR_W_TICK].hist[2], 1);	/* (2 us, 5 us] */
	assert_int_equal(cell(JTR_W_PF, "user")->count, 1);
	assert_int_equal(w.cpus[0].cat[JTR_W_PF].hist[0], 0);	/* no duration */
}

static void test_softirq_after_an_interrupt_is_part_of_it(void **state)
{
	(void)state;
	sw(100, 0, 500, 0, "swapper/3", "app");
	ev(1000, JTR_EV_VEC_ENTRY, 236, 1, 0, NULL, NULL);
	ev(3000, JTR_EV_VEC_EXIT, 236, 1, 0, NULL, NULL);
	ev(3500, JTR_EV_SOFTIRQ_ENTRY, 1, 0, 0, NULL, NULL);
	ev(33500, JTR_EV_SOFTIRQ_EXIT, 1, 0, 0, NULL, NULL);
	jtr_watch_flush(&w);
	/* one interruption of 32.5 us, charged to the softirq that took most of it */
	assert_int_equal(cell(JTR_W_SOFTIRQ, "TIMER")->count, 1);
	assert_int_equal(cell(JTR_W_SOFTIRQ, "TIMER")->ns, 32500);
	assert_int_equal(cell(JTR_W_TICK, "local timer")->count, 0);
	assert_int_equal(cell(JTR_W_TICK, "local timer")->events, 1);
	assert_int_equal(w.cpus[0].cat[JTR_W_SOFTIRQ].count, 1);
}

static void test_nested_interrupt_self_time(void **state)
{
	(void)state;
	sw(100, 0, 500, 0, "swapper/3", "app");
	ev(1000, JTR_EV_IRQ_ENTRY, 36, 0, 0, "virtio1-req.0", NULL);
	ev(2000, JTR_EV_VEC_ENTRY, 236, 0, 0, NULL, NULL);	/* call_function inside */
	ev(2500, JTR_EV_VEC_EXIT, 236, 0, 0, NULL, NULL);
	ev(9000, JTR_EV_IRQ_EXIT, 36, 1, 0, NULL, NULL);
	jtr_watch_flush(&w);
	assert_int_equal(cell(JTR_W_HARDIRQ, "36 virtio1-req.0")->count, 1);
	assert_int_equal(cell(JTR_W_HARDIRQ, "36 virtio1-req.0")->ns, 8000);
	assert_int_equal(cell(JTR_W_IPI, "call_function")->events, 1);
	assert_int_equal(cell(JTR_W_IPI, "call_function")->count, 0);
}

static void test_preemptions_and_the_wait_they_open(void **state)
{
	(void)state;
	sw(100, 0, 500, 0, "swapper/3", "app");
	sw(10000, 500, 600, 1, "app", "kworker/3:1");		/* app preempted */
	sw(12000, 600, 700, 0, "kworker/3:1", "spin");		/* kworker blocks */
	sw(310000, 700, 500, 0, "spin", "app");			/* app back */
	assert_int_equal(cell(JTR_W_TASK, "kworker")->count, 1);	/* it preempted */
	assert_int_equal(cell(JTR_W_TASK, "kworker")->ns, 2000);
	assert_int_equal(cell(JTR_W_TASK, "spin")->count, 0);	/* it only ran after */
	assert_int_equal(cell(JTR_W_TASK, "spin")->ns, 298000);
	assert_int_equal(w.cpus[0].cat[JTR_W_TASK].hist[8], 1);	/* the wait: (200, 500] us */
	assert_int_equal(w.trigger.length_ns, 0);		/* no dumps asked for */
	/* a spinner preempted by a higher task and resuming is one preemption of its own */
	sw(320000, 500, 700, 1, "app", "spin");
	sw(321000, 700, 900, 1, "spin", "migration/3");
	sw(322000, 900, 700, 0, "migration/3", "spin");
	sw(330000, 700, 500, 0, "spin", "app");
	assert_int_equal(cell(JTR_W_TASK, "spin")->count, 1);
	assert_int_equal(cell(JTR_W_TASK, "migration")->count, 1);
	assert_int_equal(cell(JTR_W_TASK, "spin")->ns, 298000 + 9000);
	assert_int_equal(w.cpus[0].cat[JTR_W_TASK].hist[3], 1);	/* the wait: (5, 10] us */
	/* an interrupt while the app waits is no interruption of its own */
	sw(400000, 500, 800, 1, "app", "other/1");
	ev(401000, JTR_EV_VEC_ENTRY, 236, 1, 0, NULL, NULL);
	ev(402000, JTR_EV_VEC_EXIT, 236, 1, 0, NULL, NULL);
	sw(405000, 800, 500, 0, "other/1", "app");
	jtr_watch_flush(&w);
	assert_int_equal(cell(JTR_W_TICK, "local timer")->count, 0);
	assert_int_equal(cell(JTR_W_TASK, "other")->count, 1);
	assert_int_equal(cell(JTR_W_TASK, "other")->ns, 5000);
	/* two hogs taking turns: each slice interrupts the other */
	sw(500000, 500, 900, 1, "app", "hog");
	sw(504000, 900, 500, 1, "hog", "app");
	sw(508000, 500, 900, 1, "app", "hog");
	sw(512000, 900, 0, 0, "hog", "swapper/3");	/* app migrated; idle */
	sw(520000, 0, 900, 0, "swapper/3", "hog");
	sw(530000, 900, 0, 0, "hog", "swapper/3");
	assert_int_equal(cell(JTR_W_TASK, "hog")->count, 2);
	assert_int_equal(cell(JTR_W_TASK, "hog")->ns, 8000);
	assert_int_equal(cell(JTR_W_TASK, "app")->count, 1);
	assert_int_equal(cell(JTR_W_TASK, "app")->ns, 4000);
}

static void test_idle_cpu_has_no_interruptions(void **state)
{
	(void)state;
	sw(100, 500, 0, 0, "app", "swapper/3");
	ev(1000, JTR_EV_VEC_ENTRY, 236, 1, 0, NULL, NULL);
	ev(6000, JTR_EV_VEC_EXIT, 236, 1, 0, NULL, NULL);
	jtr_watch_flush(&w);
	assert_int_equal(cell(JTR_W_TICK, "local timer")->count, 0);
	assert_int_equal(cell(JTR_W_TICK, "local timer")->events, 1);
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
	assert_int_equal(w.cpus[0].cat[JTR_W_HARDIRQ].count, JTR_WATCH_NAMES + 5);
}

static void test_recorder_and_dump(void **state)
{
	size_t first, n;
	char buf[4096];
	FILE *f;

	(void)state;
	w.dump_above_ns = 100000;
	w.dump_after_ns = 1000000;
	sw(100, 0, 500, 0, "swapper/3", "app");
	for (int i = 0; i < 100; i++)		/* 100 records into a recorder of 64 */
		ev(1000 + i, JTR_EV_WAKEUP, 1, 0, 0, NULL, NULL);
	assert_int_equal(w.rec_n, 64);
	sw(2000000, 500, 700, 1, "app", "spin");
	sw(2200000, 700, 500, 0, "spin", "app");		/* 200 us: a trigger */
	assert_int_equal(w.dump_due_ns, 2200000 + 1000000);
	assert_int_equal(w.trigger.length_ns, 200000);
	jtr_watch_dump_range(&w, 1090, 2200000, &first, &n);
	assert_int_equal(n, 12);			/* wake-ups 1090..1099 and 2 switches */
	assert_int_equal(w.rec[first].ts_ns, 1090);
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
	jtr_watch_flush(&w);
	f = fmemopen(buf, sizeof(buf), "w");
	jtr_watch_state(&w, f, 5, 0, 7);
	fclose(f);
	assert_non_null(strstr(buf, "\"cpu\":3"));
	assert_non_null(strstr(buf, "[\"36 a\\\"b\",1,1000,1]"));
	assert_non_null(strstr(buf, "{\"category\":\"task preemption\",\"count\":0"));
	assert_int_equal(buf[strlen(buf) - 1], '\n');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_tick_while_a_task_runs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_softirq_after_an_interrupt_is_part_of_it, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_nested_interrupt_self_time, setup, teardown),
		cmocka_unit_test_setup_teardown(test_preemptions_and_the_wait_they_open, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_idle_cpu_has_no_interruptions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_names_are_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recorder_and_dump, setup, teardown),
		cmocka_unit_test_setup_teardown(test_state_line, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
