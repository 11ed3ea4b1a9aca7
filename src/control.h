/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#ifndef PACER_CONTROL_H
#define PACER_CONTROL_H

/**
 * @file
 * The control layer: what the CLI (cli.c) and telemetry (telemetry.c) call.
 * Every function runs on a control thread with pcr_ctl_lock() held, takes
 * its arguments as the user typed them, and on bad input returns -EINVAL
 * with why in @p err, changing nothing. Changes take effect on the next
 * packet; packets already queued keep their departure times.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "config.h"
#include "pacer.h"
#include "snapshot.h"
#include "pcr_classify.h"
#include "pcr_wheel.h"

/**
 * Who asks for what follows: each face names itself before it runs a
 * command (the control socket "control socket: pacerctl pid 812 uid 0",
 * the prompt, a script "script FILE:LINE", "SIGHUP from pid 77"), so that
 * every change is logged once, at the default level, with its origin, and
 * a relative path it gives (save config FILE) is taken from where it is
 * (/proc/PID/cwd of @p pid; 0: pacer's own working directory).
 * @p who NULL: pacer itself.
 */
void pcr_ctl_origin_set(const char *who, pid_t pid);
const char *pcr_ctl_origin_who(void);
pid_t pcr_ctl_origin_pid(void);

int pcr_ctl_start(char *err, size_t errlen);
/** `quit`: shut down as on SIGTERM (logged with who asked). */
void pcr_ctl_quit(void);
int pcr_ctl_stop(char *err, size_t errlen);
/*
 * Typed commands: the faces (the prompt and the control socket through
 * src/cli.c, reload) parse and name the values; each command checks what
 * depends on the running state, builds the new state on a draft of the
 * configuration, publishes it, and only then takes it as the running one.
 * @return 0, or -EINVAL with why in @p err and nothing changed.
 */
int pcr_ctl_set_port_rate(uint16_t port, uint64_t bps, char *err,
			  size_t errlen);
/** @p flow: the class's per-flow rate, else the class's own. */
int pcr_ctl_set_class_rate(const char *name, bool flow, uint64_t bps,
			   char *err, size_t errlen);
int pcr_ctl_set_class_order(const char *name, enum pcr_order order, char *err,
			    size_t errlen);
/** @p cl built with pcr_class_new() / _set() / _done() (options.c). */
int pcr_ctl_add_class(const struct pcr_class_conf *cl, char *err,
		      size_t errlen);
int pcr_ctl_del_class(const char *name, char *err, size_t errlen);
/** An option a running pacer changes (the AQM's: aqm, aqm-target,
 *  aqm-interval, ecn, ce-threshold), @p value as the command line takes
 *  it. */
int pcr_ctl_set_option(const char *name, const char *value, char *err,
		       size_t errlen);
/** One of class @p name's settings (pcr_class_set()'s keys: the AQM's). */
int pcr_ctl_set_class_key(const char *name, const char *key,
			  const char *value, char *err, size_t errlen);
/** The wheels' owners (the TX lcores) apply it between bursts. */
int pcr_ctl_set_horizon(uint64_t ms, enum pcr_wheel_horizon_policy pol,
			char *err, size_t errlen);
int pcr_ctl_set_flow_limit(uint64_t pkts, char *err, size_t errlen);
/** Write the running configuration to @p path (pcr_file_replace()); the
 *  absolute path written into @p saved. */
int pcr_ctl_save_config(const char *path, char *saved, size_t savedlen,
			char *err, size_t errlen);
/**
 * Read the configuration again as pacer was started (--config FILE, then
 * the command line's options over it) and make the running pacer match
 * it: rates, per-port rates, flow rates, horizon, flow-limit and the
 * classes (rates, orders; classes gone are deleted, new ones added). All
 * or nothing: a file that does not parse, an option that needs a restart
 * changed, or classes reordered or rematched change nothing and say why
 * in @p err. @p what gets a summary of what changed.
 */
int pcr_ctl_reload(char *what, size_t whatlen, char *err, size_t errlen);

void pcr_classtab_free(struct pcr_app *a);

/** One flow as `show flows` and /pacer/flows report it. */
struct pcr_flow_view {
	char key[PCR_FLOW_KEY_STRLEN];
	uint16_t class_id;
	uint16_t egress;
	uint64_t queued_packets, queued_bytes;
	uint64_t tx_packets, tx_bytes;
	double rate_bps;       /**< over the flow's transmit lifetime */
	uint32_t aqm_marked;   /**< CE marks its AQM made */
	uint32_t drop_aqm;     /**< packets its AQM dropped */
};

enum pcr_flow_order { PCR_FLOWS_BY_QUEUED, PCR_FLOWS_BY_RATE };

unsigned int pcr_ctl_flows_top(struct pcr_flow_view *out, unsigned int n,
			       enum pcr_flow_order by, uint64_t *total);

/** `clear port stats`: what `show port stats` counts from (-1: all). */
void pcr_ctl_clear_stats(int port, const struct pcr_snapshot *now);
const struct pcr_port_snap *pcr_ctl_cleared(uint16_t port);

/* cli.c */
/** Set up the prompt (-i) and/or the script (--cmdline-file). */
int pcr_cli_init(const struct pcr_config *c);
/** Control loop, every pass: feed what is pending to the command line.
 *  @return true while the script still has lines to run. */
bool pcr_cli_poll(void);
void pcr_cli_fini(void);
/** Longest command line the control socket takes (the prompt's own buffer
 *  is cmdline's RDLINE_BUF_SIZE). */
#define PCR_CLI_LINE_MAX 1024
/**
 * Run one command line of the prompt's grammar (no newline) with its
 * output to @p out_fd: 0 if it parsed (its handler may still have printed
 * "error: ..."), -1 (and "error: ..." written) if not.
 */
int pcr_cli_run(const char *line, int out_fd);

/* savefile.c */
/**
 * Replace the file at @p path whole with what @p fill writes: into a new
 * file beside it, flushed to disk, then renamed over it, so a failed write
 * leaves the old file as it was. A relative @p path starts in the working
 * directory of process @p cwd_pid (the client that asked; 0: pacer's own).
 * A symbolic link or anything but a regular file at @p path is refused,
 * not followed or replaced; an existing file keeps its mode and owner.
 * @return 0 with the absolute path in @p abs, or -1 with why in @p err.
 */
int pcr_file_replace(const char *path, pid_t cwd_pid,
		     int (*fill)(FILE *f, const void *arg), const void *arg,
		     char *abs, size_t abslen, char *err, size_t errlen);

/* ctlsock.c: the control socket (--control-socket) */
/** Listen on --control-socket ("" = pacer.sock in the EAL's runtime
 *  directory, "none" = no socket) with its mode and owner: 0; -EINVAL or
 *  -EEXIST for a configuration that cannot work (the path is taken, not a
 *  socket, another pacer listens; exit 2), another -errno for the system's
 *  failures; a message either way. */
int pcr_ctlsock_init(const struct pcr_config *c);
/** Serve the clients without blocking (the control loop, each pass). */
void pcr_ctlsock_poll(void);
/** Close every client and the socket, and remove its file. */
void pcr_ctlsock_close(void);

/* telemetry.c */
int pcr_telemetry_init(void);

#endif /* PACER_CONTROL_H */
