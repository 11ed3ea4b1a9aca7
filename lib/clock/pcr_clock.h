/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#ifndef PCR_CLOCK_H
#define PCR_CLOCK_H

/**
 * @file
 * The pacer's clocks: the TSC measured against CLOCK_MONOTONIC_RAW, and
 * each NIC's own clock fitted to the TSC.
 *
 * The fast path counts time in TSC cycles. What a cycle is worth comes
 * from here, not from the EAL: the EAL estimates the TSC frequency once
 * at start and rounds it to 10 MHz (on the machine this was written on it
 * says 2.6 GHz for a TSC that runs at 2.596136 GHz, 1486 ppm off, which
 * would be 1486 ppm of rate error on every policy). pcr_clock_init()
 * measures the frequency against CLOCK_MONOTONIC_RAW over a short window;
 * pcr_clock_poll(), called periodically from the control lcore, adds a
 * sample each period and refits over a sliding window of samples, so the
 * figure keeps improving and follows drift. The frequency is one 64-bit
 * word, published with an atomic store: readers on any lcore never see a
 * torn value.
 *
 * A NIC that schedules transmissions itself (RTE_ETH_TX_OFFLOAD_SEND_ON_
 * TIMESTAMP) counts time in its own clock, read with rte_eth_read_clock().
 * pcr_clock_nic_enable() fits NIC = a * TSC + b by least squares over
 * paired samples (each NIC read bracketed by two TSC reads; the tightest
 * bracket of a few tries is kept; outliers rejected) and pcr_clock_poll()
 * refreshes the fit. The fit is published under a sequence counter
 * (rte_seqcount): readers retry, never block, never see a torn fit.
 *
 * Every read of a raw clock goes through pcr_clock_src_*() (pcr_clock_src.c)
 * or rte_eth_read_clock(), so tests replace them at link time
 * (-Wl,--wrap=...) and drive the measurements with known clocks.
 */

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Raw sources (pcr_clock_src.c); tests wrap them.                      */

/** The TSC, serialised (rte_rdtsc_precise()). */
uint64_t pcr_clock_src_tsc(void);
/** CLOCK_MONOTONIC_RAW in nanoseconds. */
uint64_t pcr_clock_src_mono_ns(void);
/** Sleep about @p ns nanoseconds. */
void pcr_clock_src_sleep_ns(uint64_t ns);

/* ------------------------------------------------------------------ */
/* Least-squares line fit with outlier rejection                       */

/** One paired reading: @p y (the other clock) read at @p x (reference). */
struct pcr_clock_sample {
	uint64_t x;
	uint64_t y;     /**< unwrapped: 64-bit modular, differences signed */
	uint64_t width; /**< bracket width, in x units (0 = exact) */
};

/** y = y0 + off + slope * (x - x0), over the samples kept. */
struct pcr_clock_line {
	uint64_t x0, y0;
	double off;
	double slope;
	double rms;            /**< residual of the samples kept, y units */
	unsigned int used;     /**< samples kept */
	unsigned int rejected; /**< outliers left out */
};

/**
 * Fit a line through @p n samples (differences between samples must fit
 * in 63 bits). Samples whose residual is more than 5 robust standard
 * deviations (1.4826 x MAD) from the fit, and more than @p floor y units,
 * are rejected and the fit repeated, until none is left to reject.
 * @return 0, or -EINVAL with fewer than 2 samples (or 2 at the same x).
 */
int pcr_clock_fit(const struct pcr_clock_sample *s, unsigned int n,
		  double floor, struct pcr_clock_line *l);

/** The fitted y at @p x (64-bit modular). */
uint64_t pcr_clock_line_y(const struct pcr_clock_line *l, uint64_t x);

/* ------------------------------------------------------------------ */
/* The TSC                                                              */

struct pcr_clock_params {
	uint32_t calib_ms;   /**< start-up measurement window [100] */
	uint32_t period_ms;  /**< one more sample this often [1000] */
	uint32_t window;     /**< samples kept for the running fit [64] */
	bool use_eal;        /**< measure and report, but pace with the
			      *   EAL's estimate (for comparison) [false] */
};

#define PCR_CLOCK_CALIB_MS_DEFAULT 100
#define PCR_CLOCK_PERIOD_MS_DEFAULT 1000
#define PCR_CLOCK_WINDOW_DEFAULT 64
#define PCR_CLOCK_WINDOW_MAX 256
#define PCR_CLOCK_CALIB_MS_MIN 10
#define PCR_CLOCK_CALIB_MS_MAX 10000

void pcr_clock_params_default(struct pcr_clock_params *p);

/**
 * Measure the TSC (after rte_eal_init()): blocks for about
 * @p p->calib_ms. @p p may be NULL for the defaults.
 * @return 0, or -EINVAL (bad parameters), -ENODEV (no TSC frequency).
 */
int pcr_clock_init(const struct pcr_clock_params *p);

/**
 * Control lcore, every few milliseconds: when a period is due, take one
 * TSC sample and one per enabled NIC, refit and publish.
 * @return true when the TSC frequency used for rates was republished
 *   (it changed by more than PCR_CLOCK_REPUBLISH_PPB): rates turned into
 *   cycles should be derived again.
 */
bool pcr_clock_poll(void);

/** Smallest change of the measured frequency that is republished. */
#define PCR_CLOCK_REPUBLISH_PPB 20

/** TSC cycles per second, as used for every rate (the measured value). */
uint64_t pcr_clock_tsc_hz(void);

/** The EAL's own estimate (rte_get_tsc_hz()). */
uint64_t pcr_clock_tsc_hz_eal(void);

/** (measured - EAL) / EAL, in parts per million (the latest fit). */
double pcr_clock_tsc_ppm(void);

/** Cycles to nanoseconds with the current frequency. */
uint64_t pcr_clock_cycles_to_ns(uint64_t cycles);

/** Nanoseconds to cycles with the current frequency. */
uint64_t pcr_clock_ns_to_cycles(uint64_t ns);

struct pcr_clock_info {
	uint64_t tsc_hz;       /**< published */
	uint64_t tsc_hz_eal;
	double tsc_ppm;
	double tsc_hz_fit;     /**< latest fit, before hysteresis */
	double rms_ns;         /**< fit residual, ns */
	uint64_t span_ns;      /**< time the kept samples span */
	unsigned int samples;  /**< kept in the window */
	unsigned int rejected; /**< outliers in the latest fit */
	uint64_t updates;      /**< times tsc_hz was republished */
};

void pcr_clock_info_get(struct pcr_clock_info *i);

/* ------------------------------------------------------------------ */
/* NIC clocks                                                           */

/**
 * Fit port @p port's clock (a @p bits wide counter, 1..64; ethdev does
 * not say, 64 for mlx5) to the TSC: a few ms of samples now, refreshed by
 * pcr_clock_poll(). Control lcore.
 * @return 0, -ENOTSUP when the PMD cannot read its clock, -EINVAL, or
 *   -EIO when the samples do not fit a line.
 */
int pcr_clock_nic_enable(uint16_t port, unsigned int bits);

/** A fit is published for @p port. Any lcore. */
bool pcr_clock_nic_valid(uint16_t port);

/** NIC time (masked to the counter width) at TSC @p tsc. Any lcore. */
uint64_t pcr_clock_tsc_to_nic(uint16_t port, uint64_t tsc);

/** TSC at NIC time @p nic (within half the counter's range of the fit). */
uint64_t pcr_clock_nic_to_tsc(uint16_t port, uint64_t nic);

struct pcr_clock_nic_info {
	bool enabled;
	bool valid;
	unsigned int bits;
	double ticks_per_cycle; /**< the fit's slope */
	double nic_hz;          /**< slope x measured TSC frequency */
	double rms_ticks;       /**< fit residual */
	double rms_ns;
	unsigned int samples;
	unsigned int rejected;
	uint64_t read_errors;   /**< rte_eth_read_clock() failures */
};

int pcr_clock_nic_info_get(uint16_t port, struct pcr_clock_nic_info *i);

/** Forget every NIC (at port close) and reset the TSC state. */
void pcr_clock_fini(void);

#ifdef __cplusplus
}
#endif

#endif /* PCR_CLOCK_H */
