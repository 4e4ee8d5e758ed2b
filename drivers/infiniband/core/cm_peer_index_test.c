// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * KUnit suite cm_peer_index: the index of a peer service ID and the queue
 * of held REQs of the IB CM peer-to-peer engine (cm_peer.c), each against
 * a reference written independently of the implementation.
 */

#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/prandom.h>

#include "cm_peer.h"

#define PEER_MATCH	4
#define PEER_KEYS	12	/* few keys: many equal ones */

/* Key number @k: GIDs and match bytes, each part differing for some k. */
static void peer_key(struct cm_peer_key *key, u8 *match, unsigned int k)
{
	memset(key, 0, sizeof(*key));
	key->local_gid.raw[15] = k % 2;
	key->remote_gid.raw[0] = (k / 2) % 2;
	memset(match, 0, PEER_MATCH);
	match[PEER_MATCH - 1] = k / 4;
	key->match = match;
}

struct peer_held {
	struct cm_peer_held held;
	u8 match[PEER_MATCH];
	unsigned int k, n;	/* key number, arrival number */
	bool in;
};

static struct peer_held *peer_held_new(struct kunit *test, unsigned int k,
				       u32 comm_id, unsigned int n)
{
	struct peer_held *h = kunit_kzalloc(test, sizeof(*h), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, h);
	peer_key(&h->held.entry.key, h->match, k);
	h->held.remote_comm_id = cpu_to_be32(comm_id);
	h->held.req = h;
	h->k = k;
	h->n = n;
	return h;
}

static void peer_index_basics(struct kunit *test)
{
	struct cm_peer_index idx;
	struct cm_peer_entry a, b, c;
	struct cm_peer_key key;
	u8 ma[PEER_MATCH], mb[PEER_MATCH], mc[PEER_MATCH], mk[PEER_MATCH];

	cm_peer_index_init(&idx, PEER_MATCH);
	KUNIT_EXPECT_TRUE(test, cm_peer_index_empty(&idx));
	peer_key(&a.key, ma, 5);
	peer_key(&b.key, mb, 5);
	peer_key(&c.key, mc, 6);
	cm_peer_add(&idx, CM_PEER_WAITING, &a);
	cm_peer_add(&idx, CM_PEER_WAITING, &c);
	cm_peer_add(&idx, CM_PEER_WAITING, &b);
	KUNIT_EXPECT_FALSE(test, cm_peer_index_empty(&idx));
	peer_key(&key, mk, 5);
	KUNIT_EXPECT_PTR_EQ(test, &a, cm_peer_first(&idx, CM_PEER_WAITING, &key));
	KUNIT_EXPECT_PTR_EQ(test, &b, cm_peer_next(&idx, &a));
	KUNIT_EXPECT_NULL(test, cm_peer_next(&idx, &b));
	KUNIT_EXPECT_NULL(test, cm_peer_first(&idx, CM_PEER_HELD, &key));
	/* one byte of the match blob, the last one, tells keys apart */
	mk[PEER_MATCH - 1] ^= 0x80;
	KUNIT_EXPECT_NULL(test, cm_peer_first(&idx, CM_PEER_WAITING, &key));
	cm_peer_del(&idx, CM_PEER_WAITING, &a);
	KUNIT_EXPECT_TRUE(test, RB_EMPTY_NODE(&a.node));
	peer_key(&key, mk, 5);
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
static void peer_index_no_match(struct kunit *test)
{
	struct cm_peer_index idx;
	struct cm_peer_entry a;
	struct cm_peer_key key;
	u8 ma[PEER_MATCH], mk[PEER_MATCH];

	cm_peer_index_init(&idx, 0);
	peer_key(&a.key, ma, 1);
	cm_peer_add(&idx, CM_PEER_WAITING, &a);
	peer_key(&key, mk, 1 + 4);	/* other match bytes, same GIDs */
	KUNIT_EXPECT_PTR_EQ(test, &a, cm_peer_first(&idx, CM_PEER_WAITING, &key));
	peer_key(&key, mk, 0);
	KUNIT_EXPECT_NULL(test, cm_peer_first(&idx, CM_PEER_WAITING, &key));
	cm_peer_del(&idx, CM_PEER_WAITING, &a);
}

/*
 * Under a mask only its bits count, and the trees stay ordered: each of
 * many entries is found by a key that differs from its own only in bits
 * masked out.
 */
static void peer_index_mask(struct kunit *test)
{
	static const u8 mask[PEER_MATCH] = { 0xff, 0x00, 0x0f, 0xff };
	struct {
		struct cm_peer_entry e;
		u8 match[PEER_MATCH];
	} *ent;
	struct cm_peer_index idx;
	struct cm_peer_key key;
	struct rnd_state rnd;
	u8 mk[PEER_MATCH];
	int i, n = 64;

	ent = kunit_kcalloc(test, n + 1, sizeof(*ent), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ent);
	prandom_seed_state(&rnd, 2026);
	cm_peer_index_init(&idx, PEER_MATCH);
	cm_peer_index_mask(&idx, mask);
	for (i = 0; i < n; i++) {
		peer_key(&ent[i].e.key, ent[i].match, 0);
		ent[i].match[0] = i % 16;
		ent[i].match[1] = prandom_u32_state(&rnd);
		ent[i].match[2] = (prandom_u32_state(&rnd) & 0xf0) | i / 16;
		ent[i].match[3] = 7;
		cm_peer_add(&idx, CM_PEER_WAITING, &ent[i].e);
	}
	/* equal to entry 0 under the mask only, and later: found after it */
	peer_key(&ent[n].e.key, ent[n].match, 0);
	memcpy(ent[n].match, ent[0].match, PEER_MATCH);
	ent[n].match[1] ^= 0xff;
	cm_peer_add(&idx, CM_PEER_WAITING, &ent[n].e);
	KUNIT_EXPECT_PTR_EQ(test, &ent[n].e, cm_peer_next(&idx, &ent[0].e));
	peer_key(&key, mk, 0);
	for (i = 0; i < n; i++) {
		memcpy(mk, ent[i].match, PEER_MATCH);
		mk[1] ^= 0xff;
		mk[2] ^= 0xf0;
		KUNIT_EXPECT_PTR_EQ(test, &ent[i].e,
				    cm_peer_first(&idx, CM_PEER_WAITING, &key));
	}
	/* a masked-in bit differs: nobody's */
	mk[3] = 8;
	KUNIT_EXPECT_NULL(test, cm_peer_first(&idx, CM_PEER_WAITING, &key));
	mk[3] = 7;
	mk[2] = 0x0f;
	KUNIT_EXPECT_NULL(test, cm_peer_first(&idx, CM_PEER_WAITING, &key));
	for (i = 0; i <= n; i++)
		cm_peer_del(&idx, CM_PEER_WAITING, &ent[i].e);
	KUNIT_EXPECT_TRUE(test, cm_peer_index_empty(&idx));
}

static void peer_queue_bounds(struct kunit *test)
{
	struct cm_peer_index idx;
	struct cm_peer_queue q;
	struct peer_held *h[4];
	unsigned long when;
	int i;

	cm_peer_index_init(&idx, PEER_MATCH);
	cm_peer_queue_init(&q, 3, 3, 0);
	KUNIT_EXPECT_FALSE(test, cm_peer_next_expiry(&q, &when));
	for (i = 0; i < 4; i++)
		h[i] = peer_held_new(test, 1, 100 + i, i);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, 0, cm_peer_hold(&q, &idx, &h[i]->held,
						      10000));
	KUNIT_EXPECT_EQ(test, -ENOSPC,
			cm_peer_hold(&q, &idx, &h[3]->held, 10000));
	/* a retransmission: same key and communication ID */
	h[3]->held.remote_comm_id = h[1]->held.remote_comm_id;
	KUNIT_EXPECT_EQ(test, -EALREADY,
			cm_peer_hold(&q, &idx, &h[3]->held, 10000));
	KUNIT_EXPECT_EQ(test, 3U, q.count);
	KUNIT_EXPECT_TRUE(test, cm_peer_next_expiry(&q, &when));
	KUNIT_EXPECT_EQ(test, h[0]->held.expires, when);
	KUNIT_EXPECT_NULL(test, cm_peer_expired(&q));
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_PTR_EQ(test, &h[i]->held,
				    cm_peer_claim(&q, &idx, &h[0]->held.entry.key));
	KUNIT_EXPECT_EQ(test, 0U, q.count);
	KUNIT_EXPECT_TRUE(test, cm_peer_index_empty(&idx));
	/* 0: the defaults; each entry's age is its own */
	cm_peer_queue_init(&q, 0, 0, 0);
	KUNIT_EXPECT_EQ(test, CM_PEER_MAX_HELD, q.max_held);
	KUNIT_EXPECT_EQ(test, CM_PEER_MAX_HELD / 4, q.max_held_svc);
	KUNIT_EXPECT_EQ(test, 0U, q.max_age_ms);
}

/* A hash key with which the senders of @a and @b count apart */
static void peer_queue_apart(struct cm_peer_queue *q,
			     const struct cm_peer_held *a,
			     const struct cm_peer_held *b)
{
	for (q->gid_seed = 1;
	     cm_peer_gid_bucket(q, &a->entry.key.remote_gid) ==
	     cm_peer_gid_bucket(q, &b->entry.key.remote_gid);
	     q->gid_seed++)
		;
}

/* One service ID takes at most max_held_svc of the device's room. */
static void peer_queue_svc_bound(struct kunit *test)
{
	struct cm_peer_index i1, i2;
	struct cm_peer_queue q;
	struct peer_held *h[5];
	int i;

	cm_peer_index_init(&i1, PEER_MATCH);
	cm_peer_index_init(&i2, PEER_MATCH);
	cm_peer_queue_init(&q, 4, 2, 0);
	for (i = 0; i < 5; i++)	/* h[3] from another sender's GID */
		h[i] = peer_held_new(test, i == 3 ? 3 : 1, 200 + i, i);
	peer_queue_apart(&q, &h[1]->held, &h[3]->held);
	KUNIT_EXPECT_EQ(test, 0, cm_peer_hold(&q, &i1, &h[0]->held, 10000));
	KUNIT_EXPECT_EQ(test, 0, cm_peer_hold(&q, &i1, &h[1]->held, 10000));
	KUNIT_EXPECT_EQ(test, -ENOSPC,
			cm_peer_hold(&q, &i1, &h[2]->held, 10000));
	KUNIT_EXPECT_EQ(test, 0, cm_peer_hold(&q, &i2, &h[3]->held, 10000));
	/* a claim makes room in its own index */
	KUNIT_EXPECT_PTR_EQ(test, &h[0]->held,
			    cm_peer_claim(&q, &i1, &h[0]->held.entry.key));
	KUNIT_EXPECT_EQ(test, 0, cm_peer_hold(&q, &i1, &h[2]->held, 10000));
	KUNIT_EXPECT_EQ(test, 2U, i1.nr_held);
	KUNIT_EXPECT_EQ(test, 1U, i2.nr_held);
	KUNIT_EXPECT_EQ(test, 3U, q.count);
	cm_peer_unhold(&q, &h[1]->held);
	cm_peer_unhold(&q, &h[2]->held);
	cm_peer_unhold(&q, &h[3]->held);
	KUNIT_EXPECT_EQ(test, 0U, i1.nr_held + i2.nr_held + q.count);
}

/*
 * One sending port GID takes at most max_held_svc of the device's room,
 * however many service IDs it sends to: one host cannot fill it.
 */
static void peer_queue_gid_share(struct kunit *test)
{
	struct cm_peer_index idx[3];
	struct cm_peer_queue q;
	struct peer_held *h[4];
	int i;

	for (i = 0; i < 3; i++)
		cm_peer_index_init(&idx[i], PEER_MATCH);
	cm_peer_queue_init(&q, 8, 2, 0);
	for (i = 0; i < 4; i++)	/* h[3] from another sender's GID */
		h[i] = peer_held_new(test, i == 3 ? 2 : 0, 300 + i, i);
	peer_queue_apart(&q, &h[0]->held, &h[3]->held);
	KUNIT_EXPECT_EQ(test, 0, cm_peer_hold(&q, &idx[0], &h[0]->held, 10000));
	KUNIT_EXPECT_EQ(test, 0, cm_peer_hold(&q, &idx[1], &h[1]->held, 10000));
	KUNIT_EXPECT_EQ(test, -ENOSPC,
			cm_peer_hold(&q, &idx[2], &h[2]->held, 10000));
	KUNIT_EXPECT_EQ(test, 0, cm_peer_hold(&q, &idx[2], &h[3]->held, 10000));
	/* what leaves makes room for its sender again */
	cm_peer_unhold(&q, &h[0]->held);
	KUNIT_EXPECT_EQ(test, 0, cm_peer_hold(&q, &idx[2], &h[2]->held, 10000));
	for (i = 1; i < 4; i++)
		cm_peer_unhold(&q, &h[i]->held);
	KUNIT_EXPECT_EQ(test, 0U, q.count);
	for (i = 0; i < CM_PEER_GID_BUCKETS; i++)
		KUNIT_EXPECT_EQ(test, 0U, q.by_gid[i]);
}

/* No REQ is held longer than CM_PEER_MAX_AGE_MS, whatever its timeouts. */
static void peer_queue_age_cap(struct kunit *test)
{
	unsigned int days = 3 * 24 * 3600 * 1000U;	/* a REQ may ask 74 h */
	struct cm_peer_index idx;
	struct cm_peer_queue q;
	struct peer_held *h = peer_held_new(test, 1, 400, 0);
	unsigned long before = jiffies;

	cm_peer_index_init(&idx, PEER_MATCH);
	cm_peer_queue_init(&q, 0, 0, 0);
	KUNIT_EXPECT_EQ(test, CM_PEER_MAX_AGE_MS, cm_peer_hold_age_ms(&q, days));
	KUNIT_EXPECT_EQ(test, 500U, cm_peer_hold_age_ms(&q, 500));
	KUNIT_ASSERT_EQ(test, 0, cm_peer_hold(&q, &idx, &h->held, days));
	KUNIT_EXPECT_LE(test, h->held.expires,
			jiffies + msecs_to_jiffies(CM_PEER_MAX_AGE_MS));
	KUNIT_EXPECT_GE(test, h->held.expires,
			before + msecs_to_jiffies(CM_PEER_MAX_AGE_MS));
	cm_peer_unhold(&q, &h->held);
}

static void peer_queue_expiry(struct kunit *test)
{
	struct cm_peer_index idx;
	struct cm_peer_queue q;
	struct peer_held *a = peer_held_new(test, 2, 1, 0);
	struct peer_held *b = peer_held_new(test, 2, 2, 1);
	struct peer_held *c, *d;
	unsigned long when;

	cm_peer_index_init(&idx, PEER_MATCH);
	cm_peer_queue_init(&q, 8, 8, 0);
	KUNIT_ASSERT_EQ(test, 0, cm_peer_hold(&q, &idx, &a->held, 50));
	KUNIT_ASSERT_EQ(test, 0, cm_peer_hold(&q, &idx, &b->held, 50));
	msleep(100);
	c = peer_held_new(test, 2, 3, 2);
	d = peer_held_new(test, 3, 4, 3);
	KUNIT_ASSERT_EQ(test, 0, cm_peer_hold(&q, &idx, &c->held, 10000));
	/* held after c, expires before it: the queue is in expiry order */
	KUNIT_ASSERT_EQ(test, 0, cm_peer_hold(&q, &idx, &d->held, 150));
	/* expired entries are not claimable; the fresh one is */
	KUNIT_EXPECT_PTR_EQ(test, &c->held,
			    cm_peer_claim(&q, &idx, &a->held.entry.key));
	KUNIT_EXPECT_PTR_EQ(test, &a->held, cm_peer_expired(&q));
	KUNIT_EXPECT_PTR_EQ(test, &b->held, cm_peer_expired(&q));
	KUNIT_EXPECT_NULL(test, cm_peer_expired(&q));
	KUNIT_EXPECT_TRUE(test, cm_peer_next_expiry(&q, &when));
	KUNIT_EXPECT_EQ(test, d->held.expires, when);
	msleep(200);
	KUNIT_EXPECT_PTR_EQ(test, &d->held, cm_peer_expired(&q));
	KUNIT_EXPECT_TRUE(test, cm_peer_index_empty(&idx));
}

static bool peer_match_sender(const struct cm_peer_held *held, const void *arg)
{
	const struct peer_held *h = held->req;

	return h->k == *(const unsigned int *)arg;
}

static void peer_queue_withdraw(struct kunit *test)
{
	struct cm_peer_index i1, i2;
	struct cm_peer_queue q;
	struct peer_held *a = peer_held_new(test, 1, 7, 0);
	struct peer_held *b = peer_held_new(test, 2, 7, 1);
	struct peer_held *c = peer_held_new(test, 2, 8, 2);
	unsigned int k = 2, none = 9;

	cm_peer_index_init(&i1, PEER_MATCH);
	cm_peer_index_init(&i2, PEER_MATCH);
	cm_peer_queue_init(&q, 8, 8, 10000);
	KUNIT_ASSERT_EQ(test, 0, cm_peer_hold(&q, &i1, &a->held, 0));
	KUNIT_ASSERT_EQ(test, 0, cm_peer_hold(&q, &i2, &b->held, 0));
	KUNIT_ASSERT_EQ(test, 0, cm_peer_hold(&q, &i2, &c->held, 0));
	KUNIT_EXPECT_NULL(test, cm_peer_withdraw(&q, cpu_to_be32(7),
						 peer_match_sender, &none));
	KUNIT_EXPECT_NULL(test, cm_peer_withdraw(&q, cpu_to_be32(9),
						 peer_match_sender, &k));
	/* ID 7 from sender 2 is b, in another service's index than a */
	KUNIT_EXPECT_PTR_EQ(test, &b->held,
			    cm_peer_withdraw(&q, cpu_to_be32(7),
					     peer_match_sender, &k));
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
#define PEER_MODEL_N	96
#define PEER_MODEL_STEPS	20000

struct peer_model {
	struct kunit *test;
	struct cm_peer_index idx;
	struct cm_peer_queue q;
	struct cm_peer_entry wait[PEER_MODEL_N];
	u8 wmatch[PEER_MODEL_N][PEER_MATCH];
	unsigned int wk[PEER_MODEL_N], wn[PEER_MODEL_N];
	bool win[PEER_MODEL_N];
	struct peer_held *held[PEER_MODEL_N];
	unsigned int n, count;
	unsigned int bad;
};

/* The oldest waiting entry with key @k, by brute force. */
static int peer_model_oldest_wait(struct peer_model *m, unsigned int k,
				  unsigned int after)
{
	int i, best = -1;

	for (i = 0; i < PEER_MODEL_N; i++)
		if (m->win[i] && m->wk[i] == k && m->wn[i] > after &&
		    (best < 0 || m->wn[i] < m->wn[best]))
			best = i;
	return best;
}

static int peer_model_oldest_held(struct peer_model *m, unsigned int k,
				  u32 comm_id, bool by_comm)
{
	int i, best = -1;

	for (i = 0; i < PEER_MODEL_N; i++) {
		struct peer_held *h = m->held[i];

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

static void peer_model_find_wait(struct peer_model *m, unsigned int k)
{
	struct cm_peer_entry *e;
	struct cm_peer_key key;
	u8 match[PEER_MATCH];
	unsigned int after = 0;
	int want;

	peer_key(&key, match, k);
	e = cm_peer_first(&m->idx, CM_PEER_WAITING, &key);
	/* every entry with the key, in arrival order, then none */
	want = peer_model_oldest_wait(m, k, 0);
	while (want >= 0 && e == &m->wait[want]) {
		after = m->wn[want];
		e = cm_peer_next(&m->idx, e);
		want = peer_model_oldest_wait(m, k, after);
	}
	m->bad += want >= 0 || e;
}

static void peer_model_step(struct peer_model *m, struct rnd_state *rnd)
{
	unsigned int i = prandom_u32_state(rnd) % PEER_MODEL_N;
	unsigned int k = prandom_u32_state(rnd) % PEER_KEYS;
	u32 comm = prandom_u32_state(rnd) % 16;
	struct peer_held *h = m->held[i];
	struct cm_peer_held *got;
	struct cm_peer_key key;
	u8 match[PEER_MATCH];
	int want, ret;

	switch (prandom_u32_state(rnd) % 7) {
	case 0:		/* a peer id lists or unlists itself */
		if (m->win[i]) {
			cm_peer_del(&m->idx, CM_PEER_WAITING, &m->wait[i]);
			m->win[i] = false;
			break;
		}
		peer_key(&m->wait[i].key, m->wmatch[i], k);
		cm_peer_add(&m->idx, CM_PEER_WAITING, &m->wait[i]);
		m->wk[i] = k;
		m->wn[i] = ++m->n;
		m->win[i] = true;
		break;
	case 1:
		peer_model_find_wait(m, k);
		break;
	case 2:		/* a REQ arrives */
		if (h->in)
			break;
		peer_key(&h->held.entry.key, h->match, k);
		h->held.remote_comm_id = cpu_to_be32(comm);
		want = peer_model_oldest_held(m, k, comm, true) >= 0 ?
		       -EALREADY : m->count >= m->q.max_held ? -ENOSPC : 0;
		ret = cm_peer_hold(&m->q, &m->idx, &h->held, 60000);
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
		peer_key(&key, match, k);
		want = peer_model_oldest_held(m, k, 0, false);
		got = cm_peer_claim(&m->q, &m->idx, &key);
		m->bad += want < 0 ? !!got : got != &m->held[want]->held;
		if (got) {
			((struct peer_held *)got->req)->in = false;
			m->count--;
		}
		break;
	case 5:		/* a REJ from the sender of key k */
		want = peer_model_oldest_held(m, k, comm, true);
		got = cm_peer_withdraw(&m->q, cpu_to_be32(comm),
				       peer_match_sender, &k);
		m->bad += want < 0 ? !!got : got != &m->held[want]->held;
		if (got) {
			((struct peer_held *)got->req)->in = false;
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

static void peer_index_model(struct kunit *test)
{
	struct peer_model *m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	struct rnd_state rnd;
	unsigned int i, step;

	KUNIT_ASSERT_NOT_NULL(test, m);
	cm_peer_index_init(&m->idx, PEER_MATCH);
	cm_peer_queue_init(&m->q, PEER_MODEL_N / 2, PEER_MODEL_N / 2, 0);
	for (i = 0; i < PEER_MODEL_N; i++)
		m->held[i] = peer_held_new(test, 0, 0, 0);
	prandom_seed_state(&rnd, 0x13);
	for (step = 0; step < PEER_MODEL_STEPS && !m->bad; step++)
		peer_model_step(m, &rnd);
	KUNIT_EXPECT_EQ_MSG(test, 0U, m->bad, "first mismatch at step %u",
			    step);
	for (i = 0; i < PEER_KEYS; i++)
		peer_model_find_wait(m, i);
	KUNIT_EXPECT_EQ(test, 0U, m->bad);
	for (i = 0; i < PEER_MODEL_N; i++) {
		if (m->win[i])
			cm_peer_del(&m->idx, CM_PEER_WAITING, &m->wait[i]);
		if (m->held[i]->in)
			cm_peer_unhold(&m->q, &m->held[i]->held);
	}
	KUNIT_EXPECT_TRUE(test, cm_peer_index_empty(&m->idx));
	KUNIT_EXPECT_EQ(test, 0U, m->q.count);
}

static struct kunit_case cm_peer_index_test_cases[] = {
	KUNIT_CASE(peer_index_basics),
	KUNIT_CASE(peer_index_no_match),
	KUNIT_CASE(peer_index_mask),
	KUNIT_CASE(peer_queue_bounds),
	KUNIT_CASE(peer_queue_svc_bound),
	KUNIT_CASE(peer_queue_gid_share),
	KUNIT_CASE(peer_queue_age_cap),
	KUNIT_CASE(peer_queue_expiry),
	KUNIT_CASE(peer_queue_withdraw),
	KUNIT_CASE(peer_index_model),
	{}
};

static struct kunit_suite cm_peer_index_test_suite = {
	.name = "cm_peer_index",
	.test_cases = cm_peer_index_test_cases,
};

kunit_test_suite(cm_peer_index_test_suite);
