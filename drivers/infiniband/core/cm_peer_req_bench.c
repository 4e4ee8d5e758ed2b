// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Suite cm_peer_req_bench (benchmark kernels only): what an inbound REQ
 * costs the CM on its whole path (MAD receive, work queue,
 * cm_req_handler()), client/server against peer with one and with many
 * peer ids waiting (25k: each holds its REQ's MAD and address handle, and
 * rxe has 32k AHs a device) or REQs held (100k).  The fuzz suite's MAD
 * agent sends the REQs to
 * our own port; a run is timed from its first send until the CM counted
 * its last REQ.  The same REQs dropped on receipt by a fault rule time
 * the sender and the device alone, which is subtracted.
 *
 *  - cs: to a listener whose handler refuses (the CM sends a REJ);
 *  - peer_match: each matches one of n waiting ids (their own REQs were
 *    dropped) and loses the arbitration (CA GUID 1): the CM discards it;
 *  - peer_hold: matches no waiting id and is held (nothing is sent), with
 *    n REQs held already;
 *  - cs_loaded: client/server again, beside both peer populations.
 *
 * Lines "bench: req_<case> n=<n> <ns per REQ>" and "bench: ratio_<case>
 * n=<n> <the CM's share against cs's>", medians (peer_bench_case()).
 */
#include "cm_peer_fault.h"
#include "cm_peer_kunit_helpers.h"

#define PEER_BENCH_SID_CS	(PEER_SID + 0x20000)
#define PEER_BENCH_SID_PEER	(PEER_SID + 0x20001)
#define PEER_BENCH_SID_HOLD	(PEER_SID + 0x20002)
#define PEER_BENCH_MATCH		36
#define PEER_BENCH_WAIT		25000
#define PEER_BENCH_HELD_N	100000
#define PEER_BENCH_REQS		10000
#define PEER_BENCH_REPS		5

enum peer_bench_kind { PEER_BENCH_DROP, PEER_BENCH_CS, PEER_BENCH_MATCHED,
		      PEER_BENCH_HELD };

struct peer_bench {
	struct kunit *test;
	struct peer_fuzz *f;
	struct ib_cm_id *cs, *hold, **ids;
	unsigned int nids;
	u32 seq;		/* comm ID and QPN of the next REQ */
	u32 next_blob;		/* first blob no REQ has carried */
	atomic_t refused;
	atomic_t turned;	/* waiting ids that got a REQ (passive) */
};

static int peer_bench_handler(struct ib_cm_id *cm_id,
			      const struct ib_cm_event *ev)
{
	struct peer_bench *b = cm_id->context;

	if (ev->event != IB_CM_REQ_RECEIVED)
		return 0;
	/* not expected: b->ids owns a waiting id, keep it and count it */
	if (ev->param.req_rcvd.listen_id == cm_id) {
		atomic_inc(&b->turned);
		return 0;
	}
	atomic_inc(&b->refused);
	return -ECONNREFUSED;	/* the CM rejects and destroys cm_id */
}

/* For a stall: the waiting ids no longer in REQ-Sent, and the first one. */
static void peer_bench_strays(struct peer_bench *b)
{
	unsigned int i, n = 0, first = 0;

	for (i = 0; i < b->nids; i++) {
		if (READ_ONCE(b->ids[i]->state) == IB_CM_REQ_SENT)
			continue;
		if (!n++)
			first = i;
	}
	kunit_info(b->test, "bench: %u of %u waiting ids left REQ-Sent (first: %u, state %d), %d turned passive\n",
		   n, b->nids, first, n ? READ_ONCE(b->ids[first]->state) : 0,
		   atomic_read(&b->turned));
}

/* Match blob @i: a cma_hdr-like remote address and port. */
static void peer_bench_blob(u8 *blob, u32 i)
{
	memset(blob, 0, PEER_BENCH_MATCH);
	blob[1] = 0x40;
	put_unaligned_be16(7000 + i % 1000, &blob[2]);
	put_unaligned_be32(i, &blob[16]);
}

/* Destroy the waiting ids and the holder (it rejects what it holds). */
static void peer_bench_unpopulate(struct peer_bench *b)
{
	while (b->nids)
		ib_destroy_cm_id(b->ids[--b->nids]);
	if (b->hold)
		ib_destroy_cm_id(b->hold);
	b->hold = NULL;
}

static void peer_bench_release(void *data)
{
	struct peer_bench *b = data;

	cm_peer_fault_clear();
	peer_bench_unpopulate(b);
	kvfree(b->ids);
	if (b->cs)
		ib_destroy_cm_id(b->cs);
}

/* How many REQs of a kind the CM got through so far. */
static unsigned long peer_bench_done(struct peer_bench *b,
				     enum peer_bench_kind kind)
{
	switch (kind) {
	case PEER_BENCH_DROP:
		return cm_peer_fault_hits();
	case PEER_BENCH_CS:
		return atomic_read(&b->refused);
	case PEER_BENCH_MATCHED:
		return peer_counter(b->test, "cm_peer/stayed_active");
	default:
		return peer_counter(b->test, "cm_peer/held");
	}
}

/*
 * Send @m REQs for @sid, carrying blob first + k % mod (none if !mod),
 * and wait until the CM got through them; returns the ns it took, or 0 if
 * some never came (rxe loses a MAD when the GSI receive queue overflows):
 * no progress for PEER_BENCH_STALL.
 */
#define PEER_BENCH_STALL	(5 * HZ)

static u64 peer_bench_send(struct peer_bench *b, enum peer_bench_kind kind,
			   u64 sid, u32 m, u32 first, u32 mod)
{
	unsigned long base = peer_bench_done(b, kind), last = base, done;
	unsigned long stall;
	struct cm_req_msg req;
	u64 t0 = ktime_get_ns();
	u32 k;

	for (k = 0; k < m; k++) {
		peer_fuzz_base_req(b->f, &req, sid);
		/* from our port, a CA GUID below ours: we stay active */
		*IBA_GET_MEM_PTR(CM_REQ_PRIMARY_LOCAL_PORT_GID, &req) =
			b->f->end->sgid_attr->gid;
		IBA_SET(CM_REQ_LOCAL_CA_GUID, &req, 1);
		/* distinct, so that no REQ is taken for a stale one */
		b->seq++;
		IBA_SET(CM_REQ_LOCAL_COMM_ID, &req, b->seq);
		IBA_SET(CM_REQ_LOCAL_QPN, &req, b->seq & 0xffffff);
		if (mod)
			peer_bench_blob(IBA_GET_MEM_PTR(CM_REQ_PRIVATE_DATA,
							&req), first + k % mod);
		KUNIT_ASSERT_EQ(b->test, 0, peer_fuzz_send(b->f, &req));
	}
	stall = jiffies + PEER_BENCH_STALL;
	while ((done = peer_bench_done(b, kind)) - base < m) {
		if (done != last) {
			last = done;
			stall = jiffies + PEER_BENCH_STALL;
		} else if (time_after(jiffies, stall)) {
			kunit_info(b->test, "bench: the CM got %lu of %u REQs (kind %d, held %lu, stayed active %lu, fault hits %u)\n",
				   done - base, m, kind,
				   peer_counter(b->test, "cm_peer/held"),
				   peer_counter(b->test, "cm_peer/stayed_active"),
				   cm_peer_fault_hits());
			peer_bench_strays(b);
			return 0;
		}
		usleep_range(200, 400);
	}
	return ktime_get_ns() - t0;
}

/*
 * One run of PEER_BENCH_REQS REQs of @kind, in ns per REQ; a run that lost
 * REQs is not timed, it is done again (up to PEER_BENCH_TRIES times).
 */
#define PEER_BENCH_TRIES	3

static u64 peer_bench_run(struct peer_bench *b, enum peer_bench_kind kind,
			  u64 sid, u32 n)
{
	u32 first = 0, mod = 0;
	unsigned int try;
	u64 ns;

	for (try = 0; try < PEER_BENCH_TRIES; try++) {
		if (kind == PEER_BENCH_DROP)
			KUNIT_ASSERT_EQ(b->test, 0,
					cm_peer_fault_add(CM_PEER_FAULT_DROP,
							  CM_REQ_ATTR_ID, 0,
							  PEER_BENCH_REQS, 0));
		if (kind == PEER_BENCH_MATCHED) {
			mod = n;	/* the blobs of the waiting ids */
		} else if (kind == PEER_BENCH_HELD) {
			first = b->next_blob;	/* blobs nobody waits for */
			mod = U32_MAX;
			b->next_blob += PEER_BENCH_REQS;
		}
		ns = peer_bench_send(b, kind, sid, PEER_BENCH_REQS, first,
				     mod);
		cm_peer_fault_clear();
		if (ns)
			return div_u64(ns, PEER_BENCH_REQS);
		kunit_info(b->test, "bench: REQs lost, run again\n");
	}
	KUNIT_FAIL_AND_ABORT(b->test, "REQs lost in %u runs in a row",
			     PEER_BENCH_TRIES);
	return 0;
}

static u64 peer_bench_median(u64 *t)
{
	unsigned int i, j;

	for (i = 1; i < PEER_BENCH_REPS; i++)
		for (j = i; j && t[j - 1] > t[j]; j--)
			swap(t[j - 1], t[j]);
	return t[PEER_BENCH_REPS / 2];
}

/*
 * PEER_BENCH_REPS rounds of (drop, cs, @kind) back to back, so that each
 * ratio compares runs under the same conditions (UML's speed drifts):
 * reports the medians of the case's ns per REQ and of its CM share
 * against cs's, (case - drop) / (cs - drop), in hundredths.
 */
static void peer_bench_case(struct peer_bench *b, const char *name, u32 n,
			    enum peer_bench_kind kind, u64 sid, u32 wait)
{
	u64 t[PEER_BENCH_REPS], ratio[PEER_BENCH_REPS], drop, cs;
	unsigned int r;

	for (r = 0; r < PEER_BENCH_REPS; r++) {
		drop = peer_bench_run(b, PEER_BENCH_DROP, PEER_BENCH_SID_CS, 0);
		cs = peer_bench_run(b, PEER_BENCH_CS, PEER_BENCH_SID_CS, 0);
		t[r] = peer_bench_run(b, kind, sid, wait);
		KUNIT_ASSERT_GT(b->test, cs, drop);
		ratio[r] = div64_u64(100 * (t[r] > drop ? t[r] - drop : 0),
				     cs - drop);
	}
	r = peer_bench_median(ratio);
	kunit_info(b->test, "bench: req_%s n=%u %llu\n", name, n,
		   peer_bench_median(t));
	kunit_info(b->test, "bench: ratio_%s n=%u %u.%02u\n", name, n,
		   r / 100, r % 100);
}

/* @n ids waiting for REQs on SID_PEER, @held REQs held on SID_HOLD. */
static void peer_bench_populate(struct peer_bench *b, u32 n, u32 held)
{
	struct ib_cm_req_param param = peer_req_param(b->f->end,
						      PEER_BENCH_SID_PEER);
	unsigned long hits = cm_peer_fault_hits(), deadline;
	u8 blob[PEER_BENCH_MATCH];
	struct ib_cm_id *id;

	KUNIT_ASSERT_EQ(b->test, 0,
			cm_peer_fault_add(CM_PEER_FAULT_DROP, CM_REQ_ATTR_ID, 0,
					  n, 0));
	param.remote_cm_response_timeout = 31;	/* no resend while timed */
	param.local_cm_response_timeout = 31;
	while (b->nids < n) {
		id = ib_create_cm_id(b->f->end->dev, peer_bench_handler, b);
		KUNIT_ASSERT_FALSE(b->test, IS_ERR(id));
		b->ids[b->nids++] = id;
		KUNIT_ASSERT_EQ(b->test, 0,
				ib_cm_peer_bind(id, cpu_to_be64(PEER_BENCH_SID_PEER),
						PEER_BENCH_MATCH));
		param.qp_num = 0x800000 | b->nids;
		peer_bench_blob(blob, b->nids - 1);
		KUNIT_ASSERT_EQ_MSG(b->test, 0,
				    ib_send_cm_peer_req(id, &param, blob),
				    "waiting id %u", b->nids);
		if (!(b->nids % 64))
			cond_resched();
	}
	deadline = jiffies + 120 * HZ;
	while (cm_peer_fault_hits() - hits < n &&
	       time_before(jiffies, deadline))
		msleep(20);
	KUNIT_ASSERT_EQ(b->test, (unsigned long)n, cm_peer_fault_hits() - hits);
	cm_peer_fault_clear();

	b->hold = ib_create_cm_id(b->f->end->dev, peer_bench_handler, b);
	KUNIT_ASSERT_FALSE(b->test, IS_ERR(b->hold));
	KUNIT_ASSERT_EQ(b->test, 0,
			ib_cm_peer_bind(b->hold, cpu_to_be64(PEER_BENCH_SID_HOLD),
					PEER_BENCH_MATCH));
	KUNIT_ASSERT_NE_MSG(b->test, 0ULL,
			    peer_bench_send(b, PEER_BENCH_HELD,
					    PEER_BENCH_SID_HOLD, held,
					    b->next_blob, U32_MAX),
			    "held REQs lost");
	b->next_blob += held;
}

static void peer_bench_req(struct kunit *test)
{
	static const u32 sizes[][2] = { { 1, 1 },
					{ PEER_BENCH_WAIT, PEER_BENCH_HELD_N } };
	struct peer_bench *b = kunit_kzalloc(test, sizeof(*b), GFP_KERNEL);
	unsigned int s;

	KUNIT_ASSERT_NOT_NULL(test, b);
	b->test = test;
	b->f = peer_fuzz_create(test);
	b->ids = kvcalloc(PEER_BENCH_WAIT, sizeof(*b->ids), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, b->ids);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, peer_bench_release, b));
	peer_set_limits(test, b->f->end->dev,
			PEER_BENCH_HELD_N + (PEER_BENCH_REPS + PEER_BENCH_TRIES) *
					    PEER_BENCH_REQS,
			3600 * 1000);

	b->cs = ib_create_cm_id(b->f->end->dev, peer_bench_handler, b);
	KUNIT_ASSERT_FALSE(test, IS_ERR(b->cs));
	KUNIT_ASSERT_EQ(test, 0,
			ib_cm_listen(b->cs, cpu_to_be64(PEER_BENCH_SID_CS)));

	/* warm up (slabs, MAD buffers, caches), then time */
	peer_bench_run(b, PEER_BENCH_CS, PEER_BENCH_SID_CS, 0);
	peer_bench_case(b, "drop", 0, PEER_BENCH_DROP, PEER_BENCH_SID_CS, 0);
	peer_bench_case(b, "cs", 0, PEER_BENCH_CS, PEER_BENCH_SID_CS, 0);
	for (s = 0; s < ARRAY_SIZE(sizes); s++) {
		u32 n = sizes[s][0], held = sizes[s][1];

		peer_bench_populate(b, n, held);
		peer_bench_case(b, "peer_match", n, PEER_BENCH_MATCHED,
				PEER_BENCH_SID_PEER, n);
		peer_bench_case(b, "peer_hold", held, PEER_BENCH_HELD,
				PEER_BENCH_SID_HOLD, 0);
		peer_bench_case(b, "cs_loaded", n + held, PEER_BENCH_CS,
				PEER_BENCH_SID_CS, 0);
		peer_bench_unpopulate(b);
	}
	/* every REQ sent here loses the arbitration */
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&b->turned));
}

static struct kunit_case cm_peer_req_bench_cases[] = {
	KUNIT_CASE_SLOW(peer_bench_req),
	{}
};

static struct kunit_suite cm_peer_req_bench_suite = {
	.name = "cm_peer_req_bench",
	.suite_init = cm_peer_ib_suite_init,
	.test_cases = cm_peer_req_bench_cases,
};

kunit_test_suite(cm_peer_req_bench_suite);

MODULE_DESCRIPTION("KUnit suite cm_peer_req_bench: the IB CM's cost per inbound REQ");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
MODULE_LICENSE("Dual BSD/GPL");
