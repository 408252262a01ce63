// SPDX-License-Identifier: GPL-2.0-only
/* coord.c - jtr ipc's coordinator: for one row, set up the method, fork the
 * writer and the readers, let them go together once all are ready, watch
 * them (Ctrl-C, a death, a stall), reap them, and judge the row from what
 * they counted in the shared board. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jtr_cli.h"
#include "ipc.h"

#define STOP_GRACE_NS (5 * JTR_NS_PER_S)
#define READY_WITHIN_NS (10 * JTR_NS_PER_S)

/* the row in progress, for ipc_cleanup() alone: an exit handler takes no
 * argument, and an exit on an error must still remove the shm segment */
static struct ipc_run *in_progress;

/* ipc_cleanup - no segment is left behind, whatever way jtr ipc ends */
void ipc_cleanup(void)
{
	if (in_progress)
		ipc_shm_unlink(in_progress);
}

/* close_fd - close and forget */
static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* run_reset - no resources yet */
static void run_reset(struct ipc_run *r, struct jtr_probe *p, const struct ipc_cfg *c,
		      struct ipc_board *b, struct ipc_row *w)
{
	memset(r, 0, sizeof(*r));
	r->cfg = c;
	r->board = b;
	r->row = w;
	r->p = p;
	r->coordinator = getpid();
	r->efd_w = r->stop_fd = -1;
	r->ready[0] = r->ready[1] = r->go[0] = r->go[1] = -1;
	for (int i = 0; i < IPC_MAX_READERS; i++)
		r->efd_r[i] = r->wfd[i] = r->rfd[i] = -1;
}

/* run_release - everything the row opened */
static void run_release(struct ipc_run *r)
{
	ipc_shm_release(r);
	close_fd(&r->efd_w);
	close_fd(&r->stop_fd);
	for (int i = 0; i < 2; i++) {
		close_fd(&r->ready[i]);
		close_fd(&r->go[i]);
	}
	for (int i = 0; i < IPC_MAX_READERS; i++) {
		close_fd(&r->efd_r[i]);
		close_fd(&r->wfd[i]);
		close_fd(&r->rfd[i]);
	}
}

/* kill_children - SIGKILL whoever is left */
static void kill_children(const struct ipc_run *r)
{
	if (r->pid_w > 0)
		kill(r->pid_w, SIGKILL);
	for (uint32_t i = 0; i < r->row->readers; i++)
		if (r->pid_r[i] > 0)
			kill(r->pid_r[i], SIGKILL);
}

/* fail_row - the first reason a row failed */
__attribute__((format(printf, 2, 3)))
static void fail_row(struct ipc_row *w, const char *fmt, ...)
{
	va_list ap;

	w->ok = false;
	if (w->err[0])
		return;
	va_start(ap, fmt);
	vsnprintf(w->err, sizeof(w->err), fmt, ap);
	va_end(ap);
}

/* stop_all - the writer stops; with @abort_too readers stop waiting as well */
static void stop_all(struct ipc_run *r, bool abort_too)
{
	uint64_t one = 1;

	__atomic_store_n(&r->board->stop, 1, __ATOMIC_SEQ_CST);
	if (abort_too)
		__atomic_store_n(&r->board->abort, 1, __ATOMIC_SEQ_CST);
	if (r->stop_fd >= 0 && write(r->stop_fd, &one, sizeof(one)) < 0) {
		/* the flag alone stops it within TP_IPCQ_WAIT_NS */
	}
}

/* reaped - a child has ended: its rusage, and a failure if it failed */
static void reaped(struct ipc_run *r, pid_t pid, int st, const struct rusage *ru)
{
	struct ipc_row *w = r->row;
	struct ipc_board *b = r->board;
	bool writer = pid == r->pid_w;
	int idx = -1;
	struct ipc_pstat *s = &b->w;

	for (uint32_t i = 0; i < w->readers && !writer; i++)
		if (pid == r->pid_r[i]) {
			idx = (int)i;
			s = &b->r[i];
		}
	if (writer) {
		w->ru_w = *ru;
		r->pid_w = 0;
	} else if (idx >= 0) {
		w->ru_r[idx] = *ru;
		r->pid_r[idx] = 0;
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return;
	if (s->failed && s->err[0])
		fail_row(w, "%s", s->err);
	else if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL &&
		 __atomic_load_n(&b->abort, __ATOMIC_RELAXED))
		fail_row(w, "%s stopped responding and was killed", writer ? "the writer" : "a reader");
	else if (WIFSIGNALED(st))
		fail_row(w, "%s died of signal %d", writer ? "the writer" : "a reader", WTERMSIG(st));
	else
		fail_row(w, "%s exited with status %d", writer ? "the writer" : "a reader",
			 WEXITSTATUS(st));
	stop_all(r, writer);
}

/* progress_sum - objects moved so far by everyone */
static uint64_t progress_sum(const struct ipc_run *r)
{
	uint64_t n = __atomic_load_n(&r->board->w.objects, __ATOMIC_RELAXED);

	for (uint32_t i = 0; i < r->row->readers; i++)
		n += __atomic_load_n(&r->board->r[i].objects, __ATOMIC_RELAXED);
	return n;
}

/* alive - children not reaped yet */
static int alive(const struct ipc_run *r)
{
	int n = r->pid_w > 0;

	for (uint32_t i = 0; i < r->row->readers; i++)
		n += r->pid_r[i] > 0;
	return n;
}

/* reap_some - reap whoever ended, waiting at most @ms */
static void reap_some(struct ipc_run *r, int ms)
{
	struct rusage ru;
	int st;
	pid_t pid;

	while ((pid = wait4(-1, &st, WNOHANG, &ru)) > 0)
		reaped(r, pid, st, &ru);
	if (alive(r))
		ipc_sleep_ns((uint64_t)ms * JTR_NS_PER_MS);
}

/* wait_ready - every child has set up, or one failed */
static bool wait_ready(struct ipc_run *r)
{
	struct ipc_row *w = r->row;
	int64_t end = jtr_mono_ns() + (int64_t)READY_WITHIN_NS;
	uint32_t want = w->readers + 1, got = 0;

	while (got < want) {
		struct pollfd pf = { .fd = r->ready[0], .events = POLLIN };
		char b[IPC_MAX_READERS + 1];
		ssize_t k;

		if (jtr_mono_ns() > end) {
			fail_row(w, "the processes did not get ready within 10 s");
			return false;
		}
		if (poll(&pf, 1, 100) > 0) {
			k = read(r->ready[0], b, sizeof(b));
			if (k > 0)
				got += (uint32_t)k;
		}
		reap_some(r, 0);
		if (!w->ok || jtr_stop)
			return false;
	}
	return true;
}

/* fork_child - start the writer (@idx -1) or reader @idx */
static pid_t fork_child(struct ipc_run *r, int idx)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		jtr_fatal(r->p, "cannot start a process: %s", strerror(errno));
	if (pid == 0)	/* _exit: the coordinator's atexit and stdio are not the child's */
		_exit(idx < 0 ? ipc_writer_main(r) : ipc_reader_main(r, idx));
	return pid;
}

/* setup - row @n's method: its shm segment or its loopback pairs, and the
 * eventfds; exit 2 for a queue the options make too large, 1 for what the
 * machine refused */
static void setup(struct ipc_run *r, int n)
{
	struct ipc_row *w = r->row;
	struct jtr_err e;
	int rc;

	switch (w->m) {
	case M_SHM_ADAPTIVE:
		r->efd_w = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		for (uint32_t i = 0; i < w->readers; i++)
			r->efd_r[i] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		/* fall through */
	case M_SHM_MUTEX:
	case M_SHM_LOCKLESS:
		rc = ipc_shm_setup(r, n, &e);
		break;
	default:
		rc = ipc_tcp_setup(r, &e);
		break;
	}
	if (rc == -ERANGE)
		jtr_usage_error(r->p, "%s", e.msg);
	if (rc < 0)
		jtr_fatal(r->p, "%s", e.msg);
	r->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (r->stop_fd < 0 || (w->m == M_SHM_ADAPTIVE && r->efd_w < 0))
		jtr_fatal(r->p, "eventfd: %s", strerror(errno));
}

/* progress - one line a second on a terminal */
static void progress(const struct ipc_run *r, int64_t t0)
{
	static int64_t last;
	const struct ipc_row *w = r->row;
	int64_t t = jtr_mono_ns();
	uint64_t done = __atomic_load_n(&r->board->w.objects, __ATOMIC_RELAXED);

	if (!r->p->progress || t - last < (int64_t)JTR_NS_PER_S)
		return;
	last = t;
	if (r->cfg->repeat > 1)
		jtr_progress_line(r->p, "%s, %u reader%s, %u-byte batches, repetition %u of %u: "
				  "%.0f %% in %.0f s", ipc_method_names[w->m], w->readers,
				  w->readers > 1 ? "s" : "", w->batch, w->rep + 1, r->cfg->repeat,
				  100.0 * (double)done / (double)r->cfg->objects,
				  (double)(t - t0) / 1e9);
	else
		jtr_progress_line(r->p, "%s, %u reader%s, %u-byte batches: %.0f %% in %.0f s",
				  ipc_method_names[w->m], w->readers, w->readers > 1 ? "s" : "",
				  w->batch, 100.0 * (double)done / (double)r->cfg->objects,
				  (double)(t - t0) / 1e9);
}

/* monitor - wait for the children; stop them on Ctrl-C, a death or a stall */
static void monitor(struct ipc_run *r)
{
	struct ipc_row *w = r->row;
	int64_t t0 = jtr_mono_ns(), last_move = t0, stopped_at = 0;
	uint64_t last_sum = 0;
	bool killed = false;

	while (alive(r)) {
		int64_t t = jtr_mono_ns();
		uint64_t sum = progress_sum(r);

		if (jtr_stop && !stopped_at) {
			w->partial = true;
			stop_all(r, false);
		}
		if (sum != last_sum) {
			last_sum = sum;
			last_move = t;
		} else if (!stopped_at && t - last_move > (int64_t)r->cfg->timeout_ns) {
			fail_row(w, "no object moved for %.0f s: stalled",
				 (double)r->cfg->timeout_ns / 1e9);
			stop_all(r, true);
		}
		if (r->board->stop && !stopped_at)
			stopped_at = t;
		if (stopped_at && t - stopped_at > (int64_t)STOP_GRACE_NS && !r->board->abort)
			stop_all(r, true);
		if (stopped_at && t - stopped_at > (int64_t)(STOP_GRACE_NS + JTR_NS_PER_S) && !killed) {
			kill_children(r);
			killed = true;
		}
		progress(r, t0);
		reap_some(r, 20);
	}
	if (r->p->progress)
		fputs("\r\033[K", stderr);
}

/* judge - the row's elapsed time and verdict from what the processes counted */
static void judge(struct ipc_row *w)
{
	int64_t end = w->w.start_ns;

	for (uint32_t i = 0; i < w->readers; i++) {
		struct ipc_pstat *s = &w->r[i];

		if (s->end_ns > end)
			end = s->end_ns;
		if (s->next < w->w.issued)
			s->lost += w->w.issued - s->next;	/* the tail never came */
		if (s->lost || s->dups || s->corrupt || s->objects != w->w.objects)
			fail_row(w, "integrity check failed: reader %u got %llu of %llu objects, "
				 "%llu lost, %llu duplicated or out of order, %llu corrupted (first "
				 "at object %llu)", i, (unsigned long long)s->objects,
				 (unsigned long long)w->w.objects, (unsigned long long)s->lost,
				 (unsigned long long)s->dups, (unsigned long long)s->corrupt,
				 (unsigned long long)s->first_bad);
	}
	w->elapsed_s = w->w.start_ns && end > w->w.start_ns ? (double)(end - w->w.start_ns) / 1e9 : 0;
}

/* ipc_run_row - one method, reader count and batch size (row @n) */
void ipc_run_row(struct jtr_probe *p, const struct ipc_cfg *c, struct ipc_board *b,
		 struct ipc_row *w, int n)
{
	struct ipc_run run, *r = &run;

	run_reset(r, p, c, b, w);
	in_progress = r;
	w->ok = true;
	w->ran = true;
	memset(b, 0, sizeof(*b));
	if (pipe2(r->ready, O_CLOEXEC) < 0 || pipe2(r->go, O_CLOEXEC) < 0)
		jtr_fatal(p, "pipe: %s", strerror(errno));
	setup(r, n);

	/* 1. the processes: each sets up, says ready and waits for the go */
	r->pid_w = fork_child(r, -1);
	for (uint32_t i = 0; i < w->readers; i++)
		r->pid_r[i] = fork_child(r, (int)i);
	close_fd(&r->ready[1]);
	close_fd(&r->go[0]);
	for (uint32_t i = 0; i < w->readers; i++) {
		close_fd(&r->wfd[i]);	/* the children hold them now: end of stream works */
		close_fd(&r->rfd[i]);
	}

	/* 2. everyone attached: the name goes, nothing can be left in /dev/shm */
	if (wait_ready(r)) {
		ipc_shm_unlink(r);
		close_fd(&r->go[1]);
		monitor(r);
	} else {
		if (jtr_stop)
			w->partial = true;
		stop_all(r, true);
		kill_children(r);
		while (alive(r))
			reap_some(r, 10);
	}
	w->w = b->w;
	memcpy(w->r, b->r, sizeof(w->r));
	if (w->w.failed && !w->err[0])
		fail_row(w, "%s", w->w.err);
	judge(w);
	run_release(r);
	in_progress = NULL;
}
