// SPDX-License-Identifier: GPL-2.0-only
/* output.c - jtr ipc's table (stdout and summary.txt) and result.json
 * (jtr-ipc/1, docs/ipc.schema.json): a row per method, reader count and
 * batch size (with --repeat, its elapsed time's average, standard deviation,
 * minimum and maximum over its repetitions), and the best shm method against
 * the best tcp one. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ipc.h"

/* row_cpu_s - user + system time of every process of the row */
static double row_cpu_s(const struct ipc_row *w)
{
	double s = 0;

	s += (double)w->ru_w.ru_utime.tv_sec + (double)w->ru_w.ru_utime.tv_usec / 1e6 +
	     (double)w->ru_w.ru_stime.tv_sec + (double)w->ru_w.ru_stime.tv_usec / 1e6;
	for (uint32_t i = 0; i < w->readers; i++)
		s += (double)w->ru_r[i].ru_utime.tv_sec + (double)w->ru_r[i].ru_utime.tv_usec / 1e6 +
		     (double)w->ru_r[i].ru_stime.tv_sec + (double)w->ru_r[i].ru_stime.tv_usec / 1e6;
	return s;
}

/* row_empty - the readers' empty-queue waits, summed */
static uint64_t row_empty(const struct ipc_row *w)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < w->readers; i++)
		n += w->r[i].waits;
	return n;
}

/* row_min_objects - objects the slowest reader received */
static uint64_t row_min_objects(const struct ipc_row *w)
{
	uint64_t n = w->readers ? w->r[0].objects : 0;

	for (uint32_t i = 1; i < w->readers; i++)
		if (w->r[i].objects < n)
			n = w->r[i].objects;
	return n;
}

/* ipc_row_stats - @g's @repeat repetitions summed up: the elapsed time's
 * average, sample standard deviation (as the IPC comparison's tables: n - 1),
 * minimum and maximum, and the average counts, over the repetitions that
 * finished (ran, ok, not cut short by a stop) */
void ipc_row_stats(const struct ipc_row *g, uint32_t repeat, struct ipc_stats *s)
{
	double sum = 0, sq = 0;

	memset(s, 0, sizeof(*s));
	s->ok = true;
	for (uint32_t k = 0; k < repeat; k++) {
		const struct ipc_row *w = &g[k];

		if (!w->ran)
			continue;
		s->ran++;
		s->ok &= w->ok;
		s->partial |= w->partial;
		if (!w->ok || w->partial)
			continue;
		if (!s->finished || w->elapsed_s < s->min_s)
			s->min_s = w->elapsed_s;
		if (!s->finished || w->elapsed_s > s->max_s)
			s->max_s = w->elapsed_s;
		s->finished++;
		sum += w->elapsed_s;
		s->empty += (double)row_empty(w);
		s->full += (double)w->w.waits;
		s->cpu_s += row_cpu_s(w);
		s->objects = row_min_objects(w);
	}
	if (!s->finished)
		return;
	s->avg_s = sum / s->finished;
	s->empty /= s->finished;
	s->full /= s->finished;
	s->cpu_s /= s->finished;
	for (uint32_t k = 0; k < repeat; k++)
		if (g[k].ran && g[k].ok && !g[k].partial)
			sq += (g[k].elapsed_s - s->avg_s) * (g[k].elapsed_s - s->avg_s);
	s->stdev_s = s->finished > 1 ? sqrt(sq / (s->finished - 1)) : 0.0;
}

/* ipc_table_head - the first lines of the table */
void ipc_table_head(FILE *f, const struct ipc_cfg *c)
{
	fprintf(f, "jtr ipc: %llu objects of %u bytes to every reader; shm queue %u slots, low water "
		"%u; TCP_NODELAY %s", (unsigned long long)c->objects, c->size, c->slots,
		c->low_water_given ? c->low_water : c->slots / 2, c->nagle ? "off" : "on");
	if (c->repeat == 1) {
		fprintf(f, "\n%-13s %7s %8s %10s %9s %9s %10s %9s %7s  %s\n", "method", "readers",
			"batch", "elapsed_s", "Mobj/s", "MB/s", "empty", "full", "cpu_s", "check");
		return;
	}
	fprintf(f, "; every row %u times (elapsed: average, sample stdev, min, max; Mobj/s, MB/s "
		"at the average; empty, full, cpu_s: average per run)\n", c->repeat);
	fprintf(f, "%-13s %7s %8s %5s %9s %9s %9s %9s %8s %8s %9s %8s %6s  %s\n", "method",
		"readers", "batch", "runs", "avg_s", "stdev_s", "min_s", "max_s", "Mobj/s", "MB/s",
		"empty", "full", "cpu_s", "check");
}

/* ipc_table_row - one row of the table: @g's only repetition as it went, or
 * (--repeat) the figures of its repetitions that finished */
void ipc_table_row(FILE *f, const struct ipc_cfg *c, const struct ipc_row *g)
{
	struct ipc_stats st;
	double e;

	if (c->repeat == 1) {
		uint64_t n = row_min_objects(g);

		e = g->elapsed_s;
		fprintf(f, "%-13s %7u %8u %10.3f %9.2f %9.1f %10llu %9llu %7.2f  %s%s\n",
			ipc_method_names[g->m], g->readers, g->opb * c->size, e,
			e > 0 ? (double)n / e / 1e6 : 0.0, e > 0 ? (double)n * c->size / e / 1e6 : 0.0,
			(unsigned long long)row_empty(g), (unsigned long long)g->w.waits,
			row_cpu_s(g), g->ok ? "ok" : "FAILED", g->partial ? " (partial)" : "");
		return;
	}
	ipc_row_stats(g, c->repeat, &st);
	e = st.avg_s;
	fprintf(f, "%-13s %7u %8u %5u", ipc_method_names[g->m], g->readers, g->opb * c->size,
		st.finished);
	if (st.finished)
		fprintf(f, " %9.3f %9.3f %9.3f %9.3f %8.2f %8.1f %9.0f %8.0f %6.2f", e, st.stdev_s,
			st.min_s, st.max_s, e > 0 ? (double)st.objects / e / 1e6 : 0.0,
			e > 0 ? (double)st.objects * c->size / e / 1e6 : 0.0, st.empty, st.full,
			st.cpu_s);
	else
		fprintf(f, " %9s %9s %9s %9s %8s %8s %9s %8s %6s", "-", "-", "-", "-", "-", "-", "-",
			"-", "-");
	fprintf(f, "  %s", st.ok ? "ok" : "FAILED");
	if (st.partial)
		fprintf(f, " (partial: %u of %u runs finished)", st.finished, c->repeat);
	else if (st.finished < c->repeat)
		fprintf(f, " (%u of %u runs finished)", st.finished, c->repeat);
	fputc('\n', f);
}

/* best_of - the fastest row (by its average over the repetitions that
 * finished) of methods [@lo, @hi] for @readers and @batch with no failed
 * repetition, or NULL; its figures in @bs */
static const struct ipc_row *best_of(const struct ipc_cfg *c, const struct ipc_row *rows, int n,
				     enum ipc_method lo, enum ipc_method hi, uint32_t readers,
				     uint32_t batch, struct ipc_stats *bs)
{
	const struct ipc_row *b = NULL;

	for (int i = 0; i < n; i++) {
		const struct ipc_row *g = &rows[(size_t)i * c->repeat];
		struct ipc_stats st;

		if (g->m < lo || g->m > hi || g->readers != readers || g->batch != batch)
			continue;
		ipc_row_stats(g, c->repeat, &st);
		if (st.ok && st.finished && st.avg_s > 0 && (!b || st.avg_s < bs->avg_s)) {
			b = g;
			*bs = st;
		}
	}
	return b;
}

/* ipc_print_failures - why each failed row (repetition) failed, one a line,
 * @prefix first */
void ipc_print_failures(FILE *f, const char *prefix, const struct ipc_cfg *c,
			const struct ipc_row *rows, int n)
{
	for (size_t i = 0; i < (size_t)n * c->repeat; i++) {
		const struct ipc_row *w = &rows[i];
		char rep[32] = "";

		if (!w->ran || w->ok)
			continue;
		if (c->repeat > 1)
			snprintf(rep, sizeof(rep), ", run %u of %u", w->rep + 1, c->repeat);
		fprintf(f, "%s%s, %u reader%s, %u-byte batches%s: %s\n", prefix,
			ipc_method_names[w->m], w->readers, w->readers > 1 ? "s" : "",
			w->opb * c->size, rep, w->err);
	}
}

/* ipc_table_tail - shm against tcp for each reader count and batch size */
void ipc_table_tail(FILE *f, const struct ipc_cfg *c, const struct ipc_row *rows, int n)
{
	const char *avg = c->repeat > 1 ? "avg " : "";

	for (int i = 0; i < n; i++) {
		const struct ipc_row *w = &rows[(size_t)i * c->repeat], *s, *t;
		struct ipc_stats ss, ts;
		bool first = true;

		for (int j = 0; j < i; j++)
			if (rows[(size_t)j * c->repeat].readers == w->readers &&
			    rows[(size_t)j * c->repeat].batch == w->batch)
				first = false;
		if (!first)
			continue;
		s = best_of(c, rows, n, M_SHM_MUTEX, M_SHM_LOCKLESS, w->readers, w->batch, &ss);
		t = best_of(c, rows, n, M_TCP, M_TCP_EPOLL, w->readers, w->batch, &ts);
		if (s && t)
			fprintf(f, "%u reader%s, %u-byte batches: best shm (%s) %s%.3f s, best tcp (%s) "
				"%s%.3f s: shm/tcp %.2f\n", w->readers, w->readers > 1 ? "s" : "",
				w->opb * c->size, ipc_method_names[s->m], avg, ss.avg_s,
				ipc_method_names[t->m], avg, ts.avg_s, ss.avg_s / ts.avg_s);
	}
}

/* write_pstat - one process's counts */
static void write_pstat(struct jtr_json *j, const struct ipc_pstat *s, const struct rusage *ru,
			bool reader, int cpu)
{
	jtr_json_obj_begin(j, NULL);
	if (cpu >= 0) jtr_json_int(j, "cpu", cpu); else jtr_json_null(j, "cpu");
	jtr_json_uint(j, "objects", s->objects);
	jtr_json_uint(j, "batches", s->batches);
	jtr_json_uint(j, reader ? "empty_waits" : "full_waits", s->waits);
	jtr_json_uint(j, "sleeps", s->sleeps);
	if (reader) {
		jtr_json_uint(j, "lost", s->lost);
		jtr_json_uint(j, "duplicates", s->dups);
		jtr_json_uint(j, "corrupted", s->corrupt);
		jtr_json_fixed(j, "elapsed_s", s->end_ns > s->start_ns ?
			       (double)(s->end_ns - s->start_ns) / 1e9 : 0.0, 6);
	} else {
		jtr_json_uint(j, "dropped_on_purpose", s->issued - s->objects);
	}
	jtr_json_fixed(j, "user_s", (double)ru->ru_utime.tv_sec + (double)ru->ru_utime.tv_usec / 1e6, 6);
	jtr_json_fixed(j, "sys_s", (double)ru->ru_stime.tv_sec + (double)ru->ru_stime.tv_usec / 1e6, 6);
	jtr_json_int(j, "voluntary_switches", ru->ru_nvcsw);
	jtr_json_int(j, "involuntary_switches", ru->ru_nivcsw);
	jtr_json_str(j, "error", s->err[0] ? s->err : NULL);
	jtr_json_obj_end(j);
}

/* write_row - one row of result.json */
static void write_row(struct jtr_json *j, const struct ipc_cfg *c, const struct ipc_row *w)
{
	uint64_t n = row_min_objects(w);
	double e = w->elapsed_s;
	bool shm = w->m <= M_SHM_LOCKLESS;

	jtr_json_obj_begin(j, NULL);
	jtr_json_str(j, "method", ipc_method_names[w->m]);
	jtr_json_uint(j, "repetition", w->rep + 1);
	jtr_json_uint(j, "readers", w->readers);
	jtr_json_uint(j, "batch_bytes", (uint64_t)w->opb * c->size);
	jtr_json_uint(j, "objects_per_batch", w->opb);
	if (shm) {
		jtr_json_uint(j, "queue_slots", w->slots);
		jtr_json_uint(j, "queue_bytes", (uint64_t)w->slots * w->opb * c->size);
	} else {
		jtr_json_null(j, "queue_slots");
		jtr_json_null(j, "queue_bytes");
	}
	if (w->m <= M_SHM_ADAPTIVE) jtr_json_uint(j, "low_water", w->low_water);
	else jtr_json_null(j, "low_water");
	if (!shm) {
		jtr_json_int(j, "sndbuf", w->sndbuf);
		jtr_json_int(j, "rcvbuf", w->rcvbuf);
	}
	jtr_json_uint(j, "objects_sent", w->w.objects);
	jtr_json_uint(j, "objects_received", n);
	jtr_json_uint(j, "bytes_per_reader", n * c->size);
	jtr_json_fixed(j, "elapsed_s", e, 6);
	jtr_json_fixed(j, "objects_per_s", e > 0 ? (double)n / e : 0.0, 1);
	jtr_json_fixed(j, "mb_per_s", e > 0 ? (double)n * c->size / e / 1e6 : 0.0, 3);
	jtr_json_uint(j, "empty_waits", row_empty(w));
	jtr_json_uint(j, "full_waits", w->w.waits);
	jtr_json_fixed(j, "cpu_s", row_cpu_s(w), 6);
	jtr_json_bool(j, "ok", w->ok);
	jtr_json_bool(j, "partial", w->partial);
	jtr_json_str(j, "error", w->err[0] ? w->err : NULL);
	jtr_json_arr_begin(j, "writer");
	write_pstat(j, &w->w, &w->ru_w, false, c->ncpus ? c->cpus[0] : -1);
	jtr_json_arr_end(j);
	jtr_json_arr_begin(j, "per_reader");
	for (uint32_t i = 0; i < w->readers; i++)
		write_pstat(j, &w->r[i], &w->ru_r[i], true, c->ncpus ? c->cpus[(i + 1) % c->ncpus] : -1);
	jtr_json_arr_end(j);
	jtr_json_obj_end(j);
}

/* write_stats - one row's figures over its repetitions (null: none finished) */
static void write_stats(struct jtr_json *j, const struct ipc_cfg *c, const struct ipc_row *g)
{
	struct ipc_stats st;
	bool any;

	ipc_row_stats(g, c->repeat, &st);
	any = st.finished > 0;
	jtr_json_obj_begin(j, NULL);
	jtr_json_str(j, "method", ipc_method_names[g->m]);
	jtr_json_uint(j, "readers", g->readers);
	jtr_json_uint(j, "batch_bytes", (uint64_t)g->opb * c->size);
	jtr_json_uint(j, "runs", st.ran);
	jtr_json_uint(j, "finished", st.finished);
	jtr_json_bool(j, "ok", st.ok);
	jtr_json_bool(j, "partial", st.partial);
	jtr_json_obj_begin(j, "elapsed_s");
	if (any) {
		jtr_json_double(j, "avg", st.avg_s);
		if (st.finished > 1) jtr_json_double(j, "stdev", st.stdev_s);
		else jtr_json_null(j, "stdev");
		jtr_json_double(j, "min", st.min_s);
		jtr_json_double(j, "max", st.max_s);
	} else {
		jtr_json_null(j, "avg");
		jtr_json_null(j, "stdev");
		jtr_json_null(j, "min");
		jtr_json_null(j, "max");
	}
	jtr_json_obj_end(j);
	if (any && st.avg_s > 0) {
		jtr_json_fixed(j, "objects_per_s", (double)st.objects / st.avg_s, 1);
		jtr_json_fixed(j, "mb_per_s", (double)st.objects * c->size / st.avg_s / 1e6, 3);
		jtr_json_fixed(j, "empty_waits", st.empty, 3);
		jtr_json_fixed(j, "full_waits", st.full, 3);
		jtr_json_fixed(j, "cpu_s", st.cpu_s, 6);
	} else {
		jtr_json_null(j, "objects_per_s");
		jtr_json_null(j, "mb_per_s");
		jtr_json_null(j, "empty_waits");
		jtr_json_null(j, "full_waits");
		jtr_json_null(j, "cpu_s");
	}
	jtr_json_obj_end(j);
}

/* ipc_write_outputs - summary.txt (the table) and result.json */
void ipc_write_outputs(struct jtr_probe *p, const struct ipc_cfg *c, const struct ipc_row *rows,
		       int n)
{
	struct jtr_afile txt, res;
	struct jtr_json j;

	jtr_probe_open(p, &txt, "summary.txt");
	jtr_probe_open(p, &res, "result.json");
	ipc_table_head(txt.f, c);
	for (int i = 0; i < n; i++)
		if (rows[(size_t)i * c->repeat].ran)
			ipc_table_row(txt.f, c, &rows[(size_t)i * c->repeat]);
	ipc_print_failures(txt.f, "", c, rows, n);
	ipc_table_tail(txt.f, c, rows, n);
	if (p->partial)
		fprintf(txt.f, "partial: stopped early; the rows cover what was moved\n");

	jtr_json_init(&j, res.f);
	jtr_probe_result_begin(p, &j);
	jtr_json_obj_begin(&j, "params");
	jtr_json_uint(&j, "objects", c->objects);
	jtr_json_uint(&j, "object_bytes", c->size);
	jtr_json_arr_begin_inline(&j, "batch_bytes");
	for (int i = 0; i < c->nbatches; i++)
		jtr_json_uint(&j, NULL, c->batches[i]);
	jtr_json_arr_end(&j);
	jtr_json_arr_begin_inline(&j, "methods");
	for (int m = 0; m < M_COUNT; m++)
		if (c->methods[m])
			jtr_json_str(&j, NULL, ipc_method_names[m]);
	jtr_json_arr_end(&j);
	jtr_json_arr_begin_inline(&j, "readers");
	for (int i = 0; i < c->nfanouts; i++)
		jtr_json_uint(&j, NULL, c->fanouts[i]);
	jtr_json_arr_end(&j);
	jtr_json_arr_begin_inline(&j, "cpus");
	for (int i = 0; i < c->ncpus; i++)
		jtr_json_int(&j, NULL, c->cpus[i]);
	jtr_json_arr_end(&j);
	jtr_json_uint(&j, "queue_slots", c->slots);
	if (c->low_water_given) jtr_json_uint(&j, "low_water", c->low_water);
	else jtr_json_null(&j, "low_water");
	jtr_json_bool(&j, "tcp_nodelay", !c->nagle);
	jtr_json_uint(&j, "timeout_ns", c->timeout_ns);
	jtr_json_uint(&j, "pace_ns", c->pace_ns);
	jtr_json_uint(&j, "reader_pace_ns", c->reader_pace_ns);
	jtr_json_uint(&j, "drop_every", c->drop_every);
	jtr_json_uint(&j, "corrupt_every", c->corrupt_every);
	jtr_json_uint(&j, "repeat", c->repeat);
	jtr_json_obj_end(&j);
	jtr_json_arr_begin(&j, "rows");
	for (size_t i = 0; i < (size_t)n * c->repeat; i++)
		if (rows[i].ran)
			write_row(&j, c, &rows[i]);
	jtr_json_arr_end(&j);
	jtr_json_arr_begin(&j, "stats");
	for (int i = 0; i < n; i++)
		if (rows[(size_t)i * c->repeat].ran)
			write_stats(&j, c, &rows[(size_t)i * c->repeat]);
	jtr_json_arr_end(&j);
	jtr_probe_finish_summary(p, &j, &txt, &res);
}
