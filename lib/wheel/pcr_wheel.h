/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#ifndef PCR_WHEEL_H
#define PCR_WHEEL_H

/**
 * @file
 * Hierarchical timing wheel: many producers, one consumer.
 *
 * A packet enters with an earliest departure time (EDT) in TSC cycles and
 * leaves no earlier than the start of the level-0 slot that holds that time.
 *
 * Shape
 * -----
 * - *Inbox*: one multi-producer/single-consumer rte_ring of
 *   (mbuf, departure_tsc) pairs. Any lcore (RX lcores) inserts with
 *   pcr_wheel_enqueue_burst() without locks; the departure time is also
 *   written to the mbuf's registered dynamic field (pcr_wheel_departure()).
 * - *Levels*: the consumer owns the wheel proper. Level 0 has
 *   2^slot_bits slots of `granularity` each; level l slots are as wide as
 *   the whole span of level l-1. Level-0 slots are circular arrays of
 *   `slot_capacity` mbuf pointers, interleaved by cache line, each with
 *   its head in its first line (draining a slot is a pointer copy; an
 *   SP/SC rte_ring per slot measured slower, see docs/design.md). Slots
 *   of levels
 *   >= 1 are chains of fixed-size chunks of (mbuf, departure) pairs drawn
 *   from one pool sized by `max_queued`, so the far levels cost memory in
 *   proportion to what is queued, not to slots x line rate. Cascading a far
 *   slot reads only chunk memory, never the mbufs.
 * - *Run*: a level-1 slot that cascades with many packets (a quarter of
 *   the slot count or more) is counting-sorted by level-0 slot into one
 *   contiguous array instead of pushed slot by slot, and the drain copies
 *   ranges of it; packets that reach level 0 otherwise stay in the slot
 *   arrays and leave after the run's packets of their slot. The outcome
 *   (order, capacity, spills) is the per-slot push's.
 * - *Bitmaps*: one bit per slot per level, and per level one summary word
 *   with a bit per non-empty 64-bit bitmap word. The consumer finds the
 *   next non-empty slot of a level with two find-first-set and jumps
 *   straight to the earliest one, so an idle gap costs a few word
 *   operations, not one visit per slot (Eiffel's cFFS idea).
 *
 * Contract (as sch_fq's)
 * ----------------------
 * - A departure time already past (before the consumer's current slot)
 *   goes into the current slot and leaves at once: counted `late`.
 * - A departure time at or beyond `horizon` from the consumer's current
 *   slot is dropped (PCR_WHEEL_HORIZON_DROP, counted `horizon_drop`) or
 *   placed in the last slot of the horizon (PCR_WHEEL_HORIZON_CAP, counted
 *   `horizon_cap`); a capped packet's dynamic field is rewritten to the
 *   start of that slot, its new departure time.
 * - A level-0 slot that is full spills the packet into the next slot
 *   (counted `spill`); if that slot is full too the packet is dropped
 *   (counted `full_drop`). A far-level insert that finds the chunk pool
 *   empty is dropped (counted `nomem_drop`).
 * - Dropped mbufs are handed to the drop callback given at creation
 *   (`drop_fn`), on the consumer's lcore; without one they are freed with
 *   rte_pktmbuf_free(). Either way the caller no longer owns them. Mbufs
 *   refused by pcr_wheel_enqueue_burst() (inbox full) are not dropped: they
 *   stay with the caller, exactly like rte_ring_enqueue_burst().
 * - Time order across slots, FIFO (by the order the consumer took them from
 *   the inbox) within a slot.
 * - Conservation: enqueued == dequeued + dropped + queued at every moment a
 *   consistent snapshot is taken (pcr_wheel_stats_get()).
 *
 * Memory
 * ------
 * With S = 2^slot_bits, L = levels, C = slot_capacity, Q = max_queued,
 * I = inbox_size, E = PCR_WHEEL_CHUNK_ENTRIES:
 *
 *   bytes ~= S * 64 * (C / 8 + 1)                  level-0 slots (C >= 8;
 *                                                   S * 64 for C = 4)
 *          + min(S * C, Q) * 8 + S * 4              level-0 run (L > 1)
 *          + (L - 1) * S * 24                       far slot heads
 *          + (ceil(Q / E) + (L - 1) * S) * 1024     chunk pool (L > 1)
 *          + 128 + 32 * I                           inbox (2I entries:
 *                                                   exact-size ring)
 *          + (L + 2) * S / 8                        bitmaps
 *          + 64 * (RTE_MAX_LCORE + 1)               producer counters
 *
 * (within 1 KiB of pcr_wheel_memsize(), which returns the exact figure for
 * any params). The defaults (S = 4096, L = 2, C = 512, Q = 2^20, I = 2^16)
 * take 46.6 MiB (8 MiB of it the run); S = 256, L = 3 20.8 MiB.
 * Horizon limit: horizon < (S - 1) * S^(L-1) * granularity; the defaults at
 * 1 us allow 16.7 s.
 *
 * Threads
 * -------
 * pcr_wheel_enqueue_burst(): any thread, concurrently. Everything else that
 * changes the wheel (dequeue, flush, set_horizon): the one consumer thread.
 * pcr_wheel_stats_get(): any thread, at any time, without stopping anyone.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Most levels a wheel may have. */
#define PCR_WHEEL_MAX_LEVELS 6
/** Most slots per level, as log2. */
#define PCR_WHEEL_MAX_SLOT_BITS 12
/** (mbuf, departure) pairs per far-level chunk. */
#define PCR_WHEEL_CHUNK_ENTRIES 63

/** Name of the registered mbuf dynamic field holding the departure time. */
#define PCR_WHEEL_DYNFIELD_NAME "pcr_dynfield_departure_tsc"

/** What to do with a packet whose departure is at or beyond the horizon. */
enum pcr_wheel_horizon_policy {
	PCR_WHEEL_HORIZON_DROP = 0, /**< drop it, count horizon_drop */
	PCR_WHEEL_HORIZON_CAP,      /**< send it at the horizon, count horizon_cap */
};

/** Why the wheel dropped a packet (argument of the drop callback). */
enum pcr_wheel_drop_reason {
	PCR_WHEEL_DROP_HORIZON = 0, /**< departure at or beyond the horizon */
	PCR_WHEEL_DROP_FULL,        /**< level-0 slot and the next one full */
	PCR_WHEEL_DROP_NOMEM,       /**< far-level chunk pool exhausted */
	PCR_WHEEL_DROP_FLUSH,       /**< pcr_wheel_flush() with no output room */
	PCR_WHEEL_DROP_MAX,
};

/**
 * Drop callback: takes ownership of @p m. Called on the consumer's lcore,
 * from within pcr_wheel_dequeue_burst()/pcr_wheel_flush().
 */
typedef void (*pcr_wheel_drop_fn)(struct rte_mbuf *m,
				  enum pcr_wheel_drop_reason reason, void *arg);

/** Creation parameters. Zero means "the default" for every numeric field. */
struct pcr_wheel_params {
	const char *name;          /**< for logs; need not be unique */
	int socket_id;             /**< NUMA socket for memory, or SOCKET_ID_ANY */
	uint64_t tsc_hz;           /**< TSC cycles per second (required) */
	uint64_t start_tsc;        /**< the consumer's time at creation (required) */
	uint64_t granularity_ns;   /**< level-0 slot width, ns: 250..1000000, default 1000 */
	uint64_t horizon_ns;       /**< horizon, ns; default 2 s */
	unsigned int slot_bits;    /**< log2 slots per level: 2..12, default 12 */
	unsigned int levels;       /**< levels: 1..6, default 2 */
	unsigned int slot_capacity; /**< level-0 slot capacity, packets: power of 2, default 512 */
	unsigned int inbox_size;   /**< inbox capacity, packets: power of 2, default 65536 */
	unsigned int max_queued;   /**< packets the far levels hold, default 2^20 */
	enum pcr_wheel_horizon_policy horizon_policy; /**< default drop */
	pcr_wheel_drop_fn drop_fn; /**< NULL: rte_pktmbuf_free() */
	void *drop_arg;            /**< passed to drop_fn */
};

/** Counters and occupancy; see pcr_wheel_stats_get(). */
struct pcr_wheel_stats {
	uint64_t enqueued;     /**< accepted by pcr_wheel_enqueue_burst() */
	uint64_t refused;      /**< refused by it (inbox full), left with caller */
	uint64_t dequeued;     /**< returned by dequeue/flush */
	uint64_t dropped;      /**< sum of the drop reasons below */
	uint64_t drop[PCR_WHEEL_DROP_MAX]; /**< drops by reason */
	uint64_t queued;       /**< in the inbox or in a slot */
	uint64_t late;         /**< departure already past when inserted */
	uint64_t horizon_cap;  /**< capped to the horizon */
	uint64_t spill;        /**< moved to the next slot, own slot full */
	uint64_t cascaded;     /**< moves from a far slot to a nearer level */
	uint64_t sorted;       /**< of cascaded: level 1 to 0 by a sorted run */
	uint64_t direct;       /**< of dequeued: due when taken from the inbox
				    with nothing due before them, out without
				    a slot */
	uint64_t advances;     /**< jumps of the wheel's clock to a non-empty slot */
	uint64_t inbox;        /**< part of queued still in the inbox */
	uint64_t level_occupancy[PCR_WHEEL_MAX_LEVELS]; /**< per level */
	unsigned int levels;   /**< levels in use */
};

/** Read-only description of a wheel, as configured. */
struct pcr_wheel_info {
	uint64_t tsc_hz;
	uint64_t granularity_tsc;  /**< level-0 slot width, cycles */
	uint64_t granularity_ns;
	uint64_t horizon_tsc;      /**< horizon, cycles (whole slots) */
	uint64_t horizon_ns;
	uint64_t horizon_max_ns;   /**< largest horizon the geometry allows */
	unsigned int slot_bits;
	unsigned int levels;
	unsigned int slot_capacity;
	unsigned int inbox_size;
	unsigned int max_queued;
	enum pcr_wheel_horizon_policy horizon_policy;
	uint64_t level_span_ns[PCR_WHEEL_MAX_LEVELS]; /**< one slot of level l, ns */
	size_t memsize;            /**< bytes allocated */
};

struct pcr_wheel;

/** @internal Producer-side view shared with the inline enqueue. */
struct __pcr_wheel_pcounters {
	uint64_t enqueued;
	uint64_t refused;
} __rte_cache_aligned;

/** @internal First fields of struct pcr_wheel, read by the inline enqueue. */
struct __pcr_wheel_head {
	struct rte_ring *inbox;
	int dynfield_offset;
	/** per-lcore producer counters; [RTE_MAX_LCORE] for non-EAL threads */
	struct __pcr_wheel_pcounters *pcnt;
};

/** @internal Entry of the inbox ring. */
struct __pcr_wheel_entry {
	struct rte_mbuf *m;
	uint64_t tsc;
};

/**
 * Register the departure-time dynamic field (idempotent).
 * @return the field's offset, or -1 with rte_errno set.
 */
int pcr_wheel_dynfield_register(void);

/** The departure time stored in @p m by pcr_wheel_enqueue_burst(). */
static inline uint64_t *
pcr_wheel_departure(struct rte_mbuf *m, int dynfield_offset)
{
	return RTE_MBUF_DYNFIELD(m, dynfield_offset, uint64_t *);
}

/**
 * Fill @p p with the defaults (every numeric field), leaving tsc_hz and
 * start_tsc at 0 for the caller.
 */
void pcr_wheel_params_default(struct pcr_wheel_params *p);

/**
 * Check parameters; on failure write why to @p err (if not NULL).
 * @return 0 or -EINVAL.
 */
int pcr_wheel_params_check(const struct pcr_wheel_params *p, char *err,
			   size_t errlen);

/** Bytes a wheel with these parameters allocates, or 0 if they are invalid. */
size_t pcr_wheel_memsize(const struct pcr_wheel_params *p);

/**
 * Create a wheel.
 * @return the wheel, or NULL with rte_errno set (EINVAL: bad parameter,
 *   logged with the reason; ENOMEM).
 */
struct pcr_wheel *pcr_wheel_create(const struct pcr_wheel_params *p);

/**
 * Free a wheel. Packets still queued are freed (counted flush drops) unless
 * the caller took them out first with pcr_wheel_flush().
 */
void pcr_wheel_free(struct pcr_wheel *w);

/**
 * Insert packets. Any thread, concurrently, lock-free.
 *
 * Writes departure_tsc[i] into each mbuf's dynamic field and hands the
 * packets to the consumer. The wheel takes ownership of the first
 * returned-count packets; the rest (inbox full) stay with the caller,
 * counted `refused`.
 *
 * @return number of packets accepted, 0..n.
 */
static __rte_always_inline unsigned int
pcr_wheel_enqueue_burst(struct pcr_wheel *w, struct rte_mbuf *const *mbufs,
			const uint64_t *departure_tsc, unsigned int n)
{
	const struct __pcr_wheel_head *h = (const struct __pcr_wheel_head *)w;
	struct __pcr_wheel_entry e[64];
	unsigned int done = 0;
	unsigned int lcore = rte_lcore_id();
	struct __pcr_wheel_pcounters *pc;

	if (unlikely(lcore >= RTE_MAX_LCORE))
		lcore = RTE_MAX_LCORE;
	pc = &h->pcnt[lcore];

	while (done < n) {
		unsigned int k = RTE_MIN(n - done, (unsigned int)RTE_DIM(e));
		unsigned int i, got;

		for (i = 0; i < k; i++) {
			e[i].m = mbufs[done + i];
			e[i].tsc = departure_tsc[done + i];
			*pcr_wheel_departure(e[i].m, h->dynfield_offset) =
				e[i].tsc;
		}
		got = rte_ring_mp_enqueue_burst_elem(h->inbox, e, sizeof(e[0]),
						     k, NULL);
		done += got;
		if (got < k)
			break;
	}
	if (lcore == RTE_MAX_LCORE) {
		__atomic_fetch_add(&pc->enqueued, done, __ATOMIC_RELAXED);
		__atomic_fetch_add(&pc->refused, n - done, __ATOMIC_RELAXED);
	} else {
		__atomic_store_n(&pc->enqueued, pc->enqueued + done,
				 __ATOMIC_RELAXED);
		if (unlikely(done < n))
			__atomic_store_n(&pc->refused, pc->refused + n - done,
					 __ATOMIC_RELAXED);
	}
	return done;
}

/**
 * Take out packets whose time has come. Consumer thread only.
 *
 * First moves up to @p n packets from the inbox into their slots (so late
 * packets cannot pile up in the current slot faster than they leave),
 * then advances the wheel's clock towards @p now_tsc, cascading far slots
 * into nearer levels as it crosses their boundaries, and copies out packets
 * of every level-0 slot whose start is <= @p now_tsc, in time order. Stops
 * when @p n packets were copied out (the wheel's clock then stays at the slot
 * being drained) or the wheel has caught up with @p now_tsc.
 *
 * @return number of packets written to @p mbufs, 0..n.
 */
unsigned int pcr_wheel_dequeue_burst(struct pcr_wheel *w, uint64_t now_tsc,
				     struct rte_mbuf **mbufs, unsigned int n);

/**
 * Take out queued packets regardless of their time, in time order (the
 * inbox last). Consumer thread only. Used to drain or drop at shutdown.
 * @return number of packets written to @p mbufs, 0..n.
 */
unsigned int pcr_wheel_flush(struct pcr_wheel *w, struct rte_mbuf **mbufs,
			     unsigned int n);

/**
 * When the wheel next has work, as TSC: the start of the first non-empty
 * level-0 slot or, before it, the boundary at which the first non-empty far
 * slot cascades; so a lower bound of the earliest queued departure (inbox
 * aside). UINT64_MAX when the levels are empty. Consumer thread only.
 */
uint64_t pcr_wheel_next_tsc(const struct pcr_wheel *w);

/**
 * Change the horizon and its policy. Consumer thread only (or while no
 * consumer runs). Packets queued keep their slots.
 * @return 0, or -EINVAL if @p horizon_ns exceeds the geometry's limit.
 */
int pcr_wheel_set_horizon(struct pcr_wheel *w, uint64_t horizon_ns,
			  enum pcr_wheel_horizon_policy policy);

/**
 * A consistent snapshot of the counters. Any thread, any time.
 *
 * The consumer-side counters are read under a seqcount; the producer
 * counters are summed over lcores. `queued` counts the levels' contents
 * plus what producers have enqueued that the consumer has not yet taken.
 */
void pcr_wheel_stats_get(const struct pcr_wheel *w, struct pcr_wheel_stats *s);

/** Fill @p info with the wheel's configuration. */
void pcr_wheel_info_get(const struct pcr_wheel *w, struct pcr_wheel_info *info);

#ifdef __cplusplus
}
#endif

#endif /* PCR_WHEEL_H */
