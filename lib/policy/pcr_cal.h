/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#ifndef PCR_CAL_H
#define PCR_CAL_H

/**
 * @file
 * Bandwidth calendars: the shared policies (class, port aggregate) charged
 * where each packet actually leaves.
 *
 * Why. A shared policy kept as one token bucket (pcr_policy.h) must be
 * charged either at its own allowance or at the packet's final departure.
 * At its own allowance (Carousel's rule, what pacer did first), a packet
 * that another policy holds back later is counted where it does not
 * leave: the aggregate's clock runs ahead of the wire, and what a second
 * class stamps against it lands on top of the first class's departures
 * (measured: 1.5x the aggregate's rate over 100 ms). At the final
 * departure, the one clock jumps to that time and the capacity before it
 * is lost to every other flow. A calendar keeps both: it is a ring of
 * buckets over time, each holding how much of its time is already
 * reserved, so a packet can be placed in any hole, early or late.
 *
 * The rule. Time is in fine units (pcr_policy.h). A calendar's buckets are
 * `width` fine units wide (a power of two); bucket k covers
 * [k * width, (k + 1) * width) and holds `fill`, the part of its time
 * reserved so far (a packet of b bytes reserves its cost, b at the
 * policy's rate). For a packet with a lower bound `t` on its departure
 * (now, its flow's allowance, its flow's previous departure), each level
 * looks for the first place from `t - credit` (credit: the level's burst,
 * so an idle level lets a burst go at once, as a token bucket does) where
 * a bucket has room: the position is the bucket's start plus its fill
 * (time left unused before `now - credit + cost` counts as filled: no
 * packet can be placed there any more; the packet's own cost, because a
 * token bucket's burst counts the packet that spends it: after idle one
 * credit goes at once, this packet included, as tbf lets it, not a credit
 * and a frame more). The departure is the latest of `t` and every level's
 * position, found again at that time until no level moves it (two levels
 * settle in one or two rounds). Each level is then charged there: its
 * fill grows by the cost; what goes past the bucket's end (an overdraft)
 * is carried into the next buckets, each taking the room it has, and a
 * bucket is chosen only if they can take it without passing a full one.
 * A departure is never earlier than a level's position.
 *
 * The bound. For every level and every window [a, a + W): the bytes that
 * leave in it are at most rate x W + credit + one bucket + one frame.
 * Sketch: a bucket's fill never exceeds its width, and the fills of a run
 * of buckets plus what is carried out of its last one add up to the cost
 * of the packets placed in it (carries telescope). A packet that leaves
 * in the window was placed no later than its departure and no earlier
 * than the window's start less the credit, so the packets leaving in the
 * window were placed in buckets from bucket(a - credit) to bucket(a + W):
 * whole buckets inside, at most one partial bucket at the left edge, and
 * at the right edge only packets whose position (start + fill before
 * them) is inside the window, i.e. fill up to the window's end plus the
 * last packet's cost. tests/policy/test_cal.c drives this code through
 * random scenarios and checks exactly this bound.
 *
 * Sharing. Any RX lcore may place packets: each bucket is one 64-bit word
 * (a lap tag and the fill) changed by compare-and-swap, and a level whose
 * bucket changed under it (another lcore placed there) is looked at
 * again; a packet whose later level no longer fits gives back what it
 * charged and is placed again. Where one lcore is the only writer
 * (`one_writer`), plain stores. Buckets need no clearing: a bucket whose
 * tag is not its lap's is empty.
 *
 * Reach. The ring covers `span` = buckets x width fine units: from `back`
 * (the largest credit) behind now to `reach` ahead, with two buckets
 * between the ends. A packet that would leave beyond `reach` is not
 * placed (the caller drops it, or caps it and charges nothing).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Bits of a bucket word that hold the fill; the rest is the lap tag. */
#define PCR_CAL_FILL_BITS 44
#define PCR_CAL_FILL_MASK ((UINT64_C(1) << PCR_CAL_FILL_BITS) - 1)
/** Widest bucket, so that a full one fits the fill field. */
#define PCR_CAL_WIDTH_SHIFT_MAX 42
/** Narrowest bucket: one TSC cycle (departures are whole cycles). */
#define PCR_CAL_WIDTH_SHIFT_MIN 8
/** Most buckets one calendar holds (8 bytes each: 512 KiB). */
#define PCR_CAL_BUCKETS_MAX (UINT32_C(1) << 16)
/** The largest frame a calendar is sized for (bytes, wire overhead
 *  aside): a 1500-byte MTU frame with its Ethernet header; a larger one
 *  overdraws into the next buckets. */
#define PCR_CAL_FRAME_BYTES 1514u
/**
 * Largest frames a bucket holds at least. With one, the packets of a
 * class whose flows send in phase left every other bucket full and the
 * one between half empty, and a frame larger than that hole never fit
 * (the demo's bulk class got half its rate and the aggregate 27.7 of its
 * 40 mbit/s over its lifetime); with two, the same placements leave no
 * such holes. The bound grows by the difference (one bucket).
 */
#define PCR_CAL_BUCKET_FRAMES 2
/** Placements one packet tries while other lcores take its room. */
#define PCR_CAL_TRIES 64
/** Most levels one packet is placed under: its class, the interior nodes
 *  of its subscriber tree's path (src/tree.h: up to 8) and the port
 *  aggregate. */
#define PCR_CAL_LEVELS_MAX 10

/** A calendar. Created and freed on the control path. */
struct pcr_cal {
	uint64_t *bucket;  /**< tag << FILL_BITS | fill, fine units */
	uint64_t width;    /**< bucket width, fine units (2^shift) */
	uint64_t mask;     /**< buckets - 1 */
	uint64_t back;     /**< largest credit a search starts behind t */
	uint64_t reach;    /**< furthest past now a packet is placed */
	uint32_t shift;    /**< log2(width) */
	uint32_t nb_shift; /**< log2(buckets) */
	/** Second cache line, written by every placement: the first bucket
	 *  that may have room. Every bucket from where a search may start to
	 *  it is full, so a search starts there instead of walking a backlog
	 *  bucket by bucket (a packet behind 65 ms of backlog at 2 Gbit/s
	 *  walked 400 buckets: 850 ns a packet). A placement that started at
	 *  it moves it to the first bucket it saw with room; a refund moves it
	 *  back to the bucket it gives room to. Advisory: two lcores racing
	 *  may leave it past a bucket a refund just reopened, which then goes
	 *  unused (capacity lost, never a rate exceeded). */
	uint64_t hint __attribute__((aligned(64)));
};

/** What pcr_cal_create() sizes a calendar for. */
struct pcr_cal_params {
	uint64_t frame_cost; /**< fine units of the largest frame at the
			      *   rate: a bucket holds PCR_CAL_BUCKET_FRAMES */
	uint64_t reach;      /**< fine units ahead it must place packets */
	uint64_t back;       /**< largest credit (burst), fine units */
};

/**
 * A calendar for @p p, its memory touched (no page fault later): buckets
 * of the smallest power-of-two width that holds PCR_CAL_BUCKET_FRAMES
 * largest frames and lets at
 * most PCR_CAL_BUCKETS_MAX buckets cover back + reach and two buckets
 * more.
 * @return the calendar, or NULL with errno ENOMEM, or EINVAL when the
 *   reach is beyond what the widest bucket can cover.
 */
struct pcr_cal *pcr_cal_create(const struct pcr_cal_params *p);

/** Free @p c (NULL: nothing). */
void pcr_cal_free(struct pcr_cal *c);

/**
 * @p c has the shape pcr_cal_create(@p p) would give (the same bucket
 * width, at least the reach and the credit): a rate changed at run time
 * keeps its calendar when this holds, and gets a new one (pcr_cal_copy())
 * when it does not, so a bucket stays two to four frames at the rate.
 */
bool pcr_cal_suits(const struct pcr_cal *c, const struct pcr_cal_params *p);

/**
 * Seed @p dst, a new calendar, with what @p src has reserved from @p now
 * less its credit on, time for time (a reservation is time: packets
 * already placed keep their departures, new ones go around them at the
 * new rate). Control path, while RX lcores may still place into @p src:
 * what they place there between this copy and their switch to @p dst is
 * not carried over (one burst's worth).
 */
void pcr_cal_copy(struct pcr_cal *dst, const struct pcr_cal *src,
		  uint64_t now);

/** Bytes a bucket of @p c holds at a cost of @p fpb (pcr_rate.fpb). */
uint64_t pcr_cal_bucket_bytes(const struct pcr_cal *c, uint64_t fpb);

/** One level a packet is placed under: its calendar and its terms. */
struct pcr_cal_level {
	struct pcr_cal *cal;
	uint64_t cost;   /**< the packet at the level's rate, fine units */
	uint64_t credit; /**< the level's burst, fine units (<= cal->back) */
	uint64_t at;     /**< out: the bucket (absolute) it was charged in */
	uint64_t fill;   /**< out: the fill it was placed at in bucket `at`
			  *   (what came before it there; the part past the
			  *   bucket's width was carried into the next ones:
			  *   pcr_cal_refund_level() gives it back there) */
	bool full;       /**< out, when pcr_cal_place() fails: this level
			  *   had no room by the limit (the others may) */
};

/* ------------------------------------------------------------------ */
/* Internals, inline for the fast path                                  */

static inline uint64_t
pcr_cal_abs_(const struct pcr_cal *c, uint64_t t)
{
	return t >> c->shift;
}

/*
 * Bucket @p a before bucket @p b. Absolute buckets count modulo
 * 2^(64 - shift) (fine time wraps, and a search may start before time 0):
 * compared as the fine times they start at.
 */
static inline bool
pcr_cal_before_(const struct pcr_cal *c, uint64_t a, uint64_t b)
{
	return (int64_t)((a - b) << c->shift) < 0;
}

static inline uint64_t *
pcr_cal_slot_(const struct pcr_cal *c, uint64_t abs)
{
	return &c->bucket[abs & c->mask];
}

static inline uint64_t
pcr_cal_tag_(const struct pcr_cal *c, uint64_t abs)
{
	return (abs >> c->nb_shift) << PCR_CAL_FILL_BITS;
}

/* The fill word @p w holds for bucket @p abs: 0 if it is another lap's. */
static inline uint64_t
pcr_cal_fill_(const struct pcr_cal *c, uint64_t w, uint64_t abs)
{
	return (w & ~PCR_CAL_FILL_MASK) == pcr_cal_tag_(c, abs) ?
		       w & PCR_CAL_FILL_MASK :
		       0;
}

static inline uint64_t
pcr_cal_load_(const struct pcr_cal *c, uint64_t abs)
{
	return __atomic_load_n(pcr_cal_slot_(c, abs), __ATOMIC_RELAXED);
}

/*
 * Can an overdraft of @p rem fine units, from the bucket before @p abs,
 * be carried into @p abs and the buckets after it: each takes what room
 * it has, and none on the way may be full (a carry never passes a full
 * bucket: that keeps what leaves in any run of buckets within the run's
 * time and one frame). Not past the bucket holding fine time @p end.
 */
static inline bool
pcr_cal_carry_fits_(const struct pcr_cal *c, uint64_t abs, uint64_t rem,
		    uint64_t end)
{
	for (;; abs++) {
		uint64_t f;

		if ((int64_t)((abs << c->shift) - end) > 0)
			return false;
		f = pcr_cal_fill_(c, pcr_cal_load_(c, abs), abs);
		if (f >= c->width)
			return false;
		if (rem <= c->width - f)
			return true;
		rem -= c->width - f;
	}
}

/*
 * The unreserved time of bucket @p abs (starting at @p start) is gone
 * before @p gone (pcr_cal_gone_(): no packet can be placed there any
 * more): the fill a search or a charge counts with.
 */
static inline uint64_t
pcr_cal_floor_(const struct pcr_cal *c, uint64_t start, uint64_t gone)
{
	uint64_t d = gone - start;

	if ((int64_t)d <= 0)
		return 0;
	return d < c->width ? d : c->width;
}

/*
 * Where a level of @p credit has no unreserved time left at @p now for a
 * packet of @p cost: now less the credit less what the packet spends of
 * it (a token bucket's burst counts the packet that spends it). A smaller
 * packet finds more of the credit left, as tbf lets it: a late RX pass
 * catches up by a credit of small packets.
 */
static inline uint64_t
pcr_cal_gone_(uint64_t now, uint64_t credit, uint64_t cost)
{
	return now - credit + (cost < credit ? cost : credit);
}

/*
 * The first bucket from the one holding @p lo on where a packet of
 * @p cost fits in @p c, up to the bucket holding fine time @p end; time before
 * @p gone counts as reserved. @return its position (fine: the bucket's
 * start plus its fill, which may lie before @p lo) and the bucket; false
 * if none by @p end's bucket. @p gone0 (<= @p gone): now less the whole
 * credit, where the time is gone for every packet (the smallest one's
 * cost aside): the hint moves only past what is full at gone0, so a
 * larger packet's search never takes a bucket away from a smaller one's.
 */
static inline bool
pcr_cal_find_(struct pcr_cal *c, uint64_t lo, uint64_t gone, uint64_t gone0,
	      uint64_t cost, uint64_t end, uint64_t *pos, uint64_t *abs_out,
	      uint64_t *fill_out)
{
	uint64_t abs = pcr_cal_abs_(c, lo);
	uint64_t hint = __atomic_load_n(&c->hint, __ATOMIC_RELAXED);
	uint64_t start, room = 0;
	bool roomy = false;
	bool from_hint = !pcr_cal_before_(c, hint, abs);
	/* a search from gone's bucket, the first one any search can start
	 * at, may move a hint left behind it (an idle level's: every bucket
	 * before gone's is gone, so full); without this the hint stayed
	 * behind for good once a level went idle, and every later backlog
	 * was walked bucket by bucket again */
	bool move = from_hint || abs == pcr_cal_abs_(c, gone0);
	bool found = false;

	/* every bucket from abs to the hint is full: start at the hint */
	if (from_hint)
		abs = hint;
	for (start = abs << c->shift; (int64_t)(start - end) <= 0;
	     abs++, start += c->width) {
		uint64_t f = pcr_cal_fill_(c, pcr_cal_load_(c, abs), abs);
		uint64_t floor = pcr_cal_floor_(c, start, gone);

		if (f < floor)
			f = floor;
		if (f >= c->width)
			continue;
		if (!roomy) {
			room = abs;
			roomy = true;
		}
		if (f + cost > c->width &&
		    !pcr_cal_carry_fits_(c, abs + 1, f + cost - c->width, end))
			continue;
		*pos = start + f;
		*abs_out = abs;
		*fill_out = f;
		found = true;
		break;
	}
	if (!roomy) /* every bucket to the end is full */
		room = pcr_cal_abs_(c, end) + 1;
	if (move && pcr_cal_before_(c, hint, room))
		__atomic_store_n(&c->hint, room, __ATOMIC_RELAXED);
	return found;
}

/* A bucket @p abs has room again: no search may start past it. */
static inline void
pcr_cal_hint_back_(struct pcr_cal *c, uint64_t abs, bool one_writer)
{
	uint64_t h = __atomic_load_n(&c->hint, __ATOMIC_RELAXED);

	while (pcr_cal_before_(c, abs, h)) {
		if (one_writer) {
			__atomic_store_n(&c->hint, abs, __ATOMIC_RELAXED);
			return;
		}
		if (__atomic_compare_exchange_n(&c->hint, &h, abs, true,
						__ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			return;
	}
}

/*
 * Add @p add to bucket @p abs, whose fill must stay at most @p fmax
 * before the add (the position the caller placed against) and whose new
 * fill is at least @p floor first; the part past the width is returned
 * in @p over. @return false (nothing changed) if the bucket no longer
 * allows it.
 */
static inline bool
pcr_cal_add_(struct pcr_cal *c, uint64_t abs, uint64_t floor, uint64_t fmax,
	     uint64_t add, uint64_t *over, bool one_writer)
{
	uint64_t *s = pcr_cal_slot_(c, abs);
	uint64_t tag = pcr_cal_tag_(c, abs);
	uint64_t w = __atomic_load_n(s, __ATOMIC_RELAXED);

	for (;;) {
		uint64_t f = pcr_cal_fill_(c, w, abs), nf;

		if (f < floor)
			f = floor;
		if (f > fmax || f >= c->width)
			return false;
		nf = f + add;
		*over = nf > c->width ? nf - c->width : 0;
		nf -= *over;
		if (one_writer) {
			__atomic_store_n(s, tag | nf, __ATOMIC_RELAXED);
			return true;
		}
		if (__atomic_compare_exchange_n(s, &w, tag | nf, false,
						__ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			return true;
	}
}

/*
 * Carry @p rem into @p abs and on (as pcr_cal_carry_fits_() found it).
 * @return false if another lcore filled a bucket first; what was added is
 * then in @p done (fine units, from @p abs on) for pcr_cal_give_().
 */
static inline bool
pcr_cal_carry_(struct pcr_cal *c, uint64_t abs, uint64_t rem,
	       uint64_t *done, bool one_writer)
{
	*done = 0;
	for (; rem != 0; abs++) {
		uint64_t *s = pcr_cal_slot_(c, abs);
		uint64_t tag = pcr_cal_tag_(c, abs);
		uint64_t w = __atomic_load_n(s, __ATOMIC_RELAXED), f, take;

		for (;;) {
			f = pcr_cal_fill_(c, w, abs);
			if (f >= c->width)
				return false;
			take = rem < c->width - f ? rem : c->width - f;
			if (one_writer) {
				__atomic_store_n(s, tag | (f + take),
						 __ATOMIC_RELAXED);
				break;
			}
			if (__atomic_compare_exchange_n(s, &w, tag | (f + take),
							false, __ATOMIC_RELAXED,
							__ATOMIC_RELAXED))
				break;
		}
		*done += take;
		rem -= take;
	}
	return true;
}

/* Take @p amount back from bucket @p abs and the ones after it. */
static inline void
pcr_cal_give_(struct pcr_cal *c, uint64_t abs, uint64_t amount,
	      bool one_writer)
{
	unsigned int guard;

	if (amount != 0)
		pcr_cal_hint_back_(c, abs, one_writer);
	for (guard = 0; amount != 0 && guard <= c->mask; guard++, abs++) {
		uint64_t *s = pcr_cal_slot_(c, abs);
		uint64_t w = __atomic_load_n(s, __ATOMIC_RELAXED);

		for (;;) {
			uint64_t f = pcr_cal_fill_(c, w, abs);
			uint64_t take = f < amount ? f : amount;

			if (take == 0)
				break;
			if (one_writer) {
				__atomic_store_n(s, w - take, __ATOMIC_RELAXED);
				amount -= take;
				break;
			}
			if (__atomic_compare_exchange_n(s, &w, w - take, false,
							__ATOMIC_RELAXED,
							__ATOMIC_RELAXED)) {
				amount -= take;
				break;
			}
		}
	}
}

/*
 * Charge level @p lv at departure @p t in the bucket the last search found
 * (lv->at): its fill, what another lcore may have added since included,
 * must still be no later than @p t and leave room.
 */
static inline bool
pcr_cal_charge_(struct pcr_cal_level *lv, uint64_t gone, uint64_t t,
		bool one_writer)
{
	struct pcr_cal *c = lv->cal;
	uint64_t abs = lv->at, start = abs << c->shift, over, done;

	/* a lone writer: the bucket is as the search found it; a packet
	 * that fits in it is one store */
	if (one_writer && lv->fill + lv->cost <= c->width) {
		__atomic_store_n(pcr_cal_slot_(c, abs),
				 pcr_cal_tag_(c, abs) | (lv->fill + lv->cost),
				 __ATOMIC_RELAXED);
		return true;
	}
	if (!pcr_cal_add_(c, abs, pcr_cal_floor_(c, start, gone), t - start,
			  lv->cost, &over, one_writer))
		return false;
	if (over != 0 && !pcr_cal_carry_(c, abs + 1, over, &done, one_writer)) {
		pcr_cal_give_(c, abs + 1, done, one_writer);
		pcr_cal_give_(c, abs, lv->cost - over, one_writer);
		return false;
	}
	return true;
}

/** Fine time @p t rounded up to a whole TSC cycle. */
static inline uint64_t
pcr_cal_round_(uint64_t t)
{
	const uint64_t one = UINT64_C(1) << PCR_CAL_WIDTH_SHIFT_MIN;

	return (t + one - 1) & ~(one - 1);
}

/*
 * What pcr_cal_try_() reads of a level and the time, read once for a run
 * of tries (locals, so that the stores of a run do not make the compiler
 * read them again).
 */
struct pcr_cal_terms {
	uint64_t hint;   /* the calendar's hint */
	uint64_t credit; /* the level's credit (pcr_cal_level) */
	uint64_t gone;   /* now less the credit: where the floor starts
			  * (a packet's own: its cost later, pcr_cal_gone_()) */
	uint64_t now;
	int64_t ahead;   /* how far past now a departure may be */
	uint32_t shift;  /* the calendar's bucket width, log2 */
};

/* How far past @p now a departure may be: to @p limit, the reach at most. */
static inline int64_t
pcr_cal_ahead_(const struct pcr_cal *c, uint64_t now, uint64_t limit)
{
	int64_t ahead = (int64_t)(limit - now);

	return ahead > (int64_t)c->reach ? (int64_t)c->reach : ahead;
}

/* The terms of calendar @p c for a level of @p credit at @p now, by @p limit. */
static inline void
pcr_cal_terms_(struct pcr_cal_terms *tm, const struct pcr_cal *c,
	       uint64_t credit, uint64_t now, uint64_t limit)
{
	tm->hint = __atomic_load_n(&c->hint, __ATOMIC_RELAXED);
	tm->credit = credit;
	tm->gone = now - credit;
	tm->now = now;
	tm->ahead = pcr_cal_ahead_(c, now, limit);
	tm->shift = c->shift;
}

/*
 * One bucket's try for a packet of @p cost at or after fine time @p lo,
 * with the terms @p tm: the bucket a search starts at (the hint, or the
 * one holding @p lo rounded up less the level's credit) takes the whole
 * packet. That is the
 * answer pcr_cal_find_() gives (the first bucket with room that takes it,
 * no carry) with one load and one store and no loop; the hint stays where
 * it is (it already points at this bucket, or the search started past
 * it). @return false, nothing
 * charged, where the bucket is full or the packet would overdraw it, or
 * the departure is too far (the general search then decides), or, with
 * !@p one_writer, another lcore changed the bucket first (its charge is a
 * compare-and-swap); else the bucket in *@p at, the departure in *@p dep.
 *
 * Two branches that are predicted the same way packet after packet are
 * kept branches (an empty asm in the rare arm stops the compiler turning
 * them into selects): under a backlog the search starts at the hint, so
 * the bucket's load need not wait for the flow's bound, and the bucket is
 * ahead of now, so its unreserved time is not gone (no floor).
 */
static inline __attribute__((always_inline)) bool
pcr_cal_try_(struct pcr_cal *c, const struct pcr_cal_terms *tm,
	     uint64_t cost, uint64_t lo, bool one_writer, uint64_t *at,
	     uint64_t *fill, uint64_t *dep)
{
	const uint32_t shift = tm->shift;
	const uint64_t width = UINT64_C(1) << shift;
	uint64_t t = pcr_cal_round_(lo);
	uint64_t abs = tm->hint, from = (t - tm->credit) >> shift;
	uint64_t gone = pcr_cal_gone_(tm->now, tm->credit, cost);
	uint64_t start, tag, w, f, nf;

	if (__builtin_expect((int64_t)((abs - from) << shift) < 0, 0)) {
		abs = from;
		__asm__ volatile("" : "+r"(abs));
	}
	start = abs << shift;
	tag = pcr_cal_tag_(c, abs);
	/* the fill, 0 for another lap's word (its tag bits differ) */
	w = pcr_cal_load_(c, abs);
	f = w ^ tag;
	if (f > PCR_CAL_FILL_MASK)
		f = 0;
	if (__builtin_expect((int64_t)(gone - start) > 0, 0)) {
		uint64_t floor = pcr_cal_floor_(c, start, gone);

		if (f < floor)
			f = floor;
		__asm__ volatile("" : "+r"(f));
	}
	nf = f + cost;
	if (nf > width)
		return false;
	if ((int64_t)(start + f - t) > 0)
		t = pcr_cal_round_(start + f);
	if ((int64_t)(t - tm->now) > tm->ahead)
		return false;
	if (one_writer)
		__atomic_store_n(pcr_cal_slot_(c, abs), tag | nf,
				 __ATOMIC_RELAXED);
	else if (!__atomic_compare_exchange_n(pcr_cal_slot_(c, abs), &w,
					      tag | nf, false,
					      __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED))
		return false;
	*at = abs;
	*fill = f;
	*dep = t;
	return true;
}

/*
 * pcr_cal_place()'s common case, one level and one writer: pcr_cal_try_()
 * from the hint, the departure by @p limit.
 */
static inline __attribute__((always_inline)) bool
pcr_cal_place_one_(struct pcr_cal_level *lv, uint64_t now, uint64_t lo,
		   uint64_t limit, uint64_t *dep)
{
	struct pcr_cal_terms tm;

	pcr_cal_terms_(&tm, lv->cal, lv->credit, now, limit);
	return pcr_cal_try_(lv->cal, &tm, lv->cost, lo, true, &lv->at,
			    &lv->fill, dep);
}

/* ------------------------------------------------------------------ */
/* The fast-path API                                                    */

/**
 * Place a packet under @p n levels (@p n <= PCR_CAL_LEVELS_MAX, each with
 * its cost and credit filled in): its departure is the earliest time at or
 * after @p lo (>= @p now; a whole TSC cycle, as every fine time pacer
 * computes from the TSC) where every level has room, and every level is
 * charged there (lv[i].at says where, for pcr_cal_refund()).
 * @param limit  the latest departure accepted (the horizon)
 * @param dep    out: the departure, fine units, a whole TSC cycle
 * @param one_writer  the calling lcore is the only one that places
 *   packets in these calendars: plain stores
 * @return true, or false if no departure fits by @p limit or within any
 *   level's reach (nothing charged; lv[i].full marks the level that
 *   moved the search past the limit: the one that is full there).
 */
static inline __attribute__((always_inline)) bool
pcr_cal_place(struct pcr_cal_level *lv, unsigned int n, uint64_t now,
	      uint64_t lo, uint64_t limit, uint64_t *dep, bool one_writer)
{
	uint64_t t, end[PCR_CAL_LEVELS_MAX];
	unsigned int i, j, ok, tries = 0;

	if (n == 1 && one_writer && pcr_cal_place_one_(lv, now, lo, limit, dep))
		return true;
	t = pcr_cal_round_(lo);
	for (i = 0; i < n; i++) {
		struct pcr_cal *c = lv[i].cal;

		end[i] = now + c->reach;
		if ((int64_t)(end[i] - limit) < 0)
			limit = end[i];
	}
	if ((int64_t)(t - limit) > 0) {
		i = n - 1; /* the flow's own bound: blamed on the last level */
		goto full;
	}
	for (;;) {
		/* the latest of every level's position: the levels in turn
		 * until n in a row have room at t (`ok`: a level that moved t
		 * to its own position in the same bucket has it; with one
		 * level, t moved within its bucket or to the next, whose
		 * charge carries as any overdraft does) */
		for (i = 0, ok = 0; ok < n; i = i + 1 == n ? 0 : i + 1) {
			uint64_t pos;

			if (!pcr_cal_find_(lv[i].cal, t - lv[i].credit,
					   pcr_cal_gone_(now, lv[i].credit,
							 lv[i].cost),
					   now - lv[i].credit, lv[i].cost,
					   end[i], &pos, &lv[i].at,
					   &lv[i].fill))
				goto full;
			if ((int64_t)(pos - t) <= 0) {
				ok++;
				continue;
			}
			t = pcr_cal_round_(pos);
			if ((int64_t)(t - limit) > 0)
				goto full; /* level i moved it past */
			ok = n == 1 || pcr_cal_abs_(lv[i].cal, t) == lv[i].at ?
				     1 :
				     0;
		}
		/* every level was found with room at this t */
		for (i = 0; i < n; i++)
			if (!pcr_cal_charge_(&lv[i],
					     pcr_cal_gone_(now, lv[i].credit,
							   lv[i].cost),
					     t, one_writer))
				break;
		if (i == n) {
			*dep = t;
			return true;
		}
		/* another lcore took the room: give back, look again (a
		 * lone writer never gets here; a bounded number of tries
		 * keeps the fast path bounded whatever happens) */
		for (j = 0; j < i; j++)
			pcr_cal_give_(lv[j].cal, lv[j].at, lv[j].cost,
				      one_writer);
		if (one_writer || ++tries == PCR_CAL_TRIES)
			goto full;
	}
full:
	for (j = 0; j < n; j++)
		lv[j].full = j == i;
	return false;
}

/**
 * Give back what a packet placed by pcr_cal_place() reserved at one level
 * (it was dropped after all): @p cost from bucket @p at on, so the level
 * can place as much again there.
 */
static inline void
pcr_cal_refund(struct pcr_cal *c, uint64_t at, uint64_t cost, bool one_writer)
{
	pcr_cal_give_(c, at, cost, one_writer);
}

/**
 * Give back what pcr_cal_place() (or pcr_stamp_run()) charged @p lv, to
 * the buckets it was charged in: the part that fitted in its bucket
 * there, what was carried past it to the buckets after (pcr_cal_refund()
 * from the bucket alone would give the carried part back to the first
 * bucket, and the next packet would go that much earlier than the one
 * given back). Exact for a lone writer; with several, another lcore's
 * charge between the search and this one's makes the split approximate
 * (the amount is always exact).
 */
static inline void
pcr_cal_refund_level(const struct pcr_cal_level *lv, bool one_writer)
{
	struct pcr_cal *c = lv->cal;
	uint64_t first = lv->fill < c->width ? c->width - lv->fill : 0;

	if (first >= lv->cost) {
		pcr_cal_give_(c, lv->at, lv->cost, one_writer);
		return;
	}
	pcr_cal_give_(c, lv->at + 1, lv->cost - first, one_writer);
	pcr_cal_give_(c, lv->at, first, one_writer);
}

/** The absolute bucket of fine time @p t in @p c (for refunds by time). */
static inline uint64_t
pcr_cal_bucket_of(const struct pcr_cal *c, uint64_t t)
{
	return pcr_cal_abs_(c, t);
}

/**
 * The fill of the bucket holding fine time @p t, fine units (0 for a
 * bucket of another lap). For tests and statistics.
 */
static inline uint64_t
pcr_cal_fill_at(const struct pcr_cal *c, uint64_t t)
{
	uint64_t abs = pcr_cal_abs_(c, t);

	return pcr_cal_fill_(c, pcr_cal_load_(c, abs), abs);
}

#ifdef __cplusplus
}
#endif

#endif /* PCR_CAL_H */
