/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#ifndef PCR_CONFIG_H
#define PCR_CONFIG_H

/**
 * @file
 * The configuration: what the options, the configuration file and the
 * commands build (options.c, each value checked as it is taken), and the
 * class builder they share. The workers never read it: the control layer
 * turns it into what they do read (pacer.h: pcr_rates_build(),
 * pcr_classtab_publish()).
 */

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "pcr_match.h"
#include "pcr_wheel.h"

#define PCR_MAX_PORTS 32
/** Longest name an option takes (a Circuit ID: --unmatched), with its
 *  terminating 0. */
#define PCR_NAME_MAX 256
#define PCR_MAX_CLASSES 64  /**< including the implicit "default" class */
#define PCR_CLASS_NAMELEN 32
#define PCR_MAX_TXQ 8       /**< TX queues (each with its wheel) a port */

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
	/** the subscriber tree (src/tree.c): LibreQoS's network.json and
	 *  ShapedDevices.csv ("" = none), and the port that faces the
	 *  subscribers (what leaves by it is shaped at download rates by
	 *  destination, what leaves by its peer at upload rates by source) */
	char network[PATH_MAX];
	char subscribers[PATH_MAX];
	char unmatched[PCR_NAME_MAX]; /**< Circuit ID for traffic of none */
	uint64_t subscriber_port;
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

/* Defaults of options (options.c, pcr_options_defaults()) */
/** --max-late default, us: the most a packet may leave after its time
 *  while the TX side cannot keep up (issue 20); 0 turns it off. */
#define PCR_MAX_LATE_US_DEFAULT 10000
/** --stage-lead's default, us, the longest lead: covers two RX polls of a
 *  busy lcore and the TX loop's lateness on a shared core, and keeps the
 *  tiniest flows' wait short (issue 18's simulation: p99 slowdown 5.6 at
 *  0.5 ms). */
#define PCR_STAGE_LEAD_US_DEFAULT 500
/** --stage-lead-min's default, us: the lead adapts between this and
 *  --stage-lead to the gaps the RX loop leaves (lib/policy/pcr_lead.h);
 *  on an idle core a pass comes every few us. */
#define PCR_STAGE_LEAD_MIN_US_DEFAULT 20
/** --order-guard and --order-guard-frames defaults (issue 18). */
#define PCR_GUARD_MS_DEFAULT 100
#define PCR_GUARD_FRAMES_DEFAULT 16
/** CoDel's defaults, as fq_codel's and cake's: 5 ms, 100 ms. */
#define PCR_AQM_TARGET_US_DEFAULT 5000
#define PCR_AQM_INTERVAL_US_DEFAULT 100000

/** --flow-queue default: a flow holds at most this much time of queue at
 *  its tightest rate (issue 19: one overloading flow keeps 100 ms, not the
 *  2 s horizon), and never less than PCR_FLOW_QUEUE_MIN_FRAMES frames. */
#define PCR_FLOW_QUEUE_MS_DEFAULT 100
#define PCR_FLOW_QUEUE_MIN_FRAMES 4

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

#endif /* PCR_CONFIG_H */
