/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#ifndef PCR_SNAPSHOT_H
#define PCR_SNAPSHOT_H

/**
 * @file
 * The statistics snapshot: every port's and every worker's counters, read
 * at one point between bursts (stats.c, pcr_stats_snapshot()), and what
 * is made of it: rates, the conservation check, and the text, JSON and
 * Prometheus renderings (render.c).
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_common.h>

#include "config.h"
#include "dataplane.h"
#include "pcr_classify.h"
#include "pcr_hist.h"
#include "pcr_wheel.h"

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

/* stats.c */

/* tries of one snapshot before it reads the counters as they run (not
 * consistent); each failed one held a worker PCR_SYNC_PARK_US at most */
#define PCR_SYNC_TRIES 8

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

/* render.c */
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

#endif /* PCR_SNAPSHOT_H */
