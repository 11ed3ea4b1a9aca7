/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#ifndef PACER_H
#define PACER_H

/**
 * @file
 * The pacer appliance: configuration, per-port and per-lcore state.
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

#include <limits.h>
#include <sched.h>
#include <sys/types.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_ethdev.h>
#include <rte_hash.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_pause.h>
#include <rte_mempool.h>
#include <rte_rcu_qsbr.h>

#include "pcr_classify.h"
#include "pcr_codel.h"
#include "pcr_lead.h"
#include "pcr_rank.h"
#include "pcr_clock.h"
#include "pcr_hist.h"
#include "pcr_match.h"
#include "pcr_policy.h"
#include "pcr_stamp.h"
#include "pcr_wheel.h"

#define PCR_MAX_PORTS 32
#define PCR_MAX_CLASSES 64  /**< including the implicit "default" class */
#define PCR_CLASS_NAMELEN 32
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
/* tries of one snapshot before it reads the counters as they run (not
 * consistent); each failed one held a worker PCR_SYNC_PARK_US at most */
#define PCR_SYNC_TRIES 8
/* bursts one TX pass may send per port while they come out full */
#ifndef PCR_TX_CATCHUP
#define PCR_TX_CATCHUP 8
#endif
#define PCR_MAX_RXQ 16      /**< RX queues one lcore polls (<= 32: rx_busy) */
#define PCR_MAX_TXQ 8       /**< TX queues (each with its wheel) a port */
/* smallest RX burst a lcore that also transmits asks for when a departure
 * is near (see rx_burst_size() in dataplane.c) */
#ifndef PCR_RX_BURST_MIN
#define PCR_RX_BURST_MIN 4
#endif

/* Log types: pacer.main (start-up, shutdown, run-time events), pacer.ctl
 * (what the CLI and telemetry change; INFO, shown with
 * --log-level=pacer.ctl:info), pacer.clock (lib/clock). */
extern int pcr_logtype;
extern int pcr_logtype_ctl;
#define PCR_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, pcr_logtype, "pacer: " fmt "\n", ##__VA_ARGS__)
#define PCR_CTL_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, pcr_logtype_ctl, "pacer.ctl: " fmt "\n", \
		##__VA_ARGS__)

/** Exit status for bad input (options, configuration): nothing started. */
#define PCR_EXIT_USAGE 2

/* ------------------------------------------------------------------ */
/* Configuration                                                       */

/** Which held flow of a class is stamped next (dataplane.c, "Per-flow
 *  staging"; lib/policy/pcr_rank.h). */
enum pcr_order {
	PCR_ORDER_FAIR = 0,       /**< round robin by bytes (fq) */
	PCR_ORDER_COMPLETION = 1, /**< the transaction likeliest to finish
				   *   first (Gittins index of its bytes) */
};

/** "fair", "completion". */
const char *pcr_order_name(enum pcr_order o);
/** Parse @p s into @p o; -1 if it is neither name. */
int pcr_order_parse(const char *s, enum pcr_order *o);


/**
 * Active queue management (CoDel on the departure time: lib/aqm,
 * dataplane.c "AQM"): a setting of the default ([pacer]: aqm, aqm-target,
 * aqm-interval, ecn, ce-threshold) or of a class, which takes the
 * default's for what it does not set (pcr_class_conf.aqm_set).
 */
struct pcr_aqm_conf {
	bool on;                 /**< codel (else off: drop-tail) */
	bool ecn;                /**< mark ECN-capable packets CE, not drop */
	uint64_t target_us;      /**< acceptable standing queue [5000] */
	uint64_t interval_us;    /**< longer than a round trip [100000] */
	uint64_t ce_threshold_us; /**< above it, ECT(1) is marked CE; 0 off */
};
/* pcr_rates.aqm_mode: what a signal does to a packet */
#define PCR_AQM_DROP 1  /**< drop it */
#define PCR_AQM_ECN 2   /**< mark it CE if ECN-capable, else drop it */
/* which of a class's AQM settings it sets itself */
#define PCR_AQM_SET_ON 1u
#define PCR_AQM_SET_ECN 2u
#define PCR_AQM_SET_TARGET 4u
#define PCR_AQM_SET_INTERVAL 8u
#define PCR_AQM_SET_CE 16u

struct pcr_class_conf {
	char name[PCR_CLASS_NAMELEN];
	bool deleted;           /**< `del class` at run time: slot free */
	/** where its rule is matched: classes are matched in ascending seq
	 *  (the file's order; `add class` after the others), whatever their
	 *  index (a class's id, from a free slot: pcr_class_slot()) */
	uint32_t seq;
	/** when it was deleted (pcr_config.class_clock): the slot deleted
	 *  longest ago is taken first */
	uint32_t deleted_at;
	/** the slot's incarnation: a new class in a slot that held another
	 *  gets fresh calendars, counters and completion-order learning */
	uint32_t gen;
	struct pcr_match match;
	char match_str[256];
	uint64_t rate_bps;      /**< class aggregate; 0 = unlimited */
	uint64_t flow_rate_bps; /**< per flow in the class */
	bool flow_rate_set;     /**< else the global --flow-rate */
	enum pcr_order order;   /**< among its held flows [fair] */
	struct pcr_aqm_conf aqm; /**< its AQM settings, where aqm_set says */
	uint8_t aqm_set;        /**< PCR_AQM_SET_* bits */
};

struct pcr_config {
	char config_file[PATH_MAX];
	uint64_t rate_bps;       /**< aggregate per egress port, 0 = none */
	uint64_t flow_rate_bps;  /**< default per-flow rate, 0 = none */
	uint64_t burst;          /**< bytes of credit */
	uint64_t wire_overhead;  /**< bytes added per packet */
	uint64_t slot_ns;
	uint64_t horizon_ms;
	enum pcr_wheel_horizon_policy horizon_policy;
	uint64_t flow_limit;     /**< packets queued per flow, 0 = none */
	uint64_t flow_queue_ms;  /**< time of queue per flow at its tightest
				  *   rate, 0 = none (the horizon bounds it) */
	struct pcr_aqm_conf aqm; /**< the default AQM settings */
	uint64_t max_late_us;    /**< refuse at RX while the TX side is
				  *   this far behind, 0 = never */
	uint64_t mbufs;          /**< pool size, 0 = derived */
	uint64_t tx_queues;      /**< TX queues (wheels, TX lcores' shares)
				  *   a port */
	uint64_t exit_on_idle_ms; /**< 0 = run until a signal */
	char stats_json[PATH_MAX];
	uint64_t stats_period_s;
	bool drain_on_exit;
	uint64_t tx_hold_ms;     /**< drop pending TX after this long stuck */
	uint64_t max_flows;      /**< flow table entries per RX lcore */
	uint64_t flow_idle_ms;   /**< idle flows older than this are aged */
	uint64_t rxd, txd;       /**< descriptors per queue */
	uint64_t tsc_calib_ms;   /**< TSC measurement window at start */
	bool tsc_measure;        /**< pace with the measured frequency */
	uint64_t clock_period_ms; /**< TSC re-measure / NIC fit period */
	uint64_t offload_horizon_us; /**< send-on-timestamp lead, 0 = off */
	uint64_t stage_lead_us;  /**< staging lead H, the longest; 0 = stamp
				  *   on arrival */
	uint64_t stage_lead_min_us; /**< the shortest lead H adapts down to */
	uint64_t guard_ms;       /**< completion order: a held flow not
				  *   stamped this long goes first, 0 = never */
	uint64_t guard_frames;   /**< ... for this many frames */
	uint64_t nic_clock_bits; /**< NIC clock counter width */
	/** classes[0] is "default"; the others by index (their id while
	 *  they live), matched in seq order. `del class` marks a slot
	 *  deleted; `add class` takes a slot never used, else the one
	 *  deleted longest ago (pcr_class_slot()). */
	struct pcr_class_conf classes[PCR_MAX_CLASSES];
	unsigned int n_classes;  /**< slots used, deleted ones included */
	uint32_t class_clock;    /**< counts adds and deletes (seq,
				  *   deleted_at, gen) */
	uint32_t classes_deleted; /**< deleted since start */
	/* run-time mode (command line only) */
	bool interactive;        /**< -i: the pacer> prompt */
	bool auto_start;         /**< -a: forward at once (default without -i) */
	bool replay;             /**< --replay: a capture at once, not live
				  *   traffic (no AQM, no --flow-queue) */
	char cmdline_file[PATH_MAX]; /**< commands run before forwarding */
	char control_socket[PATH_MAX]; /**< "" = in the runtime directory,
					*   "none" = no control socket */
	uint64_t control_socket_mode; /**< its file's mode [0600] */
	char control_socket_owner[PATH_MAX]; /**< USER[:GROUP] of its file,
					      *   "" = pacer's own */
	/** [port N] rate overrides */
	bool port_rate_set[PCR_MAX_PORTS];
	uint64_t port_rate_bps[PCR_MAX_PORTS];
	int max_port_named;      /**< highest N of a [port N] section, or -1 */
};

/**
 * Parse the pacer's own arguments (after EAL's "--"), reading --config
 * first so that options on the command line override the file.
 * @return 0 to run, 1 if --help was printed, -1 on bad input (one line
 *   on stderr naming the value and why).
 */
int pcr_options_parse(int argc, char **argv, struct pcr_config *c);
void pcr_options_usage(FILE *f, const char *prog);
/** Set option @p name (one a running pacer changes: rate, aqm, ...) of
 *  @p c to @p value as the command line takes it: 0, or -1 with why. */
int pcr_options_set_live(struct pcr_config *c, const char *name,
			 const char *value, char *err, size_t errlen);
/** Send pcr_options_parse()'s messages to @p f (NULL: stderr again). */
void pcr_options_errors_to(FILE *f);
/**
 * The options a running pacer cannot change (all but rate, flow-rate,
 * horizon, horizon-policy, flow-limit and flow-queue) that differ between @p now and
 * @p nw: written to @p f as "name OLD -> NEW", comma-separated.
 * @return how many.
 */
int pcr_options_restart_diff(const struct pcr_config *now,
			     const struct pcr_config *nw, FILE *f);
/** The configuration as a file --config reads back to the same state. */
void pcr_options_write(FILE *f, const struct pcr_config *c);
/**
 * A class name as both the configuration file and `add class` take it:
 * 1..PCR_CLASS_NAMELEN-1 of letters, digits, '_', '-' and '.' (what an
 * INI section header carries through unchanged). @return true if valid.
 */
bool pcr_class_name_ok(const char *name);
/**
 * The slot a new class takes in @p c: one never used, else the one
 * deleted longest ago (its counters and calendars start afresh:
 * pcr_class_conf.gen). @return its index, or -1 when every slot holds a
 * live class.
 */
int pcr_class_slot(const struct pcr_config *c);
/** Class @p k's AQM settings in effect in @p c: its own where it sets
 *  them, the default's elsewhere. */
struct pcr_aqm_conf pcr_class_aqm(const struct pcr_config *c, unsigned int k);
/** Put class @p cl into slot @p k of @p c, matched after every other
 *  class (seq), as a fresh incarnation of the slot. */
void pcr_class_place(struct pcr_config *c, unsigned int k,
		     const struct pcr_class_conf *cl);
/** Mark class @p k of @p c deleted (its slot free for pcr_class_slot()). */
void pcr_class_delete(struct pcr_config *c, unsigned int k);
/** The live classes of @p c but default, in match order, into @p ids.
 *  @return how many. */
unsigned int pcr_class_order(const struct pcr_config *c, uint8_t *ids);
/** "USER", "USER:GROUP" or ":GROUP" (names or numbers) into @p uid and
 *  @p gid ((uid_t)-1 / (gid_t)-1 where not given): 0, or -1 with why. */
int pcr_owner_parse(const char *s, uid_t *uid, gid_t *gid, char *err,
		    size_t errlen);
/** Why pcr_class_name_ok() refuses, for messages. */
#define PCR_CLASS_NAME_RULE "1..31 letters, digits, '_', '-' or '.'"
/**
 * The one class builder (the configuration file's [class NAME], `add
 * class` on the prompt and the control socket, reload):
 * pcr_class_new() checks @p name against the classes of @p c (valid, not
 * "default" unless @p is_default, not taken, an index left) and fills
 * @p cl with the name; pcr_class_set() takes one of its settings, @p key
 * "match", "rate", "flow-rate" or "order"; pcr_class_done() checks it is
 * complete (a match rule, except for the default class). Each returns 0,
 * or -1 with why in @p err (the caller says where).
 */
int pcr_class_new(const struct pcr_config *c, const char *name, bool is_default,
		  struct pcr_class_conf *cl, char *err, size_t errlen);
int pcr_class_set(struct pcr_class_conf *cl, bool is_default, const char *key,
		  const char *value, char *err, size_t errlen);
int pcr_class_done(const struct pcr_class_conf *cl, bool is_default, char *err,
		   size_t errlen);
void pcr_options_defaults(struct pcr_config *c);

/* ------------------------------------------------------------------ */
/* Run time                                                            */

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

/** One flow's AQM (RX lcore that owns the flow). */
struct pcr_flow_aqm {
	struct pcr_codel codel;
	uint64_t last_dep_tsc;   /**< its latest departure: a packet that
				  *   arrives after it found the queue empty */
	uint32_t marked;         /**< packets marked CE (CoDel's and the
				  *   ce-threshold's) */
	uint32_t dropped;        /**< packets dropped by CoDel */
};

/** What a TX lcore keeps per egress port. */
struct pcr_dp;

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
/** --max-late default, us: the most a packet may leave after its time
 *  while the TX side cannot keep up (issue 20); 0 turns it off. */
#define PCR_MAX_LATE_US_DEFAULT 10000
/** With --max-late 0: how late, for how long, a TX lcore must send before
 *  it is behind and the control lcore says so. */
#define PCR_BEHIND_WARN_US 10000

struct pcr_rxq {
	uint16_t port;
	uint16_t queue;
	uint16_t egress;
};

/** Flow table of one RX lcore. */
/*
 * Per-flow staging (dataplane.c, "Per-flow staging"): under a backlog, a
 * flow's packets wait here, in the RX lcore that owns the flow, and are
 * stamped a lead before they can leave, round robin among the flows.
 * Everything here belongs to that lcore, the published rank aside.
 */
#define PCR_STAGE_NONE UINT32_MAX
/** --stage-lead's default, us, the longest lead: covers two RX polls of a
 *  busy lcore and the TX loop's lateness on a shared core, and keeps the
 *  tiniest flows' wait short (issue 18's simulation: p99 slowdown 5.6 at
 *  0.5 ms). */
#define PCR_STAGE_LEAD_US_DEFAULT 500
/** --stage-lead-min's default, us: the lead adapts between this and
 *  --stage-lead to the gaps the RX loop leaves (lib/policy/pcr_lead.h);
 *  on an idle core a pass comes every few us. */
#define PCR_STAGE_LEAD_MIN_US_DEFAULT 20
/** Bytes a staged flow stamps per turn: one 1500-byte MTU frame with its
 *  Ethernet header (fq's default is two): with full-size frames the turns
 *  are frame by frame, the round robin the isolation tests compare with,
 *  and a short flow waits one frame per other flow, not two. */
#define PCR_STAGE_QUANTUM 1514

/** A transaction ends after this long without an arrival of its flow
 *  (completion order learns sizes from the transactions that end). */
#define PCR_TXN_IDLE_US 1000
/** --order-guard and --order-guard-frames defaults (issue 18). */
#define PCR_GUARD_MS_DEFAULT 100
/** CoDel's defaults, as fq_codel's and cake's: 5 ms, 100 ms. */
#define PCR_AQM_TARGET_US_DEFAULT 5000
#define PCR_AQM_INTERVAL_US_DEFAULT 100000
#define PCR_GUARD_FRAMES_DEFAULT 16

/** --flow-queue default: a flow holds at most this much time of queue at
 *  its tightest rate (issue 19: one overloading flow keeps 100 ms, not the
 *  2 s horizon), and never less than PCR_FLOW_QUEUE_MIN_FRAMES frames. */
#define PCR_FLOW_QUEUE_MS_DEFAULT 100
#define PCR_FLOW_QUEUE_MIN_FRAMES 4
/** A flow's staging queue: its mbufs linked through the departure
 *  dynfield (unused until the packet is stamped); and, in a class of
 *  completion order, its current transaction. */
struct pcr_stage_flow {
	struct rte_mbuf *head, *tail;
	uint32_t next;     /**< next flow of its level (pcr_rank_links) */
	uint32_t prev;     /**< previous one */
	uint32_t lru_next, lru_prev; /**< its class's flows by last stamp
				      *   (completion order: the guard) */
	int32_t deficit;   /**< bytes it may still stamp this turn */
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
	struct pcr_stage_port *sport; /**< [n_ports], by egress port */
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

/** The whole appliance. */
struct pcr_app {
	struct pcr_config cfg;
	/** pacer's own arguments (after the EAL's "--"; [0] the program)
	 *  as started: what `reload` parses again */
	int argc;
	char **argv;
	uint64_t tsc_hz;
	uint64_t start_tsc;
	rte_cpuset_t worker_cpus; /**< the CPUs the worker lcores may run on */
	/** test hook PACER_TEST_SNAPSHOT_STALL_MS (0: off; see setup.c) */
	unsigned int test_snapshot_stall_ms;
	int ts_field;            /**< Tx timestamp dynfield, -1 = none */
	uint64_t ts_flag;
	struct rte_mempool *pool;
	uint16_t n_ports;
	struct pcr_port ports[PCR_MAX_PORTS];
	struct pcr_lcore *lcores[RTE_MAX_LCORE];
	uint64_t rates_published; /**< rate sets replaced since start */
	bool fwd_touched;        /**< start/stop given: no auto-start */
	bool quit;               /**< `quit`: shut down as on SIGTERM */
	bool closing;            /**< tearing down (under the control lock) */
	/** what the workers read (dataplane.c's only view of the above) */
	struct pcr_dp dp;
};

/* The datapath (dataplane.c, PCR_DATAPATH) is handed struct pcr_dp and
 * cannot name the global: the compiler holds it to that. */
#ifndef PCR_DATAPATH
extern struct pcr_app pcr_app;
#endif

/** Point the datapath's context at the appliance's ports and lcores (after
 *  the ports are counted and before the workers launch). */
void pcr_dp_bind(struct pcr_app *a);

/* control.c: changes made while the workers run */

/** Derive port @p p's rates from the configuration and the TSC frequency
 *  now measured. @return 0, or -ERANGE naming nothing (caller reports). */
int pcr_rates_build(const struct pcr_config *c, uint16_t p, struct pcr_rates *r);
/**
 * Replace every port's rates by ones derived afresh; the old ones are
 * freed once every worker has passed a quiescent point. Control lcore.
 * Packets already queued keep their departure times.
 * @return 0, or -ENOMEM / -ERANGE (nothing changed).
 */
int pcr_rates_publish(struct pcr_app *a);
/** The same from configuration @p c (a command's draft, not yet the
 *  running one: control.c publishes before it commits). */
int pcr_rates_publish_cfg(struct pcr_app *a, const struct pcr_config *c);
/*
 * With --horizon-policy drop, the timestamper drops what would leave later
 * than now + horizon, before any policy is charged for it; the wheel's own
 * horizon is this much further, so that it never drops (after the
 * policies were charged) a packet the timestamper let through because its
 * consumer's clock runs a little behind the RX lcore's.
 */
#define PCR_HORIZON_MARGIN_NS 10000000ull

/** The wheel's horizon for a configured one. */
uint64_t pcr_wheel_horizon_ns(uint64_t horizon_ns,
			      enum pcr_wheel_horizon_policy policy);
/** What a calendar for shared rate @p r is sized for: the largest frame
 *  (with --wire-overhead), the horizon with its margin, @p r's burst. */
void pcr_cal_params_of(const struct pcr_config *c, const struct pcr_rate *r,
		       struct pcr_cal_params *cp);
/** Free the published rates and the calendars (at exit, workers stopped). */
void pcr_rates_free(struct pcr_app *a);

/* The control layer's lock: one control-plane actor at a time (the
 * control loop with its CLI, the telemetry thread). */
void pcr_ctl_lock(void);
void pcr_ctl_unlock(void);

/** Build and publish the class table from the configuration. */
int pcr_classtab_publish(struct pcr_app *a);
/** The same from configuration @p c (a command's draft). */
int pcr_classtab_publish_cfg(struct pcr_app *a, const struct pcr_config *c);

/* dataplane.c */
int pcr_worker_main(void *arg);
void pcr_wheel_drop_cb(struct rte_mbuf *m, enum pcr_wheel_drop_reason r,
		       void *arg);
int pcr_flowtab_create(struct pcr_lcore *lc, uint64_t entries);
void pcr_flowtab_free(struct pcr_flowtab *ft);
/**
 * Completion order's learning, on the control lcore about every 10 ms:
 * the transactions the RX lcores saw complete since the last call join each
 * class's histogram (older ones fading by 1/8 a rebuild), and a class of
 * completion order whose table is due (once a second, or at each call
 * with news while it has learned fewer than 64 transactions) gets it
 * rebuilt (pcr_app.dp.rank, what the RX lcores read).
 */
void pcr_rank_poll(uint64_t now_tsc);

/* stats.c */
struct pcr_port_snap {
	uint64_t rx_packets, rx_bytes;
	uint64_t rx_nombuf, rx_missed; /**< from the PMD */
	uint64_t tx_packets, tx_bytes, tx_retry, tx_late, tx_early, tx_offloaded;
	uint64_t held_for_order;
	uint64_t queued, pending;
	uint64_t staged, staged_total, stage_stalls; /**< per-flow staging */
	uint64_t stage_stall_ns;
	uint64_t stage_lead_ns; /**< the longest lead of its RX lcores now */
	uint64_t order_guard;
	uint64_t drop_horizon, drop_flow_limit, drop_flow_queue, drop_spill, drop_no_mbuf,
		drop_tx, drop_shutdown, drop_inbox, drop_wheel_nomem,
		drop_rx_missed, drop_link, drop_late;
	/** busy TSC cycles by role, and per packet (over what the RX lcores
	 *  received, what was staged, what was sent) */
	uint64_t rx_cycles, stage_cycles, tx_cycles;
	uint64_t rx_cycles_pkt, stage_cycles_pkt, tx_cycles_pkt;
	uint64_t tx_behind_ns;   /**< how late the TX lcore sends now */
	/** AQM: CoDel's CE marks, the ce-threshold's, CoDel's drops */
	uint64_t aqm_marked, aqm_ce_marked, drop_aqm;
	uint64_t dropped;
	bool link_up;
	uint64_t link_changes;
	uint64_t classify[PCR_CLASSIFY_RESULT_MAX];
	uint64_t flows_new, flows_aged, flow_table_full, flow_cache_hits;
	struct pcr_wheel_stats wheel;
	/** per class, since its class took the slot (pcr_stats_class_restart()) */
	struct pcr_class_stats cls[PCR_MAX_CLASSES];
	/** what the classes deleted since start sent, together */
	struct pcr_class_stats cls_deleted;
	struct pcr_hist err;
	/** the delay its packets of AQM classes were stamped with
	 *  (departure less arrival, TSC cycles) */
	struct pcr_hist qdelay;
};

/** One worker lcore's share: what it received, what it transmitted. */
struct pcr_lcore_snap {
	unsigned int lcore_id;
	unsigned int roles;      /**< enum pcr_role bits */
	uint64_t rx_packets;     /**< polled from its RX queues, all ports */
	uint64_t tx_packets;     /**< sent for the egress ports it drains */
	/** ns its thread was ready to run and waited for a CPU (the
	 *  kernel's run delay, /proc schedstat); UINT64_MAX if unknown */
	uint64_t run_delay_ns;
	int tid;                 /**< its thread (0: not started) */
	uint64_t stalls;         /**< loop passes longer than PCR_STALL_US */
	uint64_t stall_tsc;      /**< their TSC cycles */
};

struct pcr_snapshot {
	uint64_t tsc;
	bool consistent;
	/** handshakes made so far (the workers paused for each), live
	 *  readers served a snapshot another had asked for (shared), and the
	 *  workers' time parked at handshakes (all workers, TSC cycles) and
	 *  its longest single stretch */
	uint64_t snapshots;
	uint64_t snapshots_shared;
	uint64_t park_tsc;
	uint64_t park_max_tsc;
	/** over the run so far: handshake tries that failed (a worker left
	 *  unclaimed, PCR_SYNC_PARK_US) and were made again; snapshots read
	 *  as the workers ran (not consistent) */
	uint64_t sync_retries;
	uint64_t sync_inconsistent;
	unsigned int n_lcores;
	struct pcr_lcore_snap lcore[RTE_MAX_LCORE];
	struct pcr_port_snap port[PCR_MAX_PORTS];
	struct pcr_hist err;     /**< all ports */
};

/** What a port counter is: one that only grows, a level now, or one of
 *  the reasons a packet is dropped (only grows; dropped_total sums them). */
enum pcr_counter_kind { PCR_COUNTER, PCR_GAUGE, PCR_DROP };

/** A port counter: its one name (--stats-json's key, the prompt's `show
 *  port stats`, telemetry's key, Prometheus's pacer_NAME), where it lives
 *  in struct pcr_port_snap, its unit, its kind and what it counts. */
struct pcr_counter {
	const char *name;
	size_t off;
	const char *unit;
	enum pcr_counter_kind kind;
	const char *help;
};
extern const struct pcr_counter pcr_port_counters[];
extern const unsigned int pcr_n_port_counters;

static inline uint64_t
pcr_counter_value(const struct pcr_counter *c, const struct pcr_port_snap *ps)
{
	return *(const uint64_t *)((const char *)ps + c->off);
}

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

/** Take a consistent snapshot (workers paused between bursts) or, with
 *  the workers stopped, a final one. */
void pcr_stats_snapshot(struct pcr_snapshot *s);
/**
 * What a live reader (a client's show, telemetry, the stats line) gets:
 * the last snapshot if it is younger than PCR_SNAP_SHARE_MS, else a new
 * one. However many clients ask however often, the workers pause for at
 * most one handshake per PCR_SNAP_SHARE_MS.
 */
void pcr_stats_snapshot_live(struct pcr_snapshot *s);
#define PCR_SNAP_SHARE_MS 20
/** Slot @p k holds a new class from now: its counters count from here,
 *  what the class before sent goes to the deleted classes' sum. */
void pcr_stats_class_restart(unsigned int k);
/** Sample every port's byte counters (the control loop, every 10 ms),
 *  for pcr_stats_rate(). */
void pcr_stats_rate_poll(uint64_t now_tsc);
/** Port @p p's receive and transmit rates over the last second or so
 *  (@p window_s): 0, or -1 before two samples. */
int pcr_stats_rate(uint16_t p, double *rx_bps, double *tx_bps,
		   double *window_s);
/** @p cycles in ns at the TSC rate pacer started with: how every reported
 *  duration is converted, so a total reads the same at every read. */
uint64_t pcr_stats_ns(uint64_t cycles);
/** The conservation check: -1 and a message per port that fails. */
int pcr_stats_check(const struct pcr_snapshot *s, FILE *f);
void pcr_stats_print_line(const struct pcr_snapshot *s,
			  const struct pcr_snapshot *prev, FILE *f);
void pcr_stats_print_final(const struct pcr_snapshot *s, FILE *f);
int pcr_stats_write_json(const struct pcr_snapshot *s, const char *path,
			 int64_t mempool_in_use);
/** The --stats-json document into @p f; @p final names the pool's count
 *  mempool_in_use_at_exit, else mempool_in_use (a live look). */
void pcr_stats_json(const struct pcr_snapshot *s, FILE *f,
		    int64_t mempool_in_use, bool final);
/** The Prometheus text exposition format (node_exporter's textfile
 *  collector reads it): every port counter as pacer_NAME{port,name}. */
void pcr_stats_prometheus(const struct pcr_snapshot *s, FILE *f);

#endif /* PACER_H */
