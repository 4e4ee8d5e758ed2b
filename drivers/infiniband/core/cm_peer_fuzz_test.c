// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Suite cm_peer_fuzz: REQ MADs from a MAD agent of our own, sent to the CM
 * of the same port.  A flood of valid peer REQs nobody claims must stay
 * within the rendezvous bound; then seeded random mutations of REQ fields
 * (ServiceID, GIDs, QPN, communication IDs, transport type, timeouts, MTU,
 * alternate path, private data, header fields, random bytes) must not
 * crash, leak or wedge the CM: a collision afterwards still connects.
 */
#include "cm_peer_kunit_helpers.h"

static unsigned int peer_fuzz_cases = 2000;
module_param_named(fuzz_cases, peer_fuzz_cases, uint, 0644);
MODULE_PARM_DESC(fuzz_cases, "REQs the cm_peer_fuzz suite sends (default 2000)");

static unsigned int peer_fuzz_seed = 1;
module_param_named(fuzz_seed, peer_fuzz_seed, uint, 0644);
MODULE_PARM_DESC(fuzz_seed, "PRNG seed of the cm_peer_fuzz suite, 0 for a random one");

#define PEER_FUZZ_SID	0x0000000100f2f300ULL
#define PEER_FUZZ_WINDOW	16	/* MADs in flight */

static u64 peer_fuzz_u64(struct peer_fuzz *f)
{
	return (u64)prandom_u32_state(&f->rnd) << 32 |
	       prandom_u32_state(&f->rnd);
}

/* Mutate one field of @req; returns what it changed, for the log. */
static const char *peer_fuzz_mutate(struct peer_fuzz *f, struct cm_req_msg *req)
{
	struct ib_mad_hdr *hdr = (struct ib_mad_hdr *)req;
	u8 *bytes = (u8 *)req;
	u32 r = prandom_u32_state(&f->rnd);
	static const u64 sids[] = { 0, ~0ULL, PEER_FUZZ_SID + 1,
				    0x0000000100000000ULL, 0x0200000000000000ULL };

	switch (r % 14) {
	case 0:
		IBA_SET(CM_REQ_SERVICE_ID, req,
			r & 0x100 ? sids[(r >> 9) % ARRAY_SIZE(sids)] :
			peer_fuzz_u64(f));
		return "sid";
	case 1:
		get_random_bytes(IBA_GET_MEM_PTR(CM_REQ_PRIMARY_LOCAL_PORT_GID,
						 req), sizeof(union ib_gid));
		return "local gid";
	case 2:
		if (r & 0x100)
			memset(IBA_GET_MEM_PTR(CM_REQ_PRIMARY_REMOTE_PORT_GID, req),
			       0, sizeof(union ib_gid));
		else
			get_random_bytes(IBA_GET_MEM_PTR(CM_REQ_PRIMARY_REMOTE_PORT_GID,
							 req), sizeof(union ib_gid));
		return "remote gid";
	case 3:
		IBA_SET(CM_REQ_LOCAL_QPN, req,
			r & 0x100 ? (r >> 9) % 3 : prandom_u32_state(&f->rnd));
		return "qpn";
	case 4:
		IBA_SET(CM_REQ_LOCAL_COMM_ID, req, r & 0x100 ? 0 : r >> 9);
		return "comm id";
	case 5:
		IBA_SET(CM_REQ_TRANSPORT_SERVICE_TYPE, req, r >> 8);
		IBA_SET(CM_REQ_EXTENDED_TRANSPORT_TYPE, req, r >> 12);
		return "transport";
	case 6:
		IBA_SET(CM_REQ_REMOTE_CM_RESPONSE_TIMEOUT, req, r >> 8);
		IBA_SET(CM_REQ_LOCAL_CM_RESPONSE_TIMEOUT, req, r >> 16);
		IBA_SET(CM_REQ_MAX_CM_RETRIES, req, r >> 24);
		return "timeouts";
	case 7:
		IBA_SET(CM_REQ_PATH_PACKET_PAYLOAD_MTU, req, r >> 8);
		IBA_SET(CM_REQ_PRIMARY_PACKET_RATE, req, r >> 12);
		IBA_SET(CM_REQ_PRIMARY_HOP_LIMIT, req, r >> 20);
		return "mtu/rate/hops";
	case 8:
		/* an alternate path: the CM then resolves two paths */
		IBA_SET(CM_REQ_ALTERNATE_LOCAL_PORT_LID, req, r >> 8);
		get_random_bytes(IBA_GET_MEM_PTR(CM_REQ_ALTERNATE_LOCAL_PORT_GID,
						 req), sizeof(union ib_gid));
		IBA_SET(CM_REQ_ALTERNATE_PACKET_RATE, req, r >> 24);
		return "alternate path";
	case 9:
		IBA_SET(CM_REQ_RESPONDER_RESOURCES, req, r >> 8);
		IBA_SET(CM_REQ_INITIATOR_DEPTH, req, r >> 16);
		IBA_SET(CM_REQ_SRQ, req, r >> 24);
		IBA_SET(CM_REQ_RDC_EXISTS, req, r >> 25);
		return "resources";
	case 10:
		get_random_bytes(IBA_GET_MEM_PTR(CM_REQ_PRIVATE_DATA, req),
				 (r >> 8) % IB_CM_REQ_PRIVATE_DATA_SIZE + 1);
		return "private data";
	case 11:
		hdr->class_version = r >> 8;
		hdr->attr_mod = cpu_to_be32(r);
		return "header";
	case 12:
		hdr->status = cpu_to_be16(r >> 8);
		hdr->method = r & 0x100 ? IB_MGMT_METHOD_GET : hdr->method;
		return "status/method";
	default:
		bytes[sizeof(struct ib_mad_hdr) + (r >> 8) %
		      (sizeof(*req) - sizeof(struct ib_mad_hdr))] ^= r >> 24 | 1;
		return "byte";
	}
}

static void peer_fuzz_drain(struct peer_fuzz *f)
{
	long left = wait_event_timeout(f->wq, !atomic_read(&f->in_flight),
				       10 * HZ);

	KUNIT_EXPECT_GT(f->test, left, 0L);
	msleep(500);	/* let the CM's work queue catch up */
}

static long peer_slab_bytes(void)
{
	return global_node_page_state_pages(NR_SLAB_UNRECLAIMABLE_B) *
	       PAGE_SIZE;
}

/* Wait until the CM has answered @n more REQs than @base (held or not). */
static void peer_fuzz_settle(struct peer_fuzz *f, unsigned long base,
			     unsigned long n)
{
	unsigned long deadline = jiffies + 10 * HZ;

	while (time_before(jiffies, deadline) &&
	       peer_counter(f->test, "cm_peer/held") +
	       peer_counter(f->test, "cm_peer/refused") < base + n)
		msleep(50);
}

/*
 * Wait until the CM has handled every REQ sent so far: its work queue
 * handles MADs one at a time, and thousands of REQs take it many seconds
 * under KASAN, during which any other REQ waits behind them.  Every REQ
 * handled ends held, refused, rejected or counted as a duplicate, so the
 * CM is through once none of those counters moved for a second.
 */
static unsigned long peer_fuzz_progress(struct kunit *test)
{
	return peer_counter(test, "cm_peer/held") +
	       peer_counter(test, "cm_peer/refused") +
	       peer_counter(test, "cm_tx_msgs/rej") +
	       peer_counter(test, "cm_rx_duplicates/req");
}

static void peer_fuzz_sync(struct peer_fuzz *f)
{
	unsigned long deadline = jiffies + 300 * HZ, start = jiffies;
	unsigned long now, last = peer_fuzz_progress(f->test);
	unsigned int still = 0;

	peer_fuzz_drain(f);
	while (still < 4 && time_before(jiffies, deadline)) {
		msleep(250);
		now = peer_fuzz_progress(f->test);
		still = now == last ? still + 1 : 0;
		last = now;
	}
	KUNIT_EXPECT_EQ_MSG(f->test, 4U, still,
			    "the CM did not get through the REQs in time");
	kunit_info(f->test, "the CM got through the REQs %u ms after the last was sent\n",
		   jiffies_to_msecs(jiffies - start));
}

/*
 * Unsolicited peer REQs from distinct remote ports, for a ServiceID whose
 * local peer never connects: at most PEER_TEST_MAX_HELD of them are held,
 * the others are refused, and a second flood adds nothing.
 */
static void peer_fuzz_flood(struct kunit *test)
{
	struct peer_fuzz *f = peer_fuzz_create(test);
	unsigned long max_held, held0, refused0, held1, refused1;
	unsigned long held2, refused2, n;
	struct cm_req_msg req;
	long slab0, slab1, slab2;
	unsigned int i, round;

	max_held = PEER_TEST_MAX_HELD;
	n = 3 * max_held;
	/* wait until what earlier cases left held has expired */
	KUNIT_ASSERT_EQ(test, 0UL, peer_rdv_wait_below(test, 1));
	prandom_seed_state(&f->rnd, 42);
	KUNIT_ASSERT_EQ(test, 0, ib_cm_peer_bind(f->end->cm_id,
						 cpu_to_be64(PEER_FUZZ_SID), 0));

	held0 = peer_counter(test, "cm_peer/held");
	refused0 = peer_counter(test, "cm_peer/refused");
	slab0 = peer_slab_bytes();
	for (round = 0; round < 2; round++) {
		unsigned long base = peer_counter(test, "cm_peer/held") +
				     peer_counter(test, "cm_peer/refused");

		for (i = 0; i < n; i++) {
			peer_fuzz_base_req(f, &req, PEER_FUZZ_SID);
			KUNIT_ASSERT_EQ(test, 0, peer_fuzz_send(f, &req));
		}
		peer_fuzz_drain(f);
		peer_fuzz_settle(f, base, n);
		if (!round) {
			held1 = peer_counter(test, "cm_peer/held");
			refused1 = peer_counter(test, "cm_peer/refused");
			slab1 = peer_slab_bytes();
		}
	}
	held2 = peer_counter(test, "cm_peer/held");
	refused2 = peer_counter(test, "cm_peer/refused");
	slab2 = peer_slab_bytes();

	KUNIT_EXPECT_EQ(test, n, (held1 - held0) + (refused1 - refused0));
	KUNIT_EXPECT_LE(test, held1 - held0, max_held);
	KUNIT_EXPECT_GE(test, held1 - held0, max_held / 2);
	KUNIT_EXPECT_EQ_MSG(test, 0UL, held2 - held1, "queue full, yet held");
	KUNIT_EXPECT_EQ(test, n, refused2 - refused1);
	/* the second flood was refused outright: no growth beyond noise */
	KUNIT_EXPECT_LT(test, slab2 - slab1, 2L << 20);
	kunit_info(test, "flood of %lu REQs x2 (max_held %lu): held %lu, refused %lu then %lu; slab %+ld KiB, then %+ld KiB\n",
		   n, max_held, held1 - held0, refused1 - refused0,
		   refused2 - refused1, (slab1 - slab0) >> 10,
		   (slab2 - slab1) >> 10);
}

/*
 * Persisting senders against a peer-bound service ID whose own peer never
 * connects: 3 x PEER_TEST_MAX_HELD peer ids on this device send it a REQ
 * each.  max_held are held; the others, and the held ones once expired,
 * are rejected as "not there yet" and sent again by their CMs until their
 * budgets are spent.  Bounds, sampled every 50 ms: never more than
 * max_held held; REQs sent at most one per id plus its resends and MAD
 * retries; slab growth bounded per sender.  Every id gets its outcome (REJ
 * or timeout) and nothing is held once they are gone.
 */
struct peer_flood_end {
	atomic_t outcomes, rejs;
};

static int peer_flood_handler(struct ib_cm_id *cm_id,
			      const struct ib_cm_event *ev)
{
	struct peer_flood_end *fe = cm_id->context;

	switch (ev->event) {
	case IB_CM_REJ_RECEIVED:
		atomic_inc(&fe->rejs);
		fallthrough;
	case IB_CM_REQ_ERROR:
		atomic_inc(&fe->outcomes);
		break;
	default:
		break;
	}
	return 0;
}

#define PEER_FLOOD_SID	(PEER_SID + 0x30000)

static void peer_fuzz_flood_persist(struct kunit *test)
{
	struct peer_end *h = peer_end_create(test, "holder");
	struct ib_cm_req_param req = peer_req_param(h, PEER_FLOOD_SID);
	unsigned long max_held, n, i, occ, peak = 0, deadline;
	unsigned long resent0, tx0, retries0, sent;
	struct peer_flood_end *fe;
	unsigned int budget;
	struct ib_cm_id **ids;
	long slab0, slab1;

	max_held = PEER_TEST_MAX_HELD;
	peer_set_limits(test, h->dev, max_held, PEER_TEST_AGE_MS);
	n = 3 * max_held;
	/* a budget of seconds: a slow host answers late, MADs are retried */
	req.remote_cm_response_timeout = 18;
	req.max_cm_retries = 7;
	budget = peer_req_budget_ms(&req);
	KUNIT_ASSERT_EQ(test, 0UL, peer_rdv_wait_below(test, 1));
	fe = kunit_kzalloc(test, sizeof(*fe), GFP_KERNEL);
	ids = kunit_kcalloc(test, n, sizeof(*ids), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fe);
	KUNIT_ASSERT_NOT_NULL(test, ids);
	KUNIT_ASSERT_EQ(test, 0, ib_cm_peer_bind(h->cm_id,
						 cpu_to_be64(PEER_FLOOD_SID),
						 0));
	resent0 = peer_counter(test, "cm_peer/resent");
	tx0 = peer_counter(test, "cm_tx_msgs/req");
	retries0 = peer_counter(test, "cm_tx_retries/req");
	slab0 = peer_slab_bytes();
	for (i = 0; i < n; i++) {
		ids[i] = ib_create_cm_id(h->dev, peer_flood_handler, fe);
		KUNIT_ASSERT_FALSE(test, IS_ERR(ids[i]));
		/* each its own service ID, apart from the holder's */
		KUNIT_ASSERT_EQ(test, 0,
				ib_cm_peer_bind(ids[i],
						cpu_to_be64(PEER_FLOOD_SID + 1 + i),
						0));
		req.qp_num = 0x700000 + i;
		KUNIT_ASSERT_EQ(test, 0,
				ib_send_cm_peer_req(ids[i], &req, NULL));
	}
	deadline = jiffies + msecs_to_jiffies(budget) + PEER_TIMEOUT;
	while (atomic_read(&fe->outcomes) < n &&
	       time_before(jiffies, deadline)) {
		/* the queue itself: counters of its ends lag it on SMP */
		occ = cm_peer_test_held(h->dev);
		peak = max(peak, occ);
		msleep(50);
	}
	slab1 = peer_slab_bytes();
	sent = peer_counter(test, "cm_tx_msgs/req") - tx0;
	kunit_info(test, "%lu senders (max_held %lu, budget %u ms): peak held %lu, REQs sent %lu (resent %lu, MAD retries %lu), outcomes %d (REJ %d), slab %+ld KiB\n",
		   n, max_held, budget, peak, sent,
		   peer_counter(test, "cm_peer/resent") - resent0,
		   peer_counter(test, "cm_tx_retries/req") - retries0,
		   atomic_read(&fe->outcomes), atomic_read(&fe->rejs),
		   (slab1 - slab0) >> 10);
	KUNIT_EXPECT_EQ(test, (int)n, atomic_read(&fe->outcomes));
	KUNIT_EXPECT_LE(test, peak, max_held);
	KUNIT_EXPECT_GE(test, peak, max_held / 2);
	/* the refused ones were sent again, not reported at once */
	KUNIT_EXPECT_GE(test, peer_counter(test, "cm_peer/resent") - resent0,
			n - max_held);
	/* one REQ per id outstanding: its first, resends, MAD retries */
	KUNIT_EXPECT_LE(test, sent,
			n + peer_counter(test, "cm_peer/resent") - resent0 +
			peer_counter(test, "cm_tx_retries/req") - retries0);
	/*
	 * Per sender: its cm_id, REQ MAD and address handle, plus KASAN's
	 * redzones and quarantine, which the resends' frees fill: 27 KiB in
	 * UML, 37 KiB in the SMP debug kernel with a 9 s budget.  A sanity
	 * bound; the structural bounds are the two above.
	 */
	KUNIT_EXPECT_LT(test, slab1 - slab0, (long)n << 16);
	for (i = 0; i < n; i++)
		ib_destroy_cm_id(ids[i]);
	ib_destroy_cm_id(h->cm_id);
	h->cm_id = NULL;
	KUNIT_EXPECT_EQ(test, 0UL, peer_rdv_wait_below(test, 1));
}

/*
 * The REP to our peer REQ comes from an end whose own REQ is held here:
 * it arrived while our REQ was not out yet (on SMP, between our claim and
 * cm_peer_list(), which then found us answered).  That end turned passive
 * and cancelled its REQ; the REP takes it out.  Here the held REQ gets a
 * key our claim does not take, and the REP is sent by the MAD agent.
 */
static void peer_fuzz_rep_withdraws_held(struct kunit *test)
{
	struct peer_fuzz *f = peer_fuzz_create(test);
	struct peer_end *q = f->end;
	unsigned long held0, withdrawn0, occ0;
	struct cm_req_msg req;
	struct cm_rep_msg rep = {};

	KUNIT_ASSERT_EQ(test, 0UL, peer_rdv_wait_below(test, 1));
	KUNIT_ASSERT_EQ(test, 0, ib_cm_peer_bind(q->cm_id,
						 cpu_to_be64(PEER_FUZZ_SID + 0x40),
						 0));
	occ0 = peer_rdv_occupancy(test);
	held0 = peer_counter(test, "cm_peer/held");
	withdrawn0 = peer_counter(test, "cm_peer/withdrawn");
	peer_fuzz_base_req(f, &req, PEER_FUZZ_SID + 0x40);
	KUNIT_ASSERT_EQ(test, 0, peer_fuzz_send(f, &req));
	peer_wait_held(test, held0);

	/* our REQ: to a service ID nobody binds, it is sent again meanwhile */
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(q, PEER_FUZZ_SID + 0x41));
	KUNIT_ASSERT_EQ(test, occ0 + 1, peer_rdv_occupancy(test));

	/* the REP of the held REQ's sender, turned passive */
	rep.hdr = req.hdr;
	rep.hdr.attr_id = CM_REP_ATTR_ID;
	IBA_SET(CM_REP_LOCAL_COMM_ID, &rep,
		IBA_GET(CM_REQ_LOCAL_COMM_ID, &req));
	IBA_SET(CM_REP_REMOTE_COMM_ID, &rep,
		be32_to_cpu(q->cm_id->local_id));
	IBA_SET(CM_REP_LOCAL_CA_GUID, &rep,
		IBA_GET(CM_REQ_LOCAL_CA_GUID, &req));
	IBA_SET(CM_REP_LOCAL_QPN, &rep,
		IBA_GET(CM_REQ_LOCAL_QPN, &req));
	IBA_SET(CM_REP_STARTING_PSN, &rep, 1);
	IBA_SET(CM_REP_RESPONDER_RESOURCES, &rep, 1);
	IBA_SET(CM_REP_INITIATOR_DEPTH, &rep, 1);
	IBA_SET(CM_REP_END_TO_END_FLOW_CONTROL, &rep, 1);
	IBA_SET(CM_REP_RNR_RETRY_COUNT, &rep, 7);
	KUNIT_ASSERT_EQ(test, 0, peer_fuzz_send(f, (struct cm_req_msg *)&rep));
	peer_end_wait(q);
	KUNIT_EXPECT_TRUE(test, q->got_rep);
	KUNIT_EXPECT_EQ(test, withdrawn0 + 1,
			peer_counter(test, "cm_peer/withdrawn"));
	KUNIT_EXPECT_EQ_MSG(test, occ0, peer_rdv_occupancy(test),
			    "the answered end's REQ is still held");
}

/*
 * A REQ with our CA GUID and QPN but another communication ID, as from an
 * end that cannot be ordered against ours (VFs with node GUID 0): rejected
 * at once, never held until its sender gives up.
 */
static void peer_fuzz_tie_rejected(struct kunit *test)
{
	struct peer_fuzz *f = peer_fuzz_create(test);
	struct peer_end *q = f->end, *r = peer_end_create(test, "r");
	u64 sid = PEER_FUZZ_SID + 0x50;
	unsigned long held0, rej0, deadline;
	struct cm_req_msg req;

	KUNIT_ASSERT_EQ(test, 0UL, peer_rdv_wait_below(test, 1));
	KUNIT_ASSERT_EQ(test, 0, ib_cm_peer_bind(q->cm_id, cpu_to_be64(sid),
						 0));
	/* our REQ waits: r's CM holds it, r never connects */
	KUNIT_ASSERT_EQ(test, 0, ib_cm_peer_bind(r->cm_id,
						 cpu_to_be64(sid + 1), 0));
	held0 = peer_counter(test, "cm_peer/held");
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(q, sid + 1));
	peer_wait_held(test, held0);
	held0++;

	rej0 = peer_counter(test, "cm_tx_msgs/rej");
	peer_fuzz_base_req(f, &req, sid);
	*IBA_GET_MEM_PTR(CM_REQ_PRIMARY_LOCAL_PORT_GID, &req) = q->path.dgid;
	IBA_SET(CM_REQ_LOCAL_CA_GUID, &req, be64_to_cpu(q->dev->node_guid));
	IBA_SET(CM_REQ_LOCAL_QPN, &req, q->qp->qp_num);
	IBA_SET(CM_REQ_LOCAL_COMM_ID, &req,
		be32_to_cpu(q->cm_id->local_id) ^ 0x5a5a0000);
	KUNIT_ASSERT_EQ(test, 0, peer_fuzz_send(f, &req));
	deadline = jiffies + PEER_TIMEOUT;
	while (peer_counter(test, "cm_tx_msgs/rej") == rej0 &&
	       time_before(jiffies, deadline))
		msleep(20);
	/* at least: our REQ's sender may give up meanwhile, with a REJ */
	KUNIT_EXPECT_GE_MSG(test, peer_counter(test, "cm_tx_msgs/rej"),
			    rej0 + 1, "the tie's REQ was not rejected");
	KUNIT_EXPECT_EQ_MSG(test, held0, peer_counter(test, "cm_peer/held"),
			    "the tie's REQ was held");
	KUNIT_EXPECT_FALSE_MSG(test, q->got_rej, "our own REQ was rejected");
}

/* counters reported when the connect after the fuzzing fails */
static const char *const peer_fuzz_diag[] = {
	"cm_tx_msgs/req", "cm_rx_msgs/req", "cm_tx_msgs/rej", "cm_rx_msgs/rej",
	"cm_tx_msgs/mra", "cm_rx_msgs/mra", "cm_rx_duplicates/req",
	"cm_peer/matched", "cm_peer/held", "cm_peer/refused",
};

/* Seeded mutations of peer REQs; afterwards the CM still connects. */
static void peer_fuzz_req(struct kunit *test)
{
	unsigned long diag[ARRAY_SIZE(peer_fuzz_diag)];
	struct peer_fuzz *f = peer_fuzz_create(test);
	unsigned int seed = peer_fuzz_seed ?: get_random_u32();
	unsigned long rx0 = peer_counter(test, "cm_rx_msgs/req");
	struct peer_end *a, *b;
	struct cm_req_msg req;
	unsigned int i, m;
	const char *what;

	kunit_info(test, "seed %u, %u cases\n", seed, peer_fuzz_cases);
	prandom_seed_state(&f->rnd, seed);
	KUNIT_ASSERT_EQ(test, 0, ib_cm_peer_bind(f->end->cm_id,
						 cpu_to_be64(PEER_FUZZ_SID), 0));
	for (i = 0; i < peer_fuzz_cases; i++) {
		peer_fuzz_base_req(f, &req, PEER_FUZZ_SID);
		for (m = 1 + prandom_u32_state(&f->rnd) % 4; m; m--)
			what = peer_fuzz_mutate(f, &req);
		if (peer_fuzz_send(f, &req)) {
			KUNIT_FAIL(test, "case %u (last: %s): send failed",
				   i, what);
			break;
		}
	}
	peer_fuzz_sync(f);
	KUNIT_EXPECT_EQ(test, 0U, f->send_errors);
	kunit_info(test, "sent %u, the CM received %lu REQs\n", f->sent,
		   peer_counter(test, "cm_rx_msgs/req") - rx0);
	/* most mutations keep a MAD the CM accepts as a REQ */
	KUNIT_EXPECT_GT(test, peer_counter(test, "cm_rx_msgs/req") - rx0,
			(unsigned long)f->sent / 2);

	/* the idle peer was never connected by any of it */
	KUNIT_EXPECT_EQ(test, IB_CM_IDLE, f->end->cm_id->state);
	KUNIT_EXPECT_FALSE(test, f->end->got_req);

	a = peer_end_create(test, "a");
	b = peer_end_create(test, "b");
	for (i = 0; i < ARRAY_SIZE(peer_fuzz_diag); i++)
		diag[i] = peer_counter(test, peer_fuzz_diag[i]);
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(a, PEER_FUZZ_SID + 2));
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(b, PEER_FUZZ_SID + 2));
	peer_end_wait(a);
	peer_end_wait(b);
	peer_expect_one_connection(test, a, b);
	if (!a->status && !b->status) {
		peer_exchange(test, a, b);
		return;
	}
	for (i = 0; i < ARRAY_SIZE(peer_fuzz_diag); i++)
		kunit_info(test, "%s %+ld\n", peer_fuzz_diag[i],
			   (long)(peer_counter(test, peer_fuzz_diag[i]) - diag[i]));
	kunit_info(test, "a: mra %d rej %d (%d); b: mra %d rej %d (%d)\n",
		   a->got_mra, a->got_rej, a->rej_reason, b->got_mra,
		   b->got_rej, b->rej_reason);
}

static struct kunit_case cm_peer_fuzz_test_cases[] = {
	KUNIT_CASE_SLOW(peer_fuzz_flood),
	KUNIT_CASE_SLOW(peer_fuzz_flood_persist),
	KUNIT_CASE_SLOW(peer_fuzz_rep_withdraws_held),
	KUNIT_CASE_SLOW(peer_fuzz_tie_rejected),
	KUNIT_CASE_SLOW(peer_fuzz_req),
	{}
};

static struct kunit_suite cm_peer_fuzz_test_suite = {
	.name = "cm_peer_fuzz",
	.suite_init = cm_peer_ib_suite_init,
	.test_cases = cm_peer_fuzz_test_cases,
};

kunit_test_suite(cm_peer_fuzz_test_suite);

MODULE_DESCRIPTION("KUnit suite cm_peer_fuzz: REQs fuzzed at the IB CM peer-to-peer model");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
MODULE_LICENSE("Dual BSD/GPL");
