/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * A send-on-timestamp NIC double for pacer-offload-double: the real pacer
 * sources linked with a few ethdev calls wrapped (-Wl,--wrap, see
 * meson.build), so that a plain vdev (net_pcap here) looks like a NIC that
 * schedules transmissions in hardware:
 *
 *   rte_eth_dev_info_get()  adds RTE_ETH_TX_OFFLOAD_SEND_ON_TIMESTAMP to
 *                           tx_offload_capa;
 *   rte_eth_dev_configure() records that the offload was asked for, and
 *                           configures the real PMD without it;
 *   rte_eth_read_clock()    a NIC clock the double knows exactly:
 *                           NIC = NIC0 + (TSC - TSC0) * 2 / 5, a 64-bit
 *                           counter that wraps 2e8 ticks (~0.2 s) after its first read;
 *   rte_eth_dev_start()     adds a Tx callback that records, for every
 *                           packet handed to the PMD: the TSC at hand-over,
 *                           its departure time (the wheel's dynfield), the
 *                           Tx timestamp flag and the stamp;
 *   rte_eth_dev_stop()      writes the records to $PACER_DOUBLE_LOG.
 *
 * The test (test_offload.sh) checks each record against the clock above.
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include "pcr_wheel.h"

#define NIC_NUM 2
#define NIC_DEN 5
#define NIC_WRAP_IN 200000000ull /* ticks from the first read to the wrap */
#define MAX_RECORDS (1u << 20)

struct record {
	uint64_t handover_tsc;
	uint64_t departure_tsc;
	uint64_t stamp;
	uint16_t port;
	uint8_t flagged;
};

static struct record *records;
static unsigned int n_records;
static uint64_t tsc0, nic0;
static bool clock_started;
static bool asked[RTE_MAX_ETHPORTS];

int __real_rte_eth_dev_info_get(uint16_t port, struct rte_eth_dev_info *info);
int __wrap_rte_eth_dev_info_get(uint16_t port, struct rte_eth_dev_info *info);
int __real_rte_eth_dev_configure(uint16_t port, uint16_t nb_rxq,
				 uint16_t nb_txq,
				 const struct rte_eth_conf *conf);
int __wrap_rte_eth_dev_configure(uint16_t port, uint16_t nb_rxq,
				 uint16_t nb_txq,
				 const struct rte_eth_conf *conf);
int __wrap_rte_eth_read_clock(uint16_t port, uint64_t *clock);
int __real_rte_eth_dev_start(uint16_t port);
int __wrap_rte_eth_dev_start(uint16_t port);
int __real_rte_eth_dev_stop(uint16_t port);
int __wrap_rte_eth_dev_stop(uint16_t port);

int
__wrap_rte_eth_dev_info_get(uint16_t port, struct rte_eth_dev_info *info)
{
	int rc = __real_rte_eth_dev_info_get(port, info);

	if (rc == 0)
		info->tx_offload_capa |= RTE_ETH_TX_OFFLOAD_SEND_ON_TIMESTAMP;
	return rc;
}

int
__wrap_rte_eth_dev_configure(uint16_t port, uint16_t nb_rxq, uint16_t nb_txq,
			     const struct rte_eth_conf *conf)
{
	struct rte_eth_conf c = *conf;

	if (port < RTE_MAX_ETHPORTS)
		asked[port] = (c.txmode.offloads &
			       RTE_ETH_TX_OFFLOAD_SEND_ON_TIMESTAMP) != 0;
	c.txmode.offloads &= ~RTE_ETH_TX_OFFLOAD_SEND_ON_TIMESTAMP;
	return __real_rte_eth_dev_configure(port, nb_rxq, nb_txq, &c);
}

int
__wrap_rte_eth_read_clock(uint16_t port, uint64_t *clock)
{
	uint64_t t = rte_rdtsc();

	(void)port;
	if (!clock_started) {
		tsc0 = t;
		nic0 = UINT64_MAX - NIC_WRAP_IN + 1;
		clock_started = true;
	}
	*clock = nic0 + (t - tsc0) * NIC_NUM / NIC_DEN;
	return 0;
}

static uint16_t
record_cb(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n,
	  void *arg)
{
	static int dep_off = -1, ts_off = -1;
	static uint64_t ts_flag;
	uint64_t now = rte_rdtsc();
	uint16_t i;

	(void)queue;
	(void)arg;
	if (dep_off < 0) {
		int b = rte_mbuf_dynflag_lookup(RTE_MBUF_DYNFLAG_TX_TIMESTAMP_NAME,
						NULL);

		dep_off = rte_mbuf_dynfield_lookup(PCR_WHEEL_DYNFIELD_NAME, NULL);
		ts_off = rte_mbuf_dynfield_lookup(RTE_MBUF_DYNFIELD_TIMESTAMP_NAME,
						  NULL);
		ts_flag = b >= 0 ? 1ull << b : 0;
	}
	for (i = 0; i < n && n_records < MAX_RECORDS; i++) {
		struct record *r = &records[n_records++];

		r->port = port;
		r->handover_tsc = now;
		r->departure_tsc = dep_off >= 0 ?
			*RTE_MBUF_DYNFIELD(pkts[i], dep_off, uint64_t *) : 0;
		r->flagged = ts_flag != 0 && (pkts[i]->ol_flags & ts_flag) != 0;
		r->stamp = r->flagged ?
			*RTE_MBUF_DYNFIELD(pkts[i], ts_off, uint64_t *) : 0;
	}
	return n;
}

int
__wrap_rte_eth_dev_start(uint16_t port)
{
	int rc = __real_rte_eth_dev_start(port);

	if (rc != 0)
		return rc;
	if (records == NULL) {
		records = calloc(MAX_RECORDS, sizeof(*records));
		if (records == NULL)
			return -ENOMEM;
	}
	if (rte_eth_add_tx_callback(port, 0, record_cb, NULL) == NULL)
		return -ENOTSUP;
	fprintf(stderr, "offload double: port %u: send-on-timestamp %s\n", port,
		asked[port] ? "asked for" : "not asked for");
	return 0;
}

int
__wrap_rte_eth_dev_stop(uint16_t port)
{
	const char *path = getenv("PACER_DOUBLE_LOG");
	unsigned int i;
	FILE *f;

	if (path != NULL && port == 0 && (f = fopen(path, "w")) != NULL) {
		fprintf(f, "tsc0 %" PRIu64 " nic0 %" PRIu64 " num %u den %u asked %d\n",
			tsc0, nic0, NIC_NUM, NIC_DEN, asked[0]);
		for (i = 0; i < n_records; i++)
			fprintf(f, "%u %" PRIu64 " %" PRIu64 " %u %" PRIu64 "\n",
				records[i].port, records[i].handover_tsc,
				records[i].departure_tsc, records[i].flagged,
				records[i].stamp);
		fclose(f);
	}
	return __real_rte_eth_dev_stop(port);
}
