/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * pacer-isp-check: load LibreQoS's network.json and/or ShapedDevices.csv
 * as pacer would (lib/isp) and say what they hold, or the first thing
 * wrong with them. An operator checks the files before pacer sees them;
 * tests read the summary (one "name: value" a line) and the load time.
 * No DPDK here.
 */

#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pcr_isp.h"
#include "pcr_tool.h"

#define PROG "pacer-isp-check"
const char pcr_tool_name[] = PROG;

enum {
	OPT_NETWORK = 'n',
	OPT_SUBSCRIBERS = 's',
	OPT_HELP = 'h',
};

static const struct option long_opts[] = {
	{"network", required_argument, NULL, OPT_NETWORK},
	{"subscribers", required_argument, NULL, OPT_SUBSCRIBERS},
	{"help", no_argument, NULL, OPT_HELP},
	{NULL, 0, NULL, 0},
};

static void
usage(FILE *f)
{
	fprintf(f,
		"Usage: " PROG " [--network FILE] [--subscribers FILE]\n"
		"Load an ISP's tree from LibreQoS's files as pacer does and summarise it,\n"
		"or say the first thing wrong (FILE:LINE: FIELD 'VALUE': why).\n\n"
		"  -n, --network FILE      LibreQoS's network.json: the interior nodes\n"
		"  -s, --subscribers FILE  LibreQoS's ShapedDevices.csv: the circuits; their\n"
		"                          Parent Node must be a node of --network, or empty\n"
		"                          (without --network: a flat ISP)\n"
		"  -h, --help              this text\n\n"
		"The summary: nodes (per depth), circuits, devices, IPv4 and IPv6 prefixes,\n"
		"levels (of nodes, and circuits under them), each top-level node's capacity\n"
		"against the sum of its circuits' Download/Upload Max (oversubscription),\n"
		"and the load time in ms.\n"
		"Exit status: 0 the files are good, 2 a bad file or bad options.\n"
		"Example: " PROG " --network network.json --subscribers ShapedDevices.csv\n");
}

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* @p bps as Mbps, exactly: "100", "12.5" */
static const char *
mbps(char *buf, size_t size, uint64_t bps)
{
	uint64_t frac = bps % 1000000;
	size_t n;

	snprintf(buf, size, "%" PRIu64, bps / 1000000);
	if (frac != 0) {
		n = strlen(buf);
		snprintf(buf + n, size - n, ".%06" PRIu64, frac);
		n = strlen(buf);
		while (buf[n - 1] == '0')
			buf[--n] = '\0';
	}
	return buf;
}

/* what one top-level node holds */
struct top_sum {
	uint64_t circuits;
	uint64_t down_max_bps;
	uint64_t up_max_bps;
};

static void
summary(const struct pcr_isp *isp, bool have_net, bool have_subs)
{
	struct top_sum *sum, root = {0, 0, 0};
	uint32_t *top = NULL, *per_depth, i, levels;
	char a[32], b[32], c[32], d[32];

	per_depth = calloc((size_t)isp->node_depth_max + 1, sizeof(*per_depth));
	top = malloc(((size_t)isp->n_nodes + 1) * sizeof(*top));
	sum = calloc((size_t)isp->n_nodes + 1, sizeof(*sum));
	if (per_depth == NULL || top == NULL || sum == NULL)
		fail(EXIT_FAILURE, "out of memory");
	/* parents come before children: a node's top is its parent's */
	for (i = 0; i < isp->n_nodes; i++) {
		const struct pcr_isp_node *n = &isp->nodes[i];

		top[i] = n->parent < 0 ? i : top[n->parent];
		per_depth[n->depth]++;
	}
	if (have_net) {
		printf("nodes: %" PRIu32 "\n", isp->n_nodes);
		for (i = 1; i <= isp->node_depth_max; i++)
			printf("nodes at depth %" PRIu32 ": %" PRIu32 "\n", i,
			       per_depth[i]);
	}
	levels = isp->node_depth_max;
	if (have_subs) {
		levels = 0;
		for (i = 0; i < isp->n_circuits; i++) {
			const struct pcr_isp_circuit *ci = &isp->circuits[i];
			struct top_sum *t = &root;
			uint32_t lv = 1;

			if (ci->parent >= 0) {
				t = &sum[top[ci->parent]];
				lv = isp->nodes[ci->parent].depth + 1;
			}
			if (lv > levels)
				levels = lv;
			t->circuits++;
			t->down_max_bps += ci->down_max_bps;
			t->up_max_bps += ci->up_max_bps;
		}
		printf("circuits: %" PRIu32 "\n", isp->n_circuits);
		printf("devices: %" PRIu32 "\n", isp->n_devices);
		printf("ipv4 prefixes: %" PRIu32 "\n", isp->n_prefixes4);
		printf("ipv6 prefixes: %" PRIu32 "\n", isp->n_prefixes6);
		printf("circuits under the port's root: %" PRIu64 "\n",
		       root.circuits);
	}
	printf("levels: %" PRIu32 "\n", levels);
	for (i = 0; have_subs && i < isp->n_nodes; i++) {
		const struct pcr_isp_node *n = &isp->nodes[i];

		if (n->parent >= 0)
			continue;
		printf("top-level node '%s': capacity %s/%s Mbps, %" PRIu64
		       " circuits, their max %s/%s Mbps (%.1fx/%.1fx)\n",
		       n->name, mbps(a, sizeof(a), n->down_bps),
		       mbps(b, sizeof(b), n->up_bps), sum[i].circuits,
		       mbps(c, sizeof(c), sum[i].down_max_bps),
		       mbps(d, sizeof(d), sum[i].up_max_bps),
		       (double)sum[i].down_max_bps / (double)n->down_bps,
		       (double)sum[i].up_max_bps / (double)n->up_bps);
	}
	for (i = 0; !have_subs && i < isp->n_nodes; i++) {
		const struct pcr_isp_node *n = &isp->nodes[i];

		if (n->parent < 0)
			printf("top-level node '%s': capacity %s/%s Mbps\n",
			       n->name, mbps(a, sizeof(a), n->down_bps),
			       mbps(b, sizeof(b), n->up_bps));
	}
	if (have_subs && root.circuits != 0)
		printf("port's root: %" PRIu64 " circuits, their max %s/%s "
		       "Mbps\n",
		       root.circuits, mbps(a, sizeof(a), root.down_max_bps),
		       mbps(b, sizeof(b), root.up_max_bps));
	free(per_depth);
	free(top);
	free(sum);
}

int
main(int argc, char **argv)
{
	const char *net_path = NULL, *subs_path = NULL;
	double t0, t_net = 0, t_subs = 0;
	struct pcr_isp *isp;
	char err[1024];
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "n:s:h", long_opts, NULL)) !=
	       -1) {
		switch (opt) {
		case OPT_NETWORK:
			if (net_path != NULL)
				usage_error("--network given twice ('%s', "
					    "'%s')",
					    net_path, optarg);
			net_path = optarg;
			break;
		case OPT_SUBSCRIBERS:
			if (subs_path != NULL)
				usage_error("--subscribers given twice ('%s', "
					    "'%s')",
					    subs_path, optarg);
			subs_path = optarg;
			break;
		case OPT_HELP:
			usage(stdout);
			exit(EXIT_SUCCESS);
		default:
			/* getopt_long has said what was wrong */
			fprintf(stderr, "Try '" PROG " --help'.\n");
			exit(EXIT_USAGE);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (net_path == NULL && subs_path == NULL)
		usage_error("nothing to check: give --network FILE, "
			    "--subscribers FILE or both");

	isp = pcr_isp_new();
	if (isp == NULL)
		fail(EXIT_FAILURE, "out of memory");
	if (net_path != NULL) {
		t0 = now_ms();
		rc = pcr_isp_load_network(isp, net_path, err, sizeof(err));
		t_net = now_ms() - t0;
		if (rc != 0)
			fail(EXIT_USAGE, "%s", err);
		printf("network: %s\n", net_path);
	}
	if (subs_path != NULL) {
		t0 = now_ms();
		rc = pcr_isp_load_subscribers(isp, subs_path, err, sizeof(err));
		t_subs = now_ms() - t0;
		if (rc != 0)
			fail(EXIT_USAGE, "%s", err);
		printf("subscribers: %s\n", subs_path);
	}
	summary(isp, net_path != NULL, subs_path != NULL);
	printf("load time: %.1f ms (network %.1f ms, subscribers %.1f ms)\n",
	       t_net + t_subs, t_net, t_subs);
	pcr_isp_free(isp);
	return EXIT_SUCCESS;
}
