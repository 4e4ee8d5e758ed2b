/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * What the librdmacm test programs (tests/e2e/peer_ping.c, peer_ranks.c,
 * tests/bench/peer_bench.c) share: the clock, IPv4 addresses, the
 * cm_peer counters of a device and the host clock seen from a guest.
 */
#ifndef PEER_COMMON_H
#define PEER_COMMON_H

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef RDMA_OPTION_ID_PEER_TO_PEER
#define RDMA_OPTION_ID_PEER_TO_PEER 4	/* include/uapi/rdma/rdma_user_cm.h */
#endif

static inline double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* @ip (dotted quad) and @port in @sin; -1 when @ip is no IPv4 address. */
static inline int peer_sockaddr(const char *ip, int port,
				struct sockaddr_in *sin)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	return inet_pton(AF_INET, ip, &sin->sin_addr) == 1 ? 0 : -1;
}

/* Counter @name of @dev's port 1, group cm_peer; -1 when unreadable. */
static inline long peer_counter(const char *dev, const char *name)
{
	char path[256];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/1/cm_peer/%s", dev, name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/*
 * Our clock minus the host's, in ms: a file written on a host share (UML
 * hostfs, qemu 9p) gets its mtime from the host's clock.  *@err gets the
 * uncertainty.  Returns -1 with errno set when @path cannot be written.
 */
static inline int peer_host_clock_offset(const char *path, double *offset,
					 double *err)
{
	double before, after, host;
	struct stat st;
	FILE *f;

	before = now_ms();
	f = fopen(path, "w");
	if (!f)
		return -1;
	if (fputc('x', f) == EOF) {
		fclose(f);
		return -1;
	}
	if (fclose(f) || stat(path, &st))
		return -1;
	after = now_ms();
	host = st.st_mtim.tv_sec * 1e3 + st.st_mtim.tv_nsec / 1e6;
	*offset = (before + after) / 2 - host;
	*err = (after - before) / 2;
	return 0;
}

/*
 * peer_host_clock_offset() from @n samples (n >= 1), for millisecond work.
 * A sample bounds the offset from above by (after - mtime), always, and
 * from below by (before - mtime) when the host's timestamps are fine
 * grained; coarse ones (a host tick behind) break the lower bound, which
 * is then dropped.  The bounds of all samples are intersected.
 */
static inline int peer_host_clock_offset_best(const char *path, int n,
					      double *offset, double *err)
{
	double lo = -1e300, hi = 1e300, width = 1e300, off, e;
	int i;

	for (i = 0; i < n; i++) {
		if (peer_host_clock_offset(path, &off, &e))
			return -1;
		/* off + e = after - mtime, off - e = before - mtime */
		if (off + e < hi)
			hi = off + e;
		if (off - e > lo)
			lo = off - e;
		if (e < width)
			width = e;
	}
	if (lo <= hi) {
		*offset = (lo + hi) / 2;
		*err = (hi - lo) / 2;
	} else {
		*offset = hi - width;
		*err = width;
	}
	return 0;
}

/* Sleep until @at (epoch ms); with @spin, spin the last 30 ms (ticks). */
static inline void peer_sleep_until(double at, int spin)
{
	double left = at - now_ms() - (spin ? 30 : 0);

	if (left > 0)
		usleep((useconds_t)(left * 1000));
	while (spin && now_ms() < at)
		;
}

#endif /* PEER_COMMON_H */
