// SPDX-License-Identifier: GPL-2.0-only
/* jtr_legacy.c - the summary text and gnuplot file in the jtr_null format. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jtr_legacy.h"

static const double legacy_pcts[] = { 90.0, 99.0, 99.9, 99.99, 99.999 };

/* jtr_legacy_header - the three header lines */
int jtr_legacy_header(char *buf, size_t n, const struct jtr_legacy_hdr *s)
{
	int w = snprintf(buf, n,
			 "%s: %s, cpu_num=%d, fifo_priority=%d, histo_buckets=%u, num_samples=%llu,\n"
			 " pause=%llu timebase=%d, warmup_loops=%llu, gettime_cost=%lld,\n"
			 " rdtsc_cost=%lld, ticks_per_sec=%lld, jtr_1000_loops_cost=%lld\n",
			 s->desc, s->lead, s->cpu_num, s->fifo_priority, s->histo_buckets,
			 (unsigned long long)s->num_samples, (unsigned long long)s->pause_ns,
			 s->timebase, (unsigned long long)s->warmup_loops, s->gettime_cost,
			 s->rdtsc_cost, s->ticks_per_sec, s->loops_1000_cost);

	return w < 0 || (size_t)w >= n ? -ENOSPC : w;
}

/* linear - the linear view, allocated; NULL on failure */
static uint64_t *linear(const struct jtr_hist *h, uint32_t nb, uint64_t *over)
{
	uint64_t *lin = calloc(nb ? nb : 1, sizeof(*lin));

	if (lin)
		jtr_hist_linear(h, JTR_LEGACY_BUCKET_NS, nb, lin, over);
	return lin;
}

/* jtr_legacy_minmax - "Minimum=.., Maximum=.., Average=.., Overflows=..\n" */
int jtr_legacy_minmax(char *buf, size_t n, const struct jtr_hist *h, uint32_t histo_buckets)
{
	uint64_t over = 0, *lin = linear(h, histo_buckets, &over);
	int w;

	if (!lin)
		return -ENOMEM;
	free(lin);
	/* the format's Average is the integer quotient of the exact sum */
	w = snprintf(buf, n, "Minimum=%llu, Maximum=%llu, Average=%llu, Overflows=%llu\n",
		     (unsigned long long)(h->total ? h->min : 0), (unsigned long long)h->max,
		     (unsigned long long)(h->total ? h->sum / h->total : 0),
		     (unsigned long long)over);
	return w < 0 || (size_t)w >= n ? -ENOSPC : w;
}

/* jtr_legacy_below_ns - the N of "P% are below N ns" */
uint64_t jtr_legacy_below_ns(const struct jtr_hist *h, uint32_t histo_buckets, double pct)
{
	uint64_t over = 0, *lin = linear(h, histo_buckets, &over), cum = 0, need, v;
	uint32_t i = 0;

	if (!lin)
		return 0;
	/* as the format has it: the first bucket end where the running count reaches
	 * pct of the samples, rounded half up */
	need = (uint64_t)((pct / 100.0) * (double)h->total + 0.5);
	while (i < histo_buckets && cum < need)
		cum += lin[i++];
	free(lin);
	if (cum >= need)
		return (uint64_t)i * JTR_LEGACY_BUCKET_NS;
	/* beyond the linear range: the lossless histogram knows, rounded up to
	 * the next 10 ns bucket end like the lines above */
	v = jtr_hist_value_at_percentile(h, pct);
	return (v / JTR_LEGACY_BUCKET_NS + 1) * JTR_LEGACY_BUCKET_NS;
}

/* jtr_legacy_percentiles - the five "are below" lines */
int jtr_legacy_percentiles(char *buf, size_t n, const struct jtr_hist *h, uint32_t histo_buckets)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t k = 0; k < sizeof(legacy_pcts) / sizeof(legacy_pcts[0]); k++) {
		int w = snprintf(buf + len, n - len, "%6.3f%% are below %llu ns\n", legacy_pcts[k],
				 (unsigned long long)jtr_legacy_below_ns(h, histo_buckets, legacy_pcts[k]));

		if (w < 0 || (size_t)w >= n - len)
			return -ENOSPC;
		len += (size_t)w;
	}
	return (int)len;
}

/* put_title - gnuplot-escaped title: newlines as \n, '_' as \_, '"' as \" */
static void put_title(FILE *f, const char *s)
{
	size_t len = strlen(s);

	while (len && s[len - 1] == '\n')	/* no trailing \n in the title */
		len--;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\n')
			fputs("\\n", f);
		else if (s[i] == '_')
			fputs("\\_", f);
		else if (s[i] == '"' || s[i] == '\\')
			fprintf(f, "\\%c", s[i]);
		else
			fputc(s[i], f);
	}
}

/* jtr_legacy_gnuplot_block - one run's block */
int jtr_legacy_gnuplot_block(FILE *f, int index, const char *header, const char *minmax,
			   const struct jtr_hist *h, uint32_t histo_buckets)
{
	uint64_t over = 0, *lin = linear(h, histo_buckets, &over);

	if (!lin)
		return -ENOMEM;
	fprintf(f, "# title_%d = \"", index);
	put_title(f, header);
	fputs("\\n", f);
	put_title(f, minmax);
	fprintf(f, "\"\n# xrange_%d = %llu\n", index,
		(unsigned long long)histo_buckets * JTR_LEGACY_BUCKET_NS);
	for (uint32_t i = 0; i < histo_buckets; i++)
		if (lin[i])
			fprintf(f, "%llu %llu\n", (unsigned long long)i * JTR_LEGACY_BUCKET_NS,
				(unsigned long long)lin[i]);
	fputs("\n\n", f);
	free(lin);
	return ferror(f) ? -EIO : 0;
}
