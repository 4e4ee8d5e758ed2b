// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * peer_bench: connection set-up time with stock librdmacm, in three ways.
 *
 * N endpoints (processes, --endpoints N, this one is --index K), each with
 * an address of the list --hosts IP0,IP1,... (endpoint K uses entry
 * K % length: give two for one endpoint per host, N for one address each).  In
 * every round each pair of endpoints makes one RC connection, on a port of
 * its own, in one of three modes:
 *
 *   peer  both ends rdma_connect() with RDMA_OPTION_ID_PEER_TO_PEER;
 *   cs    client/server: the higher endpoint listens before the round,
 *         the lower connects;
 *   wa    the workaround without the peer model (as Open MPI-style
 *         wire-up does): at the round's start the higher endpoint
 *         listens, then tells the lower one with a UDP message, which
 *         then connects.
 *
 * Everything that does not depend on the other end (ids, address and
 * route resolution, QPs) is set up before the round's start time, which
 * all endpoints share (the UML hosts read the host clock; --start-ms is
 * in the host's clock, corrected with a hostfs mtime).  Each end records
 * when it got RDMA_CM_EVENT_ESTABLISHED, relative to the start, its QPN
 * and the peer's (from the private data).  After --window-ms every end
 * disconnects; the next round starts --period-ms after the previous.
 *
 * Output, one JSON object per line on stdout:
 *   {"round":R,"pair":P,"me":K,"peer":J,"role":"...","ok":1,
 *    "est_ms":X,"qpn":Q,"peer_qpn":Q2}          per connection end
 *   {"round":R,"me":K,"matched":M,"claimed":C,"held":H}
 *                                  cm_peer counter deltas of the round
 * Exit status 0 when every connection of every round was established.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <linux/types.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "peer_common.h"

#define MAX_EP		64
#define MAGIC		0x62656e63u

enum mode { PEER, CS, WA };
enum role { R_PEER, R_CLIENT, R_SERVER };
static const char *const role_name[] = { "peer", "client", "server" };

struct pdata {
	__u32 magic, qpn, round, pair;
};

struct conn {
	int pair, peer, port;
	enum role role;
	struct rdma_cm_id *id, *listen;
	struct pdata mine;
	double t_est;
	__u32 peer_qpn;
	int established, failed, disconnected, notified;
	char err[64];
};

static struct {
	enum mode mode;
	int endpoints, index, rounds, period_ms, window_ms, base_port;
	int ctrl_port, spin, nhosts;
	long long start_ms;
	char *hosts[MAX_EP];
	const char *dev, *clock_file;
} o = {
	.endpoints = 2, .rounds = 1, .period_ms = 200, .window_ms = 100,
	.base_port = 20000, .ctrl_port = 19000, .dev = "rxe0",
};

static struct rdma_event_channel *ch;
static struct ibv_context *verbs;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct conn conns[MAX_EP];
static int nconns, udp;
static double clock_offset_ms;	/* our clock minus the host's */
static double clock_err;

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "peer_bench[%d]: ", o.index);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static void addr_of(int ep, int port, struct sockaddr_in *sin)
{
	if (peer_sockaddr(o.hosts[ep % o.nhosts], port, sin))
		die("bad address %s", o.hosts[ep % o.nhosts]);
}

static int pair_index(int i, int j)
{
	int lo = i < j ? i : j, hi = i < j ? j : i;

	/* pairs (0,1), (0,2), ..., (1,2), ... numbered from 0 */
	return lo * o.endpoints - lo * (lo + 1) / 2 + (hi - lo - 1);
}

static void conn_fail(struct conn *c, const char *what, int status)
{
	if (!c->failed && !c->established)
		snprintf(c->err, sizeof(c->err), "%s %d", what, status);
	c->failed = 1;
}

static void make_qp(struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr qpa = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};

	if (!pd) {
		verbs = id->verbs;
		pd = ibv_alloc_pd(verbs);
		cq = pd ? ibv_create_cq(verbs, 4 * MAX_EP + 8, NULL, NULL, 0) :
			  NULL;
		if (!cq)
			die("ibv_alloc_pd/create_cq: %s", strerror(errno));
	}
	qpa.send_cq = cq;
	qpa.recv_cq = cq;
	if (rdma_create_qp(id, pd, &qpa))
		die("rdma_create_qp: %s", strerror(errno));
}

static struct rdma_conn_param conn_param(struct conn *c)
{
	struct rdma_conn_param cp = {
		.responder_resources = 1, .initiator_depth = 1,
		.retry_count = 7, .rnr_retry_count = 7,
		.private_data = &c->mine, .private_data_len = sizeof(c->mine),
	};

	c->mine.qpn = c->id->qp->qp_num;
	return cp;
}

static void got_pdata(struct conn *c, const void *data, int len)
{
	struct pdata p;

	if (!data || len < (int)sizeof(p))
		return;
	memcpy(&p, data, sizeof(p));
	if (p.magic == MAGIC && p.pair == (__u32)c->pair)
		c->peer_qpn = p.qpn;
}

static void handle(struct rdma_cm_event *ev)
{
	struct conn *c = ev->listen_id ? ev->listen_id->context :
					 ev->id->context;
	struct rdma_conn_param cp;

	if (!c)
		return;
	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		if (c->id) {	/* a second REQ for one pair: refuse it */
			rdma_reject(ev->id, NULL, 0);
			conn_fail(c, "duplicate", 0);
			break;
		}
		c->id = ev->id;
		c->id->context = c;
		got_pdata(c, ev->param.conn.private_data,
			  ev->param.conn.private_data_len);
		make_qp(c->id);
		cp = conn_param(c);
		if (rdma_accept(c->id, &cp))
			conn_fail(c, "accept", errno);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		c->t_est = now_ms();
		c->established = 1;
		got_pdata(c, ev->param.conn.private_data,
			  ev->param.conn.private_data_len);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		c->disconnected = 1;
		break;
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
		conn_fail(c, rdma_event_str(ev->event), ev->status);
		break;
	default:
		break;
	}
}

/* Handle CM events (and workaround notifications) until @t or @done(). */
static void pump(double t, int (*done)(void *), void *arg)
{
	struct pollfd pfd[2] = {
		{ .fd = ch->fd, .events = POLLIN },
		{ .fd = udp, .events = POLLIN },
	};
	struct rdma_cm_event *ev;
	__u32 msg[2];
	int left, n, i;

	while (!(done && done(arg))) {
		left = (int)(t - now_ms());
		if (left <= 0)
			return;
		n = poll(pfd, udp >= 0 ? 2 : 1, left);
		if (n <= 0)
			continue;
		if ((pfd[0].revents & POLLIN) && !rdma_get_cm_event(ch, &ev)) {
			handle(ev);
			rdma_ack_cm_event(ev);
		}
		if (udp >= 0 && (pfd[1].revents & POLLIN) &&
		    recv(udp, msg, sizeof(msg), 0) == sizeof(msg)) {
			for (i = 0; i < nconns; i++) {
				struct conn *c = &conns[i];
				struct rdma_conn_param cp;

				if (c->pair != (int)msg[1] || c->notified ||
				    c->role != R_CLIENT)
					continue;
				c->notified = 1;
				cp = conn_param(c);
				if (rdma_connect(c->id, &cp))
					conn_fail(c, "connect", errno);
			}
		}
	}
}

static int resolved(void *arg)
{
	struct rdma_cm_id *id = arg;

	return id->route.num_paths > 0 || ((struct conn *)id->context)->failed;
}

/* Create @c's connecting id and resolve address and route (blocking). */
static void setup_connector(struct conn *c)
{
	struct sockaddr_in src, dst;
	struct rdma_cm_event *ev;
	int one = 1;

	addr_of(o.index, c->port, &src);
	addr_of(c->peer, c->port, &dst);
	if (rdma_create_id(ch, &c->id, c, RDMA_PS_TCP) ||
	    rdma_bind_addr(c->id, (struct sockaddr *)&src) ||
	    rdma_resolve_addr(c->id, NULL, (struct sockaddr *)&dst, 2000))
		die("id for pair %d: %s", c->pair, strerror(errno));
	/* other ids' events may come meanwhile: handle them */
	for (;;) {
		struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };

		if (poll(&pfd, 1, 3000) != 1 || rdma_get_cm_event(ch, &ev))
			die("pair %d: no address event", c->pair);
		if (ev->id == c->id && ev->event == RDMA_CM_EVENT_ADDR_RESOLVED) {
			rdma_ack_cm_event(ev);
			break;
		}
		handle(ev);
		rdma_ack_cm_event(ev);
	}
	if (rdma_resolve_route(c->id, 2000))
		die("resolve_route: %s", strerror(errno));
	pump(now_ms() + 3000, resolved, c->id);
	if (!c->id->route.num_paths)
		die("pair %d: no route", c->pair);
	make_qp(c->id);
	if (c->role == R_PEER &&
	    rdma_set_option(c->id, RDMA_OPTION_ID, RDMA_OPTION_ID_PEER_TO_PEER,
			    &one, sizeof(one)))
		die("set PEER_TO_PEER: %s", strerror(errno));
}

static void listen_on(struct conn *c)
{
	struct sockaddr_in src;

	addr_of(o.index, c->port, &src);
	if (rdma_create_id(ch, &c->listen, c, RDMA_PS_TCP) ||
	    rdma_bind_addr(c->listen, (struct sockaddr *)&src) ||
	    rdma_listen(c->listen, 4))
		die("listen on %d: %s", c->port, strerror(errno));
}

static void notify(struct conn *c)
{
	struct sockaddr_in to;
	__u32 msg[2] = { 0, (__u32)c->pair };

	addr_of(c->peer, o.ctrl_port + c->peer, &to);
	if (sendto(udp, msg, sizeof(msg), 0, (struct sockaddr *)&to,
		   sizeof(to)) != sizeof(msg))
		conn_fail(c, "notify", errno);
}

static int all_established(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < nconns; i++)
		if (!conns[i].established && !conns[i].failed)
			return 0;
	return 1;
}

static int all_disconnected(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < nconns; i++)
		if (conns[i].established && !conns[i].disconnected)
			return 0;
	return 1;
}

static int run_round(int r, double t_start)
{
	long matched = peer_counter(o.dev, "matched"), claimed = peer_counter(o.dev, "claimed");
	long held = peer_counter(o.dev, "held");
	int npairs = o.endpoints * (o.endpoints - 1) / 2, i, j, bad = 0;
	struct rdma_conn_param cp;

	nconns = 0;
	for (j = 0; j < o.endpoints; j++) {
		struct conn *c;

		if (j == o.index)
			continue;
		c = &conns[nconns++];
		memset(c, 0, sizeof(*c));
		c->peer = j;
		c->pair = pair_index(o.index, j);
		c->port = o.base_port + (r * npairs + c->pair) % 40000;
		c->mine = (struct pdata){ .magic = MAGIC, .round = r,
					  .pair = c->pair };
		if (o.mode == PEER)
			c->role = R_PEER;
		else
			c->role = o.index < j ? R_CLIENT : R_SERVER;
		if (c->role != R_SERVER)
			setup_connector(c);
		else if (o.mode == CS)
			listen_on(c);
	}

	if (now_ms() > t_start)
		fprintf(stderr, "peer_bench[%d]: round %d set up %.1f ms late\n",
			o.index, r, now_ms() - t_start);
	peer_sleep_until(t_start, o.spin);
	for (i = 0; i < nconns; i++) {
		struct conn *c = &conns[i];

		if (c->role == R_SERVER && o.mode == WA) {
			listen_on(c);
			notify(c);
		} else if (c->role != R_SERVER && o.mode != WA) {
			cp = conn_param(c);
			if (rdma_connect(c->id, &cp))
				conn_fail(c, "connect", errno);
		}
	}
	pump(t_start + o.window_ms, all_established, NULL);
	/* the other ends may still be completing: tear down after the window */
	pump(t_start + o.window_ms, NULL, NULL);

	for (i = 0; i < nconns; i++) {
		struct conn *c = &conns[i];

		if (!c->established && !c->failed)
			snprintf(c->err, sizeof(c->err), "timeout");
		printf("{\"round\":%d,\"pair\":%d,", r, c->pair);
		printf("\"me\":%d,\"peer\":%d,", o.index, c->peer);
		printf("\"role\":\"%s\",", role_name[c->role]);
		printf("\"ok\":%d,", c->established && !c->failed);
		printf("\"est_ms\":%.3f,",
		       c->established ? c->t_est - t_start : -1.0);
		printf("\"qpn\":%u,",
		       c->id && c->id->qp ? c->id->qp->qp_num : 0);
		printf("\"peer_qpn\":%u,\"err\":\"%s\"}\n", c->peer_qpn,
		       c->err);
		bad |= !(c->established && !c->failed);
	}
	printf("{\"round\":%d,\"me\":%d,", r, o.index);
	printf("\"matched\":%ld,", peer_counter(o.dev, "matched") - matched);
	printf("\"claimed\":%ld,", peer_counter(o.dev, "claimed") - claimed);
	printf("\"held\":%ld}\n", peer_counter(o.dev, "held") - held);

	/* everyone is past the window: tear down */
	for (i = 0; i < nconns; i++)
		if (conns[i].established)
			rdma_disconnect(conns[i].id);
	pump(now_ms() + o.period_ms / 4 + 500, all_disconnected, NULL);
	for (i = 0; i < nconns; i++) {
		struct conn *c = &conns[i];

		if (c->id) {
			if (c->id->qp)
				rdma_destroy_qp(c->id);
			rdma_destroy_id(c->id);
		}
		if (c->listen)
			rdma_destroy_id(c->listen);
	}
	return bad;
}

static void print_usage(void)
{
	fprintf(stderr,
		"usage: peer_bench --mode peer|cs|wa --hosts IP,IP --index K\n"
		"       --start-ms HOST_EPOCH_MS --clock-file F [--endpoints N]\n"
		"       [--rounds R] [--period-ms P] [--window-ms W]\n"
		"       [--base-port N] [--ctrl-port N] [--spin] [--dev D]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "mode", 1, 0, 'm' }, { "hosts", 1, 0, 'H' },
		{ "index", 1, 0, 'i' }, { "endpoints", 1, 0, 'n' },
		{ "rounds", 1, 0, 'r' }, { "period-ms", 1, 0, 'p' },
		{ "window-ms", 1, 0, 'w' }, { "start-ms", 1, 0, 's' },
		{ "base-port", 1, 0, 'b' }, { "ctrl-port", 1, 0, 'c' },
		{ "clock-file", 1, 0, 'f' }, { "spin", 0, 0, 'S' },
		{ "dev", 1, 0, 'D' }, { 0 },
	};
	struct sockaddr_in me;
	char *hosts = NULL, *tok, *save;
	int c, r, bad = 0;
	double t0;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'm':
			o.mode = !strcmp(optarg, "peer") ? PEER :
				 !strcmp(optarg, "cs") ? CS :
				 !strcmp(optarg, "wa") ? WA : (print_usage(), PEER);
			break;
		case 'H':
			hosts = optarg;
			break;
		case 'i':
			o.index = atoi(optarg);
			break;
		case 'n':
			o.endpoints = atoi(optarg);
			break;
		case 'r':
			o.rounds = atoi(optarg);
			break;
		case 'p':
			o.period_ms = atoi(optarg);
			break;
		case 'w':
			o.window_ms = atoi(optarg);
			break;
		case 's':
			o.start_ms = atoll(optarg);
			break;
		case 'b':
			o.base_port = atoi(optarg);
			break;
		case 'c':
			o.ctrl_port = atoi(optarg);
			break;
		case 'f':
			o.clock_file = optarg;
			break;
		case 'S':
			o.spin = 1;
			break;
		case 'D':
			o.dev = optarg;
			break;
		default:
			print_usage();
		}
	}
	if (!hosts || !o.start_ms || !o.clock_file || o.endpoints < 2 ||
	    o.endpoints > MAX_EP || o.index < 0 || o.index >= o.endpoints)
		print_usage();
	for (tok = strtok_r(hosts, ",", &save); tok && o.nhosts < MAX_EP;
	     tok = strtok_r(NULL, ",", &save))
		o.hosts[o.nhosts++] = tok;
	if (!o.nhosts)
		print_usage();

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (peer_host_clock_offset(o.clock_file, &clock_offset_ms, &clock_err))
		die("%s: %s", o.clock_file, strerror(errno));
	ch = rdma_create_event_channel();
	if (!ch)
		die("rdma_create_event_channel: %s", strerror(errno));
	udp = -1;
	if (o.mode == WA) {
		udp = socket(AF_INET, SOCK_DGRAM, 0);
		addr_of(o.index, o.ctrl_port + o.index, &me);
		if (udp < 0 || bind(udp, (struct sockaddr *)&me, sizeof(me)))
			die("udp control socket: %s", strerror(errno));
	}
	t0 = o.start_ms + clock_offset_ms;
	for (r = 0; r < o.rounds; r++)
		bad |= run_round(r, t0 + (double)r * o.period_ms);
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
	rdma_destroy_event_channel(ch);
	return bad;
}
