/* SPDX-License-Identifier: GPL-2.0-only */
/* target.h - what jtr-app-target and its library share */
#ifndef JTR_TARGET_H
#define JTR_TARGET_H
#include <stdint.h>

/* jtr_target_spin - @n iterations of a loop the compiler keeps */
static inline void jtr_target_spin(uint64_t n)
{
	for (volatile uint64_t i = 0; i < n; i++)
		;
}

/* lib_tick - libjtr-target.so's on_tick: @n the call, @iters the loop,
 * @then what the caller does after it (its blocking) */
void lib_tick(uint64_t n, uint64_t iters, void (*then)(uint64_t));

#endif
