/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#ifndef PCR_TOOL_H
#define PCR_TOOL_H

/**
 * @file
 * What pacer-pcapgen, pacer-pcapstat and pacer-bench-jitter share: error
 * exits and number parsing, with messages prefixed by the tool's name.
 * Each tool defines pcr_tool_name.
 */

#include <stdint.h>

/** Exit status for bad usage. */
#define EXIT_USAGE 2

/** The tool's name, for messages ("pacer-pcapgen"). */
extern const char pcr_tool_name[];

/** Print "NAME: message" and exit with @p status. */
void fail(int status, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 2, 3)));

/** Print "NAME: message (see --help)" and exit EXIT_USAGE. */
void usage_error(const char *fmt, ...)
	__attribute__((noreturn, format(printf, 1, 2)));

/** Unsigned decimal in [min, max], or a usage error naming option @p opt. */
uint64_t parse_u64(const char *opt, const char *s, uint64_t min, uint64_t max);

/** A number (decimals allowed) in [min, max], or the usage error
 *  "OPT S: not a number in MIN .. MAX". */
double parse_double(const char *opt, const char *s, double min, double max);

#endif /* PCR_TOOL_H */
