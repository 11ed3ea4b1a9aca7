/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#ifndef PCR_STAMP_H
#define PCR_STAMP_H

/**
 * @file
 * The timestamper's rule for one packet: its flow's token bucket
 * (pcr_policy.h, private to the RX lcore that owns the flow) gives a lower
 * bound, the flow's previous departure another (a flow's packets never
 * leave out of order), and the shared levels (class, port aggregate) each
 * a bandwidth calendar (pcr_cal.h) in which the packet is placed at the
 * first time every level has room. The flow is charged at that final
 * departure, and so is every shared level: each policy counts the packet
 * where it leaves, so each holds its rate over any window (pcr_cal.h, "The
 * bound"), whatever mix of policies a packet is under.
 *
 * pacer's RX loop (src/dataplane.c) and the property test
 * (tests/policy/test_cal.c) both call this, so the test drives the code
 * that runs.
 */

#include <stdbool.h>
#include <stdint.h>

#include "pcr_cal.h"
#include "pcr_policy.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A flow's timestamper state (the fields pacer's flow entry holds). */
struct pcr_stamp_flow {
	uint64_t empty;    /**< its token bucket (pcr_policy.empty) */
	uint64_t last_dep; /**< its last departure, fine time */
};

/** A new flow at fine time @p now: its bucket full, no departure yet. */
static inline void
pcr_stamp_flow_init(struct pcr_stamp_flow *f, uint64_t now)
{
	f->empty = now - PCR_POLICY_IDLE;
	f->last_dep = now - PCR_POLICY_IDLE;
}

/** What pcr_stamp() charged a packet's flow (and its leaf), for
 *  pcr_stamp_refund(). */
struct pcr_stamp_undo {
	uint64_t fcost;     /**< charged to the flow's bucket (0: unlimited) */
	uint64_t prev_last; /**< the flow's last departure before it */
	uint64_t *leaf;     /**< the leaf's bucket charged (NULL: none) */
	uint64_t lcost;     /**< what it was charged */
};

/** What pcr_stamp() did with a packet. */
enum pcr_stamp_result {
	PCR_STAMP_PLACED = 0, /**< departure found, every policy charged */
	PCR_STAMP_BEYOND,     /**< no departure by the limit: nothing charged */
	PCR_STAMP_CAPPED,     /**< (cap) departs at the limit, levels not
			       *   charged: the horizon-cap trade */
	PCR_STAMP_WAIT,       /**< (pcr_stamp_lead()) a shared level has no
			       *   room by the lead: nothing charged, the
			       *   caller holds the packet and asks again */
};

/**
 * Fill level @p lv's cost and credit for a packet of @p bytes at @p r
 * (a finite rate) on calendar @p cal.
 */
static inline void
pcr_stamp_level(struct pcr_cal_level *lv, struct pcr_cal *cal,
		const struct pcr_rate *r, uint32_t bytes)
{
	lv->cal = cal;
	lv->cost = pcr_rate_cost(r, bytes);
	lv->credit = r->burst < cal->back ? r->burst : cal->back;
}

/**
 * Stamp one packet of @p bytes (wire bytes, as the rates count them), or
 * tell the caller to hold it: the staging rule (src/dataplane.c, "Per-flow
 * staging"). With @p lead 0 the packet is stamped at the first time every
 * policy allows, however far ahead (up to @p limit): under a backlog that
 * is behind every packet stamped before it, first come first served. With
 * a lead (and shared levels), it is stamped only if it can leave within
 * @p lead of now: otherwise PCR_STAMP_WAIT, nothing is charged, and
 * *@p dep is the flow's own bound (past now: the flow's own rate or order
 * made it wait, not only the shared levels), so the room the shared
 * levels free as time passes goes to whichever held flow the caller
 * chooses next. A packet its own flow's rate holds back beyond the lead
 * waits too, rather than being placed ahead: a placement later than a
 * bucket's filled position leaves the time before it unused by anyone
 * (measured: 100 flows of 1 mbit/s under a 20 mbit/s aggregate got 19.6
 * of it when their packets were placed at their own bounds).
 * @param f      the packet's flow (updated when placed or capped)
 * @param fr     the flow's rate (unlimited: no flow bound)
 * @param lv     the shared levels, pcr_stamp_level() filled; lv[i].at
 *               says where each was charged (pcr_cal_refund()), and after
 *               PCR_STAMP_WAIT lv[i].full which level had no room
 * @param n      how many
 * @param now    fine time now
 * @param limit  the latest departure accepted
 * @param cap    past @p limit: depart at it uncharged (true) or refuse
 * @param lead   fine units ahead of @p now a packet may be stamped while
 *               a shared level makes it wait; 0: no waiting
 * @param dep    out: the departure, fine time
 * @param undo   out: what the flow was charged
 * @param one_writer  the caller is the only lcore placing into these
 *               calendars (pcr_cal_place())
 */
static inline __attribute__((always_inline)) enum pcr_stamp_result
pcr_stamp_lead_(struct pcr_stamp_flow *f, const struct pcr_rate *fr,
		uint64_t floor, struct pcr_cal_level *lv, unsigned int n,
		uint64_t now, uint64_t limit, bool cap, uint64_t lead,
		uint32_t bytes, uint64_t *dep, struct pcr_stamp_undo *undo,
		bool one_writer)
{
	enum pcr_stamp_result res = PCR_STAMP_PLACED;
	uint64_t lo = now, c = 0, by = limit;
	bool wait = false;

	if (!pcr_rate_unlimited(fr)) {
		c = pcr_rate_cost(fr, bytes);
		lo = pcr_policy_allow(f->empty, now, c, fr->burst);
	}
	if (pcr_fine_after(f->last_dep, lo))
		lo = f->last_dep;
	if (pcr_fine_after(floor, lo))
		lo = floor;
	if (lead != 0 && n != 0 && !pcr_fine_after(lo, limit)) {
		by = now + lead;
		if (pcr_fine_after(by, limit)) {
			by = limit; /* the lead reaches the horizon */
		} else {
			wait = true;
			/* its own rate or order holds it beyond the lead */
			if (pcr_fine_after(lo, by)) {
				*dep = lo;
				return PCR_STAMP_WAIT;
			}
		}
	}
	if (pcr_fine_after(lo, limit) ||
	    (n != 0 && !pcr_cal_place(lv, n, now, lo, by, &lo, one_writer))) {
		if (wait) {
			*dep = lo;
			return PCR_STAMP_WAIT;
		}
		if (!cap)
			return PCR_STAMP_BEYOND;
		lo = pcr_fine_max(lo, limit);
		res = PCR_STAMP_CAPPED;
	}
	undo->prev_last = f->last_dep;
	undo->fcost = c;
	undo->leaf = NULL;
	f->last_dep = lo;
	if (c != 0)
		f->empty = pcr_policy_after(f->empty, lo, c, fr->burst);
	*dep = lo;
	return res;
}

/** pcr_stamp_lead_() with no bound but the flow's and the levels'. */
static inline __attribute__((always_inline)) enum pcr_stamp_result
pcr_stamp_lead(struct pcr_stamp_flow *f, const struct pcr_rate *fr,
	       struct pcr_cal_level *lv, unsigned int n, uint64_t now,
	       uint64_t limit, bool cap, uint64_t lead, uint32_t bytes,
	       uint64_t *dep, struct pcr_stamp_undo *undo, bool one_writer)
{
	return pcr_stamp_lead_(f, fr, now, lv, n, now, limit, cap, lead,
			       bytes, dep, undo, one_writer);
}

/**
 * pcr_stamp_lead() under a leaf of the subscriber tree too: a token
 * bucket (pcr_policy.h's rule, one word @p leaf at rate @p lr) shared by
 * the leaf's flows, which may be on several RX lcores. Its allowance is
 * one more lower bound; it is charged where the packet leaves, as every
 * level is, so it holds tbf's bound over any window. Where other lcores
 * place too, the charge is a compare-and-swap of the word read for the
 * bound: one that lost to another lcore gives the packet's charges back
 * and stamps it again (at most PCR_CAL_TRIES times, then it is refused
 * as beyond the limit: a leaf fought over by that many lcores at once
 * sheds a packet rather than stall the RX loop).
 * A capped packet (past the limit with @p cap) charges no shared policy,
 * the leaf neither.
 */
static inline enum pcr_stamp_result
pcr_stamp_leaf(struct pcr_stamp_flow *f, const struct pcr_rate *fr,
	       uint64_t *leaf, const struct pcr_rate *lr,
	       struct pcr_cal_level *lv, unsigned int n, uint64_t now,
	       uint64_t limit, bool cap, uint64_t lead, uint32_t bytes,
	       uint64_t *dep, struct pcr_stamp_undo *undo, bool one_writer)
{
	const uint64_t lc = pcr_rate_cost(lr, bytes);
	enum pcr_stamp_result r;
	unsigned int tries;

	for (tries = 0; tries < PCR_CAL_TRIES; tries++) {
		uint64_t e = one_writer ? *leaf :
				 __atomic_load_n(leaf, __ATOMIC_ACQUIRE);
		uint64_t nw;

		r = pcr_stamp_lead_(f, fr,
				    pcr_policy_allow(e, now, lc, lr->burst),
				    lv, n, now, limit, cap, lead, bytes, dep,
				    undo, one_writer);
		if (r != PCR_STAMP_PLACED)
			return r;
		nw = pcr_policy_after(e, *dep, lc, lr->burst);
		if (one_writer)
			*leaf = nw;
		else if (!__atomic_compare_exchange_n(leaf, &e, nw, false,
						      __ATOMIC_ACQ_REL,
						      __ATOMIC_ACQUIRE)) {
			unsigned int i;

			/* another lcore charged the leaf first */
			for (i = 0; i < n; i++)
				pcr_cal_refund_level(&lv[i], false);
			f->empty -= undo->fcost;
			f->last_dep = undo->prev_last;
			continue;
		}
		undo->leaf = leaf;
		undo->lcost = lc;
		return r;
	}
	return PCR_STAMP_BEYOND;
}

/** pcr_stamp_lead() without a lead: every packet is stamped (or refused
 *  beyond @p limit) on the spot. */
static inline enum pcr_stamp_result
pcr_stamp(struct pcr_stamp_flow *f, const struct pcr_rate *fr,
	  struct pcr_cal_level *lv, unsigned int n, uint64_t now,
	  uint64_t limit, bool cap, uint32_t bytes, uint64_t *dep,
	  struct pcr_stamp_undo *undo, bool one_writer)
{
	return pcr_stamp_lead(f, fr, lv, n, now, limit, cap, 0, bytes, dep,
			      undo, one_writer);
}

/**
 * A run of @p k packets of one flow, stamped as @p k calls of
 * pcr_stamp_lead() one after the other would stamp them (the same
 * departures, the same charges, the same flow and calendar after),
 * under at most one shared level: what a call reads again for every
 * packet (the level's terms, now, the lead and the limit) is read once,
 * and a packet is its flow's bound, one bucket's load and store (a
 * compare-and-swap where other lcores place too), and the flow's update.
 * The run stops at the first packet those calls would not place at once
 * in the first bucket from the calendar's hint (pcr_cal_try_()):
 * one that would wait, be refused or capped at the limit, or need the
 * calendar's search (a full bucket, an overdraft), or whose bucket
 * another lcore changed under it. That packet and the rest are left as
 * they came, nothing charged, for the caller's pcr_stamp_lead().
 * @param f      the flow
 * @param fr     its rate (unlimited: no flow bound)
 * @param cal    the shared level's calendar (NULL: none)
 * @param lr     the shared level's rate (finite; unused without @p cal)
 * @param now, limit, lead  as pcr_stamp_lead()'s
 * @param bytes  each packet's bytes, as pcr_stamp_lead()'s
 * @param k      how many
 * @param dep    out: each placed packet's departure, fine time
 * @param lv     out, with a shared level: each placed packet's level, the
 *               i-th at lv[i * stride] (its cal, cost, at and fill, as
 *               pcr_stamp_refund() takes them)
 * @param stride levels from one packet's to the next's in @p lv
 * @param undo   out: what each charged its flow (pcr_stamp_refund())
 * @param one_writer  as pcr_stamp_lead()'s
 * @return how many packets, from the first, were placed.
 */
static inline __attribute__((always_inline)) unsigned int
pcr_stamp_run(struct pcr_stamp_flow *f, const struct pcr_rate *fr,
	      struct pcr_cal *cal, const struct pcr_rate *lr, uint64_t now,
	      uint64_t limit, uint64_t lead, const uint32_t *bytes,
	      unsigned int k, uint64_t *dep, struct pcr_cal_level *lv,
	      unsigned int stride,
	      struct pcr_stamp_undo *undo, bool one_writer)
{
	const bool flow_rate = !pcr_rate_unlimited(fr);
	uint64_t by = limit;
	uint64_t empty = f->empty, last = f->last_dep;
	struct pcr_cal_terms tm = { 0 };
	unsigned int i;

	/* pcr_stamp_lead(): a lead ends the search at now + lead, unless that
	 * passes the limit; past the end the packet waits (or is refused) */
	if (cal != NULL) {
		if (lead != 0 && !pcr_fine_after(now + lead, limit))
			by = now + lead;
		pcr_cal_terms_(&tm, cal,
			       lr->burst < cal->back ? lr->burst : cal->back,
			       now, by);
	}
	for (i = 0; i < k; i++) {
		uint64_t lo = now, c = 0, t;

		if (flow_rate) {
			c = pcr_rate_cost(fr, bytes[i]);
			lo = pcr_policy_allow(empty, now, c, fr->burst);
		}
		if (pcr_fine_after(last, lo))
			lo = last;
		if (pcr_fine_after(lo, by))
			break;
		t = lo;
		if (cal != NULL) {
			/* pcr_cal_place_one_(); a lone writer reads the hint
			 * once: only it moves the hint, and a placement in
			 * the hint's bucket does not */
			uint64_t cost = pcr_rate_cost(lr, bytes[i]), abs, fl;

			if (!one_writer)
				tm.hint = __atomic_load_n(&cal->hint,
							  __ATOMIC_RELAXED);
			if (!pcr_cal_try_(cal, &tm, cost, lo, one_writer, &abs,
					  &fl, &t))
				break; /* full, too far, or another lcore
					* placed there first */
			lv[i * stride].cal = cal;
			lv[i * stride].cost = cost;
			lv[i * stride].at = abs;
			lv[i * stride].fill = fl;
		}
		undo[i].prev_last = last;
		undo[i].fcost = c;
		undo[i].leaf = NULL;
		last = t;
		if (c != 0)
			empty = pcr_policy_after(empty, t, c, fr->burst);
		dep[i] = t;
	}
	f->empty = empty;
	f->last_dep = last;
	return i;
}

/**
 * Give back what pcr_stamp() charged for a packet that is dropped after
 * all: every shared level where it was charged (@p n 0 for a capped one,
 * which charged none), its leaf (pcr_stamp_leaf()) and its flow. Several packets of one flow are
 * given back newest first, so the flow is as before the oldest of them.
 */
static inline void
pcr_stamp_refund(struct pcr_stamp_flow *f, const struct pcr_stamp_undo *undo,
		 const struct pcr_cal_level *lv, unsigned int n,
		 bool one_writer)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		pcr_cal_refund_level(&lv[i], one_writer);
	/* pcr_policy_after() added the cost last: the bucket is where the
	 * packet found it, or later by no more than its own lead */
	f->empty -= undo->fcost;
	f->last_dep = undo->prev_last;
	if (undo->leaf != NULL) {
		if (one_writer)
			*undo->leaf -= undo->lcost;
		else
			__atomic_fetch_sub(undo->leaf, undo->lcost,
					   __ATOMIC_RELAXED);
	}
}

#ifdef __cplusplus
}
#endif

#endif /* PCR_STAMP_H */
