/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#ifndef PCR_CLOCK_H
#define PCR_CLOCK_H

/**
 * @file
 * The one place the pacer learns how fast the TSC runs.
 *
 * Every rate is turned into TSC cycles with pcr_clock_tsc_hz(). Today it
 * returns the EAL's estimate (rte_get_tsc_hz()); TSC calibration against
 * CLOCK_MONOTONIC_RAW and the NIC clock fit plug in here without touching
 * the callers.
 */

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Initialise the clock (after rte_eal_init()). @return 0 or -errno. */
int pcr_clock_init(void);

/** TSC cycles per second, as used for every rate. Never 0 after init. */
uint64_t pcr_clock_tsc_hz(void);

/** The EAL's own estimate of the TSC frequency. */
uint64_t pcr_clock_tsc_hz_eal(void);

/** Cycles to nanoseconds with the current frequency. */
uint64_t pcr_clock_cycles_to_ns(uint64_t cycles);

/** Nanoseconds to cycles with the current frequency. */
uint64_t pcr_clock_ns_to_cycles(uint64_t ns);

#ifdef __cplusplus
}
#endif

#endif /* PCR_CLOCK_H */
