// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * rds_storm: many RDS/IB connections between two hosts at once, both ends
 * sending first, and reconnects of all of them at once.
 *
 * RDS has one connection per (local address, remote address, TOS); this
 * program opens one AF_RDS socket per TOS value 0..conns-1, each bound to
 * port + tos, and sends to the other host's socket of the same TOS.  Both
 * hosts run it with the same arguments (addresses swapped).
 *
 * In round 0 every socket sends --msgs messages at --start-ms (epoch ms;
 * the hosts' clocks in step): both ends of every connection connect at
 * once.  Each later round starts when both ends finished the one before
 * (files in --sync-dir): both run the --down command at once (it takes
 * the RDMA device away: every connection drops), queue the round's
 * messages, meet again and run the --up command at once (the device is
 * back): both ends of every connection reconnect with traffic queued.
 * A round ends when all its messages arrived, or --timeout-ms after its
 * start.
 *
 * Printed per round: the time to each connection's first delivery here
 * ("first <round> <tos> <ms>"), from the round's start in round 0 and from
 * the end of the --up command in the others, with its p50, p99 and max;
 * the messages received, lost (not received by the end of the round),
 * duplicated or out of order, and misdelivered (wrong sender, port or
 * TOS).  The RDS counters (RDS_INFO_COUNTERS) as "counter <name> <before>
 * <after>" the run.  Exit 0 when every message of every round arrived
 * once and in order, 1 otherwise.
 *
 * Before exiting each end waits for the other (closing an RDS socket drops
 * its messages not yet acknowledged).
 */
#include <errno.h>
#include <getopt.h>
#include <linux/rds.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include "../peer_common.h"

#ifndef AF_RDS
#define AF_RDS 21
#endif
#ifndef SOL_RDS
#define SOL_RDS 276
#endif

#define MAX_CONNS	256
#define MAX_ROUNDS	16
#define MSG_MAGIC	0x52445353u	/* "RDSS" */
/* how long one end waits for the other: a round, or a --down command */
#define SYNC_WAIT_MS	(opt.timeout_ms + 300000)

struct msg {
	__u32 magic;
	__u32 tos;
	__u32 round;
	__u32 seq;
};

struct conn {
	int fd;
	int sent[MAX_ROUNDS];		/* messages of the round sent */
	int next[MAX_ROUNDS];		/* next seq expected */
	double first[MAX_ROUNDS];	/* first delivery, ms after start */
};

static struct {
	const char *local, *remote, *name, *peer_name, *sync_dir;
	const char *down, *up;
	int port, conns, msgs, rounds, timeout_ms;
	double start_ms;
} opt = {
	.port = 18700, .conns = 16, .msgs = 8, .rounds = 1,
	.timeout_ms = 60000,
};

static struct conn conns[MAX_CONNS];
static long dup_msgs, misdelivered, send_errors, cmd_errors;

static void sleep_until(double t)
{
	double d = t - now_ms();

	if (d > 0)
		usleep(d * 1000);
}

static int open_conn(int tos)
{
	struct sockaddr_in sin;
	int trans = RDS_TRANS_IB, fd;
	rds_tos_t t = tos;

	fd = socket(AF_RDS, SOCK_SEQPACKET, 0);
	if (fd < 0) {
		perror("socket(AF_RDS)");
		return -1;
	}
	if (setsockopt(fd, SOL_RDS, SO_RDS_TRANSPORT, &trans, sizeof(trans))) {
		perror("SO_RDS_TRANSPORT");
		return -1;
	}
	if (t && ioctl(fd, SIOCRDSSETTOS, &t)) {
		perror("SIOCRDSSETTOS");
		return -1;
	}
	peer_sockaddr(opt.local, opt.port + tos, &sin);
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin))) {
		fprintf(stderr, "bind %s:%d: %s\n", opt.local, opt.port + tos,
			strerror(errno));
		return -1;
	}
	conns[tos].fd = fd;
	return 0;
}

/* Send what round @r has left on connection @tos; 1 when all is sent. */
static int send_round(int tos, int r)
{
	struct conn *c = &conns[tos];
	struct sockaddr_in to;
	struct msg m;

	peer_sockaddr(opt.remote, opt.port + tos, &to);
	while (c->sent[r] < opt.msgs) {
		m = (struct msg){ MSG_MAGIC, tos, r, c->sent[r] };
		if (sendto(c->fd, &m, sizeof(m), MSG_DONTWAIT,
			   (struct sockaddr *)&to, sizeof(to)) < 0) {
			if (errno == EAGAIN || errno == ENOBUFS ||
			    errno == ENOMEM)
				return 0;	/* send buffer full: later */
			if (send_errors++ < 8)
				fprintf(stderr, "sendto tos %d: %s\n", tos,
					strerror(errno));
			return 0;
		}
		c->sent[r]++;
	}
	return 1;
}

static void recv_one(int tos, const double *start)
{
	struct conn *c = &conns[tos];
	struct sockaddr_in from, want;
	socklen_t len = sizeof(from);
	struct msg m;
	ssize_t n;

	n = recvfrom(c->fd, &m, sizeof(m), MSG_DONTWAIT,
		     (struct sockaddr *)&from, &len);
	if (n < 0)
		return;
	peer_sockaddr(opt.remote, opt.port + tos, &want);
	if (n != sizeof(m) || m.magic != MSG_MAGIC || m.tos != (__u32)tos ||
	    m.round >= (__u32)opt.rounds ||
	    from.sin_addr.s_addr != want.sin_addr.s_addr ||
	    from.sin_port != want.sin_port) {
		misdelivered++;
		return;
	}
	if (m.seq != (__u32)c->next[m.round]) {
		dup_msgs++;	/* duplicate or out of order */
		return;
	}
	if (!c->next[m.round]++)
		c->first[m.round] = now_ms() - start[m.round];
}

static int round_received(int r)
{
	int i;

	for (i = 0; i < opt.conns; i++)
		if (conns[i].next[r] < opt.msgs)
			return 0;
	return 1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void report_round(int r)
{
	double t[MAX_CONNS];
	long got = 0;
	int i, n = 0;

	for (i = 0; i < opt.conns; i++) {
		got += conns[i].next[r];
		if (!conns[i].next[r])
			continue;
		t[n++] = conns[i].first[r];
		printf("first %d %d %.1f\n", r, i, conns[i].first[r]);
	}
	qsort(t, n, sizeof(t[0]), cmp_double);
	printf("round %d delivered_conns %d/%d received %ld lost %ld",
	       r, n, opt.conns, got, (long)opt.conns * opt.msgs - got);
	if (n)
		printf(" first_p50_ms %.1f first_p99_ms %.1f first_max_ms %.1f",
		       t[(n - 1) / 2], t[(n * 99 + 99) / 100 - 1], t[n - 1]);
	printf("\n");
}

/* RDS_INFO_COUNTERS into a buffer (malloc'd); its length, 0 on error */
static int get_counters(char **bufp, int *each)
{
	socklen_t len = 0;
	char *buf = NULL, *nbuf;
	int fd = conns[0].fd;

	for (;;) {
		*each = getsockopt(fd, SOL_RDS, RDS_INFO_COUNTERS, buf, &len);
		if (*each >= 0 || errno != ENOSPC)
			break;
		nbuf = realloc(buf, len);
		if (!nbuf)
			break;
		buf = nbuf;
	}
	if (*each <= 0 || !len) {
		perror("RDS_INFO_COUNTERS");
		free(buf);
		return 0;
	}
	*bufp = buf;
	return len;
}

static void print_counters(const char *before, int before_len)
{
	const struct rds_info_counter *ctr, *c0;
	char *buf = NULL;
	int len, each, i;

	len = get_counters(&buf, &each);
	if (!len)
		return;
	for (i = 0; i < len / each; i++) {
		ctr = (const struct rds_info_counter *)(buf + i * each);
		c0 = (const struct rds_info_counter *)(before + i * each);
		printf("counter %.*s %llu %llu\n", (int)sizeof(ctr->name),
		       ctr->name, (i + 1) * each <= before_len ?
		       (unsigned long long)c0->value : 0ULL,
		       (unsigned long long)ctr->value);
	}
	free(buf);
}

/* Run @cmd (a failure fails the run); the time it ended. */
static double run_cmd(const char *what, const char *cmd)
{
	double t = now_ms();
	int rc = system(cmd);

	printf("%s rc %d in %.0f ms\n", what, rc, now_ms() - t);
	if (rc)
		cmd_errors++;
	return now_ms();
}

/* Take what the sockets have (for up to @ms). */
static void take_msgs(const double *start, int ms)
{
	struct pollfd pfd[MAX_CONNS];
	int i;

	for (i = 0; i < opt.conns; i++)
		pfd[i] = (struct pollfd){ conns[i].fd, POLLIN, 0 };
	if (poll(pfd, opt.conns, ms) <= 0)
		return;
	for (i = 0; i < opt.conns; i++)
		if (pfd[i].revents & POLLIN)
			recv_one(i, start);
}

/*
 * Meet the other end: <sync-dir>/<what>.<name>, then wait for its file
 * (at most @ms, taking messages meanwhile).  Returns a time (our clock)
 * both ends agree on, @margin_ms after the later file's mtime (the
 * host's clock, from which each end knows its offset); 0 on timeout.
 */
static double sync_point(const char *what, const double *start, int ms,
			 int margin_ms)
{
	char mine[512], theirs[512], tmp[520];
	double end = now_ms() + ms, off, err, t;
	struct stat a, b;
	FILE *f;

	snprintf(mine, sizeof(mine), "%s/%s.%s", opt.sync_dir, what, opt.name);
	snprintf(theirs, sizeof(theirs), "%s/%s.%s", opt.sync_dir, what,
		 opt.peer_name);
	/* our clock's offset from the host's, on a file of our own */
	snprintf(tmp, sizeof(tmp), "%s.tmp", mine);
	if (peer_host_clock_offset_best(tmp, 3, &off, &err)) {
		perror(tmp);
		return 0;
	}
	printf("sync %s: clock offset %.1f +- %.1f ms\n", what, off, err);
	/* then our file, whole at once: its mtime is the one we compare */
	f = fopen(tmp, "w");
	if (!f || fputc('x', f) == EOF || fclose(f) || rename(tmp, mine)) {
		perror(mine);
		return 0;
	}
	while (stat(theirs, &b)) {
		if (now_ms() > end)
			return 0;
		take_msgs(start, 20);
	}
	if (stat(mine, &a))
		return 0;
	t = a.st_mtim.tv_sec * 1e3 + a.st_mtim.tv_nsec / 1e6;
	if (b.st_mtim.tv_sec * 1e3 + b.st_mtim.tv_nsec / 1e6 > t)
		t = b.st_mtim.tv_sec * 1e3 + b.st_mtim.tv_nsec / 1e6;
	return t + margin_ms + off;
}

/* Send and take round @r's messages until all arrived or @end. */
static void run_round(int r, const double *start, double end)
{
	struct pollfd pfd[MAX_CONNS];
	int i, all_sent;

	for (;;) {
		all_sent = 1;
		for (i = 0; i < opt.conns; i++)
			all_sent &= send_round(i, r);
		if ((all_sent && round_received(r)) || now_ms() > end)
			return;
		for (i = 0; i < opt.conns; i++)
			pfd[i] = (struct pollfd){ conns[i].fd,
				POLLIN | (all_sent ? 0 : POLLOUT), 0 };
		if (poll(pfd, opt.conns, 10) <= 0)
			continue;
		for (i = 0; i < opt.conns; i++)
			if (pfd[i].revents & POLLIN)
				recv_one(i, start);
	}
}

static int run(void)
{
	double start[MAX_ROUNDS] = { 0 };
	char what[32];
	int r, i;

	for (r = 0; r < opt.rounds; r++) {
		if (r) {
			/* both take the device away, queue, bring it back */
			snprintf(what, sizeof(what), "down%d", r);
			start[r] = sync_point(what, start, SYNC_WAIT_MS, 500);
			if (!start[r])
				break;
			sleep_until(start[r]);
			run_cmd("down", opt.down);
			for (i = 0; i < opt.conns; i++)
				send_round(i, r);
			snprintf(what, sizeof(what), "up%d", r);
			start[r] = sync_point(what, start, SYNC_WAIT_MS, 500);
			if (!start[r])
				break;
			sleep_until(start[r]);
			/* reconnects are timed from here */
			start[r] = run_cmd("up", opt.up);
		} else {
			start[r] = opt.start_ms;
			sleep_until(start[r]);
		}
		run_round(r, start, start[r] + opt.timeout_ms);
		report_round(r);
		fflush(stdout);
	}
	/* closing a socket drops what it has not had acknowledged */
	if (opt.sync_dir)
		sync_point("done", start, SYNC_WAIT_MS, 0);
	for (r = 0; r < opt.rounds; r++)
		if (!round_received(r))
			return 1;
	return dup_msgs || misdelivered || cmd_errors;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "local", 1, 0, 'l' }, { "remote", 1, 0, 'r' },
		{ "name", 1, 0, 'n' }, { "peer-name", 1, 0, 'N' },
		{ "port", 1, 0, 'p' }, { "conns", 1, 0, 'c' },
		{ "msgs", 1, 0, 'm' }, { "rounds", 1, 0, 'R' },
		{ "start-ms", 1, 0, 's' }, { "timeout-ms", 1, 0, 't' },
		{ "down", 1, 0, 'd' }, { "up", 1, 0, 'u' },
		{ "sync-dir", 1, 0, 'S' }, { 0 }
	};
	char *before = NULL;
	int c, i, rc, before_len, each;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'l':
			opt.local = optarg;
			break;
		case 'r':
			opt.remote = optarg;
			break;
		case 'n':
			opt.name = optarg;
			break;
		case 'N':
			opt.peer_name = optarg;
			break;
		case 'p':
			opt.port = atoi(optarg);
			break;
		case 'c':
			opt.conns = atoi(optarg);
			break;
		case 'm':
			opt.msgs = atoi(optarg);
			break;
		case 'R':
			opt.rounds = atoi(optarg);
			break;
		case 's':
			opt.start_ms = atof(optarg);
			break;
		case 't':
			opt.timeout_ms = atoi(optarg);
			break;
		case 'd':
			opt.down = optarg;
			break;
		case 'u':
			opt.up = optarg;
			break;
		case 'S':
			opt.sync_dir = optarg;
			break;
		default: return 2;
		}
	}
	if (!opt.local || !opt.remote || !opt.name || !opt.peer_name ||
	    opt.conns < 1 || opt.conns > MAX_CONNS || opt.msgs < 1 ||
	    opt.rounds < 1 || opt.rounds > MAX_ROUNDS ||
	    (opt.rounds > 1 && (!opt.down || !opt.up || !opt.sync_dir))) {
		fprintf(stderr,
			"usage: %s --local IP --remote IP --name N --peer-name N\n"
			"       [--port P] [--conns C] [--msgs M] [--start-ms T]\n"
			"       [--timeout-ms MS] [--rounds R --down CMD --up CMD\n"
			"       --sync-dir DIR]\n", argv[0]);
		return 2;
	}
	if (!opt.start_ms)
		opt.start_ms = now_ms() + 1000;
	for (i = 0; i < opt.conns; i++)
		if (open_conn(i))
			return 2;
	printf("conns %d msgs %d rounds %d\n", opt.conns, opt.msgs, opt.rounds);
	before_len = get_counters(&before, &each);
	rc = run();
	printf("dup_or_reordered %ld misdelivered %ld send_errors %ld cmd_errors %ld\n",
	       dup_msgs, misdelivered, send_errors, cmd_errors);
	print_counters(before, before_len);
	free(before);
	return rc;
}
