// SPDX-License-Identifier: GPL-2.0-only
/* hist_bench.c - cost of jtr_hist_record, in ns per value.
 *
 * Records 200M jitter-shaped values (a 4096-entry table that stays in L1:
 * mostly 40-60 ns, some 1-60 us, a few ms) and times the loop with the TSC.
 * For scale it times the same loop with a bare counts[v >> 4]++ (what a
 * fixed-width histogram without min/max/sum costs). The two loops alternate
 * over ROUNDS rounds and the fastest round of each counts, because these
 * machines are shared and a neighbour's burst inflates single timings.
 * Prints JSON.
 */
#include <stdio.h>
#include <stdlib.h>

#include "jtr_clock.h"
#include "jtr_hist.h"

#define N 40000000ULL
#define ROUNDS 7
#define TABLE 4096

int main(void)
{
	static uint64_t vals[TABLE], flat[1 << 16];
	struct jtr_hist h;
	uint64_t seed = 0x2545f4914f6cdd1dULL, t0, t1, t2;
	double hz;

	for (int i = 0; i < TABLE; i++) {
		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		vals[i] = (seed % 100) < 95 ? 40 + seed % 20 : (seed % 100) < 99 ? 1000 + seed % 60000
			: 1000000 + seed % 5000000;
	}
	if (jtr_tsc_calibrate(100000000ULL, &hz) < 0 || jtr_hist_init(&h, 0.01) < 0) {
		fprintf(stderr, "hist_bench: needs an invariant TSC\n");
		return 1;
	}
	double best_rec = 1e99, best_flat = 1e99;

	for (int r = 0; r < ROUNDS; r++) {
		t0 = jtr_tsc_begin();
		for (uint64_t i = 0; i < N; i++)
			jtr_hist_record(&h, vals[i & (TABLE - 1)]);
		t1 = jtr_tsc_end();
		for (uint64_t i = 0; i < N; i++) {
			uint64_t v = vals[i & (TABLE - 1)] >> 4;

			flat[v & 0xffff]++;
			__asm__ __volatile__("" : : "r"(flat) : "memory");
		}
		t2 = jtr_tsc_end();
		if ((double)(t1 - t0) < best_rec)
			best_rec = (double)(t1 - t0);
		if ((double)(t2 - t1) < best_flat)
			best_flat = (double)(t2 - t1);
	}
	printf("{\"record_ns\": %.3f, \"flat_increment_ns\": %.3f, \"values\": %llu, \"rounds\": %d, \"check\": %llu}\n",
	       best_rec * 1e9 / hz / (double)N, best_flat * 1e9 / hz / (double)N,
	       (unsigned long long)N, ROUNDS, (unsigned long long)(h.total + flat[3]));
	return 0;
}
