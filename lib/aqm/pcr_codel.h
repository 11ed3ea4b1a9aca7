/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#ifndef PCR_CODEL_H
#define PCR_CODEL_H

/**
 * @file
 * CoDel (RFC 8289) decided when a packet's departure time is known.
 *
 * A dequeue-time AQM learns a packet's sojourn at the head of the queue,
 * one sojourn after the queue built. A pacer knows it when it stamps the
 * packet: the packet will leave at its departure time, having waited from
 * its arrival (in staging, then in the wheel) until then. So the caller
 * presents each packet of a queue (a flow) once, in departure order, with
 * the time it will leave (@p now: the departure, the dequeue time of the
 * RFC) and the sojourn it will have had then, and gets the RFC's verdict:
 * whether this packet is the one CoDel signals (drops, or marks CE when it
 * is ECN-capable).
 *
 * The state machine is RFC 8289's dequeue(), taken apart per packet: what
 * the RFC does to the packets it dequeues one after another inside one
 * dequeue() call (drop one, look at the next), this does to consecutive
 * calls, with two flags saying that the call is for the packet the RFC
 * would look at next (after entering the dropping state it is returned
 * unconditionally; after a drop in the dropping state it decides whether
 * to go on). Given the same packets at the same times it signals exactly
 * the packets the RFC's pseudocode drops (tests/aqm/test_codel.c holds it
 * to a model written from the pseudocode, queue and all, over random
 * traces). The control law's step, interval / sqrt(count), is computed
 * exactly in integers (pcr_codel_step()), so both agree to the unit.
 *
 * Times are in whatever unit the caller keeps (pacer: fine time), the
 * same for @p now, the sojourn and the parameters. An empty queue between
 * packets (the RFC's dequeue() of nothing) is the caller's to say:
 * pcr_codel_idle().
 */

#include <stdbool.h>
#include <stdint.h>

/** CoDel's settings, in the caller's time unit. */
struct pcr_codel_params {
	uint64_t target;       /**< acceptable standing queue (5 ms) */
	uint64_t interval;     /**< longer than a round trip (100 ms) */
	uint64_t ce_threshold; /**< above it, an ECT(1) packet is marked CE
				*   whatever the state (DCTCP/L4S); 0: off */
	uint32_t mtu_bytes;    /**< a queue holding no more than this is
				*   never above target (the RFC's
				*   MAXPACKET) */
};

/** One queue's CoDel state (per flow: 24 bytes). */
struct pcr_codel {
	uint64_t first_above;  /**< when the sojourn went above target for
				*   an interval, 0: below (the RFC's
				*   first_above_time) */
	uint64_t drop_next;    /**< next signal in the dropping state */
	uint32_t count;        /**< signals in this dropping state */
	uint32_t lastcount;    /**< count at the last entry */
	uint8_t dropping;      /**< in the dropping state */
	uint8_t after_entry;   /**< this is the packet after the one that
				*   entered the dropping state: it passes */
	uint8_t after_signal;  /**< this is the packet after a signal in the
				*   dropping state: drop_next moves on if it
				*   is above target too */
};

/** What pcr_codel_judge() says of a packet (bits). */
enum {
	PCR_CODEL_SIGNAL = 1,  /**< CoDel signals it: mark CE or drop */
	PCR_CODEL_SHALLOW = 2, /**< its sojourn is over ce_threshold */
};

/**
 * The queue emptied (the RFC's dequeue() found nothing): below target and
 * out of the dropping state; count and drop_next stay, so a queue that
 * builds again soon starts where it left (the RFC's re-entry rule).
 */
static inline void
pcr_codel_idle(struct pcr_codel *c)
{
	c->first_above = 0;
	c->dropping = 0;
	c->after_entry = 0;
	c->after_signal = 0;
}

/**
 * @p c is below target and out of the dropping state, with nothing of a
 * signal pending: a packet whose sojourn is under the target (and not
 * over ce_threshold) leaves it as it is and is not signalled, so
 * pcr_codel_judge() need not be called for it (the fast path of a queue
 * with nothing to signal).
 */
static inline bool
pcr_codel_quiet(const struct pcr_codel *c)
{
	return (c->first_above | c->dropping | c->after_entry |
		c->after_signal) == 0;
}

/**
 * A packet of sojourn @p sojourn passes @p c untouched: @p c is quiet and
 * the sojourn is under the target and not over ce_threshold, so
 * pcr_codel_judge() would change nothing and signal nothing (the idle
 * reset neither). The fast path of a queue with nothing to signal.
 */
static inline bool
pcr_codel_passes(const struct pcr_codel *c, const struct pcr_codel_params *p,
		 uint64_t sojourn)
{
	return sojourn < p->target &&
	       (p->ce_threshold == 0 || sojourn <= p->ce_threshold) &&
	       pcr_codel_quiet(c);
}

/** A queue's state at start: below target, not dropping, nothing
 *  signalled yet. */
static inline void
pcr_codel_init(struct pcr_codel *c)
{
	c->drop_next = 0;
	c->count = 0;
	c->lastcount = 0;
	pcr_codel_idle(c);
}

/** interval / sqrt(count), rounded down, exactly. */
uint64_t pcr_codel_step(uint64_t interval, uint32_t count);

/* The RFC's dodequeue(): is this packet above target long enough? */
static inline bool
pcr_codel_ok_to_drop_(struct pcr_codel *c, const struct pcr_codel_params *p,
		      uint64_t now, uint64_t sojourn, uint64_t backlog)
{
	if (sojourn < p->target || backlog <= p->mtu_bytes) {
		c->first_above = 0;
		return false;
	}
	if (c->first_above == 0) {
		c->first_above = now + p->interval;
		/* 0 means below: never the time itself */
		if (c->first_above == 0)
			c->first_above = 1;
		return false;
	}
	return now >= c->first_above;
}

/**
 * The verdict on the next packet of the queue: it leaves at @p now, having
 * waited @p sojourn, with @p backlog bytes in the queue after it leaves
 * (the RFC's bytes() after the dequeue).
 * @return PCR_CODEL_SIGNAL and/or PCR_CODEL_SHALLOW bits, 0 to let it go.
 */
static inline unsigned int
pcr_codel_judge(struct pcr_codel *c, const struct pcr_codel_params *p,
		uint64_t now, uint64_t sojourn, uint64_t backlog)
{
	unsigned int shallow = p->ce_threshold != 0 &&
			       sojourn > p->ce_threshold ? PCR_CODEL_SHALLOW : 0;
	bool ok = pcr_codel_ok_to_drop_(c, p, now, sojourn, backlog);

	if (c->after_entry) {
		/* the RFC returns the packet after the one it dropped on
		 * entry, whatever it is (dodequeue's bookkeeping done) */
		c->after_entry = 0;
		return shallow;
	}
	if (c->dropping) {
		if (!ok) {
			c->dropping = 0;
			c->after_signal = 0;
			return shallow;
		}
		if (c->after_signal) {
			/* still above after a signal: the next one later */
			c->after_signal = 0;
			c->drop_next += pcr_codel_step(p->interval, c->count);
		}
		if ((int64_t)(now - c->drop_next) >= 0) {
			c->count++;
			c->after_signal = 1;
			return PCR_CODEL_SIGNAL | shallow;
		}
		return shallow;
	}
	if (ok) {
		uint32_t delta = c->count - c->lastcount;

		c->dropping = 1;
		c->count = 1;
		/* back soon after it left: carry the count on (RFC 8289,
		 * 5.4 and its pseudocode) */
		if (delta > 1 && (int64_t)(now - c->drop_next) <
					 (int64_t)(16 * p->interval))
			c->count = delta;
		c->drop_next = now + pcr_codel_step(p->interval, c->count);
		c->lastcount = c->count;
		c->after_entry = 1;
		return PCR_CODEL_SIGNAL | shallow;
	}
	return shallow;
}

#endif /* PCR_CODEL_H */
