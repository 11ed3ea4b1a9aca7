/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#ifndef PACER_H
#define PACER_H

/**
 * @file
 * The pacer appliance: the global pcr_app (the configuration, the ports,
 * the lcores and the datapath's context together), the logs, and the
 * control side's calls that build and publish what the workers read
 * (control.c). The datapath (dataplane.c) includes dataplane.h, not this.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_log.h>
#include <rte_mempool.h>

#include "config.h"
#include "dataplane.h"
#include "pcr_cal.h"
#include "pcr_policy.h"
#include "pcr_wheel.h"

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

/** The whole appliance. */
struct pcr_isp;
struct pcr_leafmap;
struct pcr_tree_view;

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
	/** the subscriber tree (tree.c): the files as read, the address
	 *  map, the nodes' parents (shared by the ports' trees) and each
	 *  port's tree; all NULL without --network/--subscribers */
	struct pcr_isp *isp;
	struct pcr_leafmap *leafmap;
	uint32_t *tree_parent;
	struct pcr_tree *tree[PCR_MAX_PORTS];
	struct pcr_tree_view *tree_view; /**< tree.c: names, children, rates */
	uint64_t tree_cal_bytes; /**< the nodes' calendars, all ports */
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

/* tree.c: the subscriber tree */

/** Read --network and --subscribers (before the EAL starts: a bad file
 *  is a usage error). @return 0, or -errno with the reason logged. */
int pcr_tree_load(struct pcr_app *a);
/** Each port's tree and the address map, from what pcr_tree_load() read
 *  (before the first rate set). @return 0, or -errno, logged. */
int pcr_tree_build(struct pcr_app *a);
/** Everything pcr_tree_load() and pcr_tree_build() made. */
void pcr_tree_free(struct pcr_app *a);
/** Names, children and rates for the views below (after
 *  pcr_tree_build()). @return 0 or -ENOMEM. */
int pcr_tree_view_build(struct pcr_app *a);
/** --unmatched: its subscriber for each port's tree (after the views).
 *  @return 0, or -EINVAL logged. */
int pcr_tree_unmatched(struct pcr_app *a);
void pcr_tree_view_free(struct pcr_app *a);
/** A node's id by name (an interior node's, or a Circuit ID), -1: none. */
int32_t pcr_tree_node_find(const struct pcr_app *a, const char *name);
/** Sample every node's sent bytes: the rates the views show (control
 *  lcore, about once a second: pcr_tree_sample_due()). */
void pcr_tree_sample(struct pcr_app *a, uint64_t now_tsc);
uint64_t pcr_tree_sample_due(const struct pcr_app *a);

/** One node as an operator reads it, on one port. */
struct pcr_node_port {
	uint16_t port;
	bool down;            /**< the download side (faces subscribers) */
	uint64_t max_bps;
	uint64_t weight;      /**< its share's weight, bit/s */
	uint64_t tx_packets;
	uint64_t tx_bytes;
	double rate_bps;      /**< over the last sample (about 1 s) */
};

/** One node as an operator reads it. */
struct pcr_node_info {
	uint32_t id;
	const char *name;         /**< its name, or a subscriber's Circuit ID */
	const char *type;         /**< network.json's type, "node", "subscriber" */
	const char *circuit_name; /**< a subscriber's Circuit Name */
	const char *parent;       /**< NULL: under the port */
	bool leaf;
	uint32_t depth;           /**< 1: under the port */
	uint32_t children;
	uint64_t down_min_bps, up_min_bps, down_max_bps, up_max_bps;
	uint32_t devices, prefixes;
	unsigned int n_ports;
	struct pcr_node_port port[PCR_MAX_PORTS];
};

void pcr_tree_node_info(const struct pcr_app *a, uint32_t i,
			struct pcr_node_info *ni);
uint32_t pcr_tree_n_nodes(const struct pcr_app *a);
uint32_t pcr_tree_first_child(const struct pcr_app *a, uint32_t i);
uint32_t pcr_tree_next_sibling(const struct pcr_app *a, uint32_t i);
double pcr_tree_rate(const struct pcr_app *a, uint16_t p, uint32_t i);
/** What node @p i sent on port @p p, bytes (its TX queues summed). */
uint64_t pcr_tree_bytes(const struct pcr_app *a, uint16_t p, uint32_t i);

/** Port @p p's tree and its rates into the new set @p nw (tsc_hz set),
 *  sharing @p old's array (NULL: none) where the terms are the same. */
int pcr_tree_rates(const struct pcr_app *a, const struct pcr_config *c,
		   uint16_t p, struct pcr_rates *nw,
		   const struct pcr_rates *old);

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

/**
 * Completion order's learning, on the control lcore about every 10 ms:
 * the transactions the RX lcores saw complete since the last call join each
 * class's histogram (older ones fading by 1/8 a rebuild), and a class of
 * completion order whose table is due (once a second, or at each call
 * with news while it has learned fewer than 64 transactions) gets it
 * rebuilt (pcr_app.dp.rank, what the RX lcores read).
 */
void pcr_rank_poll(uint64_t now_tsc);

#endif /* PACER_H */
