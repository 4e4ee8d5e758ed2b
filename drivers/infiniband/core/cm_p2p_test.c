// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * KUnit tests for the IB CM peer-to-peer engine (cm_p2p.c): the arbiter,
 * the index of a peer service ID and the queue of held REQs, each against
 * a reference written independently of the implementation.
 */

#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/prandom.h>

#include "cm_p2p.h"

/* Arbiter. */

struct p2p_arb_case {
	const char *name;
	u64 lguid;
	u32 lqpn;
	u64 rguid;
	u32 rqpn;
	int expect;
};

#define GUID_A	0x0002c903000e1a01ULL
#define GUID_B	0x0002c903000e1a02ULL

static const struct p2p_arb_case p2p_arb_cases[] = {
	{ "greater guid is active", GUID_B, 0x11, GUID_A, 0x22, CM_P2P_ACTIVE },
	{ "smaller guid is passive", GUID_A, 0x22, GUID_B, 0x11,
	  CM_P2P_PASSIVE },
	{ "guid decides before qpn", GUID_B, 0x1, GUID_A, 0xffffff,
	  CM_P2P_ACTIVE },
	{ "equal guid: greater qpn active", GUID_A, 0x12, GUID_A, 0x11,
	  CM_P2P_ACTIVE },
	{ "equal guid: smaller qpn passive", GUID_A, 0x11, GUID_A, 0x12,
	  CM_P2P_PASSIVE },
	{ "qpn is 24 bits", GUID_A, 0x01000011, GUID_A, 0x12, CM_P2P_PASSIVE },
	{ "own req is an error", GUID_A, 0x11, GUID_A, 0x11, -ELOOP },
	{ "own req, qpn upper bits", GUID_A, 0xff000011, GUID_A, 0x11, -ELOOP },
	{ "guid is unsigned", 0x8000000000000000ULL, 1, 0x7fffffffffffffffULL,
	  2, CM_P2P_ACTIVE },
	{ "first byte decides", 0x01ffffffffffffffULL, 1, 0x0200000000000000ULL,
	  2, CM_P2P_PASSIVE },
};

static void p2p_arb_case_desc(const struct p2p_arb_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(p2p_arb, p2p_arb_cases, p2p_arb_case_desc);

static void p2p_arbiter_cases(struct kunit *test)
{
	const struct p2p_arb_case *c = test->param_value;
	struct cm_p2p_ident l = { cpu_to_be64(c->lguid), c->lqpn };
	struct cm_p2p_ident r = { cpu_to_be64(c->rguid), c->rqpn };

	KUNIT_EXPECT_EQ(test, c->expect, cm_p2p_arbitrate(&l, &r));
}

/*
 * Reference order: the REQ identity as an 88-bit big-endian number, the
 * CA GUID's bytes as sent, then the 24-bit QPN.
 */
static int p2p_ref_cmp(const struct cm_p2p_ident *a,
		       const struct cm_p2p_ident *b)
{
	u8 ka[11], kb[11];
	int i;

	memcpy(ka, &a->ca_guid, 8);
	memcpy(kb, &b->ca_guid, 8);
	for (i = 0; i < 3; i++) {
		ka[8 + i] = a->qpn >> (16 - 8 * i);
		kb[8 + i] = b->qpn >> (16 - 8 * i);
	}
	for (i = 0; i < 11; i++)
		if (ka[i] != kb[i])
			return ka[i] < kb[i] ? -1 : 1;
	return 0;
}

static unsigned int p2p_check_pair(struct kunit *test,
				   const struct cm_p2p_ident *a,
				   const struct cm_p2p_ident *b)
{
	int ab = cm_p2p_arbitrate(a, b), ba = cm_p2p_arbitrate(b, a);
	int ref = p2p_ref_cmp(a, b);

	if (!ref) {
		KUNIT_EXPECT_EQ(test, -ELOOP, ab);
		KUNIT_EXPECT_EQ(test, -ELOOP, ba);
		return 0;
	}
	KUNIT_EXPECT_EQ(test, ref > 0 ? CM_P2P_ACTIVE : CM_P2P_PASSIVE, ab);
	KUNIT_EXPECT_EQ(test, ref > 0 ? CM_P2P_PASSIVE : CM_P2P_ACTIVE, ba);
	return 1;
}

static const u64 p2p_guids[] = {
	0, ~0ULL, GUID_A, GUID_B, 0x0002c903000e1afeULL, 0x0002c903000e1affULL,
	0x7002c903000e1affULL, 0x8002c903000e1aff, 0x0102030405060708ULL,
};

static const u32 p2p_qpns[] = {
	0x1, 0x2, 0x11, 0x12, 0x7fffff, 0x800000, 0xfffffe, 0xffffff,
	0x01000001,	/* == 0x1 once masked to 24 bits */
};

static void p2p_arbiter_exhaustive(struct kunit *test)
{
	const unsigned int ng = ARRAY_SIZE(p2p_guids), nq = ARRAY_SIZE(p2p_qpns);
	struct cm_p2p_ident *id;
	unsigned int i, j, pairs = 0, selfs = 0;

	id = kunit_kcalloc(test, ng * nq, sizeof(*id), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, id);
	for (i = 0; i < ng * nq; i++) {
		id[i].ca_guid = cpu_to_be64(p2p_guids[i / nq]);
		id[i].qpn = p2p_qpns[i % nq];
	}
	for (i = 0; i < ng * nq; i++)
		for (j = i; j < ng * nq; j++) {
			if (p2p_check_pair(test, &id[i], &id[j]))
				pairs++;
			else
				selfs++;
		}
	/* every identity with itself, plus qpn 0x1 vs 0x01000001 per guid */
	KUNIT_EXPECT_EQ(test, ng * nq + ng, selfs);
	KUNIT_EXPECT_EQ(test, ng * nq * (ng * nq + 1) / 2 - selfs, pairs);
}

static void p2p_arbiter_random(struct kunit *test)
{
	struct cm_p2p_ident a, b;
	struct rnd_state rnd;
	unsigned int i, decided = 0;

	prandom_seed_state(&rnd, 0x5eed);
	for (i = 0; i < 20000; i++) {
		prandom_bytes_state(&rnd, &a.ca_guid, sizeof(a.ca_guid));
		b.ca_guid = a.ca_guid;
		/* mostly equal GUIDs, so the QPN rule is exercised too */
		if (i % 4 == 0)
			prandom_bytes_state(&rnd, &b.ca_guid, sizeof(b.ca_guid));
		else if (i % 4 == 1)
			b.ca_guid ^= cpu_to_be64(1ULL << (prandom_u32_state(&rnd) % 64));
		a.qpn = prandom_u32_state(&rnd);
		b.qpn = i % 8 ? prandom_u32_state(&rnd) & 0xff : a.qpn;
		a.qpn &= i % 3 ? 0xff : 0xffffffff;
		decided += p2p_check_pair(test, &a, &b);
	}
	KUNIT_EXPECT_GT(test, decided, 15000U);
}

/* Index and queue. */

#define P2P_MATCH	4
#define P2P_KEYS	12	/* few keys: many equal ones */

/* Key number @k: GIDs and match bytes, each part differing for some k. */
static void p2p_key(struct cm_peer_key *key, u8 *match, unsigned int k)
{
	memset(key, 0, sizeof(*key));
	key->local_gid.raw[15] = k % 2;
	key->remote_gid.raw[0] = (k / 2) % 2;
	memset(match, 0, P2P_MATCH);
	match[P2P_MATCH - 1] = k / 4;
	key->match = match;
}

struct p2p_held {
	struct cm_peer_held held;
	u8 match[P2P_MATCH];
	unsigned int k, n;	/* key number, arrival number */
	bool in;
};

static struct p2p_held *p2p_held_new(struct kunit *test, unsigned int k,
				     u32 comm_id, unsigned int n)
{
	struct p2p_held *h = kunit_kzalloc(test, sizeof(*h), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, h);
	p2p_key(&h->held.entry.key, h->match, k);
	h->held.remote_comm_id = cpu_to_be32(comm_id);
	h->held.req = h;
	h->k = k;
	h->n = n;
	return h;
}

static void p2p_index_basics(struct kunit *test)
{
	struct cm_peer_index idx;
	struct cm_peer_entry a, b, c;
	struct cm_peer_key key;
	u8 ma[P2P_MATCH], mb[P2P_MATCH], mc[P2P_MATCH], mk[P2P_MATCH];

	cm_peer_index_init(&idx, P2P_MATCH);
	KUNIT_EXPECT_TRUE(test, cm_peer_index_empty(&idx));
	p2p_key(&a.key, ma, 5);
	p2p_key(&b.key, mb, 5);
	p2p_key(&c.key, mc, 6);
	cm_peer_add(&idx, CM_PEER_WAITING, &a);
	cm_peer_add(&idx, CM_PEER_WAITING, &c);
	cm_peer_add(&idx, CM_PEER_WAITING, &b);
	KUNIT_EXPECT_FALSE(test, cm_peer_index_empty(&idx));
	p2p_key(&key, mk, 5);
	KUNIT_EXPECT_PTR_EQ(test, &a, cm_peer_first(&idx, CM_PEER_WAITING, &key));
	KUNIT_EXPECT_PTR_EQ(test, &b, cm_peer_next(&idx, &a));
	KUNIT_EXPECT_NULL(test, cm_peer_next(&idx, &b));
	KUNIT_EXPECT_NULL(test, cm_peer_first(&idx, CM_PEER_HELD, &key));
	/* one byte of the match blob, the last one, tells keys apart */
	mk[P2P_MATCH - 1] ^= 0x80;
	KUNIT_EXPECT_NULL(test, cm_peer_first(&idx, CM_PEER_WAITING, &key));
	cm_peer_del(&idx, CM_PEER_WAITING, &a);
	KUNIT_EXPECT_TRUE(test, RB_EMPTY_NODE(&a.node));
	p2p_key(&key, mk, 5);
	KUNIT_EXPECT_PTR_EQ(test, &b, cm_peer_first(&idx, CM_PEER_WAITING, &key));
	cm_peer_del(&idx, CM_PEER_WAITING, &b);
	cm_peer_del(&idx, CM_PEER_WAITING, &c);
	KUNIT_EXPECT_TRUE(test, cm_peer_index_empty(&idx));
	/* a listener's REQ alone keeps the index in use */
	cm_peer_add(&idx, CM_PEER_PENDING, &a);
	KUNIT_EXPECT_FALSE(test, cm_peer_index_empty(&idx));
	KUNIT_EXPECT_PTR_EQ(test, &a, cm_peer_first(&idx, CM_PEER_PENDING, &key));
	KUNIT_EXPECT_NULL(test, cm_peer_first(&idx, CM_PEER_WAITING, &key));
	cm_peer_del(&idx, CM_PEER_PENDING, &a);
	KUNIT_EXPECT_TRUE(test, cm_peer_index_empty(&idx));
}

/* Without a match blob only the GIDs count. */
static void p2p_index_no_match(struct kunit *test)
{
	struct cm_peer_index idx;
	struct cm_peer_entry a;
	struct cm_peer_key key;
	u8 ma[P2P_MATCH], mk[P2P_MATCH];

	cm_peer_index_init(&idx, 0);
	p2p_key(&a.key, ma, 1);
	cm_peer_add(&idx, CM_PEER_WAITING, &a);
	p2p_key(&key, mk, 1 + 4);	/* other match bytes, same GIDs */
	KUNIT_EXPECT_PTR_EQ(test, &a, cm_peer_first(&idx, CM_PEER_WAITING, &key));
	p2p_key(&key, mk, 0);
	KUNIT_EXPECT_NULL(test, cm_peer_first(&idx, CM_PEER_WAITING, &key));
	cm_peer_del(&idx, CM_PEER_WAITING, &a);
}

static void p2p_queue_bounds(struct kunit *test)
{
	struct cm_peer_index idx;
	struct cm_peer_queue q;
	struct p2p_held *h[4];
	unsigned long when;
	int i;

	cm_peer_index_init(&idx, P2P_MATCH);
	cm_peer_queue_init(&q, 3, 10000);
	KUNIT_EXPECT_FALSE(test, cm_peer_next_expiry(&q, &when));
	for (i = 0; i < 4; i++)
		h[i] = p2p_held_new(test, 1, 100 + i, i);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, 0, cm_peer_hold(&q, &idx, &h[i]->held));
	KUNIT_EXPECT_EQ(test, -ENOSPC, cm_peer_hold(&q, &idx, &h[3]->held));
	/* a retransmission: same key and communication ID */
	h[3]->held.remote_comm_id = h[1]->held.remote_comm_id;
	KUNIT_EXPECT_EQ(test, -EALREADY, cm_peer_hold(&q, &idx, &h[3]->held));
	KUNIT_EXPECT_EQ(test, 3U, q.count);
	KUNIT_EXPECT_TRUE(test, cm_peer_next_expiry(&q, &when));
	KUNIT_EXPECT_EQ(test, h[0]->held.expires, when);
	KUNIT_EXPECT_NULL(test, cm_peer_expired(&q));
	KUNIT_EXPECT_EQ(test, 10000U, cm_peer_max_age_ms(&q));
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_PTR_EQ(test, &h[i]->held,
				    cm_peer_claim(&q, &idx, &h[0]->held.entry.key));
	KUNIT_EXPECT_EQ(test, 0U, q.count);
	KUNIT_EXPECT_TRUE(test, cm_peer_index_empty(&idx));
	/* 0: the module parameters' defaults */
	cm_peer_queue_init(&q, 0, 0);
	KUNIT_EXPECT_EQ(test, 5000U, cm_peer_max_age_ms(&q));
}

static void p2p_queue_expiry(struct kunit *test)
{
	struct cm_peer_index idx;
	struct cm_peer_queue q;
	struct p2p_held *a = p2p_held_new(test, 2, 1, 0);
	struct p2p_held *b = p2p_held_new(test, 2, 2, 1);
	struct p2p_held *c;

	cm_peer_index_init(&idx, P2P_MATCH);
	cm_peer_queue_init(&q, 8, 50);
	KUNIT_ASSERT_EQ(test, 0, cm_peer_hold(&q, &idx, &a->held));
	KUNIT_ASSERT_EQ(test, 0, cm_peer_hold(&q, &idx, &b->held));
	msleep(100);
	c = p2p_held_new(test, 2, 3, 2);
	q.max_age_ms = 10000;
	KUNIT_ASSERT_EQ(test, 0, cm_peer_hold(&q, &idx, &c->held));
	/* expired entries are not claimable; the fresh one is */
	KUNIT_EXPECT_PTR_EQ(test, &c->held,
			    cm_peer_claim(&q, &idx, &a->held.entry.key));
	KUNIT_EXPECT_PTR_EQ(test, &a->held, cm_peer_expired(&q));
	KUNIT_EXPECT_PTR_EQ(test, &b->held, cm_peer_expired(&q));
	KUNIT_EXPECT_NULL(test, cm_peer_expired(&q));
	KUNIT_EXPECT_TRUE(test, cm_peer_index_empty(&idx));
}

static bool p2p_match_sender(const struct cm_peer_held *held, const void *arg)
{
	const struct p2p_held *h = held->req;

	return h->k == *(const unsigned int *)arg;
}

static void p2p_queue_withdraw(struct kunit *test)
{
	struct cm_peer_index i1, i2;
	struct cm_peer_queue q;
	struct p2p_held *a = p2p_held_new(test, 1, 7, 0);
	struct p2p_held *b = p2p_held_new(test, 2, 7, 1);
	struct p2p_held *c = p2p_held_new(test, 2, 8, 2);
	unsigned int k = 2, none = 9;

	cm_peer_index_init(&i1, P2P_MATCH);
	cm_peer_index_init(&i2, P2P_MATCH);
	cm_peer_queue_init(&q, 8, 10000);
	KUNIT_ASSERT_EQ(test, 0, cm_peer_hold(&q, &i1, &a->held));
	KUNIT_ASSERT_EQ(test, 0, cm_peer_hold(&q, &i2, &b->held));
	KUNIT_ASSERT_EQ(test, 0, cm_peer_hold(&q, &i2, &c->held));
	KUNIT_EXPECT_NULL(test, cm_peer_withdraw(&q, cpu_to_be32(7),
						 p2p_match_sender, &none));
	KUNIT_EXPECT_NULL(test, cm_peer_withdraw(&q, cpu_to_be32(9),
						 p2p_match_sender, &k));
	/* ID 7 from sender 2 is b, in another service's index than a */
	KUNIT_EXPECT_PTR_EQ(test, &b->held,
			    cm_peer_withdraw(&q, cpu_to_be32(7),
					     p2p_match_sender, &k));
	KUNIT_EXPECT_EQ(test, 2U, q.count);
	KUNIT_EXPECT_PTR_EQ(test, &c->held,
			    cm_peer_claim(&q, &i2, &c->held.entry.key));
	KUNIT_EXPECT_TRUE(test, cm_peer_index_empty(&i2));
	cm_peer_unhold(&q, &a->held);
	KUNIT_EXPECT_TRUE(test, cm_peer_index_empty(&i1));
	KUNIT_EXPECT_EQ(test, 0U, q.count);
}

/*
 * Model check: random adds, deletes, lookups, holds, claims and withdraws
 * on one index and queue, compared step by step with arrays searched by
 * brute force.
 */
#define P2P_MODEL_N	96
#define P2P_MODEL_STEPS	20000

struct p2p_model {
	struct kunit *test;
	struct cm_peer_index idx;
	struct cm_peer_queue q;
	struct cm_peer_entry wait[P2P_MODEL_N];
	u8 wmatch[P2P_MODEL_N][P2P_MATCH];
	unsigned int wk[P2P_MODEL_N], wn[P2P_MODEL_N];
	bool win[P2P_MODEL_N];
	struct p2p_held *held[P2P_MODEL_N];
	unsigned int n, count;
	unsigned int bad;
};

/* The oldest waiting entry with key @k, by brute force. */
static int p2p_model_oldest_wait(struct p2p_model *m, unsigned int k,
				 unsigned int after)
{
	int i, best = -1;

	for (i = 0; i < P2P_MODEL_N; i++)
		if (m->win[i] && m->wk[i] == k && m->wn[i] > after &&
		    (best < 0 || m->wn[i] < m->wn[best]))
			best = i;
	return best;
}

static int p2p_model_oldest_held(struct p2p_model *m, unsigned int k,
				 u32 comm_id, bool by_comm)
{
	int i, best = -1;

	for (i = 0; i < P2P_MODEL_N; i++) {
		struct p2p_held *h = m->held[i];

		if (!h->in || (by_comm ? be32_to_cpu(h->held.remote_comm_id) !=
					 comm_id : h->k != k))
			continue;
		if (by_comm && h->k != k)
			continue;
		if (best < 0 || h->n < m->held[best]->n)
			best = i;
	}
	return best;
}

static void p2p_model_find_wait(struct p2p_model *m, unsigned int k)
{
	struct cm_peer_entry *e;
	struct cm_peer_key key;
	u8 match[P2P_MATCH];
	unsigned int after = 0;
	int want;

	p2p_key(&key, match, k);
	e = cm_peer_first(&m->idx, CM_PEER_WAITING, &key);
	/* every entry with the key, in arrival order, then none */
	want = p2p_model_oldest_wait(m, k, 0);
	while (want >= 0 && e == &m->wait[want]) {
		after = m->wn[want];
		e = cm_peer_next(&m->idx, e);
		want = p2p_model_oldest_wait(m, k, after);
	}
	m->bad += want >= 0 || e;
}

static void p2p_model_step(struct p2p_model *m, struct rnd_state *rnd)
{
	unsigned int i = prandom_u32_state(rnd) % P2P_MODEL_N;
	unsigned int k = prandom_u32_state(rnd) % P2P_KEYS;
	u32 comm = prandom_u32_state(rnd) % 16;
	struct p2p_held *h = m->held[i];
	struct cm_peer_held *got;
	struct cm_peer_key key;
	u8 match[P2P_MATCH];
	int want, ret;

	switch (prandom_u32_state(rnd) % 7) {
	case 0:		/* a peer id lists or unlists itself */
		if (m->win[i]) {
			cm_peer_del(&m->idx, CM_PEER_WAITING, &m->wait[i]);
			m->win[i] = false;
			break;
		}
		p2p_key(&m->wait[i].key, m->wmatch[i], k);
		cm_peer_add(&m->idx, CM_PEER_WAITING, &m->wait[i]);
		m->wk[i] = k;
		m->wn[i] = ++m->n;
		m->win[i] = true;
		break;
	case 1:
		p2p_model_find_wait(m, k);
		break;
	case 2:		/* a REQ arrives */
		if (h->in)
			break;
		p2p_key(&h->held.entry.key, h->match, k);
		h->held.remote_comm_id = cpu_to_be32(comm);
		want = p2p_model_oldest_held(m, k, comm, true) >= 0 ?
		       -EALREADY : m->count >= m->q.max_held ? -ENOSPC : 0;
		ret = cm_peer_hold(&m->q, &m->idx, &h->held);
		m->bad += ret != want;
		if (!ret) {
			h->k = k;
			h->n = ++m->n;
			h->in = true;
			m->count++;
		}
		break;
	case 3:		/* a local peer claims */
	case 4:
		p2p_key(&key, match, k);
		want = p2p_model_oldest_held(m, k, 0, false);
		got = cm_peer_claim(&m->q, &m->idx, &key);
		m->bad += want < 0 ? !!got : got != &m->held[want]->held;
		if (got) {
			((struct p2p_held *)got->req)->in = false;
			m->count--;
		}
		break;
	case 5:		/* a REJ from the sender of key k */
		want = p2p_model_oldest_held(m, k, comm, true);
		got = cm_peer_withdraw(&m->q, cpu_to_be32(comm),
				       p2p_match_sender, &k);
		m->bad += want < 0 ? !!got : got != &m->held[want]->held;
		if (got) {
			((struct p2p_held *)got->req)->in = false;
			m->count--;
		}
		break;
	default:	/* the held REQ's sender is gone some other way */
		if (h->in) {
			cm_peer_unhold(&m->q, &h->held);
			h->in = false;
			m->count--;
		}
		break;
	}
	m->bad += m->q.count != m->count;
}

static void p2p_index_model(struct kunit *test)
{
	struct p2p_model *m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	struct rnd_state rnd;
	unsigned int i, step;

	KUNIT_ASSERT_NOT_NULL(test, m);
	cm_peer_index_init(&m->idx, P2P_MATCH);
	cm_peer_queue_init(&m->q, P2P_MODEL_N / 2, 60000);
	for (i = 0; i < P2P_MODEL_N; i++)
		m->held[i] = p2p_held_new(test, 0, 0, 0);
	prandom_seed_state(&rnd, 0x13);
	for (step = 0; step < P2P_MODEL_STEPS && !m->bad; step++)
		p2p_model_step(m, &rnd);
	KUNIT_EXPECT_EQ_MSG(test, 0U, m->bad, "first mismatch at step %u",
			    step);
	for (i = 0; i < P2P_KEYS; i++)
		p2p_model_find_wait(m, i);
	KUNIT_EXPECT_EQ(test, 0U, m->bad);
	for (i = 0; i < P2P_MODEL_N; i++) {
		if (m->win[i])
			cm_peer_del(&m->idx, CM_PEER_WAITING, &m->wait[i]);
		if (m->held[i]->in)
			cm_peer_unhold(&m->q, &m->held[i]->held);
	}
	KUNIT_EXPECT_TRUE(test, cm_peer_index_empty(&m->idx));
	KUNIT_EXPECT_EQ(test, 0U, m->q.count);
}

static struct kunit_case cm_p2p_arbiter_test_cases[] = {
	KUNIT_CASE_PARAM(p2p_arbiter_cases, p2p_arb_gen_params),
	KUNIT_CASE(p2p_arbiter_exhaustive),
	KUNIT_CASE(p2p_arbiter_random),
	{}
};

static struct kunit_suite cm_p2p_arbiter_test_suite = {
	.name = "cm_p2p_arbiter",
	.test_cases = cm_p2p_arbiter_test_cases,
};

static struct kunit_case cm_p2p_index_test_cases[] = {
	KUNIT_CASE(p2p_index_basics),
	KUNIT_CASE(p2p_index_no_match),
	KUNIT_CASE(p2p_queue_bounds),
	KUNIT_CASE(p2p_queue_expiry),
	KUNIT_CASE(p2p_queue_withdraw),
	KUNIT_CASE(p2p_index_model),
	{}
};

static struct kunit_suite cm_p2p_index_test_suite = {
	.name = "cm_p2p_index",
	.test_cases = cm_p2p_index_test_cases,
};

kunit_test_suites(&cm_p2p_arbiter_test_suite, &cm_p2p_index_test_suite);
