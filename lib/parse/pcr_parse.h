/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#ifndef PCR_PARSE_H
#define PCR_PARSE_H

/**
 * @file
 * The values people type, in one grammar for pacer (options, the
 * configuration file, the prompt) and the tools (pacer-pcapgen,
 * pacer-pcapstat): integers, sizes and rates, with the reason when one is
 * refused. No DPDK: libc and libm only.
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Parse a rate as tc writes it: a number (decimals allowed) and a unit:
 * bit, kbit, mbit, gbit, tbit (powers of 1000), kibit, mibit, gibit, tibit
 * (powers of 1024), bps, kbps, mbps, gbps, tbps (bytes per second), or no
 * unit (bits per second). "0" and "unlimited" mean no limit (0).
 * @return 0, or -EINVAL with why in @p err.
 */
int pcr_rate_parse(const char *s, uint64_t *bps, char *err, size_t errlen);

/**
 * Parse a byte count: an integer with an optional unit b, k/kb (1024),
 * m/mb (1024^2), g/gb (1024^3), as tc's burst.
 * @return 0, or -EINVAL with why in @p err.
 */
int pcr_size_parse(const char *s, uint64_t *bytes, char *err, size_t errlen);

/**
 * Parse a decimal unsigned integer in [min, max].
 * @return 0, or -EINVAL with why in @p err.
 */
int pcr_u64_parse(const char *s, uint64_t min, uint64_t max, uint64_t *v,
		  char *err, size_t errlen);

/** Format a rate for humans, tc style ("10Mbit", "2.5Gbit", "unlimited"). */
int pcr_rate_format(uint64_t bps, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* PCR_PARSE_H */
