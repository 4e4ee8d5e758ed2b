// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * peer_bench: connection set-up time with stock librdmacm, MPI-style.
 *
 * A job has --ranks R ranks on each host of --hosts IP0,IP1,...; this
 * process is rank --index K: host K / R, local rank K % R.  A rank has ONE
 * address, its host's IP and the port --base-port + K % R (+ R for each
 * round, so that rounds do not meet), and connects to every rank of the
 * other hosts, not its own host's, in one of three modes:
 *
 *   peer  every connection is its own rdma_cm id bound to the rank's port
 *         (RDMA_OPTION_ID_REUSEADDR) with RDMA_OPTION_ID_PEER_TO_PEER;
 *         both ends rdma_connect() at the start;
 *   cs    client/server with static roles: of two hosts, the ranks of the
 *         lower one (first in --hosts) listen on their port before the
 *         start, the others connect at the start from an ephemeral port;
 *   wa    the workaround without the peer model (Open MPI-style wire-up):
 *         at the start the lower host's rank listens and tells each
 *         client rank with a UDP message (to --ctrl-port + its local
 *         rank), which then connects.
 *
 * Everything that does not depend on the other end (ids, address and
 * route resolution, QPs) is set up before the start: --start-ms (host
 * clock), or, with --start-file F, the ms value F holds once it exists
 * (--ready-file G is created when set-up is done, so a script can pick
 * the start once all ranks are ready).  The host clock is read through
 * the mtime of --clock-file (UML hostfs, qemu 9p).
 *
 * Each end puts (magic, round, from, to, QPN) in the private data and,
 * once ESTABLISHED, SENDs the same over the connection; it checks that
 * what it got names itself and the rank it connected to ("wrong" when
 * not: a connection to the wrong process).  A second CONNECT_REQUEST for
 * one pair is a duplicate and is refused.  A round ends when every
 * connection has sent and received (with --no-send: is ESTABLISHED),
 * failed, or --window-ms passed; then every end disconnects.  --rounds
 * repeats it every --period-ms.
 *
 * Output, one JSON object per line on stdout:
 *   {"round":R,"pair":P,"me":K,"peer":J,"role":"...","ok":1,"conn_ms":C,
 *    "est_ms":E,"done_ms":D,"qpn":Q,"peer_qpn":Q2,"wrong":0,"dup":0,
 *    "err":""}              per connection end (times from the start)
 *   {"round":R,"me":K,"late_ms":L,"stray":S,"matched":M,"claimed":C,
 *    "held":H}              per round: set-up overrun, CONNECT_REQUESTs
 *                           from no expected rank, cm_peer counter deltas
 * --nonblock: the CM event channel is non-blocking, as MPI libraries have
 * it (UCX); each wake-up then handles every event queued.
 * --delay-ms D: this end's rdma_connect() calls come D ms after the start
 * (the other end's peer REQ is then held here until they do).
 * With --trace, markers "pb rR @MS ..." (start, rdma_connect, each CM
 * event) go to the kernel trace (tracefs trace_marker).
 * Exit status 0 when every connection of every round was ok.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
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

#define MAX_HOSTS	8
#define MAX_CONNS	128
#define MAGIC		0x62656e63u

enum mode { PEER, CS, WA };
enum role { R_PEER, R_CLIENT, R_SERVER };
static const char *const role_name[] = { "peer", "client", "server" };

struct pdata {
	__u32 magic, round, from, to, qpn;
};

struct conn {
	struct pdata send, recv;	/* first: the registered buffers */
	int pair, peer;
	enum role role;
	struct rdma_cm_id *id;
	double t_conn, t_est, t_done;
	__u32 peer_qpn;
	int established, sent, received, failed, disconnected, notified;
	int wrong, dup;
	char err[64];
};

static struct {
	enum mode mode;
	int ranks, index, rounds, period_ms, window_ms, base_port, ctrl_port;
	int spin, nhosts, no_send, delay_ms, nonblock;
	long long start_ms;
	char *hosts[MAX_HOSTS];
	const char *dev, *clock_file, *ready_file, *start_file;
} o = {
	.ranks = 1, .rounds = 1, .period_ms = 200, .window_ms = 100,
	.base_port = 20000, .ctrl_port = 19000, .dev = "rxe0",
};

static struct rdma_event_channel *ch;
static struct ibv_comp_channel *cch;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_mr *mr;
static struct conn conns[MAX_CONNS];
static struct rdma_cm_id *listener;
static struct rdma_cm_id *refused;	/* to destroy once its event is acked */
static int nconns, udp = -1, round_no, stray, port, in_round, draining;
static int marker = -1;		/* --trace: the tracefs trace_marker */
static double mark_t0;		/* the round's start, our clock */
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

/*
 * A line in the kernel trace, with --trace: "pb rROUND @MS what", MS from
 * the round's start by our clock, which trace-round.py maps the trace's
 * clock to (the two hosts' traces have no common clock).
 */
static void mark(const char *fmt, ...)
{
	char buf[128];
	va_list ap;
	int n;

	if (marker < 0)
		return;
	n = snprintf(buf, sizeof(buf), "pb r%d @%.3f ", round_no,
		     now_ms() - mark_t0);
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
	va_end(ap);
	if (write(marker, buf, n) < 0)
		marker = -1;
}

static int host_of(int k)
{
	return k / o.ranks;
}

/* Rank @k's address in this round; port 0 for an ephemeral one. */
static void addr_of(int k, int p, struct sockaddr_in *sin)
{
	if (peer_sockaddr(o.hosts[host_of(k)], p, sin))
		die("bad address %s", o.hosts[host_of(k)]);
}

static int port_of(int k)
{
	return o.base_port + (round_no * o.ranks + k % o.ranks) % 30000;
}

static int pair_index(int i, int j)
{
	int n = o.ranks * o.nhosts;
	int lo = i < j ? i : j, hi = i < j ? j : i;

	/* pairs (0,1), (0,2), ..., (1,2), ... numbered from 0 */
	return lo * n - lo * (lo + 1) / 2 + (hi - lo - 1);
}

static void conn_fail(struct conn *c, const char *what, int status)
{
	if (!c->failed)
		snprintf(c->err, sizeof(c->err), "%s %d", what, status);
	c->failed = 1;
}

/* Whether @p is this round's, from @c's peer rank and to us. */
static bool pdata_names(const struct conn *c, const struct pdata *p)
{
	return p->magic == MAGIC && p->round == (__u32)round_no &&
	       p->from == (__u32)c->peer && p->to == (__u32)o.index;
}

/* What @p names, checked against @c: 0, or -1 when it is not for us. */
static int check_pdata(struct conn *c, const struct pdata *p)
{
	if (!pdata_names(c, p))
		return -1;
	c->peer_qpn = p->qpn;
	return 0;
}

/* Connected, SEND both ways, to the right rank, once. */
static bool conn_ok(const struct conn *c)
{
	return c->t_done && !c->failed && !c->wrong && !c->dup;
}

static void post_recv(struct conn *c)
{
	struct ibv_sge sge = { .addr = (uintptr_t)&c->recv,
			       .length = sizeof(c->recv), .lkey = mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = (uintptr_t)c, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	if (ibv_post_recv(c->id->qp, &wr, &bad))
		die("ibv_post_recv: %s", strerror(errno));
}

static void make_qp(struct conn *c)
{
	struct ibv_qp_init_attr qpa = {
		.cap = { .max_send_wr = 2, .max_recv_wr = 2,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC, .sq_sig_all = 1,
	};

	qpa.send_cq = cq;
	qpa.recv_cq = cq;
	if (rdma_create_qp(c->id, pd, &qpa))
		die("rdma_create_qp: %s", strerror(errno));
	c->send.qpn = c->id->qp->qp_num;
	if (!o.no_send)
		post_recv(c);
}

static struct rdma_conn_param conn_param(struct conn *c)
{
	struct rdma_conn_param cp = {
		.responder_resources = 1, .initiator_depth = 1,
		.retry_count = 7, .rnr_retry_count = 7,
		.private_data = &c->send, .private_data_len = sizeof(c->send),
	};

	return cp;
}

static void do_connect(struct conn *c)
{
	struct rdma_conn_param cp = conn_param(c);

	c->t_conn = now_ms();
	mark("rdma_connect pair %d", c->pair);
	if (rdma_connect(c->id, &cp))
		conn_fail(c, "connect", errno);
	mark("rdma_connect done");
}

static void send_check(struct conn *c)
{
	struct ibv_sge sge = { .addr = (uintptr_t)&c->send,
			       .length = sizeof(c->send), .lkey = mr->lkey };
	struct ibv_send_wr wr = { .wr_id = (uintptr_t)c, .sg_list = &sge,
				  .num_sge = 1, .opcode = IBV_WR_SEND }, *bad;

	if (ibv_post_send(c->id->qp, &wr, &bad))
		conn_fail(c, "post_send", errno);
}

static void poll_wcs(void)
{
	struct ibv_wc wc[16];
	int n, i;

	while ((n = ibv_poll_cq(cq, 16, wc)) > 0) {
		for (i = 0; i < n; i++) {
			struct conn *c = (struct conn *)(uintptr_t)wc[i].wr_id;

			if (draining)	/* flushed from the QPs just destroyed */
				continue;
			if (wc[i].status != IBV_WC_SUCCESS) {
				conn_fail(c, "wc", wc[i].status);
				continue;
			}
			if (wc[i].opcode & IBV_WC_RECV) {
				c->received = 1;
				if (check_pdata(c, &c->recv))
					c->wrong = 1;
			} else {
				c->sent = 1;
			}
			if (c->sent && c->received && !c->t_done)
				c->t_done = now_ms();
		}
	}
}

/* The listener's CONNECT_REQUEST: accept it for the rank it names. */
static void connect_request(struct rdma_cm_event *ev)
{
	const struct pdata *p = ev->param.conn.private_data;
	struct rdma_conn_param cp;
	struct conn *c = NULL;
	bool named;
	int i;

	if (ev->param.conn.private_data_len < sizeof(*p))
		p = NULL;
	for (i = 0; p && i < nconns; i++)
		if (conns[i].peer == (int)p->from &&
		    conns[i].role == R_SERVER)
			c = &conns[i];
	named = c && pdata_names(c, p);
	if (!named || c->id) {
		if (named)
			c->dup = 1;
		else
			stray++;
		rdma_reject(ev->id, NULL, 0);
		refused = ev->id;
		return;
	}
	c->id = ev->id;
	c->id->context = c;
	c->t_conn = now_ms();
	c->peer_qpn = p->qpn;
	make_qp(c);
	cp = conn_param(c);
	if (rdma_accept(c->id, &cp))
		conn_fail(c, "accept", errno);
}

static void handle_one(struct rdma_cm_event *ev)
{
	struct conn *c = ev->id->context;
	const struct pdata *p = ev->param.conn.private_data;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		connect_request(ev);
		return;
	}
	if (!c || ev->id == listener)
		return;
	switch (ev->event) {
	case RDMA_CM_EVENT_ESTABLISHED:
		c->t_est = now_ms();
		c->established = 1;
		/* a server's comes with the RTU's private data: not ours */
		if (c->role != R_SERVER &&
		    (ev->param.conn.private_data_len < sizeof(*p) ||
		     check_pdata(c, p)))
			c->wrong = 1;
		if (o.no_send)
			c->t_done = c->t_est;
		else
			send_check(c);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		/* what the peer sent is in our CQ before this */
		poll_wcs();
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

static void handle(struct rdma_cm_event *ev)
{
	mark("event %s", rdma_event_str(ev->event));
	handle_one(ev);
	rdma_ack_cm_event(ev);
	if (refused)
		rdma_destroy_id(refused);
	refused = NULL;
}

static void workaround_notice(void)
{
	__u32 msg[2];
	int i;

	if (recv(udp, msg, sizeof(msg), 0) != sizeof(msg) ||
	    msg[1] != (__u32)round_no)
		return;
	for (i = 0; i < nconns; i++) {
		struct conn *c = &conns[i];

		if (c->peer == (int)msg[0] && c->role == R_CLIENT &&
		    !c->notified) {
			c->notified = 1;
			do_connect(c);
		}
	}
}

static void cq_event(void)
{
	struct ibv_cq *ev_cq;
	void *ctx;

	if (ibv_get_cq_event(cch, &ev_cq, &ctx))
		return;
	ibv_ack_cq_events(ev_cq, 1);
	if (ibv_req_notify_cq(cq, 0))
		die("ibv_req_notify_cq: %s", strerror(errno));
	poll_wcs();
}

static void notify(struct conn *c)
{
	struct sockaddr_in to;
	__u32 msg[2] = { (__u32)o.index, (__u32)round_no };

	addr_of(c->peer, o.ctrl_port + c->peer % o.ranks, &to);
	if (sendto(udp, msg, sizeof(msg), 0, (struct sockaddr *)&to,
		   sizeof(to)) != sizeof(msg))
		conn_fail(c, "notify", errno);
}

/*
 * The workaround's notice is a datagram: as a program using it would, the
 * server sends it again to the clients it has no CONNECT_REQUEST from yet.
 * Only after 10 s, longer than any storm takes: a CONNECT_REQUEST still in
 * the server's event queue must not draw notices (at 1 s, 32x32 storms
 * sent thousands, slowing the workaround down).
 */
#define WA_RENOTIFY_MS 10000
static double next_notice;
static int renotices;

static void renotify(void)
{
	int i;

	if (!next_notice || now_ms() < next_notice)
		return;
	for (i = 0; i < nconns; i++)
		if (conns[i].role == R_SERVER && !conns[i].id &&
		    !conns[i].failed) {
			notify(&conns[i]);
			renotices++;
		}
	next_notice = now_ms() + WA_RENOTIFY_MS;
}

/* Handle CM, CQ and workaround events until @t or @done(). */
static void pump(double t, int (*done)(void))
{
	struct pollfd pfd[3] = {
		{ .fd = ch->fd, .events = POLLIN },
		{ .fd = cch->fd, .events = POLLIN },
		{ .fd = in_round ? udp : -1, .events = POLLIN },
	};
	struct rdma_cm_event *ev;
	int left, n;

	while (!(done && done())) {
		left = (int)(t - now_ms());
		if (left <= 0)
			return;
		if (next_notice && next_notice - now_ms() < left)
			left = next_notice > now_ms() ?
			       (int)(next_notice - now_ms()) + 1 : 0;
		n = poll(pfd, 3, left);
		renotify();
		if (n <= 0)
			continue;
		if (pfd[0].revents & POLLIN)
			while (!rdma_get_cm_event(ch, &ev)) {
				handle(ev);
				if (!o.nonblock)
					break;
			}
		if (pfd[1].revents & POLLIN)
			cq_event();
		if (pfd[2].revents & POLLIN)
			workaround_notice();
	}
}

/* Wait for @id's @want during set-up, handling what else comes. */
static void setup_wait(struct rdma_cm_id *id, enum rdma_cm_event_type want)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	for (;;) {
		if (poll(&pfd, 1, 5000) != 1)
			die("no %s", rdma_event_str(want));
		if (rdma_get_cm_event(ch, &ev)) {
			if (errno == EAGAIN)	/* librdmacm took it */
				continue;
			die("no %s: %s", rdma_event_str(want),
			    strerror(errno));
		}
		if (ev->id == id) {
			if (ev->event != want)
				die("%s instead of %s", rdma_event_str(ev->event),
				    rdma_event_str(want));
			rdma_ack_cm_event(ev);
			return;
		}
		handle(ev);
	}
}

/* @c's connecting id, address and route resolved, with its QP. */
static void setup_connector(struct conn *c)
{
	struct sockaddr_in src, dst;
	int one = 1;

	addr_of(o.index, c->role == R_PEER ? port : 0, &src);
	addr_of(c->peer, port_of(c->peer), &dst);
	if (rdma_create_id(ch, &c->id, c, RDMA_PS_TCP))
		die("rdma_create_id: %s", strerror(errno));
	if (c->role == R_PEER &&
	    (rdma_set_option(c->id, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR,
			     &one, sizeof(one)) ||
	     rdma_bind_addr(c->id, (struct sockaddr *)&src)))
		die("bind %d: %s", port, strerror(errno));
	if (rdma_resolve_addr(c->id, (struct sockaddr *)&src,
			      (struct sockaddr *)&dst, 2000))
		die("resolve_addr: %s", strerror(errno));
	setup_wait(c->id, RDMA_CM_EVENT_ADDR_RESOLVED);
	if (rdma_resolve_route(c->id, 2000))
		die("resolve_route: %s", strerror(errno));
	setup_wait(c->id, RDMA_CM_EVENT_ROUTE_RESOLVED);
	if (c->role == R_PEER &&
	    rdma_set_option(c->id, RDMA_OPTION_ID, RDMA_OPTION_ID_PEER_TO_PEER,
			    &one, sizeof(one)))
		die("set PEER_TO_PEER: %s", strerror(errno));
	make_qp(c);
}

static void listen_on_port(void)
{
	struct sockaddr_in src;

	addr_of(o.index, port, &src);
	if (rdma_create_id(ch, &listener, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(listener, (struct sockaddr *)&src) ||
	    rdma_listen(listener, 2 * nconns))
		die("listen on %d: %s", port, strerror(errno));
}

static int all_done(void)
{
	int i;

	for (i = 0; i < nconns; i++)
		if (!conns[i].t_done && !conns[i].failed)
			return 0;
	return 1;
}

static int all_disconnected(void)
{
	int i;

	for (i = 0; i < nconns; i++)
		if (conns[i].established && !conns[i].disconnected)
			return 0;
	return 1;
}

/* The round's start, host clock made ours: --start-ms or --start-file. */
static double start_time(int r)
{
	long long ms = 0;
	FILE *f;

	if (!o.start_file)
		return o.start_ms + clock_offset_ms + (double)r * o.period_ms;
	if (o.ready_file) {
		f = fopen(o.ready_file, "w");
		if (!f || fclose(f))
			die("%s: %s", o.ready_file, strerror(errno));
	}
	while (!(f = fopen(o.start_file, "r")))
		usleep(20000);
	if (fscanf(f, "%lld", &ms) != 1)
		die("%s: no start time", o.start_file);
	fclose(f);
	return ms + clock_offset_ms;
}

static double rel(double t, double t0)
{
	return t ? t - t0 : -1.0;
}

static void print_round(double t0, double late, long ctr[3])
{
	static const char *const names[] = { "matched", "claimed", "held" };
	int i;

	for (i = 0; i < nconns; i++) {
		struct conn *c = &conns[i];
		int ok = conn_ok(c);

		if (!ok && !c->err[0])
			snprintf(c->err, sizeof(c->err), "%s",
				 c->wrong ? "wrong process" :
				 c->dup ? "duplicate" :
				 c->established ? "no SEND" : "timeout");
		printf("{\"round\":%d,\"pair\":%d,\"me\":%d,\"peer\":%d,",
		       round_no, c->pair, o.index, c->peer);
		printf("\"role\":\"%s\",\"ok\":%d,", role_name[c->role], ok);
		printf("\"conn_ms\":%.3f,\"est_ms\":%.3f,\"done_ms\":%.3f,",
		       rel(c->t_conn, t0), rel(c->t_est, t0),
		       rel(c->t_done, t0));
		printf("\"qpn\":%u,\"peer_qpn\":%u,",
		       c->id && c->id->qp ? c->id->qp->qp_num : 0,
		       c->peer_qpn);
		printf("\"wrong\":%d,\"dup\":%d,\"err\":\"%s\"}\n", c->wrong,
		       c->dup, c->err);
	}
	printf("{\"round\":%d,\"me\":%d,\"late_ms\":%.1f,\"stray\":%d",
	       round_no, o.index, late, stray);
	for (i = 0; i < 3; i++)
		printf(",\"%s\":%ld", names[i],
		       peer_counter(o.dev, names[i]) - ctr[i]);
	printf("}\n");
}

static void teardown(void)
{
	int i;

	for (i = 0; i < nconns; i++)
		if (conns[i].established)
			rdma_disconnect(conns[i].id);
	pump(now_ms() + 2000, all_disconnected);
	for (i = 0; i < nconns; i++) {
		struct conn *c = &conns[i];

		if (!c->id)
			continue;
		if (c->id->qp)
			rdma_destroy_qp(c->id);
		rdma_destroy_id(c->id);
	}
	/* conns[] is reused next round: nothing of this one may reach it */
	draining = 1;
	poll_wcs();
	draining = 0;
	if (listener)
		rdma_destroy_id(listener);
	listener = NULL;
}

/* a rank listens when it is the server of any other rank */
static bool serves(void)
{
	int i;

	for (i = 0; i < nconns; i++)
		if (conns[i].role == R_SERVER)
			return true;
	return false;
}

static void setup_round(void)
{
	int n = o.ranks * o.nhosts, j;

	nconns = 0;
	stray = 0;
	port = port_of(o.index);
	for (j = 0; j < n; j++) {
		struct conn *c;

		if (host_of(j) == host_of(o.index))
			continue;
		c = &conns[nconns++];
		memset(c, 0, sizeof(*c));
		c->peer = j;
		c->pair = pair_index(o.index, j);
		c->send = (struct pdata){ .magic = MAGIC, .round = round_no,
					  .from = o.index, .to = j };
		if (o.mode == PEER)
			c->role = R_PEER;
		else
			c->role = host_of(o.index) < host_of(j) ? R_SERVER :
								  R_CLIENT;
	}
	for (j = 0; j < nconns; j++)
		if (conns[j].role != R_SERVER)
			setup_connector(&conns[j]);
	if (o.mode == CS && serves())
		listen_on_port();
}

static int run_round(void)
{
	long ctr[3] = { peer_counter(o.dev, "matched"),
			peer_counter(o.dev, "claimed"),
			peer_counter(o.dev, "held") };
	double t0, late;
	int i, bad = 0;

	setup_round();
	t0 = start_time(round_no);
	mark_t0 = t0;
	late = now_ms() > t0 ? now_ms() - t0 : 0;
	peer_sleep_until(t0, o.spin);
	mark("start");
	if (o.mode == WA && serves()) {
		listen_on_port();
		for (i = 0; i < nconns; i++)
			if (conns[i].role == R_SERVER)
				notify(&conns[i]);
		next_notice = now_ms() + WA_RENOTIFY_MS;
	}
	/*
	 * Sleep, never spin, through the delay: on a uniprocessor host a
	 * spinning rank keeps the CM from seeing the other end's REQ until
	 * it connects itself (the held mode then measured collisions in
	 * 181 of 200 rounds).
	 */
	if (o.delay_ms)
		peer_sleep_until(t0 + o.delay_ms, 0);
	for (i = 0; i < nconns; i++)
		if (conns[i].role != R_SERVER && o.mode != WA)
			do_connect(&conns[i]);
	/* workaround clients connect when told, from pump() */
	in_round = 1;
	pump(t0 + o.window_ms, all_done);
	/* without the SEND check the other end may still be completing */
	if (o.no_send)
		pump(t0 + o.window_ms, NULL);
	in_round = 0;
	next_notice = 0;
	if (renotices)
		fprintf(stderr, "peer_bench[%d]: %d workaround notices sent again\n",
			o.index, renotices);
	renotices = 0;
	print_round(t0, late, ctr);
	for (i = 0; i < nconns; i++)
		bad |= !conn_ok(&conns[i]);
	teardown();
	return bad || stray;
}

/* PD, CQ (with a completion channel) and MR on --dev, before any id. */
static void open_device(void)
{
	struct ibv_context **list = rdma_get_devices(NULL), *ctx = NULL;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]->device), o.dev))
			ctx = list[i];
	if (!ctx)
		die("no device %s", o.dev);
	pd = ibv_alloc_pd(ctx);
	cch = pd ? ibv_create_comp_channel(ctx) : NULL;
	cq = cch ? ibv_create_cq(ctx, 4 * MAX_CONNS, NULL, cch, 0) : NULL;
	mr = cq ? ibv_reg_mr(pd, conns, sizeof(conns), IBV_ACCESS_LOCAL_WRITE) :
		  NULL;
	if (!mr || ibv_req_notify_cq(cq, 0))
		die("pd/cq/mr on %s: %s", o.dev, strerror(errno));
	rdma_free_devices(list);
}

static void print_usage(void)
{
	fprintf(stderr,
		"usage: peer_bench --mode peer|cs|wa --hosts IP,IP[,...]\n"
		"       --index K --clock-file F\n"
		"       (--start-ms HOST_EPOCH_MS | --start-file F [--ready-file G])\n"
		"       [--ranks R] [--rounds N] [--period-ms P] [--window-ms W]\n"
		"       [--base-port N] [--ctrl-port N] [--spin] [--dev D]\n"
		"       [--no-send] [--trace] [--delay-ms D] [--nonblock]\n");
	exit(2);
}

static void parse(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "mode", 1, 0, 'm' }, { "hosts", 1, 0, 'H' },
		{ "index", 1, 0, 'i' }, { "ranks", 1, 0, 'n' },
		{ "rounds", 1, 0, 'r' }, { "period-ms", 1, 0, 'p' },
		{ "window-ms", 1, 0, 'w' }, { "start-ms", 1, 0, 's' },
		{ "start-file", 1, 0, 'F' }, { "ready-file", 1, 0, 'R' },
		{ "base-port", 1, 0, 'b' }, { "ctrl-port", 1, 0, 'c' },
		{ "clock-file", 1, 0, 'f' }, { "spin", 0, 0, 'S' },
		{ "dev", 1, 0, 'D' }, { "no-send", 0, 0, 'N' },
		{ "trace", 0, 0, 'T' }, { "delay-ms", 1, 0, 'd' },
		{ "nonblock", 0, 0, 'B' }, { 0 },
	};
	char *hosts = NULL, *tok, *save;
	int c;

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
			o.ranks = atoi(optarg);
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
		case 'F':
			o.start_file = optarg;
			break;
		case 'R':
			o.ready_file = optarg;
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
		case 'N':
			o.no_send = 1;
			break;
		case 'B':
			o.nonblock = 1;
			break;
		case 'd':
			o.delay_ms = atoi(optarg);
			break;
		case 'T':
			marker = open("/sys/kernel/tracing/trace_marker",
				      O_WRONLY);
			if (marker < 0)
				die("trace_marker: %s", strerror(errno));
			break;
		default:
			print_usage();
		}
	}
	for (tok = hosts ? strtok_r(hosts, ",", &save) : NULL;
	     tok && o.nhosts <= MAX_HOSTS; tok = strtok_r(NULL, ",", &save))
		if (o.nhosts++ < MAX_HOSTS)
			o.hosts[o.nhosts - 1] = tok;
	if (o.nhosts < 2 || o.nhosts > MAX_HOSTS || (!o.start_ms && !o.start_file) ||
	    (o.start_file && o.rounds != 1) || !o.clock_file ||
	    o.ranks < 1 || (o.nhosts - 1) * o.ranks > MAX_CONNS ||
	    o.index < 0 || o.index >= o.ranks * o.nhosts)
		print_usage();
}

int main(int argc, char **argv)
{
	struct sockaddr_in me;
	int bad = 0;

	parse(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (peer_host_clock_offset_best(o.clock_file, 20, &clock_offset_ms,
					&clock_err))
		die("%s: %s", o.clock_file, strerror(errno));
	fprintf(stderr, "peer_bench[%d]: clock offset %.3f ms, +-%.3f\n",
		o.index, clock_offset_ms, clock_err);
	ch = rdma_create_event_channel();
	if (!ch)
		die("rdma_create_event_channel: %s", strerror(errno));
	if (o.nonblock &&
	    fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK))
		die("O_NONBLOCK: %s", strerror(errno));
	open_device();
	if (o.mode == WA) {
		udp = socket(AF_INET, SOCK_DGRAM, 0);
		addr_of(o.index, o.ctrl_port + o.index % o.ranks, &me);
		if (udp < 0 || bind(udp, (struct sockaddr *)&me, sizeof(me)))
			die("udp control socket: %s", strerror(errno));
	}
	for (round_no = 0; round_no < o.rounds; round_no++)
		bad |= run_round();
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_destroy_comp_channel(cch);
	ibv_dealloc_pd(pd);
	rdma_destroy_event_channel(ch);
	return bad;
}
