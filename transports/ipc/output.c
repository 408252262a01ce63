/* output.c - jtr ipc's table (stdout and summary.txt) and result.json
 * (jtr-ipc/1, docs/ipc.schema.json): a row per method, reader count and
 * batch size, and the best shm method against the best tcp one. */
#include <stdio.h>

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

/* ipc_table_head - the first lines of the table */
void ipc_table_head(FILE *f, const struct ipc_cfg *c)
{
	fprintf(f, "jtr ipc: %llu objects of %u bytes to every reader; shm queue %u slots, low water "
		"%u; TCP_NODELAY %s\n", (unsigned long long)c->objects, c->size, c->slots,
		c->low_water_given ? c->low_water : c->slots / 2, c->nagle ? "off" : "on");
	fprintf(f, "%-13s %7s %8s %10s %9s %9s %10s %9s %7s  %s\n", "method", "readers", "batch",
		"elapsed_s", "Mobj/s", "MB/s", "empty", "full", "cpu_s", "check");
}

/* ipc_table_row - one row of the table */
void ipc_table_row(FILE *f, const struct ipc_cfg *c, const struct ipc_row *w)
{
	uint64_t n = row_min_objects(w);
	double e = w->elapsed_s;

	fprintf(f, "%-13s %7u %8u %10.3f %9.2f %9.1f %10llu %9llu %7.2f  %s%s\n", ipc_method_names[w->m],
		w->readers, w->opb * c->size, e, e > 0 ? (double)n / e / 1e6 : 0.0,
		e > 0 ? (double)n * c->size / e / 1e6 : 0.0, (unsigned long long)row_empty(w),
		(unsigned long long)w->w.waits, row_cpu_s(w), w->ok ? "ok" : "FAILED",
		w->partial ? " (partial)" : "");
}

/* best_of - the fastest successful row of methods [@lo, @hi] for @readers and
 * @batch, or NULL */
static const struct ipc_row *best_of(const struct ipc_row *rows, int n, enum ipc_method lo,
				     enum ipc_method hi, uint32_t readers, uint32_t batch)
{
	const struct ipc_row *b = NULL;

	for (int i = 0; i < n; i++) {
		const struct ipc_row *w = &rows[i];

		if (w->ran && w->ok && !w->partial && w->m >= lo && w->m <= hi &&
		    w->readers == readers && w->batch == batch && w->elapsed_s > 0 &&
		    (!b || w->elapsed_s < b->elapsed_s))
			b = w;
	}
	return b;
}

/* ipc_print_failures - why each failed row failed, one a line, @prefix first */
void ipc_print_failures(FILE *f, const char *prefix, const struct ipc_cfg *c,
			const struct ipc_row *rows, int n)
{
	for (int i = 0; i < n; i++)
		if (rows[i].ran && !rows[i].ok)
			fprintf(f, "%s%s, %u reader%s, %u-byte batches: %s\n", prefix,
				ipc_method_names[rows[i].m], rows[i].readers,
				rows[i].readers > 1 ? "s" : "", rows[i].opb * c->size, rows[i].err);
}

/* ipc_table_tail - shm against tcp for each reader count and batch size */
void ipc_table_tail(FILE *f, const struct ipc_cfg *c, const struct ipc_row *rows, int n)
{
	for (int i = 0; i < n; i++) {
		const struct ipc_row *w = &rows[i], *s, *t;
		bool first = true;

		for (int j = 0; j < i; j++)
			if (rows[j].readers == w->readers && rows[j].batch == w->batch)
				first = false;
		if (!first)
			continue;
		s = best_of(rows, n, M_SHM_MUTEX, M_SHM_LOCKLESS, w->readers, w->batch);
		t = best_of(rows, n, M_TCP, M_TCP_EPOLL, w->readers, w->batch);
		if (s && t)
			fprintf(f, "%u reader%s, %u-byte batches: best shm (%s) %.3f s, best tcp (%s) "
				"%.3f s: shm/tcp %.2f\n", w->readers, w->readers > 1 ? "s" : "",
				w->opb * c->size, ipc_method_names[s->m], s->elapsed_s,
				ipc_method_names[t->m], t->elapsed_s, s->elapsed_s / t->elapsed_s);
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
		if (rows[i].ran)
			ipc_table_row(txt.f, c, &rows[i]);
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
	jtr_json_obj_end(&j);
	jtr_json_arr_begin(&j, "rows");
	for (int i = 0; i < n; i++)
		if (rows[i].ran)
			write_row(&j, c, &rows[i]);
	jtr_json_arr_end(&j);
	jtr_probe_finish_summary(p, &j, &txt, &res);
}
