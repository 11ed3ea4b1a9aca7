/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#ifndef PCR_COUNTERS_H
#define PCR_COUNTERS_H

/**
 * @file
 * The port counters' table (counters.c): every counter of a port once,
 * with its name, unit and kind; every face renders a port's counters from
 * it.
 */

#include <stddef.h>
#include <stdint.h>

#include "snapshot.h"

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

#endif /* PCR_COUNTERS_H */
