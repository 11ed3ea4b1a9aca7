/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#ifndef PCR_HIST_H
#define PCR_HIST_H

/**
 * @file
 * Log-bucket histogram of unsigned 64-bit values, for the fast path.
 *
 * Values below 16 have a bucket each; above, every power of two is cut
 * into 16 equal sub-buckets (HdrHistogram's scheme with 4 sub-bucket
 * bits), so a bucket is never wider than 1/16 of its lower bound: a
 * quantile read from it is within 6.25 % of the true value (always
 * rounded up). Adding a value is a count-leading-zeros, a shift and an
 * increment; no floating point, no branch.
 * 976 buckets cover the whole uint64_t range (7.8 KiB).
 *
 * One writer per histogram; readers merge or read while it runs (each
 * counter is a naturally aligned 64-bit word, so a reader never sees a torn
 * value, only a slightly older one).
 */

#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PCR_HIST_SUB_BITS 4
#define PCR_HIST_SUB (1u << PCR_HIST_SUB_BITS)
/** Buckets: 16 exact ones, then 16 per power of two from 2^4 to 2^63. */
#define PCR_HIST_BUCKETS ((64 - PCR_HIST_SUB_BITS + 1) * PCR_HIST_SUB)

struct pcr_hist {
	uint64_t count;  /**< values added */
	uint64_t max;    /**< largest value added */
	uint64_t sum;    /**< sum of values (wraps after 2^64) */
	uint64_t bucket[PCR_HIST_BUCKETS];
};

/*
 * e - 4, with e the top bit of @p v | 16 (4 below 16): log2 of the width of
 * v's bucket.
 */
static inline unsigned int
pcr_hist_shift_(uint64_t v)
{
	return 63u - PCR_HIST_SUB_BITS -
	       (unsigned int)__builtin_clzll(v | PCR_HIST_SUB);
}

/**
 * Bucket index of @p v: (e - 4) * 16 plus v's top 5 bits (v itself below
 * 16), which is 16 + the sub-bucket from 16 on (pcr_hist_shift_()). No
 * branch.
 */
static inline unsigned int
pcr_hist_index(uint64_t v)
{
	unsigned int sh = pcr_hist_shift_(v);

	return (sh << PCR_HIST_SUB_BITS) + (unsigned int)(v >> sh);
}

/** Add one value. */
static inline void
pcr_hist_add(struct pcr_hist *h, uint64_t v)
{
	h->bucket[pcr_hist_index(v)]++;
	h->count++;
	h->sum += v;
	if (v > h->max)
		h->max = v;
}

/**
 * A burst's values on their way into a histogram: the count, sum and max
 * in registers, and the bucket of the last value kept open, so that a
 * value falling into it (a burst's packets leave within a bucket's width
 * of each other) costs a subtraction, a compare and an increment.
 * pcr_hist_burst_end() adds it all; the histogram then holds exactly what
 * pcr_hist_add() of each value would have made it.
 */
struct pcr_hist_burst {
	uint64_t lo;      /**< the open bucket's smallest value */
	uint64_t width;   /**< its width (0: none open yet) */
	uint64_t n;       /**< values in it */
	unsigned int idx; /**< its index */
	uint64_t closed;  /**< values in buckets closed before it */
	uint64_t sum, max;
};

static inline void
pcr_hist_burst_begin(struct pcr_hist_burst *b)
{
	memset(b, 0, sizeof(*b));
}

/** Close the open bucket into @p h and open the one of @p v. */
static inline void
pcr_hist_burst_open_(struct pcr_hist *h, struct pcr_hist_burst *b,
		     uint64_t v)
{
	/* the bucket's width, as a power of 2 */
	unsigned int sh = pcr_hist_shift_(v);

	h->bucket[b->idx] += b->n;
	b->closed += b->n;
	b->n = 0;
	b->idx = pcr_hist_index(v);
	b->lo = v >> sh << sh;
	b->width = UINT64_C(1) << sh;
}

/** Add one value to the burst @p b of @p h. */
static inline void
pcr_hist_burst_add(struct pcr_hist *h, struct pcr_hist_burst *b, uint64_t v)
{
	if (__builtin_expect(v - b->lo >= b->width, 0))
		pcr_hist_burst_open_(h, b, v);
	b->n++;
	b->sum += v;
	b->max = v > b->max ? v : b->max;
}

/** Add what the burst @p b holds to @p h. */
static inline void
pcr_hist_burst_end(struct pcr_hist *h, const struct pcr_hist_burst *b)
{
	h->bucket[b->idx] += b->n;
	h->count += b->closed + b->n;
	h->sum += b->sum;
	if (b->max > h->max)
		h->max = b->max;
}

static inline void
pcr_hist_reset(struct pcr_hist *h)
{
	memset(h, 0, sizeof(*h));
}

/** Smallest value that falls in bucket @p i. */
uint64_t pcr_hist_bucket_lower(unsigned int i);

/** Largest value that falls in bucket @p i. */
uint64_t pcr_hist_bucket_upper(unsigned int i);

/** dst += src (counts, sum; max of max). Reads src with relaxed loads. */
void pcr_hist_merge(struct pcr_hist *dst, const struct pcr_hist *src);

/**
 * Value at quantile @p q_ppm (parts per million: 500000 = median,
 * 999000 = p99.9): the upper bound of the bucket holding the
 * ceil(q * count)-th smallest value, but never above the exact max.
 * 0 when the histogram is empty.
 */
uint64_t pcr_hist_quantile(const struct pcr_hist *h, uint32_t q_ppm);

#ifdef __cplusplus
}
#endif

#endif /* PCR_HIST_H */
