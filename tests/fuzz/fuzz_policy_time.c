/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * The time arithmetic of lib/policy (pcr_policy.h), as the RX path uses
 * it: a private flow policy (pcr_policy_allow + pcr_policy_after) and a
 * shared one (pcr_policy_stamp_shared + pcr_policy_refresh, stamped both
 * by compare-and-swap and as its one writer, the two kept equal), driven by a
 * packet sequence from the input. Rates 1 bit/s .. 400 Gbit/s (log-
 * spread), TSC 100 MHz .. 10 GHz, bursts 0 .. 1 GiB, lengths 0 .. 65535,
 * gaps up to 2^54 cycles, an epoch and a start that put both the TSC and
 * fine time (2^56 cycles) next to their wrap-around.
 *
 * Every result is compared with a model in exact 128-bit arithmetic over
 * unwrapped time (the same rules, nothing modulo 2^64), so any overflow
 * or wrap-unsafe comparison shows as a difference. Also checked: no cost
 * or burst below the exact rate (cost x bps >= bytes x 8 x tsc_hz x 2^8),
 * no cost more than a rounding above it, no departure before now, none
 * more than PCR_POLICY_AHEAD_MAX ahead, and, for the flow, tbf
 * conformance: the costs of packets i..j never exceed d_j - d_i plus one
 * bucket.
 */

#include <inttypes.h>
#include <string.h>

#include "fuzz.h"
#include "pcr_policy.h"

#define MAX_PKTS 512

typedef __int128 i128;
typedef unsigned __int128 u128;

static i128
max128(i128 a, i128 b)
{
	return a > b ? a : b;
}

/* the bucket a packet of @p cost may use: max(burst, cost) */
static uint64_t
burst_u_of(const struct pcr_rate *r, uint64_t cost)
{
	return r->burst > cost ? r->burst : cost;
}

/* pcr_policy_allow() in exact arithmetic: max(empty + min(c, b), now), capped */
static i128
model_allow(i128 empty, i128 now, i128 cost, i128 burst)
{
	i128 d = max128(empty + (cost < burst ? cost : burst), now);

	return d - now > (i128)PCR_POLICY_AHEAD_MAX ?
		       now + (i128)PCR_POLICY_AHEAD_MAX :
		       d;
}

/* pcr_policy_after(): max(empty, dep - b) + c, capped */
static i128
model_after(i128 empty, i128 dep, i128 cost, i128 burst)
{
	i128 e = max128(empty, dep - burst) + cost;

	return e - dep > (i128)PCR_POLICY_AHEAD_MAX ?
		       dep + (i128)PCR_POLICY_AHEAD_MAX :
		       e;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pcr_fuzz_in in = { data, size };
	static i128 dep_u[MAX_PKTS], cost_u[MAX_PKTS];
	static i128 burst_u[MAX_PKTS];
	struct pcr_rate r;
	struct pcr_policy sp, sp1;
	uint64_t tsc_hz, bps, burst_bytes, epoch, tsc, flow_empty, fine0;
	i128 m_flow, m_shared, now_u, elapsed;
	unsigned int bits, n = 0, i, j;
	bool clamped = false;
	u128 exact;
	int rc;

	tsc_hz = pcr_fuzz_range(&in, 5, 100000000ull, 10000000000ull);
	bits = (unsigned int)pcr_fuzz_take(&in, 1) % 40;
	bps = 1 + (pcr_fuzz_take(&in, 5) & ((1ull << bits) - 1));
	if (bps > 400000000000ull)
		bps = 400000000000ull;
	burst_bytes = pcr_fuzz_take(&in, 4);
	burst_bytes >>= pcr_fuzz_take(&in, 1) % 33;
	if (burst_bytes > (1ull << 30))
		burst_bytes = 1ull << 30;
	/* TSC next to 2^64; fine time next to 2^64 (2^56 cycles) or not */
	epoch = UINT64_MAX - pcr_fuzz_take(&in, 4);
	elapsed = (pcr_fuzz_take(&in, 1) & 1) ?
			  (i128)(1ull << 56) - (i128)pcr_fuzz_take(&in, 4) :
			  (i128)pcr_fuzz_take(&in, 2);

	rc = pcr_rate_init(&r, bps, burst_bytes, tsc_hz);
	PCR_FUZZ_CHECK(rc == 0, "rate %" PRIu64 " tsc %" PRIu64 ": %d", bps,
		       tsc_hz, rc);
	PCR_FUZZ_CHECK(!pcr_rate_unlimited(&r), "rate %" PRIu64 " unlimited",
		       bps);
	/* the burst: never below the exact credit, unless capped */
	exact = (u128)burst_bytes * 8 * tsc_hz << PCR_FINE_SHIFT;
	PCR_FUZZ_CHECK(r.burst <= PCR_POLICY_AHEAD_MAX &&
			       ((u128)r.burst * bps >= exact ||
				r.burst == PCR_POLICY_AHEAD_MAX),
		       "burst %" PRIu64 " B at %" PRIu64 " bit/s: %" PRIu64
		       " fine units",
		       burst_bytes, bps, r.burst);

	tsc = epoch + (uint64_t)elapsed;
	now_u = elapsed << PCR_FINE_SHIFT;
	fine0 = pcr_fine(tsc, epoch);
	PCR_FUZZ_CHECK(fine0 == (uint64_t)now_u, "fine time");
	pcr_policy_init(&sp, fine0);
	sp1 = sp;
	flow_empty = sp.empty;
	PCR_FUZZ_CHECK(flow_empty == fine0 - PCR_POLICY_IDLE, "init");
	m_flow = m_shared = now_u - (i128)PCR_POLICY_IDLE;

	while (in.n > 0 && n < MAX_PKTS) {
		uint32_t len = (uint32_t)pcr_fuzz_take(&in, 2);
		unsigned int ctl = (unsigned int)pcr_fuzz_take(&in, 1);
		uint64_t dt = pcr_fuzz_take(&in, 3) << (ctl % 31);
		uint64_t now, cost, dep, sdep;
		i128 md, msd;

		tsc += dt;
		now_u += (i128)dt << PCR_FINE_SHIFT;
		now = pcr_fine(tsc, epoch);
		PCR_FUZZ_CHECK(now == (uint64_t)now_u, "fine time wraps wrong");

		/* cost against the exact rate */
		cost = pcr_rate_cost(&r, len);
		exact = (u128)len * 8 * tsc_hz << PCR_FINE_SHIFT;
		PCR_FUZZ_CHECK((u128)cost * bps >= exact,
			       "%u B at %" PRIu64 " bit/s, tsc %" PRIu64
			       ": cost %" PRIu64 " below the exact rate",
			       len, bps, tsc_hz, cost);
		PCR_FUZZ_CHECK((u128)cost * bps <=
				       exact + (u128)bps * (len / 65536 + 2),
			       "%u B at %" PRIu64 " bit/s: cost %" PRIu64
			       " more than a rounding above the rate",
			       len, bps, cost);

		/* the flow policy, as the RX path runs it */
		dep = pcr_policy_allow(flow_empty, now, cost, r.burst);
		md = model_allow(m_flow, now_u, cost, r.burst);
		PCR_FUZZ_CHECK(dep == (uint64_t)md,
			       "packet %u: flow departure %" PRIu64
			       " != exact %" PRIu64,
			       n, dep, (uint64_t)md);
		PCR_FUZZ_CHECK(md >= now_u, "departure in the past");
		PCR_FUZZ_CHECK(md - now_u <= (i128)PCR_POLICY_AHEAD_MAX,
			       "departure beyond the bound");
		if (max128(m_flow + (cost < r.burst ? cost : r.burst), now_u) != md)
			clamped = true;
		flow_empty = pcr_policy_after(flow_empty, dep, cost, r.burst);
		if (max128(m_flow, md - r.burst) + cost - md >
		    (i128)PCR_POLICY_AHEAD_MAX)
			clamped = true;
		m_flow = model_after(m_flow, md, cost, r.burst);
		PCR_FUZZ_CHECK(flow_empty == (uint64_t)m_flow,
			       "packet %u: flow bucket (empty) %" PRIu64
			       " != exact %" PRIu64,
			       n, flow_empty, (uint64_t)m_flow);
		dep_u[n] = md;
		cost_u[n] = cost;
		burst_u[n] = burst_u_of(&r, cost);

		/* a shared policy, refreshed by housekeeping now and then */
		if (ctl & 0x80) {
			pcr_policy_refresh(&sp, now);
			pcr_policy_refresh(&sp1, now);
			if (now_u - m_shared > ((i128)1 << 60))
				m_shared = now_u - ((i128)1 << 59);
			PCR_FUZZ_CHECK(sp.empty == (uint64_t)m_shared,
				       "refresh: %" PRIu64 " != %" PRIu64,
				       sp.empty, (uint64_t)m_shared);
		}
		sdep = pcr_policy_stamp_shared(&sp, &r, now, len, false);
		PCR_FUZZ_CHECK(pcr_policy_stamp_shared(&sp1, &r, now, len, true) ==
				       sdep && sp1.empty == sp.empty,
			       "packet %u: one-writer stamp differs", n);
		msd = model_allow(m_shared, now_u, cost, r.burst);
		m_shared = model_after(m_shared, msd, cost, r.burst);
		PCR_FUZZ_CHECK(sdep == (uint64_t)msd && sp.empty == (uint64_t)m_shared,
			       "packet %u: shared departure %" PRIu64
			       " != exact %" PRIu64,
			       n, sdep, (uint64_t)msd);
		PCR_FUZZ_CHECK(msd >= now_u, "shared departure in the past");
		n++;
	}

	/* tbf conformance of the flow: costs of i..j <= d_j - d_i + bucket */
	if (!clamped)
		for (j = 0; j < n; j++) {
			i128 sum = 0;

			for (i = j + 1; i-- > 0;) {
				sum += cost_u[i];
				PCR_FUZZ_CHECK(sum <= dep_u[j] - dep_u[i] + burst_u[j],
					       "packets %u..%u: %" PRIu64
					       " fine units of cost in %" PRIu64,
					       i, j, (uint64_t)sum,
					       (uint64_t)(dep_u[j] - dep_u[i]));
			}
		}
	return 0;
}
