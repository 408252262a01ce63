// SPDX-License-Identifier: GPL-2.0-only
/* procs.c - jtr ipc's writer and reader processes. Each is forked by the
 * coordinator for one row, sets up its end of the method, says it is ready,
 * waits for the go, moves every object, and returns its exit status to the
 * coordinator's fork_child, which ends the process with it: 0, or 1 with the
 * reason in its line of the shared board. Nothing here ends the process. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "jtr_cli.h"
#include "ipc.h"

/* ipc_sleep_ns - nanosleep */
void ipc_sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / JTR_NS_PER_S), (long)(ns % JTR_NS_PER_S) };

	nanosleep(&ts, NULL);
}

/* child_fail - say why in the board: the exit status, 1 */
__attribute__((format(printf, 2, 3)))
static int child_fail(struct ipc_pstat *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->err, sizeof(s->err), fmt, ap);
	va_end(ap);
	__atomic_store_n(&s->failed, 1, __ATOMIC_RELEASE);
	return 1;
}

/* child_start - die with the coordinator, leave every stop signal to it (a
 * Ctrl-C or a SIGTERM to the process group reaches the children too: the
 * coordinator ends the run in order and keeps what was moved), keep only
 * this process's descriptors, pin; 0, or the exit status */
static int child_start(struct ipc_run *r, struct ipc_pstat *s, int idx)
{
	const struct ipc_cfg *c = r->cfg;
	int cpu;

	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != r->coordinator)
		return 1;	/* the coordinator is gone: nobody reads the board */
	close(r->ready[0]);
	close(r->go[1]);
	for (uint32_t i = 0; i < r->row->readers; i++) {
		if (r->rfd[i] >= 0 && (int)i != idx)
			close(r->rfd[i]);
		if (r->wfd[i] >= 0 && idx >= 0)
			close(r->wfd[i]);
	}
	if (c->ncpus) {
		cpu = c->cpus[(idx + 1) % c->ncpus];
		if (jtr_pin_self(cpu) < 0)
			return child_fail(s, "cannot pin to CPU %d: %s", cpu, strerror(errno));
	}
	return 0;
}

/* child_ready - tell the coordinator, then wait for the go (its end of the
 * go pipe closing); 0, or the exit status */
static int child_ready(struct ipc_run *r, struct ipc_pstat *s)
{
	char b = 'R';

	if (write(r->ready[1], &b, 1) != 1)
		return child_fail(s, "cannot report ready: %s", strerror(errno));
	close(r->ready[1]);
	while (read(r->go[0], &b, 1) < 0 && errno == EINTR)
		;
	close(r->go[0]);
	return 0;
}

/* ipc_writer_main - build and send every batch, then end the stream */
int ipc_writer_main(struct ipc_run *r)
{
	const struct ipc_cfg *c = r->cfg;
	const struct ipc_row *w = r->row;
	struct ipc_board *b = r->board;
	struct ipc_pstat *s = &b->w;
	struct ipc_xport x = { .r = r, .s = s, .idx = -1, .epfd = -1, .fd = -1 };
	size_t cap = (size_t)w->opb * c->size;
	unsigned char *buf;
	uint64_t seq = 0, sent = 0;
	struct jtr_err e;
	int rc = child_start(r, s, -1);

	if (rc)
		return rc;
	buf = malloc(cap);
	if (!buf)
		return child_fail(s, "out of memory");
	for (size_t i = 0; i < cap; i++)
		buf[i] = (unsigned char)i;
	if (ipc_writer_open(&x, &e) < 0)
		return child_fail(s, "%s", e.msg);
	if ((rc = child_ready(r, s)))
		return rc;

	s->start_ns = jtr_mono_ns();
	while (sent < c->objects && !__atomic_load_n(&b->stop, __ATOMIC_RELAXED)) {
		uint32_t n = c->objects - sent < w->opb ? (uint32_t)(c->objects - sent) : w->opb;

		seq = ipc_fill_batch(c, buf, n, seq);
		rc = ipc_send_batch(&x, buf, (size_t)n * c->size);
		if (rc < 0)
			break;
		sent += n;
		ipc_sync_counts(&x);
		s->issued = seq;
		s->batches++;
		__atomic_store_n(&s->objects, sent, __ATOMIC_RELAXED);
		if (c->pace_ns)
			ipc_sleep_ns(c->pace_ns);
	}
	ipc_sync_counts(&x);
	ipc_writer_close(&x);
	s->end_ns = jtr_mono_ns();
	if (rc < 0 && rc != -ECANCELED)
		return child_fail(s, "writer: sending failed after %llu objects: %s",
				  (unsigned long long)sent, strerror(-rc));
	return 0;
}

/* ipc_reader_main - take and check every object until end of stream */
int ipc_reader_main(struct ipc_run *r, int idx)
{
	const struct ipc_cfg *c = r->cfg;
	const struct ipc_row *w = r->row;
	struct ipc_pstat *s = &r->board->r[idx];
	struct ipc_xport x = { .r = r, .s = s, .idx = idx, .epfd = -1, .fd = -1 };
	size_t cap = (size_t)w->opb * c->size + c->size;
	struct ipc_check k = { 0 };
	unsigned char *buf;
	size_t have = 0;
	uint64_t objects = 0;
	struct jtr_err e;
	int rc = child_start(r, s, idx);

	if (rc)
		return rc;
	buf = calloc(1, cap);
	if (!buf)
		return child_fail(s, "out of memory");
	if (ipc_reader_open(&x, &e) < 0)
		return child_fail(s, "%s", e.msg);
	if ((rc = child_ready(r, s)))
		return rc;

	s->start_ns = jtr_mono_ns();
	for (;;) {
		ssize_t got = ipc_recv_batch(&x, buf + have, cap - have);
		uint64_t n;

		ipc_sync_counts(&x);
		if (got == 0)
			break;
		if (got < 0)
			return child_fail(s, "reader %d: receiving failed after %llu objects: %s",
					  idx, (unsigned long long)objects, strerror((int)-got));
		have += (size_t)got;
		n = have / c->size;
		ipc_check_objects(&k, buf, n, c->size);
		objects += n;
		if (have % c->size)
			memmove(buf, buf + n * c->size, have % c->size);
		have %= c->size;
		s->batches++;
		s->next = k.next;
		s->lost = k.lost;
		s->dups = k.dups;
		s->corrupt = k.corrupt;
		s->first_bad = k.first_bad;
		__atomic_store_n(&s->objects, objects, __ATOMIC_RELAXED);
		s->end_ns = jtr_mono_ns();
		if (c->reader_pace_ns)
			ipc_sleep_ns(c->reader_pace_ns);
	}
	if (have) {
		ipc_check_tail(&k);
		s->corrupt = k.corrupt;
		s->first_bad = k.first_bad;
	}
	return 0;
}
