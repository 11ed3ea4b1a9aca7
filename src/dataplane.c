/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * The fast path: RX (timestamper) and TX (wheel drain) loops. Nothing here
 * allocates, locks or logs per packet.
 */

#include <inttypes.h>
#include <stdio.h>

#include <rte_branch_prediction.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include "pacer.h"

/* Age-out work per pass and passes per second of a RX lcore. */
#define AGE_BATCH_MIN 64ull
#define AGE_BATCH_MAX 4096ull /* bounds a pass to tens of microseconds */
#define AGE_PERIOD_US 1000

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
	for (i = 0; i < PCR_MAX_CLASSES; i++)
		ft->overflow[i].class_id = (uint16_t)i;
	ft->entries = (uint32_t)entries;
	batch = entries * AGE_PERIOD_US / (pcr_app.cfg.flow_idle_ms * 1000);
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
	rte_free(ft);
}

/* The first live class whose rule fits, in file order; else default. */
static uint16_t
classify_flow(const struct pcr_classtab *ct, const struct pcr_flow_key *k)
{
	unsigned int i;

	for (i = 1; i < ct->n; i++)
		if (ct->live[i] && pcr_match_key(&ct->match[i], k))
			return (uint16_t)i;
	return 0;
}

/* A flow not in the table yet (or added earlier in this burst). */
static struct pcr_flow *
flow_get_new(struct pcr_flowtab *ft, struct pcr_lstats *st,
	     const struct pcr_classtab *ct, const struct pcr_flow_key *k,
	     uint16_t egress, uint64_t now)
{
	struct pcr_flow *f;
	int32_t pos;

	pos = rte_hash_lookup(ft->h, k);
	if (pos >= 0)
		return &ft->flows[pos];
	pos = rte_hash_add_key(ft->h, k);
	if (unlikely(pos < 0)) {
		uint16_t cls = classify_flow(ct, k);

		st->flow_table_full++;
		f = &ft->overflow[cls];
		return f;
	}
	f = &ft->flows[pos];
	memset(f, 0, sizeof(*f));
	f->in_use = true;
	f->class_id = classify_flow(ct, k);
	f->class_gen = ct->gen;
	f->egress = egress;
	pcr_stamp_flow_init(&f->pol, now);
	st->flows_new++;
	return f;
}

/* The burst (fine units) of flow @p f's rate now. Any lcore (RCU). */
static inline uint64_t
flow_burst(const struct pcr_flow *f)
{
	const struct pcr_rates *rs =
		__atomic_load_n(&pcr_app.ports[f->egress].rates, __ATOMIC_ACQUIRE);

	return rs->cls_flow[f->class_id].burst;
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
	uint64_t idle = pcr_app.cfg.flow_idle_ms * (pcr_clock_tsc_hz() / 1000);
	uint64_t now = pcr_fine(now_tsc, pcr_app.epoch_tsc);
	uint32_t i;

	if (now_tsc < ft->next_age_tsc)
		return;
	ft->next_age_tsc = now_tsc + pcr_clock_tsc_hz() / 1000000 * AGE_PERIOD_US;
	for (i = 0; i < ft->age_batch; i++) {
		struct pcr_flow *f = &ft->flows[ft->iter];
		void *key;

		if (++ft->iter == ft->entries)
			ft->iter = 0;
		if (!f->in_use ||
		    __atomic_load_n(&f->queued, __ATOMIC_ACQUIRE) != 0 ||
		    (uint64_t)(uint32_t)(pcr_coarse(now_tsc) - f->last_seen) <
			    (idle >> PCR_COARSE_SHIFT) ||
		    !pcr_policy_idle(f->pol.empty, now, flow_burst(f)))
			continue;
		if (rte_hash_get_key_with_position(ft->h, f - ft->flows,
						   &key) != 0 ||
		    rte_hash_del_key(ft->h, key) < 0)
			continue;
		f->in_use = false;
		lc->st[f->egress].flows_aged++;
	}
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
	struct rte_mbuf *pkts[PCR_RX_BURST], *out[PCR_RX_BURST];
	struct pcr_pkt_info info[PCR_RX_BURST];
	const void *keys[PCR_RX_BURST];
	struct pcr_flow *fl[PCR_RX_BURST];
	uint64_t dep_tsc[PCR_RX_BURST];
	int32_t pos[PCR_RX_BURST];
	/* what each queued packet was charged, for a refund if the wheel's
	 * inbox refuses it */
	struct pcr_cal_level lv[PCR_RX_BURST][2];
	struct pcr_stamp_undo undo[PCR_RX_BURST];
	uint8_t n_lv[PCR_RX_BURST];
	struct pcr_port *eg = &pcr_app.ports[q->egress];
	const struct pcr_rates *rs;
	const struct pcr_classtab *ct;
	struct pcr_lstats *in_st = &lc->st[q->port];
	struct pcr_lstats *eg_st = &lc->st[q->egress];
	const struct pcr_config *c = &pcr_app.cfg;
	const bool solo = pcr_solo(); /* the shared policies' one writer */
	struct pcr_flowtab *ft = lc->ft;
	uint64_t now_tsc, now, flow_limit, horizon_tsc, limit;
	bool cap;
	unsigned int i, k = 0, sent;
	uint16_t n;
	uint64_t t0 = (lc->roles & PCR_ROLE_TX) ? rte_rdtsc() : 0;

	n = rte_eth_rx_burst(q->port, q->queue, pkts, nb);
	if (n == 0) {
		lc->rx_busy &= ~(1u << (q - lc->rxq));
		return;
	}
	now_tsc = rte_rdtsc();
	now = pcr_fine(now_tsc, pcr_app.epoch_tsc);
	/* held until this lcore's next quiescent report (RCU) */
	rs = __atomic_load_n(&eg->rates, __ATOMIC_ACQUIRE);
	/* the furthest departure the wheel takes (its own limit is further) */
	horizon_tsc = __atomic_load_n(&eg->tx->rx_horizon_tsc, __ATOMIC_RELAXED);
	cap = __atomic_load_n(&eg->tx->rx_horizon_cap, __ATOMIC_RELAXED);
	limit = now + (horizon_tsc << PCR_FINE_SHIFT);
	ct = __atomic_load_n(&pcr_app.classtab, __ATOMIC_ACQUIRE);

	pcr_classify_parse_burst(pkts, n, info);
	for (i = 0; i < n; i++)
		keys[i] = &info[i].key;
	if (rte_hash_lookup_bulk(ft->h, keys, n, pos) != 0)
		for (i = 0; i < n; i++)
			pos[i] = -1;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		uint32_t bytes = rte_pktmbuf_pkt_len(m);
		const struct pcr_rate *cr;
		enum pcr_stamp_result r;
		struct pcr_flow *f;
		unsigned int nl = 0;
		uint64_t dep;

		in_st->rx_packets++;
		in_st->rx_bytes += bytes;
		in_st->classify[info[i].result]++;

		f = pos[i] >= 0 ? &ft->flows[pos[i]] :
				  flow_get_new(ft, eg_st, ct, &info[i].key,
					       q->egress, now);
		/* classes changed since this flow was matched */
		if (unlikely(f->class_gen != ct->gen) && f->in_use) {
			uint16_t cls = classify_flow(ct, &info[i].key);

			/* its next departure waits for its last one, which
			 * the old class's policies set */
			if (cls != f->class_id &&
			    pcr_fine_after(f->pol.last_dep, now))
				eg_st->held_for_order++;
			f->class_id = cls;
			f->class_gen = ct->gen;
		}
		f->last_seen = pcr_coarse(now_tsc);
		flow_limit = __atomic_load_n(&c->flow_limit, __ATOMIC_RELAXED);
		if (flow_limit != 0 &&
		    pcr_q_pkts(__atomic_load_n(&f->queued, __ATOMIC_RELAXED)) >=
			    flow_limit) {
			eg_st->drop_flow_limit++;
			rte_pktmbuf_free(m);
			continue;
		}
		bytes += (uint32_t)c->wire_overhead;

		/*
		 * The flow's bucket and last departure give a lower bound;
		 * class and port aggregate are placed at the first time both
		 * have room, and every policy is charged where the packet
		 * leaves (lib/policy/pcr_stamp.h). Beyond the horizon:
		 * dropped here, charged to nothing, so an overload cannot
		 * push the policies past it.
		 */
		cr = &rs->cls[f->class_id];
		if (!pcr_rate_unlimited(cr))
			pcr_stamp_level(&lv[k][nl++], rs->cls_cal[f->class_id],
					cr, bytes);
		if (!pcr_rate_unlimited(&rs->agg))
			pcr_stamp_level(&lv[k][nl++], rs->agg_cal, &rs->agg,
					bytes);
		r = pcr_stamp(&f->pol, &rs->cls_flow[f->class_id], lv[k], nl,
			      now, limit, cap, bytes, &dep, &undo[k], solo);
		if (unlikely(r != PCR_STAMP_PLACED)) {
			if (r == PCR_STAMP_BEYOND)
				goto horizon;
			nl = 0; /* capped: no shared policy charged */
		}
		n_lv[k] = (uint8_t)nl;
		pcr_flow_q_add(f, pcr_q(rte_pktmbuf_pkt_len(m)));
		*pcr_flow_field(m) = f;
		/* fine -> TSC, rounded up: never earlier than the policies */
		dep_tsc[k] = now_tsc + ((dep - now + (1u << PCR_FINE_SHIFT) - 1) >>
					PCR_FINE_SHIFT);
		fl[k] = f;
		out[k++] = m;
		continue;
horizon:
		eg_st->drop_horizon++;
		rte_pktmbuf_free(m);
	}
	if (k != 0) {
		sent = pcr_wheel_enqueue_burst(eg->tx->wheel, out, dep_tsc, k);
		/* newest first: each flow ends as before its oldest refused */
		for (i = k; i-- > sent;) {
			pcr_stamp_refund(&fl[i]->pol, &undo[i], lv[i], n_lv[i],
					 solo);
			pcr_flow_q_sub(fl[i], pcr_q(rte_pktmbuf_pkt_len(out[i])));
			eg_st->drop_inbox++;
			rte_pktmbuf_free(out[i]);
		}
	}
	if (t0 != 0) {
		/* per packet, x 16, averaged over about 8 bursts */
		uint64_t c16 = (rte_rdtsc() - t0) * 16 / n;

		lc->rx_cost16 = lc->rx_cost16 - lc->rx_cost16 / 8 + c16 / 8;
		lc->rx_queued |= k != 0;
		lc->rx_busy |= 1u << (q - lc->rxq);
	}
}

/*
 * Give back to the class and port aggregate of egress port @p eg what a
 * packet of @p len bytes, due at @p dep_tsc, reserved there: it is
 * dropped after it was charged (by the wheel, or stuck at the PMD). The
 * TX lcore does not know the exact bucket the RX lcore charged: the one
 * of its departure, which is where it was charged unless the level's
 * credit let it use room up to one burst earlier. A bucket already past
 * is left alone: no packet can be placed there any more.
 */
static void
refund_dropped(struct pcr_port *eg, const struct pcr_flow *f, uint32_t len,
	       uint64_t dep_tsc)
{
	const struct pcr_rates *rs = __atomic_load_n(&eg->rates,
						     __ATOMIC_ACQUIRE);
	uint64_t now = pcr_fine(rte_rdtsc(), pcr_app.epoch_tsc);
	uint64_t dep = pcr_fine(dep_tsc, pcr_app.epoch_tsc);
	const struct pcr_rate *r[2] = { &rs->cls[f->class_id], &rs->agg };
	struct pcr_cal *cal[2] = { rs->cls_cal[f->class_id], rs->agg_cal };
	unsigned int i;

	if (!pcr_fine_after(dep, now))
		return;
	len += (uint32_t)pcr_app.cfg.wire_overhead;
	for (i = 0; i < 2; i++)
		if (!pcr_rate_unlimited(r[i]) && cal[i] != NULL)
			pcr_cal_refund(cal[i], pcr_cal_bucket_of(cal[i], dep),
				       pcr_rate_cost(r[i], len), pcr_solo());
}

/* Account one packet the PMD accepted (its mbuf may be gone already). */
static inline void
tx_account(struct pcr_txport *tp, unsigned int i, uint64_t tx_tsc)
{
	struct pcr_flow *f = tp->pend_flow[i];
	uint64_t dep = tp->pend_dep[i];
	uint32_t len = tp->pend_len[i];

	tp->tx_packets++;
	tp->tx_bytes += len;
	if (tp->pend_offl[i]) {
		/* the NIC sends it at its time; the handover is what we see */
		tp->tx_offloaded++;
	} else if (unlikely(tx_tsc < dep)) {
		tp->tx_early++;
		pcr_hist_add(&tp->err, 0);
	} else {
		uint64_t e = tx_tsc - dep;

		pcr_hist_add(&tp->err, e);
		/* one slot is the wheel's granularity, one more the TX loop's */
		if (e > 2 * tp->gran_tsc)
			tp->tx_late++;
	}
	tp->cls[f->class_id].tx_packets++;
	tp->cls[f->class_id].tx_bytes += len;
	if (f->tx_packets == 0)
		f->first_tx = pcr_span(tx_tsc);
	f->tx_packets++;
	f->tx_bytes += len;
	f->last_tx = pcr_span(tx_tsc);
	/* last touch: once 0, the RX lcore may age the flow out */
	pcr_flow_q_sub(f, pcr_q(len));
}

/* Drop the packets pending on @p tp, counted in @p ctr. */
static void
tx_drop_pending(struct pcr_txport *tp, uint64_t *ctr)
{
	unsigned int i;

	for (i = 0; i < tp->n_pend; i++) {
		refund_dropped(&pcr_app.ports[tp->port], tp->pend_flow[i],
			       tp->pend_len[i], tp->pend_dep[i]);
		pcr_flow_q_sub(tp->pend_flow[i], pcr_q(tp->pend_len[i]));
		rte_pktmbuf_free(tp->pend[i]);
	}
	*ctr += tp->n_pend;
	tp->n_pend = 0;
}

static void
tx_take(struct pcr_txport *tp, unsigned int from, unsigned int n,
	uint64_t now_tsc, bool offl)
{
	unsigned int i;

	for (i = from; i < from + n; i++) {
		struct rte_mbuf *m = tp->pend[i];
		uint64_t dep = *pcr_wheel_departure(m, pcr_app.dep_dynfield);

		tp->pend_dep[i] = dep;
		tp->pend_len[i] = rte_pktmbuf_pkt_len(m);
		tp->pend_flow[i] = *pcr_flow_field(m);
		/* send-on-timestamp: the NIC holds what is not due yet */
		tp->pend_offl[i] = offl && (int64_t)(dep - now_tsc) > 0;
		if (tp->pend_offl[i]) {
			*RTE_MBUF_DYNFIELD(m, tp->ts_field, uint64_t *) =
				pcr_clock_tsc_to_nic(tp->port, dep);
			m->ol_flags |= tp->ts_flag;
		}
	}
}

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

/*
 * One TX burst of @p tp: what is due by @p now_tsc, at most PCR_TX_BURST.
 * Returns true when the burst was full and the PMD took all of it, so more
 * may be due.
 */
static bool
tx_port_burst(struct pcr_txport *tp, uint64_t now_tsc)
{
	unsigned int n, sent, i;
	uint64_t tx_tsc;

	if (tp->n_pend < PCR_TX_BURST) {
		/* a slot leaves once its end has passed: never early; with
		 * send-on-timestamp, once its end is within the offload
		 * horizon (the NIC holds the packets until their time) */
		bool offl = tp->offload_tsc != 0 &&
			    pcr_clock_nic_valid(tp->port);
		uint64_t upto = (offl ? now_tsc + tp->offload_tsc : now_tsc) -
				tp->gran_tsc + 1;

		if (unlikely(tp->test_hold_tsc != 0))
			upto = tx_test_hold(tp, upto, now_tsc);
		n = pcr_wheel_dequeue_burst(tp->wheel, upto,
					    tp->pend + tp->n_pend,
					    PCR_TX_BURST - tp->n_pend);
		if (n != 0) {
			if (tp->n_pend == 0)
				tp->stuck_since = now_tsc;
			tx_take(tp, tp->n_pend, n, now_tsc, offl);
			tp->n_pend += n;
		}
	}
	if (tp->n_pend == 0)
		return false;
	if (unlikely(__atomic_load_n(&tp->link_down, __ATOMIC_RELAXED))) {
		tx_drop_pending(tp, &tp->drop_link);
		return false;
	}
	tx_tsc = rte_rdtsc();
	sent = rte_eth_tx_burst(tp->port, tp->queue, tp->pend,
				(uint16_t)tp->n_pend);
	for (i = 0; i < sent; i++)
		tx_account(tp, i, tx_tsc);
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
 */
static void
tx_port_poll(struct pcr_txport *tp, uint64_t now_tsc)
{
	unsigned int b;

	for (b = 0; b < PCR_TX_CATCHUP; b++)
		if (!tx_port_burst(tp, now_tsc))
			break;
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
			tx_port_poll(lc->tx[i], now);
		lc->rx_queued = false;
		now = rte_rdtsc();
	}
	due = lcore_next_due(lc, now);
	if (due == UINT64_MAX)
		return PCR_RX_BURST;
	if (due <= now) {
		for (i = 0; i < lc->n_tx; i++)
			tx_port_poll(lc->tx[i], now);
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
			struct pcr_flow *f = *pcr_flow_field(m[i]);

			pcr_flow_q_sub(f, pcr_q(rte_pktmbuf_pkt_len(m[i])));
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
	struct pcr_flow *f = *pcr_flow_field(m);

	tp->drop_wheel[r]++;
	refund_dropped(&pcr_app.ports[tp->port], f, rte_pktmbuf_pkt_len(m),
		       *pcr_wheel_departure(m, pcr_app.dep_dynfield));
	pcr_flow_q_sub(f, pcr_q(rte_pktmbuf_pkt_len(m)));
	rte_pktmbuf_free(m);
}

static bool
all_rx_stopped(void)
{
	unsigned int i;

	for (i = 0; i < RTE_MAX_LCORE; i++) {
		struct pcr_lcore *lc = pcr_app.lcores[i];

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
	unsigned int i;
	bool tx_done = !(lc->roles & PCR_ROLE_TX);

	rte_rcu_qsbr_thread_register(pcr_app.qsbr, lc->lcore_id);
	rte_rcu_qsbr_thread_online(pcr_app.qsbr, lc->lcore_id);
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
	for (;;) {
		uint32_t st = __atomic_load_n(&pcr_app.state, __ATOMIC_ACQUIRE);
		uint64_t now;

		/* between bursts: nothing published is held across here */
		rte_rcu_qsbr_quiescent(pcr_app.qsbr, lc->lcore_id);
		pcr_sync_point(lc);
		if (st == PCR_STOP)
			break;
		if (lc->roles & PCR_ROLE_RX) {
			if (st == PCR_RUN) {
				if (__atomic_load_n(&pcr_app.forwarding,
						    __ATOMIC_ACQUIRE))
					for (i = 0; i < lc->n_rxq; i++)
						rx_queue_poll(lc, &lc->rxq[i],
							      (lc->rx_busy >> i) & 1 ?
								      rx_burst_size(lc) :
								      PCR_RX_BURST);
				flowtab_age(lc, rte_rdtsc());
			} else if (!lc->rx_stopped) {
				__atomic_store_n(&lc->rx_stopped, true,
						 __ATOMIC_RELEASE);
			}
		}
		if (!(lc->roles & PCR_ROLE_TX))
			continue;
		if (st == PCR_STOP_DROP && all_rx_stopped()) {
			for (i = 0; i < lc->n_tx; i++)
				tx_port_drop_all(lc->tx[i]);
			tx_done = true;
		} else if (!tx_done) {
			for (i = 0; i < lc->n_tx; i++)
				tx_port_requests(lc->tx[i]);
			now = rte_rdtsc();
			for (i = 0; i < lc->n_tx; i++)
				tx_port_poll(lc->tx[i], now);
			lc->rx_queued = false;
			if (st == PCR_STOP_RX && all_rx_stopped()) {
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
	rte_rcu_qsbr_thread_offline(pcr_app.qsbr, lc->lcore_id);
	rte_rcu_qsbr_thread_unregister(pcr_app.qsbr, lc->lcore_id);
	__atomic_store_n(&lc->running, false, __ATOMIC_RELEASE);
	return 0;
}
