/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pcr_cal.h"

/* The bucket width and count for @p p: false if no width fits. */
static bool
cal_shape(const struct pcr_cal_params *p, uint32_t *shift_out,
	  uint32_t *nb_shift_out)
{
	uint32_t shift = PCR_CAL_WIDTH_SHIFT_MIN, nb_shift;
	uint64_t need;

	while (shift < PCR_CAL_WIDTH_SHIFT_MAX &&
	       (UINT64_C(1) << shift) / PCR_CAL_BUCKET_FRAMES < p->frame_cost)
		shift++;
	for (;; shift++) {
		if (shift > PCR_CAL_WIDTH_SHIFT_MAX)
			return false;
		/* buckets for back + reach, rounded up, and two between the
		 * ends so that the oldest and the newest never share one */
		need = ((p->back + p->reach) >> shift) + 3;
		if (need <= PCR_CAL_BUCKETS_MAX)
			break;
	}
	for (nb_shift = 0; (UINT64_C(1) << nb_shift) < need; nb_shift++)
		;
	*shift_out = shift;
	*nb_shift_out = nb_shift;
	return true;
}

bool
pcr_cal_suits(const struct pcr_cal *c, const struct pcr_cal_params *p)
{
	uint32_t shift, nb_shift;

	return cal_shape(p, &shift, &nb_shift) && shift == c->shift &&
	       c->reach >= p->reach && c->back >= p->back;
}

struct pcr_cal *
pcr_cal_create(const struct pcr_cal_params *p)
{
	struct pcr_cal *c;
	uint32_t shift, nb_shift;

	if (!cal_shape(p, &shift, &nb_shift)) {
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	if (posix_memalign((void **)&c->bucket, 64,
			   sizeof(uint64_t) << nb_shift) != 0) {
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	/* touched now: the fast path takes no page fault on a new bucket */
	memset(c->bucket, 0, sizeof(uint64_t) << nb_shift);
	c->shift = shift;
	c->nb_shift = nb_shift;
	c->width = UINT64_C(1) << shift;
	c->mask = (UINT64_C(1) << nb_shift) - 1;
	c->back = p->back;
	/* whatever the rounding gave beyond what was asked, the reach uses */
	c->reach = ((c->mask + 1) << shift) - p->back - 2 * c->width;
	return c;
}

void
pcr_cal_copy(struct pcr_cal *dst, const struct pcr_cal *src, uint64_t now)
{
	uint64_t a = pcr_cal_abs_(src, now - src->back);
	uint64_t stop = pcr_cal_abs_(src, now + src->reach) + 1;
	uint64_t lo = pcr_cal_abs_(dst, now - dst->back);
	uint64_t hi = pcr_cal_abs_(dst, now + dst->reach) + 1;

	/* a search may start anywhere from now less the credit */
	dst->hint = pcr_cal_abs_(dst, now - dst->back);
	for (; pcr_cal_before_(src, a, stop); a++) {
		uint64_t f = pcr_cal_fill_(src, src->bucket[a & src->mask], a);
		uint64_t t = a << src->shift, end = t + f;

		/* the reserved time, from the bucket's start on */
		while ((int64_t)(end - t) > 0) {
			uint64_t k = pcr_cal_abs_(dst, t);
			uint64_t kend = (k + 1) << dst->shift;
			uint64_t part = (int64_t)(kend - end) < 0 ? kend - t :
								    end - t;
			uint64_t *s = pcr_cal_slot_(dst, k);
			uint64_t g = pcr_cal_fill_(dst, *s, k) + part;

			/* only within the new ring's own span */
			if (!pcr_cal_before_(dst, k, lo) &&
			    pcr_cal_before_(dst, k, hi))
				*s = pcr_cal_tag_(dst, k) |
				     (g < dst->width ? g : dst->width);
			t += part;
		}
	}
}

void
pcr_cal_free(struct pcr_cal *c)
{
	if (c == NULL)
		return;
	free(c->bucket);
	free(c);
}

uint64_t
pcr_cal_bucket_bytes(const struct pcr_cal *c, uint64_t fpb)
{
	if (fpb == 0)
		return 0;
	/* fpb is 48.16 fixed point */
	return (uint64_t)(((unsigned __int128)c->width << 16) / fpb);
}
