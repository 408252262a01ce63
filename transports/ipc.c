/* ipc.c - jtr ipc: the IPC comparison. Moves N objects of SIZE bytes, in
 * batches of BATCH bytes, from one writer process to one or more reader
 * processes (every reader gets every object) through five methods:
 *
 *   shm-mutex     a queue of batch slots in a shared-memory segment, a
 *                 process-shared mutex and condition variables (tp_ipcq.h)
 *   shm-adaptive  the same queue with PTHREAD_MUTEX_ADAPTIVE_NP, eventfd
 *                 wake-ups waited on in epoll_wait and a low-water mark
 *   shm-lockless  the single-producer ring of jtr pub/sub (tp_ring.h):
 *                 atomics only; readers spin briefly, then sleep on a futex;
 *                 a writer facing a full ring yields the CPU
 *   tcp           loopback TCP, blocking send/recv
 *   tcp-epoll     loopback TCP, non-blocking sockets waited on in epoll_wait,
 *                 with an eventfd in the writer's set that says "stop"
 *
 * Every method does the same user-space work: the writer builds each batch
 * in a private buffer (a sequence number and a check word in every object)
 * and hands it over with one copy (memcpy into the slot, or send); each
 * reader takes it with one copy (memcpy out of the slot, or recv) and checks
 * every object. A run fails if any object is lost, duplicated, reordered or
 * corrupted. Counted per run: objects, bytes, elapsed time (the writer's
 * first batch to the last reader's last check), the times a reader found
 * the queue empty and waited, the times the writer found it full and
 * waited, and the processes' CPU time and context switches.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>

#include "jtr_cli.h"
#include "jtr_probe.h"
#include "tp_ipcq.h"
#include "tp_ring.h"

#define IPC_FORMAT "jtr-ipc/1"
#define MAX_READERS 8
#define MAX_BATCHES 16
#define MAX_FANOUTS 8
#define QUEUE_MAX_BYTES (64u << 20)	/* a queue is cut to fewer slots above this */
#define SPIN_LOOPS 200			/* shm-lockless: polls before a reader sleeps */
#define STOP_GRACE_NS (5 * JTR_NS_PER_S)

enum method { M_SHM_MUTEX, M_SHM_ADAPTIVE, M_SHM_LOCKLESS, M_TCP, M_TCP_EPOLL, M_COUNT };

static const char *const method_names[M_COUNT] = {
	"shm-mutex", "shm-adaptive", "shm-lockless", "tcp", "tcp-epoll",
};

static const char usage_text[] =
"Usage: jtr ipc [OPTIONS]\n"
"\n"
"The IPC comparison: move N objects of SIZE bytes in batches of BATCH bytes from\n"
"one writer process to 1 or more reader processes (each reader gets every object)\n"
"through a shared-memory queue (mutex, adaptive mutex with eventfd wake-ups and a\n"
"low-water mark, lockless ring) and loopback TCP (blocking, epoll). Every object\n"
"is checked; a run fails if one is lost, duplicated or corrupted. Prints one row\n"
"per method, reader count and batch size: elapsed time, rate, and how often a\n"
"reader found the queue empty and the writer found it full.\n"
"\n"
"Options:\n"
"  -n, --objects N          objects sent to every reader (default 10M; K, M, G\n"
"                           are x1000: 1G is the seed's 1,000,000,000)\n"
"  -s, --size BYTES         object size, >= 16 (default 50)\n"
"  -B, --batch LIST         batch sizes in bytes, each one row (default 100K,\n"
"                           i.e. 100000 bytes = 2000 objects of 50 bytes)\n"
"      --sweep              batch sizes 1K,5K,10K,20K,50K,100K,1M\n"
"  -m, --methods LIST       shm-mutex, shm-adaptive, shm-lockless, tcp, tcp-epoll,\n"
"                           or all (the default)\n"
"  -r, --readers LIST       reader counts, each one row (default 1,3: point to\n"
"                           point and one to three; at most 8)\n"
"  -c, --cpus LIST          pin the writer to the first CPU, readers to the next\n"
"                           ones, round robin (default: no pinning)\n"
"  -Q, --queue SLOTS        shm queue length in batches, a power of two (default\n"
"                           128; fewer when SLOTS x BATCH would pass 64 MiB)\n"
"      --low-water N        shm-mutex, shm-adaptive: a writer that found the queue\n"
"                           full is woken when it has drained to N batches\n"
"                           (default SLOTS/2)\n"
"      --nagle              tcp: leave Nagle's algorithm on (default TCP_NODELAY,\n"
"                           so each batch is handed over when written)\n"
"      --timeout DUR        a run with no progress this long fails (default 10s)\n"
"  -o, --output DIR         results folder (default results/DATE-HOST-ipc)\n"
"  -q, --quiet              no table on stdout\n"
"  -h, --help               this text\n"
"\n"
"Testing:\n"
"      --pace DUR           the writer sleeps DUR after each batch (readers wait)\n"
"      --reader-pace DUR    each reader sleeps DUR after each batch (the writer waits)\n"
"      --drop-every K       skip every K-th sequence number (the check must fail)\n"
"      --corrupt-every K    spoil the check word of every K-th object (ditto)\n"
"\n"
"Writes DIR/summary.txt (the table) and DIR/result.json (format jtr-ipc/1).\n"
"Ctrl-C stops the run in progress, keeps what it moved (marked partial) and\n"
"skips the rest. Exit status: 0; 1 if a check failed or a run broke down; 2 for\n"
"bad options.\n"
"\n"
"Examples:\n"
"  jtr ipc                               10M objects, every method, 1 and 3 readers\n"
"  jtr ipc -n 1G -c 0,1                  the seed's 1e9 objects, pinned\n"
"  jtr ipc --sweep -m shm-mutex,tcp -r 3 batch sizes 1K..1M, one to three\n";

enum {
	OPT_SWEEP = 500, OPT_LOW_WATER, OPT_NAGLE, OPT_TIMEOUT, OPT_PACE, OPT_READER_PACE,
	OPT_DROP_EVERY, OPT_CORRUPT_EVERY,
};

static const struct option long_opts[] = {
	{ "objects", required_argument, NULL, 'n' },
	{ "size", required_argument, NULL, 's' },
	{ "batch", required_argument, NULL, 'B' },
	{ "sweep", no_argument, NULL, OPT_SWEEP },
	{ "methods", required_argument, NULL, 'm' },
	{ "readers", required_argument, NULL, 'r' },
	{ "cpus", required_argument, NULL, 'c' },
	{ "queue", required_argument, NULL, 'Q' },
	{ "low-water", required_argument, NULL, OPT_LOW_WATER },
	{ "nagle", no_argument, NULL, OPT_NAGLE },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "pace", required_argument, NULL, OPT_PACE },
	{ "reader-pace", required_argument, NULL, OPT_READER_PACE },
	{ "drop-every", required_argument, NULL, OPT_DROP_EVERY },
	{ "corrupt-every", required_argument, NULL, OPT_CORRUPT_EVERY },
	JTR_PROBE_LONG_OPTS,
	{ NULL, 0, NULL, 0 },
};

/* what one process counted, on a line of its own in the shared board */
struct pstat {
	uint64_t objects;	/* writer: sent; reader: received and checked */
	uint64_t batches;	/* writer: batches sent; reader: batches or reads taken */
	uint64_t waits;		/* reader: found the queue empty; writer: found it full */
	uint64_t sleeps;	/* gave up the CPU to wait (cond, epoll, futex, yield) */
	uint64_t issued;	/* writer: sequence numbers used (sent + dropped) */
	uint64_t next;		/* reader: the next sequence number expected */
	uint64_t lost, dups, corrupt;
	uint64_t first_bad;	/* reader: where the first fault was seen */
	int64_t start_ns, end_ns;
	int32_t failed;
	char err[200];
} __attribute__((aligned(128)));

/* shared by the coordinator and its children (an anonymous shared mapping) */
struct board {
	uint32_t stop;		/* the writer stops after this batch */
	uint32_t abort;		/* readers stop waiting too: the writer is gone */
	struct pstat w;
	struct pstat r[MAX_READERS];
};

struct cfg {
	uint64_t objects;
	uint32_t size;
	uint32_t batches[MAX_BATCHES];
	int nbatches;
	bool methods[M_COUNT];
	uint32_t fanouts[MAX_FANOUTS];
	int nfanouts;
	int cpus[CPU_SETSIZE];
	int ncpus;
	uint32_t slots;
	uint32_t low_water;	/* 0: slots / 2 */
	bool low_water_given;
	bool nagle;
	uint64_t timeout_ns, pace_ns, reader_pace_ns;
	uint64_t drop_every, corrupt_every;
};

/* one row: a method, a reader count and a batch size */
struct row {
	enum method m;
	uint32_t readers;
	uint32_t batch;		/* bytes asked for */
	uint32_t opb;		/* objects per batch */
	uint32_t slots, low_water;
	int sndbuf, rcvbuf;	/* tcp: socket buffers as the kernel set them */
	bool ran, partial, ok;
	char err[256];
	struct pstat w, r[MAX_READERS];
	struct rusage ru_w, ru_r[MAX_READERS];
	double elapsed_s;
};

/* the resources of the run in progress */
struct run {
	struct row *row;
	char shm_name[64];
	void *shm;
	size_t shm_size;
	int efd_w, efd_r[MAX_READERS], stop_fd;
	int wfd[MAX_READERS], rfd[MAX_READERS];
	int ready[2], go[2];
	pid_t pid_w, pid_r[MAX_READERS];
	pid_t coordinator;
};

static const struct cfg *G;
static struct board *B;
static struct run R;

/* check_word - what an object with sequence number @seq carries at its end */
static inline uint64_t check_word(uint64_t seq)
{
	return (seq + 1) * 0x9e3779b97f4a7c15ULL ^ 0x6a74722d6970632dULL;
}

/* fill_batch - @n objects from sequence number @seq into @buf; returns the
 * next number (drop-every uses numbers up without sending them) */
static uint64_t fill_batch(unsigned char *buf, uint32_t n, uint32_t size, uint64_t seq)
{
	for (uint32_t i = 0; i < n; i++, seq++, buf += size) {
		uint64_t chk;

		if (__builtin_expect(G->drop_every && (seq + 1) % G->drop_every == 0, 0))
			seq++;
		chk = check_word(seq);
		if (__builtin_expect(G->corrupt_every && (seq + 1) % G->corrupt_every == 0, 0))
			chk ^= 0x100;
		memcpy(buf, &seq, sizeof(seq));
		memcpy(buf + size - sizeof(chk), &chk, sizeof(chk));
	}
	return seq;
}

/* a reader's running check */
struct check {
	uint64_t next, lost, dups, corrupt, first_bad;
};

/* note_bad - remember where the first fault was */
static inline void note_bad(struct check *k, uint64_t at)
{
	if (!k->lost && !k->dups && !k->corrupt)
		k->first_bad = at;
}

/* check_objects - @n objects at @p: sequence numbers in order, check words right */
static void check_objects(struct check *k, const unsigned char *p, uint64_t n, uint32_t size)
{
	for (uint64_t i = 0; i < n; i++, p += size) {
		uint64_t seq, chk;

		memcpy(&seq, p, sizeof(seq));
		memcpy(&chk, p + size - sizeof(chk), sizeof(chk));
		if (__builtin_expect(chk != check_word(seq), 0)) {
			note_bad(k, k->next);
			k->corrupt++;
			k->next++;
		} else if (__builtin_expect(seq != k->next, 0)) {
			note_bad(k, k->next);
			if (seq > k->next)
				k->lost += seq - k->next;
			else
				k->dups++;
			k->next = seq + 1;
		} else {
			k->next++;
		}
	}
}

/* now_ns - CLOCK_MONOTONIC (one clock for every process) */
static inline int64_t now_ns(void)
{
	return jtr_mono_ns();
}

/* sleep_ns - nanosleep */
static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / JTR_NS_PER_S), (long)(ns % JTR_NS_PER_S) };

	nanosleep(&ts, NULL);
}

/* ---- children ---- */

/* child_fail - say why in the board and leave */
__attribute__((noreturn, format(printf, 2, 3)))
static void child_fail(struct pstat *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->err, sizeof(s->err), fmt, ap);
	va_end(ap);
	__atomic_store_n(&s->failed, 1, __ATOMIC_RELEASE);
	_exit(1);
}

/* child_start - die with the coordinator, leave Ctrl-C to it, keep only
 * this process's descriptors, pin */
static void child_start(struct pstat *s, int idx)
{
	const struct row *w = R.row;
	int cpu;

	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != R.coordinator)
		_exit(1);
	close(R.ready[0]);
	close(R.go[1]);
	for (uint32_t i = 0; i < w->readers; i++) {
		if (R.rfd[i] >= 0 && (int)i != idx)
			close(R.rfd[i]);
		if (R.wfd[i] >= 0 && idx >= 0)
			close(R.wfd[i]);
	}
	if (G->ncpus) {
		cpu = G->cpus[(idx + 1) % G->ncpus];
		if (jtr_pin_self(cpu) < 0)
			child_fail(s, "cannot pin to CPU %d: %s", cpu, strerror(errno));
	}
}

/* child_ready - tell the coordinator, then wait for the go (its end of the
 * go pipe closing) */
static void child_ready(struct pstat *s)
{
	char b = 'R';

	if (write(R.ready[1], &b, 1) != 1)
		child_fail(s, "cannot report ready: %s", strerror(errno));
	close(R.ready[1]);
	while (read(R.go[0], &b, 1) < 0 && errno == EINTR)
		;
	close(R.go[0]);
}

/* attach - map the run's segment by name, like a separate program would */
static void *attach(struct pstat *s)
{
	int fd = shm_open(R.shm_name, O_RDWR, 0);
	void *m;

	if (fd < 0)
		child_fail(s, "cannot open /dev/shm%s: %s", R.shm_name, strerror(errno));
	m = mmap(NULL, R.shm_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		child_fail(s, "cannot map /dev/shm%s: %s", R.shm_name, strerror(errno));
	return m;
}

/* the writer's and readers' transports */
struct xport {
	struct tp_ipcq_end qe;
	struct tp_ring_wr wr;
	struct tp_ring_rd rd;
	int epfd;
	int fd;			/* a reader's socket */
	int idx;
	struct pstat *s;
};

/* send_all_blocking - tcp: the whole batch to one reader; a send that would
 * block is counted as a full queue */
static int send_all_blocking(struct xport *x, int fd, const unsigned char *p, size_t len)
{
	ssize_t k = send(fd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL);

	if (k == (ssize_t)len)
		return 0;
	if (k < 0 && errno != EAGAIN)
		return -errno;
	if (k < 0)
		k = 0;
	x->s->waits++;
	while ((size_t)k < len) {
		ssize_t m = send(fd, p + k, len - (size_t)k, MSG_NOSIGNAL);

		if (m < 0 && errno == EINTR)
			continue;
		if (m < 0)
			return -errno;
		x->s->sleeps++;
		k += m;
	}
	return 0;
}

/* send_all_epoll - tcp-epoll: the batch to every reader, non-blocking, in
 * whatever order their sockets take it; epoll_wait when none does */
static int send_all_epoll(struct xport *x, const unsigned char *p, size_t len)
{
	size_t left[MAX_READERS];
	bool full[MAX_READERS] = { false };
	uint32_t n = R.row->readers, pending = n;

	for (uint32_t i = 0; i < n; i++)
		left[i] = len;
	while (pending) {
		bool moved = false;

		for (uint32_t i = 0; i < n; i++) {
			ssize_t k;

			if (!left[i])
				continue;
			k = send(R.wfd[i], p + len - left[i], left[i], MSG_NOSIGNAL);
			if (k > 0) {
				left[i] -= (size_t)k;
				pending -= !left[i];
				moved = true;
			} else if (k < 0 && errno != EAGAIN && errno != EINTR) {
				return -errno;
			}
			if (left[i] && !full[i]) {
				full[i] = true;
				x->s->waits++;
			}
		}
		if (pending && !moved) {
			struct epoll_event ev[MAX_READERS + 1];

			if (__atomic_load_n(&B->stop, __ATOMIC_RELAXED) &&
			    __atomic_load_n(&B->abort, __ATOMIC_RELAXED))
				return -ECANCELED;
			epoll_wait(x->epfd, ev, MAX_READERS + 1, (int)(TP_IPCQ_WAIT_NS / 1000000));
			x->s->sleeps++;
		}
	}
	return 0;
}

/* sync_counts - the queue's wait counts into the board (the tp_ipcq
 * methods count in their end of the queue) */
static inline void sync_counts(struct xport *x)
{
	if (R.row->m == M_SHM_MUTEX || R.row->m == M_SHM_ADAPTIVE) {
		x->s->waits = x->qe.waits;
		x->s->sleeps = x->qe.sleeps;
	}
}

/* send_batch - hand one batch over */
static int send_batch(struct xport *x, const unsigned char *buf, size_t len)
{
	unsigned char *slot;
	bool counted = false;
	int rc;

	switch (R.row->m) {
	case M_SHM_MUTEX:
	case M_SHM_ADAPTIVE:
		rc = tp_ipcq_reserve(&x->qe, &slot);
		if (rc < 0)
			return rc;
		memcpy(slot, buf, len);
		tp_ipcq_publish(&x->qe, len);
		return 0;
	case M_SHM_LOCKLESS:
		while ((rc = tp_ring_write(&x->wr, buf, (uint32_t)len)) == -EAGAIN) {
			if (!counted) {
				x->s->waits++;
				counted = true;
			}
			if (__atomic_load_n(&B->stop, __ATOMIC_RELAXED))
				return -ECANCELED;
			sched_yield();
			x->s->sleeps++;
		}
		return rc;
	case M_TCP:
		for (uint32_t i = 0; i < R.row->readers; i++)
			if ((rc = send_all_blocking(x, R.wfd[i], buf, len)) < 0)
				return rc;
		return 0;
	case M_TCP_EPOLL:
		return send_all_epoll(x, buf, len);
	default:
		return -EINVAL;
	}
}

/* writer_open - the writer's end of the run's transport */
static void writer_open(struct xport *x)
{
	const struct row *w = R.row;
	struct epoll_event ev = { .events = EPOLLOUT | EPOLLET };
	int rc;

	switch (w->m) {
	case M_SHM_MUTEX:
	case M_SHM_ADAPTIVE:
		rc = tp_ipcq_end_open(&x->qe, attach(x->s), -1, R.efd_w, -1, R.efd_r, R.stop_fd,
				      &B->stop);
		if (rc < 0)
			child_fail(x->s, "cannot open the queue: %s", strerror(-rc));
		break;
	case M_SHM_LOCKLESS:
		if ((rc = tp_ring_writer_open(&x->wr, attach(x->s), getpid())) < 0)
			child_fail(x->s, "cannot open the ring: %s", strerror(-rc));
		break;
	case M_TCP:
		break;
	case M_TCP_EPOLL:
		if ((x->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
			child_fail(x->s, "epoll_create1: %s", strerror(errno));
		for (uint32_t i = 0; i < w->readers; i++) {
			ev.data.u32 = i;
			if (epoll_ctl(x->epfd, EPOLL_CTL_ADD, R.wfd[i], &ev) < 0)
				child_fail(x->s, "epoll_ctl: %s", strerror(errno));
		}
		ev.events = EPOLLIN;
		ev.data.u32 = MAX_READERS;
		if (epoll_ctl(x->epfd, EPOLL_CTL_ADD, R.stop_fd, &ev) < 0)
			child_fail(x->s, "epoll_ctl: %s", strerror(errno));
		break;
	default:
		break;
	}
}

/* writer_close - end of stream */
static void writer_close(struct xport *x)
{
	switch (R.row->m) {
	case M_SHM_MUTEX:
	case M_SHM_ADAPTIVE:
		tp_ipcq_close(&x->qe);
		break;
	case M_SHM_LOCKLESS:
		tp_ring_writer_close(&x->wr);
		break;
	default:
		for (uint32_t i = 0; i < R.row->readers; i++)
			close(R.wfd[i]);
		break;
	}
}

/* writer_main - build and send every batch, then end the stream */
static void writer_main(void)
{
	const struct row *w = R.row;
	struct pstat *s = &B->w;
	struct xport x = { .s = s, .idx = -1, .epfd = -1, .fd = -1 };
	size_t cap = (size_t)w->opb * G->size;
	unsigned char *buf;
	uint64_t seq = 0, sent = 0;
	int rc = 0;

	child_start(s, -1);
	buf = malloc(cap);
	if (!buf)
		child_fail(s, "out of memory");
	for (size_t i = 0; i < cap; i++)
		buf[i] = (unsigned char)i;
	writer_open(&x);
	child_ready(s);

	s->start_ns = now_ns();
	while (sent < G->objects && !__atomic_load_n(&B->stop, __ATOMIC_RELAXED)) {
		uint32_t n = G->objects - sent < w->opb ? (uint32_t)(G->objects - sent) : w->opb;

		seq = fill_batch(buf, n, G->size, seq);
		rc = send_batch(&x, buf, (size_t)n * G->size);
		if (rc < 0)
			break;
		sent += n;
		sync_counts(&x);
		s->issued = seq;
		s->batches++;
		__atomic_store_n(&s->objects, sent, __ATOMIC_RELAXED);
		if (G->pace_ns)
			sleep_ns(G->pace_ns);
	}
	sync_counts(&x);
	writer_close(&x);
	s->end_ns = now_ns();
	if (rc < 0 && rc != -ECANCELED)
		child_fail(s, "writer: sending failed after %llu objects: %s",
			   (unsigned long long)sent, strerror(-rc));
	_exit(0);
}

/* recv_some - tcp: up to @cap bytes; a read that would block is counted as
 * an empty queue. 0 at end of stream. */
static ssize_t recv_some(struct xport *x, unsigned char *p, size_t cap)
{
	bool counted = false;
	ssize_t k;

	for (;;) {
		k = recv(x->fd, p, cap, MSG_DONTWAIT);
		if (k >= 0)
			return k;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			return -errno;
		if (!counted) {
			x->s->waits++;
			counted = true;
		}
		x->s->sleeps++;
		if (R.row->m == M_TCP) {
			do
				k = recv(x->fd, p, cap, 0);
			while (k < 0 && errno == EINTR);
			return k < 0 ? -errno : k;
		} else {
			struct epoll_event ev;

			if (__atomic_load_n(&B->abort, __ATOMIC_RELAXED))
				return -ECANCELED;
			epoll_wait(x->epfd, &ev, 1, (int)(TP_IPCQ_WAIT_NS / 1000000));
		}
	}
}

/* recv_ring - shm-lockless: the next batch; spin a little, then sleep on the
 * ring's futex. 0 at end of stream. */
static ssize_t recv_ring(struct xport *x, unsigned char *p, size_t cap)
{
	bool counted = false;
	ssize_t k;

	for (;;) {
		k = tp_ring_read(&x->rd, p, cap);
		if (k >= 0)
			return k;
		if (k == -EPIPE)
			return 0;
		if (k != -EAGAIN)
			return k;
		if (!counted) {
			x->s->waits++;
			counted = true;
		}
		for (int i = 0; i < SPIN_LOOPS && !tp_ring_available(&x->rd); i++)
			__builtin_ia32_pause();
		if (tp_ring_available(&x->rd))
			continue;
		if (__atomic_load_n(&B->abort, __ATOMIC_RELAXED))
			return -ECANCELED;
		tp_ring_wait(&x->rd, TP_IPCQ_WAIT_NS);
		x->s->sleeps++;
	}
}

/* recv_batch - the next piece of the stream into @p (@cap bytes free) */
static ssize_t recv_batch(struct xport *x, unsigned char *p, size_t cap)
{
	const unsigned char *slot;
	uint64_t len;
	int rc;

	switch (R.row->m) {
	case M_SHM_MUTEX:
	case M_SHM_ADAPTIVE:
		rc = tp_ipcq_peek(&x->qe, &slot, &len);
		if (rc == -EPIPE)
			return 0;
		if (rc < 0)
			return rc;
		if (len > cap)
			return -EMSGSIZE;
		memcpy(p, slot, len);
		tp_ipcq_release(&x->qe);
		return (ssize_t)len;
	case M_SHM_LOCKLESS:
		return recv_ring(x, p, cap);
	default:
		return recv_some(x, p, cap);
	}
}

/* reader_open - the reader's end of the run's transport */
static void reader_open(struct xport *x)
{
	const struct row *w = R.row;
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET };
	int rc;

	switch (w->m) {
	case M_SHM_MUTEX:
	case M_SHM_ADAPTIVE:
		rc = tp_ipcq_end_open(&x->qe, attach(x->s), x->idx, R.efd_r[x->idx], R.efd_w, NULL,
				      -1, &B->abort);
		if (rc < 0)
			child_fail(x->s, "cannot open the queue: %s", strerror(-rc));
		break;
	case M_SHM_LOCKLESS:
		if ((rc = tp_ring_reader_join(&x->rd, attach(x->s), getpid())) < 0)
			child_fail(x->s, "cannot join the ring: %s", strerror(-rc));
		break;
	case M_TCP_EPOLL:
		x->fd = R.rfd[x->idx];
		if ((x->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
		    epoll_ctl(x->epfd, EPOLL_CTL_ADD, x->fd, &ev) < 0)
			child_fail(x->s, "epoll: %s", strerror(errno));
		break;
	default:
		x->fd = R.rfd[x->idx];
		break;
	}
}

/* reader_main - take and check every object until end of stream */
static void reader_main(int idx)
{
	const struct row *w = R.row;
	struct pstat *s = &B->r[idx];
	struct xport x = { .s = s, .idx = idx, .epfd = -1, .fd = -1 };
	size_t cap = (size_t)w->opb * G->size + G->size;
	struct check k = { 0 };
	unsigned char *buf;
	size_t have = 0;
	uint64_t objects = 0;

	child_start(s, idx);
	buf = calloc(1, cap);
	if (!buf)
		child_fail(s, "out of memory");
	reader_open(&x);
	child_ready(s);

	s->start_ns = now_ns();
	for (;;) {
		ssize_t got = recv_batch(&x, buf + have, cap - have);
		uint64_t n;

		sync_counts(&x);
		if (got == 0)
			break;
		if (got < 0)
			child_fail(s, "reader %d: receiving failed after %llu objects: %s", idx,
				   (unsigned long long)objects, strerror((int)-got));
		have += (size_t)got;
		n = have / G->size;
		check_objects(&k, buf, n, G->size);
		objects += n;
		if (have % G->size)
			memmove(buf, buf + n * G->size, have % G->size);
		have %= G->size;
		s->batches++;
		s->next = k.next;
		s->lost = k.lost;
		s->dups = k.dups;
		s->corrupt = k.corrupt;
		s->first_bad = k.first_bad;
		__atomic_store_n(&s->objects, objects, __ATOMIC_RELAXED);
		s->end_ns = now_ns();
		if (G->reader_pace_ns)
			sleep_ns(G->reader_pace_ns);
	}
	if (have) {
		note_bad(&k, k.next);
		k.corrupt++;	/* a piece of an object at end of stream */
		s->corrupt = k.corrupt;
		s->first_bad = k.first_bad;
	}
	_exit(0);
}

/* ---- the coordinator ---- */

static struct jtr_probe *P;

/* cleanup_shm - no segment is left behind, whatever way the run ends */
static void cleanup_shm(void)
{
	if (R.shm_name[0] && getpid() == R.coordinator)
		shm_unlink(R.shm_name);
	R.shm_name[0] = 0;
}

/* queue_slots - the queue length for @batch: --queue, halved until it fits
 * QUEUE_MAX_BYTES (at least 2) */
static uint32_t queue_slots(uint32_t batch)
{
	uint32_t s = G->slots;

	while (s > 2 && (uint64_t)s * batch > QUEUE_MAX_BYTES)
		s /= 2;
	return s;
}

/* setup_shm - create, size, pre-touch and lay out the segment */
static void setup_shm(struct row *w, int n)
{
	uint32_t bytes = w->opb * G->size;
	int fd, rc;

	snprintf(R.shm_name, sizeof(R.shm_name), "/jtr-ipc-%d-%d", (int)getpid(), n);
	R.shm_size = w->m == M_SHM_LOCKLESS ? tp_ring_size(w->slots, bytes, w->readers)
					    : tp_ipcq_size(w->slots, bytes, w->readers);
	if (!R.shm_size)
		jtr_usage_error(P, "a queue of %u slots of %u bytes is out of range; use a smaller "
				"--queue or --batch", w->slots, bytes);
	fd = shm_open(R.shm_name, O_CREAT | O_EXCL | O_RDWR, 0600);
	if (fd < 0) {
		R.shm_name[0] = 0;
		jtr_fatal(P, "cannot create a shm segment in /dev/shm: %s", strerror(errno));
	}
	if (ftruncate(fd, (off_t)R.shm_size) < 0)
		jtr_fatal(P, "cannot size /dev/shm%s to %zu bytes: %s", R.shm_name, R.shm_size,
			  strerror(errno));
	R.shm = mmap(NULL, R.shm_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (R.shm == MAP_FAILED) {
		R.shm = NULL;
		jtr_fatal(P, "cannot map /dev/shm%s: %s", R.shm_name, strerror(errno));
	}
	memset(R.shm, 0, R.shm_size);	/* allocates the pages now, not during the run */
	if (w->m == M_SHM_LOCKLESS)
		rc = tp_ring_init(R.shm, R.shm_size, w->slots, bytes, w->readers, getpid());
	else
		rc = tp_ipcq_init(R.shm, R.shm_size,
				  w->m == M_SHM_MUTEX ? TP_IPCQ_MUTEX : TP_IPCQ_ADAPTIVE, w->slots,
				  bytes, w->readers, w->low_water);
	if (rc < 0)
		jtr_fatal(P, "cannot set up the queue: %s", strerror(-rc));
}

/* setup_tcp - a connected loopback pair per reader (an ephemeral port) */
static void setup_tcp(struct row *w)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof(a);
	int one = 1, ls;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(ls, MAX_READERS) < 0 ||
	    getsockname(ls, (struct sockaddr *)&a, &al) < 0)
		jtr_fatal(P, "cannot listen on 127.0.0.1: %s", strerror(errno));
	for (uint32_t i = 0; i < w->readers; i++) {
		int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), s;

		if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)) < 0 ||
		    (s = accept4(ls, NULL, NULL, SOCK_CLOEXEC)) < 0)
			jtr_fatal(P, "cannot connect on 127.0.0.1:%d: %s", ntohs(a.sin_port),
				  strerror(errno));
		if (!G->nagle) {
			setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		}
		if (w->m == M_TCP_EPOLL) {
			fcntl(c, F_SETFL, fcntl(c, F_GETFL) | O_NONBLOCK);
			fcntl(s, F_SETFL, fcntl(s, F_GETFL) | O_NONBLOCK);
		}
		R.wfd[i] = s;
		R.rfd[i] = c;
	}
	al = sizeof(w->sndbuf);
	getsockopt(R.wfd[0], SOL_SOCKET, SO_SNDBUF, &w->sndbuf, &al);
	al = sizeof(w->rcvbuf);
	getsockopt(R.rfd[0], SOL_SOCKET, SO_RCVBUF, &w->rcvbuf, &al);
	close(ls);
}

/* close_fd - close and forget */
static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* run_reset - no resources */
static void run_reset(struct row *w)
{
	memset(&R, 0, sizeof(R));
	R.row = w;
	R.coordinator = getpid();
	R.efd_w = R.stop_fd = -1;
	R.ready[0] = R.ready[1] = R.go[0] = R.go[1] = -1;
	for (int i = 0; i < MAX_READERS; i++)
		R.efd_r[i] = R.wfd[i] = R.rfd[i] = -1;
}

/* run_release - everything the run opened */
static void run_release(void)
{
	cleanup_shm();
	if (R.shm) {
		/* no tp_ipcq_destroy: a killed process may have left a condition
		 * variable with a waiter, and destroying it would wait for ever;
		 * the memory goes with the segment */
		munmap(R.shm, R.shm_size);
		R.shm = NULL;
	}
	close_fd(&R.efd_w);
	close_fd(&R.stop_fd);
	for (int i = 0; i < 2; i++) {
		close_fd(&R.ready[i]);
		close_fd(&R.go[i]);
	}
	for (int i = 0; i < MAX_READERS; i++) {
		close_fd(&R.efd_r[i]);
		close_fd(&R.wfd[i]);
		close_fd(&R.rfd[i]);
	}
}

/* kill_children - SIGKILL whoever is left */
static void kill_children(void)
{
	if (R.pid_w > 0)
		kill(R.pid_w, SIGKILL);
	for (uint32_t i = 0; i < R.row->readers; i++)
		if (R.pid_r[i] > 0)
			kill(R.pid_r[i], SIGKILL);
}

/* fail_row - the first reason a row failed */
__attribute__((format(printf, 2, 3)))
static void fail_row(struct row *w, const char *fmt, ...)
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
static void stop_all(bool abort_too)
{
	uint64_t one = 1;

	__atomic_store_n(&B->stop, 1, __ATOMIC_SEQ_CST);
	if (abort_too)
		__atomic_store_n(&B->abort, 1, __ATOMIC_SEQ_CST);
	if (R.stop_fd >= 0 && write(R.stop_fd, &one, sizeof(one)) < 0) {
		/* the flag alone stops it within TP_IPCQ_WAIT_NS */
	}
}

/* reaped - a child has ended: its rusage, and a failure if it failed */
static void reaped(struct row *w, pid_t pid, int st, const struct rusage *ru)
{
	bool writer = pid == R.pid_w;
	int idx = -1;
	struct pstat *s = &B->w;

	for (uint32_t i = 0; i < w->readers && !writer; i++)
		if (pid == R.pid_r[i]) {
			idx = (int)i;
			s = &B->r[i];
		}
	if (writer) {
		w->ru_w = *ru;
		R.pid_w = 0;
	} else if (idx >= 0) {
		w->ru_r[idx] = *ru;
		R.pid_r[idx] = 0;
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return;
	if (s->failed && s->err[0])
		fail_row(w, "%s", s->err);
	else if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL && __atomic_load_n(&B->abort, __ATOMIC_RELAXED))
		fail_row(w, "%s stopped responding and was killed", writer ? "the writer" : "a reader");
	else if (WIFSIGNALED(st))
		fail_row(w, "%s died of signal %d", writer ? "the writer" : "a reader", WTERMSIG(st));
	else
		fail_row(w, "%s exited with status %d", writer ? "the writer" : "a reader",
			 WEXITSTATUS(st));
	stop_all(writer);
}

/* progress_sum - objects moved so far by everyone */
static uint64_t progress_sum(const struct row *w)
{
	uint64_t n = __atomic_load_n(&B->w.objects, __ATOMIC_RELAXED);

	for (uint32_t i = 0; i < w->readers; i++)
		n += __atomic_load_n(&B->r[i].objects, __ATOMIC_RELAXED);
	return n;
}

/* alive - children not reaped yet */
static int alive(const struct row *w)
{
	int n = R.pid_w > 0;

	for (uint32_t i = 0; i < w->readers; i++)
		n += R.pid_r[i] > 0;
	return n;
}

/* reap_some - reap whoever ended, waiting at most @ms */
static void reap_some(struct row *w, int ms)
{
	struct rusage ru;
	int st;
	pid_t pid;

	while ((pid = wait4(-1, &st, WNOHANG, &ru)) > 0)
		reaped(w, pid, st, &ru);
	if (alive(w))
		sleep_ns((uint64_t)ms * JTR_NS_PER_MS);
}

/* wait_ready - every child has set up, or one failed */
static bool wait_ready(struct row *w)
{
	int64_t end = now_ns() + (int64_t)(10 * JTR_NS_PER_S);
	uint32_t want = w->readers + 1, got = 0;

	while (got < want) {
		struct pollfd pf = { .fd = R.ready[0], .events = POLLIN };
		char b[MAX_READERS + 1];
		ssize_t k;

		if (now_ns() > end) {
			fail_row(w, "the processes did not get ready within 10 s");
			return false;
		}
		if (poll(&pf, 1, 100) > 0) {
			k = read(R.ready[0], b, sizeof(b));
			if (k > 0)
				got += (uint32_t)k;
		}
		reap_some(w, 0);
		if (!w->ok || jtr_stop)
			return false;
	}
	return true;
}

/* fork_child - start one process running @fn(@idx) */
static pid_t fork_child(void (*fn)(int), int idx)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		jtr_fatal(P, "cannot start a process: %s", strerror(errno));
	if (pid == 0) {
		fn(idx);
		_exit(0);
	}
	return pid;
}

/* writer_entry - fork_child's shape for the writer */
static void writer_entry(int idx)
{
	(void)idx;
	writer_main();
}

/* progress - one line a second on a terminal */
static void progress(const struct row *w, int64_t t0)
{
	static int64_t last;
	int64_t t = now_ns();
	uint64_t done = __atomic_load_n(&B->w.objects, __ATOMIC_RELAXED);

	if (!P->progress || t - last < (int64_t)JTR_NS_PER_S)
		return;
	last = t;
	jtr_progress_line(P, "%s, %u reader%s, %u-byte batches: %.0f %% in %.0f s", method_names[w->m],
			  w->readers, w->readers > 1 ? "s" : "", w->batch,
			  100.0 * (double)done / (double)G->objects, (double)(t - t0) / 1e9);
}

/* monitor - wait for the children; stop them on Ctrl-C, a death or a stall */
static void monitor(struct row *w)
{
	int64_t t0 = now_ns(), last_move = t0, stopped_at = 0;
	uint64_t last_sum = 0;
	bool killed = false;

	while (alive(w)) {
		int64_t t = now_ns();
		uint64_t sum = progress_sum(w);

		if (jtr_stop && !stopped_at) {
			w->partial = true;
			stop_all(false);
		}
		if (sum != last_sum) {
			last_sum = sum;
			last_move = t;
		} else if (!stopped_at && t - last_move > (int64_t)G->timeout_ns) {
			fail_row(w, "no object moved for %.0f s: stalled", (double)G->timeout_ns / 1e9);
			stop_all(true);
		}
		if (B->stop && !stopped_at)
			stopped_at = t;
		if (stopped_at && t - stopped_at > (int64_t)STOP_GRACE_NS && !B->abort)
			stop_all(true);
		if (stopped_at && t - stopped_at > (int64_t)(STOP_GRACE_NS + JTR_NS_PER_S) && !killed) {
			kill_children();
			killed = true;
		}
		progress(w, t0);
		reap_some(w, 20);
	}
	if (P->progress)
		fputs("\r\033[K", stderr);
}

/* judge - the row's elapsed time and verdict from what the processes counted */
static void judge(struct row *w)
{
	int64_t end = w->w.start_ns;

	for (uint32_t i = 0; i < w->readers; i++) {
		struct pstat *r = &w->r[i];

		if (r->end_ns > end)
			end = r->end_ns;
		if (r->next < w->w.issued)
			r->lost += w->w.issued - r->next;	/* the tail never came */
		if (r->lost || r->dups || r->corrupt || r->objects != w->w.objects)
			fail_row(w, "integrity check failed: reader %u got %llu of %llu objects, "
				 "%llu lost, %llu duplicated or out of order, %llu corrupted (first "
				 "at object %llu)", i, (unsigned long long)r->objects,
				 (unsigned long long)w->w.objects, (unsigned long long)r->lost,
				 (unsigned long long)r->dups, (unsigned long long)r->corrupt,
				 (unsigned long long)r->first_bad);
	}
	w->elapsed_s = w->w.start_ns && end > w->w.start_ns ? (double)(end - w->w.start_ns) / 1e9 : 0;
}

/* run_row - one method, reader count and batch size */
static void run_row(struct row *w, int n)
{
	run_reset(w);
	w->ok = true;
	w->ran = true;
	memset(B, 0, sizeof(*B));
	if (pipe2(R.ready, O_CLOEXEC) < 0 || pipe2(R.go, O_CLOEXEC) < 0)
		jtr_fatal(P, "pipe: %s", strerror(errno));
	switch (w->m) {
	case M_SHM_ADAPTIVE:
		R.efd_w = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		for (uint32_t i = 0; i < w->readers; i++)
			R.efd_r[i] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		/* fall through */
	case M_SHM_MUTEX:
	case M_SHM_LOCKLESS:
		setup_shm(w, n);
		break;
	default:
		setup_tcp(w);
		break;
	}
	R.stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (R.stop_fd < 0 || (w->m == M_SHM_ADAPTIVE && R.efd_w < 0))
		jtr_fatal(P, "eventfd: %s", strerror(errno));

	/* 1. the processes: each sets up, says ready and waits for the go */
	R.pid_w = fork_child(writer_entry, -1);
	for (uint32_t i = 0; i < w->readers; i++)
		R.pid_r[i] = fork_child(reader_main, (int)i);
	close_fd(&R.ready[1]);
	close_fd(&R.go[0]);
	for (uint32_t i = 0; i < w->readers; i++) {
		close_fd(&R.wfd[i]);	/* the children hold them now: end of stream works */
		close_fd(&R.rfd[i]);
	}

	/* 2. everyone attached: the name goes, nothing can be left in /dev/shm */
	if (wait_ready(w)) {
		cleanup_shm();
		close_fd(&R.go[1]);
		monitor(w);
	} else {
		if (jtr_stop)
			w->partial = true;
		stop_all(true);
		kill_children();
		while (alive(w))
			reap_some(w, 10);
	}
	w->w = B->w;
	memcpy(w->r, B->r, sizeof(w->r));
	if (w->w.failed && !w->err[0])
		fail_row(w, "%s", w->w.err);
	judge(w);
	run_release();
}

/* ---- output ---- */

/* row_cpu_s - user + system time of every process of the row */
static double row_cpu_s(const struct row *w)
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
static uint64_t row_empty(const struct row *w)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < w->readers; i++)
		n += w->r[i].waits;
	return n;
}

/* row_min_objects - objects the slowest reader received */
static uint64_t row_min_objects(const struct row *w)
{
	uint64_t n = w->readers ? w->r[0].objects : 0;

	for (uint32_t i = 1; i < w->readers; i++)
		if (w->r[i].objects < n)
			n = w->r[i].objects;
	return n;
}

/* table_head - the first lines of the table */
static void table_head(FILE *f)
{
	fprintf(f, "jtr ipc: %llu objects of %u bytes to every reader; shm queue %u slots, low water "
		"%u; TCP_NODELAY %s\n", (unsigned long long)G->objects, G->size, G->slots,
		G->low_water_given ? G->low_water : G->slots / 2, G->nagle ? "off" : "on");
	fprintf(f, "%-13s %7s %8s %10s %9s %9s %10s %9s %7s  %s\n", "method", "readers", "batch",
		"elapsed_s", "Mobj/s", "MB/s", "empty", "full", "cpu_s", "check");
}

/* table_row - one row of the table */
static void table_row(FILE *f, const struct row *w)
{
	uint64_t n = row_min_objects(w);
	double e = w->elapsed_s;

	fprintf(f, "%-13s %7u %8u %10.3f %9.2f %9.1f %10llu %9llu %7.2f  %s%s\n", method_names[w->m],
		w->readers, w->opb * G->size, e, e > 0 ? (double)n / e / 1e6 : 0.0,
		e > 0 ? (double)n * G->size / e / 1e6 : 0.0, (unsigned long long)row_empty(w),
		(unsigned long long)w->w.waits, row_cpu_s(w), w->ok ? "ok" : "FAILED",
		w->partial ? " (partial)" : "");
}

/* best_of - the fastest successful row of methods [@lo, @hi] for @readers and
 * @batch, or NULL */
static const struct row *best_of(const struct row *rows, int n, enum method lo, enum method hi,
				 uint32_t readers, uint32_t batch)
{
	const struct row *b = NULL;

	for (int i = 0; i < n; i++) {
		const struct row *w = &rows[i];

		if (w->ran && w->ok && !w->partial && w->m >= lo && w->m <= hi &&
		    w->readers == readers && w->batch == batch && w->elapsed_s > 0 &&
		    (!b || w->elapsed_s < b->elapsed_s))
			b = w;
	}
	return b;
}

/* print_failures - why each failed row failed, one a line, @prefix first */
static void print_failures(FILE *f, const char *prefix, const struct row *rows, int n)
{
	for (int i = 0; i < n; i++)
		if (rows[i].ran && !rows[i].ok)
			fprintf(f, "%s%s, %u reader%s, %u-byte batches: %s\n", prefix,
				method_names[rows[i].m], rows[i].readers, rows[i].readers > 1 ? "s" : "",
				rows[i].opb * G->size, rows[i].err);
}

/* table_tail - shm against tcp for each reader count and batch size */
static void table_tail(FILE *f, const struct row *rows, int n)
{
	for (int i = 0; i < n; i++) {
		const struct row *w = &rows[i], *s, *t;
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
				w->opb * G->size, method_names[s->m], s->elapsed_s, method_names[t->m],
				t->elapsed_s, s->elapsed_s / t->elapsed_s);
	}
}

/* write_pstat - one process's counts */
static void write_pstat(struct jtr_json *j, const struct pstat *s, const struct rusage *ru,
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
static void write_row(struct jtr_json *j, const struct row *w)
{
	uint64_t n = row_min_objects(w);
	double e = w->elapsed_s;
	bool shm = w->m <= M_SHM_LOCKLESS;

	jtr_json_obj_begin(j, NULL);
	jtr_json_str(j, "method", method_names[w->m]);
	jtr_json_uint(j, "readers", w->readers);
	jtr_json_uint(j, "batch_bytes", (uint64_t)w->opb * G->size);
	jtr_json_uint(j, "objects_per_batch", w->opb);
	if (shm) {
		jtr_json_uint(j, "queue_slots", w->slots);
		jtr_json_uint(j, "queue_bytes", (uint64_t)w->slots * w->opb * G->size);
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
	jtr_json_uint(j, "bytes_per_reader", n * G->size);
	jtr_json_fixed(j, "elapsed_s", e, 6);
	jtr_json_fixed(j, "objects_per_s", e > 0 ? (double)n / e : 0.0, 1);
	jtr_json_fixed(j, "mb_per_s", e > 0 ? (double)n * G->size / e / 1e6 : 0.0, 3);
	jtr_json_uint(j, "empty_waits", row_empty(w));
	jtr_json_uint(j, "full_waits", w->w.waits);
	jtr_json_fixed(j, "cpu_s", row_cpu_s(w), 6);
	jtr_json_bool(j, "ok", w->ok);
	jtr_json_bool(j, "partial", w->partial);
	jtr_json_str(j, "error", w->err[0] ? w->err : NULL);
	jtr_json_arr_begin(j, "writer");
	write_pstat(j, &w->w, &w->ru_w, false, G->ncpus ? G->cpus[0] : -1);
	jtr_json_arr_end(j);
	jtr_json_arr_begin(j, "per_reader");
	for (uint32_t i = 0; i < w->readers; i++)
		write_pstat(j, &w->r[i], &w->ru_r[i], true, G->ncpus ? G->cpus[(i + 1) % G->ncpus] : -1);
	jtr_json_arr_end(j);
	jtr_json_obj_end(j);
}

/* write_outputs - summary.txt (the table) and result.json */
static void write_outputs(const struct row *rows, int n)
{
	struct jtr_afile txt, res;
	struct jtr_json j;

	jtr_probe_open(P, &txt, "summary.txt");
	jtr_probe_open(P, &res, "result.json");
	table_head(txt.f);
	for (int i = 0; i < n; i++)
		if (rows[i].ran)
			table_row(txt.f, &rows[i]);
	print_failures(txt.f, "", rows, n);
	table_tail(txt.f, rows, n);
	if (P->partial)
		fprintf(txt.f, "partial: stopped early; the rows cover what was moved\n");

	jtr_json_init(&j, res.f);
	jtr_probe_result_begin(P, &j);
	jtr_json_obj_begin(&j, "params");
	jtr_json_uint(&j, "objects", G->objects);
	jtr_json_uint(&j, "object_bytes", G->size);
	jtr_json_arr_begin_inline(&j, "batch_bytes");
	for (int i = 0; i < G->nbatches; i++)
		jtr_json_uint(&j, NULL, G->batches[i]);
	jtr_json_arr_end(&j);
	jtr_json_arr_begin_inline(&j, "methods");
	for (int m = 0; m < M_COUNT; m++)
		if (G->methods[m])
			jtr_json_str(&j, NULL, method_names[m]);
	jtr_json_arr_end(&j);
	jtr_json_arr_begin_inline(&j, "readers");
	for (int i = 0; i < G->nfanouts; i++)
		jtr_json_uint(&j, NULL, G->fanouts[i]);
	jtr_json_arr_end(&j);
	jtr_json_arr_begin_inline(&j, "cpus");
	for (int i = 0; i < G->ncpus; i++)
		jtr_json_int(&j, NULL, G->cpus[i]);
	jtr_json_arr_end(&j);
	jtr_json_uint(&j, "queue_slots", G->slots);
	if (G->low_water_given) jtr_json_uint(&j, "low_water", G->low_water);
	else jtr_json_null(&j, "low_water");
	jtr_json_bool(&j, "tcp_nodelay", !G->nagle);
	jtr_json_uint(&j, "timeout_ns", G->timeout_ns);
	jtr_json_uint(&j, "pace_ns", G->pace_ns);
	jtr_json_uint(&j, "reader_pace_ns", G->reader_pace_ns);
	jtr_json_uint(&j, "drop_every", G->drop_every);
	jtr_json_uint(&j, "corrupt_every", G->corrupt_every);
	jtr_json_obj_end(&j);
	jtr_json_arr_begin(&j, "rows");
	for (int i = 0; i < n; i++)
		if (rows[i].ran)
			write_row(&j, &rows[i]);
	jtr_json_arr_end(&j);
	jtr_probe_finish_summary(P, &j, &txt, &res);
}

/* ---- options ---- */

/* parse_list - a comma-separated list of counts into @out */
static int parse_list(struct jtr_probe *p, const char *opt, const char *arg, uint64_t min,
		      uint64_t max, uint32_t *out, int cap)
{
	char item[64];
	const char *s = arg;
	int n = 0;

	while (*s) {
		size_t len = strcspn(s, ",");

		if (n == cap)
			jtr_usage_error(p, "%s %s: at most %d values", opt, arg, cap);
		if (len == 0 || len >= sizeof(item))
			jtr_usage_error(p, "%s %s: use a comma-separated list such as 1,3", opt, arg);
		memcpy(item, s, len);
		item[len] = 0;
		out[n++] = (uint32_t)jtr_opt_count(p, opt, item, min, max);
		s += len;
		if (*s == ',' && *++s == 0)
			jtr_usage_error(p, "%s %s: a list must not end with a comma", opt, arg);
	}
	if (!n)
		jtr_usage_error(p, "%s needs at least one value", opt);
	return n;
}

/* parse_methods - names or all */
static void parse_methods(struct jtr_probe *p, const char *arg, bool *out)
{
	const char *s = arg;

	memset(out, 0, M_COUNT * sizeof(*out));
	while (*s) {
		size_t len = strcspn(s, ",");
		bool found = false;

		if (len == 3 && !strncmp(s, "all", 3)) {
			for (int m = 0; m < M_COUNT; m++)
				out[m] = true;
			found = true;
		}
		for (int m = 0; m < M_COUNT && !found; m++)
			if (strlen(method_names[m]) == len && !strncmp(s, method_names[m], len))
				out[m] = found = true;
		if (!found)
			jtr_usage_error(p, "-m %s: unknown method '%.*s'; use shm-mutex, shm-adaptive, "
					"shm-lockless, tcp, tcp-epoll or all", arg, (int)len, s);
		s += len;
		if (*s == ',')
			s++;
	}
	for (int m = 0; m < M_COUNT; m++)
		if (out[m])
			return;
	jtr_usage_error(p, "-m needs at least one method");
}

/* parse_cpus - -c LIST into the config's CPU array */
static void parse_cpus(struct jtr_probe *p, const char *arg, struct cfg *c)
{
	cpu_set_t set;
	bool none;

	jtr_opt_cpus(p, arg, false, &set, &none);
	jtr_probe_check_cpus(p, "-c", &set);
	c->ncpus = 0;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &set))
			c->cpus[c->ncpus++] = cpu;
}

int main(int argc, char **argv)
{
	static const uint32_t sweep[] = { 1000, 5000, 10000, 20000, 50000, 100000, 1000000 };
	static struct cfg c = {
		.objects = 10000000, .size = 50, .batches = { 100000 }, .nbatches = 1,
		.fanouts = { 1, 3 }, .nfanouts = 2, .slots = 128, .timeout_ns = 10 * JTR_NS_PER_S,
	};
	struct jtr_probe p;
	struct row *rows;
	int opt, n = 0, bad = 0;

	jtr_probe_init(&p, "ipc", argc, argv);
	p.format = IPC_FORMAT;
	P = &p;
	G = &c;
	for (int m = 0; m < M_COUNT; m++)
		c.methods[m] = true;

	/* 1. options */
	while ((opt = getopt_long(argc, argv, ":n:s:B:m:r:c:Q:o:qh", long_opts, NULL)) != -1) {
		if (opt == 'f')
			jtr_usage_error(&p, "--fifo: jtr ipc runs a writer and readers that may share "
					"CPUs, where SCHED_FIFO busy waits can starve one another; it "
					"takes no --fifo");
		if (jtr_probe_common_opt(&p, opt, usage_text, argv))
			continue;
		switch (opt) {
		case 'n':
			if (!strcmp(optarg, "0"))
				jtr_usage_error(&p, "-n 0: nothing to move; give at least 1 object "
						"(default 10M)");
			c.objects = jtr_opt_count(&p, "-n", optarg, 1, 1ULL << 40);
			break;
		case 's':
			c.size = (uint32_t)jtr_opt_count(&p, "-s", optarg, 1, 1u << 20);
			if (c.size < 16)
				jtr_usage_error(&p, "-s %s: an object carries an 8-byte sequence number and "
						"an 8-byte check word; use at least 16 bytes", optarg);
			break;
		case 'B': c.nbatches = parse_list(&p, "-B", optarg, 1, 16000000, c.batches, MAX_BATCHES); break;
		case OPT_SWEEP:
			memcpy(c.batches, sweep, sizeof(sweep));
			c.nbatches = (int)(sizeof(sweep) / sizeof(sweep[0]));
			break;
		case 'm': parse_methods(&p, optarg, c.methods); break;
		case 'r':
			c.nfanouts = parse_list(&p, "-r", optarg, 0, 1000, c.fanouts, MAX_FANOUTS);
			for (int i = 0; i < c.nfanouts; i++)
				if (c.fanouts[i] == 0 || c.fanouts[i] > MAX_READERS)
					jtr_usage_error(&p, "-r %s: %u readers; use 1 to %d (1: point to "
							"point, 3: one to three)", optarg, c.fanouts[i],
							MAX_READERS);
			break;
		case 'c': parse_cpus(&p, optarg, &c); break;
		case 'Q':
			c.slots = (uint32_t)jtr_opt_count(&p, "-Q", optarg, 2, 1u << 16);
			if (c.slots & (c.slots - 1))
				jtr_usage_error(&p, "-Q %s: use a power of two, e.g. 64 or 128", optarg);
			break;
		case OPT_LOW_WATER:
			c.low_water = (uint32_t)jtr_opt_count(&p, "--low-water", optarg, 0, 1u << 16);
			c.low_water_given = true;
			break;
		case OPT_NAGLE: c.nagle = true; break;
		case OPT_TIMEOUT:
			c.timeout_ns = jtr_opt_duration(&p, "--timeout", optarg, JTR_NS_PER_S,
							JTR_NS_PER_S / 10, 24ULL * 3600 * JTR_NS_PER_S);
			break;
		case OPT_PACE:
			c.pace_ns = jtr_opt_duration(&p, "--pace", optarg, JTR_NS_PER_MS, 0, JTR_NS_PER_S);
			break;
		case OPT_READER_PACE:
			c.reader_pace_ns = jtr_opt_duration(&p, "--reader-pace", optarg, JTR_NS_PER_MS, 0,
							    JTR_NS_PER_S);
			break;
		case OPT_DROP_EVERY:
			c.drop_every = jtr_opt_count(&p, "--drop-every", optarg, 2, 1ULL << 40);
			break;
		case OPT_CORRUPT_EVERY:
			c.corrupt_every = jtr_opt_count(&p, "--corrupt-every", optarg, 1, 1ULL << 40);
			break;
		default:
			jtr_unknown_option(&p, '?', optopt, argv[optind - 1]);
		}
	}
	jtr_probe_no_args(&p, argc, argv);
	for (int i = 0; i < c.nbatches; i++)
		if (c.batches[i] < c.size)
			jtr_usage_error(&p, "-B %u: a batch smaller than one %u-byte object; use at least "
					"%u bytes", c.batches[i], c.size, c.size);
	if (c.low_water_given && c.low_water >= c.slots)
		jtr_usage_error(&p, "--low-water %u: must be below the queue length (-Q %u)",
				c.low_water, c.slots);

	/* 2. the rows: reader count, then method, then batch size */
	rows = calloc((size_t)c.nfanouts * M_COUNT * c.nbatches, sizeof(*rows));
	B = mmap(NULL, sizeof(*B), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!rows || B == MAP_FAILED)
		jtr_fatal(&p, "out of memory");
	for (int f = 0; f < c.nfanouts; f++)
		for (int m = 0; m < M_COUNT; m++)
			for (int b = 0; m < M_COUNT && c.methods[m] && b < c.nbatches; b++) {
				struct row *w = &rows[n++];

				w->m = (enum method)m;
				w->readers = c.fanouts[f];
				w->batch = c.batches[b];
				w->opb = c.batches[b] / c.size;
				w->slots = queue_slots(w->opb * c.size);
				w->low_water = c.low_water_given ? (c.low_water < w->slots ? c.low_water
									    : w->slots - 1)
								  : w->slots / 2;
			}

	/* 3. privileges, host facts, results folder, calibration */
	jtr_probe_privileged(&p);
	jtr_probe_timebase(&p);
	atexit(cleanup_shm);

	/* 4. the runs, one after the other */
	if (!p.quiet) {
		table_head(stdout);
		fflush(stdout);
	}
	jtr_probe_map_begin(&p);
	for (int i = 0; i < n && !jtr_stop; i++) {
		run_row(&rows[i], i);
		if (!p.quiet) {
			table_row(stdout, &rows[i]);
			fflush(stdout);
		}
		bad += !rows[i].ok;
	}
	jtr_probe_map_end(&p);
	if (!p.quiet)
		table_tail(stdout, rows, n);

	/* 5. results */
	write_outputs(rows, n);
	jtr_probe_finish(&p);
	if (bad) {
		char prefix[80];

		snprintf(prefix, sizeof(prefix), "%s: ", p.prog);
		print_failures(stderr, prefix, rows, n);
	}
	return bad ? 1 : 0;
}
