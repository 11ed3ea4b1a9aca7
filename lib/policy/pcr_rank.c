/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#include <math.h>
#include <string.h>

#include "pcr_rank.h"

uint64_t
pcr_rank_bin_start(unsigned int i)
{
	unsigned int k, q;

	if (i == 0)
		return 0;
	if (i >= PCR_RANK_BINS)
		return UINT64_C(1) << PCR_RANK_OCTAVES;
	k = (i - 1) / 4;
	q = (i - 1) % 4;
	/* octaves 0 and 1 have fewer whole bytes than quarters: their
	 * quarters start on the byte the bin of that byte count gives */
	if (k < 2)
		return (UINT64_C(1) << k) + ((q << k) >> 2) +
		       (((q << k) & 3) != 0);
	return (UINT64_C(1) << k) + ((uint64_t)q << (k - 2));
}

/*
 * The distribution: octave k's share spread evenly over its bytes, so each
 * quarter bin of it holds a quarter of the share, and the survival
 * P(S > x) falls linearly across a bin. Points x_i are the bins' starts
 * (in real bytes: the quarters of octaves 0 and 1 are fractions), S_i the
 * survival there and I_i the integral of the survival from 0 to x_i (the
 * expected service a flow gets before x_i, summed over the sizes). Then
 * G(x_i) = max over j > i of (S_i - S_j) / (I_j - I_i): the probability of
 * completing by x_j per byte of service spent getting there.
 */
bool
pcr_rank_index(const struct pcr_rank_hist *h, double index[PCR_RANK_BINS])
{
	double x[PCR_RANK_BINS + 1], s[PCR_RANK_BINS + 1], in[PCR_RANK_BINS + 1];
	double total = 0;
	unsigned int i, j, k;

	for (k = 0; k < PCR_RANK_OCTAVES; k++)
		total += (double)h->n[k];
	if (total == 0) {
		for (i = 0; i < PCR_RANK_BINS; i++)
			index[i] = 0;
		return false;
	}
	x[0] = 0;
	s[0] = 1;
	in[0] = 0;
	for (i = 1; i <= PCR_RANK_BINS; i++) {
		double mass = 0; /* of bin i - 1 */

		if (i - 1 >= 1) {
			k = (i - 2) / 4;
			mass = (double)h->n[k] / total / 4;
		}
		x[i] = i < PCR_RANK_BINS ?
			       ldexp(1.0 + (double)((i - 1) % 4) / 4,
				     (int)((i - 1) / 4)) :
			       ldexp(1.0, PCR_RANK_OCTAVES);
		s[i] = s[i - 1] - mass;
		if (s[i] < 1e-12)
			s[i] = 0;
		in[i] = in[i - 1] + (s[i - 1] + s[i]) / 2 * (x[i] - x[i - 1]);
	}
	for (i = 0; i < PCR_RANK_BINS; i++) {
		double best = 0;

		if (s[i] > 0)
			for (j = i + 1; j <= PCR_RANK_BINS; j++) {
				double g = (s[i] - s[j]) / (in[j] - in[i]);

				if (g > best)
					best = g;
				if (s[j] == 0)
					break; /* nothing further to complete */
			}
		index[i] = best;
	}
	return true;
}

void
pcr_rank_table_reset(struct pcr_rank_table *t)
{
	unsigned int i;

	for (i = 0; i < PCR_RANK_BINS; i++)
		__atomic_store_n(&t->level[i], (uint8_t)PCR_RANK_LAST,
				 __ATOMIC_RELAXED);
}

void
pcr_rank_table_build(struct pcr_rank_table *t, const struct pcr_rank_hist *h)
{
	double index[PCR_RANK_BINS], top = 0;
	unsigned int i;

	if (!pcr_rank_index(h, index)) {
		pcr_rank_table_reset(t);
		return;
	}
	for (i = 0; i < PCR_RANK_BINS; i++)
		if (index[i] > top)
			top = index[i];
	for (i = 0; i < PCR_RANK_BINS; i++) {
		unsigned int lv = PCR_RANK_LAST;

		if (index[i] > 0) {
			double q = floor(4 * log2(top / index[i]));

			lv = PCR_RANK_FIRST +
			     (q < PCR_RANK_LAST - 1 - PCR_RANK_FIRST ?
				      (unsigned int)q :
				      PCR_RANK_LAST - 1 - PCR_RANK_FIRST);
		}
		__atomic_store_n(&t->level[i], (uint8_t)lv, __ATOMIC_RELAXED);
	}
}
