/* SPDX-License-Identifier: GPL-2.0-only */
/* tp_numa.h - NUMA placement for the shm transport, through libnuma.
 *
 * The ring's pages belong on the node of the CPUs that read them (the
 * subscribers' node): a reader polls its slots and cursor and pays the remote
 * access on every cache miss otherwise. --cross-numa puts them on another
 * node on purpose, for the comparison. On a machine with one node (or a
 * kernel without NUMA) placement is a no-op that reports node 0, and asking
 * for a second node is an error that says so.
 */
#ifndef JTR_TP_NUMA_H
#define JTR_TP_NUMA_H

#include <stdbool.h>
#include <stddef.h>

#include "jtr_err.h"

/* tp_numa_nodes - nodes with memory (1 without NUMA support) */
int tp_numa_nodes(void);

/* tp_numa_node_of_cpu - @cpu's node; 0 without NUMA support, -1 for a bad CPU */
int tp_numa_node_of_cpu(int cpu);

/* tp_numa_other_node - a node with memory other than @node, or -1 (one node) */
int tp_numa_other_node(int node);

/* tp_numa_place - bind [@addr, @addr + @len) to @node and move the pages
 * already there (every mapper's: needs CAP_SYS_NICE, else only this
 * process's); 0 or -errno with a message in @e */
int tp_numa_place(void *addr, size_t len, int node, struct jtr_err *e);

/* tp_numa_node_of_addr - the node the page at @addr is on now; -1 unknown */
int tp_numa_node_of_addr(const void *addr);

/* tp_numa_run_on_node - restrict this thread to @node's CPUs; 0 or -errno */
int tp_numa_run_on_node(int node);

#endif
