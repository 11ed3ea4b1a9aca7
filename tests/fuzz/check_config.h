/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#ifndef PCR_FUZZ_CHECK_CONFIG_H
#define PCR_FUZZ_CHECK_CONFIG_H

/**
 * @file
 * A configuration within the bounds pacer(8) documents for each option:
 * what fuzz_config checks of every file the loader accepts, and fuzz_cli
 * of the configuration after every command.
 */

#include <string.h>

#include "fuzz.h"
#include "pacer.h"

static inline void
check_config(const struct pcr_config *c)
{
	unsigned int i, j;

	PCR_FUZZ_CHECK(c->burst <= (1ull << 30), "burst %lu",
		       (unsigned long)c->burst);
	PCR_FUZZ_CHECK(c->wire_overhead <= 256, "wire-overhead");
	PCR_FUZZ_CHECK(c->slot_ns >= 250 && c->slot_ns <= 1000000, "slot");
	PCR_FUZZ_CHECK(c->horizon_ms >= 1 && c->horizon_ms <= 60000, "horizon");
	PCR_FUZZ_CHECK(c->horizon_policy == PCR_WHEEL_HORIZON_DROP ||
			       c->horizon_policy == PCR_WHEEL_HORIZON_CAP,
		       "horizon-policy");
	PCR_FUZZ_CHECK(c->mbufs <= (1ull << 26), "mbufs");
	PCR_FUZZ_CHECK(c->tx_hold_ms >= 1 && c->tx_hold_ms <= 600000, "tx-hold");
	PCR_FUZZ_CHECK(c->max_flows >= 8 && c->max_flows <= (1ull << 28),
		       "max-flows");
	PCR_FUZZ_CHECK(c->rxd >= 32 && c->rxd <= 32768 && c->txd >= 32 &&
			       c->txd <= 32768,
		       "rxd/txd");
	PCR_FUZZ_CHECK(c->rate_bps <= 10000000000000ull &&
			       c->flow_rate_bps <= 10000000000000ull,
		       "rate");
	PCR_FUZZ_CHECK(c->n_classes >= 1 && c->n_classes <= PCR_MAX_CLASSES,
		       "n_classes %u", c->n_classes);
	PCR_FUZZ_CHECK(strcmp(c->classes[0].name, "default") == 0 &&
			       c->classes[0].match.any,
		       "class 0 is not the default");
	for (i = 0; i < c->n_classes; i++) {
		const struct pcr_class_conf *cl = &c->classes[i];
		size_t n = strnlen(cl->name, sizeof(cl->name));

		PCR_FUZZ_CHECK(n > 0 && n < sizeof(cl->name) &&
				       strpbrk(cl->name, " \t\";#[]=") == NULL,
			       "class %u name", i);
		PCR_FUZZ_CHECK(strnlen(cl->match_str, sizeof(cl->match_str)) <
				       sizeof(cl->match_str),
			       "class %u match_str", i);
		/* a deleted class keeps its index; its name may come back */
		for (j = 0; j < i; j++)
			PCR_FUZZ_CHECK(cl->deleted || c->classes[j].deleted ||
					       strcmp(c->classes[j].name, cl->name) != 0,
				       "class '%s' twice", cl->name);
	}
	PCR_FUZZ_CHECK(c->max_port_named >= -1 &&
			       c->max_port_named < PCR_MAX_PORTS,
		       "max_port_named %d", c->max_port_named);
	for (i = 0; i < PCR_MAX_PORTS; i++)
		PCR_FUZZ_CHECK(c->port_rate_set[i] ||
				       c->port_rate_bps[i] == 0,
			       "port %u rate without set", i);
}

#endif /* PCR_FUZZ_CHECK_CONFIG_H */
