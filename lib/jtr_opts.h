/* SPDX-License-Identifier: GPL-2.0-only */
/* jtr_opts.h - jtr's one option alphabet: the options that mean the same in
 * every program that has them, written once (as rtla's cli_p.h does for its
 * tools). A letter here has this meaning, this long name and this kind of
 * value in every C program and in the Python front end; no program gives it
 * another. A program's optstring, struct option table and --help take them
 * from here:
 *
 *	getopt_long(argc, argv, ":" JTR_COUNT_S JTR_RATE_S "w:" ..., ...)
 *	static const struct option long_opts[] = { JTR_LONG(COUNT), ... };
 *	JTR_COUNT_HELP "         measured messages (default 10000)\n"
 *
 * The front end's mirror is cli/parser.py's ALPHABET; analysis/tests/
 * test_parity.py checks that the two agree, tests/test_alphabet.py that
 * every program's --help gives each letter it has its one long name. A
 * letter a program used for something else before (docs/compat.md) is
 * still taken for one release, with a line on stderr (jtr_opt_old).
 *
 * For each option NAME: NAME_C the letter, NAME_S its optstring part,
 * NAME_LONG the long name, NAME_ARG whether it takes a value and NAME_HELP
 * the head of its --help line.
 */
#ifndef JTR_OPTS_H
#define JTR_OPTS_H

#include <getopt.h>

/* -c, --cpus LIST: the CPUs to run on (a cpulist); where a program has more
 * than one thread, the measuring thread's first (send: CPU,DRAIN; ping:
 * RECV,SEND); -1: not pinned where the program allows it */
#define JTR_CPUS_C		'c'
#define JTR_CPUS_S		"c:"
#define JTR_CPUS_LONG		"cpus"
#define JTR_CPUS_ARG		required_argument
#define JTR_CPUS_HELP		"  -c, --cpus LIST"

/* -d, --duration DURATION: how long to run (NUMBER[UNIT]) */
#define JTR_DURATION_C		'd'
#define JTR_DURATION_S		"d:"
#define JTR_DURATION_LONG	"duration"
#define JTR_DURATION_ARG	required_argument
#define JTR_DURATION_HELP	"  -d, --duration DURATION"

/* -r, --rate RATE: messages per second (K, M, G: x1000), or max */
#define JTR_RATE_C		'r'
#define JTR_RATE_S		"r:"
#define JTR_RATE_LONG		"rate"
#define JTR_RATE_ARG		required_argument
#define JTR_RATE_HELP		"  -r, --rate RATE"

/* -n, --count COUNT: how many (samples, loops, reads, messages, objects;
 * K, M, G: x1000) */
#define JTR_COUNT_C		'n'
#define JTR_COUNT_S		"n:"
#define JTR_COUNT_LONG		"count"
#define JTR_COUNT_ARG		required_argument
#define JTR_COUNT_HELP		"  -n, --count COUNT"

/* -m, --len BYTES: a message's size in bytes */
#define JTR_LEN_C		'm'
#define JTR_LEN_S		"m:"
#define JTR_LEN_LONG		"len"
#define JTR_LEN_ARG		required_argument
#define JTR_LEN_HELP		"  -m, --len BYTES"

/* -f, --fifo PRIO: run SCHED_FIFO at PRIO (1-99) */
#define JTR_FIFO_C		'f'
#define JTR_FIFO_S		"f:"
#define JTR_FIFO_LONG		"fifo"
#define JTR_FIFO_ARG		required_argument
#define JTR_FIFO_HELP		"  -f, --fifo PRIO"

/* -o, --output DIR: the results folder */
#define JTR_OUTPUT_C		'o'
#define JTR_OUTPUT_S		"o:"
#define JTR_OUTPUT_LONG		"output"
#define JTR_OUTPUT_ARG		required_argument
#define JTR_OUTPUT_HELP		"  -o, --output DIR"

/* -q, --quiet: nothing on stdout but what was asked for */
#define JTR_QUIET_C		'q'
#define JTR_QUIET_S		"q"
#define JTR_QUIET_LONG		"quiet"
#define JTR_QUIET_ARG		no_argument
#define JTR_QUIET_HELP		"  -q, --quiet"

/* -T, --transport KIND: shm, tcp, udp, mcast, unix or unix-dgram */
#define JTR_TRANSPORT_C		'T'
#define JTR_TRANSPORT_S		"T:"
#define JTR_TRANSPORT_LONG	"transport"
#define JTR_TRANSPORT_ARG	required_argument
#define JTR_TRANSPORT_HELP	"  -T, --transport KIND"

/* -P, --addr ADDR: the peer's address (or the shm segment, the socket path) */
#define JTR_ADDR_C		'P'
#define JTR_ADDR_S		"P:"
#define JTR_ADDR_LONG		"addr"
#define JTR_ADDR_ARG		required_argument
#define JTR_ADDR_HELP		"  -P, --addr ADDR"

/* JTR_LONG(NAME) - the struct option entry of shared option NAME */
#define JTR_LONG(NAME) { JTR_##NAME##_LONG, JTR_##NAME##_ARG, NULL, JTR_##NAME##_C }

/* JTR_OLD_HELP - the --help paragraph's head on the letters a program still
 * takes in their old meaning for one release */
#define JTR_OLD_HELP "Old letters, taken for one release with a line on stderr:"

#endif
