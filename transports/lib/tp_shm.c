// SPDX-License-Identifier: GPL-2.0-only
/* tp_shm.c - the shm transport: tp_ring in POSIX shared memory segments.
 *
 * pub/sub use one segment, /dev/shm/jtr-NAME; ping/pong two, jtr-NAME-a
 * (ping to pong) and jtr-NAME-b (pong to ping), both created by pong. The
 * creator removes its segments on close.
 *
 * Ownership: a segment is created exclusively (O_CREAT | O_EXCL, mode 0600),
 * so it is this user's and nobody else can write it. A creator that finds
 * the name taken, and an attacher, use only a regular file of their own
 * effective user that neither group nor others can write; anything else
 * (another user's run, a file planted under the name) is refused with
 * -EPERM and a message naming it. A segment of the same user whose creator
 * has died (a run killed before it could remove it) is replaced, and
 * tp_note() says so.
 *
 * A segment that shrinks under a run (its owner, or root, truncates it)
 * would kill the process with SIGBUS on the next access to a page past the
 * new end. The hot loops must not make a system call to look, and looking
 * every so often would not help: the next access faults anyway. So the
 * rings this process maps are registered for a SIGBUS handler, installed
 * once; a fault inside one replaces the whole mapping with private zero
 * pages (one mmap, MAP_FIXED) and sets the transport's faulted flag. The
 * access is retried on the zero pages and goes through; a receive or send
 * sees the flag (a load of a word it already has in its cache) right after
 * and returns -EFAULT, so the run ends with what it measured and a message
 * (tp_fault) instead of a core dump. A fault outside the rings gets the
 * disposition SIGBUS had before.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "jtr_cpu.h"
#include "tp_int.h"
#include "tp_numa.h"
#include "tp_ring.h"

#define RETRY_NS (20 * 1000000ULL)
#define STALL_CHECK_NS (100 * 1000000ULL)
#define SHM_DIR "/dev/shm"

struct tp_shm_seg {
	char name[128];			/* "/jtr-NAME-a" */
	struct tp_ring *ring;
	size_t size;
	bool created;
	volatile sig_atomic_t faulted;	/* shrank under us: now zero pages */
};

/* the shm transport's state (tp_priv) */
struct tp_shm {
	/* [0] carries pub->sub and ping->pong, [1] pong->ping */
	struct tp_shm_seg seg[2];
	struct tp_ring_wr wr;
	struct tp_ring_rd rd;
	bool writing, reading;
	volatile sig_atomic_t faulted;	/* one of seg[] shrank under us */
	uint32_t left_seen;		/* writer: tp_ring_left() when last looked */
	int32_t start_pids[TP_RING_MAX_READERS];	/* writer: its readers at the start (0: none) */
	int reader_node, ring_node;	/* -1 until the ring is placed */
};

/* shm_of - @t's shm state */
static inline struct tp_shm *shm_of(const struct tp *t)
{
	return tp_priv(t);
}

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

/* the rings this process has mapped, for on_bus */
#define BUS_MAPS 16
static struct bus_map {
	int used;			/* claimed (0/1) */
	char *addr;			/* published last; NULL: not in use */
	size_t size;
	volatile sig_atomic_t *seg_flag, *tp_flag;
} bus_maps[BUS_MAPS];
static struct sigaction bus_old;
static int bus_installed;

/* on_bus - SIGBUS: a fault inside one of our rings (its segment shrank)
 * turns the ring into private zero pages and raises the flags; any other
 * fault gets the old disposition when the access is retried */
static void on_bus(int sig, siginfo_t *si, void *uc)
{
	char *a = si->si_addr;

	(void)sig;
	(void)uc;
	for (int i = 0; i < BUS_MAPS; i++) {
		char *b = __atomic_load_n(&bus_maps[i].addr, __ATOMIC_ACQUIRE);

		if (b && a >= b && a < b + bus_maps[i].size) {
			int saved = errno;
			void *m = mmap(b, bus_maps[i].size, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);

			errno = saved;
			if (m == MAP_FAILED)
				break;
			*bus_maps[i].seg_flag = 1;
			*bus_maps[i].tp_flag = 1;
			return;
		}
	}
	sigaction(SIGBUS, &bus_old, NULL);
}

/* bus_watch - register @s's mapping (installing the handler once) */
static void bus_watch(struct tp *t, struct tp_shm_seg *s)
{
	struct tp_shm *sh = shm_of(t);

	if (!__atomic_exchange_n(&bus_installed, 1, __ATOMIC_ACQ_REL)) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_bus;
		sa.sa_flags = SA_SIGINFO;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGBUS, &sa, &bus_old);
	}
	for (int i = 0; i < BUS_MAPS; i++) {
		int free_ = 0;

		if (!__atomic_compare_exchange_n(&bus_maps[i].used, &free_, 1, false,
						 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			continue;
		bus_maps[i].size = s->size;
		bus_maps[i].seg_flag = &s->faulted;
		bus_maps[i].tp_flag = &sh->faulted;
		__atomic_store_n(&bus_maps[i].addr, (char *)s->ring, __ATOMIC_RELEASE);
		return;
	}
}

/* bus_unwatch - forget @s's mapping (before it is unmapped) */
static void bus_unwatch(const struct tp_shm_seg *s)
{
	for (int i = 0; i < BUS_MAPS; i++)
		if (__atomic_load_n(&bus_maps[i].addr, __ATOMIC_ACQUIRE) == (char *)s->ring) {
			__atomic_store_n(&bus_maps[i].addr, NULL, __ATOMIC_RELEASE);
			__atomic_store_n(&bus_maps[i].used, 0, __ATOMIC_RELEASE);
			return;
		}
}

/* shm_fault - which segment shrank (tp_fault) */
static int shm_fault(const struct tp *t, struct jtr_err *e)
{
	const struct tp_shm *sh = shm_of(t);

	if (!sh->faulted)
		return 0;
	for (int i = 0; i < 2; i++)
		if (sh->seg[i].faulted)
			return jtr_err_set(e, -EFAULT, "shm segment %s%s shrank under the run (another "
					   "process of this user, or root, truncated it); nothing more "
					   "can be read from or written to it", SHM_DIR, sh->seg[i].name);
	return -EFAULT;
}

/* user_name - "nobody (uid 65534)" */
static void user_name(uid_t uid, char *buf, size_t n)
{
	struct passwd pw, *r = NULL;
	char tmp[1024];

	if (getpwuid_r(uid, &pw, tmp, sizeof(tmp), &r) == 0 && r)
		snprintf(buf, n, "%s (uid %u)", r->pw_name, (unsigned)uid);
	else
		snprintf(buf, n, "uid %u", (unsigned)uid);
}

/* owned_check - @st (of @s) is a segment this user may use: a regular file
 * of its effective user that group and others cannot write; else -EPERM */
static int owned_check(const struct tp_shm_seg *s, const struct stat *st, struct jtr_err *e)
{
	char owner[96], me[96];

	if (!S_ISREG(st->st_mode))
		return jtr_err_set(e, -EPERM, "%s%s is not a regular file, so not a jtr segment; "
				   "choose another name with --addr", SHM_DIR, s->name);
	if (st->st_uid != geteuid()) {
		user_name(st->st_uid, owner, sizeof(owner));
		user_name(geteuid(), me, sizeof(me));
		return jtr_err_set(e, -EPERM, "shm segment %s%s belongs to %s, not to you, %s: "
				   "jtr uses only segments of its own user; choose another name "
				   "with --addr (or have its owner or root remove it)", SHM_DIR,
				   s->name, owner, me);
	}
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return jtr_err_set(e, -EPERM, "shm segment %s%s can be written by %s (mode %04o); "
				   "jtr makes its segments 0600, so another program made it; remove "
				   "it (rm %s%s) or choose another name with --addr", SHM_DIR, s->name,
				   st->st_mode & S_IWOTH ? "other users" : "its group",
				   (unsigned)(st->st_mode & 07777), SHM_DIR, s->name);
	return 0;
}

/* path_check - owned_check by path, for a segment we could not open */
static int path_check(const struct tp_shm_seg *s, struct jtr_err *e)
{
	char path[160];
	struct stat st;

	snprintf(path, sizeof(path), "%s%s", SHM_DIR, s->name);
	if (lstat(path, &st) < 0)
		return -errno;
	return owned_check(s, &st, e);
}

/* creator_of - the creator pid in the ring header of @fd, 0 if none */
static int32_t creator_of(int fd)
{
	struct tp_ring_hdr h;

	/* read, not mapped: a file that shrinks cannot fault a read */
	if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) || h.magic != TP_RING_MAGIC)
		return 0;
	return h.creator_pid;
}

/* note_replaced - tp_note's words for a stale segment replaced (a second
 * one, pong's -b, is added to the first) */
static void note_replaced(struct tp *t, const struct tp_shm_seg *s, int32_t pid)
{
	size_t n = strlen(t->note);

	if (n)
		snprintf(t->note + n, sizeof(t->note) - n, " (and %s%s)", SHM_DIR, s->name);
	else if (pid > 0)
		snprintf(t->note, sizeof(t->note), "replaced the shm segment %s%s left by pid %d, "
			 "a run that ended without removing it", SHM_DIR, s->name, pid);
	else
		snprintf(t->note, sizeof(t->note), "replaced %s%s, a file of yours that held no "
			 "jtr ring", SHM_DIR, s->name);
}

/* seg_create - a new segment holding a ring, created exclusively; one of
 * this user's left by a dead creator is replaced, anything else refused */
static int seg_create(struct tp *t, struct tp_shm_seg *s, const struct tp_opts *o,
		      uint32_t readers, struct jtr_err *e)
{
	size_t size = tp_ring_size(o->slots, o->msg_max, readers);
	int fd, rc, tries = 0;
	void *m;

again:
	fd = shm_open(s->name, O_CREAT | O_EXCL | O_RDWR, 0600);
	if (fd < 0 && errno == EEXIST && tries++ == 0) {
		int ofd = shm_open(s->name, O_RDONLY, 0);
		int32_t pid = 0;
		struct stat st;

		if (ofd < 0) {
			if (errno == ENOENT)
				goto again;	/* gone meanwhile */
			rc = path_check(s, e);
			return rc < 0 && rc != -ENOENT ? rc :
				jtr_err_set(e, -EPERM, "cannot open the existing shm segment %s%s: %s; "
					    "choose another name with --addr", SHM_DIR, s->name,
					    strerror(errno));
		}
		rc = fstat(ofd, &st) < 0 ? -errno : owned_check(s, &st, e);
		if (rc == 0)
			pid = creator_of(ofd);
		close(ofd);
		if (rc < 0)
			return rc;
		if (pid > 0 && !pid_gone(pid))
			return jtr_err_set(e, -EADDRINUSE, "shm segment %s%s is in use by pid %d; "
					   "choose another name", SHM_DIR, s->name, pid);
		shm_unlink(s->name);
		note_replaced(t, s, pid);
		goto again;
	}
	if (fd < 0 && errno == EEXIST)
		return jtr_err_set(e, -EADDRINUSE, "shm segment %s%s appeared again while it was "
				   "being replaced: another run is starting under the same name; "
				   "choose another name with --addr", SHM_DIR, s->name);
	if (fd < 0)
		return jtr_err_set(e, -errno, "cannot create shm segment %s%s: %s", SHM_DIR, s->name,
				   strerror(errno));
	s->created = true;
	if (ftruncate(fd, (off_t)size) < 0) {
		rc = -errno;
		close(fd);
		return jtr_err_set(e, rc, "cannot size shm segment %s%s to %zu bytes: %s",
				   SHM_DIR, s->name, size, strerror(-rc));
	}
	m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return jtr_err_set(e, -errno, "cannot map shm segment %s%s: %s", SHM_DIR, s->name,
				   strerror(errno));
	s->ring = m;
	s->size = size;
	bus_watch(t, s);
	return tp_ring_init(m, size, o->slots, o->msg_max, readers, getpid());
}

/* seg_attach - map an existing ring of this user's, waiting up to @wait_ns
 * for a live one; another user's or one others can write is refused */
static int seg_attach(struct tp *t, struct tp_shm_seg *s, uint64_t wait_ns, const char *peer,
		      struct jtr_err *e)
{
	struct tp_shm *sh = shm_of(t);
	int64_t end = tp_now_ns() + (int64_t)wait_ns;
	int rc;

	for (;;) {
		int fd = shm_open(s->name, O_RDWR, 0);
		struct stat st;

		if (fd < 0 && errno == EACCES && (rc = path_check(s, e)) < 0 && rc != -ENOENT)
			return rc;
		if (fd >= 0 && fstat(fd, &st) == 0) {
			size_t size = (size_t)st.st_size;
			void *m;

			rc = owned_check(s, &st, e);
			if (rc < 0) {
				close(fd);
				return rc;
			}
			if (size < sizeof(struct tp_ring)) {
				close(fd);
				goto wait;
			}
			m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
			if (m == MAP_FAILED) {
				close(fd);
				goto wait;
			}
			s->ring = m;
			s->size = size;
			bus_watch(t, s);
			/* the size again, now that a shrink would fault: the same or more */
			rc = fstat(fd, &st) < 0 || (size_t)st.st_size < size ? -EAGAIN :
			     tp_ring_valid(m, size);
			close(fd);
			if (rc == 0 && !sh->faulted && !pid_gone(((struct tp_ring *)m)->h.creator_pid))
				return 0;
			bus_unwatch(s);
			munmap(m, size);
			s->ring = NULL;
			s->faulted = 0;	/* it shrank while we looked: look again */
			sh->faulted = sh->seg[0].faulted || sh->seg[1].faulted;
			if (rc == -EPROTO)
				return jtr_err_set(e, rc, "%s%s is not a jtr ring of this version",
						   SHM_DIR, s->name);
		} else if (fd >= 0) {
			close(fd);
		}
wait:
		if (tp_now_ns() >= end)
			return jtr_err_set(e, -ETIMEDOUT, "no %s appeared within %g s (no live "
					   "%s%s); start it first with the same -T and --addr, or "
					   "wait longer (--wait)", peer, (double)wait_ns / 1e9, SHM_DIR,
					   s->name);
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
	struct tp_shm *sh = shm_of(t);
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
	sh->reader_node = reader;
	sh->ring_node = tp_numa_node_of_addr((const char *)s->ring + s->size - 1);
	return 0;
}

/* follow_ring - the writer (pub), not pinned on a machine of many nodes, runs
 * on the node its readers put the ring on */
static int follow_ring(struct tp *t, struct tp_shm_seg *s, const struct tp_opts *o,
		       struct jtr_err *e)
{
	struct tp_shm *sh = shm_of(t);
	int rc;

	sh->ring_node = tp_numa_node_of_addr((const char *)s->ring + s->size - 1);
	sh->reader_node = sh->ring_node;
	if (o->numa_cpu < 0 && tp_numa_nodes() > 1 && sh->ring_node >= 0 &&
	    (rc = tp_numa_run_on_node(sh->ring_node)) < 0)
		return jtr_err_set(e, rc, "cannot run on NUMA node %d: %s", sh->ring_node,
				   strerror(-rc));
	return 0;
}

/* shm_numa_where - the reader's node and the ring's (tp_numa_where) */
static bool shm_numa_where(const struct tp *t, int *reader_node, int *ring_node)
{
	const struct tp_shm *sh = shm_of(t);

	*reader_node = sh->reader_node;
	*ring_node = sh->ring_node;
	return true;
}

/* note_readers - the writer's readers at the start, and how many had left */
static void note_readers(struct tp *t)
{
	struct tp_shm *sh = shm_of(t);
	const struct tp_ring *r = sh->wr.r;

	sh->left_seen = tp_ring_left(r);
	for (uint32_t i = 0; i < r->h.max_readers; i++)
		sh->start_pids[i] = __atomic_load_n(&r->r[i].state, __ATOMIC_ACQUIRE) == TP_RD_ACTIVE ?
				   __atomic_load_n(&r->r[i].pid, __ATOMIC_ACQUIRE) : 0;
}

/* readers_gone - of the writer's readers at the start, those that left, were
 * dropped, or died (their slot free, taken by another, or their pid gone) */
static uint32_t readers_gone(const struct tp *t)
{
	const struct tp_shm *sh = shm_of(t);
	const struct tp_ring *r = sh->wr.r;
	uint32_t n = 0;

	for (uint32_t i = 0; i < r->h.max_readers; i++) {
		int32_t pid = sh->start_pids[i];

		if (pid && (__atomic_load_n(&r->r[i].state, __ATOMIC_ACQUIRE) != TP_RD_ACTIVE ||
			    __atomic_load_n(&r->r[i].pid, __ATOMIC_ACQUIRE) != pid || pid_gone(pid)))
			n++;
	}
	return n;
}

/* shm_peers_lost - readers gone since the start (a writer's) */
static uint32_t shm_peers_lost(const struct tp *t)
{
	const struct tp_shm *sh = shm_of(t);

	return sh->writing && !sh->faulted ? readers_gone(t) : t->peers_lost;
}

/* reader_left - a reader has left (wake.left moved): -EPIPE if none is
 * left, else 0 (cold: once per reader that leaves) */
static int reader_left(struct tp *t)
{
	struct tp_shm *sh = shm_of(t);

	sh->left_seen = tp_ring_left(sh->wr.r);
	t->peers_lost = readers_gone(t);
	return tp_ring_readers(sh->wr.r) ? 0 : -EPIPE;
}

/* open_role - create or attach by role */
static int open_role(struct tp *t, const struct tp_opts *o, struct jtr_err *e)
{
	struct tp_shm *sh = shm_of(t);
	const char *name = o->addr ? o->addr : TP_DEFAULT_SHM;
	pid_t me = getpid();
	int rc;

	sh->reader_node = sh->ring_node = -1;
	if (t->role == TP_PUB || t->role == TP_SUB) {
		snprintf(sh->seg[0].name, sizeof(sh->seg[0].name), "/jtr-%s", name);
	} else {
		snprintf(sh->seg[0].name, sizeof(sh->seg[0].name), "/jtr-%s-a", name);
		snprintf(sh->seg[1].name, sizeof(sh->seg[1].name), "/jtr-%s-b", name);
	}
	switch (t->role) {
	case TP_PUB:
		rc = seg_create(t, &sh->seg[0], o, TP_RING_MAX_READERS, e);
		if (rc < 0)
			return rc;
		tp_ring_writer_open(&sh->wr, sh->seg[0].ring, me);
		sh->writing = true;
		rc = wait_readers(sh->seg[0].ring, o->subs, o->wait_ns, "subscribers", name, e);
		if (rc < 0)
			return rc;
		note_readers(t);
		return follow_ring(t, &sh->seg[0], o, e);
	case TP_SUB:
		rc = seg_attach(t, &sh->seg[0], o->wait_ns, "publisher", e);
		if (rc < 0)
			return rc;
		rc = tp_ring_reader_join(&sh->rd, sh->seg[0].ring, me);
		if (rc < 0)
			return jtr_err_set(e, rc, "shm %s already has %d subscribers", name,
					   TP_RING_MAX_READERS);
		sh->reading = true;
		return place_ring(t, &sh->seg[0], o, -1, e);
	case TP_PONG:
		rc = seg_create(t, &sh->seg[0], o, 1, e);
		if (rc == 0)
			rc = seg_create(t, &sh->seg[1], o, 1, e);
		if (rc < 0)
			return rc;
		tp_ring_reader_join(&sh->rd, sh->seg[0].ring, me);
		tp_ring_writer_open(&sh->wr, sh->seg[1].ring, me);
		sh->reading = sh->writing = true;
		return place_ring(t, &sh->seg[0], o, -1, e);
	case TP_PING:
		rc = seg_attach(t, &sh->seg[0], o->wait_ns, "pong", e);
		if (rc == 0)
			rc = seg_attach(t, &sh->seg[1], o->wait_ns, "pong", e);
		if (rc == 0)
			rc = wait_readers(sh->seg[0].ring, 1, o->wait_ns, "pong", name, e);
		if (rc < 0)
			return rc;
		if (sh->seg[0].ring->h.slot_bytes < o->msg_max)
			return jtr_err_set(e, -EMSGSIZE, "a %u-byte message is longer than pong's ring "
					   "slot (%u bytes); start pong with -m %u", o->msg_max,
					   sh->seg[0].ring->h.slot_bytes, o->msg_max);
		if (tp_ring_writer_open(&sh->wr, sh->seg[0].ring, me) < 0)
			return jtr_err_set(e, -EBUSY, "another ping is using shm %s", name);
		sh->writing = true;
		note_readers(t);
		tp_ring_reader_join(&sh->rd, sh->seg[1].ring, me);
		sh->reading = true;
		return place_ring(t, &sh->seg[1], o, tp_numa_node_of_addr(sh->seg[0].ring), e);
	}
	return -EINVAL;
}

/* open_shm - create or attach by role; a segment that shrank meanwhile
 * is an error */
static int open_shm(struct tp *t, const struct tp_opts *o, struct jtr_err *e)
{
	int rc = open_role(t, o, e);

	return rc < 0 ? rc : shm_fault(t, e);
}

/* send_full - the ring is full: wait for the slowest reader, dropping
 * readers that died (cold) */
static __attribute__((noinline)) int send_full(struct tp *t, const void *buf, size_t len)
{
	struct tp_shm *sh = shm_of(t);
	int64_t start = 0, check = 0;
	uint32_t spins = 0;
	int rc;

	t->blocked++;
	while ((rc = tp_ring_write(&sh->wr, buf, (uint32_t)len)) == -EAGAIN) {
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
			int idx = tp_ring_lagging_reader(&sh->wr);

			check = now;
			if (idx >= 0 && pid_gone(sh->wr.r->r[idx].pid)) {
				tp_ring_drop_reader(sh->wr.r, idx);
				t->peers_lost = readers_gone(t);
				/* rescan on the next try */
				sh->wr.min_tail = tp_ring_head(&sh->wr) - sh->wr.mask - 1ULL;
				start = now;
				if (!tp_ring_readers(sh->wr.r))
					return -EPIPE;
			}
		}
		if (now - start >= (int64_t)t->wait_ns)
			return -ETIMEDOUT;
		if (sh->faulted)
			return -EFAULT;
	}
	return rc;
}

/* send_slow - a send that cannot take the fast path: not a writer, a
 * segment that shrank, a reader that left, a message too long, or a ring
 * that looks full (cold) */
static __attribute__((noinline)) int send_slow(struct tp *t, const void *buf, size_t len)
{
	struct tp_shm *sh = shm_of(t);
	int rc;

	if (t->role == TP_SUB)
		return -EBADF;
	rc = tp_ring_write(&sh->wr, buf, (uint32_t)len);
	if (rc == -EAGAIN)
		rc = send_full(t, buf, len);
	if (sh->faulted)
		return -EFAULT;
	if (tp_ring_left(sh->wr.r) != sh->left_seen && rc == 0)
		return reader_left(t);
	return rc;
}

/* send_wake - a reader sleeps: wake it (a tail call, out of the fast path) */
static __attribute__((noinline)) int send_wake(struct tp *t)
{
	struct tp_shm *sh = shm_of(t);

	tp_ring_wake(sh->wr.r);
	return 0;
}

/* send_fast - the common send (16 to 64 bytes), built twice (@copy): a
 * few loads of words in lines this CPU holds and the inline ring write: no
 * call, no register saved, so the stores it queues are the slot's and the
 * head's only (a store queue full of slot stores waiting for their cache
 * lines is what bounds the rate; with AVX2 the copy is two stores, not
 * four) */
static inline __attribute__((always_inline)) int send_fast(struct tp *t, const void *buf, size_t len,
							   int copy)
{
	struct tp_shm *sh = shm_of(t);

	if (__builtin_expect(t->role == TP_SUB || sh->faulted || len < TP_RING_SHORT ||
			     len > TP_RING_SMALL || !tp_ring_fits(&sh->wr, len) ||
			     tp_ring_left(sh->wr.r) != sh->left_seen, 0))
		return send_slow(t, buf, len);
	if (len < 32)	/* the seeds' 24 and 25 bytes */
		return tp_ring_put_any(&sh->wr, buf, (uint32_t)len, TP_RING_COPY_SHORT) ? send_wake(t) : 0;
	return tp_ring_put_any(&sh->wr, buf, (uint32_t)len, copy) ? send_wake(t) : 0;
}

static int send_sse(struct tp *t, const void *buf, size_t len)
{
	return send_fast(t, buf, len, TP_RING_COPY_SMALL);
}

__attribute__((target("avx2")))
static int send_avx2(struct tp *t, const void *buf, size_t len)
{
	return send_fast(t, buf, len, TP_RING_COPY_SMALL_AVX);
}

/* which send this CPU runs (chosen once, when the program is loaded) */
static int (*resolve_send(void))(struct tp *, const void *, size_t)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2") ? send_avx2 : send_sse;
}

/* shm_send - write; on a full ring wait for the slowest reader (send_full).
 * The table holds what the resolver chose: a send is one indirect call, as
 * the call through the ifunc's slot was */
static int shm_send(struct tp *t, const void *buf, size_t len) __attribute__((ifunc("resolve_send")));

/* writer_gone - the ring's writer has died */
static bool writer_gone(const struct tp *t)
{
	const struct tp_shm *sh = shm_of(t);

	return pid_gone(__atomic_load_n(&sh->rd.r->w.pid, __ATOMIC_ACQUIRE));
}

/* shm_recv - read, waiting busy or on the futex */
static ssize_t shm_recv(struct tp *t, void *buf, size_t cap, uint64_t timeout_ns)
{
	struct tp_shm *sh = shm_of(t);
	int64_t now = 0, end = 0, check = 0;
	uint32_t spins = 0;
	ssize_t n;

	if (!sh->reading)
		return -EBADF;
	for (;;) {
		n = tp_ring_read(&sh->rd, buf, cap);
		if (__builtin_expect(sh->faulted, 0))
			return -EFAULT;
		if (__builtin_expect(n >= 0, 1)) {
			if (__builtin_expect(tp_msg_check(buf, (size_t)n), 1))
				return n;
			t->rej.malformed++;
			continue;
		}
		if (n == -EMSGSIZE) {	/* longer than @cap: skipped */
			t->rej.malformed++;
			continue;
		}
		if (n != -EAGAIN)
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
			if (writer_gone(t) && !tp_ring_available(&sh->rd))
				return -EPIPE;
		}
		if (now >= end)
			return -EAGAIN;
		if (!t->busy) {
			uint64_t left = (uint64_t)(end - now);

			tp_ring_wait(&sh->rd, left < STALL_CHECK_NS ? left : STALL_CHECK_NS);
		}
	}
}

/* shm_poll - wait for a message without taking it (one that is there
 * already is seen without a clock read: a poll with no timeout is a load) */
static int shm_poll(struct tp *t, uint64_t timeout_ns)
{
	struct tp_shm *sh = shm_of(t);
	int64_t end;

	if (!sh->reading)
		return -EBADF;
	if (tp_ring_available(&sh->rd))
		return 1;
	end = tp_now_ns() + (int64_t)timeout_ns;
	while (!tp_ring_available(&sh->rd)) {
		int64_t now = tp_now_ns();

		if (now >= end)
			return 0;
		if (sh->faulted)
			return -EFAULT;
		if (__atomic_load_n(&sh->rd.r->wake.closed, __ATOMIC_ACQUIRE) || writer_gone(t))
			return -EPIPE;
		if (t->busy)
			cpu_relax();
		else
			tp_ring_wait(&sh->rd, (uint64_t)(end - now) < STALL_CHECK_NS ?
				     (uint64_t)(end - now) : STALL_CHECK_NS);
	}
	return 1;
}

/* shm_close - close, leave, unmap, remove what we created */
static void shm_close(struct tp *t)
{
	struct tp_shm *sh = shm_of(t);

	if (sh->writing)
		tp_ring_writer_close(&sh->wr);
	if (sh->reading)
		tp_ring_reader_leave(&sh->rd);
	for (int i = 0; i < 2; i++) {
		if (sh->seg[i].ring) {
			bus_unwatch(&sh->seg[i]);
			munmap(sh->seg[i].ring, sh->seg[i].size);
		}
		if (sh->seg[i].created)
			shm_unlink(sh->seg[i].name);
	}
}

/* is_shm - @t is a ring of this file's (tp_claim and tp_shm_writer are
 * called on any transport) */
static inline bool is_shm(const struct tp *t)
{
	return t->ops == &tp_shm_ops;
}

/* tp_claim - the ring's next slot when the fast send would take the message
 * (send_fast's checks), else NULL. Here, not through the table: the ring's
 * inline claim, so a message costs one call each way */
void *tp_claim(struct tp *t, size_t len)
{
	struct tp_shm *sh = shm_of(t);

	if (__builtin_expect(!is_shm(t) || t->role == TP_SUB || sh->faulted ||
			     len < TP_HDR_LEN || len > t->msg_max || len > TP_RING_SMALL ||
			     !tp_ring_fits(&sh->wr, len) || tp_ring_left(sh->wr.r) != sh->left_seen, 0))
		return NULL;
	return tp_ring_claim(&sh->wr);
}

/* tp_shm_writer - the ring of a shm writer */
struct tp_ring_wr *tp_shm_writer(struct tp *t)
{
	struct tp_shm *sh = shm_of(t);

	return is_shm(t) && t->role != TP_SUB && sh->writing ? &sh->wr : NULL;
}

/* tp_shm_reader - the ring of a shm reader */
struct tp_ring_rd *tp_shm_reader(struct tp *t)
{
	struct tp_shm *sh = shm_of(t);

	return is_shm(t) && sh->reading ? &sh->rd : NULL;
}

/* tp_reject_malformed - a unit read in place was not one sane message */
void tp_reject_malformed(struct tp *t)
{
	t->rej.malformed++;
}

/* tp_commit - after a tp_claim that gave a slot */
int tp_commit(struct tp *t, size_t len)
{
	struct tp_shm *sh = shm_of(t);

	if (__builtin_expect(tp_ring_commit(&sh->wr, (uint32_t)len), 0))
		tp_ring_wake(sh->wr.r);
	return 0;
}

/* shm_peers - a writer's readers now */
static uint32_t shm_peers(const struct tp *t)
{
	return tp_ring_readers(shm_of(t)->seg[0].ring);
}

/* human - @b bytes as "12.3 GiB" */
static const char *human(uint64_t b, char *buf, size_t n)
{
	static const char *const unit[] = { "bytes", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = (double)b;
	int u = 0;

	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	if (u)
		snprintf(buf, n, "%.1f %s", v, unit[u]);
	else
		snprintf(buf, n, "%llu bytes", (unsigned long long)b);
	return buf;
}

/* ring_room - a creator's rings (pub: one of 64 readers, pong: two of one)
 * must fit in what the machine can hold: half the smaller of /dev/shm's free
 * space and the memory available. The segment lives in /dev/shm (tmpfs, so
 * in memory), is populated when mapped and locked with the rest of the
 * program (mlockall): none of it can be reclaimed during the run, and the
 * other half is the room left to everything else. Checked before anything
 * is created, so a ring that cannot fit fails at once with the figures,
 * not late in mmap or after /dev/shm filled up. */
static int ring_room(const struct tp_opts *o, enum tp_role role, struct jtr_err *e)
{
	uint32_t rings = role == TP_PONG ? 2 : 1;
	size_t one = tp_ring_size(o->slots, o->msg_max, role == TP_PONG ? 1 : TP_RING_MAX_READERS);
	uint64_t need = (uint64_t)one * rings, shm = UINT64_MAX, can;
	uint64_t mem = jtr_proc_kb("/proc/meminfo", "MemAvailable");
	struct statvfs sv;
	char a[32], b[32], c[32], d[32];

	if (role != TP_PUB && role != TP_PONG)
		return 0;
	if (statvfs("/dev/shm", &sv) == 0)
		shm = (uint64_t)sv.f_bavail * sv.f_frsize;
	if (!mem)
		mem = UINT64_MAX;	/* unknown: /dev/shm alone bounds it */
	can = (shm < mem ? shm : mem) / 2;
	if (need <= can)
		return 0;
	return jtr_err_set(e, -ENOMEM, "%s of %u slots of %u-byte messages need%s %s; this "
			   "machine can hold %s (half the smaller of /dev/shm's free %s and %s of "
			   "memory available); use fewer --slots or a shorter -m",
			   rings > 1 ? "two rings" : "a ring", o->slots, o->msg_max,
			   rings > 1 ? "" : "s", human(need, a, sizeof(a)), human(can, b, sizeof(b)),
			   shm == UINT64_MAX ? "?" : human(shm, c, sizeof(c)),
			   mem == UINT64_MAX ? "?" : human(mem, d, sizeof(d)));
}

/* shm_check - the segment's name, the ring's slots and readers, its room */
static int shm_check(const struct tp_opts *o, enum tp_role role, const char *addr,
		     struct jtr_err *e)
{
	if (!*addr || strlen(addr) > 64 || strchr(addr, '/'))
		return jtr_err_set(e, -EINVAL, "'%s' is not a segment name: use 1-64 characters "
				   "without '/', e.g. %s", addr, TP_DEFAULT_SHM);
	if (o->slots < 2 || (o->slots & (o->slots - 1)) || o->slots > (1u << 24))
		return jtr_err_set(e, -EINVAL, "%u ring slots: use a power of two from 2 to 16M",
				   o->slots);
	if (o->subs < 1 || o->subs > TP_RING_MAX_READERS)
		return jtr_err_set(e, -EINVAL, "%u subscribers: a ring has 1-%d readers",
				   o->subs, TP_RING_MAX_READERS);
	return ring_room(o, role, e);
}

const struct tp_ops tp_shm_ops = {
	.flags = TP_P_RING | TP_P_PATH,
	.default_addr = TP_DEFAULT_SHM,
	.max_msg = 1u << 24,
	.unit = "ring slot",
	.name_what = "segment name",
	.name_max = 64,
	.priv_size = sizeof(struct tp_shm),
	.check = shm_check,
	.open = open_shm,
	.send = shm_send,
	.recv = shm_recv,
	.poll = shm_poll,
	.close = shm_close,
	.peers = shm_peers,
	.peers_lost = shm_peers_lost,
	.fault = shm_fault,
	.numa_where = shm_numa_where,
};
