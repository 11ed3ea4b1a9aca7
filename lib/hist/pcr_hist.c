/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#include "pcr_hist.h"

uint64_t
pcr_hist_bucket_lower(unsigned int i)
{
	unsigned int e, m;

	if (i < PCR_HIST_SUB)
		return i;
	e = i / PCR_HIST_SUB + PCR_HIST_SUB_BITS - 1;
	m = i % PCR_HIST_SUB;
	return (uint64_t)(PCR_HIST_SUB + m) << (e - PCR_HIST_SUB_BITS);
}

uint64_t
pcr_hist_bucket_upper(unsigned int i)
{
	if (i + 1 >= PCR_HIST_BUCKETS)
		return UINT64_MAX;
	return pcr_hist_bucket_lower(i + 1) - 1;
}

void
pcr_hist_merge(struct pcr_hist *dst, const struct pcr_hist *src)
{
	uint64_t max = __atomic_load_n(&src->max, __ATOMIC_RELAXED);
	unsigned int i;

	for (i = 0; i < PCR_HIST_BUCKETS; i++)
		dst->bucket[i] += __atomic_load_n(&src->bucket[i],
						  __ATOMIC_RELAXED);
	dst->count += __atomic_load_n(&src->count, __ATOMIC_RELAXED);
	dst->sum += __atomic_load_n(&src->sum, __ATOMIC_RELAXED);
	if (max > dst->max)
		dst->max = max;
}

uint64_t
pcr_hist_quantile(const struct pcr_hist *h, uint32_t q_ppm)
{
	uint64_t rank, seen = 0, total = 0;
	unsigned int i;

	for (i = 0; i < PCR_HIST_BUCKETS; i++)
		total += h->bucket[i];
	if (total == 0)
		return 0;
	if (q_ppm > 1000000)
		q_ppm = 1000000;
	/* rank of the value wanted, 1-based: ceil(q * total), at least 1 */
	rank = (uint64_t)(((unsigned __int128)total * q_ppm + 999999) /
			  1000000);
	if (rank == 0)
		rank = 1;
	for (i = 0; i < PCR_HIST_BUCKETS; i++) {
		seen += h->bucket[i];
		if (seen >= rank) {
			uint64_t up = pcr_hist_bucket_upper(i);

			return up < h->max ? up : h->max;
		}
	}
	return h->max;
}
