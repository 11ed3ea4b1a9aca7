/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#ifndef PCR_BENCH_BASELINE_WHEEL1_H
#define PCR_BENCH_BASELINE_WHEEL1_H

/**
 * @file
 * Baseline for pacer-bench-wheel: a single-level timing wheel, Carousel's
 * plain form. One array of slots covers the whole horizon at the
 * granularity (2 s at 1 us: 2^21 slots, 32 MiB of slot heads); each slot
 * is an intrusive FIFO linked through the mbufs' `next` field. The consumer
 * walks the slots one by one from where it last stopped up to `now`, so an
 * idle gap costs one visit per slot. The only shortcut: an empty wheel
 * jumps straight to `now`.
 *
 * Contract as pcr_wheel's: a departure already past goes into the current
 * slot (counted late); one at or beyond the horizon goes into the horizon's
 * last slot (counted horizon_cap). Nothing is dropped.
 *
 * Single-threaded; no locks. Insert writes the departure time into the
 * mbuf's dynamic field, as pcr_wheel_enqueue_burst() does.
 */

#include <stdint.h>

#include <rte_mbuf.h>

struct bl_wheel1;

/** Creation parameters. */
struct bl_wheel1_params {
	uint64_t tsc_hz;	 /**< TSC cycles per second */
	uint64_t start_tsc;	 /**< the consumer's time at creation */
	uint64_t granularity_ns; /**< slot width, ns */
	uint64_t horizon_ns;	 /**< horizon, ns; slots = next power of 2 */
	int dynfield_offset;	 /**< departure-time dynamic field */
};

/** @return the wheel, or NULL (bad parameter or out of memory). */
struct bl_wheel1 *bl_wheel1_create(const struct bl_wheel1_params *p);

/** Free the wheel; queued mbufs are not freed (take them out first). */
void bl_wheel1_free(struct bl_wheel1 *w);

/** Insert packets. @return n (a single-level wheel is never full). */
unsigned int bl_wheel1_enqueue_burst(struct bl_wheel1 *w,
				     struct rte_mbuf *const *mbufs,
				     const uint64_t *departure_tsc,
				     unsigned int n);

/**
 * Walk the slots up to the one holding @p now_tsc, copying out up to @p n
 * packets in time order (FIFO within a slot).
 * @return packets written to @p mbufs.
 */
unsigned int bl_wheel1_dequeue_burst(struct bl_wheel1 *w, uint64_t now_tsc,
				     struct rte_mbuf **mbufs, unsigned int n);

/** Remove up to @p n packets regardless of time, in time order. */
unsigned int bl_wheel1_flush(struct bl_wheel1 *w, struct rte_mbuf **mbufs,
			     unsigned int n);

/** Packets queued. */
uint64_t bl_wheel1_count(const struct bl_wheel1 *w);

/** Packets placed late / capped at the horizon since creation. */
uint64_t bl_wheel1_late(const struct bl_wheel1 *w);
uint64_t bl_wheel1_horizon_cap(const struct bl_wheel1 *w);

/** Slots in the wheel. */
uint64_t bl_wheel1_nslots(const struct bl_wheel1 *w);

/** Bytes allocated. */
size_t bl_wheel1_memsize(const struct bl_wheel1 *w);

#endif /* PCR_BENCH_BASELINE_WHEEL1_H */
