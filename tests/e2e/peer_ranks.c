// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * peer_ranks: one rank of an MPI-style job, with stock librdmacm.
 *
 * The rank has ONE address and port (--local, --port) and connects to every
 * --peer IP:PORT:NAME at once, each through its own rdma_cm id bound to
 * that same port (RDMA_OPTION_ID_REUSEADDR) with
 * RDMA_OPTION_ID_PEER_TO_PEER set: no listener, no roles, the peers start
 * at the same moment (--start-ms, the hosts' clocks agree).  Each end puts
 * its name in the connect's private data and SENDs it once connected; each
 * checks that both name the peer it connected to.  --rounds repeats it,
 * --round-ms apart.
 *
 * On demand (--listen): the rank also listens on its port, with
 * RDMA_OPTION_ID_PEER_TO_PEER set on the listener (and REUSEADDR): a
 * REQ no peer id of the port waits for is a CONNECT_REQUEST, accepted
 * when it names a peer given with mode "a" (--peer IP:PORT:NAME:a, it
 * connects to us), or one whose rdma_connect() failed with EALREADY (its
 * REQ was at our listener first).  Mode "c" connects client/server, from
 * an ephemeral port.  A second connection of a pair fails the pair.
 *
 * Prints one line per connection and round:
 *   conn ROUND ME PEER ok VIA      (VIA: peer, listener or client)
 *   conn ROUND ME PEER FAIL REASON
 * Exit status: 0 when every connection of every round was ok, 1 otherwise,
 * 2 on bad usage.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "peer_common.h"

#define MAX_PEERS	64
#define NAME_LEN	32

struct peer {
	char ip[64], name[NAME_LEN];
	int port;
	char mode;		/* p: peer, c: client/server, a: accept */
	int pending;		/* rdma_connect(): EALREADY, see --listen */
	int accepted;		/* p->id came from our listener */
	struct rdma_cm_id *id;
	struct ibv_mr *mr;
	char send[NAME_LEN], recv[NAME_LEN];
	int established, sent, received, done, disconnected;
	double t_done;		/* when done, ok or not */
	const char *fail;
	char why[96];
};

static struct {
	const char *local, *name;
	int port, npeers, rounds, round_ms, timeout_ms, listen, delay_ms;
	long long start_ms;
} o = { .rounds = 1, .round_ms = 10000, .timeout_ms = 20000 };

static struct peer peers[MAX_PEERS];
static struct rdma_event_channel *ch, *lch;	/* lch: the listener's */
static int stray;	/* CONNECT_REQUESTs from nobody we expect */
static struct ibv_pd *pd;
static struct ibv_cq *cq;

static void die(const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", o.name, what, strerror(errno));
	exit(1);
}

static void addr_of(const char *ip, int port, struct sockaddr_in *sin)
{
	if (peer_sockaddr(ip, port, sin)) {
		fprintf(stderr, "bad address %s\n", ip);
		exit(2);
	}
}

static void peer_fail(struct peer *p, const char *fmt, const char *arg)
{
	if (p->done)
		return;
	snprintf(p->why, sizeof(p->why), fmt, arg);
	p->fail = p->why;
	p->done = 1;
}

/* Wait for @want on @p's id during set-up (nothing else is outstanding). */
static int setup_event(struct peer *p, enum rdma_cm_event_type want)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	int ok;

	if (poll(&pfd, 1, o.timeout_ms) != 1 || rdma_get_cm_event(ch, &ev)) {
		peer_fail(p, "no %s", rdma_event_str(want));
		return -1;
	}
	ok = ev->id == p->id && ev->event == want;
	if (!ok)
		peer_fail(p, "set-up: %s", rdma_event_str(ev->event));
	rdma_ack_cm_event(ev);
	return ok ? 0 : -1;
}

static int setup_qp(struct peer *p);

static int setup_peer(struct peer *p)
{
	struct sockaddr_in src, dst;
	int one = 1;

	p->pending = 0;
	p->accepted = 0;
	if (p->mode == 'a')
		return 0;	/* it connects to our listener */
	addr_of(o.local, p->mode == 'c' ? 0 : o.port, &src);
	addr_of(p->ip, p->port, &dst);
	if (rdma_create_id(ch, &p->id, p, RDMA_PS_TCP))
		die("rdma_create_id");
	if (rdma_set_option(p->id, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR,
			    &one, sizeof(one)))
		die("REUSEADDR");
	if (rdma_bind_addr(p->id, (struct sockaddr *)&src)) {
		peer_fail(p, "rdma_bind_addr: %s", strerror(errno));
		return -1;
	}
	if (rdma_resolve_addr(p->id, (struct sockaddr *)&src,
			      (struct sockaddr *)&dst, 2000) ||
	    setup_event(p, RDMA_CM_EVENT_ADDR_RESOLVED) ||
	    rdma_resolve_route(p->id, 2000) ||
	    setup_event(p, RDMA_CM_EVENT_ROUTE_RESOLVED))
		return p->done ? -1 : (peer_fail(p, "resolve: %s",
						 strerror(errno)), -1);
	if (p->mode == 'p' &&
	    rdma_set_option(p->id, RDMA_OPTION_ID,
			    RDMA_OPTION_ID_PEER_TO_PEER, &one, sizeof(one))) {
		peer_fail(p, "PEER_TO_PEER: %s", strerror(errno));
		return -1;
	}
	return setup_qp(p);
}

/* The QP of @p->id, its buffers and a RECV for the peer's name. */
static int setup_qp(struct peer *p)
{
	struct ibv_qp_init_attr qpa = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC, .sq_sig_all = 1,
		.send_cq = cq, .recv_cq = cq,
	};
	struct ibv_sge sge;
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	if (!pd) {
		pd = ibv_alloc_pd(p->id->verbs);
		cq = pd ? ibv_create_cq(p->id->verbs, 4 * MAX_PEERS, NULL,
					NULL, 0) : NULL;
		if (!cq)
			die("ibv_alloc_pd/create_cq");
		qpa.send_cq = cq;
		qpa.recv_cq = cq;
	}
	if (rdma_create_qp(p->id, pd, &qpa))
		die("rdma_create_qp");
	if (!p->mr)
		p->mr = ibv_reg_mr(pd, p->send, 2 * NAME_LEN,
				   IBV_ACCESS_LOCAL_WRITE);
	if (!p->mr)
		die("ibv_reg_mr");
	sge = (struct ibv_sge){ .addr = (uintptr_t)p->recv,
				.length = NAME_LEN, .lkey = p->mr->lkey };
	wr.wr_id = (uintptr_t)p;
	if (ibv_post_recv(p->id->qp, &wr, &bad))
		die("ibv_post_recv");
	return 0;
}

static void send_name(struct peer *p)
{
	struct ibv_sge sge = { .addr = (uintptr_t)p->send,
			       .length = NAME_LEN, .lkey = p->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = (uintptr_t)p, .sg_list = &sge,
				  .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	if (ibv_post_send(p->id->qp, &wr, &bad))
		peer_fail(p, "ibv_post_send: %s", strerror(errno));
}

static void on_wc(struct ibv_wc *wc)
{
	struct peer *p = (struct peer *)(uintptr_t)wc->wr_id;

	if (wc->status != IBV_WC_SUCCESS) {
		peer_fail(p, "completion: %s", ibv_wc_status_str(wc->status));
		return;
	}
	if (wc->opcode & IBV_WC_RECV) {
		p->received = 1;
		if (strncmp(p->recv, p->name, NAME_LEN))
			peer_fail(p, "SEND came from %s", p->recv);
	} else {
		p->sent = 1;
	}
	if (p->sent && p->received && !p->done) {
		p->done = 1;
		p->t_done = now_ms();
	}
}

static void poll_wcs(void)
{
	struct ibv_wc wc[16];
	int n, i;

	if (!cq)	/* no QP yet: only peers that connect to our listener */
		return;
	while ((n = ibv_poll_cq(cq, 16, wc)) > 0)
		for (i = 0; i < n; i++)
			on_wc(&wc[i]);
}

/*
 * Our listener's CONNECT_REQUEST: accept it from a peer we expect there,
 * on its new id.  Returns an id to destroy once the event is acked.
 */
static struct rdma_cm_id *on_connect_request(struct rdma_cm_event *ev)
{
	struct rdma_conn_param cp = { .responder_resources = 1,
				      .initiator_depth = 1,
				      .rnr_retry_count = 7 };
	const char *got = ev->param.conn.private_data;
	struct sockaddr_in *from =
		(struct sockaddr_in *)rdma_get_peer_addr(ev->id);
	struct peer *p = NULL;
	char ip[64] = "";
	int i;

	inet_ntop(AF_INET, &from->sin_addr, ip, sizeof(ip));
	if (ev->param.conn.private_data_len < NAME_LEN)
		got = NULL;
	for (i = 0; got && i < o.npeers; i++)
		if (!strncmp(got, peers[i].name, NAME_LEN))
			p = &peers[i];
	if (!p || (p->mode != 'a' && !p->pending) || p->accepted ||
	    strcmp(ip, p->ip) ||
	    (p->mode == 'p' && ntohs(from->sin_port) != p->port)) {
		fprintf(stderr, "%s: unexpected CONNECT_REQUEST from %s:%d\n",
			o.name, ip, ntohs(from->sin_port));
		if (p)
			peer_fail(p, "%s", "a second connection");
		else
			stray++;
		rdma_reject(ev->id, NULL, 0);
		return ev->id;
	}
	if (p->id) {
		/* the peer id whose rdma_connect() said EALREADY */
		if (p->id->qp)
			rdma_destroy_qp(p->id);
		rdma_destroy_id(p->id);
	}
	p->id = ev->id;
	p->id->context = p;
	p->accepted = 1;
	setup_qp(p);
	cp.private_data = p->send;
	cp.private_data_len = NAME_LEN;
	if (rdma_accept(p->id, &cp))
		peer_fail(p, "rdma_accept: %s", strerror(errno));
	return NULL;
}

static void on_event(struct rdma_cm_event *ev)
{
	struct peer *p = ev->id->context;
	const char *got = ev->param.conn.private_data;
	char why[64];

	switch (ev->event) {
	case RDMA_CM_EVENT_ESTABLISHED:
		p->established = 1;
		if (p->accepted) {
			/* the name came with the CONNECT_REQUEST */
			send_name(p);
			break;
		}
		if (!got || ev->param.conn.private_data_len < NAME_LEN ||
		    strncmp(got, p->name, NAME_LEN)) {
			char seen[NAME_LEN + 1] = "";

			if (got)
				memcpy(seen, got, NAME_LEN);
			peer_fail(p, "connected to %s", seen);
			break;
		}
		send_name(p);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		/* the peer is done: what it sent is in our CQ before this */
		p->disconnected = 1;
		poll_wcs();
		if (!p->done)
			peer_fail(p, "%s", "disconnected early");
		break;
	default:
		/* status: a REJ's reason, or an errno */
		snprintf(why, sizeof(why), "%s status %d",
			 rdma_event_str(ev->event), ev->status);
		peer_fail(p, "%s", why);
		break;
	}
}

/* The next CM event of either channel, within @ms; NULL if none. */
static struct rdma_cm_event *next_event(int ms)
{
	struct pollfd pfd[2] = { { .fd = ch->fd, .events = POLLIN },
				 { .fd = lch ? lch->fd : -1, .events = POLLIN } };
	struct rdma_cm_event *ev;
	int i;

	if (poll(pfd, 2, ms) < 1)
		return NULL;
	for (i = 0; i < 2; i++)
		if ((pfd[i].revents & POLLIN) &&
		    !rdma_get_cm_event(i ? lch : ch, &ev))
			return ev;
	return NULL;
}

static void handle_event(struct rdma_cm_event *ev)
{
	struct rdma_cm_id *dead = NULL;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		dead = on_connect_request(ev);
	else
		on_event(ev);
	rdma_ack_cm_event(ev);
	if (dead)
		rdma_destroy_id(dead);
}

/* Connect to every peer at the start time; wait for all outcomes. */
static int run_round(int round, double start)
{
	struct rdma_conn_param cp = {
		.responder_resources = 1, .initiator_depth = 1,
		.retry_count = 7, .rnr_retry_count = 7,
	};
	struct rdma_cm_event *ev;
	int i, left, failed = 0;
	double deadline, t0;

	for (i = 0; i < o.npeers; i++) {
		struct peer *p = &peers[i];

		p->established = 0;
		p->sent = 0;
		p->received = 0;
		p->done = 0;
		p->disconnected = 0;
		p->fail = NULL;
		snprintf(p->send, NAME_LEN, "%s", o.name);
		memset(p->recv, 0, NAME_LEN);
		setup_peer(p);
	}
	if (now_ms() > start)
		fprintf(stderr, "%s: set-up ended %.0f ms late\n", o.name,
			now_ms() - start);
	while (now_ms() < start + o.delay_ms)
		usleep(1000);
	cp.private_data = peers[0].send;
	cp.private_data_len = NAME_LEN;
	t0 = now_ms();
	for (i = 0; i < o.npeers; i++) {
		struct peer *p = &peers[i];

		if (p->done || p->mode == 'a' || !rdma_connect(p->id, &cp))
			continue;
		if (errno == EALREADY && o.listen && p->mode == 'p') {
			/* its REQ is at our listener: accept that one */
			printf("%s: %s's request is at our listener\n",
			       o.name, p->name);
			p->pending = 1;
			continue;
		}
		peer_fail(p, "rdma_connect: %s", strerror(errno));
	}
	deadline = now_ms() + o.timeout_ms;
	for (;;) {
		for (left = 0, i = 0; i < o.npeers; i++)
			left += !peers[i].done;
		if (!left || now_ms() > deadline)
			break;
		poll_wcs();
		ev = next_event(1);
		if (ev)
			handle_event(ev);
	}
	for (i = 0; i < o.npeers; i++) {
		struct peer *p = &peers[i];

		if (!p->done)
			peer_fail(p, "%s", p->established ?
				  "no SEND in time" : "not connected in time");
		if (p->fail)
			failed++;
		printf("conn %d %s %s %s %s\n", round, o.name, p->name,
		       p->fail ? "FAIL" : "ok", p->fail ? p->fail :
		       p->accepted ? "listener" :
		       p->mode == 'c' ? "client" : "peer");
		if (!p->fail)	/* from our connect (or start) to its SEND */
			printf("time %d %s %s %.0f\n", round, o.name, p->name,
			       p->t_done - t0);
	}
	/* a clean end for the next round: disconnect, then destroy */
	for (i = 0; i < o.npeers; i++)
		if (peers[i].established)
			rdma_disconnect(peers[i].id);
	deadline = now_ms() + 3000;
	while (now_ms() < deadline) {
		for (left = 0, i = 0; i < o.npeers; i++)
			left += peers[i].established && !peers[i].disconnected;
		if (!left)
			break;
		ev = next_event(10);
		if (!ev)
			continue;
		if (ev->event == RDMA_CM_EVENT_DISCONNECTED)
			((struct peer *)ev->id->context)->disconnected = 1;
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
			handle_event(ev);	/* stray: rejected */
		else
			rdma_ack_cm_event(ev);
	}
	for (i = 0; i < o.npeers; i++) {
		struct peer *p = &peers[i];

		if (p->id && p->id->qp)
			rdma_destroy_qp(p->id);
		if (p->mr)
			ibv_dereg_mr(p->mr);
		p->mr = NULL;
		if (p->id)
			rdma_destroy_id(p->id);
		p->id = NULL;
	}
	return failed;
}

/* --listen: a peer listener on our port, shared with our peer ids */
static void listen_on_port(void)
{
	struct rdma_cm_id *lid;
	struct sockaddr_in src;
	int one = 1;

	lch = rdma_create_event_channel();
	if (!lch || rdma_create_id(lch, &lid, NULL, RDMA_PS_TCP))
		die("listener: rdma_create_id");
	if (rdma_set_option(lid, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR,
			    &one, sizeof(one)) ||
	    rdma_set_option(lid, RDMA_OPTION_ID, RDMA_OPTION_ID_PEER_TO_PEER,
			    &one, sizeof(one)))
		die("listener: rdma_set_option");
	addr_of(o.local, o.port, &src);
	if (rdma_bind_addr(lid, (struct sockaddr *)&src))
		die("listener: rdma_bind_addr");
	if (rdma_listen(lid, 16))
		die("listener: rdma_listen");
}

static void print_usage(void)
{
	fprintf(stderr,
		"usage: peer_ranks --local IP --port N --name S\n"
		"       --peer IP:PORT:NAME[:p|c|a] [--peer ...]\n"
		"       --start-ms EPOCH_MS [--rounds N] [--round-ms N]\n"
		"       [--timeout-ms N] [--listen] [--delay-ms N]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "local", 1, 0, 'l' }, { "port", 1, 0, 'p' },
		{ "name", 1, 0, 'n' }, { "peer", 1, 0, 'P' },
		{ "start-ms", 1, 0, 's' }, { "rounds", 1, 0, 'r' },
		{ "round-ms", 1, 0, 'R' }, { "timeout-ms", 1, 0, 't' },
		{ "listen", 0, 0, 'L' }, { "delay-ms", 1, 0, 'd' },
		{ 0 },
	};
	int c, r, failed = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		struct peer *p = &peers[o.npeers];

		switch (c) {
		case 'l':
			o.local = optarg;
			break;
		case 'p':
			o.port = atoi(optarg);
			break;
		case 'n':
			o.name = optarg;
			break;
		case 's':
			o.start_ms = atoll(optarg);
			break;
		case 'r':
			o.rounds = atoi(optarg);
			break;
		case 'R':
			o.round_ms = atoi(optarg);
			break;
		case 't':
			o.timeout_ms = atoi(optarg);
			break;
		case 'L':
			o.listen = 1;
			break;
		case 'd':
			o.delay_ms = atoi(optarg);
			break;
		case 'P':
			p->mode = 'p';
			if (o.npeers == MAX_PEERS ||
			    sscanf(optarg, "%63[^:]:%d:%31[^:]:%c", p->ip,
				   &p->port, p->name, &p->mode) < 3 ||
			    !strchr("pca", p->mode))
				print_usage();
			o.npeers++;
			break;
		default:
			print_usage();
		}
	}
	if (!o.local || !o.port || !o.name || !o.npeers || !o.start_ms ||
	    strlen(o.name) >= NAME_LEN)
		print_usage();
	ch = rdma_create_event_channel();
	if (!ch)
		die("rdma_create_event_channel");
	if (o.listen)
		listen_on_port();
	for (r = 0; r < o.rounds; r++)
		failed += run_round(r, o.start_ms + (double)r * o.round_ms);
	if (stray)
		fprintf(stderr, "%s: %d CONNECT_REQUESTs from nobody expected\n",
			o.name, stray);
	return failed || stray ? 1 : 0;
}
