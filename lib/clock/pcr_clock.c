/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_config.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_log.h>
#include <rte_seqcount.h>

#include "pcr_clock.h"

RTE_LOG_REGISTER(pcr_clock_logtype, pacer.clock, NOTICE);
#define CLOCK_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, pcr_clock_logtype, "pacer.clock: " fmt "\n", \
		##__VA_ARGS__)

/* Reads per sample; the tightest bracket is kept. */
#define CLOCK_TRIES 5
/* Samples taken by pcr_clock_init() and pcr_clock_nic_enable(). */
#define CLOCK_START_SAMPLES 16
/*
 * NIC fit: samples kept, the time the start-up samples span, and the first
 * refresh interval, doubled at each refresh up to the period: a fit from
 * 20 ms of samples has a slope good to some tens of ppm (its conversions
 * drift by that much per second), so the first refreshes come soon.
 */
#define NIC_WINDOW 32
#define NIC_START_NS 20000000u
#define NIC_FIRST_STEP_NS 10000000u
/* A measured TSC this far from the EAL's figure is not believed. */
#define CLOCK_SANE_PPM 50000.0
/* Outliers: beyond this many robust standard deviations. */
#define FIT_REJECT_SIGMA 5.0

/* ------------------------------------------------------------------ */
/* Fit                                                                 */

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
median(double *v, unsigned int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n & 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int
pcr_clock_fit(const struct pcr_clock_sample *s, unsigned int n, double floor,
	      struct pcr_clock_line *l)
{
	double dx[PCR_CLOCK_WINDOW_MAX], dy[PCR_CLOCK_WINDOW_MAX];
	double r[PCR_CLOCK_WINDOW_MAX], t[PCR_CLOCK_WINDOW_MAX];
	bool keep[PCR_CLOCK_WINDOW_MAX];
	double slope = 0, off = 0, ss = 0;
	unsigned int i, m = 0, iter;

	if (n < 2 || n > PCR_CLOCK_WINDOW_MAX)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		dx[i] = (double)(int64_t)(s[i].x - s[0].x);
		dy[i] = (double)(int64_t)(s[i].y - s[0].y);
		keep[i] = true;
	}
	for (iter = 0; iter < 8; iter++) {
		double mx = 0, my = 0, sxx = 0, sxy = 0, med, mad, thr;
		bool changed = false;

		m = 0;
		for (i = 0; i < n; i++)
			if (keep[i]) {
				mx += dx[i];
				my += dy[i];
				m++;
			}
		if (m < 2)
			return -EINVAL;
		mx /= m;
		my /= m;
		for (i = 0; i < n; i++)
			if (keep[i]) {
				sxx += (dx[i] - mx) * (dx[i] - mx);
				sxy += (dx[i] - mx) * (dy[i] - my);
			}
		if (!(sxx > 0))
			return -EINVAL;
		slope = sxy / sxx;
		off = my - slope * mx;
		m = 0;
		for (i = 0; i < n; i++) {
			r[i] = dy[i] - (off + slope * dx[i]);
			if (keep[i])
				t[m++] = r[i];
		}
		if (m < 4)
			break; /* too few to tell an outlier */
		med = median(t, m);
		for (i = 0, m = 0; i < n; i++)
			if (keep[i])
				t[m++] = fabs(r[i] - med);
		mad = median(t, m);
		thr = RTE_MAX(FIT_REJECT_SIGMA * 1.4826 * mad, floor);
		for (i = 0; i < n; i++)
			if (keep[i] && fabs(r[i] - med) > thr) {
				keep[i] = false;
				changed = true;
			}
		if (!changed)
			break;
	}
	m = 0;
	for (i = 0; i < n; i++)
		if (keep[i]) {
			ss += r[i] * r[i];
			m++;
		}
	l->x0 = s[0].x;
	l->y0 = s[0].y;
	l->off = off;
	l->slope = slope;
	l->rms = sqrt(ss / m);
	l->used = m;
	l->rejected = n - m;
	return 0;
}

uint64_t
pcr_clock_line_y(const struct pcr_clock_line *l, uint64_t x)
{
	double v = l->off + l->slope * (double)(int64_t)(x - l->x0);

	return l->y0 + (uint64_t)(int64_t)llrint(v);
}

/* A ring of the latest samples. */
struct track {
	struct pcr_clock_sample s[PCR_CLOCK_WINDOW_MAX];
	unsigned int cap, n, head;
};

static void
track_add(struct track *t, const struct pcr_clock_sample *s)
{
	t->s[t->head] = *s;
	t->head = (t->head + 1) % t->cap;
	if (t->n < t->cap)
		t->n++;
}

/* ------------------------------------------------------------------ */
/* TSC against CLOCK_MONOTONIC_RAW                                     */

static struct {
	struct pcr_clock_params p;
	struct track tr;          /* x = monotonic ns, y = TSC */
	struct pcr_clock_line line;
	uint64_t hz;              /* published: atomic */
	uint64_t hz_eal;
	double hz_fit;
	uint64_t updates;
	uint64_t next_ns;         /* monotonic time of the next sample */
	uint64_t nic_next_ns;     /* ... of the next NIC samples */
	uint64_t nic_step_ns;
	bool init;
} tsc;

static void
tsc_sample(struct pcr_clock_sample *s)
{
	unsigned int k;

	s->width = UINT64_MAX;
	for (k = 0; k < CLOCK_TRIES; k++) {
		uint64_t t1 = pcr_clock_src_tsc();
		uint64_t m = pcr_clock_src_mono_ns();
		uint64_t t2 = pcr_clock_src_tsc();

		if (t2 - t1 < s->width) {
			s->width = t2 - t1;
			s->x = m;
			s->y = t1 + (t2 - t1) / 2;
		}
	}
}

/* Refit over the window; the fitted frequency, or 0 if there is none. */
static double
tsc_refit(void)
{
	struct pcr_clock_line l;

	if (pcr_clock_fit(tsc.tr.s, tsc.tr.n, 2.0, &l) != 0 || !(l.slope > 0))
		return 0;
	tsc.line = l;
	tsc.hz_fit = l.slope * 1e9;
	return tsc.hz_fit;
}

void
pcr_clock_params_default(struct pcr_clock_params *p)
{
	p->calib_ms = PCR_CLOCK_CALIB_MS_DEFAULT;
	p->period_ms = PCR_CLOCK_PERIOD_MS_DEFAULT;
	p->window = PCR_CLOCK_WINDOW_DEFAULT;
	p->use_eal = false;
}

int
pcr_clock_init(const struct pcr_clock_params *p)
{
	struct pcr_clock_sample s;
	uint64_t start, step;
	double hz, ppm;
	unsigned int k;

	memset(&tsc, 0, sizeof(tsc));
	if (p != NULL)
		tsc.p = *p;
	else
		pcr_clock_params_default(&tsc.p);
	if (tsc.p.calib_ms < PCR_CLOCK_CALIB_MS_MIN ||
	    tsc.p.calib_ms > PCR_CLOCK_CALIB_MS_MAX || tsc.p.period_ms == 0 ||
	    tsc.p.window < CLOCK_START_SAMPLES ||
	    tsc.p.window > PCR_CLOCK_WINDOW_MAX)
		return -EINVAL;
	tsc.hz_eal = rte_get_tsc_hz();
	if (tsc.hz_eal == 0)
		return -ENODEV;
	tsc.tr.cap = tsc.p.window;

	/* CLOCK_START_SAMPLES samples evenly over the window */
	step = ((uint64_t)tsc.p.calib_ms * 1000000u + CLOCK_START_SAMPLES - 2) /
	       (CLOCK_START_SAMPLES - 1);
	start = pcr_clock_src_mono_ns();
	for (k = 0; k < CLOCK_START_SAMPLES; k++) {
		if (k != 0) {
			uint64_t due = start + k * step, now = pcr_clock_src_mono_ns();

			if ((int64_t)(due - now) > 0)
				pcr_clock_src_sleep_ns(due - now);
		}
		tsc_sample(&s);
		track_add(&tsc.tr, &s);
	}
	hz = tsc_refit();
	ppm = (hz - (double)tsc.hz_eal) / (double)tsc.hz_eal * 1e6;
	if (hz == 0 || fabs(ppm) > CLOCK_SANE_PPM) {
		CLOCK_LOG(WARNING,
			  "TSC measured at %.0f Hz against CLOCK_MONOTONIC_RAW, %.0f ppm from the EAL's %" PRIu64
			  " Hz: not believed, using the EAL's figure",
			  hz, ppm, tsc.hz_eal);
		tsc.tr.n = 0;
		tsc.tr.head = 0;
		tsc.hz_fit = 0;
		hz = (double)tsc.hz_eal;
	}
	if (tsc.p.use_eal)
		hz = (double)tsc.hz_eal;
	__atomic_store_n(&tsc.hz, (uint64_t)llround(hz), __ATOMIC_RELEASE);
	tsc.next_ns = pcr_clock_src_mono_ns() + (uint64_t)tsc.p.period_ms * 1000000u;
	tsc.init = true;
	return 0;
}

static void nic_poll_all(void);

bool
pcr_clock_poll(void)
{
	struct pcr_clock_sample s;
	uint64_t now = pcr_clock_src_mono_ns(), pub;
	double hz;

	if (!tsc.init)
		return false;
	if (tsc.nic_step_ns != 0 && (int64_t)(now - tsc.nic_next_ns) >= 0) {
		nic_poll_all();
		tsc.nic_step_ns = RTE_MIN(2 * tsc.nic_step_ns,
					  (uint64_t)tsc.p.period_ms * 1000000u);
		tsc.nic_next_ns = now + tsc.nic_step_ns;
	}
	if ((int64_t)(now - tsc.next_ns) < 0)
		return false;
	tsc.next_ns = now + (uint64_t)tsc.p.period_ms * 1000000u;
	tsc_sample(&s);
	track_add(&tsc.tr, &s);
	hz = tsc_refit();
	pub = __atomic_load_n(&tsc.hz, __ATOMIC_RELAXED);
	if (hz == 0 || tsc.p.use_eal ||
	    fabs(hz - (double)tsc.hz_eal) / (double)tsc.hz_eal * 1e6 > CLOCK_SANE_PPM ||
	    fabs(hz - (double)pub) / (double)pub * 1e9 <= PCR_CLOCK_REPUBLISH_PPB)
		return false;
	__atomic_store_n(&tsc.hz, (uint64_t)llround(hz), __ATOMIC_RELEASE);
	tsc.updates++;
	return true;
}

uint64_t
pcr_clock_tsc_hz(void)
{
	uint64_t hz = __atomic_load_n(&tsc.hz, __ATOMIC_ACQUIRE);

	return hz != 0 ? hz : rte_get_tsc_hz();
}

uint64_t
pcr_clock_tsc_hz_eal(void)
{
	return rte_get_tsc_hz();
}

double
pcr_clock_tsc_ppm(void)
{
	double eal = (double)pcr_clock_tsc_hz_eal();
	double hz = tsc.hz_fit != 0 ? tsc.hz_fit : (double)pcr_clock_tsc_hz();

	return eal == 0 ? 0 : (hz - eal) / eal * 1e6;
}

uint64_t
pcr_clock_cycles_to_ns(uint64_t cycles)
{
	return (uint64_t)((unsigned __int128)cycles * 1000000000u /
			  pcr_clock_tsc_hz());
}

uint64_t
pcr_clock_ns_to_cycles(uint64_t ns)
{
	return (uint64_t)((unsigned __int128)ns * pcr_clock_tsc_hz() /
			  1000000000u);
}

void
pcr_clock_info_get(struct pcr_clock_info *i)
{
	unsigned int k;
	uint64_t lo = UINT64_MAX, hi = 0;

	memset(i, 0, sizeof(*i));
	i->tsc_hz = pcr_clock_tsc_hz();
	i->tsc_hz_eal = pcr_clock_tsc_hz_eal();
	i->tsc_ppm = pcr_clock_tsc_ppm();
	i->tsc_hz_fit = tsc.hz_fit;
	i->rms_ns = tsc.line.slope > 0 ? tsc.line.rms / tsc.line.slope : 0;
	i->samples = tsc.tr.n;
	i->rejected = tsc.line.rejected;
	i->updates = tsc.updates;
	for (k = 0; k < tsc.tr.n; k++) {
		lo = RTE_MIN(lo, tsc.tr.s[k].x);
		hi = RTE_MAX(hi, tsc.tr.s[k].x);
	}
	i->span_ns = tsc.tr.n > 1 ? hi - lo : 0;
}

/* ------------------------------------------------------------------ */
/* NIC clocks against the TSC                                          */

struct nic_clock {
	bool enabled;
	unsigned int bits;
	uint64_t mask;
	bool have_raw;
	uint64_t last_raw;       /* last counter value read */
	uint64_t ext;            /* the counter unwrapped to 64 bits */
	uint64_t read_errors;
	struct track tr;         /* x = TSC, y = NIC (unwrapped) */
	rte_seqcount_t sc;       /* guards line and valid */
	struct pcr_clock_line line;
	bool valid;
};

static struct nic_clock nic[RTE_MAX_ETHPORTS];

/* One paired sample: the NIC read between two TSC reads, tightest kept. */
static int
nic_sample(uint16_t port, struct nic_clock *c, struct pcr_clock_sample *s)
{
	unsigned int k;

	s->width = UINT64_MAX;
	for (k = 0; k < CLOCK_TRIES; k++) {
		uint64_t t1, t2, raw = 0;
		int rc;

		t1 = pcr_clock_src_tsc();
		rc = rte_eth_read_clock(port, &raw);
		t2 = pcr_clock_src_tsc();
		if (rc != 0) {
			c->read_errors++;
			return rc;
		}
		raw &= c->mask;
		/* unwrap: reads come far more often than half a wrap */
		if (c->have_raw)
			c->ext += (raw - c->last_raw) & c->mask;
		else
			c->ext = raw;
		c->have_raw = true;
		c->last_raw = raw;
		if (t2 - t1 < s->width) {
			s->width = t2 - t1;
			s->x = t1 + (t2 - t1) / 2;
			s->y = c->ext;
		}
	}
	return 0;
}

static int
nic_refit(struct nic_clock *c)
{
	struct pcr_clock_line l;

	if (pcr_clock_fit(c->tr.s, c->tr.n, 2.0, &l) != 0 || !(l.slope > 0))
		return -EIO;
	rte_seqcount_write_begin(&c->sc);
	c->line = l;
	c->valid = true;
	rte_seqcount_write_end(&c->sc);
	return 0;
}

int
pcr_clock_nic_enable(uint16_t port, unsigned int bits)
{
	struct nic_clock *c;
	struct pcr_clock_sample s;
	uint64_t start;
	unsigned int k;
	int rc;

	if (port >= RTE_MAX_ETHPORTS || bits == 0 || bits > 64)
		return -EINVAL;
	c = &nic[port];
	memset(c, 0, sizeof(*c));
	rte_seqcount_init(&c->sc);
	c->bits = bits;
	c->mask = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
	c->tr.cap = NIC_WINDOW;
	start = pcr_clock_src_mono_ns();
	for (k = 0; k < CLOCK_START_SAMPLES; k++) {
		if (k != 0) {
			uint64_t due = start + k * (NIC_START_NS / (CLOCK_START_SAMPLES - 1));
			uint64_t now = pcr_clock_src_mono_ns();

			if ((int64_t)(due - now) > 0)
				pcr_clock_src_sleep_ns(due - now);
		}
		rc = nic_sample(port, c, &s);
		if (rc != 0)
			return rc == -ENOTSUP || rc == -ENODEV ? -ENOTSUP : rc;
		track_add(&c->tr, &s);
	}
	rc = nic_refit(c);
	if (rc != 0)
		return rc;
	c->enabled = true;
	tsc.nic_step_ns = NIC_FIRST_STEP_NS;
	tsc.nic_next_ns = pcr_clock_src_mono_ns() + NIC_FIRST_STEP_NS;
	return 0;
}

static void
nic_poll_all(void)
{
	struct pcr_clock_sample s;
	uint16_t p;

	for (p = 0; p < RTE_MAX_ETHPORTS; p++) {
		struct nic_clock *c = &nic[p];

		if (!c->enabled || nic_sample(p, c, &s) != 0)
			continue;
		track_add(&c->tr, &s);
		if (nic_refit(c) != 0)
			CLOCK_LOG(WARNING, "port %u: NIC clock samples fit no line", p);
	}
}

/* A consistent copy of @p c's fit; false if there is none. */
static inline bool
nic_line(uint16_t port, struct pcr_clock_line *l)
{
	const struct nic_clock *c;
	uint32_t sn;
	bool valid;

	if (port >= RTE_MAX_ETHPORTS)
		return false;
	c = &nic[port];
	do {
		sn = rte_seqcount_read_begin(&c->sc);
		*l = c->line;
		valid = c->valid;
	} while (rte_seqcount_read_retry(&c->sc, sn));
	return valid;
}

bool
pcr_clock_nic_valid(uint16_t port)
{
	struct pcr_clock_line l;

	return nic_line(port, &l);
}

uint64_t
pcr_clock_tsc_to_nic(uint16_t port, uint64_t t)
{
	struct pcr_clock_line l;

	if (!nic_line(port, &l))
		return 0;
	return pcr_clock_line_y(&l, t) & nic[port].mask;
}

uint64_t
pcr_clock_nic_to_tsc(uint16_t port, uint64_t v)
{
	struct pcr_clock_line l;
	unsigned int shift;
	int64_t d;

	if (!nic_line(port, &l))
		return 0;
	/* the difference from the fit's reference, sign-extended */
	shift = 64 - nic[port].bits;
	d = (int64_t)(((v - l.y0) & nic[port].mask) << shift) >> shift;
	return l.x0 + (uint64_t)(int64_t)llrint(((double)d - l.off) / l.slope);
}

int
pcr_clock_nic_info_get(uint16_t port, struct pcr_clock_nic_info *i)
{
	struct pcr_clock_line l;
	const struct nic_clock *c;

	if (port >= RTE_MAX_ETHPORTS)
		return -EINVAL;
	c = &nic[port];
	memset(i, 0, sizeof(*i));
	i->enabled = c->enabled;
	i->bits = c->bits;
	i->read_errors = c->read_errors;
	i->valid = nic_line(port, &l);
	if (!i->valid)
		return 0;
	i->ticks_per_cycle = l.slope;
	i->nic_hz = l.slope * (double)pcr_clock_tsc_hz();
	i->rms_ticks = l.rms;
	i->rms_ns = i->nic_hz > 0 ? l.rms / i->nic_hz * 1e9 : 0;
	i->samples = l.used + l.rejected;
	i->rejected = l.rejected;
	return 0;
}

void
pcr_clock_fini(void)
{
	memset(nic, 0, sizeof(nic));
	memset(&tsc, 0, sizeof(tsc));
}
