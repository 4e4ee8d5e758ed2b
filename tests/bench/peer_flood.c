// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * peer_flood: another user's flood of peer REQs that are never answered,
 * with stock librdmacm (the load of `make bench`'s flood runs).
 *
 * --count N rdma_cm ids, id i bound to --local IP, port --port + i, its
 * address resolved towards --remote IP, port --port + i, with
 * RDMA_OPTION_ID_PEER_TO_PEER set:
 *
 *   --sink   the ids stay bound and never connect: a REQ for one of them
 *            is held, unanswered, as for a peer that is late;
 *   default  each id connects, with no QP (a made-up QPN: no REP comes
 *            back to use it), towards the other host's sink.
 *
 * Set-up done, --ready-file F is created; the connects (or, with --sink,
 * the wait) start once --go-file G exists, and last --hold-ms ms or until
 * --stop-file S exists.  Then
 * every id is destroyed and one line is printed:
 *   flood N ids: answered A, rejected R, unreachable U, other O, setup S ms
 * (answered: a REP came, CONNECT_RESPONSE for an id with no QP).  Exit
 * status 0, or 1 when the set-up or a connect failed.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

#include "peer_common.h"

#define MAX_IDS		8192

static struct {
	const char *local, *remote, *ready_file, *go_file, *stop_file;
	int port, count, hold_ms, sink;
} o = { .port = 40000, .count = 256, .hold_ms = 10000 };

static struct rdma_cm_id *ids[MAX_IDS];
static struct rdma_event_channel *ch;
static int pending, outcome[4];	/* answered, rejected, unreachable, other */

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "peer_flood: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static int id_index(struct rdma_cm_id *id)
{
	return (int)(long)id->context;
}

static void connect_one(struct rdma_cm_id *id)
{
	struct rdma_conn_param cp = {
		.responder_resources = 1, .initiator_depth = 1,
		.retry_count = 7, .qp_num = 0x100 + id_index(id),
	};

	if (rdma_connect(id, &cp))
		die("id %d: rdma_connect: %s", id_index(id), strerror(errno));
}

/* One CM event: set-up steps before the go, outcomes after it. */
static void handle(struct rdma_cm_event *ev)
{
	struct rdma_cm_id *id = ev->id;
	int one = 1;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (rdma_set_option(id, RDMA_OPTION_ID,
				    RDMA_OPTION_ID_PEER_TO_PEER, &one,
				    sizeof(one)))
			die("id %d: PEER_TO_PEER: %s", id_index(id),
			    strerror(errno));
		if (o.sink)
			pending--;
		else if (rdma_resolve_route(id, 2000))
			die("id %d: rdma_resolve_route: %s", id_index(id),
			    strerror(errno));
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		pending--;
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
		die("id %d: %s", id_index(id), rdma_event_str(ev->event));
		break;
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
		outcome[0]++;
		break;
	case RDMA_CM_EVENT_REJECTED:
		outcome[1]++;
		break;
	case RDMA_CM_EVENT_UNREACHABLE:
		outcome[2]++;
		break;
	default:
		outcome[3]++;
	}
}

/* CM events until @until (epoch ms), or with @setup until none pends */
static void events(double until, int setup)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	while ((!setup || pending) && now_ms() < until) {
		if (!setup && o.stop_file && !access(o.stop_file, F_OK))
			break;
		if (poll(&pfd, 1, 100) != 1)
			continue;
		if (rdma_get_cm_event(ch, &ev))
			die("rdma_get_cm_event: %s", strerror(errno));
		handle(ev);
		rdma_ack_cm_event(ev);
	}
}

static void setup(void)
{
	struct sockaddr_in src, dst;
	int i;

	ch = rdma_create_event_channel();
	if (!ch)
		die("rdma_create_event_channel: %s", strerror(errno));
	for (i = 0; i < o.count; i++) {
		if (peer_sockaddr(o.local, o.port + i, &src) ||
		    peer_sockaddr(o.remote, o.port + i, &dst))
			die("bad address");
		if (rdma_create_id(ch, &ids[i], (void *)(long)i, RDMA_PS_TCP))
			die("rdma_create_id: %s", strerror(errno));
		if (rdma_bind_addr(ids[i], (struct sockaddr *)&src))
			die("id %d: bind %s:%d: %s", i, o.local, o.port + i,
			    strerror(errno));
		if (rdma_resolve_addr(ids[i], NULL, (struct sockaddr *)&dst,
				      2000))
			die("id %d: rdma_resolve_addr: %s", i, strerror(errno));
		pending++;
		/* resolve in batches of 64: the VMs are slow */
		if (pending >= 64)
			events(now_ms() + 60000, 1);
	}
	events(now_ms() + 60000, 1);
	if (pending)
		die("%d ids not resolved in 60 s", pending);
}

static void print_usage(void)
{
	fprintf(stderr,
		"usage: peer_flood --local IP --remote IP [--port P] [--count N]\n"
		"       [--sink] [--hold-ms MS] [--ready-file F] [--go-file G]\n"
		"       [--stop-file S]\n");
	exit(2);
}

static void parse(int argc, char **argv)
{
	/* val: an index into str[], 10 + one into num[], or 20 for --sink */
	static const struct option lo[] = {
		{ "local", 1, 0, 0 }, { "remote", 1, 0, 1 },
		{ "ready-file", 1, 0, 2 }, { "go-file", 1, 0, 3 },
		{ "stop-file", 1, 0, 4 }, { "port", 1, 0, 10 },
		{ "count", 1, 0, 11 }, { "hold-ms", 1, 0, 12 },
		{ "sink", 0, 0, 20 }, { 0 },
	};
	const char **str[] = { &o.local, &o.remote, &o.ready_file,
			       &o.go_file, &o.stop_file };
	int *num[] = { &o.port, &o.count, &o.hold_ms };
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (c >= 0 && c < 5)
			*str[c] = optarg;
		else if (c >= 10 && c < 13)
			*num[c - 10] = atoi(optarg);
		else if (c == 20)
			o.sink = 1;
		else
			print_usage();
	}
	if (!o.local || !o.remote || o.count < 1 || o.count > MAX_IDS ||
	    o.port < 1 || o.port + o.count > 65536)
		print_usage();
}

int main(int argc, char **argv)
{
	double t0 = now_ms(), t_setup, until;
	FILE *f;
	int i;

	parse(argc, argv);
	setup();
	t_setup = now_ms() - t0;
	if (o.ready_file) {
		f = fopen(o.ready_file, "w");
		if (!f || fclose(f))
			die("%s: %s", o.ready_file, strerror(errno));
	}
	/* the go, or the stop of a run that gave up meanwhile */
	until = now_ms() + o.hold_ms;
	while (o.go_file && access(o.go_file, F_OK)) {
		if (errno != ENOENT)
			die("%s: %s", o.go_file, strerror(errno));
		if ((o.stop_file && !access(o.stop_file, F_OK)) ||
		    now_ms() > until)
			die("no go");
		usleep(20000);
	}
	until = now_ms() + o.hold_ms;
	for (i = 0; !o.sink && i < o.count; i++)
		connect_one(ids[i]);
	events(until, 0);
	for (i = 0; i < o.count; i++)
		rdma_destroy_id(ids[i]);
	rdma_destroy_event_channel(ch);
	printf("flood %d ids: answered %d, rejected %d, unreachable %d, other %d, setup %.0f ms\n",
	       o.count, outcome[0], outcome[1], outcome[2], outcome[3],
	       t_setup);
	return 0;
}
