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
 * Replies of any size. A command's output goes into the client's own
 * memory file (memfd) and is sent from there as the client reads it, so a
 * reply of hundreds of megabytes (show stats json with a million flows)
 * arrives whole and costs no more than its pages while it waits. A client
 * is served its next request once its reply has gone, so each waits for at
 * most one reply, and one that reads nothing of its reply for
 * PCR_CTL_STALL_S is closed.
 *
 * Who may do what. The socket is created with --control-socket-mode
 * (0600) and --control-socket-owner (pacer's own user): whoever can
 * connect may read (show, help); only root and pacer's own user may change
 * anything (SO_PEERCRED), so a monitoring group can be let in to read the
 * statistics without being able to reconfigure the pacer. Every change is
 * logged with the client that asked (pcr_ctl_origin_set()).
 *
 * A bad client costs only itself: a line too long gets an error reply and
 * the connection closed; garbage is a command not found; a client that
 * goes away mid-reply is dropped; past PCR_CTL_CLIENTS connections, the
 * one idle longest is told so and closed to make room, so clients that
 * connect and say nothing cannot lock the others out. Nothing here blocks:
 * every socket is non-blocking and served a bounded amount a pass.
 *
 * The socket file. pacer replaces only a socket nobody listens on (one a
 * pacer that died left); a file of any other kind at the path, or a socket
 * another process listens on, is a configuration error (exit 2, nothing
 * started). At exit it removes the file only if it is still the socket it
 * made.
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>

#include "config.h"
#include "control.h"
#include "pacer.h"

#define PCR_CTL_CLIENTS 64
/* requests run per client per pass: a client that pipelines many waits
 * for the next pass, the others do not wait for it */
#define PCR_CTL_BATCH 8
/* a client that takes none of its reply for this long is closed */
#define PCR_CTL_STALL_S 30
/* bytes of replies sent to one client in one pass (the control loop
 * passes every 2 ms: up to 2 GB/s a client) */
#define PCR_CTL_PASS_BYTES (4u << 20)

struct ctl_client {
	int fd;
	int out_fd;          /* memfd: the reply on its way */
	off_t out_off, out_len;
	uint64_t seen;       /* last input or reply taken (a count of
			      * events, not time) */
	uint64_t progress_tsc; /* the reply last moved (or was made) */
	bool privileged;     /* may change things: root or pacer's user */
	bool close_after;    /* close once the reply has gone */
	struct ucred peer;
	size_t in_len;
	char in[PCR_CLI_LINE_MAX + 1];
};

static int listen_fd = -1;
static char sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
static dev_t sock_dev;
static ino_t sock_ino;
static struct ctl_client clients[PCR_CTL_CLIENTS];
static uint64_t events;

static void
client_close(struct ctl_client *c)
{
	close(c->fd);
	if (c->out_fd >= 0)
		close(c->out_fd);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->out_fd = -1;
}

static bool
reply_pending(const struct ctl_client *c)
{
	return c->out_off < c->out_len;
}

/* Make the client's reply: what its memory file holds (@p len bytes),
 * then NUL and the status line. */
static bool
reply_seal(struct ctl_client *c, off_t len, bool ok)
{
	static const char okl[] = "\0ok\n", errl[] = "\0error\n";
	const char *t = ok ? okl : errl;
	size_t tl = ok ? sizeof(okl) - 1 : sizeof(errl) - 1;

	if (pwrite(c->out_fd, t, tl, len) != (ssize_t)tl) {
		client_close(c);
		return false;
	}
	c->out_off = 0;
	c->out_len = len + (off_t)tl;
	c->progress_tsc = rte_rdtsc();
	return true;
}

/* A reply of @p text (nothing pending before it). */
static bool
client_reply(struct ctl_client *c, const char *text, bool ok)
{
	size_t len = strlen(text);

	if (ftruncate(c->out_fd, 0) != 0 ||
	    pwrite(c->out_fd, text, len, 0) != (ssize_t)len) {
		client_close(c);
		return false;
	}
	return reply_seal(c, (off_t)len, ok);
}

/* Send what is pending, as far as the socket takes it this pass. */
static void
client_flush(struct ctl_client *c)
{
	static char buf[1 << 16];
	size_t sent = 0;

	while (c->fd >= 0 && reply_pending(c) && sent < PCR_CTL_PASS_BYTES) {
		size_t want = RTE_MIN(sizeof(buf), (size_t)(c->out_len - c->out_off));
		ssize_t r = pread(c->out_fd, buf, want, c->out_off);
		ssize_t n;

		if (r <= 0) {
			client_close(c);
			return;
		}
		n = send(c->fd, buf, (size_t)r, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				client_close(c);
			return;
		}
		c->out_off += n;
		sent += (size_t)n;
		c->progress_tsc = rte_rdtsc();
		c->seen = ++events;
	}
	if (c->fd >= 0 && !reply_pending(c) && c->out_len != 0) {
		/* gone: give its pages back */
		if (ftruncate(c->out_fd, 0) != 0) {
			client_close(c);
			return;
		}
		c->out_off = c->out_len = 0;
		if (c->close_after)
			client_close(c);
	}
}

/* Did the output say error? A line starting "error:" (read back from the
 * memory file, a block at a time). */
static bool
says_error(int fd, off_t len)
{
	static const char mark[] = "error:";
	static char buf[1 << 16];
	bool match = true;
	size_t col = 0;
	off_t off = 0;

	while (off < len) {
		ssize_t r = pread(fd, buf, sizeof(buf), off);
		ssize_t i;

		if (r <= 0)
			return true;
		for (i = 0; i < r; i++) {
			if (buf[i] == '\n') {
				col = 0;
				match = true;
			} else if (col < sizeof(mark) - 1) {
				match = match && buf[i] == mark[col];
				if (++col == sizeof(mark) - 1 && match)
					return true;
			}
		}
		off += r;
	}
	return false;
}

/* The first word of @p line is a command that only reads. */
static bool
reads_only(const char *line)
{
	size_t n = strcspn(line, " \t");

	return (n == 4 && strncmp(line, "show", 4) == 0) ||
	       (n == 4 && strncmp(line, "help", 4) == 0);
}

/* Run one request line and make its reply. */
static bool
client_run(struct ctl_client *c, char *line)
{
	char who[96], comm[32] = "?";
	struct stat st;
	size_t len;
	bool ok;
	int rc;

	/* trailing '\r' (a telnet-like client) and blanks */
	len = strlen(line);
	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' ' ||
			   line[len - 1] == '\t'))
		line[--len] = '\0';
	while (*line == ' ' || *line == '\t')
		line++;
	if (*line == '\0')
		return client_reply(c, "", true);
	if (!c->privileged && !reads_only(line)) {
		char e[256];

		snprintf(e, sizeof(e),
			 "error: uid %u may only read (show, help): changes are for root and pacer's own user\n",
			 (unsigned int)c->peer.uid);
		return client_reply(c, e, false);
	}
	/* who asks, for the log of what changes */
	{
		char p[64];
		FILE *f;

		snprintf(p, sizeof(p), "/proc/%d/comm", (int)c->peer.pid);
		f = fopen(p, "r");
		if (f != NULL) {
			if (fgets(comm, sizeof(comm), f) != NULL)
				comm[strcspn(comm, "\n")] = '\0';
			fclose(f);
		}
	}
	snprintf(who, sizeof(who), "control socket: %s pid %d uid %u", comm,
		 (int)c->peer.pid, (unsigned int)c->peer.uid);
	if (ftruncate(c->out_fd, 0) != 0 || lseek(c->out_fd, 0, SEEK_SET) != 0) {
		client_close(c);
		return false;
	}
	pcr_ctl_origin_set(who, c->peer.pid);
	rc = pcr_cli_run(line, c->out_fd);
	pcr_ctl_origin_set(NULL, 0);
	if (fstat(c->out_fd, &st) != 0) {
		client_close(c);
		return false;
	}
	ok = rc == 0 && !says_error(c->out_fd, st.st_size);
	return reply_seal(c, st.st_size, ok);
}

/* Read what the client sent; run each whole line (PCR_CTL_BATCH a pass),
 * one at a time: the next once the last one's reply has gone. */
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
			bool alive;

			if (reply_pending(c) || runs++ == PCR_CTL_BATCH)
				return;
			*nl = '\0';
			if (memchr(c->in, '\0', used - 1) != NULL)
				alive = client_reply(c, "error: a command is a line of text: it has a NUL byte\n",
						     false);
			else
				alive = client_run(c, c->in);
			if (!alive)
				return;
			memmove(c->in, c->in + used, c->in_len - used);
			c->in_len -= used;
			client_flush(c);
			if (c->fd < 0)
				return;
		}
		if (c->in_len == PCR_CLI_LINE_MAX + 1) {
			char e[96];

			if (reply_pending(c))
				return;
			snprintf(e, sizeof(e),
				 "error: a line is at most %u bytes; closing\n",
				 PCR_CLI_LINE_MAX);
			if (client_reply(c, e, false)) {
				c->close_after = true;
				c->in_len = 0;
				client_flush(c);
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
		socklen_t cl = sizeof(struct ucred);
		struct ctl_client *c;
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
			/* what it was sent before stays whole: the notice
			 * only on a connection with no reply under way */
			if (!reply_pending(&clients[i]) &&
			    send(clients[i].fd, busy, sizeof(busy) - 1,
				 MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
				/* it is closed either way */
			}
			client_close(&clients[i]);
		}
		c = &clients[i];
		memset(c, 0, sizeof(*c));
		c->fd = fd;
		c->out_fd = memfd_create("pacer-ctl-reply", MFD_CLOEXEC);
		if (c->out_fd < 0 ||
		    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c->peer, &cl) != 0) {
			static const char nomem[] =
				"error: pacer cannot serve another client now (no file for its replies)\n\0error\n";

			if (send(fd, nomem, sizeof(nomem) - 1,
				 MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
				/* closed either way */
			}
			client_close(c);
			continue;
		}
		c->privileged = c->peer.uid == 0 || c->peer.uid == geteuid();
		c->seen = ++events;
		/* what it sent before we got to it is served now, before the
		 * next connection could make it the idlest */
		client_read(c);
		if (c->fd >= 0)
			client_flush(c);
	}
}

/* What is at @p path: nothing (0), a socket nobody listens on, removed
 * (0), or why it must stay (-1 and a message). */
static int
path_free(const char *path, const struct sockaddr_un *sa)
{
	struct stat st;
	int fd, rc, e;

	if (lstat(path, &st) != 0) {
		if (errno == ENOENT)
			return 0;
		fprintf(stderr, "pacer: control socket %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISSOCK(st.st_mode)) {
		fprintf(stderr,
			"pacer: control socket %s: a %s is there; pacer replaces only a socket nobody listens on (remove it, or give another --control-socket)\n",
			path, S_ISREG(st.st_mode) ? "regular file" :
			      S_ISDIR(st.st_mode) ? "directory" :
			      S_ISLNK(st.st_mode) ? "symbolic link" : "file that is not a socket");
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, "pacer: control socket: %s\n", strerror(errno));
		return -1;
	}
	rc = connect(fd, (const struct sockaddr *)sa, sizeof(*sa));
	e = errno;
	close(fd);
	if (rc == 0) {
		fprintf(stderr, "pacer: control socket %s: another pacer is listening on it (give this one another --file-prefix or --control-socket)\n",
			path);
		return -1;
	}
	if (e != ECONNREFUSED) {
		fprintf(stderr, "pacer: control socket %s: cannot tell whether it is in use: %s\n",
			path, strerror(e));
		return -1;
	}
	/* a socket a pacer that died left: nobody listens */
	if (unlink(path) != 0 && errno != ENOENT) {
		fprintf(stderr, "pacer: control socket %s: a stale socket that cannot be removed: %s\n",
			path, strerror(errno));
		return -1;
	}
	return 0;
}

int
pcr_ctlsock_init(const struct pcr_config *cfg)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *path = cfg->control_socket;
	uid_t uid = (uid_t)-1;
	gid_t gid = (gid_t)-1;
	char e[256];
	struct stat st;
	unsigned int i;
	int fd;

	for (i = 0; i < PCR_CTL_CLIENTS; i++) {
		clients[i].fd = -1;
		clients[i].out_fd = -1;
	}
	if (strcmp(path, "none") == 0)
		return 0;
	{
		char full[PATH_MAX + 16];

		if (path[0] == '\0')
			snprintf(full, sizeof(full), "%s/pacer.sock",
				 rte_eal_get_runtime_dir());
		else
			snprintf(full, sizeof(full), "%s", path);
		if (strlen(full) >= sizeof(sa.sun_path) - 1) {
			fprintf(stderr, "pacer: control socket %s: longer than a UNIX socket path takes (%zu bytes)\n",
				full, sizeof(sa.sun_path) - 2);
			return -EINVAL;
		}
		memcpy(sock_path, full, strlen(full) + 1);
	}
	if (cfg->control_socket_owner[0] != '\0' &&
	    pcr_owner_parse(cfg->control_socket_owner, &uid, &gid, e,
			    sizeof(e)) != 0) {
		fprintf(stderr, "pacer: --control-socket-owner: %s\n", e);
		return -EINVAL;
	}
	memcpy(sa.sun_path, sock_path, strlen(sock_path) + 1);
	if (path_free(sock_path, &sa) != 0)
		return -EEXIST;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		fprintf(stderr, "pacer: control socket %s: %s\n", sock_path,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return -EINVAL;
	}
	if (chmod(sock_path, (mode_t)cfg->control_socket_mode) != 0 ||
	    ((uid != (uid_t)-1 || gid != (gid_t)-1) &&
	     chown(sock_path, uid, gid) != 0) ||
	    lstat(sock_path, &st) != 0 || listen(fd, 64) != 0) {
		fprintf(stderr, "pacer: control socket %s: %s\n", sock_path,
			strerror(errno));
		close(fd);
		unlink(sock_path);
		return -EINVAL;
	}
	sock_dev = st.st_dev;
	sock_ino = st.st_ino;
	listen_fd = fd;
	printf("pacer: control socket %s (mode %04o; pacerctl -s %s COMMAND)\n",
	       sock_path, (unsigned int)cfg->control_socket_mode, sock_path);
	fflush(stdout);
	return 0;
}

void
pcr_ctlsock_poll(void)
{
	uint64_t now, stall;
	unsigned int i;

	if (listen_fd < 0)
		return;
	accept_all();
	now = rte_rdtsc();
	stall = PCR_CTL_STALL_S * rte_get_tsc_hz();
	/* non-blocking calls on at most PCR_CTL_CLIENTS sockets: cheaper
	 * than asking poll() first, and a client with whole lines left from
	 * its last batch is served without new input */
	for (i = 0; i < PCR_CTL_CLIENTS; i++) {
		struct ctl_client *c = &clients[i];

		if (c->fd < 0)
			continue;
		client_flush(c);
		/* signed: the flush above may have moved it past now */
		if (c->fd >= 0 && reply_pending(c) &&
		    (int64_t)(now - c->progress_tsc) > (int64_t)stall) {
			PCR_LOG(INFO, "control client pid %d took none of its reply for %u s: closed",
				(int)c->peer.pid, PCR_CTL_STALL_S);
			client_close(c);
		}
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
		struct stat st;

		close(listen_fd);
		listen_fd = -1;
		/* only the socket made here: not whatever replaced it */
		if (lstat(sock_path, &st) == 0 && st.st_dev == sock_dev &&
		    st.st_ino == sock_ino)
			unlink(sock_path);
	}
}
