/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * The port counter table: every renderer of a port's counters walks it
 * (src/render.c, src/cli.c, src/telemetry.c), so a counter is named in one
 * place. Kept apart from the statistics code so that the prompt's fuzz
 * harness, which stands in for the snapshot, renders the same table.
 */

#include <stddef.h>

#include <rte_common.h>

#include "counters.h"
#include "snapshot.h"

/*
 * The port counters, one name each: --stats-json's key, the prompt's
 * `show port stats` and `show counters`, telemetry's key, Prometheus's
 * pacer_NAME (tests/pacer/test_counters.sh holds them to it). The drop_
 * counters are the reasons a packet was dropped; dropped_total is their
 * sum (collect()).
 */
#define K(n, f, u, h) { n, offsetof(struct pcr_port_snap, f), u, PCR_COUNTER, h }
#define G(n, f, u, h) { n, offsetof(struct pcr_port_snap, f), u, PCR_GAUGE, h }
#define D(n, f, h) { n, offsetof(struct pcr_port_snap, f), "packets", PCR_DROP, h }
const struct pcr_counter pcr_port_counters[] = {
	K("rx_packets", rx_packets, "packets", "received on the port (those the PMD had no mbuf or descriptor for included)"),
	K("rx_bytes", rx_bytes, "bytes", "received on the port"),
	K("tx_packets", tx_packets, "packets", "sent on the port"),
	K("tx_bytes", tx_bytes, "bytes", "sent on the port"),
	G("queued", queued, "packets", "held for the port now: wheel, pending and staged"),
	G("pending", pending, "packets", "due, not yet taken by the PMD"),
	G("staged", staged, "packets", "held in per-flow staging for the port now"),
	K("staged_total", staged_total, "packets", "went through per-flow staging"),
	K("stage_stalls", stage_stalls, "events", "staging went unserved for longer than the lead"),
	K("stage_stall_ns", stage_stall_ns, "ns", "time beyond the lead those stalls lasted"),
	G("stage_lead_ns", stage_lead_ns, "ns", "the staging lead in use (the longest of the port's RX lcores)"),
	K("order_guard", order_guard, "events", "held flows the starvation guard moved ahead of every rank"),
	K("late", tx_late, "packets", "sent more than two slots after their departure time (one for the wheel's granularity, one for the TX loop's)"),
	K("early", tx_early, "packets", "sent before their departure time (always 0)"),
	K("tx_retry", tx_retry, "events", "TX bursts the PMD did not take whole"),
	K("offloaded", tx_offloaded, "packets", "handed to the NIC to send on their timestamp"),
	K("aqm_marked", aqm_marked, "packets", "CoDel (--aqm) signalled them: marked Congestion Experienced (ECN-capable, ecn yes)"),
	K("aqm_ce_marked", aqm_ce_marked, "packets", "ECT(1) packets marked CE for a delay over --ce-threshold"),
	K("held_for_order", held_for_order, "packets", "held back to their flow's last departure after a class change"),
	K("dropped_total", dropped, "packets", "dropped for the port, every reason (the sum of the drop_ counters)"),
	D("drop_horizon", drop_horizon, "departure beyond the horizon"),
	D("drop_flow_limit", drop_flow_limit, "the flow had --flow-limit packets queued"),
	D("drop_flow_queue", drop_flow_queue, "the flow had --flow-queue of its tightest rate queued"),
	D("drop_wheel_full", drop_spill, "the wheel had no room in the slot or the next (show wheel: spill)"),
	D("drop_no_mbuf", drop_no_mbuf, "the PMD had no mbuf to receive into"),
	D("drop_tx_drop", drop_tx, "the PMD would not send (held past --tx-hold)"),
	D("drop_shutdown", drop_shutdown, "still queued at a shutdown that drops"),
	D("drop_inbox_full", drop_inbox, "the wheel's inbox was full"),
	D("drop_wheel_nomem", drop_wheel_nomem, "the wheel had no memory for the packet"),
	D("drop_rx_missed", drop_rx_missed, "the PMD had no descriptor (imissed)"),
	D("drop_link_down", drop_link, "due while the port's link was down"),
	D("drop_aqm", drop_aqm, "CoDel (--aqm) signalled it and it was not ECN-capable (or ecn no): dropped at its stamp, given back to every rate it was charged to"),
	D("drop_late", drop_late, "would have left more than --max-late after its time: refused at RX while the port's TX lcore was that far behind, or dropped as it dequeued one that late"),
	G("tx_behind_ns", tx_behind_ns, "ns", "how late the port's TX lcore sends what is due now (0: it keeps up; 25 us steps)"),
	K("rx_cycles", rx_cycles, "TSC cycles", "RX lcores' busy time on bursts received on the port (PMD receive to the wheel's inbox)"),
	G("rx_cycles_per_packet", rx_cycles_pkt, "TSC cycles", "rx_cycles over the packets the RX lcores received on the port"),
	K("stage_cycles", stage_cycles, "TSC cycles", "RX lcores' busy time stamping packets held in staging for the port"),
	G("stage_cycles_per_packet", stage_cycles_pkt, "TSC cycles", "stage_cycles over staged_total"),
	K("tx_cycles", tx_cycles, "TSC cycles", "the TX lcore's busy time in polls that sent on the port (wheel, PMD send, accounting)"),
	G("tx_cycles_per_packet", tx_cycles_pkt, "TSC cycles", "tx_cycles over tx_packets"),
	K("flows_new", flows_new, "flows", "entered in the flow tables"),
	K("flow_cache_hits", flow_cache_hits, "packets", "their flow was found in the RX lcore's flow cache (in front of the flow table: src/dataplane.c, flow_lookup_burst())"),
	K("flows_aged", flows_aged, "flows", "idle, removed from the flow tables"),
	K("flow_table_full", flow_table_full, "packets", "their flow found the flow table full (shared its class's overflow flow)"),
	K("link_changes", link_changes, "events", "link state changes seen"),
};
#undef K
#undef G
#undef D
const unsigned int pcr_n_port_counters = RTE_DIM(pcr_port_counters);
