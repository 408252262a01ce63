// SPDX-License-Identifier: GPL-2.0-only
/* target_lib.c - libjtr-target.so: a function of a shared library for the
 * tests of `jtr run app --func libjtr-target.so:lib_tick` */
#include "target.h"

__attribute__((noinline)) void lib_tick(uint64_t n, uint64_t iters, void (*then)(uint64_t))
{
	jtr_target_spin(iters);
	then(n);
}
