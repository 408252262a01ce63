// SPDX-License-Identifier: GPL-2.0-only
/* tp_numa.c - NUMA placement through libnuma (see tp_numa.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <numa.h>
#include <numaif.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "tp_numa.h"

/* have_numa - the kernel and libnuma do NUMA here */
static bool have_numa(void)
{
	static int avail = -2;

	if (avail == -2)
		avail = numa_available();
	return avail >= 0;
}

/* tp_numa_nodes - nodes with memory (1 without NUMA support) */
int tp_numa_nodes(void)
{
	int n;

	if (!have_numa())
		return 1;
	n = numa_num_configured_nodes();
	return n > 0 ? n : 1;
}

/* tp_numa_node_of_cpu - @cpu's node; 0 without NUMA support, -1 for a bad CPU */
int tp_numa_node_of_cpu(int cpu)
{
	if (cpu < 0)
		return -1;
	if (!have_numa())
		return 0;
	return numa_node_of_cpu(cpu);
}

/* tp_numa_other_node - a node with memory other than @node, or -1 (one node) */
int tp_numa_other_node(int node)
{
	int n, max;

	if (!have_numa())
		return -1;
	max = numa_max_node();
	for (n = 0; n <= max; n++) {
		long long free_b;

		if (n != node && numa_node_size64(n, &free_b) > 0)
			return n;
	}
	return -1;
}

/* tp_numa_place - bind the range to @node and move what is already there */
int tp_numa_place(void *addr, size_t len, int node, struct jtr_err *e)
{
	unsigned long mask[16] = { 0 };
	const unsigned long bits = 8 * sizeof(unsigned long);
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)addr & ~(page - 1);
	size_t n = len + ((uintptr_t)addr - a);
	unsigned flags = MPOL_MF_MOVE_ALL;

	if (node < 0 || (unsigned long)node >= 16 * bits)
		return jtr_err_set(e, -EINVAL, "NUMA node %d is out of range", node);
	if (!have_numa())
		return node == 0 ? 0 : jtr_err_set(e, -ENODEV, "no NUMA here: only node 0 exists");
	mask[node / bits] = 1UL << (node % bits);
	if (mbind((void *)a, n, MPOL_BIND, mask, 16 * bits, flags) == 0)
		return 0;
	if (errno == EPERM) {		/* not CAP_SYS_NICE: the pages only we map */
		flags = MPOL_MF_MOVE;
		if (mbind((void *)a, n, MPOL_BIND, mask, 16 * bits, flags) == 0)
			return 0;
	}
	return jtr_err_set(e, -errno, "cannot place the ring on NUMA node %d: %s", node,
			   strerror(errno));
}

/* tp_numa_node_of_addr - the node the page at @addr is on now; -1 unknown */
int tp_numa_node_of_addr(const void *addr)
{
	int node = -1;

	if (!have_numa())
		return 0;
	if (get_mempolicy(&node, NULL, 0, (void *)addr, MPOL_F_NODE | MPOL_F_ADDR) < 0)
		return -1;
	return node;
}

/* tp_numa_run_on_node - restrict this thread to @node's CPUs; 0 or -errno */
int tp_numa_run_on_node(int node)
{
	if (!have_numa())
		return node == 0 ? 0 : -ENODEV;
	return numa_run_on_node(node) == 0 ? 0 : -errno;
}
