/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#ifndef PCR_POLICY_H
#define PCR_POLICY_H

/**
 * @file
 * Rate policies in earliest-departure-time form (the timestamper).
 *
 * A policy is a token bucket of `rate` bits per second and `burst` bytes
 * (tc tbf's model) written as one time instead of a token count: `empty`,
 * the moment the bucket has paid for every packet reserved so far (it
 * holds no token then, and is full again b = burst-at-the-rate later). A
 * packet costing c (its bytes at the rate) may leave at
 *
 *     allow = max(now, empty + min(c, b))
 *
 * (once the bucket holds c worth of tokens, or is full for a packet larger
 * than the burst) and then moves the bucket on:
 *
 *     empty' = max(empty, departure - b) + c.
 *
 * An idle policy therefore banks at most `burst` bytes of credit, a busy
 * one spaces packets exactly c apart, and a packet larger than the burst
 * still goes (after a full bucket's worth of waiting), where tbf would
 * drop it.
 *
 * Why `empty` and not the time the bucket is full again (`empty + b`, the
 * form this started in): b is the burst in time at the current rate, so
 * it changes with the rate. With the state held as `full`, lowering a
 * rate lengthens b and the next packet's allowance (full - b + c) moves
 * earlier than packets already queued: a rate change reordered a flow
 * (tests/pacer/test_cli_script.sh caught it). `empty` is where the
 * schedule reserved so far ends, whatever the rate; a packet after a
 * change goes after it, at the new rate.
 *
 * Units. Policy time is in *fine* units, TSC cycles << PCR_FINE_SHIFT,
 * counted from an epoch the caller picks, modulo 2^64: every comparison is
 * a signed difference, so the counter may wrap (after 2^56 cycles, 278
 * days at 3 GHz) as long as no two times compared are 2^63 fine units
 * apart; pcr_policy_refresh() keeps an idle shared policy within reach.
 * A rate is held as fine units per byte in 48.16 fixed point, so a
 * 64-byte frame at 400 Gbit/s still costs a cost known to 1 part in 10^5;
 * the rate and every cost are rounded up, so a policy never exceeds its
 * rate.
 *
 * Reach. A policy never looks further ahead than PCR_POLICY_AHEAD_MAX
 * fine units: a departure is at most that far past now, `empty` at most
 * that far past the departure, a burst at most that large. That keeps
 * every time a policy holds within 2^62 of now, so the signed
 * comparisons stay right however slow the rate and however long a flood
 * lasts (a flood charged to a 1 Mbit/s policy, e.g. with
 * --horizon-policy cap, would otherwise carry `empty` 2^63 ahead in
 * about 10^9 packets, and its next packet would leave at once). The cap
 * is 2^53 TSC cycles, 26 days at 4 GHz, far beyond any horizon: only
 * packets beyond the horizon ever meet it.
 *
 * Sharing. A flow policy belongs to one RX lcore (plain loads and stores)
 * and advances by the packet's final departure, so a flow's packets are
 * never closer than its own rate allows. pacer's shared policies (class,
 * port aggregate) are bandwidth calendars (pcr_cal.h, pcr_stamp.h), not
 * token buckets: a token bucket shared by several flows can only be
 * charged at its own allowance (Carousel's rule) or at the packet's final
 * departure, and the first breaks the rate at short time scales while the
 * second wastes the time before that departure. pcr_policy_stamp_shared()
 * stays as that first rule, lock-free (compare-and-swap, or plain stores
 * for its `one_writer`): pacer-bench-sched measures the calendar against
 * it (`pacer_tb`) and tests/policy/test_cal.c shows the checker catching
 * it; fuzz_policy_time holds it to its model.
 *
 * Cost. The compare-and-swap is a locked instruction, a full barrier on
 * x86: a load after it waits for it. A loop that reads a cold mbuf and
 * then stamps it, packet after packet, takes one exposed miss per packet
 * in series; read what the burst needs first (pacer's RX loop classifies
 * the whole burst before stamping). pacer-bench-sched at 16K flows: 170
 * ns per packet read-then-stamp, 39 ns with the burst's lengths read
 * first (docs/BENCHMARKS.md).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pcr_parse.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PCR_FINE_SHIFT 8
#define PCR_RATE_FRAC 16

/** Furthest a policy reaches past now, in fine units (see Reach). */
#define PCR_POLICY_AHEAD_MAX (UINT64_C(1) << 61)

/** Bytes of credit a policy banks by default: one 1500-byte MTU frame. */
#define PCR_BURST_DEFAULT 1514

/** A rate turned into fine units, shared read-only by every lcore. */
struct pcr_rate {
	uint64_t bps;         /**< bits per second; 0 = unlimited */
	uint64_t fpb;         /**< fine units per byte, 48.16; 0 = unlimited */
	uint64_t burst;       /**< credit, fine units, <= PCR_POLICY_AHEAD_MAX */
	uint64_t burst_bytes; /**< credit, bytes */
};

/** Token-bucket state of one policy. */
struct pcr_policy {
	uint64_t empty; /**< fine time by which what is reserved is paid */
};

/** Far enough back that a new policy's bucket is full at any rate. */
#define PCR_POLICY_IDLE ((uint64_t)1 << 58)

/**
 * Fill @p r for @p bps bits per second (0 = unlimited) and @p burst_bytes
 * of credit, with a TSC of @p tsc_hz.
 * @return 0, or -ERANGE if the rate is below 1 bit/s per 2^-16 fine unit
 *   resolution limit (cannot happen for bps >= 1 and tsc_hz < 2^36).
 */
int pcr_rate_init(struct pcr_rate *r, uint64_t bps, uint64_t burst_bytes,
		  uint64_t tsc_hz);

static inline bool
pcr_rate_unlimited(const struct pcr_rate *r)
{
	return r->fpb == 0;
}

/** Fine units @p bytes take at rate @p r, rounded up. */
static inline uint64_t
pcr_rate_cost(const struct pcr_rate *r, uint32_t bytes)
{
	return (uint64_t)(((unsigned __int128)bytes * r->fpb +
			   ((1u << PCR_RATE_FRAC) - 1)) >> PCR_RATE_FRAC);
}

/** Fine time from a TSC value and an epoch. */
static inline uint64_t
pcr_fine(uint64_t tsc, uint64_t epoch_tsc)
{
	return (tsc - epoch_tsc) << PCR_FINE_SHIFT;
}

/**
 * Fine time @p t (at or after @p now) as TSC, rounded up: never earlier
 * than @p t. @p now is the fine time of TSC @p now_tsc.
 */
static inline uint64_t
pcr_fine_tsc(uint64_t t, uint64_t now, uint64_t now_tsc)
{
	return now_tsc +
	       ((t - now + (1u << PCR_FINE_SHIFT) - 1) >> PCR_FINE_SHIFT);
}

/** a later than b, wrap-safe. */
static inline bool
pcr_fine_after(uint64_t a, uint64_t b)
{
	return (int64_t)(a - b) > 0;
}

static inline uint64_t
pcr_fine_max(uint64_t a, uint64_t b)
{
	return pcr_fine_after(a, b) ? a : b;
}

/**
 * Earliest departure a bucket at @p empty allows a packet of @p cost,
 * with a burst of @p burst (fine units), at most PCR_POLICY_AHEAD_MAX
 * past @p now.
 */
static inline uint64_t
pcr_policy_allow(uint64_t empty, uint64_t now, uint64_t cost, uint64_t burst)
{
	uint64_t dep = pcr_fine_max(empty + (cost < burst ? cost : burst), now);

	return dep - now > PCR_POLICY_AHEAD_MAX ? now + PCR_POLICY_AHEAD_MAX :
						  dep;
}

/**
 * The bucket after a packet of @p cost left at @p departure, at most
 * PCR_POLICY_AHEAD_MAX past it.
 */
static inline uint64_t
pcr_policy_after(uint64_t empty, uint64_t departure, uint64_t cost,
		 uint64_t burst)
{
	uint64_t e = pcr_fine_max(empty, departure - burst) + cost;

	/* e may lie before the departure (by up to the burst): signed */
	return (int64_t)(e - departure) > (int64_t)PCR_POLICY_AHEAD_MAX ?
		       departure + PCR_POLICY_AHEAD_MAX :
		       e;
}

/** The bucket is full at @p now: nothing reserved is still unpaid and
 *  burst has accrued since (a flow in this state may be forgotten). */
static inline bool
pcr_policy_idle(uint64_t empty, uint64_t now, uint64_t burst)
{
	return !pcr_fine_after(empty + burst, now);
}

/** A new policy, its bucket full at @p now (whatever the rate). */
static inline void
pcr_policy_init(struct pcr_policy *p, uint64_t now)
{
	p->empty = now - PCR_POLICY_IDLE;
}

/*
 * @internal Replace @p p's state @p old by @p nw: by compare-and-swap
 * (false: another lcore got there first, @p old now holds its state, try
 * again) or, for its only writer, by a store.
 */
static inline bool
pcr_policy_update_(struct pcr_policy *p, uint64_t *old, uint64_t nw,
		   bool one_writer)
{
	if (one_writer) {
		__atomic_store_n(&p->empty, nw, __ATOMIC_RELAXED);
		return true;
	}
	return __atomic_compare_exchange_n(&p->empty, old, nw, true,
					   __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/**
 * Shared policy: reserve the packet's time and return it. Lock-free, any
 * lcore; @p one_writer where the calling lcore is the only one that stamps
 * @p p (see "Sharing").
 */
static inline uint64_t
pcr_policy_stamp_shared(struct pcr_policy *p, const struct pcr_rate *r,
			uint64_t now, uint32_t bytes, bool one_writer)
{
	uint64_t cost = pcr_rate_cost(r, bytes);
	uint64_t old = __atomic_load_n(&p->empty, __ATOMIC_RELAXED);
	uint64_t dep, nw;

	do {
		dep = pcr_policy_allow(old, now, cost, r->burst);
		nw = pcr_policy_after(old, dep, cost, r->burst);
	} while (!pcr_policy_update_(p, &old, nw, one_writer));
	return dep;
}

/**
 * Keep an idle shared policy within 2^60 fine units of @p now (a credit it
 * could never use anyway, since burst is far smaller). Any lcore, rarely.
 */
static inline void
pcr_policy_refresh(struct pcr_policy *p, uint64_t now)
{
	uint64_t old = __atomic_load_n(&p->empty, __ATOMIC_RELAXED);

	if ((int64_t)(now - old) > (int64_t)1 << 60)
		__atomic_compare_exchange_n(&p->empty, &old,
					    now - ((uint64_t)1 << 59), false,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}


#ifdef __cplusplus
}
#endif

#endif /* PCR_POLICY_H */
