/* tp_shm.c - the shm transport: tp_ring in POSIX shared memory segments.
 *
 * pub/sub use one segment, /dev/shm/jtr-NAME; ping/pong two, jtr-NAME-a
 * (ping to pong) and jtr-NAME-b (pong to ping), both created by pong. The
 * creator removes its segments on close; a segment left by a creator that
 * died is recognised (its pid is gone) and replaced.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tp_int.h"
#include "tp_numa.h"

#define RETRY_NS (20 * 1000000ULL)
#define STALL_CHECK_NS (100 * 1000000ULL)

/* cpu_relax - tell the core we are spinning */
static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

/* nap - sleep @ns */
static void nap(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL) };

	nanosleep(&ts, NULL);
}

/* pid_gone - @pid no longer exists */
static bool pid_gone(int32_t pid)
{
	return pid > 0 && kill(pid, 0) < 0 && errno == ESRCH;
}

/* seg_create - a new segment holding a ring; replaces a dead creator's */
static int seg_create(struct tp_shm_seg *s, const struct tp_opts *o, uint32_t readers,
		      struct jtr_err *e)
{
	size_t size = tp_ring_size(o->slots, o->msg_max, readers);
	int fd, tries = 0;
	void *m;

again:
	fd = shm_open(s->name, O_CREAT | O_EXCL | O_RDWR, 0600);
	if (fd < 0 && errno == EEXIST && tries++ == 0) {
		/* someone's segment: in use if its creator lives */
		int ofd = shm_open(s->name, O_RDWR, 0);
		int32_t pid = 0;
		struct stat st;

		if (ofd >= 0 && fstat(ofd, &st) == 0 && (size_t)st.st_size >= sizeof(struct tp_ring)) {
			struct tp_ring *r = mmap(NULL, sizeof(struct tp_ring), PROT_READ, MAP_SHARED, ofd, 0);

			if (r != MAP_FAILED) {
				pid = r->h.creator_pid;
				munmap(r, sizeof(struct tp_ring));
			}
		}
		if (ofd >= 0)
			close(ofd);
		if (pid > 0 && !pid_gone(pid))
			return jtr_err_set(e, -EADDRINUSE, "shm segment /dev/shm%s is in use by pid %d; "
					   "choose another name", s->name, pid);
		shm_unlink(s->name);
		goto again;
	}
	if (fd < 0)
		return jtr_err_set(e, -errno, "cannot create shm segment /dev/shm%s: %s", s->name,
				   strerror(errno));
	s->created = true;
	if (ftruncate(fd, (off_t)size) < 0) {
		int rc = -errno;

		close(fd);
		return jtr_err_set(e, rc, "cannot size shm segment /dev/shm%s to %zu bytes: %s",
				   s->name, size, strerror(-rc));
	}
	m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return jtr_err_set(e, -errno, "cannot map shm segment /dev/shm%s: %s", s->name,
				   strerror(errno));
	s->ring = m;
	s->size = size;
	return tp_ring_init(m, size, o->slots, o->msg_max, readers, getpid());
}

/* seg_attach - map an existing ring, waiting up to @wait_ns for it */
static int seg_attach(struct tp_shm_seg *s, uint64_t wait_ns, const char *peer, struct jtr_err *e)
{
	int64_t end = tp_now_ns() + (int64_t)wait_ns;

	for (;;) {
		int fd = shm_open(s->name, O_RDWR, 0);
		struct stat st;

		if (fd >= 0 && fstat(fd, &st) == 0 && (size_t)st.st_size >= sizeof(struct tp_ring)) {
			void *m = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
				       MAP_SHARED | MAP_POPULATE, fd, 0);
			int rc = m == MAP_FAILED ? -errno : tp_ring_valid(m, (size_t)st.st_size);

			close(fd);
			if (rc == 0 && !pid_gone(((struct tp_ring *)m)->h.creator_pid)) {
				s->ring = m;
				s->size = (size_t)st.st_size;
				return 0;
			}
			if (m != MAP_FAILED)
				munmap(m, (size_t)st.st_size);
			if (rc == -EPROTO)
				return jtr_err_set(e, rc, "/dev/shm%s is not a jtr ring of this version",
						   s->name);
		} else if (fd >= 0) {
			close(fd);
		}
		if (tp_now_ns() >= end)
			return jtr_err_set(e, -ETIMEDOUT, "no %s appeared within %g s (no live "
					   "/dev/shm%s); start it first with the same -T and --addr, or "
					   "wait longer (--wait)", peer, (double)wait_ns / 1e9, s->name);
		nap(RETRY_NS);
	}
}

/* wait_readers - until @n readers are attached, or -ETIMEDOUT */
static int wait_readers(struct tp_ring *r, uint32_t n, uint64_t wait_ns, const char *who,
			const char *name, struct jtr_err *e)
{
	int64_t end = tp_now_ns() + (int64_t)wait_ns;

	while (tp_ring_readers(r) < n) {
		if (tp_now_ns() >= end)
			return jtr_err_set(e, -ETIMEDOUT, "%u of %u %s attached to shm %s within %g s; "
					   "start them first or wait longer (--wait)", tp_ring_readers(r),
					   n, who, name, (double)wait_ns / 1e9);
		nap(RETRY_NS / 4);
	}
	return 0;
}

/* place_ring - the reader of @s puts it on its node (--cross-numa: on another
 * one) and, not pinned on a machine of many nodes, runs on that node. The
 * reader's node: --numa-node, else its pinned CPU's, else @hint (ping: where
 * pong is), else the CPU it runs on now. The node the pages are on is read
 * back, not assumed. */
static int place_ring(struct tp *t, struct tp_shm_seg *s, const struct tp_opts *o, int hint,
		      struct jtr_err *e)
{
	int reader = o->numa_node, node, rc;

	if (reader < 0 && o->numa_cpu >= 0)
		reader = tp_numa_node_of_cpu(o->numa_cpu);
	if (reader < 0)
		reader = hint;
	if (reader < 0)
		reader = tp_numa_node_of_cpu(sched_getcpu());
	if (reader < 0)
		reader = 0;
	node = o->cross_numa ? tp_numa_other_node(reader) : reader;
	if (node < 0)
		return jtr_err_set(e, -ENODEV, "--cross-numa: no NUMA node with memory other than "
				   "node %d", reader);
	if (o->numa_cpu < 0 && tp_numa_nodes() > 1 && (rc = tp_numa_run_on_node(reader)) < 0)
		return jtr_err_set(e, rc, "cannot run on NUMA node %d: %s", reader, strerror(-rc));
	rc = tp_numa_place(s->ring, s->size, node, e);
	if (rc < 0)
		return rc;
	t->reader_node = reader;
	t->ring_node = tp_numa_node_of_addr((const char *)s->ring + s->size - 1);
	return 0;
}

/* follow_ring - the writer (pub), not pinned on a machine of many nodes, runs
 * on the node its readers put the ring on */
static int follow_ring(struct tp *t, struct tp_shm_seg *s, const struct tp_opts *o,
		       struct jtr_err *e)
{
	int rc;

	t->ring_node = tp_numa_node_of_addr((const char *)s->ring + s->size - 1);
	t->reader_node = t->ring_node;
	if (o->numa_cpu < 0 && tp_numa_nodes() > 1 && t->ring_node >= 0 &&
	    (rc = tp_numa_run_on_node(t->ring_node)) < 0)
		return jtr_err_set(e, rc, "cannot run on NUMA node %d: %s", t->ring_node,
				   strerror(-rc));
	return 0;
}

/* tp_numa_where - the reader's node and the ring's */
bool tp_numa_where(const struct tp *t, int *reader_node, int *ring_node)
{
	if (t->kind != TP_SHM)
		return false;
	*reader_node = t->reader_node;
	*ring_node = t->ring_node;
	return true;
}

/* tp_shm_open - create or attach by role */
int tp_shm_open(struct tp *t, const struct tp_opts *o, struct jtr_err *e)
{
	const char *name = o->addr ? o->addr : TP_DEFAULT_SHM;
	pid_t me = getpid();
	int rc;

	t->reader_node = t->ring_node = -1;
	if (t->role == TP_PUB || t->role == TP_SUB) {
		snprintf(t->seg[0].name, sizeof(t->seg[0].name), "/jtr-%s", name);
	} else {
		snprintf(t->seg[0].name, sizeof(t->seg[0].name), "/jtr-%s-a", name);
		snprintf(t->seg[1].name, sizeof(t->seg[1].name), "/jtr-%s-b", name);
	}
	switch (t->role) {
	case TP_PUB:
		rc = seg_create(&t->seg[0], o, TP_RING_MAX_READERS, e);
		if (rc < 0)
			return rc;
		tp_ring_writer_open(&t->wr, t->seg[0].ring, me);
		t->writing = true;
		rc = wait_readers(t->seg[0].ring, o->subs, o->wait_ns, "subscribers", name, e);
		return rc < 0 ? rc : follow_ring(t, &t->seg[0], o, e);
	case TP_SUB:
		rc = seg_attach(&t->seg[0], o->wait_ns, "publisher", e);
		if (rc < 0)
			return rc;
		rc = tp_ring_reader_join(&t->rd, t->seg[0].ring, me);
		if (rc < 0)
			return jtr_err_set(e, rc, "shm %s already has %d subscribers", name,
					   TP_RING_MAX_READERS);
		t->reading = true;
		return place_ring(t, &t->seg[0], o, -1, e);
	case TP_PONG:
		rc = seg_create(&t->seg[0], o, 1, e);
		if (rc == 0)
			rc = seg_create(&t->seg[1], o, 1, e);
		if (rc < 0)
			return rc;
		tp_ring_reader_join(&t->rd, t->seg[0].ring, me);
		tp_ring_writer_open(&t->wr, t->seg[1].ring, me);
		t->reading = t->writing = true;
		return place_ring(t, &t->seg[0], o, -1, e);
	case TP_PING:
		rc = seg_attach(&t->seg[0], o->wait_ns, "pong", e);
		if (rc == 0)
			rc = seg_attach(&t->seg[1], o->wait_ns, "pong", e);
		if (rc == 0)
			rc = wait_readers(t->seg[0].ring, 1, o->wait_ns, "pong", name, e);
		if (rc < 0)
			return rc;
		if (t->seg[0].ring->h.slot_bytes < o->msg_max)
			return jtr_err_set(e, -EMSGSIZE, "a %u-byte message is longer than pong's ring "
					   "slot (%u bytes); start pong with -m %u", o->msg_max,
					   t->seg[0].ring->h.slot_bytes, o->msg_max);
		if (tp_ring_writer_open(&t->wr, t->seg[0].ring, me) < 0)
			return jtr_err_set(e, -EBUSY, "another ping is using shm %s", name);
		t->writing = true;
		tp_ring_reader_join(&t->rd, t->seg[1].ring, me);
		t->reading = true;
		return place_ring(t, &t->seg[1], o, tp_numa_node_of_addr(t->seg[0].ring), e);
	}
	return -EINVAL;
}

/* tp_shm_send - write; on a full ring wait for the slowest reader, dropping
 * readers that died */
int tp_shm_send(struct tp *t, const void *buf, size_t len)
{
	int64_t start = 0, check = 0;
	uint32_t spins = 0;
	int rc;

	if (t->role == TP_SUB)
		return -EBADF;
	while ((rc = tp_ring_write(&t->wr, buf, (uint32_t)len)) == -EAGAIN) {
		if (t->busy)
			cpu_relax();
		else
			sched_yield();
		if (++spins % 256)
			continue;
		int64_t now = tp_now_ns();

		if (!start) {
			start = check = now;
			continue;
		}
		if (now - check >= (int64_t)STALL_CHECK_NS) {
			int idx = tp_ring_lagging_reader(&t->wr);

			check = now;
			if (idx >= 0 && pid_gone(t->wr.r->r[idx].pid)) {
				tp_ring_drop_reader(t->wr.r, idx);
				t->peers_lost++;
				t->wr.min_tail = t->wr.head;	/* rescan on the next try */
				t->wr.min_tail -= t->wr.mask + 1ULL;
				start = now;
				if (!tp_ring_readers(t->wr.r))
					return -EPIPE;
			}
		}
		if (now - start >= (int64_t)t->wait_ns)
			return -ETIMEDOUT;
	}
	return rc;
}

/* writer_gone - the ring's writer has died */
static bool writer_gone(const struct tp *t)
{
	return pid_gone(__atomic_load_n(&t->rd.r->w.pid, __ATOMIC_ACQUIRE));
}

/* tp_shm_recv - read, waiting busy or on the futex */
ssize_t tp_shm_recv(struct tp *t, void *buf, size_t cap, uint64_t timeout_ns)
{
	int64_t now = 0, end = 0, check = 0;
	uint32_t spins = 0;
	ssize_t n;

	if (!t->reading)
		return -EBADF;
	for (;;) {
		n = tp_ring_read(&t->rd, buf, cap);
		if (__builtin_expect(n != -EAGAIN, 1))
			return n;
		if (t->busy) {
			cpu_relax();
			if (++spins % 256)
				continue;
		}
		now = tp_now_ns();
		if (!end) {
			end = now + (int64_t)timeout_ns;
			check = now;
		}
		if (now - check >= (int64_t)STALL_CHECK_NS) {
			check = now;
			if (writer_gone(t) && !tp_ring_available(&t->rd))
				return -EPIPE;
		}
		if (now >= end)
			return -EAGAIN;
		if (!t->busy) {
			uint64_t left = (uint64_t)(end - now);

			tp_ring_wait(&t->rd, left < STALL_CHECK_NS ? left : STALL_CHECK_NS);
		}
	}
}

/* tp_shm_poll - wait for a message without taking it */
int tp_shm_poll(struct tp *t, uint64_t timeout_ns)
{
	int64_t end = tp_now_ns() + (int64_t)timeout_ns;

	if (!t->reading)
		return -EBADF;
	while (!tp_ring_available(&t->rd)) {
		int64_t now = tp_now_ns();

		if (now >= end)
			return 0;
		if (__atomic_load_n(&t->rd.r->wake.closed, __ATOMIC_ACQUIRE) || writer_gone(t))
			return -EPIPE;
		if (t->busy)
			cpu_relax();
		else
			tp_ring_wait(&t->rd, (uint64_t)(end - now) < STALL_CHECK_NS ?
				     (uint64_t)(end - now) : STALL_CHECK_NS);
	}
	return 1;
}

/* tp_shm_close - close, leave, unmap, remove what we created */
void tp_shm_close(struct tp *t)
{
	if (t->writing)
		tp_ring_writer_close(&t->wr);
	if (t->reading)
		tp_ring_reader_leave(&t->rd);
	for (int i = 0; i < 2; i++) {
		if (t->seg[i].ring)
			munmap(t->seg[i].ring, t->seg[i].size);
		if (t->seg[i].created)
			shm_unlink(t->seg[i].name);
	}
}
