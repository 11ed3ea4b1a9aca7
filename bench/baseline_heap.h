/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#ifndef PCR_BENCH_BASELINE_HEAP_H
#define PCR_BENCH_BASELINE_HEAP_H

/**
 * @file
 * Baseline for pacer-bench-wheel: a binary min-heap of packets keyed by
 * departure time, array-based, FIFO among equal times (a sequence number
 * breaks ties). It stands for what a time-ordered tree such as sch_fq's
 * rbtree costs: O(log N) compares per insert and per removal, with the
 * upper levels cached and the lower ones a cache miss each at large N.
 *
 * Single-threaded; no locks. Like pcr_wheel_enqueue_burst(), insert writes
 * the departure time into the mbuf's dynamic field, so every
 * implementation touches each mbuf the same way.
 */

#include <stdint.h>

#include <rte_mbuf.h>

struct bl_heap;

/**
 * Create a heap holding at most @p capacity packets.
 * @param dynfield_offset offset of the departure-time dynamic field
 *   (pcr_wheel_dynfield_register()), written on insert.
 * @return the heap, or NULL (out of memory).
 */
struct bl_heap *bl_heap_create(unsigned int capacity, int dynfield_offset);

/** Free the heap; queued mbufs are not freed (take them out first). */
void bl_heap_free(struct bl_heap *h);

/**
 * Insert packets with their departure times (TSC cycles).
 * @return packets accepted (0..n); the rest stay with the caller (full).
 */
unsigned int bl_heap_enqueue_burst(struct bl_heap *h,
				   struct rte_mbuf *const *mbufs,
				   const uint64_t *departure_tsc,
				   unsigned int n);

/**
 * Remove up to @p n packets whose departure time is <= @p now_tsc, earliest
 * first.
 * @return packets written to @p mbufs.
 */
unsigned int bl_heap_dequeue_burst(struct bl_heap *h, uint64_t now_tsc,
				   struct rte_mbuf **mbufs, unsigned int n);

/**
 * Remove up to @p n packets regardless of their time, earliest first.
 * @return packets written to @p mbufs.
 */
unsigned int bl_heap_flush(struct bl_heap *h, struct rte_mbuf **mbufs,
			   unsigned int n);

/** Packets queued. */
uint64_t bl_heap_count(const struct bl_heap *h);

/** Bytes allocated. */
size_t bl_heap_memsize(const struct bl_heap *h);

#endif /* PCR_BENCH_BASELINE_HEAP_H */
