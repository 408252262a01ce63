// SPDX-License-Identifier: GPL-2.0-only
/* tp_prog.c - main()'s transport helpers for ping, pong, pub and sub. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "jtr_cli.h"
#include "tp_numa.h"
#include "tp_prog.h"
#include "tp_zip.h"

/* tp_prog_init - defaults */
void tp_prog_init(struct tp_prog *tp)
{
	tp_opts_init(&tp->o, TP_UDP);
	tp->timeout_ns = 5 * JTR_NS_PER_S;
	tp->stats_every_ns = TP_DEFAULT_STATS_EVERY_NS;
	tp->latency_max = TP_DEFAULT_LATENCY_MAX;
	tp_stats_opts_init(&tp->stats_opts);
}

/* buf_opt - --sndbuf or --rcvbuf: bytes, K/M/G x1024, in tp_check's range (checked
 * here too, so that the message quotes the value as it was given) */
static uint32_t buf_opt(struct jtr_probe *p, const char *opt, const char *arg)
{
	struct jtr_err e;
	uint64_t v;

	if (jtr_parse_size(arg, 0, UINT64_MAX, &v, &e) < 0)
		jtr_usage_error(p, "%s %s: %s", opt, arg, e.msg);
	if (v < TP_SOCK_BUF_MIN || v > TP_SOCK_BUF_MAX)
		jtr_usage_error(p, "%s %s: use a size from 1K to 512M, e.g. 256K, or leave the "
				"option out for the default (4M)", opt, arg);
	return (uint32_t)v;
}

/* tp_prog_legacy_only - see tp_prog.h */
void tp_prog_legacy_only(struct jtr_probe *p, const struct tp_prog *tp, enum tp_legacy style)
{
	/* stdout is the other tool's lines only: where the results are goes to stderr */
	p->results_on_stderr = tp->legacy_style >= TP_LEGACY_UM_LAT;
	static const char *const names[] = {
		[TP_LEGACY_UM_LAT] = "um_lat", [TP_LEGACY_UM_PERF] = "um_perf",
	};

	if (tp->legacy_style >= TP_LEGACY_UM_LAT && tp->legacy_style != style)
		jtr_usage_error(p, "--legacy-output=%s: %s prints jtr's earlier lines or %s's; give "
				"--legacy-output or --legacy-output=%s", names[tp->legacy_style],
				p->prog, names[style], names[style]);
}

/* tp_prog_opt - the transport options */
bool tp_prog_opt(struct jtr_probe *p, struct tp_prog *tp, int opt, const char *arg)
{
	switch (opt) {
	case JTR_TRANSPORT_C: {
		char kinds[128];

		if (tp_kind_parse(arg, &tp->o.kind) < 0)
			jtr_usage_error(p, "-T %s: unknown transport; use %s", arg,
					tp_kind_list(0, kinds, sizeof(kinds)));
		return true;
	}
	case JTR_ADDR_C: tp->o.addr = arg; return true;
	case 'b': tp->o.busy = true; tp->o.epoll = false; return true;
	case TP_OPT_RECV:
		if (!strcmp(arg, "blocking") || !strcmp(arg, "block")) {
			tp->o.busy = tp->o.epoll = false;
		} else if (!strcmp(arg, "busy") || !strcmp(arg, "busy-poll")) {
			tp->o.busy = true;
			tp->o.epoll = false;
		} else if (!strcmp(arg, "epoll")) {
			tp->o.busy = false;
			tp->o.epoll = true;
		} else {
			jtr_usage_error(p, "--recv %s: unknown receive mode; use blocking, busy or epoll",
					arg);
		}
		return true;
	case TP_OPT_STATS_EVERY:
		tp->stats_every_ns = jtr_opt_duration(p, "--stats-every", arg, 0,
						      24ULL * 3600 * JTR_NS_PER_S);
		if (tp->stats_every_ns && tp->stats_every_ns < 10 * JTR_NS_PER_MS)
			jtr_usage_error(p, "--stats-every %s: use at least 10ms, or 0 for no statistics",
					arg);
		return true;
	case TP_OPT_LATENCY_FILE: tp->latency_file = true; return true;
	case TP_OPT_STATS_PRINT: tp->stats_print = true; return true;
	case TP_OPT_LEGACY_OUTPUT:
		if (!arg || !strcmp(arg, "jtr"))
			tp->legacy_style = TP_LEGACY_JTR;
		else if (!strcmp(arg, "um_lat"))
			tp->legacy_style = TP_LEGACY_UM_LAT;
		else if (!strcmp(arg, "um_perf"))
			tp->legacy_style = TP_LEGACY_UM_PERF;
		else
			jtr_usage_error(p, "--legacy-output=%s: unknown style; give jtr, um_lat (jtr "
					"ping) or um_perf (jtr pub, jtr sub)", arg);
		tp->legacy_output = tp->legacy_style == TP_LEGACY_JTR;
		return true;
	case TP_OPT_LATENCY_MAX:
		tp->latency_max = jtr_opt_count(p, "--latency-max", arg, 1, 1ULL << 32);
		return true;
	case TP_OPT_IFACE: tp->o.iface = arg; return true;
	case TP_OPT_TTL: tp->o.ttl = jtr_opt_int(p, "--ttl", arg, 0, 255); return true;
	case TP_OPT_WIDE: tp->o.wide = true; return true;
	case TP_OPT_SLOTS: {
		/* a power of two: K and M are powers of 1024 here (16M is 2^24;
		 * as a count it was 16,000,000, "not a power of two") */
		uint64_t v = 0;

		if (jtr_parse_size(arg, 2, 1u << 24, &v, NULL) < 0 || (v & (v - 1)))
			jtr_usage_error(p, "--slots %s: give a power of two from 2 to 16M (K and M "
					"are 1024 and 1048576 here), e.g. 1024, 4K or 16M", arg);
		tp->o.slots = (uint32_t)v;
		return true;
	}
	case TP_OPT_NUMA_NODE:
		tp->o.numa_node = jtr_opt_int(p, "--numa-node", arg, 0, 1023);
		return true;
	case TP_OPT_CROSS_NUMA: tp->o.cross_numa = true; return true;
	case TP_OPT_SNDBUF: tp->o.sndbuf = buf_opt(p, "--sndbuf", arg); return true;
	case TP_OPT_RCVBUF: tp->o.rcvbuf = buf_opt(p, "--rcvbuf", arg); return true;
	case TP_OPT_NAGLE: tp->o.nagle = true; return true;
	case TP_OPT_WAIT:
		tp->o.wait_ns = jtr_opt_duration(p, "--wait", arg, JTR_NS_PER_MS,
						 24ULL * 3600 * JTR_NS_PER_S);
		tp->wait_given = true;
		return true;
	case TP_OPT_TIMEOUT:
		tp->timeout_ns = jtr_opt_duration(p, "--timeout", arg, JTR_NS_PER_MS,
						  24ULL * 3600 * JTR_NS_PER_S);
		return true;
	default:
		return tp_stats_opt(p, &tp->stats_opts, opt, arg);
	}
}

/* tp_prog_check - validate, and say it when multicast may leave the host */
void tp_prog_check(struct jtr_probe *p, struct tp_prog *tp, enum tp_role role)
{
	struct jtr_err e;

	jtr_err_clear(&e);
	if (tp_check(&tp->o, role, &e) < 0)
		jtr_usage_error(p, "%s", e.msg);
	if (tp_prog_has(tp, TP_P_MULTICAST) && tp_mcast_is_wide(&tp->o, &e) > 0)
		jtr_warn(p, "multicast to %s with TTL %d on %s can leave this host: it can flood "
			 "networks and overload switch supervisors; use a group in 239.255.0.0/16 "
			 "with TTL 0 unless you mean it", tp->o.addr ? tp->o.addr : TP_DEFAULT_GROUP,
			 tp->o.ttl, tp->o.iface ? tp->o.iface : TP_DEFAULT_IFACE);
}

/* tp_prog_open - open, or exit with the library's message */
struct tp *tp_prog_open(struct jtr_probe *p, struct tp_prog *tp, enum tp_role role)
{
	struct jtr_err e;
	struct tp *t;
	int rc;

	jtr_err_clear(&e);
	rc = tp_open(&t, &tp->o, role, &e);
	if (rc == 0) {
		if (tp_note(t))
			jtr_warn(p, "%s", tp_note(t));
		return tp->t = t;
	}
	if (!e.msg[0])
		snprintf(e.msg, sizeof(e.msg), "%s", strerror(-rc));
	switch (rc) {
	case -EADDRINUSE: case -EADDRNOTAVAIL: case -EINVAL: case -EMSGSIZE: case -ETIMEDOUT:
	case -EPERM: case -EEXIST: case -EBUSY: case -EPROTO:
		jtr_usage_error(p, "%s", e.msg);
	default:
		jtr_fatal(p, "%s", e.msg);
	}
}

/* tp_prog_privileged - FIFO, mlock, drop, signals; no results folder */
void tp_prog_privileged(struct jtr_probe *p)
{
	jtr_probe_elevated(p);		/* FIFO, memory locked within the user's limit, drop */
	jtr_probe_signals(false);	/* nothing to write: the notice says "stopping" */
}

/* tp_prog_recv_name - the receive mode */
const char *tp_prog_recv_name(const struct tp_prog *tp)
{
	return tp_recv_name(&tp->o);
}

/* tp_prog_input - "  name:  value" */
void tp_prog_input(FILE *f, const char *name, const char *fmt, ...)
{
	va_list ap;

	fprintf(f, "  %-22s ", name);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
}

/* buf_input - "send buffer: 524288 bytes (--sndbuf 262144; Linux doubles it)" */
static void buf_input(FILE *f, const char *name, const char *opt, uint32_t asked, int got,
		      const char *sysctl)
{
	uint64_t want = 2ULL * (asked ? asked : TP_SOCK_BUF_DEFAULT);
	char how[64];

	if (asked)
		snprintf(how, sizeof(how), "%s %u", opt, asked);
	else
		snprintf(how, sizeof(how), "default %u", TP_SOCK_BUF_DEFAULT);
	if (got <= 0)
		tp_prog_input(f, name, "%s", how);
	else if ((uint64_t)got == want)
		tp_prog_input(f, name, "%d bytes (%s; Linux doubles it)", got, how);
	else if ((uint64_t)got < want)
		tp_prog_input(f, name, "%d bytes (%s; capped at twice %s: raise it, or run as "
			      "root to go past it)", got, how, sysctl);
	else
		tp_prog_input(f, name, "%d bytes (%s; the kernel's minimum)", got, how);
}

/* sock_inputs - the socket buffers, Nagle and (tcp) the segments so far */
static void sock_inputs(FILE *f, const struct tp_prog *tp)
{
	const struct tp_opts *o = &tp->o;
	struct tp_sock_info si = { 0 };

	if (!tp_prog_has(tp, TP_P_SOCKET))
		return;
	if (tp->t)
		tp_sock_info(tp->t, &si);
	buf_input(f, "send buffer:", "--sndbuf", o->sndbuf, si.sndbuf, "net.core.wmem_max");
	buf_input(f, "receive buffer:", "--rcvbuf", o->rcvbuf, si.rcvbuf, "net.core.rmem_max");
	if (si.have_drops && (si.drops || tp_prog_has(tp, TP_P_DATAGRAM)))
		tp_prog_input(f, "socket drops:", "%u%s", si.drops, si.drops ?
			      " (dropped by the kernel at this socket: its receive buffer was full; "
			      "--rcvbuf)" : "");
	if (!tp_prog_has(tp, TP_P_NAGLE))
		return;
	tp_prog_input(f, "nagle:", "%s", o->nagle ? "on (--nagle)" : "off (TCP_NODELAY)");
	if (si.have_segs)
		tp_prog_input(f, "tcp:", "sent %llu messages in %u segments, received %llu in %u "
			      "segments (Nagle %s)", (unsigned long long)si.msgs_out, si.segs_out,
			      (unsigned long long)si.msgs_in, si.segs_in, si.nodelay ? "off" : "on");
}

/* tp_prog_inputs - the command and the transport's inputs */
void tp_prog_inputs(FILE *f, const struct jtr_probe *p, const struct tp_prog *tp, unsigned what)
{
	const struct tp_opts *o = &tp->o;

	fprintf(f, "\n--- inputs ---\n");
	fprintf(f, "  %-22s %s", "command:", p->prog);
	for (int i = 1; i < p->argc; i++)
		fprintf(f, " %s", p->argv[i]);
	fputc('\n', f);
	tp_prog_input(f, "transport:", "%s", tp_kind_name(o->kind));
	tp_prog_input(f, "address:", "%s", o->addr ? o->addr : tp_default_addr(o->kind));
	tp_prog_input(f, "receive:", "%s", tp_prog_recv_name(tp));
	if (tp_prog_has(tp, TP_P_MULTICAST)) {
		tp_prog_input(f, "interface:", "%s", o->iface ? o->iface : TP_DEFAULT_IFACE);
		tp_prog_input(f, "ttl:", "%d", o->ttl);
	}
	if (tp_prog_has(tp, TP_P_RING)) {
		tp_prog_input(f, "ring slots:", "%u", o->slots);
		int reader, ring;

		if (tp->t && tp_numa_where(tp->t, &reader, &ring))
			tp_prog_input(f, "numa:", "reader on node %d, ring on node %d (%d node%s)%s",
				      reader, ring, tp_numa_nodes(), tp_numa_nodes() > 1 ? "s" : "",
				      o->cross_numa ? ", --cross-numa" : "");
	}
	sock_inputs(f, tp);
	tp_prog_input(f, "wait for peer:", "%.3f s", (double)o->wait_ns / 1e9);
	tp_prog_input(f, "peer timeout:", "%.3f s", (double)tp->timeout_ns / 1e9);
	if (tp->stats_every_ns) {
		const struct tp_stats_opts *so = &tp->stats_opts;

		tp_prog_input(f, "stats every:", "%.3f s (%s)", (double)tp->stats_every_ns / 1e9,
			      so->stats_file ? so->stats_file : TP_STATS_FILE);
		tp_prog_input(f, "start-up:", "%.3f s%s",
			      (double)tp_stats_startup_ns(so, tp->stats_every_ns) / 1e9,
			      so->startup_given ? "" : " (one stats interval, at least 1 s)");
	} else {
		tp_prog_input(f, "stats every:", "off");
	}
	if (tp->latency_file)
		tp_prog_input(f, "latency file:", "latency.csv (up to %llu samples)",
			      (unsigned long long)tp->latency_max);
	else if (what & TP_IN_LATENCY_FILE)
		tp_prog_input(f, "latency file:", "none");
	tp_prog_input(f, "timebase:", "%s", jtr_tb_name(p->tb.kind));
	if (p->fifo_prio)
		tp_prog_input(f, "fifo priority:", "%d", p->fifo_prio);
	else
		tp_prog_input(f, "fifo priority:", "none");
	if (what & TP_IN_HIST)
		tp_prog_input(f, "histogram error:", "%g %%", p->hist_error * 100);
}

/* tp_prog_finish - the files, the end of the result, commit */
void tp_prog_finish(struct jtr_probe *p, struct jtr_json *j, struct jtr_afile *txt,
		    struct jtr_afile *res, struct tp_stats *st, const struct tp_latlog *l,
		    const struct tp_olog *o)
{
	jtr_json_obj_begin(j, "files");
	jtr_json_str(j, "summary", st ? tp_stats_summary_name(st) : TP_SUMMARY_FILE);
	if (st && tp_stats_file_name(st))
		jtr_json_str(j, "stats", tp_stats_file_name(st));
	if (l && l->cap)
		jtr_json_str(j, "latency", "latency.csv");
	if (o && o->on)
		jtr_json_str(j, "outliers", "outliers.csv");
	jtr_json_obj_end(j);
	jtr_probe_result_end(p, j);
	jtr_probe_commit_file(p, txt);
	jtr_probe_commit_file(p, res);
	if (st)
		tp_stats_commit(st, p);
	if (o && o->on)
		tp_olog_write_csv(p, o);
}

/* tp_prog_add_stream - see tp_prog.h */
void tp_prog_add_stream(struct tp_seq *seq, struct tp_rejects *rej, const struct tp_seq *s,
			const struct tp_rejects *r, int k)
{
	if (!k) {
		if (seq)
			*seq = *s;
		*rej = *r;
		return;
	}
	if (seq) {
		seq->received += s->received;
		seq->lost += s->lost;
		seq->duplicates += s->duplicates;
		seq->reordered += s->reordered;
		seq->stale += s->stale;
		seq->out_of_window += s->out_of_window;
	}
	rej->forged += r->forged;
	rej->out_of_window += r->out_of_window;
	rej->malformed += r->malformed;
	rej->foreign += r->foreign;
	rej->before_session += r->before_session;
	if (!rej->foreign_from[0])
		memcpy(rej->foreign_from, r->foreign_from, sizeof(rej->foreign_from));
}

/* uint_or_null - @v, or null when !@have */
static void uint_or_null(struct jtr_json *j, const char *name, bool have, uint64_t v)
{
	if (have)
		jtr_json_uint(j, name, v);
	else
		jtr_json_null(j, name);
}

/* write_sock - the buffers read back and asked for, Nagle, tcp's segments */
static void write_sock(struct jtr_json *j, const struct tp_prog *tp)
{
	struct tp_sock_info si = { 0 };
	bool have = tp->t && tp_sock_info(tp->t, &si);

	uint_or_null(j, "sndbuf_bytes", have && si.sndbuf > 0, (uint64_t)si.sndbuf);
	uint_or_null(j, "rcvbuf_bytes", have && si.rcvbuf > 0, (uint64_t)si.rcvbuf);
	uint_or_null(j, "sndbuf_asked", tp->o.sndbuf, tp->o.sndbuf);
	uint_or_null(j, "rcvbuf_asked", tp->o.rcvbuf, tp->o.rcvbuf);
	if (tp_prog_has(tp, TP_P_NAGLE))
		jtr_json_bool(j, "nodelay", have ? si.nodelay : !tp->o.nagle);
	else
		jtr_json_null(j, "nodelay");
	uint_or_null(j, "segs_out", si.have_segs, si.segs_out);
	uint_or_null(j, "segs_in", si.have_segs, si.segs_in);
	uint_or_null(j, "socket_drops", have && si.have_drops, si.drops);
}

/* zip_ratio - bytes before compression for each byte on the wire */
static double zip_ratio(const struct tp_zip *z)
{
	return z->wire_bytes ? (double)z->raw_bytes / (double)z->wire_bytes : 0.0;
}

void tp_prog_write_zip(struct jtr_json *j, const struct tp_zip *z, bool pub)
{
	if (!z->msgs && !z->bad) {
		jtr_json_null(j, "compression");
		return;
	}
	jtr_json_obj_begin(j, "compression");
	jtr_json_str(j, "method", "zlib");
	if (pub) jtr_json_int(j, "level", z->level); else jtr_json_null(j, "level");
	jtr_json_uint(j, "messages", z->msgs);
	jtr_json_uint(j, "sent_as_they_were", z->kept);
	jtr_json_uint(j, "bad", z->bad);
	jtr_json_uint(j, "raw_bytes", z->raw_bytes);
	jtr_json_uint(j, "wire_bytes", z->wire_bytes);
	jtr_json_fixed(j, "ratio", zip_ratio(z), 3);
	jtr_json_fixed(j, "ns_per_message", z->msgs ? (double)z->ns / (double)z->msgs : 0.0, 1);
	jtr_json_obj_end(j);
}

void tp_prog_zip_input(FILE *f, const struct tp_zip *z, bool pub)
{
	const double n = z->msgs ? (double)z->msgs : 1.0;
	char how[32];

	if (!z->msgs && !z->bad)
		return;
	if (pub)
		snprintf(how, sizeof(how), "zlib level %d", z->level);
	else
		snprintf(how, sizeof(how), "zlib");
	tp_prog_input(f, "compression:", "%s: %.1f bytes a message on the wire for %.1f (ratio "
		      "%.2f), %.0f ns a message to %s", how, (double)z->wire_bytes / n,
		      (double)z->raw_bytes / n, zip_ratio(z), (double)z->ns / n,
		      pub ? "compress" : "expand");
	if (pub && z->kept)
		tp_prog_input(f, "", "%llu message(s) sent as they were (not shorter compressed)",
			      (unsigned long long)z->kept);
	if (z->bad)
		tp_prog_input(f, "", "%llu compressed message(s) did not expand: turned away",
			      (unsigned long long)z->bad);
}

void tp_prog_write_frags(struct jtr_json *j, const struct tp_frag_tx *tx,
			 const struct tp_frag_rx *rx)
{
	if (!(tx && tx->max) && !(rx && (rx->frags || rx->bad))) {
		jtr_json_null(j, "fragments");
		return;
	}
	jtr_json_obj_begin(j, "fragments");
	if (tx) {
		jtr_json_uint(j, "max_bytes", tx->max);
		jtr_json_uint(j, "messages", tx->msgs);
		jtr_json_uint(j, "fragments", tx->frags);
	} else {
		jtr_json_null(j, "max_bytes");
		jtr_json_uint(j, "messages", rx->msgs);
		jtr_json_uint(j, "fragments", rx->frags);
		jtr_json_uint(j, "incomplete", rx->incomplete);
		jtr_json_uint(j, "orphans", rx->orphans);
		jtr_json_uint(j, "bad", rx->bad);
	}
	jtr_json_obj_end(j);
}

void tp_prog_frags_input(FILE *f, const struct tp_frag_tx *tx, const struct tp_frag_rx *rx)
{
	if (tx && tx->max)
		tp_prog_input(f, "fragments:", "at most %u bytes each: %llu messages sent in %llu "
			      "fragments", tx->max, (unsigned long long)tx->msgs,
			      (unsigned long long)tx->frags);
	else if (rx && (rx->frags || rx->bad))
		tp_prog_input(f, "fragments:", "%llu messages put together from %llu fragments; "
			      "%llu dropped for a missing fragment (%llu fragments of theirs), %llu "
			      "fragments that fit no message", (unsigned long long)rx->msgs,
			      (unsigned long long)rx->frags, (unsigned long long)rx->incomplete,
			      (unsigned long long)rx->orphans, (unsigned long long)rx->bad);
}

/* tp_prog_write_transport - kind, address, mode, length */
void tp_prog_write_transport(struct jtr_json *j, const struct tp_prog *tp, uint32_t msg_len)
{
	int reader, ring;

	jtr_json_obj_begin(j, "transport");
	jtr_json_str(j, "kind", tp_kind_name(tp->o.kind));
	jtr_json_str(j, "address", tp->o.addr ? tp->o.addr : tp_default_addr(tp->o.kind));
	jtr_json_str(j, "receive", tp_prog_recv_name(tp));
	jtr_json_uint(j, "msg_len", msg_len);
	if (tp_prog_has(tp, TP_P_MULTICAST)) {
		jtr_json_str(j, "iface", tp->o.iface ? tp->o.iface : TP_DEFAULT_IFACE);
		jtr_json_int(j, "ttl", tp->o.ttl);
	}
	if (tp_prog_has(tp, TP_P_RING))
		jtr_json_uint(j, "slots", tp->o.slots);
	else
		write_sock(j, tp);
	if (tp->t && tp_numa_where(tp->t, &reader, &ring)) {
		jtr_json_obj_begin(j, "numa");
		jtr_json_int(j, "nodes", tp_numa_nodes());
		jtr_json_int(j, "reader_node", reader);
		jtr_json_int(j, "ring_node", ring);
		jtr_json_bool(j, "cross", tp->o.cross_numa);
		jtr_json_obj_end(j);
	}
}

/* tp_prog_write_run - one run object */
void tp_prog_write_run(struct jtr_json *j, const struct jtr_probe *p, const char *name,
		       int cpu, int64_t start_mono_ns, int64_t end_mono_ns, uint64_t duration_ns,
		       const struct jtr_hist *h, const struct tp_olog *o)
{
	jtr_result_run_begin(j, name, cpu, p->partial, start_mono_ns, end_mono_ns, duration_ns, h);
	if (o && o->on)
		tp_olog_write_run(j, o, duration_ns, h);
	jtr_result_write_hist(j, "histogram", h);
	jtr_json_obj_end(j);
}

/* tp_prog_write_seq - received, lost, duplicates, reordered, stale */
void tp_prog_write_seq(struct jtr_json *j, const struct tp_seq *s)
{
	jtr_json_uint(j, "received", s->received);
	jtr_json_uint(j, "lost", s->lost);
	jtr_json_uint(j, "duplicates", s->duplicates);
	jtr_json_uint(j, "reordered", s->reordered);
	jtr_json_uint(j, "stale", s->stale);
	if (s->started)
		jtr_json_uint(j, "first_seq", s->first);
	else
		jtr_json_null(j, "first_seq");
}

/* tp_prog_strerror - a send's or receive's error in words */
const char *tp_prog_strerror(const struct tp_prog *tp, int rc)
{
	static struct jtr_err e;

	if (rc == -EFAULT && tp->t && tp_fault(tp->t, &e) < 0)
		return e.msg;
	if (rc == -EPROTO)
		return "the stream's framing was lost (a header that cannot be one): the peer is "
		       "not a jtr program of this version";
	if (rc == -EMSGSIZE)
		return "a message longer than the receive buffer";
	return strerror(-rc);
}

/* tp_prog_rejects - the library's counts with the program's */
void tp_prog_rejects(const struct tp_prog *tp, struct tp_rejects *r)
{
	struct tp_rejects lib;

	if (!tp->t)
		return;
	tp_rejected(tp->t, &lib);
	r->malformed = lib.malformed;
	r->foreign = lib.foreign;
	r->before_session = lib.before_session;
	memcpy(r->foreign_from, lib.foreign_from, sizeof(r->foreign_from));
}

/* tp_prog_warn_rejects - one warning listing what was turned away */
void tp_prog_warn_rejects(struct jtr_probe *p, const struct tp_prog *tp,
			  const struct tp_rejects *r, bool judged)
{
	char foreign[400] = "";
	uint64_t n = r->malformed + r->foreign + r->before_session +
		     (judged ? r->forged + r->out_of_window : 0);
	size_t k = 0;

	if (!n)
		return;
	if (r->foreign)
		k += (size_t)snprintf(foreign, sizeof(foreign), ", %llu from another sender than "
				      "the session's peer %s (the first from %s)",
				      (unsigned long long)r->foreign,
				      tp->t ? tp_peer_name(tp->t) : "?", r->foreign_from);
	if (r->before_session && k < sizeof(foreign))
		snprintf(foreign + k, sizeof(foreign) - k, ", %llu before any sender's hello "
			 "opened the session", (unsigned long long)r->before_session);
	if (judged)
		jtr_warn(p, "rejected %llu messages: %llu malformed, %llu forged (stamps outside the "
			 "run's time window), %llu out of window (sequence numbers the sender cannot "
			 "have issued)%s", (unsigned long long)n, (unsigned long long)r->malformed,
			 (unsigned long long)r->forged, (unsigned long long)r->out_of_window, foreign);
	else
		jtr_warn(p, "rejected %llu messages: %llu malformed%s", (unsigned long long)n,
			 (unsigned long long)r->malformed, foreign);
}

/* tp_prog_rejects_line - "rejected: malformed=0, forged=0, ..." */
void tp_prog_rejects_line(FILE *f, const struct tp_rejects *r, bool judged)
{
	if (judged)
		fprintf(f, "rejected: malformed=%llu, forged=%llu, out_of_window=%llu, foreign=%llu, "
			"before_session=%llu\n",
			(unsigned long long)r->malformed, (unsigned long long)r->forged,
			(unsigned long long)r->out_of_window, (unsigned long long)r->foreign,
			(unsigned long long)r->before_session);
	else
		fprintf(f, "rejected: malformed=%llu, foreign=%llu, before_session=%llu\n",
			(unsigned long long)r->malformed, (unsigned long long)r->foreign,
			(unsigned long long)r->before_session);
}

/* tp_prog_write_rejects - "rejected": {malformed, forged, out_of_window,
 * foreign, foreign_from} */
void tp_prog_write_rejects(struct jtr_json *j, const struct tp_rejects *r, bool judged)
{
	jtr_json_obj_begin(j, "rejected");
	jtr_json_uint(j, "malformed", r->malformed);
	if (judged) {
		jtr_json_uint(j, "forged", r->forged);
		jtr_json_uint(j, "out_of_window", r->out_of_window);
	} else {
		jtr_json_null(j, "forged");
		jtr_json_null(j, "out_of_window");
	}
	jtr_json_uint(j, "foreign", r->foreign);
	jtr_json_uint(j, "before_session", r->before_session);
	if (r->foreign_from[0])
		jtr_json_str(j, "foreign_from", r->foreign_from);
	else
		jtr_json_null(j, "foreign_from");
	jtr_json_obj_end(j);
}

/* tp_prog_cpu_opt - a CPU number, or -1 */
int tp_prog_cpu_opt(struct jtr_probe *p, const char *opt, const char *arg)
{
	struct jtr_err e;
	int cpu = jtr_opt_int(p, opt, arg, -1, CPU_SETSIZE - 1);

	int rc = cpu >= 0 ? jtr_cpu_check(cpu, &e) : 0;

	if (rc < 0)
		jtr_usage_error(p, "%s: %s", opt, e.msg);
	if (rc > 0)
		jtr_warn(p, "%s", e.msg);
	return cpu;
}

/* tp_prog_end_of_stream - end of stream with the count, thrice on datagrams */
void tp_prog_end_of_stream(struct tp *t, void *buf, uint32_t len, uint64_t count)
{
	struct tp_msg *m = buf;
	int copies = tp_flags(t) & TP_P_DATAGRAM ? 3 : 1;

	for (int i = 0; i < copies; i++) {
		struct timespec ts = { 0, 1000000L };

		tp_msg_fill(m, len, TP_F_EOS, count, 0, 0);
		if (tp_send(t, m, len) < 0)
			break;
		nanosleep(&ts, NULL);
	}
}

/* tp_prog_rate_opt - messages per second, "max" for no pacing */
uint64_t tp_prog_rate_opt(struct jtr_probe *p, const char *opt, const char *arg)
{
	struct jtr_err e;
	uint64_t v;

	if (!strcmp(arg, "max"))
		return 0;
	if (jtr_parse_count(arg, 0, 1000000000ULL, &v, &e) < 0)
		jtr_usage_error(p, "%s %s: %s (messages per second, or max)", opt, arg, e.msg);
	if (v == 0)
		jtr_usage_error(p, "%s 0: a rate must be at least 1 message per second; use "
				"%s max to send as fast as the transport takes them", opt, opt);
	return v;
}

int tp_prog_cpus_opt(struct jtr_probe *p, const char *opt, const char *arg, int *cpus, int max)
{
	char buf[256], *save = NULL, *tok;
	int n = 0;

	if (strlen(arg) >= sizeof(buf))
		jtr_usage_error(p, "%s %s: too long; give at most %d CPUs", opt, arg, max);
	strcpy(buf, arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == max)
			jtr_usage_error(p, "%s %s: at most %d CPUs, one per stream", opt, arg, max);
		cpus[n++] = tp_prog_cpu_opt(p, opt, tok);
	}
	if (!n)
		jtr_usage_error(p, "%s %s: give a CPU number (or -1 for none)", opt, arg);
	return n;
}

void tp_prog_stream(struct jtr_probe *p, const struct tp_prog *base, int k, int n,
		    struct tp_prog *out, char *addr, size_t len)
{
	struct jtr_err e;

	*out = *base;
	if (tp_stream_addr(&base->o, (unsigned)k, addr, len, &e) < 0)
		jtr_usage_error(p, "--streams %d: %s", n, e.msg);
	out->o.addr = addr;
}

void tp_prog_input_cpus(FILE *f, const int *cpus, int ncpus, int nstreams)
{
	char text[16 * 12];
	size_t o = 0;

	text[0] = 0;
	for (int k = 0; k < nstreams && o < sizeof(text); k++)
		o += (size_t)snprintf(text + o, sizeof(text) - o, "%s%d", k ? "," : "",
				      tp_prog_stream_cpu(cpus, ncpus, k));
	tp_prog_input(f, "cpu:", "%s", text);
}
