/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pcr_cal.h"

struct pcr_cal *
pcr_cal_create(const struct pcr_cal_params *p)
{
	struct pcr_cal *c;
	uint32_t shift = PCR_CAL_WIDTH_SHIFT_MIN, nb_shift;
	uint64_t need;

	while (shift < PCR_CAL_WIDTH_SHIFT_MAX &&
	       (UINT64_C(1) << shift) / PCR_CAL_BUCKET_FRAMES < p->frame_cost)
		shift++;
	for (;; shift++) {
		if (shift > PCR_CAL_WIDTH_SHIFT_MAX) {
			errno = EINVAL;
			return NULL;
		}
		/* buckets for back + reach, rounded up, and two between the
		 * ends so that the oldest and the newest never share one */
		need = ((p->back + p->reach) >> shift) + 3;
		if (need <= PCR_CAL_BUCKETS_MAX)
			break;
	}
	for (nb_shift = 0; (UINT64_C(1) << nb_shift) < need; nb_shift++)
		;
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
