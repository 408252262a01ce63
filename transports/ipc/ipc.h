/* SPDX-License-Identifier: GPL-2.0-only */
/* ipc.h - what the parts of jtr ipc share (internal to transports/ipc/).
 *
 * jtr ipc moves N objects of SIZE bytes, in batches of BATCH bytes, from one
 * writer process to one or more reader processes (every reader gets every
 * object) through five methods:
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
 *
 * The parts, one concern a file:
 *   objects.c  what an object carries: filling a batch, checking one
 *   procs.c    the writer and reader processes
 *   methods.c  the five methods behind one interface, for the processes
 *   shm.c      the shm methods: the segment, its queue or ring
 *   tcp.c      the tcp methods: loopback pairs, blocking and epoll I/O
 *   coord.c    the coordinator: one row's processes, watched to the end
 *   output.c   the table and result.json (jtr-ipc/1)
 *   main.c     options, the rows, the run
 *
 * One row (a method, a reader count and a batch size) runs at a time; its
 * settings, its shared board and its resources are one struct ipc_run,
 * passed to every function that needs them. The children are forked from
 * the coordinator and inherit it. With --repeat N a row runs N times in a
 * row (each time a struct ipc_row of its own, its repetition); the table
 * gives each row's average, standard deviation, minimum and maximum over the
 * repetitions that finished.
 */
#ifndef JTR_IPC_H
#define JTR_IPC_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "jtr_probe.h"
#include "tp_ipcq.h"
#include "tp_ring.h"

#define IPC_FORMAT "jtr-ipc/1"
#define IPC_MAX_READERS 8
#define IPC_MAX_BATCHES 16
#define IPC_MAX_FANOUTS 8
#define IPC_MAX_REPEAT 100

enum ipc_method { M_SHM_MUTEX, M_SHM_ADAPTIVE, M_SHM_LOCKLESS, M_TCP, M_TCP_EPOLL, M_COUNT };

extern const char *const ipc_method_names[M_COUNT];

/* the options: what every row shares */
struct ipc_cfg {
	uint64_t objects;
	uint32_t size;
	uint32_t batches[IPC_MAX_BATCHES];
	int nbatches;
	bool methods[M_COUNT];
	uint32_t fanouts[IPC_MAX_FANOUTS];
	int nfanouts;
	int cpus[CPU_SETSIZE];
	int ncpus;
	uint32_t slots;
	uint32_t low_water;	/* 0: slots / 2 */
	bool low_water_given;
	bool nagle;
	uint64_t timeout_ns, pace_ns, reader_pace_ns;
	uint64_t drop_every, corrupt_every;
	uint32_t repeat;	/* repetitions of every row (--repeat, default 1) */
};

/* what one process counted, on a line of its own in the shared board */
struct ipc_pstat {
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
struct ipc_board {
	uint32_t stop;		/* the writer stops after this batch */
	uint32_t abort;		/* readers stop waiting too: the writer is gone */
	struct ipc_pstat w;
	struct ipc_pstat r[IPC_MAX_READERS];
};

/* one row: a method, a reader count and a batch size; with --repeat, one
 * repetition of it */
struct ipc_row {
	enum ipc_method m;
	uint32_t rep;		/* repetition, from 0 */
	uint32_t readers;
	uint32_t batch;		/* bytes asked for */
	uint32_t opb;		/* objects per batch */
	uint32_t slots, low_water;
	int sndbuf, rcvbuf;	/* tcp: socket buffers as the kernel set them */
	bool ran, partial, ok;
	char err[256];
	struct ipc_pstat w, r[IPC_MAX_READERS];
	struct rusage ru_w, ru_r[IPC_MAX_READERS];
	double elapsed_s;
};

/* the row in progress: its settings, its board and its resources */
struct ipc_run {
	const struct ipc_cfg *cfg;
	struct ipc_board *board;
	struct ipc_row *row;
	struct jtr_probe *p;		/* the coordinator's errors and progress */
	char shm_name[64];
	void *shm;
	size_t shm_size;
	int efd_w, efd_r[IPC_MAX_READERS], stop_fd;
	int wfd[IPC_MAX_READERS], rfd[IPC_MAX_READERS];	/* tcp: writer's and readers' ends */
	int ready[2], go[2];
	pid_t pid_w, pid_r[IPC_MAX_READERS];
	pid_t coordinator;
};

/* one end of the row's transport, in a writer or reader process */
struct ipc_xport {
	struct ipc_run *r;
	struct tp_ipcq_end qe;
	struct tp_ring_wr wr;
	struct tp_ring_rd rd;
	int epfd;
	int fd;			/* a reader's socket */
	int idx;		/* reader index, -1: the writer */
	struct ipc_pstat *s;
};

/* objects.c: a reader's running check */
struct ipc_check {
	uint64_t next, lost, dups, corrupt, first_bad;
};

/* ipc_fill_batch - @n objects from sequence number @seq into @buf; returns
 * the next number (--drop-every uses numbers up without sending them,
 * --corrupt-every spoils check words) */
uint64_t ipc_fill_batch(const struct ipc_cfg *c, unsigned char *buf, uint32_t n, uint64_t seq);

/* ipc_check_objects - @n objects at @p: sequence numbers in order, check words right */
void ipc_check_objects(struct ipc_check *k, const unsigned char *p, uint64_t n, uint32_t size);

/* ipc_check_tail - a piece of an object was left at end of stream */
void ipc_check_tail(struct ipc_check *k);

/* procs.c: the children's work; each returns the process's exit status (0,
 * or 1 with the reason in its line of the board), which coord.c's
 * fork_child ends it with */

/* ipc_writer_main - the writer process: build and send every batch, end the stream */
int ipc_writer_main(struct ipc_run *r);

/* ipc_reader_main - a reader process: take and check every object to end of stream */
int ipc_reader_main(struct ipc_run *r, int idx);

/* methods.c: the row's method behind one interface (child side); an open
 * returns -errno with the message in @e */
int ipc_writer_open(struct ipc_xport *x, struct jtr_err *e);
void ipc_writer_close(struct ipc_xport *x);
int ipc_reader_open(struct ipc_xport *x, struct jtr_err *e);
int ipc_send_batch(struct ipc_xport *x, const unsigned char *buf, size_t len);
ssize_t ipc_recv_batch(struct ipc_xport *x, unsigned char *p, size_t cap);
void ipc_sync_counts(struct ipc_xport *x);

/* shm.c (setup: the coordinator's, -ERANGE for a queue the options make
 * too large, else -errno, the message in @e) */
uint32_t ipc_queue_slots(const struct ipc_cfg *c, uint32_t batch);
int ipc_shm_setup(struct ipc_run *r, int n, struct jtr_err *e);
void ipc_shm_unlink(struct ipc_run *r);
void ipc_shm_release(struct ipc_run *r);
int ipc_shm_writer_open(struct ipc_xport *x, struct jtr_err *e);
int ipc_shm_reader_open(struct ipc_xport *x, struct jtr_err *e);
int ipc_shm_send(struct ipc_xport *x, const unsigned char *buf, size_t len);
ssize_t ipc_shm_recv(struct ipc_xport *x, unsigned char *p, size_t cap);
void ipc_shm_writer_close(struct ipc_xport *x);

/* tcp.c */
int ipc_tcp_setup(struct ipc_run *r, struct jtr_err *e);
int ipc_tcp_writer_open(struct ipc_xport *x, struct jtr_err *e);
int ipc_tcp_reader_open(struct ipc_xport *x, struct jtr_err *e);
int ipc_tcp_send(struct ipc_xport *x, const unsigned char *buf, size_t len);
ssize_t ipc_tcp_recv(struct ipc_xport *x, unsigned char *p, size_t cap);
void ipc_tcp_writer_close(struct ipc_xport *x);

/* coord.c */

/* ipc_cleanup - remove the shm segment of the row in progress, if any
 * (an exit handler: an error exit must leave nothing in /dev/shm) */
void ipc_cleanup(void);

/* ipc_run_row - one row: its processes started, watched and judged */
void ipc_run_row(struct jtr_probe *p, const struct ipc_cfg *c, struct ipc_board *b,
		 struct ipc_row *w, int n);

/* output.c: @rows holds @n rows of c->repeat repetitions each (row i's
 * repetition k at rows[i * c->repeat + k]; one not run has ran false) */

/* a row's figures over its repetitions that finished (ran, ok, not partial) */
struct ipc_stats {
	uint32_t ran, finished;
	bool ok, partial;	/* no repetition failed; one was cut short */
	double avg_s, stdev_s, min_s, max_s;	/* elapsed; stdev: sample (n - 1) */
	double empty, full, cpu_s;	/* averages per repetition */
	uint64_t objects;	/* objects every reader received in one repetition */
};

void ipc_row_stats(const struct ipc_row *g, uint32_t repeat, struct ipc_stats *s);
void ipc_table_head(FILE *f, const struct ipc_cfg *c);
void ipc_table_row(FILE *f, const struct ipc_cfg *c, const struct ipc_row *g);
void ipc_table_tail(FILE *f, const struct ipc_cfg *c, const struct ipc_row *rows, int n);
void ipc_print_failures(FILE *f, const char *prefix, const struct ipc_cfg *c,
			const struct ipc_row *rows, int n);
void ipc_write_outputs(struct jtr_probe *p, const struct ipc_cfg *c, const struct ipc_row *rows,
		       int n);

/* ipc_sleep_ns - nanosleep (procs.c) */
void ipc_sleep_ns(uint64_t ns);

#endif
