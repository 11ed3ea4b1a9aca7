/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * The control socket (--control-socket): the prompt's grammar for a running
 * pacer, over a UNIX stream socket, to several clients at once (pacerctl,
 * or anything that writes a line). Served from the control loop like the
 * prompt and the script, so a command runs exactly as typed there: same
 * thread, same lock, same handlers; the fast path never sees a client.
 *
 * Protocol. A request is one line (at most PCR_CLI_LINE_MAX bytes, then
 * '\n'). The reply is the command's output (text, as the prompt prints
 * it), then a NUL byte, then "ok\n" or "error\n": error when the line did
 * not parse or its handler printed a line starting "error:". A client may
 * send the next request at once; replies come in order.
 *
 * A bad client costs only itself: a line too long gets an error reply and
 * the connection closed; garbage is a command not found; a client that
 * goes away mid-reply is dropped; one that stops reading is dropped once
 * PCR_CTL_OUT_MAX bytes of replies wait for it; past PCR_CTL_CLIENTS
 * connections, the one idle longest is told so and closed to make room, so
 * clients that connect and say nothing cannot lock the others out. Nothing
 * here blocks: every socket is non-blocking and served a bounded amount a
 * pass.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_eal.h>

#include "control.h"
#include "pacer.h"

#define PCR_CTL_CLIENTS 64
#define PCR_CTL_OUT_MAX (4u << 20)
/* requests run per client per pass: a client that pipelines many waits
 * for the next pass, the others do not wait for it */
#define PCR_CTL_BATCH 8

struct ctl_client {
	int fd;
	uint64_t seen;       /* last input (a count of events, not time) */
	size_t in_len;
	char in[PCR_CLI_LINE_MAX + 1];
	char *out;           /* replies not yet written */
	size_t out_len, out_off;
};

static int listen_fd = -1;
static int out_memfd = -1;   /* a command's output lands here */
static char sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
static struct ctl_client clients[PCR_CTL_CLIENTS];
static uint64_t events;

static void
client_close(struct ctl_client *c)
{
	close(c->fd);
	free(c->out);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

/* Queue @p len bytes of reply; false (and the client dropped) past the
 * limit. */
static bool
client_queue(struct ctl_client *c, const char *b, size_t len)
{
	size_t pending = c->out_len - c->out_off;
	char *n;

	if (len == 0)
		return true;
	if (pending + len > PCR_CTL_OUT_MAX) {
		client_close(c);
		return false;
	}
	if (c->out_off != 0) {
		memmove(c->out, c->out + c->out_off, pending);
		c->out_len = pending;
		c->out_off = 0;
	}
	n = realloc(c->out, c->out_len + len);
	if (n == NULL) {
		client_close(c);
		return false;
	}
	memcpy(n + c->out_len, b, len);
	c->out = n;
	c->out_len += len;
	return true;
}

/* Write what is queued, as far as the socket takes it. */
static void
client_flush(struct ctl_client *c)
{
	while (c->fd >= 0 && c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off,
				 c->out_len - c->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				client_close(c);
			return;
		}
		c->out_off += (size_t)n;
	}
	if (c->fd >= 0 && c->out_off == c->out_len) {
		free(c->out);
		c->out = NULL;
		c->out_len = c->out_off = 0;
	}
}

/* A reply: @p text, NUL, the status line. */
static bool
client_reply(struct ctl_client *c, const char *text, size_t len, bool ok)
{
	static const char okl[] = "\0ok\n", errl[] = "\0error\n";

	if (!client_queue(c, text, len))
		return false;
	return ok ? client_queue(c, okl, sizeof(okl) - 1) :
		    client_queue(c, errl, sizeof(errl) - 1);
}

static bool
client_error(struct ctl_client *c, const char *msg)
{
	return client_reply(c, msg, strlen(msg), false);
}

/* Did the output say error? A line starting "error:". */
static bool
says_error(const char *b, size_t len)
{
	size_t i = 0;

	while (i < len) {
		if (len - i >= 6 && memcmp(b + i, "error:", 6) == 0)
			return true;
		while (i < len && b[i] != '\n')
			i++;
		i++;
	}
	return false;
}

/* Run one request line and queue its reply. */
static bool
client_run(struct ctl_client *c, char *line)
{
	char *out = NULL;
	struct stat st;
	size_t len = 0;
	bool ok, alive;
	int rc;

	/* trailing '\r' (a telnet-like client) and blanks */
	len = strlen(line);
	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' ' ||
			   line[len - 1] == '\t'))
		line[--len] = '\0';
	while (*line == ' ' || *line == '\t')
		line++;
	if (*line == '\0')
		return client_reply(c, "", 0, true);
	if (ftruncate(out_memfd, 0) != 0 || lseek(out_memfd, 0, SEEK_SET) != 0)
		return client_error(c, "error: internal: output buffer\n");
	rc = pcr_cli_run(line, out_memfd);
	len = 0;
	if (fstat(out_memfd, &st) == 0 && st.st_size > 0) {
		len = (size_t)st.st_size;
		out = malloc(len);
		if (out == NULL || pread(out_memfd, out, len, 0) != (ssize_t)len) {
			free(out);
			return client_error(c, "error: out of memory\n");
		}
	}
	ok = rc == 0 && !says_error(out, len);
	alive = client_reply(c, out != NULL ? out : "", len, ok);
	free(out);
	return alive;
}

/* Read what the client sent; run each whole line (PCR_CTL_BATCH a pass). */
static void
client_read(struct ctl_client *c)
{
	unsigned int runs = 0;

	for (;;) {
		char *nl;
		ssize_t n;

		/* whole lines first */
		while ((nl = memchr(c->in, '\n', c->in_len)) != NULL) {
			size_t used = (size_t)(nl - c->in) + 1;

			if (runs++ == PCR_CTL_BATCH)
				return;
			*nl = '\0';
			if (memchr(c->in, '\0', used - 1) != NULL) {
				if (!client_error(c, "error: a command is a line of text: it has a NUL byte\n"))
					return;
			} else if (!client_run(c, c->in)) {
				return;
			}
			memmove(c->in, c->in + used, c->in_len - used);
			c->in_len -= used;
		}
		if (c->in_len == PCR_CLI_LINE_MAX + 1) {
			char e[96];
			int k = snprintf(e, sizeof(e),
					 "error: a line is at most %u bytes; closing\n",
					 PCR_CLI_LINE_MAX);

			if (client_reply(c, e, (size_t)k, false)) {
				client_flush(c);
				if (c->fd >= 0)
					client_close(c);
			}
			return;
		}
		n = recv(c->fd, c->in + c->in_len,
			 PCR_CLI_LINE_MAX + 1 - c->in_len, MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
			       errno != EINTR)) {
			/* gone (mid-command or not): what it sent unfinished
			 * is not run */
			client_close(c);
			return;
		}
		if (n < 0)
			return;
		c->in_len += (size_t)n;
		c->seen = ++events;
	}
}

static void
accept_all(void)
{
	for (;;) {
		int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		unsigned int i;

		if (fd < 0)
			return;
		for (i = 0; i < PCR_CTL_CLIENTS; i++)
			if (clients[i].fd < 0)
				break;
		if (i == PCR_CTL_CLIENTS) {
			/* full: the one idle longest makes room */
			static const char busy[] =
				"error: too many control clients; this one, idle longest, is closed\n\0error\n";
			unsigned int k;

			for (i = 0, k = 1; k < PCR_CTL_CLIENTS; k++)
				if (clients[k].seen < clients[i].seen)
					i = k;
			if (send(clients[i].fd, busy, sizeof(busy) - 1,
				 MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
				/* it is closed either way */
			}
			client_close(&clients[i]);
		}
		memset(&clients[i], 0, sizeof(clients[i]));
		clients[i].fd = fd;
		clients[i].seen = ++events;
		/* what it sent before we got to it is served now, before the
		 * next connection could make it the idlest */
		client_read(&clients[i]);
		if (clients[i].fd >= 0)
			client_flush(&clients[i]);
	}
}

int
pcr_ctlsock_init(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	unsigned int i;
	int fd;

	for (i = 0; i < PCR_CTL_CLIENTS; i++)
		clients[i].fd = -1;
	if (strcmp(path, "none") == 0)
		return 0;
	if (path[0] == '\0')
		snprintf(sock_path, sizeof(sock_path), "%s/pacer.sock",
			 rte_eal_get_runtime_dir());
	else
		snprintf(sock_path, sizeof(sock_path), "%s", path);
	if (strlen(sock_path) >= sizeof(sa.sun_path) - 1) {
		fprintf(stderr, "pacer: control socket %s: longer than a UNIX socket path takes (%zu bytes)\n",
			sock_path, sizeof(sa.sun_path) - 2);
		return -1;
	}
	out_memfd = memfd_create("pacer-ctl-out", MFD_CLOEXEC);
	if (out_memfd < 0) {
		fprintf(stderr, "pacer: control socket: memfd_create: %s\n",
			strerror(errno));
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, "pacer: control socket: %s\n", strerror(errno));
		return -1;
	}
	memcpy(sa.sun_path, sock_path, strlen(sock_path) + 1);
	/* a socket file left by a pacer that died: nobody listens on it */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		fprintf(stderr, "pacer: control socket %s: another pacer is listening on it\n",
			sock_path);
		close(fd);
		return -1;
	}
	close(fd);
	unlink(sock_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    chmod(sock_path, 0600) != 0 || listen(fd, 64) != 0) {
		fprintf(stderr, "pacer: control socket %s: %s\n", sock_path,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		unlink(sock_path);
		return -1;
	}
	listen_fd = fd;
	printf("pacer: control socket %s (pacerctl -s %s COMMAND)\n", sock_path,
	       sock_path);
	fflush(stdout);
	return 0;
}

void
pcr_ctlsock_poll(void)
{
	unsigned int i;

	if (listen_fd < 0)
		return;
	accept_all();
	/* non-blocking calls on at most PCR_CTL_CLIENTS sockets: cheaper
	 * than asking poll() first, and a client with whole lines left from
	 * its last batch is served without new input */
	for (i = 0; i < PCR_CTL_CLIENTS; i++) {
		struct ctl_client *c = &clients[i];

		if (c->fd < 0)
			continue;
		client_flush(c);
		if (c->fd >= 0)
			client_read(c);
		if (c->fd >= 0)
			client_flush(c);
	}
}

void
pcr_ctlsock_close(void)
{
	unsigned int i;

	for (i = 0; i < PCR_CTL_CLIENTS; i++)
		if (clients[i].fd >= 0)
			client_close(&clients[i]);
	if (listen_fd >= 0) {
		close(listen_fd);
		listen_fd = -1;
		unlink(sock_path);
	}
	if (out_memfd >= 0) {
		close(out_memfd);
		out_memfd = -1;
	}
}
