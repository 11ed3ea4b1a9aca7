/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * LibreQoS's network.json and ShapedDevices.csv into flat arrays
 * (pcr_isp.h).
 *
 * Each load fills a private half of its own (struct pcr_isp_net for the
 * nodes, struct pcr_isp_subs for circuits, devices and prefixes: their
 * arrays and the strings they point to) and swaps it in only when the
 * whole file is good, so a bad file costs the caller nothing. Strings live
 * in an arena per half: one allocation per 64 KiB, not per name, for the
 * half a million strings of a large ISP.
 *
 * The CSV is read whole and unquoted in place (an unquoted field is never
 * longer than its text, and the delimiter after it makes room for the
 * NUL). What rows say together is checked once the file is read, by
 * sorting: rows by Circuit ID (a circuit's rows together, its first row
 * at their head, each later one compared with it) and prefixes (equal
 * ones together); node names are found by binary search over a sorted
 * index. 100,000 circuits cost no scan per row, and an error is still
 * the first a reader going row by row would meet.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "pcr_isp.h"

/* the largest file read: far above a million subscribers (~150 MB) */
#define FILE_MAX_BYTES (1ULL << 30)
/* a string arena's chunk */
#define ARENA_CHUNK_BYTES (64 * 1024)
/* a value shown in an error message is cut after this many bytes */
#define SHOWN_MAX_BYTES 64
/* the longest address token: an IPv6 address (45) and "/128" */
#define ADDR_TOKEN_MAX 64

/* ---- strings, arrays, messages ---- */

struct arena_chunk {
	struct arena_chunk *next;
	size_t used;
	size_t size;
	char data[];
};

struct arena {
	struct arena_chunk *head;
};

/* A copy of @p len bytes of @p s, NUL-terminated, living as long as
 * @p a; NULL when out of memory. */
static const char *
arena_strndup(struct arena *a, const char *s, size_t len)
{
	struct arena_chunk *c = a->head;
	char *d;

	if (len == 0)
		return "";
	if (c == NULL || c->size - c->used < len + 1) {
		size_t size = len + 1 > ARENA_CHUNK_BYTES ? len + 1
							  : ARENA_CHUNK_BYTES;

		c = malloc(sizeof(*c) + size);
		if (c == NULL)
			return NULL;
		c->next = a->head;
		c->used = 0;
		c->size = size;
		a->head = c;
	}
	d = c->data + c->used;
	memcpy(d, s, len);
	d[len] = '\0';
	c->used += len + 1;
	return d;
}

static const char *
arena_strdup(struct arena *a, const char *s)
{
	return arena_strndup(a, s, strlen(s));
}

static void
arena_free(struct arena *a)
{
	struct arena_chunk *c, *next;

	for (c = a->head; c != NULL; c = next) {
		next = c->next;
		free(c);
	}
	a->head = NULL;
}

/* @p arr with room for one more element than *@p cap when it is full:
 * the array to use (maybe moved), NULL when out of memory (@p arr kept). */
static void *
grow(void *arr, uint32_t n, uint32_t *cap, size_t elem)
{
	uint32_t c = *cap;
	void *p;

	if (n < c)
		return arr;
	if (c >= UINT32_MAX / 2)
		return NULL;
	c = c == 0 ? 256 : c * 2;
	p = realloc(arr, (size_t)c * elem);
	if (p == NULL)
		return NULL;
	*cap = c;
	return p;
}

static void __attribute__((format(printf, 3, 4)))
errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/*
 * @p s as it may appear inside '...' of a one-line message: control
 * characters (a newline of a quoted field) as \xNN, cut after
 * SHOWN_MAX_BYTES with "...". @p buf holds at least 4 * SHOWN_MAX_BYTES
 * + 4 bytes.
 */
static const char *
shown(char *buf, const char *s)
{
	size_t i, o = 0;

	for (i = 0; s[i] != '\0' && i < SHOWN_MAX_BYTES; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch < 0x20 || ch == 0x7f)
			o += (size_t)sprintf(buf + o, "\\x%02x", ch);
		else
			buf[o++] = (char)ch;
	}
	if (s[i] != '\0') {
		memcpy(buf + o, "...", 3);
		o += 3;
	}
	buf[o] = '\0';
	return buf;
}

#define SHOWN_BYTES (4 * SHOWN_MAX_BYTES + 4)

/* @p bps as Mbps, as a person writes them: "100", "12.5" */
static const char *
mbps_text(char *buf, size_t size, uint64_t bps)
{
	uint64_t frac = bps % 1000000;
	int n;

	n = snprintf(buf, size, "%llu", (unsigned long long)(bps / 1000000));
	if (frac != 0 && n > 0 && (size_t)n < size) {
		snprintf(buf + n, size - (size_t)n, ".%06llu",
			 (unsigned long long)frac);
		n = (int)strlen(buf);
		while (buf[n - 1] == '0')
			buf[--n] = '\0';
	}
	return buf;
}

/*
 * @p s, a decimal number of Mbps ("100", "12.5", ".5": digits and at
 * most one point, nothing else), into *@p bps, exactly: the first six
 * decimals are whole bit/s, the seventh rounds (half up).
 * @return 0, -EINVAL not such a number, -ERANGE above PCR_ISP_MBPS_MAX.
 */
static int
mbps_parse(const char *s, uint64_t *bps)
{
	uint64_t whole = 0, frac = 0, v;
	unsigned int digits = 0, kept = 0;
	bool big = false, up = false;

	for (; *s >= '0' && *s <= '9'; s++, digits++) {
		if (whole > PCR_ISP_MBPS_MAX)
			big = true;
		else
			whole = whole * 10 + (uint64_t)(*s - '0');
	}
	if (*s == '.') {
		for (s++; *s >= '0' && *s <= '9'; s++, digits++) {
			if (kept < 6)
				frac = frac * 10 + (uint64_t)(*s - '0');
			else if (kept == 6)
				up = *s >= '5';
			kept++;
		}
	}
	if (*s != '\0' || digits == 0)
		return -EINVAL;
	for (; kept < 6; kept++)
		frac *= 10;
	if (big || whole > PCR_ISP_MBPS_MAX)
		return -ERANGE;
	v = whole * 1000000 + frac + (up ? 1 : 0);
	if (v > PCR_ISP_MBPS_MAX * 1000000)
		return -ERANGE;
	*bps = v;
	return 0;
}

/*
 * The whole file at @p path, NUL-terminated (its length in *@p len), in
 * *@p buf to free(); a file with a NUL byte in it is refused (not text:
 * every string here ends at the first NUL).
 */
static int
read_text_file(const char *path, char **buf, size_t *len, char *err,
	       size_t errlen)
{
	size_t cap = 65536, n = 0;
	struct stat st;
	char *b = NULL, *nul;
	ssize_t r;
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		errf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return rc;
	}
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    (uint64_t)st.st_size < FILE_MAX_BYTES)
		/* and a byte more, for the read() that finds the end */
		cap = (size_t)st.st_size + 2;
	for (;;) {
		if (n + 1 >= cap || b == NULL) {
			char *p;

			if (b != NULL)
				cap *= 2;
			if (cap > FILE_MAX_BYTES + 1) {
				errf(err, errlen, "%s: larger than %llu bytes",
				     path, (unsigned long long)FILE_MAX_BYTES);
				rc = -EFBIG;
				goto fail;
			}
			p = realloc(b, cap);
			if (p == NULL) {
				errf(err, errlen, "%s: out of memory", path);
				rc = -ENOMEM;
				goto fail;
			}
			b = p;
		}
		r = read(fd, b + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = -errno;
			errf(err, errlen, "%s: cannot read: %s", path,
			     strerror(errno));
			goto fail;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	b[n] = '\0';
	nul = memchr(b, '\0', n);
	if (nul != NULL) {
		unsigned int line = 1;
		const char *p;

		for (p = b; p < nul; p++)
			line += *p == '\n';
		errf(err, errlen, "%s:%u: a NUL byte: not a text file", path,
		     line);
		free(b);
		return -EINVAL;
	}
	*buf = b;
	*len = n;
	return 0;
fail:
	close(fd);
	free(b);
	return rc;
}

/* -1, 0 or 1 as @p x is below, at or above @p y: a sort's last key */
static int
u32_cmp(uint32_t x, uint32_t y)
{
	return x < y ? -1 : x > y;
}

/* ---- network.json ---- */

struct pcr_isp_net {
	struct pcr_isp_node *nodes;
	uint32_t n;
	uint32_t cap;
	uint32_t depth_max;
	uint32_t *by_name; /* node indexes, sorted by name */
	struct arena strings;
	const char *path; /* in strings: for the messages of later loads */
};

static void
net_free(struct pcr_isp_net *net)
{
	if (net == NULL)
		return;
	free(net->nodes);
	free(net->by_name);
	arena_free(&net->strings);
	free(net);
}

static int32_t
net_find(const struct pcr_isp_net *net, const char *name)
{
	uint32_t lo = 0, hi;

	if (net == NULL)
		return -1;
	hi = net->n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = strcmp(net->nodes[net->by_name[mid]].name, name);

		if (c == 0)
			return (int32_t)net->by_name[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

struct net_load {
	struct pcr_isp_net *net;
	const char *path;
	char *err;
	size_t errlen;
};

static void
path_append(const struct pcr_isp_net *net, uint32_t i, char *buf, size_t size,
	    size_t *off)
{
	const struct pcr_isp_node *nd = &net->nodes[i];
	int k;

	if (nd->parent >= 0) {
		path_append(net, (uint32_t)nd->parent, buf, size, off);
		if (*off + 1 < size)
			buf[(*off)++] = '/';
	}
	if (*off + 1 >= size)
		return;
	k = snprintf(buf + *off, size - *off, "%s", nd->name);
	if (k > 0)
		*off += (size_t)k < size - *off ? (size_t)k : size - *off - 1;
}

/* "Site_1/AP_7": node @p i's names from the top, for messages */
static const char *
node_path(const struct pcr_isp_net *net, uint32_t i, char *buf, size_t size)
{
	size_t off = 0;

	buf[0] = '\0';
	path_append(net, i, buf, size, &off);
	buf[off] = '\0';
	return buf;
}

/* "FILE: node 'PATH': FIELD 'VALUE': why", FIELD and VALUE optional */
static int __attribute__((format(printf, 5, 6)))
node_err(struct net_load *l, uint32_t i, const char *field, const char *value,
	 const char *fmt, ...)
{
	char path[512], why[256], s1[SHOWN_BYTES], s2[SHOWN_BYTES];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	node_path(l->net, i, path, sizeof(path));
	if (field == NULL)
		errf(l->err, l->errlen, "%s: node '%s': %s", l->path,
		     shown(s1, path), why);
	else if (value == NULL)
		errf(l->err, l->errlen, "%s: node '%s': %s: %s", l->path,
		     shown(s1, path), field, why);
	else
		errf(l->err, l->errlen, "%s: node '%s': %s '%s': %s", l->path,
		     shown(s1, path), field, shown(s2, value), why);
	return -EINVAL;
}

/* a JSON value as a message shows it: a string as its text */
static const char *
json_text(const json_t *v, char *buf, size_t size)
{
	char *s;

	switch (json_typeof(v)) {
	case JSON_STRING:
		snprintf(buf, size, "%s", json_string_value(v));
		break;
	case JSON_INTEGER:
		snprintf(buf, size, "%" JSON_INTEGER_FORMAT,
			 json_integer_value(v));
		break;
	case JSON_REAL:
		snprintf(buf, size, "%.15g", json_real_value(v));
		break;
	default:
		s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
		snprintf(buf, size, "%s", s != NULL ? s : "?");
		free(s);
		break;
	}
	return buf;
}

/* A node's capacity: a JSON number of Mbps above 0. */
static int
node_rate(struct net_load *l, uint32_t i, const json_t *obj, const char *key,
	  uint64_t *bps)
{
	const json_t *v = json_object_get(obj, key);
	char text[128];
	double d;

	if (v == NULL)
		return node_err(l, i, key, NULL,
				"missing (each node has its capacity in Mbps)");
	json_text(v, text, sizeof(text));
	if (json_is_integer(v)) {
		json_int_t n = json_integer_value(v);

		if (n <= 0)
			goto not_rate;
		if ((unsigned long long)n > PCR_ISP_MBPS_MAX)
			goto too_big;
		*bps = (uint64_t)n * 1000000;
		return 0;
	}
	if (!json_is_real(v))
		goto not_rate;
	d = json_real_value(v);
	if (!(d > 0))
		goto not_rate;
	if (d > (double)PCR_ISP_MBPS_MAX)
		goto too_big;
	/* exact for six decimals up to PCR_ISP_MBPS_MAX (pcr_isp.h) */
	*bps = (uint64_t)llround(d * 1e6);
	if (*bps == 0)
		return node_err(l, i, key, text, "under 1 bit/s");
	return 0;
not_rate:
	return node_err(l, i, key, text,
			"not a rate in Mbps (a number above 0)");
too_big:
	return node_err(l, i, key, text, "above %llu Mbps, the most taken",
			(unsigned long long)PCR_ISP_MBPS_MAX);
}

static int net_walk(struct net_load *l, json_t *obj, int32_t parent,
		    uint32_t depth);

/* node @p i from its value @p v, then its children */
static int
net_node(struct net_load *l, uint32_t i, json_t *v)
{
	struct pcr_isp_node *nd = &l->net->nodes[i];
	json_t *type, *kids;
	char text[128];
	uint64_t down, up;
	int rc;

	if (nd->name[0] == '\0')
		return node_err(l, i, "name", "",
				"empty (circuits name their parent node)");
	if (!json_is_object(v))
		return node_err(l, i, NULL, NULL,
				"'%s' is not an object (a node is "
				"{\"downloadBandwidthMbps\": N, "
				"\"uploadBandwidthMbps\": N, ...})",
				json_text(v, text, sizeof(text)));
	rc = node_rate(l, i, v, "downloadBandwidthMbps", &down);
	if (rc == 0)
		rc = node_rate(l, i, v, "uploadBandwidthMbps", &up);
	if (rc != 0)
		return rc;
	nd = &l->net->nodes[i];
	nd->down_bps = down;
	nd->up_bps = up;
	type = json_object_get(v, "type");
	if (type != NULL && json_is_string(type)) {
		nd->type =
			arena_strdup(&l->net->strings, json_string_value(type));
		if (nd->type == NULL)
			return -ENOMEM;
	} else if (type != NULL && !json_is_null(type)) {
		return node_err(l, i, "type",
				json_text(type, text, sizeof(text)),
				"not a string");
	}
	kids = json_object_get(v, "children");
	if (kids == NULL)
		return 0;
	if (!json_is_object(kids))
		return node_err(l, i, "children",
				json_text(kids, text, sizeof(text)),
				"not an object of nodes");
	return net_walk(l, kids, (int32_t)i, nd->depth + 1);
}

/* The nodes of object @p obj, each before its children (pre-order: a
 * subtree's nodes are contiguous, siblings in the file's order). */
static int
net_walk(struct net_load *l, json_t *obj, int32_t parent, uint32_t depth)
{
	struct pcr_isp_net *net = l->net;
	const char *key;
	json_t *v;
	int rc;

	json_object_foreach(obj, key, v) {
		struct pcr_isp_node *nodes;
		uint32_t i = net->n;

		nodes = grow(net->nodes, net->n, &net->cap, sizeof(*nodes));
		if (nodes == NULL)
			return -ENOMEM;
		net->nodes = nodes;
		nodes[i] = (struct pcr_isp_node){
			.name = arena_strdup(&net->strings, key),
			.type = "",
			.parent = parent,
			.depth = depth,
		};
		if (nodes[i].name == NULL)
			return -ENOMEM;
		net->n++;
		if (depth > net->depth_max)
			net->depth_max = depth;
		rc = net_node(l, i, v);
		if (rc != 0)
			return rc;
	}
	return 0;
}

static int
by_name_cmp(const void *a, const void *b, void *ctx)
{
	const struct pcr_isp_node *nodes = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int c = strcmp(nodes[x].name, nodes[y].name);

	return c != 0 ? c : u32_cmp(x, y);
}

/* The name index; two nodes of one name are refused, the later named. */
static int
net_index(struct net_load *l)
{
	struct pcr_isp_net *net = l->net;
	char other[512], s[SHOWN_BYTES];
	uint32_t i;

	net->by_name = malloc(((size_t)net->n + 1) * sizeof(*net->by_name));
	if (net->by_name == NULL)
		return -ENOMEM;
	for (i = 0; i < net->n; i++)
		net->by_name[i] = i;
	qsort_r(net->by_name, net->n, sizeof(*net->by_name), by_name_cmp,
		net->nodes);
	for (i = 1; i < net->n; i++) {
		uint32_t a = net->by_name[i - 1], b = net->by_name[i];

		if (strcmp(net->nodes[a].name, net->nodes[b].name) != 0)
			continue;
		node_path(net, a, other, sizeof(other));
		return node_err(l, b, "name", net->nodes[b].name,
				"already node '%s' (circuits name their "
				"parent node: names are unique in the tree)",
				shown(s, other));
	}
	return 0;
}

static int
net_parse(struct net_load *l, const char *text, size_t len)
{
	json_error_t jerr;
	json_t *root;
	int rc;

	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL) {
		errf(l->err, l->errlen, "%s:%d:%d: %s", l->path, jerr.line,
		     jerr.column, jerr.text);
		return -EINVAL;
	}
	if (!json_is_object(root)) {
		errf(l->err, l->errlen,
		     "%s: not a JSON object of nodes (LibreQoS's network.json: "
		     "{\"Site_1\": {\"downloadBandwidthMbps\": N, "
		     "\"uploadBandwidthMbps\": N, \"children\": {...}}, ...})",
		     l->path);
		json_decref(root);
		return -EINVAL;
	}
	rc = net_walk(l, root, -1, 1);
	json_decref(root);
	if (rc == 0)
		rc = net_index(l);
	return rc;
}

/* ---- ShapedDevices.csv ---- */

enum col {
	COL_CIRCUIT_ID,
	COL_CIRCUIT_NAME,
	COL_DEVICE_ID,
	COL_DEVICE_NAME,
	COL_PARENT,
	COL_MAC,
	COL_IPV4,
	COL_IPV6,
	COL_DOWN_MIN,
	COL_UP_MIN,
	COL_DOWN_MAX,
	COL_UP_MAX,
	COL_COMMENT,
	N_COLS
};

/* LibreQoS's header, in its order */
static const char *const col_name[N_COLS] = {
	[COL_CIRCUIT_ID] = "Circuit ID",
	[COL_CIRCUIT_NAME] = "Circuit Name",
	[COL_DEVICE_ID] = "Device ID",
	[COL_DEVICE_NAME] = "Device Name",
	[COL_PARENT] = "Parent Node",
	[COL_MAC] = "MAC",
	[COL_IPV4] = "IPv4",
	[COL_IPV6] = "IPv6",
	[COL_DOWN_MIN] = "Download Min Mbps",
	[COL_UP_MIN] = "Upload Min Mbps",
	[COL_DOWN_MAX] = "Download Max Mbps",
	[COL_UP_MAX] = "Upload Max Mbps",
	[COL_COMMENT] = "Comment",
};

#define HEADER_TEXT                                                            \
	"Circuit ID, Circuit Name, Device ID, Device Name, Parent Node, MAC, " \
	"IPv4, IPv6, Download Min Mbps, Upload Min Mbps, Download Max Mbps, "  \
	"Upload Max Mbps, Comment"

struct pcr_isp_subs {
	struct pcr_isp_circuit *circuits;
	uint32_t n_circuits;
	struct pcr_isp_device *devices;
	uint32_t n_devices;
	uint32_t cap_devices;
	struct pcr_isp_prefix *prefixes;
	uint32_t n_prefixes;
	uint32_t cap_prefixes;
	uint32_t n4;
	uint32_t n6;
	struct arena strings;
	const char *path; /* in strings: for a later network load's message */
};

static void
subs_free(struct pcr_isp_subs *s)
{
	if (s == NULL)
		return;
	free(s->circuits);
	free(s->devices);
	free(s->prefixes);
	arena_free(&s->strings);
	free(s);
}

/* The CSV being read and its last record: fields point into the text. */
struct csv {
	char *p;		 /* the next byte */
	char *end;		 /* the file's NUL */
	uint32_t line;		 /* p's line */
	uint32_t rec_line;	 /* the line the record starts on */
	uint32_t n_fields;	 /* fields of the record, the extra ones too */
	char *field[N_COLS + 1]; /* N_COLS: the first extra one */
};

/*
 * A row as the checks after the whole file need it (a row of a circuit
 * seen before is compared with the circuit's first row, a prefix with
 * the others once all are sorted): one a device, in file order, small
 * (the text holds its fields).
 */
struct subs_row {
	uint32_t field[N_COLS]; /* csv.field's offsets in the text */
	int32_t parent;		/* Parent Node's index in the nodes, -1 */
};

struct subs_load {
	struct csv csv;
	struct pcr_isp_subs *subs;
	const struct pcr_isp_net *net;
	char *text;	       /* the file, unquoted in place */
	struct subs_row *rows; /* as many as subs->devices */
	uint32_t cap_rows;
	const char *path;
	char *err;
	size_t errlen;
};

static const char *
col_label(unsigned int col, char *buf, size_t size)
{
	if (col < N_COLS)
		return col_name[col];
	snprintf(buf, size, "column %u", col + 1);
	return buf;
}

/* "FILE:LINE: FIELD 'VALUE': why" */
static int
row_verr(struct subs_load *l, uint32_t line, const char *label,
	 const char *value, const char *fmt, va_list ap)
{
	char why[512], s[SHOWN_BYTES];

	vsnprintf(why, sizeof(why), fmt, ap);
	errf(l->err, l->errlen, "%s:%u: %s '%s': %s", l->path, line, label,
	     shown(s, value), why);
	return -EINVAL;
}

/* an error in field @p col of a row (named as the header names it) */
static int __attribute__((format(printf, 5, 6)))
row_err(struct subs_load *l, uint32_t line, unsigned int col, const char *value,
	const char *fmt, ...)
{
	char label[32];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = row_verr(l, line, col_label(col, label, sizeof(label)), value, fmt,
		      ap);
	va_end(ap);
	return rc;
}

/* an error in the header's column @p col ("column 7") */
static int __attribute__((format(printf, 5, 6)))
header_err(struct subs_load *l, uint32_t line, unsigned int col,
	   const char *value, const char *fmt, ...)
{
	char label[32];
	va_list ap;
	int rc;

	snprintf(label, sizeof(label), "column %u", col + 1);
	va_start(ap, fmt);
	rc = row_verr(l, line, label, value, fmt, ap);
	va_end(ap);
	return rc;
}

static bool
is_blank(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r';
}

/*
 * The next record into l->csv (RFC 4180: a quoted field may hold commas,
 * newlines and "" for a quote; blanks around a field are dropped, a
 * quote inside an unquoted field is kept as text, as Python's csv does).
 * Blank lines and lines starting with '#' are skipped.
 * @return 1 a record, 0 the end of the file, -EINVAL (l->err set).
 */
static int
csv_record(struct subs_load *l)
{
	struct csv *c = &l->csv;
	char *r, *w, *start;

	for (;;) {
		for (r = c->p; r < c->end && is_blank(*r); r++)
			;
		if (r == c->end) {
			c->p = r;
			return 0;
		}
		if (*r != '\n' && *c->p != '#')
			break;
		while (r < c->end && *r != '\n')
			r++;
		c->p = r < c->end ? r + 1 : r;
		c->line++;
	}
	c->rec_line = c->line;
	c->n_fields = 0;
	for (;;) {
		uint32_t field_line = c->line;
		bool eol;

		for (r = c->p; r < c->end && (*r == ' ' || *r == '\t'); r++)
			;
		start = r;
		if (r < c->end && *r == '"') {
			/* unquote in place: w trails r by the quotes */
			w = start;
			for (r++;; r++) {
				if (r == c->end) {
					*w = '\0';
					return row_err(l, field_line,
						       c->n_fields, start,
						       "the file ends inside "
						       "this quoted field");
				}
				if (*r == '"') {
					if (r + 1 < c->end && r[1] == '"')
						r++;
					else
						break;
				} else if (*r == '\n') {
					c->line++;
				}
				*w++ = *r;
			}
			for (r++; r < c->end && is_blank(*r); r++)
				;
			if (r < c->end && *r != ',' && *r != '\n') {
				*w = '\0';
				return row_err(
					l, field_line, c->n_fields, start,
					"text after its closing quote (a "
					"quote inside quotes is doubled: "
					"\"\")");
			}
		} else {
			while (r < c->end && *r != ',' && *r != '\n')
				r++;
			for (w = r; w > start && is_blank(w[-1]); w--)
				;
		}
		eol = r == c->end || *r == '\n';
		/* w <= r: the delimiter's byte (or the file's NUL) */
		*w = '\0';
		if (c->n_fields <= N_COLS)
			c->field[c->n_fields] = start;
		if (c->n_fields < UINT32_MAX)
			c->n_fields++;
		/* past the delimiter (read before the NUL went over it) */
		if (r < c->end) {
			if (eol)
				c->line++;
			r++;
		}
		c->p = r;
		if (eol)
			return 1;
	}
}

static int
csv_header(struct subs_load *l)
{
	struct csv *c = &l->csv;
	unsigned int i, n;
	int rc;

	rc = csv_record(l);
	if (rc < 0)
		return rc;
	if (rc == 0) {
		errf(l->err, l->errlen,
		     "%s:%u: no header row (LibreQoS's ShapedDevices.csv "
		     "starts with: " HEADER_TEXT ")",
		     l->path, c->line);
		return -EINVAL;
	}
	n = c->n_fields < N_COLS ? c->n_fields : N_COLS;
	for (i = 0; i < n; i++)
		if (strcmp(c->field[i], col_name[i]) != 0)
			return header_err(
				l, c->rec_line, i, c->field[i],
				"not '%s' (LibreQoS's header: " HEADER_TEXT ")",
				col_name[i]);
	if (c->n_fields < N_COLS)
		return header_err(
			l, c->rec_line, c->n_fields, "",
			"missing: '%s' (LibreQoS's header: " HEADER_TEXT ")",
			col_name[c->n_fields]);
	if (c->n_fields > N_COLS)
		return header_err(l, c->rec_line, N_COLS, c->field[N_COLS],
				  "after 'Comment', the last column of "
				  "LibreQoS's header");
	return 0;
}

/* a prefix's key: addr, family and len (the struct's first 18 bytes) */
#define PREFIX_KEY_BYTES (offsetof(struct pcr_isp_prefix, len) + 1)

/*
 * @p tok ("198.18.0.5", "198.18.1.0/29", "2001:db8:1::/56") into *@p p,
 * host bits cleared. @return NULL, or why it is not one.
 */
static const char *
prefix_parse(const char *tok, int family, struct pcr_isp_prefix *p)
{
	unsigned int max = family == AF_INET ? 32 : 128, len = max, i;
	char addr[ADDR_TOKEN_MAX];
	const char *slash = strchr(tok, '/');
	size_t alen = slash != NULL ? (size_t)(slash - tok) : strlen(tok);

	if (alen >= sizeof(addr))
		goto bad;
	memcpy(addr, tok, alen);
	addr[alen] = '\0';
	memset(p, 0, sizeof(*p));
	if (inet_pton(family, addr, p->addr) != 1)
		goto bad;
	if (slash != NULL) {
		const char *d = slash + 1;

		if (*d == '\0')
			goto bad;
		for (len = 0; *d >= '0' && *d <= '9' && len <= max; d++)
			len = len * 10 + (unsigned int)(*d - '0');
		if (*d != '\0' || len > max)
			return family == AF_INET ? "prefix length not 0 to 32"
						 : "prefix length not 0 to 128";
	}
	for (i = 0; i < 16; i++) {
		unsigned int keep = len > i * 8 ? len - i * 8 : 0;

		if (keep < 8)
			p->addr[i] &= (uint8_t)(0xff00 >> keep);
	}
	p->family = (uint8_t)family;
	p->len = (uint8_t)len;
	return NULL;
bad:
	return family == AF_INET ? "not an IPv4 address or prefix (a.b.c.d "
				   "or a.b.c.d/len)"
				 : "not an IPv6 address or prefix (like "
				   "2001:db8::1 or 2001:db8:1::/56)";
}

/*
 * The next address of a column's text at *@p f (addresses are separated
 * by commas and/or blanks): *@p tok its first byte, *@p f past it.
 * @return its length, 0: none left.
 */
static size_t
addr_next(const char **f, const char **tok)
{
	const char *t = *f + strspn(*f, ", \t");
	size_t n = strcspn(t, ", \t");

	*tok = t;
	*f = t + n;
	return n;
}

/* The @p n bytes at @p t in @p tok (ADDR_TOKEN_MAX + 4 bytes), as a
 * message shows them: cut with "..." past ADDR_TOKEN_MAX (no address is
 * that long). */
static const char *
addr_shown(char *tok, const char *t, size_t n)
{
	if (n <= ADDR_TOKEN_MAX) {
		memcpy(tok, t, n);
		tok[n] = '\0';
	} else {
		memcpy(tok, t, ADDR_TOKEN_MAX);
		strcpy(tok + ADDR_TOKEN_MAX, "...");
	}
	return tok;
}

/* The addresses of column @p col (IPv4 or IPv6) of the row of device
 * @p dev, each a prefix (that none is another's is checked once the
 * file is read: prefixes_find()). */
static int
row_addrs(struct subs_load *l, unsigned int col, uint32_t dev)
{
	struct pcr_isp_subs *s = l->subs;
	int family = col == COL_IPV4 ? AF_INET : AF_INET6;
	const char *f = l->csv.field[col], *t;
	size_t n;

	while ((n = addr_next(&f, &t)) != 0) {
		char tok[ADDR_TOKEN_MAX + 4];
		struct pcr_isp_prefix *pfx;
		const char *why;

		pfx = grow(s->prefixes, s->n_prefixes, &s->cap_prefixes,
			   sizeof(*pfx));
		if (pfx == NULL)
			return -ENOMEM;
		s->prefixes = pfx;
		pfx += s->n_prefixes;
		addr_shown(tok, t, n);
		why = prefix_parse(n <= ADDR_TOKEN_MAX ? tok : "", family, pfx);
		if (why != NULL)
			return row_err(l, l->csv.rec_line, col, tok, "%s", why);
		pfx->device = dev;
		s->n_prefixes++;
		s->devices[dev].n_prefixes++;
		if (family == AF_INET)
			s->n4++;
		else
			s->n6++;
	}
	return 0;
}

/* The row's rates, checked: *@p bps in the order of the columns. */
static int
row_rates(struct subs_load *l, uint64_t bps[4])
{
	static const char *const why[2] = {
		"not a rate in Mbps (a number, 0 or above)",
		"not a rate in Mbps (a number above 0)",
	};
	struct csv *c = &l->csv;
	unsigned int k;
	int rc;

	for (k = 0; k < 4; k++) {
		unsigned int col = COL_DOWN_MIN + k;
		bool is_max = col >= COL_DOWN_MAX;

		rc = mbps_parse(c->field[col], &bps[k]);
		if (rc == -ERANGE)
			return row_err(l, c->rec_line, col, c->field[col],
				       "above %llu Mbps, the most taken",
				       (unsigned long long)PCR_ISP_MBPS_MAX);
		if (rc != 0 || (is_max && bps[k] == 0))
			return row_err(l, c->rec_line, col, c->field[col], "%s",
				       why[is_max]);
	}
	for (k = 0; k < 2; k++)
		if (bps[k] > bps[k + 2])
			return row_err(l, c->rec_line, COL_DOWN_MIN + k,
				       c->field[COL_DOWN_MIN + k],
				       "above %s '%s' (min <= max)",
				       col_name[COL_DOWN_MAX + k],
				       c->field[COL_DOWN_MAX + k]);
	return 0;
}

static int
subs_row(struct subs_load *l)
{
	struct pcr_isp_subs *s = l->subs;
	struct csv *c = &l->csv;
	struct pcr_isp_device *dv;
	struct subs_row *rw;
	const char *parent = c->field[COL_PARENT];
	int32_t parent_idx = -1;
	char s1[SHOWN_BYTES];
	uint64_t bps[4];
	uint32_t dev, k;
	int rc;

	if (c->n_fields < N_COLS)
		return row_err(l, c->rec_line, c->n_fields, "",
			       "missing: the row has %u fields, the header %u",
			       c->n_fields, N_COLS);
	if (c->n_fields > N_COLS)
		return row_err(l, c->rec_line, N_COLS, c->field[N_COLS],
			       "the row has %u fields, the header %u (a "
			       "comma inside a field needs the field in "
			       "double quotes)",
			       c->n_fields, N_COLS);
	if (c->field[COL_CIRCUIT_ID][0] == '\0')
		return row_err(l, c->rec_line, COL_CIRCUIT_ID, "",
			       "empty (the rows of one subscriber share a "
			       "Circuit ID)");
	rc = row_rates(l, bps);
	if (rc != 0)
		return rc;
	if (parent[0] != '\0') {
		parent_idx = net_find(l->net, parent);
		if (parent_idx < 0 && l->net == NULL)
			return row_err(l, c->rec_line, COL_PARENT, parent,
				       "no network.json loaded (a flat ISP "
				       "leaves Parent Node empty)");
		if (parent_idx < 0)
			return row_err(l, c->rec_line, COL_PARENT, parent,
				       "not a node of %s",
				       shown(s1, l->net->path));
	}

	/* its circuit: found once the file is read (circuits_find()) */
	rw = grow(l->rows, s->n_devices, &l->cap_rows, sizeof(*rw));
	if (rw == NULL)
		return -ENOMEM;
	l->rows = rw;
	rw += s->n_devices;
	/* the file is at most FILE_MAX_BYTES: an offset is 32 bits */
	for (k = 0; k < N_COLS; k++)
		rw->field[k] = (uint32_t)(c->field[k] - l->text);
	rw->parent = parent_idx;
	dv = grow(s->devices, s->n_devices, &s->cap_devices, sizeof(*dv));
	if (dv == NULL)
		return -ENOMEM;
	s->devices = dv;
	dev = s->n_devices++;
	dv = &s->devices[dev];
	*dv = (struct pcr_isp_device){
		.id = arena_strdup(&s->strings, c->field[COL_DEVICE_ID]),
		.name = arena_strdup(&s->strings, c->field[COL_DEVICE_NAME]),
		.mac = arena_strdup(&s->strings, c->field[COL_MAC]),
		.comment = arena_strdup(&s->strings, c->field[COL_COMMENT]),
		.line = c->rec_line,
	};
	if (dv->id == NULL || dv->name == NULL || dv->mac == NULL ||
	    dv->comment == NULL)
		return -ENOMEM;
	rc = row_addrs(l, COL_IPV4, dev);
	if (rc == 0)
		rc = row_addrs(l, COL_IPV6, dev);
	return rc;
}

/* ---- what the rows say together: found by sorting ---- */

/* field @p col of row @p r */
static const char *
row_field(const struct subs_load *l, uint32_t r, unsigned int col)
{
	return l->text + l->rows[r].field[col];
}

/* rate @p k (0: Download Min Mbps, ...) of row @p r, in bit/s: read
 * again, checked when the row was */
static uint64_t
row_bps(const struct subs_load *l, uint32_t r, unsigned int k)
{
	uint64_t bps = 0;

	mbps_parse(row_field(l, r, COL_DOWN_MIN + k), &bps);
	return bps;
}

/* A row's Circuit ID (its offset in the text): sorted, the rows of a
 * circuit are together, its first row (in the file) at their head. */
struct row_key {
	uint32_t id;
	uint32_t row;
};

static int
row_key_cmp(const void *a, const void *b, void *text)
{
	const struct row_key *x = a, *y = b;
	int c = strcmp((const char *)text + x->id, (const char *)text + y->id);

	return c != 0 ? c : u32_cmp(x->row, y->row);
}

/* The first column where row @p r says other than @p first, its
 * circuit's first row (they agree on its name, parent node and rates);
 * N_COLS: none. */
static unsigned int
row_differs(const struct subs_load *l, uint32_t first, uint32_t r)
{
	unsigned int k;

	if (strcmp(row_field(l, r, COL_CIRCUIT_NAME),
		   row_field(l, first, COL_CIRCUIT_NAME)) != 0)
		return COL_CIRCUIT_NAME;
	if (strcmp(row_field(l, r, COL_PARENT),
		   row_field(l, first, COL_PARENT)) != 0)
		return COL_PARENT;
	for (k = 0; k < 4; k++)
		if (row_bps(l, r, k) != row_bps(l, first, k))
			return COL_DOWN_MIN + k;
	return N_COLS;
}

/* row @p r disagrees with its circuit's first row, @p first */
static int
row_differs_err(struct subs_load *l, uint32_t first, uint32_t r)
{
	const struct pcr_isp_device *dv = l->subs->devices;
	unsigned int col = row_differs(l, first, r);
	char s1[SHOWN_BYTES], s2[SHOWN_BYTES], m[32];
	const char *had = row_field(l, first, col);

	if (col >= COL_DOWN_MIN)
		had = mbps_text(m, sizeof(m),
				row_bps(l, first, col - COL_DOWN_MIN));
	return row_err(l, dv[r].line, col, row_field(l, r, col),
		       "circuit '%s' has '%s' on its first line, %u (the rows "
		       "of a circuit agree on its name, parent node and rates)",
		       shown(s1, row_field(l, first, COL_CIRCUIT_ID)),
		       shown(s2, had), dv[first].line);
}

/*
 * Each row's circuit, as the index of the circuit's first row in
 * devices[].circuit; *@p n their number, *@p bad the first row that
 * disagrees with its circuit's first (UINT32_MAX: none).
 */
static int
circuits_find(struct subs_load *l, uint32_t *n, uint32_t *bad)
{
	struct pcr_isp_subs *s = l->subs;
	struct row_key *key;
	uint32_t i, j;

	key = malloc(((size_t)s->n_devices + 1) * sizeof(*key));
	if (key == NULL)
		return -ENOMEM;
	for (i = 0; i < s->n_devices; i++)
		key[i] = (struct row_key){l->rows[i].field[COL_CIRCUIT_ID], i};
	qsort_r(key, s->n_devices, sizeof(*key), row_key_cmp, l->text);
	*n = 0;
	*bad = UINT32_MAX;
	for (i = 0; i < s->n_devices; i = j) {
		uint32_t first = key[i].row;
		const char *id = l->text + key[i].id;

		s->devices[first].circuit = first;
		for (j = i + 1;
		     j < s->n_devices && strcmp(l->text + key[j].id, id) == 0;
		     j++) {
			uint32_t r = key[j].row;

			s->devices[r].circuit = first;
			if (r < *bad && row_differs(l, first, r) != N_COLS)
				*bad = r;
		}
		(*n)++;
	}
	free(key);
	return 0;
}

/* prefixes[] indexes by prefix (equal ones together), then file order */
static int
prefix_cmp(const void *a, const void *b, void *ctx)
{
	const struct pcr_isp_prefix *p = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int c = memcmp(&p[x], &p[y], PREFIX_KEY_BYTES);

	return c != 0 ? c : u32_cmp(x, y);
}

/* *@p bad: the first prefix in file order that came before, *@p first
 * where it came first (*@p bad UINT32_MAX: none). */
static int
prefixes_find(const struct pcr_isp_subs *s, uint32_t *bad, uint32_t *first)
{
	uint32_t *idx, i;

	idx = malloc(((size_t)s->n_prefixes + 1) * sizeof(*idx));
	if (idx == NULL)
		return -ENOMEM;
	for (i = 0; i < s->n_prefixes; i++)
		idx[i] = i;
	qsort_r(idx, s->n_prefixes, sizeof(*idx), prefix_cmp, s->prefixes);
	*bad = UINT32_MAX;
	/* equal prefixes are together, in file order: the second of a run
	 * is the first to come again */
	for (i = 1; i < s->n_prefixes; i++) {
		if (idx[i] < *bad &&
		    memcmp(&s->prefixes[idx[i - 1]], &s->prefixes[idx[i]],
			   PREFIX_KEY_BYTES) == 0) {
			*bad = idx[i];
			*first = idx[i - 1];
		}
	}
	free(idx);
	return 0;
}

/* prefix @p i is prefix @p first again */
static int
prefix_twice_err(struct subs_load *l, uint32_t i, uint32_t first)
{
	const struct pcr_isp_subs *s = l->subs;
	const struct pcr_isp_prefix *p = &s->prefixes[i];
	const struct pcr_isp_prefix *o = &s->prefixes[first];
	unsigned int col = p->family == AF_INET ? COL_IPV4 : COL_IPV6;
	const char *f = row_field(l, p->device, col), *t = f;
	char tok[ADDR_TOKEN_MAX + 4], a[INET6_ADDRSTRLEN], sid[SHOWN_BYTES];
	uint32_t k = i;
	size_t n = 0;

	/* its text: back to its column's first prefix on its row, then
	 * that many addresses of the column read again */
	while (k > 0 && s->prefixes[k - 1].device == p->device &&
	       s->prefixes[k - 1].family == p->family)
		k--;
	for (; k <= i; k++)
		n = addr_next(&f, &t);
	addr_shown(tok, t, n);
	inet_ntop(p->family, p->addr, a, sizeof(a));
	if (o->device == p->device)
		return row_err(l, s->devices[p->device].line, col, tok,
			       "%s/%u twice on this row", a, p->len);
	return row_err(l, s->devices[p->device].line, col, tok,
		       "%s/%u is already on line %u (circuit '%s'): a prefix "
		       "belongs to one device of one circuit",
		       a, p->len, s->devices[o->device].line,
		       shown(sid, row_field(l, o->device, COL_CIRCUIT_ID)));
}

/*
 * The rows read, together: each row's circuit (circuits_find()), and
 * the first error in file order, as a reader going row by row meets it:
 * a row that disagrees with its circuit's first row (met before the
 * row's addresses) or a prefix seen before. *@p n: the number of
 * circuits.
 */
static int
subs_check(struct subs_load *l, uint32_t *n)
{
	uint32_t bad_row, bad_pfx, first = 0;
	int rc;

	rc = circuits_find(l, n, &bad_row);
	if (rc == 0)
		rc = prefixes_find(l->subs, &bad_pfx, &first);
	if (rc != 0)
		return rc;
	if (bad_row != UINT32_MAX &&
	    (bad_pfx == UINT32_MAX ||
	     bad_row <= l->subs->prefixes[bad_pfx].device))
		return row_differs_err(l, l->subs->devices[bad_row].circuit,
				       bad_row);
	if (bad_pfx != UINT32_MAX)
		return prefix_twice_err(l, bad_pfx, first);
	return 0;
}

/* The @p n circuits, in the order of their first rows: devices[].circuit
 * (a first row's index) becomes an index in circuits[]. */
static int
circuits_make(struct subs_load *l, uint32_t n)
{
	struct pcr_isp_subs *s = l->subs;
	uint32_t i;

	s->circuits = malloc(((size_t)n + 1) * sizeof(*s->circuits));
	if (s->circuits == NULL)
		return -ENOMEM;
	for (i = 0; i < s->n_devices; i++) {
		struct pcr_isp_device *dv = &s->devices[i];
		struct pcr_isp_circuit *ci = &s->circuits[s->n_circuits];

		if (dv->circuit != i) {
			dv->circuit = s->devices[dv->circuit].circuit;
		} else {
			*ci = (struct pcr_isp_circuit){
				.id = arena_strdup(
					&s->strings,
					row_field(l, i, COL_CIRCUIT_ID)),
				.name = arena_strdup(
					&s->strings,
					row_field(l, i, COL_CIRCUIT_NAME)),
				.parent_name = arena_strdup(
					&s->strings,
					row_field(l, i, COL_PARENT)),
				.parent = l->rows[i].parent,
				.line = dv->line,
				.down_min_bps = row_bps(l, i, 0),
				.up_min_bps = row_bps(l, i, 1),
				.down_max_bps = row_bps(l, i, 2),
				.up_max_bps = row_bps(l, i, 3),
			};
			if (ci->id == NULL || ci->name == NULL ||
			    ci->parent_name == NULL)
				return -ENOMEM;
			dv->circuit = s->n_circuits++;
		}
		s->circuits[dv->circuit].n_devices++;
		s->circuits[dv->circuit].n_prefixes += dv->n_prefixes;
	}
	for (i = 0; i < s->n_prefixes; i++)
		s->prefixes[i].circuit =
			s->devices[s->prefixes[i].device].circuit;
	return 0;
}

/*
 * Devices and prefixes grouped by circuit (a counting sort, file order
 * kept within a circuit): a circuit's rows need not be adjacent in the
 * file, but its devices and prefixes are in the arrays. A device's
 * prefixes came from one row, one after another, so they stay together.
 */
static int
subs_group(struct pcr_isp_subs *s)
{
	struct pcr_isp_device *dv = NULL;
	struct pcr_isp_prefix *pf = NULL;
	uint32_t *fill = NULL, *dmap = NULL, i, nd = 0, np = 0;

	/* the usual file: each circuit's rows together, so the arrays are
	 * grouped already (circuits are numbered as they first come) */
	for (i = 1; i < s->n_devices; i++)
		if (s->devices[i].circuit < s->devices[i - 1].circuit)
			break;
	if (i >= s->n_devices) {
		for (i = 0; i < s->n_circuits; i++) {
			s->circuits[i].first_device = nd;
			s->circuits[i].first_prefix = np;
			nd += s->circuits[i].n_devices;
			np += s->circuits[i].n_prefixes;
		}
		for (i = 0, np = 0; i < s->n_devices; i++) {
			s->devices[i].first_prefix = np;
			np += s->devices[i].n_prefixes;
		}
		return 0;
	}
	fill = calloc((size_t)s->n_circuits + 1, sizeof(*fill));
	dmap = malloc(((size_t)s->n_devices + 1) * sizeof(*dmap));
	dv = malloc(((size_t)s->n_devices + 1) * sizeof(*dv));
	pf = malloc(((size_t)s->n_prefixes + 1) * sizeof(*pf));
	if (fill == NULL || dmap == NULL || dv == NULL || pf == NULL) {
		free(fill);
		free(dmap);
		free(dv);
		free(pf);
		return -ENOMEM;
	}
	for (i = 0; i < s->n_circuits; i++) {
		s->circuits[i].first_device = nd;
		s->circuits[i].first_prefix = np;
		nd += s->circuits[i].n_devices;
		np += s->circuits[i].n_prefixes;
	}
	for (i = 0; i < s->n_devices; i++) {
		const struct pcr_isp_circuit *ci =
			&s->circuits[s->devices[i].circuit];
		uint32_t to = ci->first_device + fill[s->devices[i].circuit]++;

		dv[to] = s->devices[i];
		dv[to].first_prefix = ci->first_prefix;
		dv[to].n_prefixes = 0;
		dmap[i] = to;
	}
	memset(fill, 0, ((size_t)s->n_circuits + 1) * sizeof(*fill));
	for (i = 0; i < s->n_prefixes; i++) {
		uint32_t c = s->prefixes[i].circuit;
		uint32_t to = s->circuits[c].first_prefix + fill[c]++;
		struct pcr_isp_device *d = &dv[dmap[s->prefixes[i].device]];

		pf[to] = s->prefixes[i];
		pf[to].device = dmap[s->prefixes[i].device];
		if (d->n_prefixes++ == 0)
			d->first_prefix = to;
	}
	free(fill);
	free(dmap);
	free(s->devices);
	free(s->prefixes);
	s->devices = dv;
	s->prefixes = pf;
	s->cap_devices = s->n_devices + 1;
	s->cap_prefixes = s->n_prefixes + 1;
	return 0;
}

/* Arrays sized for a row a line (at most PRESIZE_ROWS_MAX rows: beyond,
 * they grow): no copy while loading. */
#define PRESIZE_ROWS_MAX (4U << 20)

static int
subs_presize(struct subs_load *l, const char *text, size_t len)
{
	struct pcr_isp_subs *s = l->subs;
	const char *p = text, *e = text + len;
	uint32_t rows = 1;

	while (rows < PRESIZE_ROWS_MAX &&
	       (p = memchr(p, '\n', (size_t)(e - p))) != NULL) {
		p++;
		rows++;
	}
	l->rows = malloc((size_t)rows * sizeof(*l->rows));
	s->devices = malloc((size_t)rows * sizeof(*s->devices));
	/* a prefix or two a row: IPv4 and, for half, IPv6 */
	s->prefixes = malloc((size_t)rows * 2 * sizeof(*s->prefixes));
	if (l->rows == NULL || s->devices == NULL || s->prefixes == NULL)
		return -ENOMEM;
	l->cap_rows = rows;
	s->cap_devices = rows;
	s->cap_prefixes = rows * 2;
	return 0;
}

static int
subs_parse(struct subs_load *l, char *text, size_t len)
{
	struct pcr_isp_subs *s = l->subs;
	uint32_t i, n;
	int rc, rc_all;

	rc = subs_presize(l, text, len);
	if (rc != 0)
		return rc;
	l->text = text;
	l->csv.p = text;
	l->csv.end = text + len;
	l->csv.line = 1;
	/* a UTF-8 byte order mark, as Excel writes one */
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		l->csv.p += 3;
	rc = csv_header(l);
	while (rc == 0) {
		rc = csv_record(l);
		if (rc == 1)
			rc = subs_row(l);
		else if (rc == 0)
			break;
	}
	if (rc == -ENOMEM)
		return rc;
	/* the rows read so far, together: an error found there comes
	 * before the one that stopped the reading, if any */
	rc_all = subs_check(l, &n);
	if (rc_all != 0 || rc != 0)
		return rc_all != 0 ? rc_all : rc;
	rc = circuits_make(l, n);
	if (rc != 0)
		return rc;
	for (i = 0; i < s->n_circuits; i++)
		if (s->circuits[i].n_prefixes == 0)
			return row_err(l, s->circuits[i].line, COL_CIRCUIT_ID,
				       s->circuits[i].id,
				       "no IPv4 or IPv6 address on any of its "
				       "rows (%u): its traffic could not be "
				       "told from another's",
				       s->circuits[i].n_devices);
	return subs_group(s);
}

/* ---- the ISP ---- */

static void
isp_views(struct pcr_isp *isp)
{
	const struct pcr_isp_net *net = isp->net_;
	const struct pcr_isp_subs *s = isp->subs_;

	isp->nodes = net != NULL ? net->nodes : NULL;
	isp->n_nodes = net != NULL ? net->n : 0;
	isp->node_depth_max = net != NULL ? net->depth_max : 0;
	isp->circuits = s != NULL ? s->circuits : NULL;
	isp->n_circuits = s != NULL ? s->n_circuits : 0;
	isp->devices = s != NULL ? s->devices : NULL;
	isp->n_devices = s != NULL ? s->n_devices : 0;
	isp->prefixes = s != NULL ? s->prefixes : NULL;
	isp->n_prefixes = s != NULL ? s->n_prefixes : 0;
	isp->n_prefixes4 = s != NULL ? s->n4 : 0;
	isp->n_prefixes6 = s != NULL ? s->n6 : 0;
}

struct pcr_isp *
pcr_isp_new(void)
{
	return calloc(1, sizeof(struct pcr_isp));
}

void
pcr_isp_free(struct pcr_isp *isp)
{
	if (isp == NULL)
		return;
	net_free(isp->net_);
	subs_free(isp->subs_);
	free(isp);
}

int32_t
pcr_isp_node_find(const struct pcr_isp *isp, const char *name)
{
	return net_find(isp->net_, name);
}

/* The circuits loaded before, under the new network @p net: each keeps
 * its parent by name (the new index in @p parent[]). */
static int
reparent(const struct pcr_isp *isp, const struct pcr_isp_net *net,
	 int32_t **parent, char *err, size_t errlen)
{
	const struct pcr_isp_subs *s = isp->subs_;
	char s1[SHOWN_BYTES], s2[SHOWN_BYTES];
	int32_t *p;
	uint32_t i;

	*parent = NULL;
	if (s == NULL || s->n_circuits == 0)
		return 0;
	p = malloc((size_t)s->n_circuits * sizeof(*p));
	if (p == NULL)
		return -ENOMEM;
	for (i = 0; i < s->n_circuits; i++) {
		const struct pcr_isp_circuit *ci = &s->circuits[i];

		p[i] = -1;
		if (ci->parent_name[0] == '\0')
			continue;
		p[i] = net_find(net, ci->parent_name);
		if (p[i] < 0) {
			errf(err, errlen,
			     "%s:%u: Parent Node '%s': not a node of %s (the "
			     "circuits loaded need their parents in a new "
			     "network)",
			     s->path, ci->line, shown(s1, ci->parent_name),
			     shown(s2, net->path));
			free(p);
			return -EINVAL;
		}
	}
	*parent = p;
	return 0;
}

int
pcr_isp_load_network(struct pcr_isp *isp, const char *path, char *err,
		     size_t errlen)
{
	struct net_load l = {.path = path, .err = err, .errlen = errlen};
	int32_t *parent = NULL;
	char *text = NULL;
	size_t len, i;
	int rc;

	rc = read_text_file(path, &text, &len, err, errlen);
	if (rc != 0)
		return rc;
	l.net = calloc(1, sizeof(*l.net));
	if (l.net == NULL)
		goto nomem;
	l.net->path = arena_strdup(&l.net->strings, path);
	if (l.net->path == NULL)
		goto nomem;
	rc = net_parse(&l, text, len);
	if (rc == 0)
		rc = reparent(isp, l.net, &parent, err, errlen);
	if (rc == -ENOMEM)
		goto nomem;
	if (rc != 0)
		goto out;
	if (parent != NULL)
		for (i = 0; i < isp->subs_->n_circuits; i++)
			isp->subs_->circuits[i].parent = parent[i];
	net_free(isp->net_);
	isp->net_ = l.net;
	l.net = NULL;
	isp_views(isp);
	goto out;
nomem:
	errf(err, errlen, "%s: out of memory", path);
	rc = -ENOMEM;
out:
	free(parent);
	net_free(l.net);
	free(text);
	return rc;
}

int
pcr_isp_load_subscribers(struct pcr_isp *isp, const char *path, char *err,
			 size_t errlen)
{
	struct subs_load l = {
		.net = isp->net_,
		.path = path,
		.err = err,
		.errlen = errlen,
	};
	char *text = NULL;
	size_t len;
	int rc;

	rc = read_text_file(path, &text, &len, err, errlen);
	if (rc != 0)
		return rc;
	l.subs = calloc(1, sizeof(*l.subs));
	if (l.subs == NULL)
		goto nomem;
	l.subs->path = arena_strdup(&l.subs->strings, path);
	if (l.subs->path == NULL)
		goto nomem;
	rc = subs_parse(&l, text, len);
	if (rc == -ENOMEM)
		goto nomem;
	if (rc != 0)
		goto out;
	subs_free(isp->subs_);
	isp->subs_ = l.subs;
	l.subs = NULL;
	isp_views(isp);
	goto out;
nomem:
	errf(err, errlen, "%s: out of memory", path);
	rc = -ENOMEM;
out:
	free(l.rows);
	subs_free(l.subs);
	free(text);
	return rc;
}
