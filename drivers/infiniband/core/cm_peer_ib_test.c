// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Suite cm_peer_ib: the ib_cm peer-to-peer API over a real RDMA device.
 * Two ends on one port connect with ib_send_cm_peer_req() and must end up
 * as exactly one connection, with both QPs in RTS and a SEND delivered
 * each way: collisions, early and held REQs, shared and late binds,
 * conflicts, listeners (on demand), teardown at each step, the window.
 */
#include "cm_peer_kunit_helpers.h"

/* Both send their REQ back to back: the REQs collide, QPN decides. */
static void peer_ib_collision(struct kunit *test)
{
	struct peer_end *a = peer_end_create(test, "a");
	struct peer_end *b = peer_end_create(test, "b");
	unsigned long held = peer_counter(test, "cm_peer/held");

	KUNIT_ASSERT_EQ(test, 0, peer_send_req(a, PEER_SID));
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(b, PEER_SID));
	peer_end_wait(a);
	peer_end_wait(b);
	peer_expect_one_connection(test, a, b);
	/*
	 * When the REQs crossed (neither was held) the arbiter chose: equal
	 * GIDs, so the smaller QPN is passive.  When a's REQ was processed
	 * before b sent its own, it was held and b, the late end, turned
	 * passive without arbitration.
	 */
	if (peer_counter(test, "cm_peer/held") == held)
		KUNIT_EXPECT_LT(test, peer_passive_of(a, b)->qp->qp_num,
				(peer_passive_of(a, b) == a ? b : a)->qp->qp_num);
	else
		KUNIT_EXPECT_TRUE(test, b->got_req);
	peer_exchange(test, a, b);
}

/* b binds, a connects, b connects once a's REQ is held. */
static void peer_ib_early_req(struct kunit *test)
{
	struct peer_end *a = peer_end_create(test, "a");
	struct peer_end *b = peer_end_create(test, "b");

	peer_hold_at(test, a, b, PEER_SID + 1);
	/* no MRA within a's first timeout (384 ms): the claim is quicker */
	KUNIT_EXPECT_FALSE(test, a->got_mra);
	peer_claim_held(test, a, b, PEER_SID + 1);
}

/*
 * a's REQ is held longer than its first timeout: its retransmission is
 * answered with an MRA, a keeps waiting, and b's later connect claims it.
 * With @no_retries a's REQ is never resent: it is answered with an MRA
 * at once, or a REQ handled late would be held after a gave up (its
 * budget counts from sending, the hold's from handling).
 */
static void peer_held_mra(struct kunit *test, u64 sid, bool no_retries)
{
	struct peer_end *a = peer_end_create(test, "a");
	struct peer_end *b = peer_end_create(test, "b");
	unsigned long dups = peer_counter(test, "cm_rx_duplicates/req");

	if (no_retries) {
		/* a hold longer than a's 384 ms: the claim need not race it */
		peer_set_limits(test, a->dev, 0, 2000);
		a->no_retries = true;
	}
	peer_hold_at(test, a, b, sid);
	peer_wait_mra(a);
	KUNIT_EXPECT_TRUE(test, a->got_mra);
	KUNIT_EXPECT_EQ(test, !no_retries,
			peer_counter(test, "cm_rx_duplicates/req") > dups);
	peer_claim_held(test, a, b, sid);
}

static void peer_ib_held_resent(struct kunit *test)
{
	peer_held_mra(test, PEER_SID + 11, false);
}

static void peer_ib_held_no_retries(struct kunit *test)
{
	peer_held_mra(test, PEER_SID + 12, true);
}

/*
 * a connects before b bound anything: a's REQ is rejected (invalid
 * service ID), a's CM sends it again with backoff, b binds and connects
 * 300 ms later: one connection, a never saw the REJ.
 */
static void peer_ib_late_bind(struct kunit *test)
{
	struct peer_end *a = peer_end_create(test, "a");
	struct peer_end *b = peer_end_create(test, "b");
	unsigned long resent = peer_counter(test, "cm_peer/resent");

	KUNIT_ASSERT_EQ(test, 0, ib_cm_peer_bind(a->cm_id,
						 cpu_to_be64(PEER_SID + 7), 0));
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(a, PEER_SID + 8));
	msleep(300);
	KUNIT_EXPECT_EQ(test, 1, a->status);	/* still connecting */
	KUNIT_EXPECT_GT(test, peer_counter(test, "cm_peer/resent"), resent);
	KUNIT_ASSERT_EQ(test, 0, ib_cm_peer_bind(b->cm_id,
						 cpu_to_be64(PEER_SID + 8), 0));
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(b, PEER_SID + 7));
	peer_end_wait(a);
	peer_end_wait(b);
	peer_expect_one_connection(test, a, b);
	KUNIT_EXPECT_FALSE(test, a->got_rej);
	peer_exchange(test, a, b);
}

static void peer_post_pause_off(void *unused)
{
	cm_peer_test_post_pause(0);
}

/*
 * As peer_ib_late_bind, but the REJ comes and is handled before
 * ib_send_cm_peer_req() got past its post: a's REQ must already be kept
 * for its resend then, or the REJ reaches a's handler.
 */
static void peer_ib_late_bind_rej_first(struct kunit *test)
{
	struct peer_end *a = peer_end_create(test, "a");
	struct peer_end *b = peer_end_create(test, "b");
	unsigned long rejs = peer_counter(test, "cm_rx_msgs/rej");
	int ret;

	ret = kunit_add_action_or_reset(test, peer_post_pause_off, NULL);
	KUNIT_ASSERT_EQ(test, 0, ret);
	KUNIT_ASSERT_EQ(test, 0, ib_cm_peer_bind(a->cm_id,
						 cpu_to_be64(PEER_SID + 0x27), 0));
	cm_peer_test_post_pause(1000);
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(a, PEER_SID + 0x28));
	cm_peer_test_post_pause(0);
	/* the REJ came within the pause, or the case tests nothing */
	if (peer_counter(test, "cm_rx_msgs/rej") == rejs)
		kunit_skip(test, "no REJ within the pause");
	KUNIT_EXPECT_EQ(test, 1, a->status);	/* still connecting */
	KUNIT_ASSERT_EQ(test, 0, ib_cm_peer_bind(b->cm_id,
						 cpu_to_be64(PEER_SID + 0x28), 0));
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(b, PEER_SID + 0x27));
	peer_end_wait(a);
	peer_end_wait(b);
	peer_expect_one_connection(test, a, b);
	KUNIT_EXPECT_FALSE(test, a->got_rej);
	peer_exchange(test, a, b);
}

/*
 * Nobody ever binds the service ID a connects to: a gets the REJ once
 * its REQ's budget (timeout x (retries + 1)) is spent, not before.
 */
static void peer_ib_never_bound(struct kunit *test)
{
	struct peer_end *a = peer_end_create(test, "a");
	struct ib_cm_req_param req = peer_req_param(a, PEER_SID + 9);
	unsigned long start = jiffies, ms;
	unsigned int budget;

	budget = peer_req_budget_ms(&req);
	/* own service ID apart: on one device, our REQ would come back */
	KUNIT_ASSERT_EQ(test, 0, ib_cm_peer_bind(a->cm_id,
						 cpu_to_be64(PEER_SID + 10), 0));
	KUNIT_ASSERT_EQ(test, 0, ib_send_cm_peer_req(a->cm_id, &req, NULL));
	peer_end_wait(a);
	ms = jiffies_to_msecs(jiffies - start);
	kunit_info(test, "REJ after %lu ms, budget %u ms\n", ms, budget);
	KUNIT_EXPECT_TRUE(test, a->got_rej);
	KUNIT_EXPECT_EQ(test, IB_CM_REJ_INVALID_SERVICE_ID, a->rej_reason);
	KUNIT_EXPECT_GE(test, ms, budget * 8 / 10);
	KUNIT_EXPECT_LE(test, ms, budget + 2000);
}

/*
 * Eight ids share one service ID; each connects to its own partner, all
 * REQs sent at once: every connection reaches the right partner, checked
 * by the names each end sends and by a SEND each way.
 */
#define PEER_SHARED	8
static void peer_ib_shared_sid(struct kunit *test)
{
	struct peer_end *l[PEER_SHARED], *r[PEER_SHARED];
	u64 port = PEER_SID + 0x100;
	char *names;
	int j;

	names = kunit_kzalloc(test, 2 * PEER_SHARED * PEER_NAME_LEN, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, names);
	for (j = 0; j < PEER_SHARED; j++) {
		char *ln = names + 2 * j * PEER_NAME_LEN;
		char *rn = ln + PEER_NAME_LEN;

		snprintf(ln, PEER_NAME_LEN, "l%d", j);
		snprintf(rn, PEER_NAME_LEN, "r%d", j);
		l[j] = peer_end_create(test, ln);
		r[j] = peer_end_create(test, rn);
		peer_identity(test, l[j], port, port + 1 + j, ln);
		peer_identity(test, r[j], port + 1 + j, port, rn);
	}
	/* l's in one order, r's in the other: collisions and holds mixed */
	for (j = 0; j < PEER_SHARED; j++) {
		KUNIT_ASSERT_EQ(test, 0, peer_send_req(l[j], port + 1 + j));
		KUNIT_ASSERT_EQ(test, 0,
				peer_send_req(r[PEER_SHARED - 1 - j], port));
	}
	for (j = 0; j < PEER_SHARED; j++) {
		peer_end_wait(l[j]);
		peer_end_wait(r[j]);
	}
	for (j = 0; j < PEER_SHARED; j++) {
		peer_expect_one_connection(test, l[j], r[j]);
		KUNIT_EXPECT_STREQ(test, l[j]->peer_name, r[j]->name);
		KUNIT_EXPECT_STREQ(test, r[j]->peer_name, l[j]->name);
		peer_exchange(test, l[j], r[j]);
	}
}

/*
 * Match bytes under a mask: at each end two peers share a service ID (one
 * port pair), told apart by the second byte of their name; the first
 * differs between the two ends of a pair, as a protocol version may, and
 * is masked out.  A third pair binds the same service IDs with no mask
 * (another user of the port, as rdma_cm's ids of one port in two
 * namespaces): a node of its own, beside the masked one, and each REQ
 * reaches the id whose key takes it.
 */
static void peer_ib_match_mask(struct kunit *test)
{
	static const u8 mask[PEER_ID_LEN + 2] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0xff
	};
	static const char * const names[] = { "x0", "y1", "p0", "q1" };
	u8 other_mask[sizeof(mask)];
	u64 port = PEER_SID + 0x300;
	struct peer_end *e[4], *g[2];
	unsigned long claimed, held;
	struct ib_cm_id *listen;
	int j;

	for (j = 0; j < 4; j++) {
		e[j] = peer_end_create(test, names[j]);
		peer_identity_mask(test, e[j], port + j / 2, port + 1 - j / 2,
				   names[j], sizeof(mask), mask);
		e[j]->match[PEER_ID_LEN] = 'v';	/* any version */
		e[j]->match[PEER_ID_LEN + 1] = names[j][1];
	}
	for (j = 0; j < 2; j++) {
		g[j] = peer_end_create(test, j ? "h" : "g");
		peer_identity_mask(test, g[j], port + j, port + 1 - j,
				   g[j]->name, sizeof(mask), NULL);
		g[j]->match[PEER_ID_LEN] = j ? 'g' : 'h';
		g[j]->match[PEER_ID_LEN + 1] = 0;
	}
	memcpy(other_mask, mask, sizeof(mask));
	other_mask[PEER_ID_LEN] = 0xff;
	listen = ib_cm_insert_peer_listen(g[0]->dev, peer_cm_handler, NULL,
					  NULL, cpu_to_be64(port), sizeof(mask),
					  other_mask);
	KUNIT_ASSERT_FALSE(test, IS_ERR(listen));
	ib_destroy_cm_id(listen);
	/* the same mask, another copy: the listener shares the node */
	other_mask[PEER_ID_LEN] = 0;
	listen = ib_cm_insert_peer_listen(g[0]->dev, peer_cm_handler, NULL,
					  NULL, cpu_to_be64(port), sizeof(mask),
					  other_mask);
	KUNIT_ASSERT_FALSE(test, IS_ERR(listen));
	ib_destroy_cm_id(listen);
	/* one end's first, the other's in the other order: holds, collisions */
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(e[0], port + 1));
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(g[1], port));
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(e[3], port));
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(e[2], port));
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(g[0], port + 1));
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(e[1], port + 1));
	for (j = 0; j < 4; j++)
		peer_end_wait(e[j]);
	peer_end_wait(g[0]);
	peer_end_wait(g[1]);
	for (j = 0; j < 2; j++) {
		peer_expect_one_connection(test, e[j], e[j + 2]);
		KUNIT_EXPECT_STREQ(test, e[j]->peer_name, e[j + 2]->name);
		KUNIT_EXPECT_STREQ(test, e[j + 2]->peer_name, e[j]->name);
	}
	peer_expect_one_connection(test, g[0], g[1]);
	KUNIT_EXPECT_STREQ(test, g[0]->peer_name, g[1]->name);
	KUNIT_EXPECT_STREQ(test, g[1]->peer_name, g[0]->name);

	/* a REQ no id waits for is held in the first node; a sibling's claims */
	for (j = 0; j < 2; j++) {
		g[j] = peer_end_create(test, j ? "j" : "i");
		peer_identity_mask(test, g[j], port + j, port + 1 - j,
				   g[j]->name, sizeof(mask), NULL);
		g[j]->match[PEER_ID_LEN] = j ? 'i' : 'j';
		g[j]->match[PEER_ID_LEN + 1] = 0;
	}
	claimed = peer_counter(test, "cm_peer/claimed");
	held = peer_counter(test, "cm_peer/held");
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(g[1], port));
	peer_wait_held(test, held);
	peer_claim_held(test, g[1], g[0], port + 1);
	KUNIT_EXPECT_EQ(test, claimed + 1,
			peer_counter(test, "cm_peer/claimed"));
}

/*
 * The nodes of one service ID, a longer key first.  A REQ that an id of
 * the longer key expects (listed, its REQ not out) is held for it, though
 * an id of the shorter key, its REQ out, would take it too.  A REQ held
 * when a longer key binds goes to the new first node, and stays
 * claimable, and so when the first node goes.  A REQ for a longer key's
 * listener and a shorter key's id is the listener's.
 */
static void peer_ib_ring_order(struct kunit *test)
{
	u64 p = PEER_SID + 0x500, q = p + 1, z = p + 2;
	struct peer_end *s, *l, *r, *al;
	unsigned long claimed, held;

	s = peer_end_create(test, "s");
	l = peer_end_create(test, "l");
	r = peer_end_create(test, "r");
	peer_identity(test, s, p, q, "s");
	peer_identity_mask(test, l, p, q, "l", PEER_ID_LEN + 2, NULL);
	l->match[PEER_ID_LEN] = 'r';
	l->match[PEER_ID_LEN + 1] = 0;
	peer_identity(test, r, q, p, "r");
	KUNIT_ASSERT_EQ(test, 0, ib_cm_peer_expect(l->cm_id, &l->path.sgid,
						   &l->path.dgid, l->match));
	/* s's REQ goes where nobody is: s waits, sent, for r's REQ too */
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(s, z));
	held = peer_counter(test, "cm_peer/held");
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(r, p));
	peer_wait_held(test, held);
	peer_claim_held(test, r, l, q);
	KUNIT_EXPECT_STREQ(test, l->peer_name, r->name);

	/* held in the first node; a longer bind comes; claimed */
	s = peer_end_create(test, "t");
	l = peer_end_create(test, "m");
	r = peer_end_create(test, "u");
	peer_identity(test, s, p + 3, q + 3, "t");
	peer_identity(test, r, q + 3, p + 3, "u");
	held = peer_counter(test, "cm_peer/held");
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(r, p + 3));
	peer_wait_held(test, held);
	peer_identity_mask(test, l, p + 3, q + 3, "m", PEER_ID_LEN + 2, NULL);
	claimed = peer_counter(test, "cm_peer/claimed");
	peer_claim_held(test, r, s, q + 3);
	KUNIT_EXPECT_EQ(test, claimed + 1,
			peer_counter(test, "cm_peer/claimed"));

	/* held in the first node, which goes: the next holds it, claimed */
	s = peer_end_create(test, "x");
	l = peer_end_create(test, "y");
	r = peer_end_create(test, "z");
	peer_identity(test, s, p + 9, q + 9, "x");
	peer_identity_mask(test, l, p + 9, q + 9, "y", PEER_ID_LEN + 2, NULL);
	peer_identity(test, r, q + 9, p + 9, "z");
	held = peer_counter(test, "cm_peer/held");
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(r, p + 9));
	peer_wait_held(test, held);
	ib_destroy_cm_id(l->cm_id);
	l->cm_id = NULL;
	claimed = peer_counter(test, "cm_peer/claimed");
	peer_claim_held(test, r, s, q + 9);
	KUNIT_EXPECT_EQ(test, claimed + 1,
			peer_counter(test, "cm_peer/claimed"));

	/* both keys take a REQ: the longer one's listener, not a shorter id */
	al = peer_end_create(test, "al");
	s = peer_end_create(test, "v");
	r = peer_end_create(test, "w");
	peer_listen_on_len(test, al, p + 6, PEER_ID_LEN + 2);
	peer_identity(test, s, p + 6, q + 6, "v");
	peer_identity(test, r, q + 6, p + 6, "w");
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(s, z));
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(r, p + 6));
	peer_end_wait(r);
	peer_end_wait(al);
	KUNIT_EXPECT_TRUE(test, al->got_req);
	KUNIT_EXPECT_FALSE(test, s->got_req);
	KUNIT_EXPECT_STREQ(test, al->peer_name, "w");
	KUNIT_EXPECT_EQ(test, 0, r->status);
}

/* Listens and peer binds of one service ID refuse each other. */
static void peer_ib_conflicts(struct kunit *test)
{
	struct peer_end *a = peer_end_create(test, "a");
	struct peer_end *b = peer_end_create(test, "b");
	struct peer_end *c = peer_end_create(test, "c");
	struct ib_cm_id *listen;

	KUNIT_ASSERT_EQ(test, 0, ib_cm_peer_bind(a->cm_id,
						 cpu_to_be64(PEER_SID + 2), 0));
	KUNIT_EXPECT_EQ(test, 0, ib_cm_peer_bind(a->cm_id,
						 cpu_to_be64(PEER_SID + 2), 0));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			ib_cm_peer_bind(a->cm_id, cpu_to_be64(PEER_SID + 3), 0));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			ib_cm_peer_bind(a->cm_id, cpu_to_be64(PEER_SID + 2), 4));
	/* another id, another length: a node of its own beside a's */
	KUNIT_EXPECT_EQ(test, 0,
			ib_cm_peer_bind(c->cm_id, cpu_to_be64(PEER_SID + 2), 4));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			ib_cm_peer_bind(b->cm_id, cpu_to_be64(PEER_SID + 3),
					CM_PEER_TEST_MATCH_MAX + 1));
	/* a listen and a peer bind of one service ID live side by side */
	listen = ib_cm_insert_listen(b->dev, peer_cm_handler,
				     cpu_to_be64(PEER_SID + 2));
	KUNIT_EXPECT_FALSE(test, IS_ERR(listen));
	if (!IS_ERR(listen))
		ib_destroy_cm_id(listen);

	KUNIT_ASSERT_EQ(test, 0, ib_cm_listen(b->cm_id,
					      cpu_to_be64(PEER_SID + 4)));
	ib_destroy_cm_id(a->cm_id);
	a->cm_id = ib_create_cm_id(a->dev, peer_cm_handler, a);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a->cm_id));
	KUNIT_EXPECT_EQ(test, 0,
			ib_cm_peer_bind(a->cm_id, cpu_to_be64(PEER_SID + 4), 0));
	ib_destroy_cm_id(a->cm_id);
	a->cm_id = ib_create_cm_id(a->dev, peer_cm_handler, a);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a->cm_id));
	/* a match blob is required once the bind has one */
	KUNIT_ASSERT_EQ(test, 0, ib_cm_peer_bind(a->cm_id,
						 cpu_to_be64(PEER_SID + 6), 4));
	KUNIT_EXPECT_EQ(test, -EINVAL, peer_send_req(a, PEER_SID + 6));
	KUNIT_EXPECT_EQ(test, IB_CM_IDLE, a->cm_id->state);
	/* the peer bind went away with its id: the SID is free again */
	ib_destroy_cm_id(a->cm_id);
	a->cm_id = ib_create_cm_id(a->dev, peer_cm_handler, a);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a->cm_id));
	ib_destroy_cm_id(b->cm_id);
	b->cm_id = ib_create_cm_id(b->dev, peer_cm_handler, b);
	KUNIT_ASSERT_FALSE(test, IS_ERR(b->cm_id));
	KUNIT_EXPECT_EQ(test, 0, ib_cm_listen(b->cm_id,
					      cpu_to_be64(PEER_SID + 2)));
	KUNIT_EXPECT_EQ(test, 0, ib_cm_peer_bind(a->cm_id,
						 cpu_to_be64(PEER_SID + 4), 0));
}

/* One end goes away mid-collision: the other fails cleanly. */
static void peer_ib_destroy_during_collision(struct kunit *test)
{
	struct peer_end *a = peer_end_create(test, "a");
	struct peer_end *b = peer_end_create(test, "b");

	KUNIT_ASSERT_EQ(test, 0, peer_send_req(a, PEER_SID + 5));
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(b, PEER_SID + 5));
	ib_destroy_cm_id(a->cm_id);
	a->cm_id = NULL;
	peer_end_wait(b);
	KUNIT_EXPECT_LT(test, b->status, 0);
	KUNIT_EXPECT_NE(test, IB_CM_ESTABLISHED, b->cm_id->state);
	kunit_info(test, "survivor: status %d, REJ %d (reason %d)\n",
		   b->status, b->got_rej, b->rej_reason);
}

/* The client/server model is unchanged. */
static void peer_ib_client_server(struct kunit *test)
{
	struct peer_end *srv = peer_end_create(test, "server");
	struct peer_end *cli = peer_end_create(test, "client");
	struct ib_cm_id *listen_id = srv->cm_id;
	struct ib_cm_req_param req;

	KUNIT_ASSERT_EQ(test, 0, ib_cm_listen(listen_id,
					      cpu_to_be64(PEER_SID + 6)));
	req = peer_req_param(cli, PEER_SID + 6);
	KUNIT_ASSERT_EQ(test, 0, ib_send_cm_req(cli->cm_id, &req));
	peer_end_wait(cli);
	peer_end_wait(srv);
	KUNIT_EXPECT_EQ(test, 0, cli->status);
	KUNIT_EXPECT_EQ(test, 0, srv->status);
	KUNIT_EXPECT_TRUE(test, srv->got_req);
	KUNIT_EXPECT_FALSE(test, srv->req_on_own_id);
	KUNIT_EXPECT_TRUE(test, cli->got_rep);
	KUNIT_EXPECT_FALSE(test, cli->got_mra);
	peer_exchange(test, srv, cli);
	/* the id the listener created is the server's now; drop the listener */
	ib_destroy_cm_id(listen_id);
}

/*
 * A REQ no peer id of its key waits for goes to the listener, as in
 * client/server; a peer id of another key waits on meanwhile.
 */
static void peer_ib_listen_takes(struct kunit *test)
{
	u64 port = PEER_SID + 0x300;
	struct peer_end *al = peer_end_create(test, "al");
	struct peer_end *a = peer_end_create(test, "a");
	struct peer_end *b = peer_end_create(test, "b");
	struct ib_cm_id *other;

	peer_listen_on(test, al, port);
	peer_identity(test, a, port, port + 2, "a");	/* waits for another */
	peer_identity(test, b, port + 1, port, "b");
	/* one handler per service ID; client/server listeners stay out */
	other = ib_cm_insert_peer_listen(a->dev, peer_cm_handler, NULL, NULL,
					 cpu_to_be64(port), PEER_ID_LEN, NULL);
	KUNIT_EXPECT_EQ(test, -EBUSY, PTR_ERR_OR_ZERO(other));
	/* a client/server listener lives beside it, peer REQs pass it by */
	other = ib_cm_insert_listen(a->dev, peer_listen_handler,
				    cpu_to_be64(port));
	KUNIT_ASSERT_FALSE(test, IS_ERR(other));
	kunit_add_action(test, peer_unlisten, other);

	KUNIT_ASSERT_EQ(test, 0, peer_send_req(a, port + 2));
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(b, port));
	peer_end_wait(b);
	peer_end_wait(al);
	KUNIT_EXPECT_EQ(test, 0, b->status);
	KUNIT_EXPECT_EQ(test, 0, al->status);
	KUNIT_EXPECT_TRUE(test, al->got_req);
	KUNIT_EXPECT_FALSE(test, al->req_on_own_id);
	KUNIT_EXPECT_TRUE(test, b->got_rep);
	KUNIT_EXPECT_FALSE(test, b->got_mra);
	KUNIT_EXPECT_STREQ(test, al->peer_name, "b");
	KUNIT_EXPECT_FALSE(test, a->got_req);
	KUNIT_EXPECT_EQ(test, 1, a->status);	/* still connecting */
	peer_exchange(test, al, b);
}

/* A REQ that a listed peer id waits for follows the collision rules. */
static void peer_ib_listen_collision(struct kunit *test)
{
	u64 port = PEER_SID + 0x310;
	struct peer_end *al = peer_end_create(test, "al");
	struct peer_end *a = peer_end_create(test, "a");
	struct peer_end *b = peer_end_create(test, "b");

	peer_listen_on(test, al, port);
	peer_identity(test, a, port, port + 1, "a");
	peer_identity(test, b, port + 1, port, "b");
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(a, port + 1));
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(b, port));
	peer_end_wait(a);
	peer_end_wait(b);
	peer_expect_one_connection(test, a, b);
	KUNIT_EXPECT_STREQ(test, a->peer_name, "b");
	KUNIT_EXPECT_STREQ(test, b->peer_name, "a");
	KUNIT_EXPECT_FALSE(test, al->got_req);
	peer_exchange(test, a, b);
}

/*
 * b's REQ is at a's listener, unanswered: a's peer connect to b fails with
 * -EALREADY; once the listener's id answered it, with -EISCONN.  Never a
 * second connection for the pair.
 */
static void peer_ib_listen_pending(struct kunit *test)
{
	u64 port = PEER_SID + 0x320;
	struct peer_end *al = peer_end_create(test, "al");
	struct peer_end *a = peer_end_create(test, "a");
	struct peer_end *b = peer_end_create(test, "b");
	unsigned long deadline = jiffies + PEER_TIMEOUT;

	peer_listen_on(test, al, port);
	al->hold_req = true;
	peer_identity(test, a, port, port + 1, "a");
	peer_identity(test, b, port + 1, port, "b");
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(b, port));
	while (!READ_ONCE(al->got_req) && time_before(jiffies, deadline))
		msleep(20);
	KUNIT_ASSERT_TRUE(test, al->got_req);
	KUNIT_EXPECT_EQ(test, -EALREADY, peer_send_req(a, port + 1));
	KUNIT_EXPECT_EQ(test, IB_CM_IDLE, a->cm_id->state);
	KUNIT_ASSERT_EQ(test, 0, peer_send_rep(al));
	peer_end_wait(b);
	peer_end_wait(al);
	KUNIT_EXPECT_EQ(test, 0, b->status);
	KUNIT_EXPECT_EQ(test, 0, al->status);
	KUNIT_EXPECT_EQ(test, -EISCONN, peer_send_req(a, port + 1));
	KUNIT_EXPECT_FALSE(test, a->got_req);
	peer_exchange(test, al, b);
	/* the connection gone, a may connect again: b is no peer any more */
	ib_destroy_cm_id(al->cm_id);
	al->cm_id = NULL;
	KUNIT_EXPECT_EQ(test, 0, peer_send_req(a, port + 1));
}

/*
 * b's REQ is at a's listener while a's connect of the key is starting:
 * the listener hands it back (ib_cm_peer_hold_req()).  No REJ: it is held
 * for a, whose peer call claims it and turns passive.
 */
static void peer_ib_listen_hold_req(struct kunit *test)
{
	u64 port = PEER_SID + 0x3e0;
	struct peer_end *al = peer_end_create(test, "al");
	struct peer_end *a = peer_end_create(test, "a");
	struct peer_end *b = peer_end_create(test, "b");
	unsigned long held, claimed;

	peer_listen_on(test, al, port);
	al->hand_back = true;
	peer_identity(test, a, port, port + 1, "a");
	peer_identity(test, b, port + 1, port, "b");
	held = peer_counter(test, "cm_peer/held");
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(b, port));
	peer_wait_held(test, held);
	KUNIT_EXPECT_TRUE(test, al->got_req);
	KUNIT_EXPECT_EQ(test, 0, READ_ONCE(al->hand_back_ret));
	claimed = peer_counter(test, "cm_peer/claimed");
	peer_claim_held(test, b, a, port + 1);
	KUNIT_EXPECT_LT(test, claimed, peer_counter(test, "cm_peer/claimed"));
	KUNIT_EXPECT_FALSE(test, b->got_rej);
}

/*
 * b's REQ reaches a's listener, whose handler runs late (behind another
 * REQ's in a ULP); a's connect of the key starts meanwhile.  The listener
 * hands REQs back (ib_cm_peer_listen_hands_back()): a's connect does not
 * fail with -EALREADY, its REQ waits unsent for the answer.  Handed back,
 * b's REQ comes to a, which turns passive: one connection, no REJ.
 */
static void peer_ib_listen_behind(struct kunit *test)
{
	u64 port = PEER_SID + 0x400;
	struct peer_end *al = peer_end_create(test, "al");
	struct peer_end *a = peer_end_create(test, "a");
	struct peer_end *b = peer_end_create(test, "b");
	unsigned long deferred;

	ib_cm_peer_listen_hands_back(peer_listen_on(test, al, port));
	al->hand_back = true;
	al->gate_req = true;
	b->response_timeout = 20;	/* no resend while the handler waits */
	peer_identity(test, a, port, port + 1, "a");
	peer_identity(test, b, port + 1, port, "b");
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(b, port));
	peer_wait_in_req(test, al);
	deferred = peer_counter(test, "cm_peer/deferred");
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(a, port + 1));
	KUNIT_EXPECT_EQ(test, deferred + 1,
			peer_counter(test, "cm_peer/deferred"));
	complete(&al->req_go);
	peer_end_wait(a);
	peer_end_wait(b);
	KUNIT_EXPECT_EQ(test, 0, READ_ONCE(al->hand_back_ret));
	peer_expect_one_connection(test, a, b);
	KUNIT_EXPECT_TRUE(test, a->got_req);
	KUNIT_EXPECT_STREQ(test, a->peer_name, "b");
	KUNIT_EXPECT_FALSE(test, b->got_rej);
	peer_exchange(test, a, b);
}

/*
 * As peer_ib_listen_behind(), but the listener rejects b's REQ: a's REQ,
 * which waited behind it, goes then, and is held at b's service ID, where
 * a later connect of b's key claims it.
 */
static void peer_ib_listen_behind_rej(struct kunit *test)
{
	u64 port = PEER_SID + 0x410;
	struct peer_end *al = peer_end_create(test, "al");
	struct peer_end *a = peer_end_create(test, "a");
	struct peer_end *b = peer_end_create(test, "b");
	struct peer_end *b2 = peer_end_create(test, "b2");
	unsigned long held;

	ib_cm_peer_listen_hands_back(peer_listen_on(test, al, port));
	al->refuse_req = true;
	al->gate_req = true;
	/* a resend of b's REQ after the REJ would find a's connect */
	b->response_timeout = 20;
	peer_identity(test, a, port, port + 1, "a");
	/* a's REQ may come before b has its REJ: b does not take it */
	peer_identity_mask(test, b, port + 1, port, "b", PEER_ID_LEN + 2,
			   NULL);
	b->match[PEER_ID_LEN] = 'x';
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(b, port));
	peer_wait_in_req(test, al);
	held = peer_counter(test, "cm_peer/held");
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(a, port + 1));
	complete(&al->req_go);
	peer_end_wait(b);
	KUNIT_EXPECT_TRUE(test, b->got_rej);
	peer_wait_held(test, held);
	KUNIT_EXPECT_FALSE(test, a->got_req);
	peer_identity(test, b2, port + 1, port, "b2");
	peer_claim_held(test, a, b2, port);
}

/*
 * As peer_ib_listen_behind(), but the listener accepts b's REQ: that is
 * the pair's connection, and a's connect, which waited behind it, fails
 * at once (IB_CM_REQ_ERROR), well before its budget, its REQ never sent.
 */
static void peer_ib_listen_behind_accept(struct kunit *test)
{
	u64 port = PEER_SID + 0x420;
	struct peer_end *al = peer_end_create(test, "al");
	struct peer_end *a = peer_end_create(test, "a");
	struct peer_end *b = peer_end_create(test, "b");
	unsigned long deadline = jiffies + PEER_TIMEOUT;

	ib_cm_peer_listen_hands_back(peer_listen_on(test, al, port));
	al->hold_req = true;
	/* a budget past PEER_TIMEOUT: only an early end completes a */
	a->response_timeout = 20;
	peer_identity(test, a, port, port + 1, "a");
	peer_identity(test, b, port + 1, port, "b");
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(b, port));
	while (!READ_ONCE(al->cm_id) && time_before(jiffies, deadline))
		usleep_range(5000, 10000);
	KUNIT_ASSERT_NOT_NULL(test, READ_ONCE(al->cm_id));
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(a, port + 1));
	KUNIT_ASSERT_EQ(test, 0, peer_send_rep(al));
	peer_end_wait(a);
	KUNIT_EXPECT_EQ(test, -ETIMEDOUT, a->status);
	KUNIT_EXPECT_FALSE(test, a->got_req);
	peer_end_wait(b);
	peer_end_wait(al);
	KUNIT_EXPECT_EQ(test, 0, b->status);
	KUNIT_EXPECT_EQ(test, 0, al->status);
	peer_exchange(test, al, b);
}

/*
 * A listener of a longer key that hands back, beside ids of a shorter key
 * with the same GIDs (a user's 4-tuple beside a ULP's): s waits, its REQ
 * out.  r's REQ is at the listener; a connect of the shorter key fails
 * with -EALREADY (a REQ handed back would not reach it), one of the
 * longer key waits behind it.  Rejected, the REQ lets the longer key's
 * REQ go (s is passed over by its own key), which r2 claims.
 */
static void peer_ib_listen_behind_short(struct kunit *test)
{
	u64 p = PEER_SID + 0x430, q = p + 1, z = p + 2;
	struct peer_end *al = peer_end_create(test, "al");
	struct peer_end *s = peer_end_create(test, "s");
	struct peer_end *s2 = peer_end_create(test, "s2");
	struct peer_end *l = peer_end_create(test, "l");
	struct peer_end *r = peer_end_create(test, "r");
	struct peer_end *r2 = peer_end_create(test, "r");
	unsigned long held;

	ib_cm_peer_listen_hands_back(peer_listen_on_len(test, al, p,
							PEER_ID_LEN + 2));
	al->refuse_req = true;
	al->gate_req = true;
	r->response_timeout = 20;
	peer_identity(test, s, p, q, "s");
	peer_identity(test, s2, p, q, "s2");
	/* l's REQ may come before r has its REJ: r does not take it */
	peer_identity_mask(test, r, q, p, "r", PEER_ID_LEN + 2, NULL);
	r->match[PEER_ID_LEN] = 'x';
	peer_identity_mask(test, l, p, q, "l", PEER_ID_LEN + 2, NULL);
	l->match[PEER_ID_LEN] = 'r';
	l->match[PEER_ID_LEN + 1] = 0;
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(s, z));
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(r, p));
	peer_wait_in_req(test, al);
	KUNIT_EXPECT_EQ(test, -EALREADY, peer_send_req(s2, q));
	held = peer_counter(test, "cm_peer/held");
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(l, q));
	complete(&al->req_go);
	peer_end_wait(r);
	KUNIT_EXPECT_TRUE(test, r->got_rej);
	peer_wait_held(test, held);
	KUNIT_EXPECT_FALSE(test, s->got_req);
	peer_identity(test, r2, q, p, "r");
	peer_claim_held(test, l, r2, p);
}

/*
 * A REQ handed back by a longer key's listener is held for that key: an
 * id of a shorter key with its REQ out, which would match it, does not
 * get it, nor its resend (a user of the port does not take a ULP's REQ);
 * the longer key's id claims it.
 */
static void peer_ib_listen_hold_req_floor(struct kunit *test)
{
	u64 p = PEER_SID + 0x3f0, q = p + 1, z = p + 2;
	struct peer_end *al = peer_end_create(test, "al");
	struct peer_end *s = peer_end_create(test, "s");
	struct peer_end *l = peer_end_create(test, "l");
	struct peer_end *r = peer_end_create(test, "r");
	unsigned long held;

	peer_listen_on_len(test, al, p, PEER_ID_LEN + 2);
	al->hand_back = true;
	peer_identity(test, s, p, q, "s");
	peer_identity(test, r, q, p, "r");
	/* s's REQ goes where nobody is: s waits, sent, and matches r's */
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(s, z));
	held = peer_counter(test, "cm_peer/held");
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(r, p));
	peer_wait_held(test, held);
	KUNIT_EXPECT_TRUE(test, al->got_req);
	/* r's resend finds it held (an MRA), not s, which would match it */
	peer_wait_mra(r);
	KUNIT_EXPECT_TRUE(test, r->got_mra);
	KUNIT_EXPECT_FALSE(test, s->got_req);
	peer_identity_mask(test, l, p, q, "l", PEER_ID_LEN + 2, NULL);
	l->match[PEER_ID_LEN] = 'r';
	l->match[PEER_ID_LEN + 1] = 0;
	peer_claim_held(test, r, l, q);
	KUNIT_EXPECT_STREQ(test, l->peer_name, "r");
	KUNIT_EXPECT_FALSE(test, s->got_req);
}

/*
 * ib_send_cm_req(), not the peer call, on an id that ib_cm_peer_expect()
 * listed fails: the REQ of its key is a peer one.  The id stays idle and
 * listed; the other end's REQ is held for it, and the peer call claims it.
 */
static void peer_ib_expect_plain_req(struct kunit *test)
{
	u64 port = PEER_SID + 0x3c0;
	struct peer_end *al = peer_end_create(test, "al");
	struct peer_end *a = peer_end_create(test, "a");
	struct peer_end *b = peer_end_create(test, "b");
	struct ib_cm_req_param req;
	unsigned long held;

	peer_listen_on(test, al, port);
	peer_identity(test, a, port, port + 1, "a");
	peer_identity(test, b, port + 1, port, "b");
	KUNIT_ASSERT_EQ(test, 0, ib_cm_peer_expect(a->cm_id, &a->path.sgid,
						   &a->path.dgid, a->match));
	req = peer_req_param(a, port + 1);
	KUNIT_EXPECT_EQ(test, -EINVAL, ib_send_cm_req(a->cm_id, &req));
	KUNIT_ASSERT_EQ(test, IB_CM_IDLE, a->cm_id->state);
	held = peer_counter(test, "cm_peer/held");
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(b, port));
	peer_wait_held(test, held);
	peer_claim_held(test, b, a, port + 1);
	KUNIT_EXPECT_FALSE(test, al->got_req);
}

/*
 * ib_cm_peer_unexpect() takes the listing back: the other end's REQ of
 * the key then goes to the listener, not held for the id.
 */
static void peer_ib_unexpect(struct kunit *test)
{
	u64 port = PEER_SID + 0x3d0;
	struct peer_end *al = peer_end_create(test, "al");
	struct peer_end *a = peer_end_create(test, "a");
	struct peer_end *b = peer_end_create(test, "b");

	peer_listen_on(test, al, port);
	peer_identity(test, a, port, port + 1, "a");
	peer_identity(test, b, port + 1, port, "b");
	KUNIT_ASSERT_EQ(test, 0, ib_cm_peer_expect(a->cm_id, &a->path.sgid,
						   &a->path.dgid, a->match));
	ib_cm_peer_unexpect(a->cm_id);
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(b, port));
	peer_end_wait(al);
	peer_end_wait(b);
	KUNIT_EXPECT_TRUE(test, al->got_req);
	KUNIT_EXPECT_EQ(test, 0, b->status);
	KUNIT_EXPECT_FALSE(test, a->got_req);
	peer_exchange(test, al, b);
}

/* Without a listener any more, REQs are held for a peer id again. */
static void peer_ib_listen_gone(struct kunit *test)
{
	u64 port = PEER_SID + 0x330;
	struct peer_end *al = peer_end_create(test, "al");
	struct peer_end *a = peer_end_create(test, "a");
	struct peer_end *b = peer_end_create(test, "b");
	struct ib_cm_id *listen;
	unsigned long held;

	listen = peer_listen_on(test, al, port);
	peer_identity(test, a, port, port + 1, "a");
	peer_identity(test, b, port + 1, port, "b");
	kunit_release_action(test, peer_unlisten, listen);
	held = peer_counter(test, "cm_peer/held");
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(b, port));
	peer_wait_held(test, held);
	KUNIT_EXPECT_FALSE(test, al->got_req);
	peer_claim_held(test, b, a, port + 1);
}

/*
 * The listener goes while a REQ is delivered through it: its
 * ib_destroy_cm_id() waits for the event, as for any listener; the
 * handler then refuses the REQ and the CM destroys the new id, which held
 * the last share of the service ID but one.
 */
static void peer_ib_listen_destroy_during_req(struct kunit *test)
{
	u64 port = PEER_SID + 0x340;
	struct peer_end *al = peer_end_create(test, "al");
	struct peer_end *b = peer_end_create(test, "b");
	unsigned long deadline = jiffies + PEER_TIMEOUT;
	struct ib_cm_id *listen;

	listen = peer_listen_on(test, al, port);
	al->refuse_req = true;
	al->slow_req_ms = 300;
	peer_identity(test, b, port + 1, port, "b");
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(b, port));
	while (!READ_ONCE(al->in_req) && time_before(jiffies, deadline))
		usleep_range(5000, 10000);
	KUNIT_ASSERT_TRUE(test, READ_ONCE(al->in_req));
	kunit_release_action(test, peer_unlisten, listen);
	KUNIT_EXPECT_TRUE_MSG(test, READ_ONCE(al->req_refused),
			      "the listener went before its REQ event ended");
	peer_end_wait(b);
	KUNIT_EXPECT_TRUE(test, b->got_rej);
	KUNIT_EXPECT_NE(test, IB_CM_ESTABLISHED, b->cm_id->state);
}

/*
 * Teardown at each step of a collision.  Each end that stays must learn
 * of the failure in bounded time; KASAN, lockdep and kmemleak watch the
 * rest (checked by the test runner on the whole boot).
 */

/* a's REQ is out, a goes away before b has sent its own. */
static void peer_teardown_before_match(struct kunit *test)
{
	struct peer_end *a = peer_end_create(test, "a");
	struct peer_end *b = peer_end_create(test, "b");

	KUNIT_ASSERT_EQ(test, 0, peer_send_req(a, PEER_SID + 0x200));
	ib_destroy_cm_id(a->cm_id);
	a->cm_id = NULL;
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(b, PEER_SID + 0x200));
	peer_end_wait(b);
	KUNIT_EXPECT_LT(test, b->status, 0);
	KUNIT_EXPECT_NE(test, IB_CM_ESTABLISHED, b->cm_id->state);
}

/* The passive end fails between the match and its REP. */
static void peer_teardown_between_match_and_rep(struct kunit *test)
{
	struct peer_end *a = peer_end_create(test, "a");
	struct peer_end *b = peer_end_create(test, "b");
	struct peer_end *active;

	a->refuse_req = true;
	b->refuse_req = true;
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(a, PEER_SID + 0x201));
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(b, PEER_SID + 0x201));
	peer_end_wait(a);
	peer_end_wait(b);
	KUNIT_EXPECT_NE_MSG(test, a->got_req, b->got_req,
			    "exactly one end must turn passive");
	active = a->got_req ? b : a;
	KUNIT_EXPECT_EQ(test, -ECANCELED, (active == a ? b : a)->status);
	KUNIT_EXPECT_LT(test, active->status, 0);
	KUNIT_EXPECT_NE(test, IB_CM_ESTABLISHED, active->cm_id->state);
	kunit_info(test, "active end: status %d, REJ %d (reason %d)\n",
		   active->status, active->got_rej, active->rej_reason);
}

/* b holds a's REQ and goes away: a is rejected when the hold ends. */
static void peer_teardown_holder_during_hold(struct kunit *test)
{
	struct peer_end *a = peer_end_create(test, "a");
	struct peer_end *b = peer_end_create(test, "b");

	peer_hold_at(test, a, b, PEER_SID + 0x202);
	ib_destroy_cm_id(b->cm_id);
	b->cm_id = NULL;
	peer_end_wait(a);
	KUNIT_EXPECT_LT(test, a->status, 0);
	KUNIT_EXPECT_NE(test, IB_CM_ESTABLISHED, a->cm_id->state);
	kunit_info(test, "held end: status %d, REJ %d (reason %d)\n",
		   a->status, a->got_rej, a->rej_reason);
}

/*
 * a's REQ is held by b and a goes away: a's CM rejects its REQ, b's CM
 * takes the held REQ out, and b's later connect is refused by a's CM (no
 * peer bound there any more) instead of answering a dead end.
 */
static void peer_teardown_held_during_hold(struct kunit *test)
{
	struct peer_end *a = peer_end_create(test, "a");
	struct peer_end *b = peer_end_create(test, "b");
	unsigned long withdrawn = peer_counter(test, "cm_peer/withdrawn");

	peer_hold_at(test, a, b, PEER_SID + 0x203);
	ib_destroy_cm_id(a->cm_id);
	a->cm_id = NULL;
	msleep(200);
	KUNIT_EXPECT_EQ(test, withdrawn + 1,
			peer_counter(test, "cm_peer/withdrawn"));
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(b, PEER_SID + 0x203));
	peer_end_wait(b);
	KUNIT_EXPECT_LT(test, b->status, 0);
	KUNIT_EXPECT_NE(test, IB_CM_ESTABLISHED, b->cm_id->state);
	KUNIT_EXPECT_FALSE(test, b->got_req);
	KUNIT_EXPECT_TRUE(test, b->got_rej);
	KUNIT_EXPECT_EQ(test, IB_CM_REJ_INVALID_SERVICE_ID, b->rej_reason);
	kunit_info(test, "holder: status %d, REJ %d (reason %d)\n",
		   b->status, b->got_rej, b->rej_reason);
}

/*
 * The window of peer REQs a port has out, cut to one: x's REQ, held at y,
 * fills it for @rto_ms (0: the RTO estimated), and the REQs of a and b,
 * connecting to each other, wait.
 */
static void peer_window_fill(struct kunit *test, struct peer_end *x,
			     struct peer_end *y, struct peer_end *a,
			     struct peer_end *b, u64 sid, unsigned int rto_ms)
{
	unsigned long deferred = peer_counter(test, "cm_peer/deferred");

	peer_set_window(test, x->dev, 1, rto_ms);
	peer_hold_at(test, x, y, sid);
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(a, sid + 1));
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(b, sid + 1));
	KUNIT_EXPECT_EQ(test, deferred + 2,
			peer_counter(test, "cm_peer/deferred"));
}

/* The window opened: a's REQ went, and b gave way to it, unarbitrated. */
static void peer_window_opened(struct kunit *test, struct peer_end *a,
			       struct peer_end *b)
{
	peer_end_wait(a);
	peer_end_wait(b);
	peer_expect_one_connection(test, a, b);
	KUNIT_EXPECT_TRUE(test, b->got_req);
	peer_exchange(test, a, b);
}

/* REQs completed (cm_tx_msgs/req counts them as their MADs complete) */
static unsigned long peer_reqs_sent(struct kunit *test)
{
	msleep(100);
	return peer_counter(test, "cm_tx_msgs/req");
}

/* x's REQ is answered: the window opens at once. */
static void peer_ib_window_answered(struct kunit *test)
{
	struct peer_end *x = peer_end_create(test, "x");
	struct peer_end *y = peer_end_create(test, "y");
	struct peer_end *a = peer_end_create(test, "a");
	struct peer_end *b = peer_end_create(test, "b");
	unsigned long reqs = peer_reqs_sent(test);

	/* x's slot outlasts the test: only REPs open the window */
	peer_window_fill(test, x, y, a, b, PEER_SID + 0x300, 60000);
	msleep(300);
	KUNIT_EXPECT_EQ(test, 1, a->status);
	KUNIT_EXPECT_EQ(test, 1, b->status);
	peer_claim_held(test, x, y, PEER_SID + 0x300);
	peer_window_opened(test, a, b);
	/* x's REQ and a's: b's was never sent */
	KUNIT_EXPECT_EQ(test, reqs + 2, peer_reqs_sent(test));
}

/*
 * x's REQ is not answered: the window opens after the port's RTO (1 s at
 * most), long before x's first timeout (4.4 s) would bring an MRA.
 */
static void peer_ib_window_round_trip(struct kunit *test)
{
	struct peer_end *x = peer_end_create(test, "x");
	struct peer_end *y = peer_end_create(test, "y");
	struct peer_end *a = peer_end_create(test, "a");
	struct peer_end *b = peer_end_create(test, "b");

	x->response_timeout = 20;
	peer_window_fill(test, x, y, a, b, PEER_SID + 0x310, 0);
	peer_window_opened(test, a, b);
	KUNIT_EXPECT_FALSE(test, x->got_mra);
	peer_claim_held(test, x, y, PEER_SID + 0x310);
}

/* An id destroyed while its REQ waits: no REJ, and nothing kept waiting. */
static void peer_ib_window_destroy(struct kunit *test)
{
	struct peer_end *x = peer_end_create(test, "x");
	struct peer_end *y = peer_end_create(test, "y");
	struct peer_end *a = peer_end_create(test, "a");
	struct peer_end *b = peer_end_create(test, "b");
	unsigned long rejs;

	peer_window_fill(test, x, y, a, b, PEER_SID + 0x320, 60000);
	rejs = peer_counter(test, "cm_tx_msgs/rej");
	ib_destroy_cm_id(a->cm_id);
	a->cm_id = NULL;
	msleep(100);
	KUNIT_EXPECT_EQ(test, rejs, peer_counter(test, "cm_tx_msgs/rej"));
	peer_claim_held(test, x, y, PEER_SID + 0x320);
	/* b's REQ goes and finds nobody: rejected once its budget is out */
	peer_end_wait(b);
	KUNIT_EXPECT_LT(test, b->status, 0);
	KUNIT_EXPECT_FALSE(test, b->got_req);
}

/*
 * x's path claims a packet lifetime of 2.4 hours (31, as a user may set it
 * with RDMA_OPTION_IB_PATH): its REQ still leaves the window after an RTO
 * of ours, 1 s at most, and the REQs waiting behind it go.
 */
static void peer_ib_window_lifetime(struct kunit *test)
{
	struct peer_end *x = peer_end_create(test, "x");
	struct peer_end *y = peer_end_create(test, "y");
	struct peer_end *a = peer_end_create(test, "a");
	struct peer_end *b = peer_end_create(test, "b");

	x->path.packet_life_time = 31;
	peer_window_fill(test, x, y, a, b, PEER_SID + 0x340, 0);
	peer_window_opened(test, a, b);
}

/*
 * A REQ waits for the window, towards a stock listener: no REQ comes back
 * to give way to.  It ends with its budget, as a REQ that timed out.
 */
static void peer_ib_window_expires(struct kunit *test)
{
	u64 port = PEER_SID + 0x350;
	struct peer_end *x = peer_end_create(test, "x");
	struct peer_end *y = peer_end_create(test, "y");
	struct peer_end *srv = peer_end_create(test, "server");
	struct peer_end *a = peer_end_create(test, "a");
	unsigned long start;
	unsigned int ms, budget;

	peer_set_window(test, x->dev, 1, 60000);
	peer_hold_at(test, x, y, port + 1);
	KUNIT_ASSERT_EQ(test, 0, ib_cm_listen(srv->cm_id, cpu_to_be64(port)));
	a->no_retries = true;
	a->response_timeout = 12;
	budget = peer_req_budget_ms(&(struct ib_cm_req_param){
		.primary_path = &a->path, .remote_cm_response_timeout = 12 });
	start = jiffies;
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(a, port));
	peer_end_wait(a);
	ms = jiffies_to_msecs(jiffies - start);
	KUNIT_EXPECT_EQ(test, -ETIMEDOUT, a->status);
	KUNIT_EXPECT_FALSE(test, srv->got_req);
	KUNIT_EXPECT_GE(test, ms + 20, budget);
	KUNIT_EXPECT_LT_MSG(test, ms, budget + 1000,
			    "ended after %u ms, budget %u ms", ms, budget);
	kunit_info(test, "queued REQ ended after %u ms (budget %u ms)\n",
		   ms, budget);
	peer_claim_held(test, x, y, port + 1);
}

/*
 * @n ends of @owner, bound from @own on, send peer REQs to @sid, where they
 * are held unanswered (not resent in a case); returns the last.
 */
static struct peer_end *peer_send_held(struct kunit *test, u64 sid, u64 own,
				       unsigned int n, unsigned long owner,
				       const char *name)
{
	struct peer_end *e = NULL;
	unsigned int i;

	for (i = 0; i < n; i++) {
		e = peer_end_create(test, name);
		peer_identity(test, e, own + i, sid, name);
		e->response_timeout = 20;
		KUNIT_ASSERT_EQ(test, 0, ib_cm_peer_set_owner(e->cm_id, owner));
		KUNIT_ASSERT_EQ(test, 0, peer_send_req(e, sid));
	}
	return e;
}

/*
 * One owner's flood of REQs, held at the other end unanswered, fills the
 * window and queues behind it.  Another owner's REQ waits a turn of the
 * flood's flow, not its whole queue.
 */
#define PEER_FLOOD		12
#define PEER_FAIR_RTO_MS	300

static void peer_ib_window_fair(struct kunit *test)
{
	u64 port = PEER_SID + 0x360;
	struct peer_end *h = peer_end_create(test, "h");
	struct peer_end *a = peer_end_create(test, "a");
	struct peer_end *b = peer_end_create(test, "b");
	unsigned long flooder = 1, owner = 2, start;
	unsigned int ms;

	/* two owners, as a user and root: flows apart */
	while (cm_peer_test_flow(h->dev, owner) ==
	       cm_peer_test_flow(h->dev, flooder))
		owner++;
	peer_set_window(test, h->dev, 1, PEER_FAIR_RTO_MS);
	/* h is bound and never connects: the flood's REQs are held */
	peer_identity(test, h, port, port + 1, "h");
	peer_send_held(test, port, port + 0x10, PEER_FLOOD, flooder, "x");
	peer_identity(test, a, port + 2, port + 3, "a");
	peer_identity(test, b, port + 3, port + 2, "b");
	KUNIT_ASSERT_EQ(test, 0, ib_cm_peer_set_owner(a->cm_id, owner));
	KUNIT_ASSERT_EQ(test, 0, ib_cm_peer_set_owner(b->cm_id, owner));
	start = jiffies;
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(a, port + 3));
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(b, port + 2));
	peer_end_wait(a);
	peer_end_wait(b);
	ms = jiffies_to_msecs(jiffies - start);
	peer_expect_one_connection(test, a, b);
	/* a turn of the flood, then a's REQ, which b gives way to */
	KUNIT_EXPECT_LT_MSG(test, ms, 4 * PEER_FAIR_RTO_MS,
			    "connected after %u ms behind %u queued REQs", ms,
			    PEER_FLOOD - 1);
	kunit_info(test, "connected after %u ms, %u REQs of another owner queued\n",
		   ms, PEER_FLOOD - 1);
}

/*
 * One owner's REQs to an end that does not answer (bound, never connects)
 * fill its window and queue.  The owner's REQ to another destination, a
 * listener, waits a turn of theirs, not all of them.
 */
#define PEER_DEST_HELD		8
#define PEER_DEST_RTO_MS	300

/*
 * An owner, and a service ID @sid on, whose REQs queue after the owner's
 * to @held in its flow: @x sent a REQ, and its address stands for every
 * end's, all ends being one.
 */
static u64 peer_dest_after(struct kunit *test, struct peer_end *x, u64 held,
			   u64 sid, unsigned long *owner)
{
	unsigned int i;
	int dx;

	for (; *owner < 1000; ++*owner) {
		dx = cm_peer_test_dest(x->cm_id, held, *owner);
		KUNIT_ASSERT_GE(test, dx, 0);
		for (i = 0; i < 64; i++)
			if (cm_peer_test_dest(x->cm_id, sid + i, *owner) > dx)
				return sid + i;
	}
	KUNIT_FAIL(test, "no owner with a queue after another");
	return 0;
}

static void peer_ib_window_dests(struct kunit *test)
{
	u64 port = PEER_SID + 0x3a0, sid;
	struct peer_end *h = peer_end_create(test, "h");
	struct peer_end *al = peer_end_create(test, "al");
	struct peer_end *x, *y;
	unsigned long owner = 7, start;
	unsigned int ms;

	/* a window of 1, each flow's queues taken from the first on */
	peer_set_window(test, h->dev, 1, PEER_DEST_RTO_MS);
	peer_identity(test, h, port, port + 1, "h");
	/* the first REQ out, the others queued in their owner's flow */
	x = peer_send_held(test, port, port + 0x10, 1, 1, "x");
	sid = peer_dest_after(test, x, port, port + 0x40, &owner);
	x = peer_send_held(test, port, port + 0x11, PEER_DEST_HELD - 1, owner,
			   "x");
	peer_listen_on(test, al, sid);
	y = peer_end_create(test, "y");
	peer_identity(test, y, port + 0x20, sid, "y");
	KUNIT_ASSERT_EQ(test, 0, ib_cm_peer_set_owner(y->cm_id, owner));
	start = jiffies;
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(y, sid));
	peer_end_wait(y);
	ms = jiffies_to_msecs(jiffies - start);
	KUNIT_EXPECT_EQ(test, 0, y->status);
	KUNIT_EXPECT_TRUE(test, y->got_rep);
	/* x's queue's turn, then y's */
	KUNIT_EXPECT_LT_MSG(test, ms, 4 * PEER_DEST_RTO_MS,
			    "sent after %u ms behind %u REQs to another end",
			    ms, PEER_DEST_HELD - 1);
	kunit_info(test, "connected after %u ms, %u REQs to another end queued (queues %d, %d)\n",
		   ms, PEER_DEST_HELD - 1,
		   cm_peer_test_dest(x->cm_id, port, owner),
		   cm_peer_test_dest(y->cm_id, sid, owner));
}

/*
 * Each owner's flow has a window that follows the answers: REQs held
 * unanswered past the RTO close it (halved once per RTO), REQs answered
 * at once (REJ: nothing bound there) open it.
 */
#define PEER_ADAPT_REQS		8
#define PEER_ADAPT_RTO_MS	100

static void peer_ib_window_adapts(struct kunit *test)
{
	u64 port = PEER_SID + 0x380;
	struct peer_end *h = peer_end_create(test, "h");
	unsigned long lossy = 100, answered = 200;
	unsigned int i, lossy0, answered0, halved;
	struct peer_end *e;

	while (cm_peer_test_flow(h->dev, answered) ==
	       cm_peer_test_flow(h->dev, lossy))
		answered++;
	peer_set_window(test, h->dev, 0, PEER_ADAPT_RTO_MS);
	lossy0 = cm_peer_test_cwnd(h->dev, lossy);
	answered0 = cm_peer_test_cwnd(h->dev, answered);
	/* h is bound and never connects: lossy's REQs are held, unanswered */
	peer_identity(test, h, port, port + 1, "h");
	peer_send_held(test, port, port + 0x10, PEER_ADAPT_REQS, lossy, "lossy");
	msleep(3 * PEER_ADAPT_RTO_MS);
	/* the first of these REQs finds lossy's REQs past their RTO */
	for (i = 0; i < PEER_ADAPT_REQS; i++) {
		e = peer_end_create(test, "answered");
		e->no_retries = true;
		KUNIT_ASSERT_EQ(test, 0,
				ib_cm_peer_bind(e->cm_id,
						cpu_to_be64(port + 0x20 + i), 0));
		KUNIT_ASSERT_EQ(test, 0, ib_cm_peer_set_owner(e->cm_id,
							      answered));
		KUNIT_ASSERT_EQ(test, 0, peer_send_req(e, port + 0x40 + i));
		peer_end_wait(e);
		KUNIT_EXPECT_TRUE(test, e->got_rej);
	}
	halved = max(lossy0 / 2, 2U);
	KUNIT_EXPECT_EQ(test, halved, cm_peer_test_cwnd(h->dev, lossy));
	KUNIT_EXPECT_GT(test, cm_peer_test_cwnd(h->dev, answered), answered0);
	kunit_info(test, "cwnd: lossy %u -> %u, answered %u -> %u\n", lossy0,
		   cm_peer_test_cwnd(h->dev, lossy), answered0,
		   cm_peer_test_cwnd(h->dev, answered));
}

/*
 * A client/server REQ to a peer service ID with no listener is rejected at
 * once, as on a service ID nobody bound: only peer REQs are held.
 */
static void peer_ib_client_req_rejected(struct kunit *test)
{
	struct peer_end *b = peer_end_create(test, "b");
	struct peer_end *cli = peer_end_create(test, "client");
	struct ib_cm_req_param req = peer_req_param(cli, PEER_SID + 0x320);
	unsigned long start;
	unsigned int ms;

	KUNIT_ASSERT_EQ(test, 0, ib_cm_peer_bind(b->cm_id,
						 cpu_to_be64(PEER_SID + 0x320),
						 0));
	start = jiffies;
	KUNIT_ASSERT_EQ(test, 0, ib_send_cm_req(cli->cm_id, &req));
	peer_end_wait(cli);
	ms = jiffies_to_msecs(jiffies - start);
	KUNIT_EXPECT_TRUE(test, cli->got_rej);
	KUNIT_EXPECT_EQ(test, IB_CM_REJ_INVALID_SERVICE_ID, cli->rej_reason);
	KUNIT_EXPECT_LT_MSG(test, ms, peer_req_budget_ms(&req) / 4,
			    "REJ after %u ms: the REQ was held", ms);
	KUNIT_EXPECT_FALSE(test, b->got_req);
}

/*
 * A listen and a peer bind of one service ID: the client/server REQ goes
 * to the listener, the peer REQ to the peer id.
 */
static void peer_ib_listen_beside_peer(struct kunit *test)
{
	u64 port = PEER_SID + 0x330;
	struct peer_end *srv = peer_end_create(test, "server");
	struct peer_end *cli = peer_end_create(test, "client");
	struct peer_end *a = peer_end_create(test, "a");
	struct peer_end *b = peer_end_create(test, "b");
	struct ib_cm_req_param req = peer_req_param(cli, port);
	struct ib_cm_id *listen_id = srv->cm_id;

	peer_identity(test, a, port, port + 1, "a");
	peer_identity(test, b, port + 1, port, "b");
	KUNIT_ASSERT_EQ(test, 0, ib_cm_listen(listen_id, cpu_to_be64(port)));
	KUNIT_ASSERT_EQ(test, 0, ib_send_cm_req(cli->cm_id, &req));
	peer_end_wait(cli);
	KUNIT_EXPECT_EQ(test, 0, cli->status);
	KUNIT_EXPECT_TRUE(test, srv->got_req);
	KUNIT_EXPECT_FALSE(test, a->got_req);

	/* the listener stays: the peer REQs pass it by */
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(a, port + 1));
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(b, port));
	peer_end_wait(a);
	peer_end_wait(b);
	peer_expect_one_connection(test, a, b);
	/* the listener's new id is the server's now: drop the listener */
	if (srv->cm_id != listen_id)
		ib_destroy_cm_id(listen_id);
}

static bool peer_takes_none(struct ib_cm_id *listen_id,
			    const struct ib_gid_attr *gid_attr,
			    const void *private_data)
{
	return false;
}

/*
 * A listener that does not take a REQ (one for another address of the
 * port): the REQ is held for the peer id, which connects late and claims
 * it.
 */
static void peer_ib_listen_filtered(struct kunit *test)
{
	u64 port = PEER_SID + 0x340;
	struct peer_end *a = peer_end_create(test, "a");
	struct peer_end *b = peer_end_create(test, "b");
	unsigned long held0 = peer_counter(test, "cm_peer/held");
	struct ib_cm_id *listen;

	listen = ib_cm_insert_peer_listen(a->dev, peer_listen_handler,
					  peer_takes_none, NULL,
					  cpu_to_be64(port), PEER_ID_LEN, NULL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(listen));
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, peer_unlisten, listen));
	peer_identity(test, b, port + 1, port, "b");
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(b, port));
	peer_wait_held(test, held0);
	peer_identity(test, a, port, port + 1, "a");
	peer_claim_held(test, b, a, port + 1);
}

static struct kunit_case cm_peer_ib_test_cases[] = {
	KUNIT_CASE_SLOW(peer_ib_collision),
	KUNIT_CASE_SLOW(peer_ib_early_req),
	KUNIT_CASE_SLOW(peer_ib_held_resent),
	KUNIT_CASE_SLOW(peer_ib_held_no_retries),
	KUNIT_CASE_SLOW(peer_ib_shared_sid),
	KUNIT_CASE_SLOW(peer_ib_match_mask),
	KUNIT_CASE_SLOW(peer_ib_ring_order),
	KUNIT_CASE_SLOW(peer_ib_late_bind),
	KUNIT_CASE_SLOW(peer_ib_late_bind_rej_first),
	KUNIT_CASE_SLOW(peer_ib_never_bound),
	KUNIT_CASE_SLOW(peer_ib_conflicts),
	KUNIT_CASE_SLOW(peer_ib_destroy_during_collision),
	KUNIT_CASE_SLOW(peer_ib_client_server),
	KUNIT_CASE_SLOW(peer_ib_listen_takes),
	KUNIT_CASE_SLOW(peer_ib_listen_collision),
	KUNIT_CASE_SLOW(peer_ib_listen_pending),
	KUNIT_CASE_SLOW(peer_ib_listen_hold_req),
	KUNIT_CASE_SLOW(peer_ib_listen_behind),
	KUNIT_CASE_SLOW(peer_ib_listen_behind_rej),
	KUNIT_CASE_SLOW(peer_ib_listen_behind_accept),
	KUNIT_CASE_SLOW(peer_ib_listen_behind_short),
	KUNIT_CASE_SLOW(peer_ib_listen_hold_req_floor),
	KUNIT_CASE_SLOW(peer_ib_expect_plain_req),
	KUNIT_CASE_SLOW(peer_ib_unexpect),
	KUNIT_CASE_SLOW(peer_ib_listen_gone),
	KUNIT_CASE_SLOW(peer_ib_listen_destroy_during_req),
	KUNIT_CASE_SLOW(peer_ib_client_req_rejected),
	KUNIT_CASE_SLOW(peer_ib_listen_beside_peer),
	KUNIT_CASE_SLOW(peer_ib_listen_filtered),
	KUNIT_CASE_SLOW(peer_teardown_before_match),
	KUNIT_CASE_SLOW(peer_teardown_between_match_and_rep),
	KUNIT_CASE_SLOW(peer_teardown_holder_during_hold),
	KUNIT_CASE_SLOW(peer_teardown_held_during_hold),
	KUNIT_CASE_SLOW(peer_ib_window_answered),
	KUNIT_CASE_SLOW(peer_ib_window_round_trip),
	KUNIT_CASE_SLOW(peer_ib_window_destroy),
	KUNIT_CASE_SLOW(peer_ib_window_lifetime),
	KUNIT_CASE_SLOW(peer_ib_window_expires),
	KUNIT_CASE_SLOW(peer_ib_window_fair),
	KUNIT_CASE_SLOW(peer_ib_window_dests),
	KUNIT_CASE_SLOW(peer_ib_window_adapts),
	{}
};

static struct kunit_suite cm_peer_ib_test_suite = {
	.name = "cm_peer_ib",
	.suite_init = cm_peer_ib_suite_init,
	.test_cases = cm_peer_ib_test_cases,
};

kunit_test_suite(cm_peer_ib_test_suite);

MODULE_DESCRIPTION("KUnit suite cm_peer_ib: IB CM peer-to-peer over an RDMA device");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
MODULE_LICENSE("Dual BSD/GPL");
