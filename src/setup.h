/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#ifndef PCR_SETUP_H
#define PCR_SETUP_H

/*
 * Start-up steps (src/setup.c), called by main() in this order once the
 * EAL is up; each ends the run with pcr_fatal() on failure.
 */

#include <stdint.h>

#include <rte_common.h>
#include <rte_mempool.h>

#include "pacer.h"

/** Log @p fmt, clean up the EAL and exit 1 (src/main.c). */
void __rte_noreturn pcr_fatal(const char *fmt, ...) __rte_format_printf(1, 2);

/** RX lcores among @p nw workers and @p n_txq TX queues (all ports'). */
unsigned int pcr_rx_lcore_count(unsigned int nw, unsigned int n_txq);
/** Log a configuration the EAL's resources refuse, clean up the EAL and
 *  exit 2 (src/main.c). */
void __rte_noreturn pcr_usage_exit_eal(void);
/** The pool's size without --mbufs: what the EAL's free memory holds
 *  beside the flow tables and wheels (@p n_rx RX lcores, @p n_lcores in
 *  all), at most a full horizon at 1 gbit/s; it says what it chose. */
unsigned int pcr_default_mbufs(struct pcr_app *a, unsigned int n_ports,
			       unsigned int n_rx, unsigned int n_lcores);
/** The mbuf pool of @p nb_mbufs for @p n_ports ports, its common store a
 *  stack unless the user or DPDK chose (pool_ops()); NULL, rte_errno set,
 *  if it cannot be made. */
struct rte_mempool *pcr_pool_create(uint16_t n_ports, unsigned int nb_mbufs);
/** rte_mempool_mem_iter() callback: touch every page of the pool once. */
void pcr_pool_prefault_cb(struct rte_mempool *mp, void *opaque,
			  struct rte_mempool_memhdr *memhdr, unsigned int idx);
/** Port @p p's TX side: its timing wheel for @p max_queued packets. */
void pcr_wheel_setup(struct pcr_app *a, uint16_t p, unsigned int max_queued);
/** Rates, calendars and the class table, published before any worker. */
void pcr_policies_init(struct pcr_app *a);
/** Which worker lcores receive from which queues and which transmit. */
void pcr_assign_lcores(struct pcr_app *a);
/** The per-port staging state of every RX lcore. */
void pcr_stage_setup(struct pcr_app *a);
/** Configure and start port @p p (queues, offloads, its clock). */
void pcr_port_setup(struct pcr_app *a, uint16_t p);

#endif /* PCR_SETUP_H */
