/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#ifndef PCR_DATAPLANE_H
#define PCR_DATAPLANE_H

/**
 * @file
 * The datapath's contract: the per-flow, per-port and per-lcore state the
 * worker lcores (dataplane.c) run on, and the context they are handed
 * (struct pcr_dp). dataplane.c includes this, not pacer.h: it never sees
 * the pcr_app global (PCR_DATAPATH).
 *
 * Data path (see docs/design.md):
 *   RX lcore: rx_burst -> parse -> flow lookup -> policies (flow, class,
 *             port aggregate) -> departure time -> wheel of the egress port
 *   TX lcore: wheel dequeue (what is due) -> tx_burst, retrying a partial
 *             burst, dropping only after --tx-hold without progress
 * Every counter has one writer (the lcore that owns it); the control lcore
 * reads a consistent set of them by pausing the workers for a moment at a
 * point between bursts (pcr_stats_snapshot()).
 */

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_ethdev.h>
#include <rte_hash.h>
#include <rte_mbuf.h>
#include <rte_pause.h>
#include <rte_rcu_qsbr.h>

#include "config.h"
#include "pcr_classify.h"
#include "pcr_codel.h"
#include "pcr_hist.h"
#include "pcr_lead.h"
#include "pcr_match.h"
#include "pcr_policy.h"
#include "pcr_rank.h"
#include "pcr_stamp.h"
#include "pcr_wheel.h"
#include "tree.h"

#define PCR_RX_BURST 32
#define PCR_TX_BURST 32
/* A worker's loop pass longer than this is a stall (pcr_lcore.stall_tsc):
 * normal passes take tens of microseconds, a full burst at a slow PMD a few
 * hundred; longer, the lcore was kept from its CPU (preempted, throttled,
 * interrupts) or stuck in a PMD's system call */
#define PCR_STALL_US 1000
/* The longest a worker waits, at a snapshot's handshake, for the control
 * lcore to claim it (pcr_stats_snapshot()): a snapshot normally takes a few
 * microseconds; a control lcore kept from its CPU (one it shares with a
 * busy-polling RX lcore: two scheduler slices, 7-11 ms measured) must not
 * hold the departures that long. The worker goes on and that try fails. */
#define PCR_SYNC_PARK_US 200
/* a request's number is a multiple of PCR_SYNC_STEP; a worker's sync_ack
 * adds what became of it */
#define PCR_SYNC_STEP 4u
#define PCR_SYNC_LEFT 1u
#define PCR_SYNC_CLAIMED 2u
/* claimed, then left before the release: the control lcore kept from its
 * CPU while it read (the worker waited PCR_SYNC_PARK_US once claimed
 * too); what it read is void and it tries again */
#define PCR_SYNC_ABANDONED 3u
/* bursts one TX pass may send per port while they come out full */
#ifndef PCR_TX_CATCHUP
#define PCR_TX_CATCHUP 8
#endif
#define PCR_MAX_RXQ 16      /**< RX queues one lcore polls (<= 32: rx_busy) */
/* smallest RX burst a lcore that also transmits asks for when a departure
 * is near (see rx_burst_size() in dataplane.c) */
#ifndef PCR_RX_BURST_MIN
#define PCR_RX_BURST_MIN 4
#endif

/*
 * What a flow has queued (in the wheel or TX pending), packets and bytes
 * in one 64-bit word so that one atomic add or subtract keeps both: the
 * low 27 bits count packets (the pool holds at most 2^26 mbufs), the high
 * 37 bits bytes (at most 2^26 mbufs x 2048 bytes).
 */
#define PCR_Q_PKT_BITS 27

static inline uint64_t
pcr_q(uint32_t bytes)
{
	return ((uint64_t)bytes << PCR_Q_PKT_BITS) | 1;
}

static inline uint64_t
pcr_q_pkts(uint64_t q)
{
	return q & ((1ull << PCR_Q_PKT_BITS) - 1);
}

static inline uint64_t
pcr_q_bytes(uint64_t q)
{
	return q >> PCR_Q_PKT_BITS;
}

/*
 * Coarse time for the flow entry, which must stay one cache line: TSC
 * cycles >> PCR_COARSE_SHIFT in 32 bits (0.4 us at 2.6 GHz; wraps after
 * 2^42 cycles, 28 minutes, and differences are taken modulo 2^32).
 */
#define PCR_COARSE_SHIFT 10

static inline uint32_t
pcr_coarse(uint64_t tsc)
{
	return (uint32_t)(tsc >> PCR_COARSE_SHIFT);
}

/* Coarser still, for a flow's transmit lifetime (its rate in show flows):
 * 2^20 cycles (0.4 ms at 2.6 GHz), wrapping after 20 days. */
#define PCR_SPAN_SHIFT 20

static inline uint32_t
pcr_span(uint64_t tsc)
{
	return (uint32_t)(tsc >> PCR_SPAN_SHIFT);
}

/** Flow state: one rte_hash entry's data, owned by one RX lcore. */
struct pcr_flow {
	struct pcr_stamp_flow pol; /**< its token bucket and last departure,
				    *   fine time (RX lcore) */
	uint32_t last_seen;  /**< last arrival, pcr_coarse() (RX lcore) */
	uint32_t first_tx;   /**< first transmit, pcr_span() (TX lcore) */
	uint32_t last_tx;    /**< last transmit, pcr_span() (TX lcore) */
	uint32_t leaf;       /**< its subscriber (src/tree.h), found when
			      *   the flow is new: PCR_TREE_NONE in none */
	uint64_t queued;     /**< pcr_q() sums (dataplane.c: flow_q_add(), _sub()) */
	/* written by the TX lcore of the egress port */
	uint64_t tx_packets;
	uint64_t tx_bytes;
	uint16_t class_id;
	uint16_t egress;
	uint16_t class_gen;  /**< class table generation class_id is from */
	bool in_use;         /**< a table entry (not an overflow one) */
	uint8_t txq;         /**< the egress port's TX queue it leaves by,
			      *   fixed for its life (its order holds) */
} __rte_cache_aligned;

_Static_assert(sizeof(struct pcr_flow) == RTE_CACHE_LINE_SIZE,
	       "a flow entry is one cache line (1M flows: 64 MiB)");

/**
 * The class rules as the RX lcores match them: published by pointer,
 * replaced whole by `add class` / `del class` and reclaimed with
 * rte_rcu_qsbr. A flow whose class_gen differs from gen is matched again
 * on its next packet.
 */
struct pcr_classtab {
	uint16_t gen;
	unsigned int n;                      /**< indexes used */
	unsigned int n_order;                /**< live classes but default */
	uint8_t order[PCR_MAX_CLASSES];      /**< their ids, in match order */
	bool live[PCR_MAX_CLASSES];          /**< not deleted */
	struct pcr_match match[PCR_MAX_CLASSES];
};

/* pcr_rates.aqm_mode: what a signal does to a packet */
#define PCR_AQM_DROP 1  /**< drop it */
#define PCR_AQM_ECN 2   /**< mark it CE if ECN-capable, else drop it */

/**
 * The rates of one egress port, turned into TSC terms. Read-only once
 * published; replaced whole (pcr_rates_publish()) when a rate or the
 * measured TSC frequency changes, and reclaimed with rte_rcu_qsbr once
 * every worker has passed a quiescent point.
 */
struct pcr_rates {
	uint64_t tsc_hz;       /**< the frequency they were derived with */
	struct pcr_rate agg;
	struct pcr_rate cls[PCR_MAX_CLASSES];
	struct pcr_rate cls_flow[PCR_MAX_CLASSES];
	uint8_t order[PCR_MAX_CLASSES]; /**< enum pcr_order */
	/** bytes added to each frame when charging a rate (--wire-overhead)
	 *  and the most packets a flow may have queued (--flow-limit, 0 =
	 *  none): published here with the rates, so that everything the fast
	 *  path reads that a command can change comes one way (RCU) */
	uint32_t wire_overhead;
	uint64_t flow_limit;
	/** the timestamper refuses what would leave later than now + this
	 *  (--horizon, in the TSC cycles of tsc_hz): drops it, or with
	 *  horizon_cap (--horizon-policy cap) sends it then without charging
	 *  the shared policies. With drop the wheel's own limit is
	 *  PCR_HORIZON_MARGIN_NS further, so the wheel takes what the
	 *  timestamper lets through even when its consumer runs behind */
	uint64_t horizon_tsc;
	uint8_t horizon_cap;
	/** the most bytes one flow of the class may have queued for the
	 *  port: --flow-queue at the tightest of the flow's, the class's
	 *  and the port's rates; 0 = no bound */
	uint64_t flow_qbytes[PCR_MAX_CLASSES];
	/** AQM by class (PCR_AQM_*: 0 off), CoDel's terms in TSC cycles
	 *  (dataplane.c, "AQM"); aqm_any: some class has it on */
	uint8_t aqm_mode[PCR_MAX_CLASSES];
	bool aqm_any;
	struct pcr_codel_params aqm[PCR_MAX_CLASSES];
	/** --max-late in TSC cycles (0 = off): while the port's TX lcore is
	 *  further behind its departures than this (pcr_port.tx_behind_tsc),
	 *  the RX lcores refuse what would leave more than this late */
	uint64_t max_late_tsc;
	/** how late, for how long, a TX lcore must send to be behind:
	 *  max_late_tsc, or PCR_BEHIND_WARN_US without --max-late */
	uint64_t behind_bound_tsc;
	/** the unit tx_behind_tsc is published in: PCR_BEHIND_QUANTUM, or
	 *  for a bound under 4 of those the power of two at most a quarter
	 *  of it (one unit, the least a TX lcore that is behind publishes,
	 *  must stay below the half of --max-late the RX lcores refuse at) */
	uint64_t behind_quantum_tsc;
	/* the shared policies' calendars (lib/policy/pcr_cal.h), one per
	 * finite rate, published with the rates they are sized for: a set
	 * keeps the previous set's calendar where it still suits the rate
	 * (pcr_cal_suits()), or gets a new one seeded from it; one no set
	 * uses any more is freed with the set (pcr_rates_build() leaves these
	 * NULL: they come from pcr_rates_publish()) */
	struct pcr_cal *agg_cal;
	struct pcr_cal *cls_cal[PCR_MAX_CLASSES];
	/** the incarnation (pcr_class_conf.gen) each class calendar is for:
	 *  a slot taken by a new class gets a new calendar */
	uint32_t cls_gen[PCR_MAX_CLASSES];
	/** the port's subscriber tree (src/tree.h; NULL: none), and its
	 *  nodes' max rates in these terms (tree_burst the credit they were
	 *  made with): the array a set shares with the previous one while
	 *  the terms hold (pcr_tree_rates()) */
	const struct pcr_tree *tree;
	const struct pcr_rate *tree_rate;
	uint64_t tree_burst;
};

/** Counters of one port kept by one lcore (single writer). */
struct pcr_lstats {
	/* RX side, for the ingress port */
	uint64_t rx_packets;
	uint64_t rx_bytes;
	uint64_t classify[PCR_CLASSIFY_RESULT_MAX];
	/* RX side, for the egress port */
	uint64_t drop_flow_limit;
	uint64_t drop_flow_queue; /**< the flow held --flow-queue already */
	uint64_t drop_horizon;   /**< beyond the horizon at the timestamper */
	uint64_t held_for_order; /**< flows matched to another class while
				  *   their last departure was still ahead:
				  *   their next one is held back to it */
	uint64_t drop_inbox;     /**< wheel inbox full */
	uint64_t drop_late;      /**< refused: the TX side was behind by more
				  *   than --max-late */
	uint64_t flows_new;
	uint64_t flows_aged;
	uint64_t flow_table_full;
	uint64_t flow_cache_hits; /**< found in the flow cache */
	/* per-flow staging (dataplane.c), for the egress port */
	uint64_t staged;         /**< packets held in staging now */
	uint64_t staged_total;   /**< packets that went through staging */
	uint64_t stage_stalls;   /**< passes that found staging unserved
				  *   for longer than the lead */
	uint64_t stage_stall_tsc; /**< the time beyond the lead they found */
	uint64_t stage_lead_tsc; /**< the lead now (a gauge) */
	uint64_t order_guard;    /**< held flows the starvation guard moved
				  *   ahead of every rank (completion order) */
	uint64_t drop_shutdown;  /**< staged, dropped at shutdown */
	/* busy cycles (TSC) of the RX role: bursts received on this port
	 * (from the PMD's receive to the wheel's inbox), and staging passes
	 * that stamped held packets for it as the egress port */
	uint64_t rx_cycles;
	uint64_t stage_cycles;
	/* AQM (dataplane.c, "AQM"), for the egress port: CoDel's signals,
	 * as CE marks and as drops (drop_aqm); ECT(1) packets marked over
	 * ce-threshold; the same by class; the delay each packet was
	 * stamped with (departure less arrival, TSC cycles) */
	uint64_t aqm_marked;
	uint64_t aqm_ce_marked;
	uint64_t drop_aqm;
	uint64_t cls_aqm_marked[PCR_MAX_CLASSES];
	uint64_t cls_drop_aqm[PCR_MAX_CLASSES];
	struct pcr_hist qdelay;
} __rte_cache_aligned;

/** Per egress port, per class counters: sent (TX lcore), and what its
 *  AQM did (RX lcores). Every field a uint64_t counter (stats.c sums and
 *  bases them as such). */
struct pcr_class_stats {
	uint64_t tx_packets;
	uint64_t tx_bytes;
	uint64_t aqm_marked;
	uint64_t drop_aqm;
};

/** A subscriber tree node's counters on one TX queue (TX lcore). */
struct pcr_node_stats {
	uint64_t tx_packets;
	uint64_t tx_bytes;
};

/** One flow's AQM (RX lcore that owns the flow). */
struct pcr_flow_aqm {
	struct pcr_codel codel;
	uint64_t last_dep_tsc;   /**< its latest departure: a packet that
				  *   arrives after it found the queue empty */
	uint32_t marked;         /**< packets marked CE (CoDel's and the
				  *   ce-threshold's) */
	uint32_t dropped;        /**< packets dropped by CoDel */
};

struct pcr_dp;

/** What a TX lcore keeps per egress port. */
struct pcr_txport {
	const struct pcr_dp *dp; /**< the datapath's context */
	uint16_t port;
	uint16_t queue;
	struct pcr_wheel *wheel;
	uint64_t gran_tsc;
	uint64_t hold_tsc;
	/* pending: dequeued, not yet accepted by the PMD */
	struct rte_mbuf *pend[PCR_TX_BURST];
	uint64_t pend_dep[PCR_TX_BURST];
	uint32_t pend_len[PCR_TX_BURST];
	struct pcr_flow *pend_flow[PCR_TX_BURST];
	bool pend_offl[PCR_TX_BURST]; /**< stamped for the NIC to hold */
	unsigned int n_pend;
	uint64_t stuck_since;    /**< TSC of the last progress while pending */
	/* test hook PACER_TEST_WHEEL_HOLD_MS (0: off; see main.c) */
	uint64_t test_hold_tsc;  /**< hold the wheel's clock this long */
	uint64_t test_hold_until;
	uint64_t test_hold_at;   /**< the clock it is held at */
	/* counters (single writer: the TX lcore) */
	uint64_t tx_packets;
	uint64_t tx_bytes;
	uint64_t tx_retry;
	uint64_t tx_drop;
	uint64_t tx_late;        /**< sent more than two slots late */
	uint64_t tx_early;       /**< sent before departure: must stay 0 */
	uint64_t tx_offloaded;   /**< handed to the NIC to send at its time */
	uint64_t tx_cycles;      /**< TSC in polls that sent packets */
	uint64_t drop_late;      /**< more than --max-late late at dequeue */
	uint64_t behind;         /**< what it last stored in its port's
				  *   tx_behind_tsc */
	uint64_t behind_since;   /**< crossing into or out of behind since
				  *   (0: not; dataplane.c, tx_behind()) */
	bool behind_on;          /**< behind (dataplane.c, tx_behind()) */
	uint64_t drop_wheel[PCR_WHEEL_DROP_MAX];
	uint64_t drop_shutdown;
	uint64_t drop_link;      /**< due while the link was down */
	struct pcr_class_stats cls[PCR_MAX_CLASSES];
	/** the port's subscriber tree (NULL: none) and what this queue
	 *  sent by node, [tree->n_nodes]: a packet counts at its leaf and
	 *  every node above it */
	const struct pcr_tree *tree;
	struct pcr_node_stats *node;
	struct pcr_hist err;     /**< departure error, TSC cycles */
	/* send-on-timestamp: 0 = pacing in software */
	uint64_t offload_tsc;    /**< hand over this many cycles early */
	int ts_field;            /**< Tx timestamp dynfield offset */
	uint64_t ts_flag;        /**< its dynflag */
	/* the egress link is down: what is due is dropped, counted drop_link
	 * (as Linux drops at a qdisc whose carrier is off); atomic, set by the
	 * control lcore from rte_eth_link_get_nowait() */
	uint8_t link_down;
	/* `set horizon`: applied by the TX lcore (the wheel's consumer) */
	uint32_t horizon_req;    /**< bumped by the control lcore, atomic */
	uint32_t horizon_done;   /**< set to horizon_req by the TX lcore */
	uint64_t horizon_ns;
	enum pcr_wheel_horizon_policy horizon_policy;
	int horizon_rc;
} __rte_cache_aligned;

/** Per port, set up at start and then read-only except the policies. */
struct pcr_port {
	uint16_t id;
	uint16_t peer;           /**< egress port for what arrives here */
	uint16_t nb_rxq;
	bool started;
	char name[RTE_ETH_NAME_MAX_LEN];
	bool tx_offload;         /**< send-on-timestamp enabled */
	bool tx_offload_capa;    /**< the PMD offers it */
	bool nic_clock;          /**< rte_eth_read_clock() works: fitted */
	bool link_up;            /**< last status seen (control lcore) */
	uint64_t link_changes;   /**< up/down transitions seen while running */
	/** this port as an egress: a TX queue each, with its own wheel, a
	 *  flow's packets all by one (pcr_flow.txq) */
	struct pcr_txport *txq[PCR_MAX_TXQ];
	uint16_t n_txq;
	struct pcr_rates *rates; /**< RCU: __atomic_load_n(ACQUIRE) */
	/** how late its TX lcore sends what is due (its last burst's first
	 *  packet) while it is behind (dataplane.c, tx_behind()), in TSC
	 *  cycles rounded down to pcr_rates.behind_quantum_tsc; 0 otherwise. Written by
	 *  the TX lcore only when that changes (its own line, read by the RX
	 *  lcores each burst and by the control lcore); a word a TX queue */
	uint64_t tx_behind_tsc[PCR_MAX_TXQ] __rte_cache_aligned;
} __rte_cache_aligned;

/** Each TX queue of port @p pt (struct pcr_port *): @p q its index, @p tp
 *  its struct pcr_txport *. */
#define PCR_TXQ_FOREACH(pt, q, tp) \
	for ((q) = 0; (q) < (pt)->n_txq && ((tp) = (pt)->txq[(q)], 1); (q)++)

/** tx_behind_tsc's largest unit, TSC cycles (2^16: 25 us at 2.6 GHz):
 *  lateness below it reads 0, so a TX lcore that keeps up never writes
 *  the line (a --max-late under 4 units takes a smaller one). */
#define PCR_BEHIND_QUANTUM (UINT64_C(1) << 16)
/** With --max-late 0: how late, for how long, a TX lcore must send before
 *  it is behind and the control lcore says so. */
#define PCR_BEHIND_WARN_US 10000

struct pcr_rxq {
	uint16_t port;
	uint16_t queue;
	uint16_t egress;
};

/*
 * Per-flow staging (dataplane.c, "Per-flow staging"): under a backlog, a
 * flow's packets wait here, in the RX lcore that owns the flow, and are
 * stamped a lead before they can leave, round robin among the flows.
 * Everything here belongs to that lcore, the published rank aside.
 */
#define PCR_STAGE_NONE UINT32_MAX
/** Bytes a staged flow stamps per turn: one 1500-byte MTU frame with its
 *  Ethernet header (fq's default is two): with full-size frames the turns
 *  are frame by frame, the round robin the isolation tests compare with,
 *  and a short flow waits one frame per other flow, not two. */
#define PCR_STAGE_QUANTUM 1514

/** A transaction ends after this long without an arrival of its flow
 *  (completion order learns sizes from the transactions that end). */
#define PCR_TXN_IDLE_US 1000

/** A flow's staging queue: its mbufs linked through the departure
 *  dynfield (unused until the packet is stamped); and, in a class of
 *  completion order, its current transaction. */
struct pcr_stage_flow {
	struct rte_mbuf *head, *tail;
	uint32_t next;     /**< next flow of its level (pcr_rank_links) */
	uint32_t prev;     /**< previous one */
	uint32_t lru_next, lru_prev; /**< its class's flows by last stamp
				      *   (completion order: the guard) */
	int32_t deficit;   /**< bytes it may still stamp this turn; a
			    *   subscriber's flow: its tag (dataplane.c,
			    *   "Subscriber shares") */
	uint16_t cls;      /**< the class it is held in */
	uint8_t level;     /**< its level there (lib/policy/pcr_rank.h) */
	uint8_t boost;     /**< frames the starvation guard still gives it
			     *   (fair order: 1 while a sparse flow's first
			     *   packet waits ahead of the round) */
	bool txn_queued;   /**< on the lcore's txn_q */
	bool on_lru;       /**< on its class's lru list */
	uint32_t served;   /**< last stamped, or held since, pcr_coarse() */
	uint32_t txn_last; /**< its last arrival, pcr_coarse() */
	uint64_t txn_bytes; /**< wire bytes stamped in its transaction */
} __rte_aligned(64);
_Static_assert(sizeof(struct pcr_stage_flow) == 64,
	       "a staging entry is one cache line (1M flows: 64 MiB)");

/** The flows of one class staged for one egress port, by level (fair
 *  order: all at PCR_RANK_LAST, in round order). */
struct pcr_stage_class {
	uint64_t bytes;      /**< wire bytes staged */
	uint64_t skip;       /**< levels whose flows all wait on their own
			      *   rate, this pass (pass) */
	uint32_t pass;
	uint64_t guard_tsc;  /**< the starvation guard's next look */
	uint32_t lru_head, lru_tail; /**< completion order: held flows, the
				      *   longest unstamped first */
	struct pcr_rank_set set;
};

/** What one RX lcore holds under one node of a subscriber tree
 *  (dataplane.c, "Subscriber shares"). */
struct pcr_tree_held {
	uint32_t n;      /**< a leaf: its held flows; an interior node: its
			  *   children holding any */
	uint32_t pass;   /**< the last staging pass that looked at a
			  *   branch under it that could go */
	uint64_t wsum;   /**< an interior node: those children's weights */
	uint64_t vt;     /**< its children's virtual time (a leaf: its
			  *   flows', in bytes) */
	uint64_t tag;    /**< its own tag at its parent */
	uint32_t full;   /**< the last pass that found its calendar full:
			  *   its children's shares count while it is */
};

/** One egress port's staging on one RX lcore. */
struct pcr_stage_port {
	uint64_t active;     /**< bit per class with staged flows */
	unsigned int next_cls; /**< the class whose turn is next */
	uint32_t flows;      /**< flows staged */
	uint64_t bytes;      /**< wire bytes staged */
	uint64_t vt;         /**< virtual time: bytes stamped per staged flow,
			      *   x 256 (the rank other lcores compare) */
	uint64_t last_tsc;   /**< last pass (staging non-empty) */
	struct pcr_lead lead; /**< the lead, from the gaps between passes */
	uint32_t pass;       /**< passes, for pcr_stage_class.skip */
	uint32_t turn;       /**< bytes stamped in this class's turn */
	/** the port's subscriber tree (NULL: none) and what this lcore
	 *  holds of it (dataplane.c, "Subscriber shares"): per node, held
	 *  flows (a leaf) or held children (an interior node) and their
	 *  weights; the top level's weights; the tree's held flows */
	const struct pcr_tree *tree;
	struct pcr_tree_held *held;
	uint64_t tree_wsum;
	uint64_t tree_vt;    /**< the top level's virtual time */
	uint32_t tree_pass;  /**< the same, for the top level */
	uint32_t tree_full;  /**< the last pass the class or port was full */
	uint32_t tree_flows;
	struct pcr_stage_class cls[PCR_MAX_CLASSES];
};

/** What a RX lcore publishes about one egress port's staging, for the
 *  other RX lcores (atomic words; written by the owner only). */
struct pcr_stage_pub {
	uint64_t vt;  /**< its virtual time; UINT64_MAX: not competing */
	uint64_t tsc; /**< when it last published */
	uint32_t level; /**< its best held flow's level (completion order's
			 *   rank; fair order's flows are all at the last) */
};

struct pcr_flow_cache_ent;

/** Flow table of one RX lcore. */
struct pcr_flowtab {
	struct rte_hash *h;
	/** in front of h: a key and its position at its signature's slot,
	 *  PCR_FLOW_CACHE slots (dataplane.c, flow_lookup_burst()) */
	struct pcr_flow_cache_ent *cache;
	/** AQM state per flow: [entries] for flows[], then one per
	 *  overflow, as stage (dataplane.c, "AQM") */
	struct pcr_flow_aqm *aqm;
	uint32_t cache_fills;    /**< table hits that missed the cache */
	uint32_t cache_looks;    /**< lookups in the current window */
	uint32_t cache_hits;     /**< of those, found in the cache */
	uint32_t cache_off;      /**< packets left to look up without it */
	struct pcr_flow *flows;  /**< indexed by rte_hash key position */
	struct pcr_flow overflow[PCR_MAX_CLASSES]; /**< table full */
	/** staging, per flow: [entries] for flows[], then one per overflow */
	struct pcr_stage_flow *stage;
	uint32_t entries;
	uint32_t iter;           /**< ageing position */
	uint32_t age_batch;      /**< entries looked at per ageing pass */
	uint64_t next_age_tsc;
	struct pcr_stage_port *sport; /**< [n_sport], by egress port */
	uint16_t n_sport;
	/** completed transactions, by class (this lcore writes, the
	 *  control lcore reads: pcr_rank_poll()) */
	struct pcr_rank_hist *hist; /**< [PCR_MAX_CLASSES] */
	/** flows of completion order with nothing held, oldest first, whose
	 *  transaction ends once they are idle (txn_poll()); a ring of
	 *  entries + PCR_MAX_CLASSES, each flow on it once at most */
	uint32_t *txn_q;
	uint32_t txn_head, txn_n;
};

enum pcr_role { PCR_ROLE_NONE = 0, PCR_ROLE_RX = 1, PCR_ROLE_TX = 2 };

struct pcr_lcore {
	const struct pcr_dp *dp; /**< the datapath's context */
	unsigned int lcore_id;
	unsigned int roles;
	struct pcr_rxq rxq[PCR_MAX_RXQ];
	unsigned int n_rxq;
	struct pcr_txport *tx[PCR_MAX_PORTS * PCR_MAX_TXQ]; /**< the TX queues it serves */
	unsigned int n_tx;
	struct pcr_flowtab *ft;
	struct pcr_lstats *st;   /**< [n_ports] */
	/* RX cost per packet, TSC x 16, a moving average (RX+TX lcores) */
	uint64_t rx_cost16;
	bool rx_queued;          /**< RX queued packets since TX last ran */
	uint32_t rx_busy;        /**< bit per rxq[]: its last poll had packets */
	/* staging: the other RX lcores (their published ranks) */
	struct pcr_lcore *peers[RTE_MAX_LCORE];
	unsigned int n_peers;
	uint32_t staged_ports;   /**< bit per egress port it holds packets for */
	/* read by the other RX lcores: one line per port's word pair */
	struct pcr_stage_pub pub[PCR_MAX_PORTS] __rte_cache_aligned;
	/* control handshake (pcr_stats_snapshot()): the last request seen;
	 * that request's number, PCR_SYNC_LEFT or PCR_SYNC_CLAIMED added once
	 * it left unclaimed or the control lcore claimed it */
	uint32_t sync_seen;
	uint32_t sync_ack;
	/* its time parked at handshakes (TSC cycles): in all, the longest */
	uint64_t park_tsc;
	uint64_t park_max_tsc;
	bool sync_yield;         /**< shares a CPU with the main lcore */
	bool running;
	bool rx_stopped;
	bool tx_done;
	/** its thread's id (from its start; 0 before), for the kernel's
	 *  accounting of it (run_delay_ns) */
	int tid;
	/* its loop's stalls (passes longer than PCR_STALL_US): how many and
	 * their TSC cycles in all; written by it, read by snapshots */
	uint64_t pass_tsc;       /**< when its current pass started */
	uint64_t stalls;
	uint64_t stall_tsc;
} __rte_cache_aligned;
_Static_assert(PCR_MAX_RXQ <= 32, "pcr_lcore.rx_busy has a bit per RX queue");

enum pcr_state {
	PCR_RUN = 0,
	PCR_STOP_RX,     /**< no more RX; TX drains on time */
	PCR_STOP_DROP,   /**< no more RX; TX drops what is queued */
	PCR_STOP,        /**< everyone out */
};

/**
 * The datapath's context: everything the workers read of the appliance
 * besides their own pcr_lcore and the ports' shared parts, handed to each
 * as pcr_lcore.dp and pcr_txport.dp (dataplane.c reads no global).
 * Filled in before the workers launch (pcr_dp_bind() for the views of
 * pcr_app); after that the fields above "live" are fixed and those below
 * it change only the way each says.
 */
struct pcr_dp {
	struct pcr_port *ports;    /**< [n_ports]: pcr_app.ports */
	struct pcr_lcore *const *lcores; /**< [RTE_MAX_LCORE]: pcr_app.lcores */
	uint16_t n_ports;
	unsigned int n_workers;
	int flow_dynfield;         /**< the mbuf's pcr_flow pointer */
	int dep_dynfield;          /**< the mbuf's departure (lib/wheel) */
	int arr_dynfield;          /**< a staged mbuf's arrival, TSC (AQM) */
	uint64_t epoch_tsc;        /**< pcr_fine() time 0 */
	uint64_t flow_idle_ms;     /**< --flow-idle */
	uint64_t stage_lead_tsc; /**< --stage-lead in TSC cycles, 0 = off */
	uint64_t stall_tsc;      /**< PCR_STALL_US in TSC cycles */
	uint64_t sync_park_tsc;  /**< PCR_SYNC_PARK_US in TSC cycles */
	uint64_t guard_tsc;      /**< --order-guard in TSC cycles, 0 = off */
	uint32_t txn_idle_coarse; /**< PCR_TXN_IDLE_US, pcr_coarse() units */
	uint8_t guard_frames;    /**< --order-guard-frames */
	struct rte_rcu_qsbr *qsbr; /**< workers report quiescent per loop */
	/* live */
	struct pcr_classtab *classtab; /**< RCU: __atomic_load_n(ACQUIRE) */
	/** completion order's levels by class, rebuilt by pcr_rank_poll()
	 *  byte by byte (relaxed: a rank read half old is harmless) */
	struct pcr_rank_table rank[PCR_MAX_CLASSES];
	bool forwarding;         /**< RX lcores poll (start/stop), atomic */
	uint32_t state;          /**< enum pcr_state, atomic */
	uint32_t sync_req;       /**< snapshot handshake (control writes): */
	uint32_t sync_rel;       /**< requests go by PCR_SYNC_STEP */
};

/** Waiting at the snapshot handshake, either side: spin, and with @p yield
 *  (the other side may be on this CPU: pcr_lcore.sync_yield, and the
 *  control thread's own test) yield now and then, so that it gets the CPU
 *  (where nothing else wants it the yield returns at once). Never yield
 *  otherwise: to a busy thread of any other kind the CPU goes for a
 *  scheduler slice. */
static inline void
pcr_sync_wait(unsigned int *spins, bool yield)
{
	if (yield && ++*spins % 64 == 0)
		sched_yield();
	else
		rte_pause();
}

/* dataplane.c */
int pcr_worker_main(void *arg);
void pcr_wheel_drop_cb(struct rte_mbuf *m, enum pcr_wheel_drop_reason r,
		       void *arg);
int pcr_flowtab_create(struct pcr_lcore *lc, uint64_t entries);
void pcr_flowtab_free(struct pcr_flowtab *ft);

#endif /* PCR_DATAPLANE_H */
