/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * Unit tests of lib/isp: LibreQoS's network.json and ShapedDevices.csv,
 * written to a scratch directory and loaded.
 *  - a small tree loads to exactly the nodes written: names, parents,
 *    depths, types, bit/s (fractional Mbps included), parents before
 *    children, lookups by name;
 *  - subscribers load to exactly the circuits written: a 3-device circuit
 *    whose rows are apart is one circuit with its devices and prefixes
 *    together and in file order, host bits cleared; quoted fields with
 *    commas, doubled quotes and a newline; a BOM, comment and blank
 *    lines, CRLF, blanks around the header's names;
 *  - a flat ISP (no network, empty Parent Node);
 *  - a new network keeps the circuits loaded, re-resolved by name;
 *  - each error says FILE:LINE, the field and the value (the message
 *    compared whole), and leaves the ISP loaded before exactly as it was.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <cmocka.h>

#include "pcr_isp.h"

static char dir[64];
static char net_path[128];
static char csv_path[128];
static char err[1024];

#define HDR                                                                    \
	"Circuit ID,Circuit Name,Device ID,Device Name,Parent Node,MAC,IPv4,"  \
	"IPv6,Download Min Mbps,Upload Min Mbps,Download Max Mbps,Upload Max " \
	"Mbps,Comment\n"

/* Region_A (Site_1 (AP_7), Site_2), Region_B: fractions, a type on
 * some, keys LibreQoS's tools add that are ignored */
static const char good_net[] =
	"{\n"
	"  \"Region_A\": {\"downloadBandwidthMbps\": 1000,\n"
	"    \"uploadBandwidthMbps\": 500, \"type\": \"Region\",\n"
	"    \"parent_site\": \"x\", \"children\": {\n"
	"      \"Site_1\": {\"downloadBandwidthMbps\": 400,\n"
	"        \"uploadBandwidthMbps\": 12.5, \"type\": \"Site\",\n"
	"        \"children\": {\n"
	"          \"AP_7\": {\"downloadBandwidthMbps\": 367.5,\n"
	"                     \"uploadBandwidthMbps\": 0.000001}}},\n"
	"      \"Site_2\": {\"downloadBandwidthMbps\": 300,\n"
	"        \"uploadBandwidthMbps\": 100, \"type\": null,\n"
	"        \"children\": {}}}},\n"
	"  \"Region_B\": {\"downloadBandwidthMbps\": 2000.25,\n"
	"    \"uploadBandwidthMbps\": 2000}\n"
	"}\n";

/*
 * c1: three devices, lines 4, 5 and 9 (c2 between), one with two IPv4s
 * (a host-bits-set /29) and an IPv6 /56 with host bits, one a bare IPv6;
 * c2: a quoted name with a comma, a comment with doubled quotes and a
 * newline, fractional rates, CRLF; c3: no parent (the port's root).
 */
static const char good_csv[] =
	"\xef\xbb\xbf"
	"# exported by hand\n"
	" Circuit ID , Circuit Name,Device ID,Device Name,Parent Node,MAC,"
	"IPv4,IPv6,Download Min Mbps,Upload Min Mbps,Download Max Mbps,"
	"Upload Max Mbps,Comment \n"
	"\n"
	"c1,Alice,d1,router,AP_7,aa:bb:cc:dd:ee:01,"
	"\"198.18.0.5, 198.18.1.3/29\",2001:db8:1:ff::1/56,0,0,100,20,\n"
	"c1,Alice,d2,phone,AP_7,,198.18.0.6,,0,0,100.0,20,\n"
	"c2,\"Smith, John\",d3,\"cpe \"\"roof\"\"\",Site_2,,198.18.2.1,,"
	"1.25,0.5,12.5,2.5,\"said \"\"hi\"\",\nthen left\"\r\n"
	"   \n"
	"c1,Alice,d4,tv,AP_7,,,2001:db8::7,0,0,100,20.000000,\n"
	"c3,,d5,,,,198.19.255.255,,0,0,25,5,\n";

static void
put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
	assert_int_equal(fclose(f), 0);
}

static int
setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "%s/pcr-isp-test.XXXXXX",
		 getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(net_path, sizeof(net_path), "%s/network.json", dir);
	snprintf(csv_path, sizeof(csv_path), "%s/ShapedDevices.csv", dir);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	unlink(net_path);
	unlink(csv_path);
	return rmdir(dir);
}

/* an ISP with good_net and good_csv loaded */
static struct pcr_isp *
loaded(void)
{
	struct pcr_isp *isp = pcr_isp_new();

	assert_non_null(isp);
	put(net_path, good_net);
	put(csv_path, good_csv);
	assert_int_equal(pcr_isp_load_network(isp, net_path, err, sizeof(err)),
			 0);
	assert_int_equal(
		pcr_isp_load_subscribers(isp, csv_path, err, sizeof(err)), 0);
	return isp;
}

static void
check_node(const struct pcr_isp_node *n, const char *name, int32_t parent,
	   uint32_t depth, uint64_t down_bps, uint64_t up_bps, const char *type)
{
	assert_string_equal(n->name, name);
	assert_int_equal(n->parent, parent);
	assert_int_equal(n->depth, depth);
	assert_int_equal(n->down_bps, down_bps);
	assert_int_equal(n->up_bps, up_bps);
	assert_string_equal(n->type, type);
}

/* good_net and good_csv, exactly */
static void
check_good(const struct pcr_isp *isp)
{
	assert_int_equal(isp->n_nodes, 5);
	assert_int_equal(isp->node_depth_max, 3);
	assert_int_equal(isp->n_circuits, 3);
	assert_int_equal(isp->n_devices, 5);
	assert_int_equal(isp->n_prefixes, 7);
	assert_string_equal(isp->nodes[2].name, "AP_7");
	assert_string_equal(isp->circuits[0].id, "c1");
	assert_string_equal(isp->circuits[1].name, "Smith, John");
	assert_int_equal(isp->circuits[0].parent, 2);
}

static void
test_network(void **state)
{
	struct pcr_isp *isp = pcr_isp_new();
	uint32_t i;

	(void)state;
	put(net_path, good_net);
	assert_int_equal(pcr_isp_load_network(isp, net_path, err, sizeof(err)),
			 0);
	assert_int_equal(isp->n_nodes, 5);
	assert_int_equal(isp->node_depth_max, 3);
	/* pre-order, siblings in the file's order */
	check_node(&isp->nodes[0], "Region_A", -1, 1, 1000000000ULL,
		   500000000ULL, "Region");
	check_node(&isp->nodes[1], "Site_1", 0, 2, 400000000ULL, 12500000ULL,
		   "Site");
	check_node(&isp->nodes[2], "AP_7", 1, 3, 367500000ULL, 1, "");
	check_node(&isp->nodes[3], "Site_2", 0, 2, 300000000ULL, 100000000ULL,
		   "");
	check_node(&isp->nodes[4], "Region_B", -1, 1, 2000250000ULL,
		   2000000000ULL, "");
	for (i = 0; i < isp->n_nodes; i++)
		assert_true(isp->nodes[i].parent < (int32_t)i);
	assert_int_equal(pcr_isp_node_find(isp, "Region_A"), 0);
	assert_int_equal(pcr_isp_node_find(isp, "AP_7"), 2);
	assert_int_equal(pcr_isp_node_find(isp, "Region_B"), 4);
	assert_int_equal(pcr_isp_node_find(isp, "AP_8"), -1);
	assert_int_equal(pcr_isp_node_find(isp, ""), -1);
	assert_int_equal(isp->n_circuits, 0);
	pcr_isp_free(isp);
}

static void
check_prefix(const struct pcr_isp_prefix *p, const char *text,
	     unsigned int len, uint32_t circuit, uint32_t device)
{
	int family = strchr(text, ':') != NULL ? AF_INET6 : AF_INET;
	uint8_t a[16] = {0};

	assert_int_equal(inet_pton(family, text, a), 1);
	assert_int_equal(p->family, family);
	assert_int_equal(p->len, len);
	assert_memory_equal(p->addr, a, 16);
	assert_int_equal(p->circuit, circuit);
	assert_int_equal(p->device, device);
}

static void
test_subscribers(void **state)
{
	struct pcr_isp *isp = loaded();
	const struct pcr_isp_circuit *c = isp->circuits;
	const struct pcr_isp_device *d = isp->devices;
	const struct pcr_isp_prefix *p = isp->prefixes;

	(void)state;
	assert_int_equal(isp->n_circuits, 3);
	assert_int_equal(isp->n_devices, 5);
	assert_int_equal(isp->n_prefixes, 7);
	assert_int_equal(isp->n_prefixes4, 5);
	assert_int_equal(isp->n_prefixes6, 2);

	/* c1: lines 4, 5, 9 (the BOM's line is 1); 100.0 and 20.000000
	 * agree with 100 and 20 */
	assert_string_equal(c[0].id, "c1");
	assert_string_equal(c[0].name, "Alice");
	assert_string_equal(c[0].parent_name, "AP_7");
	assert_int_equal(c[0].parent, 2);
	assert_int_equal(c[0].line, 4);
	assert_int_equal(c[0].down_min_bps, 0);
	assert_int_equal(c[0].up_min_bps, 0);
	assert_int_equal(c[0].down_max_bps, 100000000ULL);
	assert_int_equal(c[0].up_max_bps, 20000000ULL);
	assert_int_equal(c[0].first_device, 0);
	assert_int_equal(c[0].n_devices, 3);
	assert_int_equal(c[0].first_prefix, 0);
	assert_int_equal(c[0].n_prefixes, 5);

	assert_string_equal(d[0].id, "d1");
	assert_string_equal(d[0].name, "router");
	assert_string_equal(d[0].mac, "aa:bb:cc:dd:ee:01");
	assert_int_equal(d[0].line, 4);
	assert_int_equal(d[0].first_prefix, 0);
	assert_int_equal(d[0].n_prefixes, 3);
	assert_string_equal(d[1].id, "d2");
	assert_int_equal(d[1].line, 5);
	assert_int_equal(d[1].first_prefix, 3);
	assert_int_equal(d[1].n_prefixes, 1);
	assert_string_equal(d[2].id, "d4");
	assert_int_equal(d[2].line, 9);
	assert_int_equal(d[2].first_prefix, 4);
	assert_int_equal(d[2].n_prefixes, 1);
	for (int i = 0; i < 3; i++)
		assert_int_equal(d[i].circuit, 0);

	check_prefix(&p[0], "198.18.0.5", 32, 0, 0);
	check_prefix(&p[1], "198.18.1.0", 29, 0, 0);
	check_prefix(&p[2], "2001:db8:1::", 56, 0, 0);
	check_prefix(&p[3], "198.18.0.6", 32, 0, 1);
	check_prefix(&p[4], "2001:db8::7", 128, 0, 2);

	/* c2: quoted, doubled quotes, a newline in a quoted field, CRLF */
	assert_string_equal(c[1].id, "c2");
	assert_string_equal(c[1].name, "Smith, John");
	assert_int_equal(c[1].parent, 3);
	assert_int_equal(c[1].line, 6);
	assert_int_equal(c[1].down_min_bps, 1250000);
	assert_int_equal(c[1].up_min_bps, 500000);
	assert_int_equal(c[1].down_max_bps, 12500000);
	assert_int_equal(c[1].up_max_bps, 2500000);
	assert_int_equal(c[1].first_device, 3);
	assert_int_equal(c[1].n_devices, 1);
	assert_string_equal(d[3].name, "cpe \"roof\"");
	assert_string_equal(d[3].mac, "");
	assert_string_equal(d[3].comment, "said \"hi\",\nthen left");
	assert_int_equal(d[3].circuit, 1);
	check_prefix(&p[5], "198.18.2.1", 32, 1, 3);

	/* c3: under the port's root; the line count went past the newline
	 * inside c2's comment and the blank line */
	assert_string_equal(c[2].id, "c3");
	assert_string_equal(c[2].name, "");
	assert_string_equal(c[2].parent_name, "");
	assert_int_equal(c[2].parent, -1);
	assert_int_equal(c[2].line, 10);
	check_prefix(&p[6], "198.19.255.255", 32, 2, 4);
	pcr_isp_free(isp);
}

static void
test_flat(void **state)
{
	struct pcr_isp *isp = pcr_isp_new();

	(void)state;
	put(csv_path, HDR "s1,One,,,,,198.18.0.1,,0,0,50,10,\n"
			  "s2,Two,,,,,,2001:db8:2::/48,5,1,50,10,\n"
			  "s1,One,,,,,198.18.0.2 198.18.0.3,,0,0,50,10,\n");
	assert_int_equal(
		pcr_isp_load_subscribers(isp, csv_path, err, sizeof(err)), 0);
	assert_int_equal(isp->n_nodes, 0);
	assert_int_equal(isp->n_circuits, 2);
	assert_int_equal(isp->n_devices, 3);
	assert_int_equal(isp->circuits[0].parent, -1);
	assert_int_equal(isp->circuits[1].parent, -1);
	/* s1's rows are apart: grouped, s2 after */
	assert_int_equal(isp->circuits[0].n_devices, 2);
	assert_int_equal(isp->circuits[0].n_prefixes, 3);
	assert_int_equal(isp->circuits[1].first_device, 2);
	assert_int_equal(isp->circuits[1].first_prefix, 3);
	check_prefix(&isp->prefixes[0], "198.18.0.1", 32, 0, 0);
	check_prefix(&isp->prefixes[1], "198.18.0.2", 32, 0, 1);
	check_prefix(&isp->prefixes[2], "198.18.0.3", 32, 0, 1);
	check_prefix(&isp->prefixes[3], "2001:db8:2::", 48, 1, 2);
	assert_int_equal(isp->devices[1].first_prefix, 1);
	assert_int_equal(isp->devices[1].n_prefixes, 2);
	assert_int_equal(isp->devices[1].line, 4);
	pcr_isp_free(isp);
}

/* A new network: the circuits stay, their parents found by name again */
static void
test_network_reload(void **state)
{
	struct pcr_isp *isp = loaded();

	(void)state;
	put(net_path, "{\"Site_2\": {\"downloadBandwidthMbps\": 1,"
		      " \"uploadBandwidthMbps\": 1},"
		      " \"AP_7\": {\"downloadBandwidthMbps\": 2,"
		      " \"uploadBandwidthMbps\": 2}}");
	assert_int_equal(pcr_isp_load_network(isp, net_path, err, sizeof(err)),
			 0);
	assert_int_equal(isp->n_nodes, 2);
	assert_int_equal(isp->n_circuits, 3);
	assert_int_equal(isp->circuits[0].parent, 1);
	assert_int_equal(isp->circuits[1].parent, 0);
	assert_int_equal(isp->circuits[2].parent, -1);
	pcr_isp_free(isp);
}

/* what a failed load must not change */
struct snap {
	const void *nodes, *circuits, *devices, *prefixes;
	uint32_t n_nodes, n_circuits, n_devices, n_prefixes;
};

static struct snap
snap(const struct pcr_isp *isp)
{
	return (struct snap){isp->nodes,   isp->circuits, isp->devices,
			     isp->prefixes, isp->n_nodes,  isp->n_circuits,
			     isp->n_devices, isp->n_prefixes};
}

static void
check_unchanged(const struct pcr_isp *isp, const struct snap *s)
{
	struct snap now = snap(isp);

	assert_memory_equal(&now, s, sizeof(now));
	check_good(isp);
}

/*
 * Loading @p text as ShapedDevices.csv (over the good ISP) fails with
 * -EINVAL and the message "<csv_path>@p want", exactly, on one line.
 */
static void
csv_fails(const char *text, const char *want)
{
	struct pcr_isp *isp = loaded();
	struct snap s = snap(isp);
	char full[1024];

	put(csv_path, text);
	err[0] = '\0';
	assert_int_equal(
		pcr_isp_load_subscribers(isp, csv_path, err, sizeof(err)),
		-EINVAL);
	snprintf(full, sizeof(full), "%s%s", csv_path, want);
	assert_string_equal(err, full);
	assert_null(strchr(err, '\n'));
	check_unchanged(isp, &s);
	pcr_isp_free(isp);
}

/* likewise for network.json; @p want follows "<net_path>" */
static void
net_fails(const char *text, const char *want)
{
	struct pcr_isp *isp = loaded();
	struct snap s = snap(isp);
	char full[1024];

	put(net_path, text);
	err[0] = '\0';
	assert_int_equal(pcr_isp_load_network(isp, net_path, err, sizeof(err)),
			 -EINVAL);
	snprintf(full, sizeof(full), "%s%s", net_path, want);
	assert_string_equal(err, full);
	assert_null(strchr(err, '\n'));
	check_unchanged(isp, &s);
	pcr_isp_free(isp);
}

#define ROW_OK "c1,Alice,d1,r,AP_7,,198.18.0.5,,0,0,100,20,\n"

static void
test_csv_rates(void **state)
{
	(void)state;
	csv_fails(HDR ROW_OK "c2,Bob,d2,r,AP_7,,198.18.0.6,,0,0,-3,20,\n",
		  ":3: Download Max Mbps '-3': not a rate in Mbps (a number "
		  "above 0)");
	csv_fails(HDR ROW_OK "c2,Bob,d2,r,AP_7,,198.18.0.6,,0,0,100,0,\n",
		  ":3: Upload Max Mbps '0': not a rate in Mbps (a number above "
		  "0)");
	csv_fails(HDR ROW_OK "c2,Bob,d2,r,AP_7,,198.18.0.6,,abc,0,100,20,\n",
		  ":3: Download Min Mbps 'abc': not a rate in Mbps (a number, "
		  "0 or above)");
	csv_fails(HDR ROW_OK "c2,Bob,d2,r,AP_7,,198.18.0.6,,0,,100,20,\n",
		  ":3: Upload Min Mbps '': not a rate in Mbps (a number, 0 or "
		  "above)");
	csv_fails(HDR ROW_OK "c2,Bob,d2,r,AP_7,,198.18.0.6,,0,0,1e3,20,\n",
		  ":3: Download Max Mbps '1e3': not a rate in Mbps (a number "
		  "above 0)");
	csv_fails(HDR ROW_OK "c2,Bob,d2,r,AP_7,,198.18.0.6,,0,0,0.0000004,1,\n",
		  ":3: Download Max Mbps '0.0000004': not a rate in Mbps (a "
		  "number above 0)");
	csv_fails(HDR ROW_OK
		  "c2,Bob,d2,r,AP_7,,198.18.0.6,,0,0,1000000000.1,20,\n",
		  ":3: Download Max Mbps '1000000000.1': above 1000000000 "
		  "Mbps, the most taken");
	csv_fails(HDR ROW_OK "c2,Bob,d2,r,AP_7,,198.18.0.6,,200,0,100,20,\n",
		  ":3: Download Min Mbps '200': above Download Max Mbps '100' "
		  "(min <= max)");
	csv_fails(HDR ROW_OK "c2,Bob,d2,r,AP_7,,198.18.0.6,,0,20.5,100,20,\n",
		  ":3: Upload Min Mbps '20.5': above Upload Max Mbps '20' "
		  "(min <= max)");
}

static void
test_csv_header(void **state)
{
	(void)state;
	csv_fails("# nothing\n\n",
		  ":3: no header row (LibreQoS's ShapedDevices.csv starts "
		  "with: Circuit ID, Circuit Name, Device ID, Device Name, "
		  "Parent Node, MAC, IPv4, IPv6, Download Min Mbps, Upload Min "
		  "Mbps, Download Max Mbps, Upload Max Mbps, Comment)");
	csv_fails("# c\nCircuit ID,Circuit Name,Device ID,Device Name,Parent "
		  "Node,MAC,IP v4,IPv6,Download Min Mbps,Upload Min Mbps,"
		  "Download Max Mbps,Upload Max Mbps,Comment\n" ROW_OK,
		  ":2: column 7 'IP v4': not 'IPv4' (LibreQoS's header: "
		  "Circuit ID, Circuit Name, Device ID, Device Name, Parent "
		  "Node, MAC, IPv4, IPv6, Download Min Mbps, Upload Min Mbps, "
		  "Download Max Mbps, Upload Max Mbps, Comment)");
	csv_fails("Circuit ID,Circuit Name,Device ID,Device Name,Parent "
		  "Node,MAC,IPv4,IPv6,Download Min Mbps,Upload Min Mbps,"
		  "Download Max Mbps,Upload Max Mbps\n" ROW_OK,
		  ":1: column 13 '': missing: 'Comment' (LibreQoS's header: "
		  "Circuit ID, Circuit Name, Device ID, Device Name, Parent "
		  "Node, MAC, IPv4, IPv6, Download Min Mbps, Upload Min Mbps, "
		  "Download Max Mbps, Upload Max Mbps, Comment)");
	csv_fails("Circuit ID,Circuit Name,Device ID,Device Name,Parent "
		  "Node,MAC,IPv4,IPv6,Download Min Mbps,Upload Min Mbps,"
		  "Download Max Mbps,Upload Max Mbps,Comment,sqm\n" ROW_OK,
		  ":1: column 14 'sqm': after 'Comment', the last column of "
		  "LibreQoS's header");
}

static void
test_csv_circuits(void **state)
{
	(void)state;
	/* a circuit's rows disagree: the field, its value, the first line */
	csv_fails(HDR ROW_OK "c2,Bob,d2,r,AP_7,,198.18.0.6,,0,0,100,20,\n"
			     "c1,Alicia,d3,r,AP_7,,198.18.0.7,,0,0,100,20,\n",
		  ":4: Circuit Name 'Alicia': circuit 'c1' has 'Alice' on its "
		  "first line, 2 (the rows of a circuit agree on its name, "
		  "parent node and rates)");
	csv_fails(HDR ROW_OK "c1,Alice,d3,r,Site_1,,198.18.0.7,,0,0,100,20,\n",
		  ":3: Parent Node 'Site_1': circuit 'c1' has 'AP_7' on its "
		  "first line, 2 (the rows of a circuit agree on its name, "
		  "parent node and rates)");
	csv_fails(HDR ROW_OK "c1,Alice,d3,r,AP_7,,198.18.0.7,,0,0,100,25,\n",
		  ":3: Upload Max Mbps '25': circuit 'c1' has '20' on its "
		  "first line, 2 (the rows of a circuit agree on its name, "
		  "parent node and rates)");
	csv_fails(HDR ROW_OK "c1,Alice,d3,r,AP_7,,198.18.0.7,,0.5,0,100,20,\n",
		  ":3: Download Min Mbps '0.5': circuit 'c1' has '0' on its "
		  "first line, 2 (the rows of a circuit agree on its name, "
		  "parent node and rates)");
	/* no address on any row: the circuit's first line */
	csv_fails(HDR "c1,Alice,d1,r,AP_7,,,,0,0,100,20,\n" ROW_OK
		      "c2,Bob,d2,r,AP_7,,,,0,0,100,20,\n"
		      "c2,Bob,d3,r,AP_7,, , ,0,0,100,20,\n",
		  ":4: Circuit ID 'c2': no IPv4 or IPv6 address on any of its "
		  "rows (2): its traffic could not be told from another's");
	csv_fails(HDR ROW_OK ",Bob,d2,r,AP_7,,198.18.0.6,,0,0,100,20,\n",
		  ":3: Circuit ID '': empty (the rows of one subscriber share "
		  "a Circuit ID)");
}

/* Parent Node names no node: the network's file named */
static void
test_csv_parent_unknown(void **state)
{
	struct pcr_isp *isp = loaded();
	char want[512];

	(void)state;
	put(csv_path, HDR ROW_OK "c2,Bob,d2,r,AP_9,,198.18.0.6,,0,0,100,20,\n");
	assert_int_equal(
		pcr_isp_load_subscribers(isp, csv_path, err, sizeof(err)),
		-EINVAL);
	snprintf(want, sizeof(want), "%s:3: Parent Node 'AP_9': not a node of %s",
		 csv_path, net_path);
	assert_string_equal(err, want);
	pcr_isp_free(isp);

	/* no network at all: a flat ISP leaves Parent Node empty */
	isp = pcr_isp_new();
	assert_int_equal(
		pcr_isp_load_subscribers(isp, csv_path, err, sizeof(err)),
		-EINVAL);
	snprintf(want, sizeof(want),
		 "%s:2: Parent Node 'AP_7': no network.json loaded (a flat ISP "
		 "leaves Parent Node empty)",
		 csv_path);
	assert_string_equal(err, want);
	assert_int_equal(isp->n_circuits, 0);
	pcr_isp_free(isp);
}

static void
test_csv_addresses(void **state)
{
	(void)state;
	csv_fails(HDR ROW_OK "c2,Bob,d2,r,AP_7,,198.18.0.300,,0,0,100,20,\n",
		  ":3: IPv4 '198.18.0.300': not an IPv4 address or prefix "
		  "(a.b.c.d or a.b.c.d/len)");
	csv_fails(HDR ROW_OK "c2,Bob,d2,r,AP_7,,\"198.18.0.6,2001:db8::1\",,"
			     "0,0,100,20,\n",
		  ":3: IPv4 '2001:db8::1': not an IPv4 address or prefix "
		  "(a.b.c.d or a.b.c.d/len)");
	csv_fails(HDR ROW_OK "c2,Bob,d2,r,AP_7,,198.18.0.0/33,,0,0,100,20,\n",
		  ":3: IPv4 '198.18.0.0/33': prefix length not 0 to 32");
	csv_fails(HDR ROW_OK "c2,Bob,d2,r,AP_7,,198.18.0.0/,,0,0,100,20,\n",
		  ":3: IPv4 '198.18.0.0/': not an IPv4 address or prefix "
		  "(a.b.c.d or a.b.c.d/len)");
	csv_fails(HDR ROW_OK "c2,Bob,d2,r,AP_7,,,2001:db8::/129,0,0,100,20,\n",
		  ":3: IPv6 '2001:db8::/129': prefix length not 0 to 128");
	csv_fails(HDR ROW_OK "c2,Bob,d2,r,AP_7,,,198.18.0.9,0,0,100,20,\n",
		  ":3: IPv6 '198.18.0.9': not an IPv6 address or prefix (like "
		  "2001:db8::1 or 2001:db8:1::/56)");
	/* a prefix of two circuits: both lines; host bits do not hide it */
	csv_fails(HDR ROW_OK "c2,Bob,d2,r,AP_7,,198.18.0.6,,0,0,100,20,\n"
			     "c3,Eve,d3,r,AP_7,,\"198.18.0.7 198.18.0.5\",,0,0,"
			     "100,20,\n",
		  ":4: IPv4 '198.18.0.5': 198.18.0.5/32 is already on line 2 "
		  "(circuit 'c1'): a prefix belongs to one device of one "
		  "circuit");
	csv_fails(HDR "c1,Alice,d1,r,AP_7,,,2001:db8:5::1/48,0,0,100,20,\n"
		      "c2,Bob,d2,r,AP_7,,,2001:db8:5:7::/48,0,0,100,20,\n",
		  ":3: IPv6 '2001:db8:5:7::/48': 2001:db8:5::/48 is already "
		  "on line 2 (circuit 'c1'): a prefix belongs to one device "
		  "of one circuit");
	/* ... and of two devices of one circuit */
	csv_fails(HDR ROW_OK "c1,Alice,d2,r,AP_7,,198.18.0.5/32,,0,0,100,20,\n",
		  ":3: IPv4 '198.18.0.5/32': 198.18.0.5/32 is already on line "
		  "2 (circuit 'c1'): a prefix belongs to one device of one "
		  "circuit");
	csv_fails(HDR "c1,Alice,d1,r,AP_7,,\"198.18.0.5,198.18.0.5\",,0,0,100,"
		      "20,\n",
		  ":2: IPv4 '198.18.0.5': 198.18.0.5/32 twice on this row");
}

static void
test_csv_syntax(void **state)
{
	(void)state;
	/* an unquoted comma: one field too many */
	csv_fails(HDR ROW_OK "c2,Smith, John,d2,r,AP_7,,198.18.0.6,,0,0,100,"
			     "20,\n",
		  ":3: column 14 '': the row has 14 fields, the header 13 (a "
		  "comma inside a field needs the field in double quotes)");
	csv_fails(HDR ROW_OK "c2,Bob,d2,r,AP_7,,198.18.0.6,,0,0,100\n",
		  ":3: Upload Max Mbps '': missing: the row has 11 fields, the "
		  "header 13");
	/* the line a field opens on, after a quoted newline */
	csv_fails(HDR ROW_OK "c2,Bob,d2,r,AP_7,,198.18.0.6,,0,0,100,20,"
			     "\"two\nlines\"\n"
			     "c3,Eve,d3,r,AP_7,,198.18.0.7,,0,0,100,20,\"open\n",
		  ":5: Comment 'open\\x0a': the file ends inside this quoted "
		  "field");
	csv_fails(HDR ROW_OK "c2,\"Bob\"by,d2,r,AP_7,,198.18.0.6,,0,0,100,20,\n",
		  ":3: Circuit Name 'Bob': text after its closing quote (a "
		  "quote inside quotes is doubled: \"\")");
}

static void
test_net_errors(void **state)
{
	(void)state;
	net_fails("{\"A\": {\"downloadBandwidthMbps\": 1,\n"
		  "\"uploadBandwidthMbps\": 1,,}}\n",
		  ":2:26: string or '}' expected near ','");
	net_fails("{\"Region_A\": {\"downloadBandwidthMbps\": 1, "
		  "\"uploadBandwidthMbps\": 1, \"children\": {\"Site_1\": "
		  "{\"downloadBandwidthMbps\": 1, \"uploadBandwidthMbps\": 1, "
		  "\"children\": {\"AP_7\": {\"downloadBandwidthMbps\": \"abc\", "
		  "\"uploadBandwidthMbps\": 1}}}}}}",
		  ": node 'Region_A/Site_1/AP_7': downloadBandwidthMbps 'abc': "
		  "not a rate in Mbps (a number above 0)");
	net_fails("{\"A\": {\"downloadBandwidthMbps\": -5, "
		  "\"uploadBandwidthMbps\": 1}}",
		  ": node 'A': downloadBandwidthMbps '-5': not a rate in Mbps "
		  "(a number above 0)");
	net_fails("{\"A\": {\"downloadBandwidthMbps\": 5, "
		  "\"uploadBandwidthMbps\": 0.0}}",
		  ": node 'A': uploadBandwidthMbps '0': not a rate in Mbps (a "
		  "number above 0)");
	net_fails("{\"A\": {\"downloadBandwidthMbps\": 5, "
		  "\"uploadBandwidthMbps\": 1e10}}",
		  ": node 'A': uploadBandwidthMbps '10000000000': above "
		  "1000000000 Mbps, the most taken");
	net_fails("{\"A\": {\"downloadBandwidthMbps\": 5}}",
		  ": node 'A': uploadBandwidthMbps: missing (each node has its "
		  "capacity in Mbps)");
	net_fails("{\"A\": {\"downloadBandwidthMbps\": 5, "
		  "\"uploadBandwidthMbps\": 5, \"type\": 3}}",
		  ": node 'A': type '3': not a string");
	net_fails("{\"A\": {\"downloadBandwidthMbps\": 5, "
		  "\"uploadBandwidthMbps\": 5, \"children\": [1]}}",
		  ": node 'A': children '[1]': not an object of nodes");
	net_fails("{\"A\": 7}",
		  ": node 'A': '7' is not an object (a node is "
		  "{\"downloadBandwidthMbps\": N, \"uploadBandwidthMbps\": N, "
		  "...})");
	net_fails("[]",
		  ": not a JSON object of nodes (LibreQoS's network.json: "
		  "{\"Site_1\": {\"downloadBandwidthMbps\": N, "
		  "\"uploadBandwidthMbps\": N, \"children\": {...}}, ...})");
	/* names are unique over the whole tree: both paths named */
	net_fails("{\"A\": {\"downloadBandwidthMbps\": 5, "
		  "\"uploadBandwidthMbps\": 5, \"children\": {\"X\": "
		  "{\"downloadBandwidthMbps\": 5, \"uploadBandwidthMbps\": 5}}},"
		  " \"B\": {\"downloadBandwidthMbps\": 5, "
		  "\"uploadBandwidthMbps\": 5, \"children\": {\"X\": "
		  "{\"downloadBandwidthMbps\": 5, \"uploadBandwidthMbps\": 5}}}}",
		  ": node 'B/X': name 'X': already node 'A/X' (circuits name "
		  "their parent node: names are unique in the tree)");
}

/* A new network must hold the loaded circuits' parents: the message
 * names the subscribers' line. */
static void
test_net_drops_parent(void **state)
{
	struct pcr_isp *isp = loaded();
	struct snap s = snap(isp);
	char want[512];

	(void)state;
	put(net_path, "{\"AP_7\": {\"downloadBandwidthMbps\": 5, "
		      "\"uploadBandwidthMbps\": 5}}");
	assert_int_equal(pcr_isp_load_network(isp, net_path, err, sizeof(err)),
			 -EINVAL);
	snprintf(want, sizeof(want),
		 "%s:6: Parent Node 'Site_2': not a node of %s (the circuits "
		 "loaded need their parents in a new network)",
		 csv_path, net_path);
	assert_string_equal(err, want);
	check_unchanged(isp, &s);
	pcr_isp_free(isp);
}

static void
test_missing_file(void **state)
{
	struct pcr_isp *isp = loaded();
	struct snap s = snap(isp);
	char path[160], want[256];

	(void)state;
	snprintf(path, sizeof(path), "%s/none.csv", dir);
	assert_int_equal(pcr_isp_load_subscribers(isp, path, err, sizeof(err)),
			 -ENOENT);
	snprintf(want, sizeof(want), "%s: cannot open: %s", path,
		 strerror(ENOENT));
	assert_string_equal(err, want);
	assert_int_equal(pcr_isp_load_network(isp, path, err, sizeof(err)),
			 -ENOENT);
	check_unchanged(isp, &s);
	pcr_isp_free(isp);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_network),
		cmocka_unit_test(test_subscribers),
		cmocka_unit_test(test_flat),
		cmocka_unit_test(test_network_reload),
		cmocka_unit_test(test_csv_rates),
		cmocka_unit_test(test_csv_header),
		cmocka_unit_test(test_csv_circuits),
		cmocka_unit_test(test_csv_parent_unknown),
		cmocka_unit_test(test_csv_addresses),
		cmocka_unit_test(test_csv_syntax),
		cmocka_unit_test(test_net_errors),
		cmocka_unit_test(test_net_drops_parent),
		cmocka_unit_test(test_missing_file),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
