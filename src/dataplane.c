/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * The fast path: RX (timestamper) and TX (wheel drain) loops. Nothing here
 * allocates, locks or logs per packet.
 */

#include <inttypes.h>
#include <stdio.h>
#ifdef __SSE4_2__
#include <nmmintrin.h>
#endif

#include <rte_branch_prediction.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

#define PCR_DATAPATH /* no pcr_app: see struct pcr_dp */
#include "config.h"
#include "dataplane.h"
#include "pcr_clock.h"
#include "pcr_ecn.h"

/* Age-out work per pass and passes per second of a RX lcore. */
#define AGE_BATCH_MIN 64ull
#define AGE_BATCH_MAX 4096ull /* bounds a pass to tens of microseconds */
#define AGE_PERIOD_US 1000

/*
 * Everything here reads the appliance through the context each worker is
 * handed (struct pcr_dp: lc->dp, tp->dp), never the pcr_app global.
 */

/* The flow a packet was stamped for: written by RX, read by its TX lcore. */
static inline struct pcr_flow **
flow_field(const struct pcr_dp *dp, struct rte_mbuf *m)
{
	return RTE_MBUF_DYNFIELD(m, dp->flow_dynfield, struct pcr_flow **);
}

/*
 * One worker does all RX and all TX (pcr_assign_lcores()): it is the only
 * lcore that writes a flow's queued count or stamps a shared policy, so
 * those take plain stores, not locked instructions (flow_q_add()).
 */
static inline bool
solo(const struct pcr_dp *dp)
{
	return dp->n_workers == 1;
}

/*
 * Add @p q (pcr_q()) to what flow @p f has queued, or take it away: RX
 * adds, the TX lcore of the packet's egress port takes away. Where those
 * are different lcores, an atomic add; a solo worker (@p one_writer), the
 * one writer, stores the sum (no locked instruction; with the shared
 * policies' stores, 6-7 ns a packet here: docs/BENCHMARKS.md).
 * Either way a reader on another lcore (telemetry, the RX lcore's
 * age-out) sees whole values, and what TX takes away is released (the
 * flow may then be aged out and its entry reused).
 */
static inline void
flow_q_add(bool one_writer, struct pcr_flow *f, uint64_t q)
{
	if (one_writer)
		__atomic_store_n(&f->queued, f->queued + q, __ATOMIC_RELAXED);
	else
		__atomic_fetch_add(&f->queued, q, __ATOMIC_RELAXED);
}

static inline void
flow_q_sub(bool one_writer, struct pcr_flow *f, uint64_t q)
{
	if (one_writer)
		__atomic_store_n(&f->queued, f->queued - q, __ATOMIC_RELEASE);
	else
		__atomic_fetch_sub(&f->queued, q, __ATOMIC_RELEASE);
}

/*
 * Request @p r of the snapshot handshake: acknowledge it and wait for its
 * release. Unclaimed after PCR_SYNC_PARK_US (the control lcore, or
 * another worker it waits for, is kept from its CPU), go on, marked as
 * left: that try fails and the control lcore makes another. Claimed, wait
 * for the release: the control lcore is reading the counters, a few
 * microseconds; not released PCR_SYNC_PARK_US after the claim (it lost
 * its CPU while it read), go on all the same, marked abandoned: what it
 * read is void and it tries again. So a worker never waits more than
 * twice PCR_SYNC_PARK_US for a reader, whatever the reader's CPU does.
 * Waiting yields now and then, so a control lcore that shares this CPU
 * gets it (where nothing else wants the CPU, the yield returns at once).
 */
static void __rte_noinline __rte_cold
sync_park(struct pcr_lcore *lc, uint32_t r)
{
	const uint64_t t0 = rte_rdtsc(), park = lc->dp->sync_park_tsc;
	uint64_t until = t0 + park, now = t0;
	unsigned int spins = 0;
	bool claimed = false;

	lc->sync_seen = r;
	__atomic_store_n(&lc->sync_ack, r, __ATOMIC_RELEASE);
	while (__atomic_load_n(&lc->dp->sync_rel, __ATOMIC_ACQUIRE) != r) {
		uint32_t want = claimed ? r + PCR_SYNC_CLAIMED : r;

		now = rte_rdtsc();
		if (!claimed && __atomic_load_n(&lc->sync_ack, __ATOMIC_ACQUIRE) ==
					r + PCR_SYNC_CLAIMED) {
			claimed = true;
			until = now + park;
			continue;
		}
		if (now > until &&
		    __atomic_compare_exchange_n(&lc->sync_ack, &want,
						want + (claimed ? PCR_SYNC_ABANDONED -
									  PCR_SYNC_CLAIMED :
								  PCR_SYNC_LEFT),
						false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			break;
		pcr_sync_wait(&spins, lc->sync_yield);
	}
	/* what it cost (the statistics' snapshot_park_ns, _max_ns) */
	now = rte_rdtsc();
	__atomic_store_n(&lc->park_tsc, lc->park_tsc + (now - t0), __ATOMIC_RELAXED);
	if (now - t0 > lc->park_max_tsc)
		__atomic_store_n(&lc->park_max_tsc, now - t0, __ATOMIC_RELAXED);
}

/* The snapshot handshake (pcr_stats_snapshot()), at the top of every
 * loop iteration: nothing is held across it. */
static inline void
sync_point(struct pcr_lcore *lc)
{
	uint32_t r = __atomic_load_n(&lc->dp->sync_req, __ATOMIC_ACQUIRE);

	if (likely(r == lc->sync_seen))
		return;
	sync_park(lc, r);
}

/*
 * The flow cache: PCR_FLOW_CACHE slots in front of the flow table's
 * rte_hash, one line each, a key and its table position at slot
 * flow_hash() & (PCR_FLOW_CACHE - 1). Direct-mapped, filled on one in 8
 * table hits, emptied where the ageing deletes its key (a position is
 * reused for another key once deleted). A hit costs the 40-byte compare
 * instead of the table's bucket search, signature compare and key compare
 * (about 110 instructions a packet: docs/BENCHMARKS.md), so long as the
 * active flows of an RX lcore fit. With many more each packet pays a probe
 * that misses, and the cache's 256 KiB crowd the table out of L2: a hit
 * saved 11-12 cycles a packet here, a miss cost 20-28. So the cache
 * serves while at least 3/4 of a window's lookups hit it; below that it
 * rests for PCR_FLOW_CACHE_REST packets (the table alone), then tries a
 * window again. OVS's exact-match cache is the same idea, with the same
 * sparing insertion. Per flow table: the RX lcore's alone.
 */
#define PCR_FLOW_CACHE 4096
#define PCR_FLOW_CACHE_WINDOW 65536u
#define PCR_FLOW_CACHE_REST (1u << 20)

struct pcr_flow_cache_ent {
	struct pcr_flow_key key;
	int32_t pos;             /**< in the table; -1: empty */
	hash_sig_t sig;
} __rte_cache_aligned;

int
pcr_flowtab_create(struct pcr_lcore *lc, uint64_t entries)
{
	struct rte_hash_parameters hp = { 0 };
	struct pcr_flowtab *ft;
	char name[RTE_HASH_NAMESIZE];
	unsigned int i;
	uint64_t batch;

	ft = rte_zmalloc_socket("pcr_flowtab", sizeof(*ft), RTE_CACHE_LINE_SIZE,
				(int)rte_lcore_to_socket_id(lc->lcore_id));
	if (ft == NULL)
		return -ENOMEM;
	snprintf(name, sizeof(name), "pcr_flows_%u", lc->lcore_id);
	hp.name = name;
	hp.entries = (uint32_t)entries;
	hp.key_len = sizeof(struct pcr_flow_key);
	hp.hash_func = rte_hash_crc;
	hp.hash_func_init_val = 0;
	hp.socket_id = (int)rte_lcore_to_socket_id(lc->lcore_id);
	/* one writer (this lcore), no concurrent readers; the extendable
	 * buckets guarantee `entries` keys fit whatever their hashes */
	hp.extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE;
	ft->h = rte_hash_create(&hp);
	if (ft->h == NULL) {
		rte_free(ft);
		return -ENOMEM;
	}
	ft->flows = rte_zmalloc_socket("pcr_flows",
				       entries * sizeof(struct pcr_flow),
				       RTE_CACHE_LINE_SIZE, hp.socket_id);
	if (ft->flows == NULL) {
		rte_hash_free(ft->h);
		rte_free(ft);
		return -ENOMEM;
	}
	ft->stage = rte_zmalloc_socket("pcr_stage",
				       (entries + PCR_MAX_CLASSES) *
					       sizeof(struct pcr_stage_flow),
				       RTE_CACHE_LINE_SIZE, hp.socket_id);
	ft->sport = rte_zmalloc_socket("pcr_stage_port",
				       lc->dp->n_ports *
					       sizeof(struct pcr_stage_port),
				       RTE_CACHE_LINE_SIZE, hp.socket_id);
	ft->hist = rte_zmalloc_socket("pcr_rank_hist",
				      PCR_MAX_CLASSES * sizeof(*ft->hist),
				      RTE_CACHE_LINE_SIZE, hp.socket_id);
	ft->txn_q = rte_malloc_socket("pcr_txn_q",
				      (entries + PCR_MAX_CLASSES) *
					      sizeof(*ft->txn_q),
				      RTE_CACHE_LINE_SIZE, hp.socket_id);
	ft->cache = rte_malloc_socket("pcr_flow_cache",
				      PCR_FLOW_CACHE * sizeof(*ft->cache),
				      RTE_CACHE_LINE_SIZE, hp.socket_id);
	ft->aqm = rte_zmalloc_socket("pcr_flow_aqm",
				     (entries + PCR_MAX_CLASSES) * sizeof(*ft->aqm),
				     RTE_CACHE_LINE_SIZE, hp.socket_id);
	if (ft->stage == NULL || ft->sport == NULL || ft->hist == NULL ||
	    ft->txn_q == NULL || ft->cache == NULL || ft->aqm == NULL) {
		rte_free(ft->aqm);
		rte_free(ft->cache);
		rte_free(ft->txn_q);
		rte_free(ft->hist);
		rte_free(ft->stage);
		rte_free(ft->sport);
		rte_free(ft->flows);
		rte_hash_free(ft->h);
		rte_free(ft);
		return -ENOMEM;
	}
	ft->n_sport = lc->dp->n_ports;
	for (i = 0; i < lc->dp->n_ports; i++) {
		unsigned int c;

		for (c = 0; c < PCR_MAX_CLASSES; c++) {
			struct pcr_stage_class *sc = &ft->sport[i].cls[c];

			pcr_rank_set_init(&sc->set);
			sc->lru_head = sc->lru_tail = PCR_RANK_NONE;
		}
		lc->pub[i].vt = UINT64_MAX;
	}
	for (i = 0; i < PCR_MAX_CLASSES; i++) {
		ft->overflow[i].class_id = (uint16_t)i;
		ft->overflow[i].leaf = PCR_TREE_NONE;
	}
	for (i = 0; i < PCR_FLOW_CACHE; i++)
		ft->cache[i].pos = -1;
	ft->entries = (uint32_t)entries;
	batch = entries * AGE_PERIOD_US / (lc->dp->flow_idle_ms * 1000);
	batch = RTE_MAX(AGE_BATCH_MIN, batch);
	ft->age_batch = (uint32_t)RTE_MIN(AGE_BATCH_MAX, batch);
	lc->ft = ft;
	return 0;
}

void
pcr_flowtab_free(struct pcr_flowtab *ft)
{
	if (ft == NULL)
		return;
	rte_hash_free(ft->h);
	rte_free(ft->flows);
	rte_free(ft->stage);
	for (unsigned int p = 0; p < ft->n_sport; p++)
		rte_free(ft->sport[p].held);
	rte_free(ft->sport);
	rte_free(ft->hist);
	rte_free(ft->txn_q);
	rte_free(ft->cache);
	rte_free(ft->aqm);
	rte_free(ft);
}

/* The first live class whose rule fits, in match order; else default. */
static uint16_t
classify_flow(const struct pcr_classtab *ct, const struct pcr_flow_key *k)
{
	unsigned int i;

	for (i = 0; i < ct->n_order; i++)
		if (pcr_match_key(&ct->match[ct->order[i]], k))
			return ct->order[i];
	return 0;
}

/*
 * A flow key's hash: the table's own (hash_func rte_hash_crc(), init 0:
 * pcr_flowtab_create()) unrolled for the key's fixed 40 bytes, so that the
 * RX path computes it inline, once, and hands it to the table. Through the
 * table's call it cost 66 instructions a key; rte_hash_crc() called here
 * with the constant size, 26 more a packet than this (bench/instr.sh:
 * RX 612.6 against 586.5; its length loop stays).
 */
_Static_assert(sizeof(struct pcr_flow_key) == 40,
	       "flow_hash() hashes a 40-byte key as rte_hash_crc() does");
#ifdef __SSE4_2__
/* The CRC32C instruction itself: rte_hash_crc_8byte() checks at run time
 * which implementation DPDK chose (2 instructions of its 3 a word); a
 * binary built for SSE4.2 has the instruction, and both give CRC32C. */
#define flow_crc_8byte(w, h) ((uint32_t)_mm_crc32_u64((h), (w)))
#else
#define flow_crc_8byte(w, h) rte_hash_crc_8byte((w), (h))
#endif
static inline hash_sig_t
flow_hash(const struct pcr_flow_key *k)
{
	const uint64_t *w = (const uint64_t *)k;
	uint32_t h = 0; /* hash_func_init_val */

	h = flow_crc_8byte(w[0], h);
	h = flow_crc_8byte(w[1], h);
	h = flow_crc_8byte(w[2], h);
	h = flow_crc_8byte(w[3], h);
	return flow_crc_8byte(w[4], h);
}

static inline bool
flow_key_eq(const struct pcr_flow_key *a, const struct pcr_flow_key *b)
{
	const uint64_t *x = (const uint64_t *)a, *y = (const uint64_t *)b;

	return ((x[0] ^ y[0]) | (x[1] ^ y[1]) | (x[2] ^ y[2]) |
		(x[3] ^ y[3]) | (x[4] ^ y[4])) == 0;
}

/* The table positions of @p n keys, -1 where not in it. */
static inline void
flow_table_lookup(struct pcr_flowtab *ft, const void **keys,
		  const hash_sig_t *sig, unsigned int n, int32_t *pos)
{
	unsigned int i;

	/* the signatures are only read (const in later DPDKs) */
	if (rte_hash_lookup_with_hash_bulk(ft->h, keys,
					   (hash_sig_t *)(uintptr_t)sig, n,
					   pos) != 0)
		for (i = 0; i < n; i++)
			pos[i] = -1;
}

/* The cache's window: @p n lookups, @p hits of them in the cache. */
static inline void
flow_cache_window(struct pcr_flowtab *ft, unsigned int n, unsigned int hits)
{
	ft->cache_looks += n;
	ft->cache_hits += hits;
	if (likely(ft->cache_looks < PCR_FLOW_CACHE_WINDOW))
		return;
	if (ft->cache_hits < ft->cache_looks / 4 * 3)
		ft->cache_off = PCR_FLOW_CACHE_REST;
	ft->cache_looks = ft->cache_hits = 0;
}

/*
 * The table positions of the @p n keys (-1: not in the table), @p sig
 * their flow_hash(): from the flow cache where it has them, the rest from
 * the table in one bulk lookup; one in 8 of those the table has fills its
 * cache slot (each fill is a line written: a few thousand flows in turn
 * would fill, and evict, one a packet). @return how many the cache had.
 */
static inline unsigned int
flow_lookup_burst(struct pcr_flowtab *ft, const void **keys,
		  const hash_sig_t *sig, unsigned int n, int32_t *pos)
{
	const void *mk[PCR_RX_BURST];
	hash_sig_t ms[PCR_RX_BURST];
	int32_t mp[PCR_RX_BURST];
	uint16_t mi[PCR_RX_BURST];
	unsigned int i, m = 0;

	if (unlikely(ft->cache_off != 0)) {
		ft->cache_off = ft->cache_off > n ? ft->cache_off - n : 0;
		flow_table_lookup(ft, keys, sig, n, pos);
		return 0;
	}
	for (i = 0; i < n; i++) {
		const struct pcr_flow_cache_ent *ce =
			&ft->cache[sig[i] & (PCR_FLOW_CACHE - 1)];

		if (ce->pos >= 0 && ce->sig == sig[i] &&
		    flow_key_eq(&ce->key, keys[i])) {
			pos[i] = ce->pos;
			continue;
		}
		mk[m] = keys[i];
		ms[m] = sig[i];
		mi[m++] = (uint16_t)i;
	}
	flow_cache_window(ft, n, n - m);
	if (m == 0)
		return n;
	flow_table_lookup(ft, mk, ms, m, mp);
	for (i = 0; i < m; i++) {
		struct pcr_flow_cache_ent *ce =
			&ft->cache[ms[i] & (PCR_FLOW_CACHE - 1)];

		pos[mi[i]] = mp[i];
		if (mp[i] < 0 || (ft->cache_fills++ & 7) != 0)
			continue;
		ce->key = *(const struct pcr_flow_key *)mk[i];
		ce->pos = mp[i];
		ce->sig = ms[i];
	}
	return n - m;
}

/* A flow not in the table yet (or added earlier in this burst); @p sig
 * its flow_hash(). */
static struct pcr_flow *
flow_get_new(struct pcr_flowtab *ft, struct pcr_lstats *st,
	     const struct pcr_classtab *ct, const struct pcr_tree *tree,
	     const struct pcr_flow_key *k, hash_sig_t sig, uint16_t egress,
	     uint8_t txq, uint64_t now)
{
	struct pcr_flow *f;
	int32_t pos;

	pos = rte_hash_lookup_with_hash(ft->h, k, sig);
	if (pos >= 0)
		return &ft->flows[pos];
	pos = rte_hash_add_key_with_hash(ft->h, k, sig);
	if (unlikely(pos < 0)) {
		uint16_t cls = classify_flow(ct, k);

		st->flow_table_full++;
		f = &ft->overflow[cls];
		return f;
	}
	f = &ft->flows[pos];
	memset(f, 0, sizeof(*f));
	memset(&ft->aqm[pos], 0, sizeof(ft->aqm[pos]));
	f->in_use = true;
	f->class_id = classify_flow(ct, k);
	f->class_gen = ct->gen;
	f->leaf = pcr_tree_leaf(tree, k);
	f->egress = egress;
	f->txq = txq;
	pcr_stamp_flow_init(&f->pol, now);
	st->flows_new++;
	return f;
}

/* The burst (fine units) of flow @p f's rate now. Any lcore (RCU). */
static inline uint64_t
flow_burst(const struct pcr_dp *dp, const struct pcr_flow *f)
{
	const struct pcr_rates *rs =
		__atomic_load_n(&dp->ports[f->egress].rates, __ATOMIC_ACQUIRE);

	return rs->cls_flow[f->class_id].burst;
}

static inline uint32_t
flow_index(const struct pcr_flowtab *ft, const struct pcr_flow *f)
{
	if (f >= ft->flows && f < ft->flows + ft->entries)
		return (uint32_t)(f - ft->flows);
	return ft->entries + (uint32_t)(f - ft->overflow);
}

static inline struct pcr_flow *
flow_at(struct pcr_flowtab *ft, uint32_t i)
{
	return i < ft->entries ? &ft->flows[i] : &ft->overflow[i - ft->entries];
}

/* Flow @p sf's transaction (class @p cls) is over: its size is learned. */
static inline void
txn_end(struct pcr_flowtab *ft, struct pcr_stage_flow *sf, uint16_t cls)
{
	pcr_rank_hist_add(&ft->hist[cls], sf->txn_bytes);
	sf->txn_bytes = 0;
}

/*
 * Transactions end after PCR_TXN_IDLE_US without an arrival (completion
 * order learns their sizes). A flow of completion order that has nothing
 * held after a stamp goes on txn_q (once); txn_poll() ends the transaction
 * of the oldest once it has been idle that long, without waiting for its
 * next packet. One that is held again leaves the queue (it comes back when
 * it next empties); one that had an arrival since goes to the back.
 */
static inline void
txn_watch(struct pcr_flowtab *ft, struct pcr_stage_flow *sf)
{
	uint32_t cap = ft->entries + PCR_MAX_CLASSES;

	if (sf->txn_queued)
		return;
	sf->txn_queued = true;
	ft->txn_q[(ft->txn_head + ft->txn_n++) % cap] =
		(uint32_t)(sf - ft->stage);
}

static void
txn_poll(const struct pcr_dp *dp, struct pcr_flowtab *ft, uint64_t now_tsc)
{
	uint32_t idle = dp->txn_idle_coarse;
	uint32_t cap = ft->entries + PCR_MAX_CLASSES;
	unsigned int looks;

	for (looks = 0; looks < 8 && ft->txn_n != 0; looks++) {
		uint32_t idx = ft->txn_q[ft->txn_head];
		struct pcr_stage_flow *sf = &ft->stage[idx];
		struct pcr_flow *f = flow_at(ft, idx);

		ft->txn_head = (ft->txn_head + 1) % cap;
		ft->txn_n--;
		sf->txn_queued = false;
		if (sf->head != NULL)
			continue; /* held again: back when it empties */
		if ((uint32_t)(pcr_coarse(now_tsc) - sf->txn_last) <= idle) {
			txn_watch(ft, sf); /* not idle yet: to the back */
			return;
		}
		txn_end(ft, sf, f->class_id);
	}
}

/*
 * Remove flows that are idle, have nothing queued and whose policy state
 * has expired (so that a new entry would behave the same). The sweep walks
 * the entry array by position, a fixed number of entries per pass, so its
 * cost does not depend on how full the table is (rte_hash_iterate() would
 * scan empty slots until it found a used one); the batch is sized so that
 * one sweep of the whole table takes about one idle timeout.
 */
static void
flowtab_age(struct pcr_lcore *lc, uint64_t now_tsc)
{
	struct pcr_flowtab *ft = lc->ft;
	uint64_t idle = lc->dp->flow_idle_ms * (pcr_clock_tsc_hz() / 1000);
	uint64_t now = pcr_fine(now_tsc, lc->dp->epoch_tsc);
	uint32_t i;

	if (now_tsc < ft->next_age_tsc)
		return;
	ft->next_age_tsc = now_tsc + pcr_clock_tsc_hz() / 1000000 * AGE_PERIOD_US;
	for (i = 0; i < ft->age_batch; i++) {
		struct pcr_flow *f = &ft->flows[ft->iter];
		struct pcr_flow_cache_ent *ce;
		hash_sig_t sig;
		void *key;

		if (++ft->iter == ft->entries)
			ft->iter = 0;
		if (!f->in_use ||
		    __atomic_load_n(&f->queued, __ATOMIC_ACQUIRE) != 0 ||
		    (uint64_t)(uint32_t)(pcr_coarse(now_tsc) - f->last_seen) <
			    (idle >> PCR_COARSE_SHIFT) ||
		    !pcr_policy_idle(f->pol.empty, now, flow_burst(lc->dp, f)))
			continue;
		if (rte_hash_get_key_with_position(ft->h, f - ft->flows,
						   &key) != 0)
			continue;
		sig = flow_hash(key);
		if (rte_hash_del_key_with_hash(ft->h, key, sig) < 0)
			continue;
		/* its position may go to another key now */
		ce = &ft->cache[sig & (PCR_FLOW_CACHE - 1)];
		if (ce->pos == (int32_t)(f - ft->flows))
			ce->pos = -1;
		f->in_use = false;
		lc->st[f->egress].flows_aged++;
		txn_end(ft, &ft->stage[f - ft->flows], f->class_id);
	}
}

/*
 * Stamping. A packet is stamped by stamp_try() (its levels, the rule of
 * lib/policy/pcr_stamp.h) into a batch that batch_flush() hands to the
 * egress port's wheel in one burst, giving back what the wheel's inbox
 * refuses. The RX path stamps arriving packets; the staging service
 * (below) stamps held ones.
 */

/* Why a held flow could not be stamped: whom else that holds back. */
enum stage_block {
	STAGE_BLOCK_FLOW,  /* its own bound is ahead: only itself */
	STAGE_BLOCK_NEXT,  /* its own bound (its previous frame's departure)
			    * is within the lead, and a shared level has no
			    * room from there: it goes once one has; only
			    * itself is known to wait */
	STAGE_BLOCK_NODE,  /* a node of its subscriber's path has none:
			    * the flows of other subscribers may go */
	STAGE_BLOCK_CLASS, /* its class has no room within the lead */
	STAGE_BLOCK_PORT,  /* the port aggregate has none */
};

/* What every stamp of one pass shares. */
struct stamp_ctx {
	const struct pcr_dp *dp;
	struct pcr_flowtab *ft;  /* this lcore's flows (their AQM state) */
	struct pcr_port *eg;
	struct pcr_lstats *st;   /* the egress port's counters, this lcore */
	const struct pcr_rates *rs; /* held until the next quiescent report */
	uint64_t now_tsc, now;
	uint64_t limit;          /* the furthest departure (the horizon) */
	uint64_t lead;           /* staging lead, fine units (0: none) */
	bool cap;                /* --horizon-policy cap */
	bool solo;               /* the shared policies' one writer */
};

/* Packets stamped, not yet handed to the wheel, with what each was charged
 * (for a refund if the wheel's inbox refuses it). */
struct stamp_batch {
	struct rte_mbuf *m[PCR_RX_BURST];
	uint64_t dep_tsc[PCR_RX_BURST];
	struct pcr_flow *f[PCR_RX_BURST];
	struct pcr_cal_level lv[PCR_RX_BURST][PCR_CAL_LEVELS_MAX];
	struct pcr_stamp_undo undo[PCR_RX_BURST];
	uint64_t arr_tsc[PCR_RX_BURST]; /* its arrival (AQM: the sojourn) */
	uint8_t n_lv[PCR_RX_BURST];
	uint8_t q[PCR_RX_BURST];  /* its flow's TX queue */
	unsigned int k;
};

static inline void
stamp_ctx_init(struct stamp_ctx *x, const struct pcr_dp *dp,
	       struct pcr_flowtab *ft, uint16_t egress, struct pcr_lstats *st,
	       const struct pcr_stage_port *sp, uint64_t now_tsc)
{
	x->dp = dp;
	x->ft = ft;
	x->eg = &dp->ports[egress];
	x->st = st;
	x->now_tsc = now_tsc;
	x->now = pcr_fine(now_tsc, dp->epoch_tsc);
	x->rs = __atomic_load_n(&x->eg->rates, __ATOMIC_ACQUIRE);
	/* the furthest departure the wheel takes (its own limit is further) */
	x->cap = x->rs->horizon_cap;
	x->limit = x->now + (x->rs->horizon_tsc << PCR_FINE_SHIFT);
	x->lead = sp->lead.tsc << PCR_FINE_SHIFT; /* 0 without staging */
	x->solo = solo(dp);
}

/*
 * stamp_try() for a flow in a subscriber's leaf (src/tree.h): after its
 * class's level (@p nl levels in @p lv already), every interior node from
 * the leaf's parent up that has a rate, then the port aggregate; the
 * leaf's own bucket a bound charged where the packet leaves
 * (pcr_stamp_leaf()). The levels it used into b->n_lv[b->k].
 */
static __rte_noinline enum pcr_stamp_result
stamp_tree(const struct stamp_ctx *x, struct stamp_batch *b,
	   struct pcr_flow *f, struct pcr_cal_level *lv, unsigned int nl,
	   uint32_t bytes, uint64_t lead, uint64_t *dep)
{
	const struct pcr_rates *rs = x->rs;
	const struct pcr_tree *t = rs->tree;
	const struct pcr_rate *lr = &rs->tree_rate[f->leaf];
	uint32_t n;

	for (n = t->parent[f->leaf]; n != PCR_TREE_NONE; n = t->parent[n])
		if (t->cal[n] != NULL)
			pcr_stamp_level(&lv[nl++], t->cal[n], &rs->tree_rate[n],
					bytes);
	if (!pcr_rate_unlimited(&rs->agg))
		pcr_stamp_level(&lv[nl++], rs->agg_cal, &rs->agg, bytes);
	b->n_lv[b->k] = (uint8_t)nl;
	if (pcr_rate_unlimited(lr))
		return pcr_stamp_lead(&f->pol, &rs->cls_flow[f->class_id], lv,
				      nl, x->now, x->limit, x->cap, lead,
				      bytes, dep, &b->undo[b->k], x->solo);
	return pcr_stamp_leaf(&f->pol, &rs->cls_flow[f->class_id],
			      &t->empty[f->leaf - t->n_interior], lr, lv, nl,
			      x->now, x->limit, x->cap, lead, bytes, dep,
			      &b->undo[b->k], x->solo);
}

/*
 * Stamp @p m (flow @p f, @p bytes on the wire) into @p b, allowing it to
 * wait when @p lead is not 0. The flow's bucket and last departure give a
 * lower bound; class and port aggregate are placed at the first time both
 * have room, and every policy is charged where the packet leaves
 * (lib/policy/pcr_stamp.h). PCR_STAMP_WAIT: nothing charged, and
 * @p why says who else cannot go either. PCR_STAMP_BEYOND: nothing
 * charged, not in the batch.
 */
static __rte_always_inline enum pcr_stamp_result
stamp_try(const struct stamp_ctx *x, struct stamp_batch *b,
	  struct pcr_flow *f, struct rte_mbuf *m, uint32_t bytes,
	  uint64_t lead, uint64_t arr_tsc, enum stage_block *why)
{
	const struct pcr_rates *rs = x->rs;
	const struct pcr_rate *cr = &rs->cls[f->class_id];
	struct pcr_cal_level *lv = b->lv[b->k];
	enum pcr_stamp_result r;
	unsigned int nl = 0;
	uint64_t dep;

	if (!pcr_rate_unlimited(cr))
		pcr_stamp_level(&lv[nl++], rs->cls_cal[f->class_id], cr, bytes);
	if (unlikely(f->leaf != PCR_TREE_NONE) && rs->tree != NULL) {
		r = stamp_tree(x, b, f, lv, nl, bytes, lead, &dep);
		nl = b->n_lv[b->k];
	} else {
		if (!pcr_rate_unlimited(&rs->agg))
			pcr_stamp_level(&lv[nl++], rs->agg_cal, &rs->agg,
					bytes);
		r = pcr_stamp_lead(&f->pol, &rs->cls_flow[f->class_id], lv,
				   nl, x->now, x->limit, x->cap, lead, bytes,
				   &dep, &b->undo[b->k], x->solo);
	}
	if (unlikely(r != PCR_STAMP_PLACED)) {
		if (r == PCR_STAMP_WAIT) {
			/* from now on a level had no room within the lead:
			 * it has none for any flow; from a later bound of
			 * the flow's own, only this flow is known to wait */
			if (pcr_fine_after(dep, x->now + lead))
				*why = STAGE_BLOCK_FLOW;
			else if (pcr_fine_after(dep, x->now))
				*why = STAGE_BLOCK_NEXT;
			else if (nl != 0 && lv[nl - 1].full &&
				 lv[nl - 1].cal == rs->agg_cal)
				*why = STAGE_BLOCK_PORT;
			else if (nl != 0 && lv[0].full &&
				 lv[0].cal == rs->cls_cal[f->class_id])
				*why = STAGE_BLOCK_CLASS;
			else
				*why = f->leaf != PCR_TREE_NONE ?
					       STAGE_BLOCK_NODE :
					       STAGE_BLOCK_CLASS;
			return r;
		}
		if (r == PCR_STAMP_BEYOND)
			return r;
		nl = 0; /* capped: no shared policy charged */
	}
	b->n_lv[b->k] = (uint8_t)nl;
	*flow_field(x->dp, m) = f;
	/* never earlier than the policies */
	b->dep_tsc[b->k] = pcr_fine_tsc(dep, x->now, x->now_tsc);
	b->f[b->k] = f;
	b->q[b->k] = f->txq;
	b->arr_tsc[b->k] = arr_tsc;
	b->m[b->k++] = m;
	return r;
}

/* Batch entry @p i was refused by its wheel's inbox: given back, dropped. */
static void
batch_refuse(const struct stamp_ctx *x, struct stamp_batch *b, unsigned int i)
{
	pcr_stamp_refund(&b->f[i]->pol, &b->undo[i], b->lv[i], b->n_lv[i],
			 x->solo);
	flow_q_sub(x->solo, b->f[i], pcr_q(rte_pktmbuf_pkt_len(b->m[i])));
	x->st->drop_inbox++;
	rte_pktmbuf_free(b->m[i]);
}

/*
 * AQM (issue 35): CoDel decided when a packet is stamped. A packet of a
 * class with AQM is judged as its batch goes to the wheels, on the delay
 * it will have had when it leaves: its departure less its arrival (its
 * time held in staging included), the RFC's sojourn known one sojourn
 * early; the judge runs in departure order per flow, so lib/aqm's state
 * machine is the RFC's dequeue() at the packet's departure. A signal
 * marks an ECN-capable packet CE (ecn yes), or drops it, given back to
 * every policy it was charged to, so the rates stay exact and no capacity
 * is lost; a drop of a held flow takes its head (fq_codel drops at the
 * head: the signal reaches the sender sooner). A packet that arrives
 * after its flow's last departure found the queue empty (the RFC's dequeue
 * of nothing). ce-threshold marks ECT(1) packets over it whatever CoDel
 * says. Every packet's delay goes into the port's queue-delay histogram,
 * with the AQM on or off (stamp_judge(): an operator who turned the AQM
 * off sees the queue it lets stand).
 */
static inline struct pcr_flow_aqm *
flow_aqm(struct pcr_flowtab *ft, const struct pcr_flow *f)
{
	if (f >= ft->flows && f < ft->flows + ft->entries)
		return &ft->aqm[f - ft->flows];
	return &ft->aqm[ft->entries + (uint32_t)(f - ft->overflow)];
}

/* Mark @p m CE where it is ECN-capable (with @p ect1_only, where it is
 * ECT(1)): true if it is CE now. Its headers are parsed again: signals
 * are rare (one an interval / sqrt(count) a flow). */
static bool
aqm_mark(struct rte_mbuf *m, bool ect1_only)
{
	struct pcr_pkt_info info;
	uint8_t *l3;
	bool v6;

	if (pcr_classify_parse(m, &info) > PCR_CLASSIFY_L3_ONLY)
		return false;
	v6 = info.key.family == PCR_FLOW_FAMILY_IPV6;
	if (rte_pktmbuf_data_len(m) < info.l2_len + (v6 ? 2 : 12))
		return false; /* the header is not in the first segment */
	l3 = rte_pktmbuf_mtod_offset(m, uint8_t *, info.l2_len);
	if (ect1_only && pcr_ecn_get(l3, v6) != PCR_ECN_ECT_1)
		return false;
	return pcr_ecn_set_ce(l3, v6) != PCR_ECN_NOT_CAPABLE;
}

/*
 * The AQM's verdict on batch entry @p e, a packet of flow @p f stamped
 * just now (no later packet of @p f stamped since), arrived at @p arr_tsc;
 * @p counted: @p f's queue counts it already (a held packet). A mark is
 * made here. @return true if it is to be dropped (aqm_drop()).
 */
static __rte_noinline bool
aqm_verdict_slow(const struct stamp_ctx *x, struct stamp_batch *b,
		 unsigned int e, struct pcr_flow *f, struct pcr_flow_aqm *a,
		 uint64_t arr_tsc, uint64_t soj, bool counted)
{
	const struct pcr_rates *rs = x->rs;
	uint16_t c = f->class_id;
	uint64_t dep = b->dep_tsc[e];
	uint64_t q = pcr_q_bytes(__atomic_load_n(&f->queued, __ATOMIC_RELAXED));
	uint32_t len = rte_pktmbuf_pkt_len(b->m[e]);
	unsigned int v;

	if (counted)
		q = q > len ? q - len : 0;
	/* its flow's queue was empty before it came (the RFC's dequeue of
	 * nothing) */
	if ((int64_t)(arr_tsc - a->last_dep_tsc) >= 0)
		pcr_codel_idle(&a->codel);
	v = pcr_codel_judge(&a->codel, &rs->aqm[c], dep, soj, q);
	if (likely(v == 0)) {
		a->last_dep_tsc = dep;
		return false;
	}
	if (!(v & PCR_CODEL_SIGNAL)) {
		/* over ce-threshold: ECT(1) marked */
		if (aqm_mark(b->m[e], true)) {
			x->st->aqm_ce_marked++;
			a->marked++;
		}
		a->last_dep_tsc = dep;
		return false;
	}
	if (rs->aqm_mode[c] == PCR_AQM_ECN && aqm_mark(b->m[e], false)) {
		x->st->aqm_marked++;
		x->st->cls_aqm_marked[c]++;
		a->marked++;
		a->last_dep_tsc = dep;
		return false;
	}
	return true;
}

/*
 * aqm_verdict_slow() where the packet waits under the target and its
 * flow's CoDel is quiet (pcr_codel_quiet(): the idle reset and the judge
 * would change nothing and signal nothing), inline: a packet with nothing
 * to signal cost 112 RX instructions more with the AQM on than off,
 * judged in full through a call (bench/instr.sh --aqm; runs take
 * run_aqm_quiet() instead).
 */
/* The delay batch entry @p e, arrived at @p arr_tsc, will have had when
 * it leaves (TSC), into the port's queue delay histogram. */
static inline uint64_t
qdelay_add(const struct stamp_ctx *x, const struct stamp_batch *b,
	   unsigned int e, uint64_t arr_tsc)
{
	uint64_t dep = b->dep_tsc[e];
	uint64_t soj = dep > arr_tsc ? dep - arr_tsc : 0;

	pcr_hist_add(&x->st->qdelay, soj);
	return soj;
}

static inline bool
aqm_verdict(const struct stamp_ctx *x, struct stamp_batch *b, unsigned int e,
	    struct pcr_flow *f, uint64_t arr_tsc, bool counted)
{
	const struct pcr_codel_params *p = &x->rs->aqm[f->class_id];
	struct pcr_flow_aqm *a = flow_aqm(x->ft, f);
	uint64_t dep = b->dep_tsc[e];
	uint64_t soj = qdelay_add(x, b, e, arr_tsc);

	if (likely(pcr_codel_passes(&a->codel, p, soj))) {
		a->last_dep_tsc = dep;
		return false;
	}
	return aqm_verdict_slow(x, b, e, f, a, arr_tsc, soj, counted);
}

/*
 * Drop @p b's last entry, of flow @p f, for the AQM: given back whole
 * (pcr_stamp_refund(): it is its flow's newest stamp, so the flow and
 * every level are as if it had not come, and the next packet of the flow
 * takes its place, as the RFC's dequeue() takes the next packet after a
 * drop), counted, its mbuf freed. @p counted: as aqm_verdict()'s.
 */
static __rte_noinline void
aqm_drop(const struct stamp_ctx *x, struct stamp_batch *b, struct pcr_flow *f,
	 bool counted)
{
	unsigned int e = --b->k;

	pcr_stamp_refund(&f->pol, &b->undo[e], b->lv[e], b->n_lv[e], x->solo);
	if (counted)
		flow_q_sub(x->solo, f, pcr_q(rte_pktmbuf_pkt_len(b->m[e])));
	x->st->drop_aqm++;
	x->st->cls_drop_aqm[f->class_id]++;
	flow_aqm(x->ft, f)->dropped++;
	rte_pktmbuf_free(b->m[e]);
}

/*
 * The AQM over a run (rx_flow_run()): its @p done packets of flow @p f,
 * batch entries from @p k0, judged in turn, each as the newest. A drop
 * ends the run there: the run's later packets are given back first (newest
 * first: as if never stamped, for the per-packet path), then the dropped
 * one. @return the packets the run took, the dropped one the last of
 * them; *@p dropped whether it dropped one.
 */
static unsigned int
run_aqm(const struct stamp_ctx *x, struct stamp_batch *b, unsigned int k0,
	struct pcr_flow *f, unsigned int done, bool *dropped)
{
	unsigned int j, l;

	*dropped = false;
	for (j = 0; j < done; j++) {
		if (!aqm_verdict(x, b, k0 + j, f, b->arr_tsc[k0 + j], false))
			continue;
		for (l = done; l-- > j + 1;)
			pcr_stamp_refund(&f->pol, &b->undo[k0 + l], b->lv[k0 + l],
					 b->n_lv[k0 + l], x->solo);
		b->k = k0 + j + 1;
		aqm_drop(x, b, f, false);
		*dropped = true;
		return j + 1;
	}
	return done;
}

/* The AQM is on for @p f's class. */
static inline bool
aqm_on(const struct stamp_ctx *x, const struct pcr_flow *f)
{
	return x->rs->aqm_mode[f->class_id] != 0;
}

/*
 * The delay batch entry @p e (of flow @p f, arrived at @p arr_tsc) will
 * have had when it leaves, into the port's histogram, and the AQM's
 * verdict where its class has one (aqm_verdict(), which adds the delay
 * itself; @p counted as its). @return true if it is to be dropped.
 */
static inline bool
stamp_judge(const struct stamp_ctx *x, struct stamp_batch *b, unsigned int e,
	    struct pcr_flow *f, uint64_t arr_tsc, bool counted)
{
	if (aqm_on(x, f))
		return aqm_verdict(x, b, e, f, arr_tsc, counted);
	qdelay_add(x, b, e, arr_tsc);
	return false;
}

/*
 * A run of @p f's packets (rx_flow_run()) whose last waits @p soj (TSC)
 * has nothing to signal: it arrived at once and leaves in order, so its
 * last packet waits longest, and under the target with CoDel quiet every
 * packet takes aqm_verdict()'s fast path and none changes the state. One
 * test a run instead of one a packet: the AQM costs a packet it passes 6
 * RX instructions (349.5 against 343.5 with --aqm off; the queue delay
 * histogram, filled as the batch is by run_fill(), is kept with the AQM
 * off too), where judging each in full through a call cost 112
 * (bench/instr.sh --aqm).
 */
static inline bool
run_aqm_quiet(const struct stamp_ctx *x, struct pcr_flow *f, uint64_t soj)
{
	return pcr_codel_passes(&flow_aqm(x->ft, f)->codel,
				&x->rs->aqm[f->class_id], soj);
}

/* What run_fill() counts of a run that keeps every packet: received by
 * classifier verdict, the flow in each mbuf, the queued word returned. */
struct run_acct {
	struct pcr_lstats *st;
	const struct pcr_pkt_info *info;
	const uint32_t *bytes;
	uint32_t overhead;
	int flow_off;
};

/*
 * A run's @p done packets of flow @p f (@p pkts, departures @p dep, fine)
 * into batch @p b from entry @p e; with @p qdelay, each one's sojourn (its
 * departure less @p now_tsc, when they all arrived) into that histogram:
 * a bucket and the sum a packet, the count and the largest (the last's)
 * once, what pcr_hist_add() of each would make it (pcr_hist_burst_add()
 * cost more: a run's sojourns, a frame time apart, each open a bucket of
 * their own). With @p whole (no packet of the run can be dropped: the AQM
 * off, or nothing to signal), what rx_flow_run() counts of each too
 * (@p acct, by value: its fields stay in registers while the loop
 * stores), in the same loop (a second loop over the run cost 7 RX
 * instructions a packet). Inlined once for each use.
 */
static inline __attribute__((always_inline)) uint64_t
run_fill(struct stamp_batch *b, unsigned int e, struct rte_mbuf **pkts,
	 struct pcr_flow *f, uint8_t txq, uint8_t nl, const uint64_t *dep,
	 unsigned int done, uint64_t now, uint64_t now_tsc,
	 struct pcr_hist *qdelay, bool whole, const struct run_acct acct)
{
	uint64_t sum = 0, q = 0;
	unsigned int j;

	for (j = 0; j < done; j++) {
		/* at or after now_tsc: pcr_fine_tsc() of a time at or
		 * after now rounds up */
		uint64_t d = pcr_fine_tsc(dep[j], now, now_tsc);

		b->dep_tsc[e + j] = d;
		b->m[e + j] = pkts[j];
		b->f[e + j] = f;
		b->q[e + j] = txq;
		b->arr_tsc[e + j] = now_tsc;
		b->n_lv[e + j] = nl; /* lv[e + j][0]: pcr_stamp_run() */
		if (qdelay != NULL) {
			qdelay->bucket[pcr_hist_index(d - now_tsc)]++;
			sum += d - now_tsc;
		}
		if (whole) {
			acct.st->classify[acct.info[j].result]++;
			q += pcr_q(acct.bytes[j] - acct.overhead);
			*RTE_MBUF_DYNFIELD(pkts[j], acct.flow_off,
					   struct pcr_flow **) = f;
		}
	}
	b->k = e + done;
	if (qdelay != NULL) {
		uint64_t last = b->dep_tsc[e + done - 1] - now_tsc;

		qdelay->count += done;
		qdelay->sum += sum;
		if (last > qdelay->max)
			qdelay->max = last;
	}
	return q;
}

/* Hand @p b to the wheels of its packets' TX queues; what an inbox refuses
 * is given back, dropped (newest first: each flow, all of whose packets go
 * by one queue, ends as before its oldest refused). @return how many the
 * wheels took. */
static unsigned int
batch_flush(const struct stamp_ctx *x, struct stamp_batch *b)
{
	unsigned int i, q, n, sent, took = 0;

	if (b->k == 0)
		return 0;
	if (likely(x->eg->n_txq == 1)) {
		took = pcr_wheel_enqueue_burst(x->eg->txq[0]->wheel, b->m,
					       b->dep_tsc, b->k);
		for (i = b->k; i-- > took;)
			batch_refuse(x, b, i);
		b->k = 0;
		return took;
	}
	for (q = 0; q < x->eg->n_txq; q++) {
		struct rte_mbuf *m[PCR_RX_BURST];
		uint64_t dep[PCR_RX_BURST];
		uint8_t idx[PCR_RX_BURST];

		for (i = 0, n = 0; i < b->k; i++)
			if (b->q[i] == q) {
				idx[n] = (uint8_t)i;
				m[n] = b->m[i];
				dep[n++] = b->dep_tsc[i];
			}
		if (n == 0)
			continue;
		sent = pcr_wheel_enqueue_burst(x->eg->txq[q]->wheel, m, dep, n);
		for (i = n; i-- > sent;)
			batch_refuse(x, b, idx[i]);
		took += sent;
	}
	b->k = 0;
	return took;
}

/*
 * Per-flow staging (issue 17, 1b). Stamping every packet on arrival at the
 * first free time is first come, first served: under a backlog a flow
 * waits behind every packet stamped before it, as in a FIFO (tbf). So,
 * with a lead H (--stage-lead): a packet under a shared level is stamped
 * on arrival only if it can leave within H of now (its own flow's rate may
 * hold it further: then it waits too, rather than being placed ahead of a
 * bucket's filled part, which would leave the time before it unused);
 * otherwise it is held in its flow's staging queue, in this lcore,
 * uncharged. Each pass of the loop, stage_serve() stamps held packets as
 * room opens within H, choosing the flow round robin by bytes (deficit
 * round robin, PCR_STAGE_QUANTUM a turn), the classes of a port in turn. While anything is held for a
 * port, its arrivals are held too (joining the round), so nobody jumps
 * the queue. A stamp, once made, never moves; nothing is charged for a
 * held packet, so what is held takes no capacity from anyone.
 *
 * Held packets count as queued, are bounded by --flow-limit like the
 * others, and by the horizon: a class (port) holds at most horizon x its
 * rate, the rest is dropped (drop_horizon), or with --horizon-policy cap
 * stamped at the horizon uncharged when its flow holds nothing.
 *
 * Several RX lcores: each holds its own flows; each publishes its virtual
 * time per port (bytes stamped per held flow) and stamps only while it is
 * within one quantum of the lowest of the others that compete for the
 * port's room (the others hold packets, were stopped by the aggregate, not
 * by a class of their own, and published within H), so the round robin
 * holds across lcores. A pass that finds the port's staging unserved for
 * longer than H counts a stall (stage_stalls): the time it missed is gone
 * from the calendars, so the link idled instead of bursting later.
 */

/* A held packet's link to the next one of its flow: the departure dynfield,
 * unused until the packet is stamped. */
static inline struct rte_mbuf **
stage_link(const struct pcr_dp *dp, struct rte_mbuf *m)
{
	return (struct rte_mbuf **)pcr_wheel_departure(m, dp->dep_dynfield);
}

/* A held packet's arrival (TSC), for its sojourn when it is stamped (AQM). */
static inline uint64_t *
stage_arrival(const struct pcr_dp *dp, struct rte_mbuf *m)
{
	return RTE_MBUF_DYNFIELD(m, dp->arr_dynfield, uint64_t *);
}

/* Among the other RX lcores competing now for port @p p: the best level
 * they hold (PCR_RANK_LEVELS if none competes), and in *@p vt the lowest
 * virtual time of those at it. */
static unsigned int
stage_peers(const struct pcr_lcore *lc, uint16_t p, uint64_t now_tsc,
	    uint64_t *vt_out)
{
	uint64_t lo = UINT64_MAX, fresh = lc->dp->stage_lead_tsc;
	unsigned int i, best = PCR_RANK_LEVELS;

	for (i = 0; i < lc->n_peers; i++) {
		const struct pcr_stage_pub *o = &lc->peers[i]->pub[p];
		uint64_t vt = __atomic_load_n(&o->vt, __ATOMIC_RELAXED);
		uint64_t t = __atomic_load_n(&o->tsc, __ATOMIC_RELAXED);
		unsigned int lv = __atomic_load_n(&o->level, __ATOMIC_RELAXED);

		/* signed: a peer may have published after this lcore read
		 * its clock (a newer time, not a stale one) */
		if (vt == UINT64_MAX || (int64_t)(now_tsc - t) > (int64_t)fresh)
			continue;
		if (lv < best || (lv == best && vt < lo)) {
			best = lv;
			lo = vt;
		}
	}
	*vt_out = lo;
	return best;
}

static inline void
stage_publish(struct pcr_lcore *lc, uint16_t p, uint64_t vt,
	      unsigned int level, uint64_t now_tsc)
{
	__atomic_store_n(&lc->pub[p].tsc, now_tsc, __ATOMIC_RELAXED);
	__atomic_store_n(&lc->pub[p].level, level, __ATOMIC_RELAXED);
	__atomic_store_n(&lc->pub[p].vt, vt, __ATOMIC_RELAXED);
}

/* The best level port @p sp holds a flow at, over its classes. */
static inline unsigned int
stage_best_level(const struct pcr_stage_port *sp)
{
	uint64_t a = sp->active;
	unsigned int best = PCR_RANK_LEVELS;

	while (a != 0) {
		unsigned int c = (unsigned int)__builtin_ctzll(a);
		unsigned int lv =
			(unsigned int)__builtin_ctzll(sp->cls[c].set.mask);

		a &= a - 1;
		if (lv < best)
			best = lv;
	}
	return best;
}

/* Where pcr_rank_*() find a held flow's link to the next of its level. */
static inline struct pcr_rank_links
stage_links(struct pcr_flowtab *ft)
{
	return (struct pcr_rank_links){ &ft->stage[0].next, &ft->stage[0].prev,
					sizeof(struct pcr_stage_flow) };
}

/* The level held flow @p sf takes in class @p c now: its rank in
 * completion order (ahead of every rank while the starvation guard's
 * frames last), the round of fair order. */
static inline unsigned int
stage_level(const struct pcr_dp *dp, const struct pcr_rates *rs, uint16_t c,
	    const struct pcr_stage_flow *sf)
{
	if (rs->order[c] != PCR_ORDER_COMPLETION)
		return sf->boost != 0 ? PCR_RANK_GUARD : PCR_RANK_LAST;
	if (sf->boost != 0)
		return PCR_RANK_GUARD;
	return pcr_rank_level(&dp->rank[c], sf->txn_bytes);
}

/* Flow @p idx leaves class @p sc's list of held flows by last stamp. */
static inline void
lru_unlink(struct pcr_flowtab *ft, struct pcr_stage_class *sc, uint32_t idx)
{
	struct pcr_stage_flow *sf = &ft->stage[idx];

	if (!sf->on_lru)
		return;
	if (sf->lru_prev == PCR_RANK_NONE)
		sc->lru_head = sf->lru_next;
	else
		ft->stage[sf->lru_prev].lru_next = sf->lru_next;
	if (sf->lru_next == PCR_RANK_NONE)
		sc->lru_tail = sf->lru_prev;
	else
		ft->stage[sf->lru_next].lru_prev = sf->lru_prev;
	sf->on_lru = false;
}

/* Flow @p idx goes to the end of class @p sc's list (just stamped). */
static inline void
lru_touch(struct pcr_flowtab *ft, struct pcr_stage_class *sc, uint32_t idx)
{
	struct pcr_stage_flow *sf = &ft->stage[idx];

	lru_unlink(ft, sc, idx);
	sf->lru_next = PCR_RANK_NONE;
	sf->lru_prev = sc->lru_tail;
	if (sc->lru_tail == PCR_RANK_NONE)
		sc->lru_head = idx;
	else
		ft->stage[sc->lru_tail].lru_next = idx;
	sc->lru_tail = idx;
	sf->on_lru = true;
}

/*
 * The starvation guard of class @p sc (completion order), looked at about
 * 16 times per --order-guard: every held flow not stamped for
 * --order-guard goes ahead of every rank for --order-guard-frames frames.
 * The class keeps its held flows in the order they were last stamped (or
 * held), so the look takes them from the front while they are that old:
 * up to 64 a look (a flow boosted goes to the back, as if stamped; one
 * already boosted waits its turn in the guard's level).
 */
static void
stage_guard(const struct pcr_dp *dp, struct pcr_flowtab *ft,
	    struct pcr_stage_class *sc, uint64_t now_tsc,
	    struct pcr_lstats *st)
{
	uint64_t wait = dp->guard_tsc;
	uint32_t wait_c = (uint32_t)(wait >> PCR_COARSE_SHIFT);
	uint32_t now_c = pcr_coarse(now_tsc);
	struct pcr_rank_links l = stage_links(ft);
	unsigned int n;

	if (wait == 0 || (int64_t)(now_tsc - sc->guard_tsc) < 0)
		return;
	sc->guard_tsc = now_tsc + wait / 16;
	for (n = 0; n < 64 && sc->lru_head != PCR_RANK_NONE; n++) {
		uint32_t idx = sc->lru_head;
		struct pcr_stage_flow *sf = &ft->stage[idx];

		if ((uint32_t)(now_c - sf->served) <= wait_c)
			break;
		lru_touch(ft, sc, idx);
		if (sf->boost != 0)
			continue;
		pcr_rank_remove(&sc->set, &l, sf->level, idx);
		sf->boost = dp->guard_frames;
		sf->level = PCR_RANK_GUARD;
		sf->deficit = PCR_STAGE_QUANTUM;
		pcr_rank_push(&sc->set, &l, PCR_RANK_GUARD, idx);
		st->order_guard++;
	}
}

/*
 * A flow of a fair class that joins the held flows of port @p sp after it
 * was last stamped more than a round ago (every held flow's quantum at
 * the tightest of the class's and the port's rates: it sends below its
 * fair share) is sparse: its first packet goes ahead of the round, as
 * fq_codel serves its new flows first (RFC 8290, 4.1) and sch_fq its
 * new_flows. A ping or a DNS query beside 16 backlogged TCP flows at 50
 * mbit/s waited a round, 16 frames (3.9 ms), behind them. @p served: when
 * it was last stamped (pcr_coarse()).
 */
static inline bool
stage_sparse(const struct stamp_ctx *x, const struct pcr_stage_port *sp,
	     uint16_t c, uint32_t served)
{
	const struct pcr_rate *r = &x->rs->agg;
	uint64_t round;

	if (pcr_rate_unlimited(r) ||
	    (!pcr_rate_unlimited(&x->rs->cls[c]) &&
	     x->rs->cls[c].fpb > r->fpb))
		r = &x->rs->cls[c];
	if (pcr_rate_unlimited(r))
		return true;
	round = pcr_rate_cost(r, (uint32_t)(sp->flows + 1) * PCR_STAGE_QUANTUM) >>
		(PCR_FINE_SHIFT + PCR_COARSE_SHIFT);
	return (uint32_t)(pcr_coarse(x->now_tsc) - served) > round;
}

/*
 * Subscriber shares (issue 36). Under a busy node of a subscriber tree,
 * its children share it by weight (src/tree.h: a subscriber's min, a
 * node's the sum below it), whatever number of flows each holds: one
 * subscriber with 20 flows gets one subscriber's share of a busy AP, not
 * 20 flows' (cake's host isolation, at every level), and a site's APs
 * share it by the subscribers they carry. Each node keeps, on each RX
 * lcore, a virtual time for its children (GPS's: the bytes stamped under
 * it over the weights of its children that hold packets) and each child
 * a tag (the bytes stamped under it over its own weight); a leaf does the
 * same for its flows, each of weight one. A held flow is looked at only
 * while, at every node on its path, its branch's tag is at most one frame
 * of the branch's own ahead of that node's virtual time: a branch that
 * has had more than its weighted share is passed over until the others
 * catch up (start-time fair queueing, node by node: with independent
 * busy nodes one virtual time for all cannot work, each node's runs at
 * its own rate). A branch more than a frame behind (its own max, or a
 * node below it, holds it back) is brought up to a frame behind: it
 * keeps no more credit than that, and the room it leaves goes to the
 * others, which is the weighted max-min share. Should every branch a
 * pass looked at under a node be ahead, the node's virtual time moves
 * up to let the least ahead go (not when one that may go found the node
 * full: the room it waits for is its own). Counts and
 * times change as flows come and go from staging (tree_hold(),
 * tree_release(): a walk up the path that stops where a node already
 * held something) and as packets are stamped (tree_served(): the path).
 * Each RX lcore shares by what it holds itself. Fair order only: a class
 * of completion order orders by rank, not by share.
 *
 * Plain deficit round robin over the flows did not hold: a flow a full
 * node holds back keeps no place in the order, and whichever was looked
 * at first when room opened took it with a fresh quantum each time (20
 * flows against one under a full AP: 9.4 and 0.5 mbit/s of 10).
 */
static inline bool
tree_shared(const struct pcr_stage_port *sp, const struct pcr_flow *f)
{
	return sp->held != NULL && f->leaf != PCR_TREE_NONE;
}

/* Node tags and virtual times: bytes x 2^40 over a weight (bit/s). */
static inline uint64_t
tree_inc(uint64_t bytes, uint64_t weight)
{
	return (bytes << 40) / weight;
}

/* Where a node's children's virtual time is: @p par's, or the port's. */
static inline uint64_t *
tree_vt(struct pcr_stage_port *sp, uint32_t par)
{
	return par == PCR_TREE_NONE ? &sp->tree_vt : &sp->held[par].vt;
}

/* A flow of @p leaf joins the held flows (its tag: *@p ftag); each node
 * that holds nothing yet joins its parent's at the parent's time. */
static void
tree_hold(struct pcr_stage_port *sp, uint32_t leaf, int32_t *ftag)
{
	const struct pcr_tree *t = sp->tree;
	struct pcr_tree_held *h = sp->held;
	uint32_t n = leaf, par;

	sp->tree_flows++;
	*ftag = (int32_t)(uint32_t)h[leaf].vt;
	if (h[n].n++ != 0)
		return;
	for (;; n = par) {
		par = t->parent[n];
		h[n].tag = *tree_vt(sp, par);
		if (par == PCR_TREE_NONE) {
			sp->tree_wsum += t->weight[n];
			return;
		}
		h[par].wsum += t->weight[n];
		if (h[par].n++ != 0)
			return;
	}
}

/* A flow of @p leaf holds nothing more. */
static void
tree_release(struct pcr_stage_port *sp, uint32_t leaf)
{
	const struct pcr_tree *t = sp->tree;
	uint32_t n = leaf, par;

	sp->tree_flows--;
	if (--sp->held[n].n != 0)
		return;
	for (;; n = par) {
		par = t->parent[n];
		if (par == PCR_TREE_NONE) {
			sp->tree_wsum -= t->weight[n];
			return;
		}
		sp->held[par].wsum -= t->weight[n];
		if (--sp->held[par].n != 0)
			return;
	}
}

/* A branch found ahead in a pass: under which node (PCR_TREE_NONE: the
 * port; the leaf itself for a flow), the least time that lets it go. */
struct tree_ahead {
	bool any;
	uint32_t node;
	uint64_t vt;
};

/* May a held flow (tag *@p ftag) of @p leaf be looked at now? Behind
 * more than a frame, a tag is brought up; ahead more than a frame, the
 * node is noted in @p ah (the first such of the pass). */
static bool
tree_eligible(struct pcr_stage_port *sp, int32_t *ftag, uint32_t leaf,
	      struct tree_ahead *ah, uint32_t pass)
{
	const struct pcr_tree *t = sp->tree;
	struct pcr_tree_held *h = sp->held;
	uint32_t path[PCR_TREE_DEPTH_MAX + 2], n, par, lvt, ft;
	unsigned int k = 0, i;
	bool busy;

	/* the path, leaf first; a node's children's shares count while it
	 * or a node above it (the port: its class or aggregate) was full
	 * in this pass or the last */
	for (n = leaf; n != PCR_TREE_NONE; n = t->parent[n])
		path[k++] = n;
	busy = pass - sp->tree_full <= 1;
	for (i = k; i-- > 0;) {
		uint64_t win, *vp, tg;

		n = path[i];
		par = i + 1 < k ? path[i + 1] : PCR_TREE_NONE;
		if (par != PCR_TREE_NONE)
			busy |= pass - h[par].full <= 1;
		win = tree_inc(PCR_STAGE_QUANTUM, t->weight[n]);
		vp = tree_vt(sp, par);
		tg = h[n].tag;
		if ((int64_t)(tg - (*vp - win)) < 0)
			h[n].tag = tg = *vp - win;
		if (busy && (int64_t)(tg - (*vp + win)) > 0) {
			/* ahead under a busy node: the others' turn */
			if (!ah->any ||
			    (ah->node == par && (int64_t)(tg - win - ah->vt) < 0))
				*ah = (struct tree_ahead){ true, par, tg - win };
			return false;
		}
		/* a branch under par may go (it may find it full) */
		if (par == PCR_TREE_NONE)
			sp->tree_pass = pass;
		else
			h[par].pass = pass;
	}
	/* its flows, each of weight one, in bytes (32 bits) */
	busy |= pass - h[leaf].full <= 1;
	lvt = (uint32_t)h[leaf].vt;
	ft = (uint32_t)*ftag;
	if ((int32_t)(ft - (lvt - PCR_STAGE_QUANTUM)) < 0)
		*ftag = (int32_t)(ft = lvt - PCR_STAGE_QUANTUM);
	if (busy && (int32_t)(ft - (lvt + PCR_STAGE_QUANTUM)) > 0) {
		uint32_t go = ft - PCR_STAGE_QUANTUM;

		if (!ah->any ||
		    (ah->node == leaf && (int32_t)(go - (uint32_t)ah->vt) < 0))
			*ah = (struct tree_ahead){ true, leaf, go };
		return false;
	}
	h[leaf].pass = pass;
	return true;
}

/* A held flow (tag *@p ftag) of @p leaf stamped @p bytes: its tag and
 * its branch's on, each node's time on. */
static void
tree_served(struct pcr_stage_port *sp, int32_t *ftag, uint32_t leaf,
	    uint32_t bytes)
{
	const struct pcr_tree *t = sp->tree;
	struct pcr_tree_held *h = sp->held;
	uint32_t n, par;

	*ftag = (int32_t)((uint32_t)*ftag + bytes);
	h[leaf].vt += bytes / h[leaf].n;
	for (n = leaf;; n = par) {
		par = t->parent[n];
		h[n].tag += tree_inc(bytes, t->weight[n]);
		if (par == PCR_TREE_NONE) {
			sp->tree_vt += tree_inc(bytes, sp->tree_wsum);
			return;
		}
		h[par].vt += tree_inc(bytes, h[par].wsum);
	}
}

/* A held flow of a subscriber could not be stamped in pass @p pass: the
 * node whose calendar was full (@p lv, @p nl: its levels) is busy now,
 * and its children's shares count (the port's, for the class or the
 * aggregate). */
static void
tree_full(struct pcr_stage_port *sp, const struct stamp_ctx *x,
	  const struct pcr_flow *f, enum stage_block why,
	  const struct pcr_cal_level *lv, unsigned int nl, uint32_t pass)
{
	const struct pcr_tree *t = sp->tree;
	unsigned int i = nl;
	uint32_t n;

	/* lv[].full says which level had no room, where one was looked
	 * at: not where its own bound held it beyond the lead */
	if (why != STAGE_BLOCK_FLOW)
		for (i = 0; i < nl && !lv[i].full; i++)
			;
	if (i == nl) {
		/* its own bound: its leaf's (or its previous frame's) */
		sp->held[f->leaf].full = pass;
		return;
	}
	if (lv[i].cal == x->rs->agg_cal || lv[i].cal == x->rs->cls_cal[f->class_id]) {
		sp->tree_full = pass;
		return;
	}
	for (n = t->parent[f->leaf]; n != PCR_TREE_NONE; n = t->parent[n])
		if (t->cal[n] == lv[i].cal) {
			sp->held[n].full = pass;
			return;
		}
}

/* End of pass @p pass: a node under which every branch looked at was
 * ahead (none could go, full or not) lets the least ahead go. */
static void
tree_pass_end(struct pcr_stage_port *sp, const struct tree_ahead *ah,
	      uint32_t pass)
{
	uint64_t *vp;
	uint32_t last;

	if (!ah->any)
		return;
	last = ah->node == PCR_TREE_NONE ? sp->tree_pass :
					   sp->held[ah->node].pass;
	if (last == pass)
		return;
	vp = tree_vt(sp, ah->node);
	if (ah->node != PCR_TREE_NONE && ah->node >= sp->tree->n_interior) {
		/* a leaf's flows: their tags are its time's low 32 bits */
		uint32_t d = (uint32_t)ah->vt - (uint32_t)*vp;

		if ((int32_t)d > 0)
			*vp += d;
	} else if ((int64_t)(ah->vt - *vp) > 0) {
		*vp = ah->vt;
	}
}

/* Hold @p m (wire @p bytes) of flow @p f for egress port x->eg. */
static void
stage_add(struct pcr_lcore *lc, const struct stamp_ctx *x,
	  struct stamp_batch *b, struct pcr_flow *f, struct rte_mbuf *m,
	  uint32_t bytes)
{
	struct pcr_flowtab *ft = lc->ft;
	uint16_t p = x->eg->id;
	struct pcr_stage_port *sp = &ft->sport[p];
	uint32_t idx = flow_index(ft, f);
	struct pcr_stage_flow *sf = &ft->stage[idx];
	uint16_t c = sf->head != NULL ? sf->cls : f->class_id;
	struct pcr_stage_class *sc = &sp->cls[c];
	const struct pcr_rate *cr = &x->rs->cls[c];
	uint32_t len = rte_pktmbuf_pkt_len(m);
	uint64_t horizon = x->limit - x->now;
	enum stage_block why;

	/* the horizon, as a cap on what a class and the port hold */
	if ((!pcr_rate_unlimited(cr) &&
	     pcr_rate_cost(cr, sc->bytes + len) > horizon) ||
	    (!pcr_rate_unlimited(&x->rs->agg) &&
	     pcr_rate_cost(&x->rs->agg, sp->bytes + len) > horizon)) {
		enum pcr_stamp_result r = PCR_STAMP_BEYOND;

		if (x->cap && sf->head == NULL)
			r = stamp_try(x, b, f, m, bytes, 0, x->now_tsc, &why);
		if (r == PCR_STAMP_BEYOND) {
			x->st->drop_horizon++;
			rte_pktmbuf_free(m);
		} else {
			flow_q_add(x->solo, f, pcr_q(len));
		}
		return;
	}
	*stage_link(x->dp, m) = NULL;
	*stage_arrival(x->dp, m) = x->now_tsc;
	if (sf->head == NULL) {
		struct pcr_rank_links l = stage_links(ft);

		/* joins its class at the end of its level (fair: the round,
		 * or ahead of it for its first packet if it is sparse), with
		 * one quantum */
		sf->boost = x->rs->order[c] != PCR_ORDER_COMPLETION &&
			    stage_sparse(x, sp, c, sf->served);
		sf->head = sf->tail = m;
		sf->cls = c;
		sf->deficit = PCR_STAGE_QUANTUM;
		if (tree_shared(sp, f))
			tree_hold(sp, f->leaf, &sf->deficit);
		sf->served = pcr_coarse(x->now_tsc);
		sf->level = (uint8_t)stage_level(x->dp, x->rs, c, sf);
		pcr_rank_push(&sc->set, &l, sf->level, idx);
		if (x->rs->order[c] == PCR_ORDER_COMPLETION)
			lru_touch(ft, sc, idx);
		sp->active |= UINT64_C(1) << c;
		if (sp->flows++ == 0) {
			/* starts level with the lowest competing lcore */
			uint64_t lo;

			stage_peers(lc, p, x->now_tsc, &lo);
			if (lo != UINT64_MAX && lo > sp->vt)
				sp->vt = lo;
			sp->last_tsc = x->now_tsc;
			lc->staged_ports |= 1u << p;
		}
	} else {
		*stage_link(x->dp, sf->tail) = m;
		sf->tail = m;
	}
	sc->bytes += len;
	sp->bytes += len;
	x->st->staged++;
	x->st->staged_total++;
	flow_q_add(x->solo, f, pcr_q(len));
}

/* Take the head packet of flow @p idx (class @p c) out of staging. */
static struct rte_mbuf *
stage_take(struct pcr_lcore *lc, struct pcr_stage_port *sp, uint16_t p,
	   uint16_t c, uint32_t idx, struct pcr_lstats *st)
{
	struct pcr_flowtab *ft = lc->ft;
	struct pcr_stage_flow *sf = &ft->stage[idx];
	struct pcr_stage_class *sc = &sp->cls[c];
	struct rte_mbuf *m = sf->head;
	uint32_t len = rte_pktmbuf_pkt_len(m);

	sf->head = *stage_link(lc->dp, m);
	sc->bytes -= len;
	sp->bytes -= len;
	st->staged--;
	if (sf->head != NULL)
		return m;
	/* its last: out of its level (it is the level's head) */
	sf->tail = NULL;
	if (sp->held != NULL) {
		const struct pcr_flow *f = flow_at(ft, idx);

		if (f->leaf != PCR_TREE_NONE)
			tree_release(sp, f->leaf);
	}
	{
		struct pcr_rank_links l = stage_links(ft);

		pcr_rank_pop(&sc->set, &l, sf->level);
	}
	lru_unlink(ft, sc, idx);
	if (sc->set.mask == 0)
		sp->active &= ~(UINT64_C(1) << c);
	if (--sp->flows == 0) {
		lc->staged_ports &= ~(1u << p);
		stage_publish(lc, p, UINT64_MAX, PCR_RANK_LEVELS, rte_rdtsc());
	}
	return m;
}

/* The class of @p avail (a non-empty mask) whose turn it is from @p from. */
static inline unsigned int
stage_next_class(uint64_t avail, unsigned int from)
{
	uint64_t after = avail >> (from % PCR_MAX_CLASSES);

	if (after != 0)
		return from % PCR_MAX_CLASSES + (unsigned int)__builtin_ctzll(after);
	return (unsigned int)__builtin_ctzll(avail);
}

/*
 * Stamp what port @p p holds on this lcore while room opens within the
 * lead: at most PCR_RX_BURST packets, and twice as many looks, a pass (the
 * loop comes back).
 */
static void
stage_serve(struct pcr_lcore *lc, uint16_t p)
{
	struct pcr_flowtab *ft = lc->ft;
	struct pcr_stage_port *sp = &ft->sport[p];
	struct pcr_lstats *st = &lc->st[p];
	struct pcr_rank_links links = stage_links(ft);
	struct stamp_batch b;
	struct stamp_ctx x;
	uint64_t now_tsc = rte_rdtsc(), gap = now_tsc - sp->last_tsc;
	uint64_t blocked = 0, lo;
	unsigned int n = 0, looks = 0;
	bool port_full = false;
	/* subscribers' flows passed over for being ahead, this pass */
	struct tree_ahead ahead = { false, 0, 0 };

	if (gap > sp->lead.tsc) {
		/* the calendars' time between the last pass's lead and now
		 * is gone: the link idled that long */
		st->stage_stalls++;
		st->stage_stall_tsc += gap - sp->lead.tsc;
	}
	sp->last_tsc = now_tsc;
	/* the next lead, from this window's gaps */
	st->stage_lead_tsc = pcr_lead_note(&sp->lead, gap, now_tsc);
	stamp_ctx_init(&x, lc->dp, ft, p, st, sp, now_tsc);
	b.k = 0;
	if (lc->n_peers != 0) {
		unsigned int mine = stage_best_level(sp);
		unsigned int theirs = stage_peers(lc, p, x.now_tsc, &lo);

		/* a better rank held elsewhere goes first; at the same rank,
		 * the lcore behind in bytes stamped per flow */
		if (theirs < mine ||
		    (theirs == mine &&
		     sp->vt > lo + ((uint64_t)PCR_STAGE_QUANTUM << 8))) {
			stage_publish(lc, p, sp->vt, mine, x.now_tsc);
			return;
		}
	}
	sp->pass++;
	while ((sp->active & ~blocked) != 0 && n < PCR_RX_BURST &&
	       looks++ < 2 * PCR_RX_BURST) {
		unsigned int c = stage_next_class(sp->active & ~blocked,
						  sp->next_cls);
		struct pcr_stage_class *sc = &sp->cls[c];
		bool completion = x.rs->order[c] == PCR_ORDER_COMPLETION;
		struct rte_mbuf *m;
		struct pcr_stage_flow *sf;
		struct pcr_flow *f;
		uint32_t idx, len, bytes;
		uint64_t arr;
		enum pcr_stamp_result r;
		enum stage_block why;
		unsigned int nl;
		bool shared;
		int lv;

		if (sc->pass != sp->pass) {
			sc->pass = sp->pass;
			sc->skip = 0;
			if (completion)
				stage_guard(lc->dp, ft, sc, x.now_tsc, st);
		}
		lv = pcr_rank_best(&sc->set, sc->skip);
		if (lv < 0) {
			/* every level's flows wait on their own rates */
			blocked |= UINT64_C(1) << c;
			continue;
		}
		idx = sc->set.lv[lv].head;
		sf = &ft->stage[idx];
		f = flow_at(ft, idx);
		shared = !completion && tree_shared(sp, f);
		/* a subscriber's flow whose branch had more than its share
		 * lets the next go (Subscriber shares) */
		if (shared && lv == PCR_RANK_LAST &&
		    !tree_eligible(sp, &sf->deficit, f->leaf, &ahead, sp->pass) &&
		    pcr_rank_rotate(&sc->set, &links, (unsigned int)lv))
			continue;
		m = sf->head;
		len = rte_pktmbuf_pkt_len(m);
		bytes = len + x.rs->wire_overhead;
		arr = *stage_arrival(lc->dp, m);
		r = stamp_try(&x, &b, f, m, bytes, x.lead, arr, &why);
		if (r == PCR_STAMP_WAIT) {
			if (shared)
				tree_full(sp, &x, f, why, b.lv[b.k],
					  b.n_lv[b.k], sp->pass);
			if (why == STAGE_BLOCK_PORT) {
				port_full = true;
				break; /* no class can go */
			}
			if (why == STAGE_BLOCK_CLASS)
				blocked |= UINT64_C(1) << c;
			/* in completion order, a head whose own bound is
			 * within the lead (its previous frame's departure:
			 * it goes as soon as the shared levels have room)
			 * keeps its place and its level is passed over this
			 * pass: equal transactions were taking turns a frame
			 * each, 01234567 eight times over at N = 8, until
			 * the first left the entry level (issue 37) */
			else if (completion && why == STAGE_BLOCK_NEXT)
				sc->skip |= UINT64_C(1) << lv;
			/* its own rate holds it: the next flow of its level
			 * goes (a subscriber's flow ends its turn); a level
			 * of this flow alone is passed over */
			else if (!pcr_rank_rotate(&sc->set, &links,
						  (unsigned int)lv))
				sc->skip |= UINT64_C(1) << lv;
			continue;
		}
		n++;
		sp->vt += ((uint64_t)bytes << 8) / sp->flows;
		sf->served = pcr_coarse(x.now_tsc);
		if (completion) {
			sf->txn_bytes += bytes;
			lru_touch(ft, sc, idx);
		} else {
			lru_unlink(ft, sc, idx);
		}
		stage_take(lc, sp, p, (uint16_t)c, idx, st);
		if (r == PCR_STAMP_BEYOND) {
			/* its own rate puts it past the horizon (a rate or
			 * the horizon changed while it was held) */
			st->drop_horizon++;
			flow_q_sub(x.solo, f, pcr_q(len));
			rte_pktmbuf_free(m);
		} else if (stamp_judge(&x, &b, b.k - 1, f, arr, true)) {
			/* the head of its queue: the next one may take its
			 * place in this pass */
			aqm_drop(&x, &b, f, true);
		}
		sp->turn += bytes;
		if (sf->head == NULL) {
			if (completion)
				txn_watch(ft, sf);
			sp->next_cls = c + 1; /* the next class's turn */
			sp->turn = 0;
			continue;
		}
		/* its level now: its rank may have changed with the bytes it
		 * sent, the guard's frames run out, or the order changed */
		if (!completion)
			sf->boost = 0;
		else if (sf->boost != 0)
			sf->boost--;
		nl = stage_level(lc->dp, x.rs, (uint16_t)c, sf);
		if (shared) {
			/* the tags and times on its path on; then the next
			 * flow (a level change keeps the tag) */
			tree_served(sp, &sf->deficit, f->leaf, bytes);
			if (nl == (unsigned int)lv)
				pcr_rank_rotate(&sc->set, &links, nl);
			else
				pcr_rank_served(&sc->set, &links,
						(unsigned int)lv, idx, false,
						nl, bytes, &sf->deficit,
						sf->deficit);
		} else {
			pcr_rank_served(&sc->set, &links, (unsigned int)lv,
					idx, false, nl, bytes, &sf->deficit,
					PCR_STAGE_QUANTUM);
		}
		sf->level = (uint8_t)nl;
		if (sp->turn >= PCR_STAGE_QUANTUM) {
			/* a quantum of the class's: the next class's turn */
			sp->next_cls = c + 1;
			sp->turn = 0;
		}
		if (b.k == PCR_RX_BURST)
			lc->rx_queued |= batch_flush(&x, &b) != 0;
	}
	lc->rx_queued |= batch_flush(&x, &b) != 0;
	if (sp->held != NULL)
		tree_pass_end(sp, &ahead, sp->pass);
	if (n != 0)
		st->stage_cycles += rte_rdtsc() - now_tsc;
	if (sp->flows != 0)
		/* stopped only by classes or flows of its own: not
		 * competing for the port's room */
		stage_publish(lc, p,
			      port_full || (sp->active & ~blocked) != 0 ?
				      sp->vt :
				      UINT64_MAX,
			      stage_best_level(sp), x.now_tsc);
}

/* Every port this lcore holds packets for. */
static inline void
stage_serve_all(struct pcr_lcore *lc)
{
	uint32_t ports = lc->staged_ports;

	while (ports != 0) {
		unsigned int p = __builtin_ctz(ports);

		ports &= ports - 1;
		stage_serve(lc, (uint16_t)p);
	}
}

/* Shutdown without draining: drop everything held. */
static void
stage_drop_all(struct pcr_lcore *lc)
{
	struct pcr_flowtab *ft = lc->ft;

	while (lc->staged_ports != 0) {
		uint16_t p = (uint16_t)__builtin_ctz(lc->staged_ports);
		struct pcr_stage_port *sp = &ft->sport[p];
		unsigned int c = (unsigned int)__builtin_ctzll(sp->active);
		struct pcr_stage_class *sc = &sp->cls[c];
		uint32_t idx = sc->set.lv[pcr_rank_best(&sc->set, 0)].head;
		struct pcr_flow *f = flow_at(ft, idx);
		struct rte_mbuf *m = stage_take(lc, sp, p, (uint16_t)c, idx,
						&lc->st[p]);

		flow_q_sub(solo(lc->dp), f, pcr_q(rte_pktmbuf_pkt_len(m)));
		rte_pktmbuf_free(m);
		lc->st[p].drop_shutdown++;
	}
}

/*
 * A packet of flow @p f (a class of completion order) arrived at
 * @p now_tsc: after PCR_TXN_IDLE_US without one, with nothing of it held,
 * its last transaction is over and a new one starts. @return its staging
 * entry, where the bytes it stamps are counted.
 */
static inline struct pcr_stage_flow *
txn_arrival(const struct pcr_dp *dp, struct pcr_flowtab *ft,
	    const struct pcr_flow *f, uint64_t now_tsc)
{
	struct pcr_stage_flow *sf = &ft->stage[flow_index(ft, f)];
	uint32_t now_c = pcr_coarse(now_tsc);

	if ((uint32_t)(now_c - sf->txn_last) > dp->txn_idle_coarse &&
	    sf->head == NULL)
		txn_end(ft, sf, f->class_id);
	sf->txn_last = now_c;
	return sf;
}

/*
 * Packets @p i.. of the burst @p pkts that share @p i's flow (its table
 * position @p pos[i], the next one's too), stamped together
 * (pcr_stamp_run(): as one by one, with what they share read once) where
 * the per-packet path would only place them: a class matched under the
 * current classes, not of completion order, at most one shared level,
 * room under the flow's --flow-limit and --flow-queue for the whole run,
 * and nothing held for the port or refused for lateness (the caller's
 * checks). net_null's bursts, or a bulk transfer's: 32 packets of one
 * flow. The flow's queued count takes one add for the run (an atomic
 * one where the TX lcore is another lcore: one locked instruction a run,
 * not a packet).
 * @return how many, from @p i, it placed in @p b, counted as the
 * per-packet path counts them; 0: the per-packet path takes packet @p i.
 */
static inline unsigned int
rx_flow_run(struct pcr_flowtab *ft, const struct stamp_ctx *x,
	    struct stamp_batch *b, struct rte_mbuf **pkts,
	    const struct pcr_pkt_info *info, const int32_t *pos,
	    unsigned int i, unsigned int n, const struct pcr_classtab *ct,
	    struct pcr_lstats *in_st, uint64_t *rx_bytes)
{
	struct pcr_flow *f = &ft->flows[pos[i]];
	const struct pcr_rates *rs = x->rs;
	uint16_t c = f->class_id;
	const struct pcr_rate *lr = &rs->cls[c];
	struct pcr_cal *cal = rs->cls_cal[c];
	uint32_t bytes[PCR_RX_BURST];
	uint64_t dep[PCR_RX_BURST];
	const uint64_t now_tsc = x->now_tsc, now = x->now;
	const int flow_off = x->dp->flow_dynfield;
	const uint8_t txq = f->txq;
	uint64_t fq, q, qlen = 0;
	unsigned int j, k, e, done;
	bool dropped = false;
	struct run_acct acct;
	uint8_t nl;

	if (f->class_gen != ct->gen ||
	    rs->order[c] == PCR_ORDER_COMPLETION || f->leaf != PCR_TREE_NONE)
		return 0;
	if (pcr_rate_unlimited(lr))
		cal = NULL;
	if (!pcr_rate_unlimited(&rs->agg)) {
		if (cal != NULL)
			return 0; /* two levels: pcr_cal_place() */
		lr = &rs->agg;
		cal = rs->agg_cal;
	}
	for (j = i; j < n && pos[j] == pos[i]; j++) {
		uint32_t len = rte_pktmbuf_pkt_len(pkts[j]);

		bytes[j - i] = len + rs->wire_overhead;
		qlen += len;
	}
	k = j - i;
	/* the per-packet path's limits, for the run's last packet (each
	 * packet's check counts the ones before it) */
	fq = __atomic_load_n(&f->queued, __ATOMIC_RELAXED);
	if ((rs->flow_limit != 0 && pcr_q_pkts(fq) + k > rs->flow_limit) ||
	    (rs->flow_qbytes[c] != 0 &&
	     pcr_q_bytes(fq) + qlen > rs->flow_qbytes[c]))
		return 0;
	nl = cal != NULL;
	/* the common case, one level and one writer, its own copy: the
	 * run's tests of both fold away */
	if (cal != NULL && x->solo)
		done = pcr_stamp_run(&f->pol, &rs->cls_flow[c], cal, lr, now,
				     x->limit, x->lead, bytes, k, dep,
				     b->lv[b->k], RTE_DIM(b->lv[0]),
				     &b->undo[b->k], true);
	else
		done = pcr_stamp_run(&f->pol, &rs->cls_flow[c], cal, lr, now,
				     x->limit, x->lead, bytes, k, dep,
				     b->lv[b->k], RTE_DIM(b->lv[0]),
				     &b->undo[b->k], x->solo);
	if (done == 0)
		return 0;
	f->last_seen = pcr_coarse(x->now_tsc);
	e = b->k;
	acct = (struct run_acct){ in_st, info + i, bytes,
				  (uint32_t)rs->wire_overhead, flow_off };
	if (likely(!aqm_on(x, f))) {
		q = run_fill(b, e, pkts + i, f, txq, nl, dep, done, now,
			     now_tsc, &x->st->qdelay, true, acct);
	} else if (run_aqm_quiet(x, f,
				 pcr_fine_tsc(dep[done - 1], now, now_tsc) -
					 now_tsc)) {
		/* nothing to signal (run_aqm_quiet()): the sojourns into
		 * the histogram as the batch is filled */
		q = run_fill(b, e, pkts + i, f, txq, nl, dep, done, now,
			     now_tsc, &x->st->qdelay, true, acct);
		flow_aqm(x->ft, f)->last_dep_tsc = b->dep_tsc[e + done - 1];
	} else {
		run_fill(b, e, pkts + i, f, txq, nl, dep, done, now, now_tsc,
			 NULL, false, acct);
		done = run_aqm(x, b, e, f, done, &dropped);
		/* what the run took (those it kept, and one the AQM
		 * dropped, the last): received; what it kept, queued for
		 * the flow */
		q = 0;
		for (j = 0; j < done; j++) {
			in_st->classify[info[i + j].result]++;
			q += pcr_q(bytes[j] - rs->wire_overhead);
			if (j + 1 < done || !dropped)
				*RTE_MBUF_DYNFIELD(pkts[i + j], flow_off,
						   struct pcr_flow **) = f;
		}
	}
	*rx_bytes += pcr_q_bytes(q);
	if (dropped)
		q -= pcr_q(bytes[done - 1] - rs->wire_overhead);
	flow_q_add(x->solo, f, q);
	return done;
}

/*
 * Receive, timestamp and queue one burst of at most @p nb packets from @p q.
 * A lcore that also transmits (one worker: RX and TX on it) learns here
 * what a packet costs it to receive, from the PMD's copy to the wheel's
 * inbox, as a moving average (rx_cost16), and whether packets are coming
 * in on @p q (its bit in rx_busy: the queue's next poll is sized by
 * rx_burst_size(); an idle queue's is not, so an idle loop stays short).
 */
static void
rx_queue_poll(struct pcr_lcore *lc, const struct pcr_rxq *q, uint16_t nb)
{
	struct rte_mbuf *pkts[PCR_RX_BURST];
	struct pcr_pkt_info info[PCR_RX_BURST];
	const void *keys[PCR_RX_BURST];
	hash_sig_t sig[PCR_RX_BURST];
	int32_t pos[PCR_RX_BURST];
	struct stamp_batch b;
	struct stamp_ctx x;
	const struct pcr_classtab *ct;
	struct pcr_lstats *in_st = &lc->st[q->port];
	struct pcr_lstats *eg_st = &lc->st[q->egress];
	struct pcr_flowtab *ft = lc->ft;
	struct pcr_stage_port *sp = &ft->sport[q->egress];
	uint64_t now_tsc, fq, behind, late_cut = 0, t1, rx_bytes = 0;
	int32_t no_run = -1; /* a flow whose run placed none in this burst */
	unsigned int i, sent, run_stop = PCR_RX_BURST; /* where one stopped */
	bool cache_on;
	uint16_t n;
	uint64_t t0 = rte_rdtsc();

	n = rte_eth_rx_burst(q->port, q->queue, pkts, nb);
	if (n == 0) {
		lc->rx_busy &= ~(1u << (q - lc->rxq));
		return;
	}
	now_tsc = rte_rdtsc();
	stamp_ctx_init(&x, lc->dp, ft, q->egress, eg_st, sp, now_tsc);
	b.k = 0;
	ct = __atomic_load_n(&lc->dp->classtab, __ATOMIC_ACQUIRE);
	/*
	 * Overload (--max-late): the port's TX lcore is behind (tx_behind()),
	 * sending what is due `behind` late, so a packet due at d leaves at
	 * about max(d, now + behind), or later: what is queued between
	 * shows in `behind` only once the TX lcore reaches it. So what would
	 * leave more than half of max_late after its time (d before
	 * late_cut) is refused here; the TX lcore drops what is still more
	 * than max_late late when it dequeues it.
	 */
	behind = __atomic_load_n(&x.eg->tx_behind_tsc[0], __ATOMIC_RELAXED);
	for (i = 1; i < x.eg->n_txq; i++) /* the latest of its queues */
		behind = RTE_MAX(behind, __atomic_load_n(&x.eg->tx_behind_tsc[i],
							 __ATOMIC_RELAXED));
	if (unlikely(behind > x.rs->max_late_tsc / 2) &&
	    x.rs->max_late_tsc != 0)
		late_cut = now_tsc + behind - x.rs->max_late_tsc / 2;

	pcr_classify_parse_burst(pkts, n, info);
	cache_on = ft->cache_off == 0;
	for (i = 0; i < n; i++) {
		/* a flow is a 5-tuple arriving on one port: the same 5-tuple
		 * on the peer port is another flow, staged for the other
		 * egress (one entry for both sent each arrival out of the port
		 * the entry was first staged for) */
		info[i].key.rsvd = q->port;
		keys[i] = &info[i].key;
		sig[i] = flow_hash(&info[i].key);
		if (likely(cache_on))
			rte_prefetch0(&ft->cache[sig[i] &
						 (PCR_FLOW_CACHE - 1)]);
	}
	eg_st->flow_cache_hits += flow_lookup_burst(ft, keys, sig, n, pos);

	in_st->rx_packets += n;
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		uint32_t len, bytes;
		struct pcr_stage_flow *tsf;
		enum pcr_stamp_result r;
		struct pcr_flow *f;
		enum stage_block why;

		/* a run of one flow's packets, where it can go together; the
		 * packet a run stopped at goes one by one (a full bucket's
		 * search, which moves on to the next bucket), then the run
		 * goes on; a flow whose run placed none goes one by one for
		 * the rest of the burst */
		if (i + 1 < n && pos[i + 1] == pos[i] && pos[i] >= 0 &&
		    pos[i] != no_run && i != run_stop && late_cut == 0 &&
		    sp->flows == 0) {
			unsigned int done = rx_flow_run(ft, &x, &b, pkts, info,
							pos, i, n, ct, in_st,
							&rx_bytes);

			if (done == 0) {
				no_run = pos[i];
			} else {
				run_stop = i + done;
				i += done - 1;
				continue;
			}
		}
		len = rte_pktmbuf_pkt_len(m);
		rx_bytes += len;
		in_st->classify[info[i].result]++;

		f = pos[i] >= 0 ? &ft->flows[pos[i]] :
				  flow_get_new(ft, eg_st, ct, x.rs->tree,
					       &info[i].key, sig[i], q->egress,
					       (uint8_t)(sig[i] % x.eg->n_txq),
					       x.now);
		/* classes changed since this flow was matched */
		if (unlikely(f->class_gen != ct->gen) && f->in_use) {
			uint16_t cls = classify_flow(ct, &info[i].key);

			/* its next departure waits for its last one, which
			 * the old class's policies set */
			if (cls != f->class_id &&
			    pcr_fine_after(f->pol.last_dep, x.now))
				eg_st->held_for_order++;
			f->class_id = cls;
			f->class_gen = ct->gen;
		}
		f->last_seen = pcr_coarse(now_tsc);
		/* what the flow holds: packets and bytes in one word */
		fq = __atomic_load_n(&f->queued, __ATOMIC_RELAXED);
		if (x.rs->flow_limit != 0 && pcr_q_pkts(fq) >= x.rs->flow_limit) {
			eg_st->drop_flow_limit++;
			rte_pktmbuf_free(m);
			continue;
		}
		if (x.rs->flow_qbytes[f->class_id] != 0 &&
		    pcr_q_bytes(fq) + len > x.rs->flow_qbytes[f->class_id]) {
			eg_st->drop_flow_queue++;
			rte_pktmbuf_free(m);
			continue;
		}
		bytes = len + x.rs->wire_overhead;
		tsf = NULL;
		if (unlikely(x.rs->order[f->class_id] == PCR_ORDER_COMPLETION))
			tsf = txn_arrival(lc->dp, ft, f, now_tsc);
		/* something is held for the port: join the round */
		if (sp->flows != 0) {
			stage_add(lc, &x, &b, f, m, bytes);
			continue;
		}
		r = stamp_try(&x, &b, f, m, bytes, x.lead, now_tsc, &why);
		if (likely(r == PCR_STAMP_PLACED || r == PCR_STAMP_CAPPED)) {
			if (unlikely(late_cut != 0) &&
			    b.dep_tsc[b.k - 1] < late_cut) {
				/* undone: its flow and the policies as if it
				 * had not come */
				b.k--;
				pcr_stamp_refund(&f->pol, &b.undo[b.k],
						 b.lv[b.k], b.n_lv[b.k],
						 x.solo);
				eg_st->drop_late++;
				rte_pktmbuf_free(m);
				continue;
			}
			if (stamp_judge(&x, &b, b.k - 1, f, now_tsc, false)) {
				aqm_drop(&x, &b, f, false);
				continue;
			}
			if (tsf != NULL) {
				tsf->txn_bytes += bytes;
				txn_watch(ft, tsf);
			}
			flow_q_add(x.solo, f, pcr_q(len));
		} else if (r == PCR_STAMP_WAIT) {
			stage_add(lc, &x, &b, f, m, bytes);
		} else {
			/* beyond the horizon: dropped here, charged to
			 * nothing, so an overload cannot push the policies
			 * past it */
			eg_st->drop_horizon++;
			rte_pktmbuf_free(m);
		}
	}
	in_st->rx_bytes += rx_bytes;
	sent = batch_flush(&x, &b);
	t1 = rte_rdtsc();
	in_st->rx_cycles += t1 - t0;
	if (lc->roles & PCR_ROLE_TX) {
		/* per packet, x 16, averaged over about 8 bursts */
		uint64_t c16 = (t1 - t0) * 16 / n;

		lc->rx_cost16 = lc->rx_cost16 - lc->rx_cost16 / 8 + c16 / 8;
		lc->rx_queued |= sent != 0;
		lc->rx_busy |= 1u << (q - lc->rxq);
	}
}

/*
 * Give back to the class and port aggregate of @p tp's port what a
 * packet of @p len bytes, due at @p dep_tsc, reserved there: it is
 * dropped after it was charged (by the wheel, or stuck at the PMD). The
 * TX lcore does not know the exact bucket the RX lcore charged: the one
 * of its departure, which is where it was charged unless the level's
 * credit let it use room up to one burst earlier. A bucket already past
 * is left alone: no packet can be placed there any more.
 */
static void
refund_dropped(const struct pcr_txport *tp, const struct pcr_flow *f,
	       uint32_t len, uint64_t dep_tsc)
{
	const struct pcr_dp *dp = tp->dp;
	const struct pcr_rates *rs = __atomic_load_n(&dp->ports[tp->port].rates,
						     __ATOMIC_ACQUIRE);
	uint64_t now = pcr_fine(rte_rdtsc(), dp->epoch_tsc);
	uint64_t dep = pcr_fine(dep_tsc, dp->epoch_tsc);
	const struct pcr_rate *r[2] = { &rs->cls[f->class_id], &rs->agg };
	struct pcr_cal *cal[2] = { rs->cls_cal[f->class_id], rs->agg_cal };
	unsigned int i;
	uint32_t n;

	if (!pcr_fine_after(dep, now))
		return;
	len += rs->wire_overhead;
	for (i = 0; i < 2; i++)
		if (!pcr_rate_unlimited(r[i]) && cal[i] != NULL)
			pcr_cal_refund(cal[i], pcr_cal_bucket_of(cal[i], dep),
				       pcr_rate_cost(r[i], len), solo(dp));
	/* the nodes above its subscriber (its leaf's bucket keeps the
	 * charge: a token bucket gives back only its newest) */
	if (f->leaf == PCR_TREE_NONE || rs->tree == NULL)
		return;
	for (n = rs->tree->parent[f->leaf]; n != PCR_TREE_NONE;
	     n = rs->tree->parent[n])
		if (rs->tree->cal[n] != NULL)
			pcr_cal_refund(rs->tree->cal[n],
				       pcr_cal_bucket_of(rs->tree->cal[n], dep),
				       pcr_rate_cost(&rs->tree_rate[n], len),
				       solo(dp));
}

/*
 * @p tp sends what is due @p late TSC cycles late (its oldest due, at
 * @p now_tsc). It is behind once that has been more than the bound
 * (--max-late, or PCR_BEHIND_WARN_US with --max-late 0: @p rs) for longer
 * than the bound: a TX lcore that cannot keep up, not one catching up
 * after a stall of its CPU (which it does faster than packets arrive). It
 * stays behind, whatever --max-late keeps its lateness to, until it has
 * sent on time (within a unit, or two slots: what is due leaves by
 * slots) for a second: an RX lcore
 * that loses its CPU now and then lets the TX lcore catch up meanwhile,
 * and the overload is back when it returns. Published for the RX lcores (--max-late)
 * and the control lcore in units of rs->behind_quantum_tsc (one at
 * least: under a quarter of --max-late, so while it catches up the RX
 * lcores refuse nothing that would leave on time), 0
 * while it is not behind, stored only when the step changes (a TX lcore
 * that keeps up stores nothing). @return whether it is behind.
 */
static inline bool
tx_behind(struct pcr_txport *tp, int64_t late, uint64_t now_tsc,
	  const struct pcr_rates *rs)
{
	uint64_t bound = rs->behind_bound_tsc, q = 0;
	uint64_t unit = rs->behind_quantum_tsc;

	/* behind_since: since when the lateness is past what changes the
	 * state (up: the bound; down: on time), 0 = it is not */
	if (tp->behind_on ? late >= (int64_t)RTE_MAX(unit, 2 * tp->gran_tsc) :
			    late <= (int64_t)bound)
		tp->behind_since = 0;
	else if (tp->behind_since == 0)
		tp->behind_since = now_tsc;
	else if ((int64_t)(now_tsc - tp->behind_since) >
		 (int64_t)(tp->behind_on ? rs->tsc_hz : bound)) {
		/* signed: @p now_tsc may be a poll's, read before the clock
		 * reading of a burst that set behind_since */
		tp->behind_on = !tp->behind_on;
		tp->behind_since = 0;
	}
	if (tp->behind_on)
		q = RTE_MAX((uint64_t)late & ~(unit - 1), unit);
	if (likely(q == tp->behind))
		return tp->behind_on;
	tp->behind = q;
	__atomic_store_n(&tp->dp->ports[tp->port].tx_behind_tsc[tp->queue], q,
			 __ATOMIC_RELAXED);
	return tp->behind_on;
}

/*
 * The departure errors of the first @p sent pending packets, handed to
 * the PMD at @p tx_tsc: into the histogram a burst at a time
 * (pcr_hist_burst_add()), early and late counted. @p offl: the port has
 * send-on-timestamp (pend_offl says which ones the NIC holds).
 */
static __rte_always_inline void
tx_account_err(struct pcr_txport *tp, unsigned int sent, uint64_t tx_tsc,
	       const bool offl)
{
	/* one slot is the wheel's granularity, one more the TX loop's */
	const uint64_t late_at = 2 * tp->gran_tsc;
	const uint64_t *dep = tp->pend_dep;
	struct pcr_hist_burst hb;
	uint64_t late = 0;
	size_t j;

	pcr_hist_burst_begin(&hb);
	for (j = 0; j < sent; j++) {
		uint64_t e = tx_tsc - dep[j];

		if (offl && tp->pend_offl[j]) {
			/* the NIC sends it at its time; the handover is
			 * what we see */
			tp->tx_offloaded++;
			continue;
		}
		if (unlikely((int64_t)e < 0)) {
			tp->tx_early++;
			e = 0;
		}
		pcr_hist_burst_add(&tp->err, &hb, e);
		late += e > late_at;
	}
	pcr_hist_burst_end(&tp->err, &hb);
	tp->tx_late += late;
}

/*
 * Account the first @p sent pending packets, which the PMD accepted at
 * @p tx_tsc (their mbufs may be gone already): each one's departure error
 * (tx_account_err()); the port's counters once a burst, the class's and
 * the flow's once a run of one flow's packets (a burst of one flow: one
 * update of its line, not 32).
 */
static inline void
tx_account_node(struct pcr_txport *tp, uint32_t leaf, uint64_t pkts,
		uint64_t bytes)
{
	const uint32_t *parent = tp->tree->parent;
	uint32_t n;

	for (n = leaf; n != PCR_TREE_NONE; n = parent[n]) {
		tp->node[n].tx_packets += pkts;
		tp->node[n].tx_bytes += bytes;
	}
}

static inline void
tx_account(struct pcr_txport *tp, unsigned int sent, uint64_t tx_tsc)
{
	uint64_t all = 0;
	size_t i, j;

	/* pend_offl: only a port with send-on-timestamp sets it */
	if (unlikely(tp->offload_tsc != 0))
		tx_account_err(tp, sent, tx_tsc, true);
	else
		tx_account_err(tp, sent, tx_tsc, false);
	for (i = 0; i < sent; i = j) {
		struct pcr_flow *const *pf = tp->pend_flow;
		const uint32_t *len = tp->pend_len;
		struct pcr_flow *f = pf[i];
		uint64_t bytes = len[i];

		for (j = i + 1; j < sent && pf[j] == f; j++)
			bytes += len[j];
		all += bytes;
		tp->cls[f->class_id].tx_packets += j - i;
		tp->cls[f->class_id].tx_bytes += bytes;
		if (unlikely(f->leaf != PCR_TREE_NONE) && tp->node != NULL)
			tx_account_node(tp, f->leaf, j - i, bytes);
		if (f->tx_packets == 0)
			f->first_tx = pcr_span(tx_tsc);
		f->tx_packets += j - i;
		f->tx_bytes += bytes;
		f->last_tx = pcr_span(tx_tsc);
		/* last touch: once 0, the RX lcore may age the flow out
		 * (pcr_q() of each packet, summed) */
		flow_q_sub(solo(tp->dp), f,
			   (bytes << PCR_Q_PKT_BITS) + (j - i));
	}
	tp->tx_packets += sent;
	tp->tx_bytes += all;
}

/* Drop the packets pending on @p tp, counted in @p ctr. */
static void
tx_drop_pending(struct pcr_txport *tp, uint64_t *ctr)
{
	unsigned int i;

	for (i = 0; i < tp->n_pend; i++) {
		refund_dropped(tp, tp->pend_flow[i], tp->pend_len[i],
			       tp->pend_dep[i]);
		flow_q_sub(solo(tp->dp), tp->pend_flow[i],
			   pcr_q(tp->pend_len[i]));
		rte_pktmbuf_free(tp->pend[i]);
	}
	*ctr += tp->n_pend;
	tp->n_pend = 0;
}

/*
 * Take the @p n packets the wheel gave at pend[@p from...] into pending.
 * How late the first is says whether this TX lcore is behind
 * (tx_behind()); while it is, with --max-late (@p rs), one more than that
 * late is dropped (drop_late) instead of sent: the RX lcores refuse at the
 * same bound, but they learn of it a burst late. @return the packets
 * kept, now pend[@p from...].
 */
static unsigned int
tx_take(struct pcr_txport *tp, unsigned int from, unsigned int n,
	uint64_t now_tsc, bool offl, const struct pcr_rates *rs)
{
	const int dep_off = tp->dp->dep_dynfield;
	uint64_t max_late = 0;
	unsigned int i, k = from;

	if (tx_behind(tp, (int64_t)(now_tsc - *pcr_wheel_departure(
							tp->pend[from], dep_off)),
		      now_tsc, rs))
		max_late = rs->max_late_tsc;
	if (likely(!offl && max_late == 0)) {
		/* the common case: every one kept, none for the NIC */
		const int flow_off = tp->dp->flow_dynfield;
		size_t x;

		for (x = from; x < (size_t)from + n; x++) {
			struct rte_mbuf *m = tp->pend[x];

			tp->pend_dep[x] = *pcr_wheel_departure(m, dep_off);
			tp->pend_len[x] = rte_pktmbuf_pkt_len(m);
			tp->pend_flow[x] = *RTE_MBUF_DYNFIELD(
				m, flow_off, struct pcr_flow **);
		}
		if (unlikely(tp->offload_tsc != 0)) /* tx_account() reads it */
			memset(&tp->pend_offl[from], 0,
			       n * sizeof(tp->pend_offl[0]));
		return n;
	}
	for (i = from; i < from + n; i++) {
		struct rte_mbuf *m = tp->pend[i];
		uint64_t dep = *pcr_wheel_departure(m, dep_off);
		int64_t late = (int64_t)(now_tsc - dep);

		if (unlikely(max_late != 0 && late > (int64_t)max_late)) {
			/* its time is past: nothing to give back to the
			 * policies (refund_dropped()) */
			flow_q_sub(solo(tp->dp), *flow_field(tp->dp, m),
				   pcr_q(rte_pktmbuf_pkt_len(m)));
			rte_pktmbuf_free(m);
			tp->drop_late++;
			continue;
		}
		tp->pend[k] = m;
		tp->pend_dep[k] = dep;
		tp->pend_len[k] = rte_pktmbuf_pkt_len(m);
		tp->pend_flow[k] = *flow_field(tp->dp, m);
		/* send-on-timestamp: the NIC holds what is not due yet */
		tp->pend_offl[k] = offl && late < 0;
		if (tp->pend_offl[k]) {
			*RTE_MBUF_DYNFIELD(m, tp->ts_field, uint64_t *) =
				pcr_clock_tsc_to_nic(tp->port, dep);
			m->ol_flags |= tp->ts_flag;
		}
		k++;
	}
	return k - from;
}

#ifdef PCR_TEST_HOOKS
/* PACER_TEST_WHEEL_HOLD_MS: the wheel's clock stands at its start
 * (test_hold_at) from the first poll for test_hold_tsc cycles, then runs
 * on (see main.c). */
static __rte_noinline uint64_t
tx_test_hold(struct pcr_txport *tp, uint64_t upto, uint64_t now_tsc)
{
	if (tp->test_hold_until == 0)
		tp->test_hold_until = now_tsc + tp->test_hold_tsc;
	if (now_tsc < tp->test_hold_until)
		return tp->test_hold_at;
	tp->test_hold_tsc = 0;
	return upto;
}
#endif

/*
 * One TX burst of @p tp: what is due by @p now_tsc, at most PCR_TX_BURST.
 * Returns true when the burst was full and the PMD took all of it, so more
 * may be due.
 */
static bool
tx_port_burst(struct pcr_txport *tp, uint64_t now_tsc)
{
	unsigned int n = 0, sent;
	uint64_t tx_tsc;

	if (tp->n_pend < PCR_TX_BURST) {
		/* a slot leaves once its end has passed: never early; with
		 * send-on-timestamp, once its end is within the offload
		 * horizon (the NIC holds the packets until their time) */
		bool offl = tp->offload_tsc != 0 &&
			    pcr_clock_nic_valid(tp->port);
		uint64_t upto = (offl ? now_tsc + tp->offload_tsc : now_tsc) -
				tp->gran_tsc + 1;

#ifdef PCR_TEST_HOOKS
		if (unlikely(tp->test_hold_tsc != 0))
			upto = tx_test_hold(tp, upto, now_tsc);
#endif
		n = pcr_wheel_dequeue_burst(tp->wheel, upto,
					    tp->pend + tp->n_pend,
					    PCR_TX_BURST - tp->n_pend);
		if (n != 0) {
			const struct pcr_rates *rs = __atomic_load_n(
				&tp->dp->ports[tp->port].rates,
				__ATOMIC_ACQUIRE);

			if (tp->n_pend == 0)
				tp->stuck_since = now_tsc;
			/* lateness against the clock now: a catch-up's later
			 * bursts leave well after the poll's now_tsc */
			tp->n_pend += tx_take(tp, tp->n_pend, n, rte_rdtsc(),
					      offl, rs);
		} else if (tp->n_pend == 0 &&
			   (tp->behind_on || tp->behind_since != 0)) {
			/* nothing due: on time */
			tx_behind(tp, 0, now_tsc,
				  __atomic_load_n(&tp->dp->ports[tp->port].rates,
						  __ATOMIC_ACQUIRE));
		}
	}
	if (tp->n_pend == 0)
		/* nothing due, or all it took was past --max-late: another
		 * burst */
		return n != 0;
	if (unlikely(__atomic_load_n(&tp->link_down, __ATOMIC_RELAXED))) {
		tx_drop_pending(tp, &tp->drop_link);
		return false;
	}
	tx_tsc = rte_rdtsc();
	sent = rte_eth_tx_burst(tp->port, tp->queue, tp->pend,
				(uint16_t)tp->n_pend);
	tx_account(tp, sent, tx_tsc);
	if (likely(sent == tp->n_pend)) {
		bool full = sent == PCR_TX_BURST;

		tp->n_pend = 0;
		return full;
	}
	/* partial burst: keep the rest, in order, for the next pass */
	tp->tx_retry += tp->n_pend - sent;
	if (sent != 0) {
		unsigned int rest = tp->n_pend - sent;

		memmove(tp->pend, tp->pend + sent, rest * sizeof(tp->pend[0]));
		memmove(tp->pend_dep, tp->pend_dep + sent,
			rest * sizeof(tp->pend_dep[0]));
		memmove(tp->pend_len, tp->pend_len + sent,
			rest * sizeof(tp->pend_len[0]));
		memmove(tp->pend_flow, tp->pend_flow + sent,
			rest * sizeof(tp->pend_flow[0]));
		memmove(tp->pend_offl, tp->pend_offl + sent,
			rest * sizeof(tp->pend_offl[0]));
		tp->n_pend = rest;
		tp->stuck_since = tx_tsc;
	} else if (tx_tsc - tp->stuck_since > tp->hold_tsc) {
		tx_drop_pending(tp, &tp->tx_drop);
	}
	return false;
}

/*
 * Send what is due on @p tp: up to PCR_TX_CATCHUP bursts while they come
 * out full. One burst per pass is not enough: an RX lcore hands the wheel
 * up to a burst per queue per pass, so a TX that takes one burst per pass
 * never makes up a delay (a preemption, a burst of arrivals) once it has
 * one, and every departure after it stays that late.
 * @return the TSC it ended at if it sent anything (the time the next
 * port's poll starts from), else @p now_tsc.
 */
static uint64_t
tx_port_poll(struct pcr_txport *tp, uint64_t now_tsc)
{
	uint64_t sent = tp->tx_packets, end;
	unsigned int b;

	for (b = 0; b < PCR_TX_CATCHUP; b++)
		if (!tx_port_burst(tp, now_tsc))
			break;
	if (tp->tx_packets == sent)
		return now_tsc;
	/* busy: from the time it was handed (its caller's clock, or where
	 * the previous port's poll ended) to now */
	end = rte_rdtsc();
	tp->tx_cycles += end - now_tsc;
	return end;
}

/*
 * When @p tp next has a packet to hand over, as TSC: the end of the first
 * non-empty level-0 slot (tx_port_burst() takes a slot once its end has
 * passed; with send-on-timestamp that much earlier), or now while a
 * partial burst waits for the PMD. UINT64_MAX when the levels are empty
 * (the wheel's inbox aside: see rx_burst_size()).
 */
static inline uint64_t
tx_port_next_due(struct pcr_txport *tp, uint64_t now_tsc)
{
	uint64_t next;

	if (tp->n_pend != 0)
		return now_tsc;
	next = pcr_wheel_next_tsc(tp->wheel);
	if (next == UINT64_MAX)
		return next;
	next += tp->gran_tsc;
	if (tp->offload_tsc != 0 && pcr_clock_nic_valid(tp->port))
		next -= RTE_MIN(next, tp->offload_tsc);
	return next;
}

/* The first departure due on any port @p lc transmits for. */
static uint64_t
lcore_next_due(const struct pcr_lcore *lc, uint64_t now_tsc)
{
	uint64_t due = UINT64_MAX;
	unsigned int i;

	for (i = 0; i < lc->n_tx; i++)
		due = RTE_MIN(due, tx_port_next_due(lc->tx[i], now_tsc));
	return due;
}

/*
 * How many packets a lcore that is also the TX lcore of its ports may
 * receive now without making a departure late: as many as it can receive
 * (rx_cost16) before the first of its ports has a packet due, between
 * PCR_RX_BURST_MIN and PCR_RX_BURST. Sends what is due first, and first of
 * all what its last RX bursts queued (they sit in the wheels' inboxes,
 * which pcr_wheel_next_tsc() does not see, and may be due at once). With
 * one worker doing both, a full burst from a PMD that copies (net_pcap:
 * about 1 us a 1500-byte frame) would hold a due departure back by tens of
 * microseconds; a burst sized to the time left does not, and where nothing
 * is queued, or the next departure is far, RX still takes full bursts.
 */
static uint16_t
rx_burst_size(struct pcr_lcore *lc)
{
	uint64_t now = rte_rdtsc(), due, n;
	unsigned int i;

	if (lc->rx_queued) {
		for (i = 0; i < lc->n_tx; i++)
			now = tx_port_poll(lc->tx[i], now);
		lc->rx_queued = false;
		now = rte_rdtsc();
	}
	due = lcore_next_due(lc, now);
	if (due == UINT64_MAX)
		return PCR_RX_BURST;
	if (due <= now) {
		for (i = 0; i < lc->n_tx; i++)
			now = tx_port_poll(lc->tx[i], now);
		now = rte_rdtsc();
		due = lcore_next_due(lc, now);
		if (due == UINT64_MAX)
			return PCR_RX_BURST;
		if (due <= now)
			return PCR_RX_BURST_MIN;
	}
	if (lc->rx_cost16 == 0)
		return PCR_RX_BURST;
	n = (due - now) * 16 / lc->rx_cost16;
	if (n >= PCR_RX_BURST)
		return PCR_RX_BURST;
	return n > PCR_RX_BURST_MIN ? (uint16_t)n : PCR_RX_BURST_MIN;
}

/* What the control lcore asked of this port's wheel (its consumer's job). */
static inline void
tx_port_requests(struct pcr_txport *tp)
{
	uint32_t r = __atomic_load_n(&tp->horizon_req, __ATOMIC_ACQUIRE);

	if (likely(r == tp->horizon_done))
		return;
	tp->horizon_rc = pcr_wheel_set_horizon(tp->wheel, tp->horizon_ns,
					       tp->horizon_policy);
	__atomic_store_n(&tp->horizon_done, r, __ATOMIC_RELEASE);
}

/* Shutdown without draining: drop everything queued. */
static void
tx_port_drop_all(struct pcr_txport *tp)
{
	struct rte_mbuf *m[PCR_TX_BURST];
	unsigned int n, i;

	tx_drop_pending(tp, &tp->drop_shutdown);
	while ((n = pcr_wheel_flush(tp->wheel, m, RTE_DIM(m))) != 0) {
		for (i = 0; i < n; i++) {
			struct pcr_flow *f = *flow_field(tp->dp, m[i]);

			flow_q_sub(solo(tp->dp), f,
				   pcr_q(rte_pktmbuf_pkt_len(m[i])));
			rte_pktmbuf_free(m[i]);
		}
		tp->drop_shutdown += n;
	}
}

static bool
tx_port_empty(struct pcr_txport *tp)
{
	struct pcr_wheel_stats ws;

	if (tp->n_pend != 0)
		return false;
	pcr_wheel_stats_get(tp->wheel, &ws);
	return ws.queued == 0;
}

void
pcr_wheel_drop_cb(struct rte_mbuf *m, enum pcr_wheel_drop_reason r, void *arg)
{
	struct pcr_txport *tp = arg;
	struct pcr_flow *f = *flow_field(tp->dp, m);

	tp->drop_wheel[r]++;
	refund_dropped(tp, f, rte_pktmbuf_pkt_len(m),
		       *pcr_wheel_departure(m, tp->dp->dep_dynfield));
	flow_q_sub(solo(tp->dp), f, pcr_q(rte_pktmbuf_pkt_len(m)));
	rte_pktmbuf_free(m);
}

static bool
all_rx_stopped(const struct pcr_dp *dp)
{
	unsigned int i;

	for (i = 0; i < RTE_MAX_LCORE; i++) {
		const struct pcr_lcore *lc = dp->lcores[i];

		if (lc != NULL && (lc->roles & PCR_ROLE_RX) &&
		    !__atomic_load_n(&lc->rx_stopped, __ATOMIC_ACQUIRE))
			return false;
	}
	return true;
}

int
pcr_worker_main(void *arg)
{
	struct pcr_lcore *lc = arg;
	const struct pcr_dp *dp = lc->dp;
	unsigned int i;
	bool tx_done = !(lc->roles & PCR_ROLE_TX);

	__atomic_store_n(&lc->tid, rte_gettid(), __ATOMIC_RELEASE);
	rte_rcu_qsbr_thread_register(dp->qsbr, lc->lcore_id);
	rte_rcu_qsbr_thread_online(dp->qsbr, lc->lcore_id);
	/*
	 * Bring each wheel's clock to now before the first packet: an empty
	 * wheel's clock moves only when it is polled, and what RX hands over
	 * is placed (and capped at the horizon) against that clock. Set up
	 * after the wheels were created (ports, lcores; the wheels' own memory
	 * faulted in) takes milliseconds, which the first arrivals would
	 * otherwise find the clock behind by.
	 */
	for (i = 0; i < lc->n_tx; i++)
		tx_port_poll(lc->tx[i], rte_rdtsc());
	__atomic_store_n(&lc->running, true, __ATOMIC_RELEASE);
	lc->pass_tsc = rte_rdtsc();
	for (;;) {
		uint32_t st = __atomic_load_n(&dp->state, __ATOMIC_ACQUIRE);
		uint64_t now = rte_rdtsc();

		/* the last pass: a stall if it took longer than a pass can
		 * (a snapshot's pause included: it is time lost too) */
		if (unlikely(now - lc->pass_tsc > dp->stall_tsc)) {
			lc->stalls++;
			lc->stall_tsc += now - lc->pass_tsc;
		}
		lc->pass_tsc = now;

		/* between bursts: nothing published is held across here */
		rte_rcu_qsbr_quiescent(dp->qsbr, lc->lcore_id);
		sync_point(lc);
		if (st == PCR_STOP)
			break;
		if (lc->roles & PCR_ROLE_RX) {
			if (st == PCR_RUN) {
				if (__atomic_load_n(&dp->forwarding,
						    __ATOMIC_ACQUIRE))
					for (i = 0; i < lc->n_rxq; i++)
						rx_queue_poll(lc, &lc->rxq[i],
							      (lc->rx_busy >> i) & 1 ?
								      rx_burst_size(lc) :
								      PCR_RX_BURST);
				/* held packets leave on time, forwarding
				 * stopped or not */
				stage_serve_all(lc);
				now = rte_rdtsc();
				flowtab_age(lc, now);
				txn_poll(dp, lc->ft, now);
			} else if (!lc->rx_stopped) {
				/* what is held leaves on time first (or is
				 * dropped, with PCR_STOP_DROP) */
				if (st == PCR_STOP_DROP)
					stage_drop_all(lc);
				else
					stage_serve_all(lc);
				if (lc->staged_ports == 0)
					__atomic_store_n(&lc->rx_stopped, true,
							 __ATOMIC_RELEASE);
			}
		}
		if (!(lc->roles & PCR_ROLE_TX))
			continue;
		if (st == PCR_STOP_DROP && all_rx_stopped(dp)) {
			for (i = 0; i < lc->n_tx; i++)
				tx_port_drop_all(lc->tx[i]);
			tx_done = true;
		} else if (!tx_done) {
			for (i = 0; i < lc->n_tx; i++)
				tx_port_requests(lc->tx[i]);
			now = rte_rdtsc();
			for (i = 0; i < lc->n_tx; i++)
				now = tx_port_poll(lc->tx[i], now);
			lc->rx_queued = false;
			if (st == PCR_STOP_RX && all_rx_stopped(dp)) {
				bool empty = true;

				for (i = 0; i < lc->n_tx; i++)
					empty &= tx_port_empty(lc->tx[i]);
				tx_done = empty;
			}
		}
		if (tx_done && st != PCR_RUN) {
			if (!lc->tx_done)
				__atomic_store_n(&lc->tx_done, true,
						 __ATOMIC_RELEASE);
			rte_pause(); /* until the control lcore says PCR_STOP */
		}
	}
	rte_rcu_qsbr_thread_offline(dp->qsbr, lc->lcore_id);
	rte_rcu_qsbr_thread_unregister(dp->qsbr, lc->lcore_id);
	__atomic_store_n(&lc->running, false, __ATOMIC_RELEASE);
	return 0;
}
