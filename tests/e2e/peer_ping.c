// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * peer_ping: peer-to-peer rdma_cm connect with stock librdmacm.
 *
 * Both ends run the same program: bind the same port, resolve each other,
 * set RDMA_OPTION_ID_PEER_TO_PEER, call rdma_connect() at an agreed moment
 * and wait for RDMA_CM_EVENT_ESTABLISHED.  Then each end sends --count
 * messages, RDMA-WRITEs a pattern into the peer's buffer (address and rkey
 * come with the connect's private data) and sends a final message; each
 * checks what it received, and both disconnect.
 *
 * The role this end took is read from the kernel's cm_peer counters of the
 * device (they are per host; nothing else on the host may connect at the
 * same time).
 *
 * Exit status: 0 on success, 1 on a test failure, 2 on bad usage.
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
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/types.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "peer_common.h"

#define MSG_SIZE	64
#define WRITE_SIZE	4096
#define MAX_COUNT	256
#define MAGIC		0x70327021u

struct pdata {
	__u32 magic;
	__u32 rkey;
	__u64 addr;
	char name[16];
};

struct opts {
	const char *local, *remote, *name, *peer_name;
	int port, count, timeout_ms, delay_ms, peer, idle_ms, shared_host;
	int sync_timeout_ms, wait_held, remote_port, late_ms;
	long long start_ms;
	const char *opt_at;
	const char *dev, *sync_dir;
};

static struct opts o = {
	.port = 7471, .count = 16, .timeout_ms = 15000, .peer = 1,
	.sync_timeout_ms = 120000,
	.name = "peer", .dev = "rxe0", .opt_at = "route",
};

static struct rdma_event_channel *ch;
static struct rdma_cm_id *id;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_mr *mr_send, *mr_recv, *mr_write_src, *mr_write_dst;
static char *send_buf, *recv_buf, *write_src, *write_dst;
static double t_connect;	static void fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: FAIL: ", o.name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (t_connect)
		fprintf(stderr, " [%.0f ms after rdma_connect]",
			now_ms() - t_connect);
	fputc('\n', stderr);
	exit(1);
}

/* Wait for the next CM event; fail unless it is @want. */
static struct rdma_cm_event *wait_event(enum rdma_cm_event_type want)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&pfd, 1, o.timeout_ms) != 1)
		fail("no CM event in %d ms (waiting for %s)", o.timeout_ms,
		     rdma_event_str(want));
	if (rdma_get_cm_event(ch, &ev))
		fail("rdma_get_cm_event: %s", strerror(errno));
	if (ev->event != want)
		fail("got %s (status %d), expected %s",
		     rdma_event_str(ev->event), ev->status,
		     rdma_event_str(want));
	return ev;
}

static void expect_errno(int ret, int want, const char *what)
{
	if (ret != -1 || errno != want)
		fail("rdma_set_option(PEER_TO_PEER, %s): ret %d errno %d, want %s",
		     what, ret, ret ? errno : 0, strerror(want));
}

static struct ibv_mr *reg(char **buf, size_t len, int access)
{
	struct ibv_mr *mr;

	*buf = calloc(1, len);
	if (!*buf)
		fail("out of memory");
	mr = ibv_reg_mr(pd, *buf, len, access);
	if (!mr)
		fail("ibv_reg_mr: %s", strerror(errno));
	return mr;
}

static void post_recv(int i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(recv_buf + i * MSG_SIZE),
		.length = MSG_SIZE, .lkey = mr_recv->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	if (ibv_post_recv(id->qp, &wr, &bad))
		fail("ibv_post_recv: %s", strerror(errno));
}

static void post_send(int i, const char *text)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(send_buf + i * MSG_SIZE),
		.length = MSG_SIZE, .lkey = mr_send->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 1000 + i, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;

	snprintf(send_buf + i * MSG_SIZE, MSG_SIZE, "%s", text);
	if (ibv_post_send(id->qp, &wr, &bad))
		fail("ibv_post_send: %s", strerror(errno));
}

static void post_write(const struct pdata *peer)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)write_src, .length = WRITE_SIZE,
		.lkey = mr_write_src->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 999, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = peer->addr, .rkey = peer->rkey },
	};
	struct ibv_send_wr *bad;

	if (ibv_post_send(id->qp, &wr, &bad))
		fail("ibv_post_send(RDMA WRITE): %s", strerror(errno));
}

/* Poll until @sends send and @recvs receive completions arrived. */
static void poll_cq(int sends, int recvs, int *recv_ids)
{
	double deadline = now_ms() + o.timeout_ms;
	struct ibv_wc wc[16];
	int n, i, s = 0, r = 0;

	while (s < sends || r < recvs) {
		if (now_ms() > deadline)
			fail("completions: %d/%d sends, %d/%d receives", s,
			     sends, r, recvs);
		n = ibv_poll_cq(cq, 16, wc);
		if (n < 0)
			fail("ibv_poll_cq");
		for (i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS)
				fail("completion %llu: %s",
				     (unsigned long long)wc[i].wr_id,
				     ibv_wc_status_str(wc[i].status));
			if (wc[i].opcode & IBV_WC_RECV)
				recv_ids[r++] = wc[i].wr_id;
			else
				s++;
		}
		if (!n)
			usleep(200);
	}
}

static double clock_offset_ms;	/* our clock minus the host's */

/*
 * Meet the peer once both are set up: each creates DIR/NAME.ready; the
 * one whose name sorts first then writes DIR/go.NAME with a start time
 * 300 ms ahead (the hosts share the host's clock); both wait for it.
 */
static long long rendezvous(void)
{
	const char *lead = strcmp(o.name, o.peer_name) < 0 ? o.name :
							     o.peer_name;
	char mine[512], theirs[512], go[512], tmp[520];
	double deadline = now_ms() + o.sync_timeout_ms, err;
	long long start = 0;
	FILE *f;

	snprintf(mine, sizeof(mine), "%s/%s.ready", o.sync_dir, o.name);
	snprintf(theirs, sizeof(theirs), "%s/%s.ready", o.sync_dir,
		 o.peer_name);
	snprintf(go, sizeof(go), "%s/go.%s", o.sync_dir, lead);
	f = fopen(mine, "w");
	if (!f)
		fail("%s: %s", mine, strerror(errno));
	fclose(f);
	if (peer_host_clock_offset(mine, &clock_offset_ms, &err))
		fail("%s: %s", mine, strerror(errno));
	printf("%s: clock offset to the host %.1f ms (+-%.1f)\n", o.name,
	       clock_offset_ms, err);
	while (access(theirs, F_OK)) {
		if (now_ms() > deadline)
			fail("peer %s not ready", o.peer_name);
		usleep(1000);
	}
	if (!strcmp(lead, o.name)) {
		snprintf(tmp, sizeof(tmp), "%s.tmp", go);
		f = fopen(tmp, "w");
		if (!f)
			fail("%s: %s", tmp, strerror(errno));
		fprintf(f, "%lld\n", (long long)(now_ms() - clock_offset_ms) + 300);
		fclose(f);
		if (rename(tmp, go))
			fail("rename %s: %s", go, strerror(errno));
	}
	while (!(f = fopen(go, "r"))) {
		if (now_ms() > deadline)
			fail("no start time from %s", lead);
		usleep(1000);
	}
	if (fscanf(f, "%lld", &start) != 1)
		fail("bad %s", go);
	fclose(f);
	/* the start time is in the host's clock: convert to ours */
	return start + (long long)clock_offset_ms;
}

static void print_usage(void)
{
	fprintf(stderr,
		"usage: peer_ping --local IP --remote IP [--port N] [--name S]\n"
		"       [--count N] [--start-ms EPOCH_MS] [--delay-ms N]\n"
		"       [--timeout-ms N] [--dev RDMA_DEV] [--no-peer]\n"
		"       [--idle-ms N]  (bind as peer, never connect, exit)\n"
		"       [--sync-dir DIR --peer-name S]  (start together with S)\n"
		"       [--shared-host]  (peer on this host: role unknown)\n"
		"       [--sync-timeout-ms N]  (wait for the peer's set-up)\n"
		"       [--wait-held]  (connect once a REQ is held here)\n"
		"       [--remote-port N]  (the peer's port, default --port)\n"
		"       [--opt-at create|bind|addr|route]  (when the option is\n"
		"        set, default route: after route resolution)\n"
		"       [--late-ms N]  (start N ms after --start-ms, connect\n"
		"        as soon as set up)\n");
	exit(2);
}

static void parse(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "local", 1, 0, 'l' }, { "remote", 1, 0, 'r' },
		{ "port", 1, 0, 'p' }, { "count", 1, 0, 'c' },
		{ "start-ms", 1, 0, 's' }, { "delay-ms", 1, 0, 'd' },
		{ "timeout-ms", 1, 0, 't' }, { "name", 1, 0, 'n' },
		{ "dev", 1, 0, 'D' }, { "no-peer", 0, 0, 'N' },
		{ "idle-ms", 1, 0, 'I' }, { "sync-dir", 1, 0, 'S' },
		{ "peer-name", 1, 0, 'P' }, { "shared-host", 0, 0, 'H' },
		{ "sync-timeout-ms", 1, 0, 'T' }, { "wait-held", 0, 0, 'W' },
		{ "remote-port", 1, 0, 'R' }, { "opt-at", 1, 0, 'O' },
		{ "late-ms", 1, 0, 'L' },
		{ 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'l':
			o.local = optarg;
			break;
		case 'r':
			o.remote = optarg;
			break;
		case 'p':
			o.port = atoi(optarg);
			break;
		case 'c':
			o.count = atoi(optarg);
			break;
		case 's':
			o.start_ms = atoll(optarg);
			break;
		case 'd':
			o.delay_ms = atoi(optarg);
			break;
		case 't':
			o.timeout_ms = atoi(optarg);
			break;
		case 'n':
			o.name = optarg;
			break;
		case 'D':
			o.dev = optarg;
			break;
		case 'N':
			o.peer = 0;
			break;
		case 'I':
			o.idle_ms = atoi(optarg);
			break;
		case 'S':
			o.sync_dir = optarg;
			break;
		case 'P':
			o.peer_name = optarg;
			break;
		case 'H':
			o.shared_host = 1;
			break;
		case 'T':
			o.sync_timeout_ms = atoi(optarg);
			break;
		case 'W':
			o.wait_held = 1;
			break;
		case 'R':
			o.remote_port = atoi(optarg);
			break;
		case 'O':
			o.opt_at = optarg;
			break;
		case 'L':
			o.late_ms = atoi(optarg);
			break;
		default:
			print_usage();
		}
	}
	if (!o.local || !o.remote || o.count < 1 || o.count > MAX_COUNT ||
	    (o.late_ms && !o.start_ms) ||
	    (strcmp(o.opt_at, "create") && strcmp(o.opt_at, "bind") &&
	     strcmp(o.opt_at, "addr") && strcmp(o.opt_at, "route")))
		print_usage();
}

/* The option's argument checks, then the real thing, if set @at. */
static void set_peer_option(const char *at)
{
	int one = 1, two = 2;
	char small = 1;

	if (!o.peer || strcmp(o.opt_at, at))
		return;
	expect_errno(rdma_set_option(id, RDMA_OPTION_ID,
				     RDMA_OPTION_ID_PEER_TO_PEER,
				     &two, sizeof(two)), EINVAL, "value 2");
	expect_errno(rdma_set_option(id, RDMA_OPTION_ID,
				     RDMA_OPTION_ID_PEER_TO_PEER,
				     &small, sizeof(small)), EINVAL, "optlen 1");
	if (rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_PEER_TO_PEER,
			    &one, sizeof(one)))
		fail("rdma_set_option(PEER_TO_PEER) after %s: %s", at,
		     strerror(errno));
}

int main(int argc, char **argv)
{
	struct ibv_qp_init_attr qpa = {
		.cap = { .max_send_wr = MAX_COUNT + 4,
			 .max_recv_wr = MAX_COUNT + 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC, .sq_sig_all = 1,
	};
	struct rdma_conn_param cp = {
		.responder_resources = 1, .initiator_depth = 1,
		.retry_count = 7, .rnr_retry_count = 7,
	};
	struct sockaddr_in src, dst;
	struct rdma_cm_event *ev;
	struct pdata mine, peer;
	long passive0, active0, held0, claimed0, matched0;
	int recv_ids[MAX_COUNT + 1];
	double t0, t_est, t_setup;
	int one = 1, i, seen_done = 0;
	const char *role;
	char text[MSG_SIZE];

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse(argc, argv);
	if (o.late_ms) {
		/* this process starts late: nothing exists here until then */
		peer_sleep_until(o.start_ms + o.late_ms, 1);
		o.start_ms = 0;
	}
	t_setup = now_ms();
	if (peer_sockaddr(o.local, o.port, &src) ||
	    peer_sockaddr(o.remote, o.remote_port ? o.remote_port : o.port,
			  &dst))
		fail("bad address %s or %s", o.local, o.remote);

	ch = rdma_create_event_channel();
	if (!ch || rdma_create_id(ch, &id, NULL, RDMA_PS_TCP))
		fail("rdma_create_id: %s", strerror(errno));
	set_peer_option("create");
	if (rdma_bind_addr(id, (struct sockaddr *)&src))
		fail("rdma_bind_addr %s:%d: %s", o.local, o.port,
		     strerror(errno));
	set_peer_option("bind");
	if (rdma_resolve_addr(id, (struct sockaddr *)&src,
			      (struct sockaddr *)&dst, 2000))
		fail("rdma_resolve_addr: %s", strerror(errno));
	rdma_ack_cm_event(wait_event(RDMA_CM_EVENT_ADDR_RESOLVED));
	set_peer_option("addr");
	if (rdma_resolve_route(id, 2000))
		fail("rdma_resolve_route: %s", strerror(errno));
	rdma_ack_cm_event(wait_event(RDMA_CM_EVENT_ROUTE_RESOLVED));
	/* the service ID is bound as peer from here on at the latest */
	set_peer_option("route");
	if (o.idle_ms) {
		/* a peer that never connects: its held REQs must expire */
		usleep((useconds_t)o.idle_ms * 1000);
		printf("%s: idle for %d ms, held=%ld expired=%ld\n", o.name,
		       o.idle_ms, peer_counter(o.dev, "held"), peer_counter(o.dev, "expired"));
		rdma_destroy_id(id);
		rdma_destroy_event_channel(ch);
		return 0;
	}

	pd = ibv_alloc_pd(id->verbs);
	cq = pd ? ibv_create_cq(id->verbs, 2 * MAX_COUNT + 8, NULL, NULL, 0) :
		  NULL;
	if (!cq)
		fail("ibv_alloc_pd/create_cq: %s", strerror(errno));
	qpa.send_cq = cq;
	qpa.recv_cq = cq;
	if (rdma_create_qp(id, pd, &qpa))
		fail("rdma_create_qp: %s", strerror(errno));
	mr_send = reg(&send_buf, (MAX_COUNT + 1) * MSG_SIZE, 0);
	mr_recv = reg(&recv_buf, (MAX_COUNT + 1) * MSG_SIZE,
		      IBV_ACCESS_LOCAL_WRITE);
	mr_write_src = reg(&write_src, WRITE_SIZE, 0);
	mr_write_dst = reg(&write_dst, WRITE_SIZE,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	for (i = 0; i < WRITE_SIZE; i++)
		write_src[i] = (char)(i * 7 + o.name[0]);
	for (i = 0; i <= o.count; i++)
		post_recv(i);

	mine = (struct pdata){ .magic = MAGIC, .rkey = mr_write_dst->rkey,
			       .addr = (uintptr_t)write_dst };
	snprintf(mine.name, sizeof(mine.name), "%s", o.name);
	cp.private_data = &mine;
	cp.private_data_len = sizeof(mine);

	passive0 = peer_counter(o.dev, "turned_passive");
	active0 = peer_counter(o.dev, "stayed_active");
	held0 = peer_counter(o.dev, "held");
	matched0 = peer_counter(o.dev, "matched");
	claimed0 = peer_counter(o.dev, "claimed");

	if (o.sync_dir && o.peer_name)
		o.start_ms = rendezvous();
	if (o.start_ms) {
		/*
		 * Sleep to 30 ms before the agreed moment, then spin: a timer
		 * tick is 10 ms here, and both REQs must leave within one REQ
		 * transit time of each other to collide.
		 */
		double at = o.start_ms + o.delay_ms;

		if (at < now_ms())
			printf("%s: setup ended %.0f ms after the start time\n",
			       o.name, now_ms() - at);
		peer_sleep_until(at, 1);
	}
	if (o.wait_held) {
		/* the late end: connect once the early end's REQ is held */
		double until = now_ms() + o.timeout_ms, since = now_ms();

		while (peer_counter(o.dev, "held") <= held0) {
			if (now_ms() > until)
				fail("no REQ held in %d ms", o.timeout_ms);
			usleep(1000);
		}
		printf("%s: a REQ was held %.0f ms after the start\n", o.name,
		       now_ms() - since);
	}
	t0 = now_ms();
	printf("%s: set up in %.0f ms\n", o.name, t0 - t_setup);
	t_connect = t0;
	if (rdma_connect(id, &cp))
		fail("rdma_connect: %s", strerror(errno));
	ev = wait_event(RDMA_CM_EVENT_ESTABLISHED);
	t_est = now_ms();
	if (!ev->param.conn.private_data ||
	    ev->param.conn.private_data_len < sizeof(peer))
		fail("no private data with ESTABLISHED");
	memcpy(&peer, ev->param.conn.private_data, sizeof(peer));
	rdma_ack_cm_event(ev);
	if (peer.magic != MAGIC)
		fail("peer private data: bad magic %#x", peer.magic);
	if (o.peer)
		expect_errno(rdma_set_option(id, RDMA_OPTION_ID,
					     RDMA_OPTION_ID_PEER_TO_PEER,
					     &one, sizeof(one)),
			     EISCONN, "once connected");
	peer.name[sizeof(peer.name) - 1] = 0;
	if (o.peer_name && strcmp(peer.name, o.peer_name))
		fail("connected to %s, expected %s", peer.name, o.peer_name);

	if (!o.peer)
		role = "client/server";
	else if (o.shared_host)
		role = "shared-host";	/* the counters count both ends */
	else if (peer_counter(o.dev, "turned_passive") > passive0)
		role = "passive";
	else
		role = "active";	/* answered by the peer's REP */
	printf("%s: role=%s peer=%s connect_ms=%.1f", o.name, role, peer.name,
	       t_est - t0);
	printf(" collisions=%ld (stayed_active=%ld) held=%ld claimed=%ld\n",
	       peer_counter(o.dev, "matched") - matched0,
	       peer_counter(o.dev, "stayed_active") - active0, peer_counter(o.dev, "held") - held0,
	       peer_counter(o.dev, "claimed") - claimed0);

	/* count SENDs, one RDMA WRITE, then a SEND that says we are done */
	for (i = 0; i < o.count; i++) {
		snprintf(text, sizeof(text), "%s #%d", o.name, i);
		post_send(i, text);
	}
	post_write(&peer);
	snprintf(text, sizeof(text), "%s done", o.name);
	post_send(o.count, text);
	poll_cq(o.count + 2, o.count + 1, recv_ids);

	for (i = 0; i <= o.count; i++) {
		const char *got = recv_buf + recv_ids[i] * MSG_SIZE;

		if (i < o.count)
			snprintf(text, sizeof(text), "%s #%d", peer.name, i);
		else
			snprintf(text, sizeof(text), "%s done", peer.name);
		if (strcmp(got, text))
			fail("message %d: got '%.*s', want '%s'", i, MSG_SIZE,
			     got, text);
		seen_done |= i == o.count;
	}
	for (i = 0; i < WRITE_SIZE; i++)
		if (write_dst[i] != (char)(i * 7 + peer.name[0]))
			fail("RDMA WRITE data differs at byte %d", i);
	printf("%s: %d messages each way and a %d-byte RDMA WRITE verified%s usable_ms=%.1f\n",
	       o.name, o.count, WRITE_SIZE, seen_done ? "" : " (no done)",
	       now_ms() - t_est);

	rdma_disconnect(id);
	ev = wait_event(RDMA_CM_EVENT_DISCONNECTED);
	rdma_ack_cm_event(ev);
	rdma_destroy_qp(id);
	ibv_dereg_mr(mr_send);
	ibv_dereg_mr(mr_recv);
	ibv_dereg_mr(mr_write_src);
	ibv_dereg_mr(mr_write_dst);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
	printf("%s: OK\n", o.name);
	return 0;
}
