// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * KUnit tests for the IB CM peer-to-peer engine (cm_p2p.c).
 */

#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/prandom.h>
#include <linux/sort.h>

#include "cm_p2p.h"

#define SID(x)		cpu_to_be64(x)
#define MASK(x)		cpu_to_be64(x)
#define EXACT		(~0ULL)
/* A mask of the @n leading bits, 1 <= n <= 64. */
#define PREFIX(n)	(~0ULL << (64 - (n)))

#define CS		CM_P2P_MODE_CLIENT_SERVER
#define PEER		CM_P2P_MODE_PEER
#define NONE		CM_P2P_MODE_NONE

static void p2p_table_release(void *table)
{
	cm_p2p_table_free(table);
}

static struct cm_p2p_table *p2p_test_table(struct kunit *test)
{
	struct cm_p2p_table *table = cm_p2p_table_alloc(GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, table);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, p2p_table_release,
						  table));
	return table;
}

/* ServiceID mode table: scripted bind/unbind/lookup sequences. */

enum p2p_op { OP_BIND, OP_UNBIND, OP_LOOKUP };

struct p2p_step {
	enum p2p_op op;
	u64 sid;
	u64 mask;
	enum cm_p2p_mode mode;	/* bind/unbind mode, or expected lookup */
	int ret;		/* expected bind/unbind return */
};

struct p2p_table_case {
	const char *name;
	const struct p2p_step *steps;
	unsigned int nsteps;
	unsigned int peer_binds;	/* expected at the end */
};

#define BIND(s, m, md, r)	{ OP_BIND, s, m, md, r }
#define UNBIND(s, m, md, r)	{ OP_UNBIND, s, m, md, r }
#define LOOKUP(s, md)		{ OP_LOOKUP, s, 0, md, 0 }

static const struct p2p_step steps_peer_basic[] = {
	LOOKUP(0x1000, NONE),
	BIND(0x1000, EXACT, PEER, 0),
	LOOKUP(0x1000, PEER),
	LOOKUP(0x1001, NONE),
	LOOKUP(0x0fff, NONE),
};

static const struct p2p_step steps_cs_then_peer[] = {
	BIND(0x2000, EXACT, CS, 0),
	BIND(0x2000, EXACT, PEER, -EADDRINUSE),
	LOOKUP(0x2000, CS),
	BIND(0x2000, EXACT, CS, 0),
	UNBIND(0x2000, EXACT, CS, 0),
	BIND(0x2000, EXACT, PEER, -EADDRINUSE),
	UNBIND(0x2000, EXACT, CS, 0),
	BIND(0x2000, EXACT, PEER, 0),
	LOOKUP(0x2000, PEER),
};

static const struct p2p_step steps_peer_then_cs[] = {
	BIND(0x3000, EXACT, PEER, 0),
	BIND(0x3000, EXACT, CS, -EADDRINUSE),
	LOOKUP(0x3000, PEER),
	UNBIND(0x3000, EXACT, PEER, 0),
	LOOKUP(0x3000, NONE),
	BIND(0x3000, EXACT, CS, 0),
	LOOKUP(0x3000, CS),
};

static const struct p2p_step steps_range[] = {
	BIND(0x12340000, PREFIX(48), PEER, 0),
	LOOKUP(0x12340000, PEER),
	LOOKUP(0x1234ffff, PEER),
	LOOKUP(0x12350000, NONE),
	LOOKUP(0x1233ffff, NONE),
	BIND(0x12340042, EXACT, CS, -EADDRINUSE),
	BIND(0x12340042, EXACT, PEER, 0),
	BIND(0x12350000, EXACT, CS, 0),
	LOOKUP(0x12350000, CS),
	UNBIND(0x12340000, PREFIX(48), PEER, 0),
	LOOKUP(0x12340042, PEER),
	LOOKUP(0x12340043, NONE),
};

static const struct p2p_step steps_range_over_exact[] = {
	BIND(0x5000, EXACT, CS, 0),
	BIND(0x0, PREFIX(48), PEER, -EADDRINUSE),
	BIND(0x10000, PREFIX(48), PEER, 0),
	LOOKUP(0x5000, CS),
	LOOKUP(0x10000, PEER),
	LOOKUP(0x1ffff, PEER),
	LOOKUP(0x20000, NONE),
};

static const struct p2p_step steps_invalid[] = {
	BIND(0x10, 0xffffffffffffff0fULL, PEER, -EINVAL),
	BIND(0x1f, PREFIX(60), PEER, -EINVAL),
	BIND(0x10, EXACT, NONE, -EINVAL),
	BIND(0x10, EXACT, 7, -EINVAL),
	UNBIND(0x10, EXACT, PEER, -ENOENT),
	UNBIND(0x1f, PREFIX(60), PEER, -EINVAL),
	LOOKUP(0x10, NONE),
	LOOKUP(0x1f, NONE),
};

static const struct p2p_step steps_refcount[] = {
	BIND(0x7000, EXACT, PEER, 0),
	BIND(0x7000, EXACT, PEER, 0),
	BIND(0x7000, EXACT, PEER, 0),
	UNBIND(0x7000, EXACT, PEER, 0),
	LOOKUP(0x7000, PEER),
	UNBIND(0x7000, EXACT, PEER, 0),
	LOOKUP(0x7000, PEER),
	UNBIND(0x7000, EXACT, PEER, 0),
	LOOKUP(0x7000, NONE),
	UNBIND(0x7000, EXACT, PEER, -ENOENT),
	BIND(0x7000, EXACT, CS, 0),
};

static const struct p2p_step steps_wrong_unbind[] = {
	BIND(0x8000, EXACT, CS, 0),
	UNBIND(0x8000, EXACT, PEER, -ENOENT),
	UNBIND(0x8000, PREFIX(60), CS, -ENOENT),
	LOOKUP(0x8000, CS),
	BIND(0x8000, EXACT, PEER, -EADDRINUSE),
};

static const struct p2p_step steps_wildcard[] = {
	BIND(0x0, 0x0, CS, 0),
	LOOKUP(0xdeadbeefcafef00dULL, CS),
	LOOKUP(0x0, CS),
	LOOKUP(~0ULL, CS),
	BIND(0xdead, EXACT, PEER, -EADDRINUSE),
	BIND(0xdead, EXACT, CS, 0),
};

static const struct p2p_step steps_space_ends[] = {
	BIND(~0ULL, EXACT, PEER, 0),
	BIND(0x0, EXACT, PEER, 0),
	LOOKUP(~0ULL, PEER),
	LOOKUP(~0ULL - 1, NONE),
	LOOKUP(0x0, PEER),
	LOOKUP(0x1, NONE),
	BIND(0xffffffffffff0000ULL, PREFIX(48), CS, -EADDRINUSE),
	BIND(0xfffffffffffe0000ULL, PREFIX(48), CS, 0),
	LOOKUP(0xfffffffffffeffffULL, CS),
};

static const struct p2p_step steps_nested_same_mode[] = {
	BIND(0x9000000000000000ULL, PREFIX(8), PEER, 0),
	BIND(0x9012000000000000ULL, PREFIX(16), PEER, 0),
	BIND(0x9012340000000000ULL, PREFIX(24), PEER, 0),
	BIND(0x9012345600000000ULL, EXACT, CS, -EADDRINUSE),
	UNBIND(0x9000000000000000ULL, PREFIX(8), PEER, 0),
	LOOKUP(0x90ff000000000000ULL, NONE),
	LOOKUP(0x9012ff0000000000ULL, PEER),
	UNBIND(0x9012000000000000ULL, PREFIX(16), PEER, 0),
	LOOKUP(0x9012ff0000000000ULL, NONE),
	LOOKUP(0x9012340000000001ULL, PEER),
};

static const struct p2p_table_case p2p_table_cases[] = {
	{ "peer bind and lookup", steps_peer_basic,
	  ARRAY_SIZE(steps_peer_basic), 1 },
	{ "client/server owns sid", steps_cs_then_peer,
	  ARRAY_SIZE(steps_cs_then_peer), 1 },
	{ "peer owns sid", steps_peer_then_cs,
	  ARRAY_SIZE(steps_peer_then_cs), 0 },
	{ "masked range", steps_range,
	  ARRAY_SIZE(steps_range), 1 },
	{ "range over exact bind", steps_range_over_exact,
	  ARRAY_SIZE(steps_range_over_exact), 1 },
	{ "invalid binds", steps_invalid,
	  ARRAY_SIZE(steps_invalid), 0 },
	{ "reference counts", steps_refcount,
	  ARRAY_SIZE(steps_refcount), 0 },
	{ "unbind must match", steps_wrong_unbind,
	  ARRAY_SIZE(steps_wrong_unbind), 0 },
	{ "wildcard mask", steps_wildcard,
	  ARRAY_SIZE(steps_wildcard), 0 },
	{ "ends of the sid space", steps_space_ends,
	  ARRAY_SIZE(steps_space_ends), 2 },
	{ "nested peer ranges", steps_nested_same_mode,
	  ARRAY_SIZE(steps_nested_same_mode), 1 },
};

static void p2p_table_case_desc(const struct p2p_table_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(p2p_table, p2p_table_cases, p2p_table_case_desc);

static void p2p_table_script(struct kunit *test)
{
	const struct p2p_table_case *c = test->param_value;
	struct cm_p2p_table *table = p2p_test_table(test);
	unsigned int i;

	for (i = 0; i < c->nsteps; i++) {
		const struct p2p_step *s = &c->steps[i];

		switch (s->op) {
		case OP_BIND:
			KUNIT_EXPECT_EQ_MSG(test, s->ret,
					    cm_p2p_bind(table, SID(s->sid),
							MASK(s->mask), s->mode,
							GFP_KERNEL),
					    "step %u: bind %#llx/%#llx", i,
					    s->sid, s->mask);
			break;
		case OP_UNBIND:
			KUNIT_EXPECT_EQ_MSG(test, s->ret,
					    cm_p2p_unbind(table, SID(s->sid),
							  MASK(s->mask),
							  s->mode),
					    "step %u: unbind %#llx/%#llx", i,
					    s->sid, s->mask);
			break;
		case OP_LOOKUP:
			KUNIT_EXPECT_EQ_MSG(test, s->mode,
					    cm_p2p_lookup(table, SID(s->sid)),
					    "step %u: lookup %#llx", i, s->sid);
			break;
		}
	}
	KUNIT_EXPECT_EQ(test, c->peer_binds, cm_p2p_peer_binds(table));
}

static int p2p_u64_cmp(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static bool p2p_u64_find(const u64 *v, unsigned int n, u64 key)
{
	return bsearch(&key, v, n, sizeof(*v), p2p_u64_cmp);
}

/* Many random exact binds: every one found with its mode, others NONE. */
static void p2p_table_many(struct kunit *test)
{
	const unsigned int n = 4096;
	struct cm_p2p_table *table = p2p_test_table(test);
	struct rnd_state rnd;
	unsigned int i, peers = 0, misses = 0;
	u64 *sids;

	sids = kunit_kcalloc(test, n, sizeof(*sids), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, sids);
	prandom_seed_state(&rnd, 0x9e3779b97f4a7c15ULL);
	for (i = 0; i < n; i++)
		sids[i] = prandom_u32_state(&rnd) |
			  (u64)prandom_u32_state(&rnd) << 32;
	sort(sids, n, sizeof(*sids), p2p_u64_cmp, NULL);
	for (i = 1; i < n; i++)
		KUNIT_ASSERT_NE(test, sids[i - 1], sids[i]);

	for (i = 0; i < n; i++) {
		enum cm_p2p_mode mode = (sids[i] >> 7) & 1 ? PEER : CS;

		peers += mode == PEER;
		KUNIT_ASSERT_EQ(test, 0, cm_p2p_bind(table, SID(sids[i]),
						     MASK(EXACT), mode,
						     GFP_KERNEL));
	}
	KUNIT_EXPECT_EQ(test, peers, cm_p2p_peer_binds(table));
	for (i = 0; i < n; i++) {
		enum cm_p2p_mode mode = (sids[i] >> 7) & 1 ? PEER : CS;

		KUNIT_EXPECT_EQ(test, mode, cm_p2p_lookup(table, SID(sids[i])));
	}
	for (i = 0; i < 4 * n; i++) {
		u64 sid = prandom_u32_state(&rnd) |
			  (u64)prandom_u32_state(&rnd) << 32;

		if (p2p_u64_find(sids, n, sid))
			continue;
		misses++;
		KUNIT_EXPECT_EQ(test, NONE, cm_p2p_lookup(table, SID(sid)));
	}
	KUNIT_EXPECT_GT(test, misses, 0U);
	/* Unbind every other one; the rest stay intact. */
	for (i = 0; i < n; i += 2) {
		enum cm_p2p_mode mode = (sids[i] >> 7) & 1 ? PEER : CS;

		KUNIT_ASSERT_EQ(test, 0, cm_p2p_unbind(table, SID(sids[i]),
						       MASK(EXACT), mode));
	}
	for (i = 0; i < n; i++) {
		enum cm_p2p_mode mode = (sids[i] >> 7) & 1 ? PEER : CS;

		KUNIT_EXPECT_EQ(test, i % 2 ? mode : NONE,
				cm_p2p_lookup(table, SID(sids[i])));
	}
	/* The table is freed with binds still in it: must not leak. */
}

/*
 * Random binds and unbinds of exact ServiceIDs and of prefix ranges over
 * a small ServiceID space, checked against a plain list of binds after
 * every step: return codes, lookups (exact binds are answered by the hash
 * table, the rest by the tree) and the peer bind count.
 */
#define P2P_MODEL_BASE		0x7700000000000000ULL
#define P2P_MODEL_SPACE		256
#define P2P_MODEL_MAX		96

struct p2p_model_bind {
	u64 start, last;
	enum cm_p2p_mode mode;
	unsigned int refs;
};

struct p2p_model {
	struct p2p_model_bind b[P2P_MODEL_MAX];
	unsigned int n;
};

static int p2p_model_find(const struct p2p_model *m, u64 start, u64 last,
			  enum cm_p2p_mode mode)
{
	unsigned int i;

	for (i = 0; i < m->n; i++)
		if (m->b[i].start == start && m->b[i].last == last &&
		    m->b[i].mode == mode)
			return i;
	return -1;
}

static int p2p_model_bind(struct p2p_model *m, u64 start, u64 last,
			  enum cm_p2p_mode mode)
{
	unsigned int i;
	int k;

	for (i = 0; i < m->n; i++)
		if (m->b[i].start <= last && start <= m->b[i].last &&
		    m->b[i].mode != mode)
			return -EADDRINUSE;
	k = p2p_model_find(m, start, last, mode);
	if (k >= 0) {
		m->b[k].refs++;
		return 0;
	}
	m->b[m->n++] = (struct p2p_model_bind){ start, last, mode, 1 };
	return 0;
}

static int p2p_model_unbind(struct p2p_model *m, u64 start, u64 last,
			    enum cm_p2p_mode mode)
{
	int k = p2p_model_find(m, start, last, mode);

	if (k < 0)
		return -ENOENT;
	if (!--m->b[k].refs)
		m->b[k] = m->b[--m->n];
	return 0;
}

static enum cm_p2p_mode p2p_model_lookup(const struct p2p_model *m, u64 sid)
{
	unsigned int i;

	for (i = 0; i < m->n; i++)
		if (m->b[i].start <= sid && sid <= m->b[i].last)
			return m->b[i].mode;
	return NONE;
}

static unsigned int p2p_model_peers(const struct p2p_model *m)
{
	unsigned int i, n = 0;

	for (i = 0; i < m->n; i++)
		n += m->b[i].mode == PEER;
	return n;
}

static void p2p_table_model(struct kunit *test)
{
	static const unsigned int prefix[] = { 64, 64, 64, 64, 63, 62, 60, 58 };
	struct cm_p2p_table *table = p2p_test_table(test);
	unsigned int step, i, bad = 0, ops[2] = { 0, 0 };
	struct p2p_model *m;
	struct rnd_state rnd;

	m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m);
	prandom_seed_state(&rnd, 0x5eed0001);
	for (step = 0; step < 4000; step++) {
		u32 r = prandom_u32_state(&rnd);
		unsigned int len = prefix[r % ARRAY_SIZE(prefix)];
		u64 mask = PREFIX(len);
		u64 start = (P2P_MODEL_BASE + (r >> 8) % P2P_MODEL_SPACE) & mask;
		u64 last = start | ~mask;
		enum cm_p2p_mode mode = (r >> 4) & 1 ? PEER : CS;
		bool bind = (r >> 5) & 3 || !m->n;
		int want, got;

		if (bind && m->n == P2P_MODEL_MAX)
			bind = false;
		if (!bind && m->n && (r >> 7) & 1) {
			/* mostly unbind something that exists */
			const struct p2p_model_bind *b = &m->b[(r >> 16) % m->n];

			start = b->start;
			last = b->last;
			mode = b->mode;
			mask = ~(last - start);
		}
		if (bind) {
			want = p2p_model_bind(m, start, last, mode);
			got = cm_p2p_bind(table, SID(start), MASK(mask), mode,
					  GFP_KERNEL);
		} else {
			want = p2p_model_unbind(m, start, last, mode);
			got = cm_p2p_unbind(table, SID(start), MASK(mask),
					    mode);
		}
		ops[bind] += !want;
		KUNIT_ASSERT_EQ_MSG(test, want, got,
				    "step %u: %s %llx/%u mode %d", step,
				    bind ? "bind" : "unbind", start, len, mode);
		for (i = 0; i < 8; i++) {
			u64 sid = P2P_MODEL_BASE +
				  prandom_u32_state(&rnd) % P2P_MODEL_SPACE;

			bad += cm_p2p_lookup(table, SID(sid)) !=
			       p2p_model_lookup(m, sid);
		}
		KUNIT_ASSERT_EQ_MSG(test, p2p_model_peers(m),
				    cm_p2p_peer_binds(table), "step %u", step);
	}
	for (i = 0; i < P2P_MODEL_SPACE; i++)
		KUNIT_EXPECT_EQ(test, p2p_model_lookup(m, P2P_MODEL_BASE + i),
				cm_p2p_lookup(table, SID(P2P_MODEL_BASE + i)));
	KUNIT_EXPECT_EQ(test, NONE, cm_p2p_lookup(table, SID(P2P_MODEL_BASE - 1)));
	KUNIT_EXPECT_EQ(test, NONE,
			cm_p2p_lookup(table,
				      SID(P2P_MODEL_BASE + P2P_MODEL_SPACE)));
	KUNIT_EXPECT_EQ(test, 0U, bad);
	/* both kinds of operation must have succeeded often */
	KUNIT_EXPECT_GT(test, ops[0], 200U);
	KUNIT_EXPECT_GT(test, ops[1], 200U);
	kunit_info(test, "%u binds, %u unbinds, %u binds left\n", ops[1],
		   ops[0], m->n);
}

/*
 * Lookups while other threads bind and unbind: a ServiceID that only
 * ever toggles between PEER and unbound must never read as CLIENT_SERVER
 * (and vice versa), and stable binds must never disappear.
 */
struct p2p_writer {
	struct cm_p2p_table *table;
	u64 base;
	enum cm_p2p_mode mode;
	unsigned long ops;
	unsigned long errors;
};

static int p2p_writer_fn(void *arg)
{
	struct p2p_writer *w = arg;
	unsigned int i = 0;

	while (!kthread_should_stop()) {
		u64 sid = w->base + (i++ % 64);

		if (cm_p2p_bind(w->table, SID(sid), MASK(EXACT), w->mode,
				GFP_KERNEL))
			w->errors++;
		if (i % 3 == 0 &&
		    cm_p2p_bind(w->table, SID(w->base + 0x1000), MASK(PREFIX(56)),
				w->mode, GFP_KERNEL) == 0)
			cm_p2p_unbind(w->table, SID(w->base + 0x1000),
				      MASK(PREFIX(56)), w->mode);
		if (cm_p2p_unbind(w->table, SID(sid), MASK(EXACT), w->mode))
			w->errors++;
		w->ops++;
		cond_resched();
	}
	return 0;
}

static void p2p_table_concurrent(struct kunit *test)
{
	struct cm_p2p_table *table = p2p_test_table(test);
	struct p2p_writer w[2] = {
		{ .table = table, .base = 0x100000, .mode = PEER },
		{ .table = table, .base = 0x200000, .mode = CS },
	};
	struct task_struct *task[2];
	unsigned long reads = 0, bad = 0, deadline;
	struct rnd_state rnd;
	int i;

	KUNIT_ASSERT_EQ(test, 0, cm_p2p_bind(table, SID(0x50), MASK(EXACT),
					     PEER, GFP_KERNEL));
	KUNIT_ASSERT_EQ(test, 0, cm_p2p_bind(table, SID(0x60), MASK(EXACT),
					     CS, GFP_KERNEL));
	for (i = 0; i < 2; i++) {
		task[i] = kthread_run(p2p_writer_fn, &w[i], "cm_p2p_w%d", i);
		KUNIT_ASSERT_FALSE(test, IS_ERR(task[i]));
	}

	prandom_seed_state(&rnd, 42);
	deadline = jiffies + msecs_to_jiffies(300);
	while (time_before(jiffies, deadline)) {
		u32 r = prandom_u32_state(&rnd);
		enum cm_p2p_mode m;

		m = cm_p2p_lookup(table, SID(0x100000 + r % 64));
		bad += m != PEER && m != NONE;
		m = cm_p2p_lookup(table, SID(0x200000 + r % 64));
		bad += m != CS && m != NONE;
		m = cm_p2p_lookup(table, SID(0x101000 + (r & 0xff)));
		bad += m != PEER && m != NONE;
		bad += cm_p2p_lookup(table, SID(0x50)) != PEER;
		bad += cm_p2p_lookup(table, SID(0x60)) != CS;
		reads++;
		if (!(reads % 64))
			cond_resched();
	}
	for (i = 0; i < 2; i++)
		kthread_stop(task[i]);

	kunit_info(test, "%lu read rounds, %lu + %lu writer rounds\n", reads,
		   w[0].ops, w[1].ops);
	KUNIT_EXPECT_EQ(test, 0UL, bad);
	KUNIT_EXPECT_EQ(test, 0UL, w[0].errors);
	KUNIT_EXPECT_EQ(test, 0UL, w[1].errors);
	KUNIT_EXPECT_GT(test, reads, 0UL);
	KUNIT_EXPECT_GT(test, w[0].ops, 0UL);
	KUNIT_EXPECT_GT(test, w[1].ops, 0UL);
	/* Writers leave only the two stable binds behind. */
	KUNIT_EXPECT_EQ(test, 1U, cm_p2p_peer_binds(table));
	KUNIT_EXPECT_EQ(test, NONE, cm_p2p_lookup(table, SID(0x100001)));
	KUNIT_EXPECT_EQ(test, NONE, cm_p2p_lookup(table, SID(0x200001)));
}

/* Arbiter. */

static void p2p_gid(union ib_gid *gid, const char *hex)
{
	/* 32 hex digits, no separators */
	WARN_ON(hex2bin(gid->raw, hex, sizeof(gid->raw)));
}

struct p2p_arb_case {
	const char *name;
	const char *lgid;
	u32 lqpn;
	const char *rgid;
	u32 rqpn;
	int expect;
};

#define GID_V4_1 "00000000000000000000ffffc6120001"	/* ::ffff:198.18.0.1 */
#define GID_V4_2 "00000000000000000000ffffc6120002"	/* ::ffff:198.18.0.2 */
#define GID_LL_A "fe800000000000000002c903000e1a01"
#define GID_LL_B "fe800000000000000002c903000e1a02"
#define GID_HI   "fe800000000000000002c903000e1a01"

static const struct p2p_arb_case p2p_arb_cases[] = {
	{ "greater gid is active", GID_V4_2, 0x11, GID_V4_1, 0x22,
	  CM_P2P_ACTIVE },
	{ "smaller gid is passive", GID_V4_1, 0x22, GID_V4_2, 0x11,
	  CM_P2P_PASSIVE },
	{ "gid decides before qpn", GID_LL_B, 0x1, GID_LL_A, 0xffffff,
	  CM_P2P_ACTIVE },
	{ "equal gid: greater qpn active", GID_HI, 0x12, GID_HI, 0x11,
	  CM_P2P_ACTIVE },
	{ "equal gid: smaller qpn passive", GID_HI, 0x11, GID_HI, 0x12,
	  CM_P2P_PASSIVE },
	{ "qpn is 24 bits", GID_HI, 0x01000011, GID_HI, 0x12,
	  CM_P2P_PASSIVE },
	{ "own req is an error", GID_V4_1, 0x11, GID_V4_1, 0x11, -ELOOP },
	{ "own req, qpn upper bits", GID_V4_1, 0xff000011, GID_V4_1, 0x11,
	  -ELOOP },
	{ "first byte decides", "01ffffffffffffffffffffffffffffff", 1,
	  "02000000000000000000000000000000", 2, CM_P2P_PASSIVE },
};

static void p2p_arb_case_desc(const struct p2p_arb_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(p2p_arb, p2p_arb_cases, p2p_arb_case_desc);

static void p2p_arbiter_cases(struct kunit *test)
{
	const struct p2p_arb_case *c = test->param_value;
	struct cm_p2p_ident l = { .qpn = c->lqpn }, r = { .qpn = c->rqpn };

	p2p_gid(&l.gid, c->lgid);
	p2p_gid(&r.gid, c->rgid);
	KUNIT_EXPECT_EQ(test, c->expect, cm_p2p_arbitrate(&l, &r));
}

/*
 * Reference order, written independently of the implementation: the REQ
 * identity as a 152-bit big-endian number, GID bytes then the 24-bit QPN.
 */
static int p2p_ref_cmp(const struct cm_p2p_ident *a,
		       const struct cm_p2p_ident *b)
{
	u8 ka[19], kb[19];
	int i;

	memcpy(ka, a->gid.raw, 16);
	memcpy(kb, b->gid.raw, 16);
	for (i = 0; i < 3; i++) {
		ka[16 + i] = a->qpn >> (16 - 8 * i);
		kb[16 + i] = b->qpn >> (16 - 8 * i);
	}
	for (i = 0; i < 19; i++)
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
	/* antisymmetry, stated on its own */
	KUNIT_EXPECT_NE(test, ab, ba);
	KUNIT_EXPECT_TRUE(test, ab == CM_P2P_ACTIVE || ab == CM_P2P_PASSIVE);
	KUNIT_EXPECT_TRUE(test, ba == CM_P2P_ACTIVE || ba == CM_P2P_PASSIVE);
	return 1;
}

static const char * const p2p_gids[] = {
	"00000000000000000000000000000000",
	"ffffffffffffffffffffffffffffffff",
	GID_V4_1,
	GID_V4_2,
	"00000000000000000000ffffc613ffff",	/* ::ffff:198.19.255.255 */
	"00000000000000000000ffff7f000001",	/* ::ffff:127.0.0.1 */
	GID_LL_A,
	GID_LL_B,
	"fe800000000000000002c903000e1afe",	/* last byte only */
	"fe800000000000000002c903000e1aff",
	"7e800000000000000002c903000e1aff",	/* first byte only */
	"fe800000000000010002c903000e1a01",	/* other subnet prefix */
};

static const u32 p2p_qpns[] = {
	0x1, 0x2, 0x11, 0x12, 0x7fffff, 0x800000, 0xfffffe, 0xffffff,
	0x01000001,	/* == 0x1 once masked to 24 bits */
};

static void p2p_arbiter_exhaustive(struct kunit *test)
{
	const unsigned int ng = ARRAY_SIZE(p2p_gids), nq = ARRAY_SIZE(p2p_qpns);
	struct cm_p2p_ident *id;
	unsigned int i, j, pairs = 0, selfs = 0;

	id = kunit_kcalloc(test, ng * nq, sizeof(*id), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, id);
	for (i = 0; i < ng * nq; i++) {
		p2p_gid(&id[i].gid, p2p_gids[i / nq]);
		id[i].qpn = p2p_qpns[i % nq];
	}
	for (i = 0; i < ng * nq; i++) {
		for (j = i; j < ng * nq; j++) {
			if (p2p_check_pair(test, &id[i], &id[j]))
				pairs++;
			else
				selfs++;
		}
	}
	kunit_info(test, "%u ordered pairs decided, %u self pairs\n", pairs,
		   selfs);
	/* every identity with itself, plus qpn 0x1 vs 0x01000001 per gid */
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
		prandom_bytes_state(&rnd, a.gid.raw, sizeof(a.gid.raw));
		b.gid = a.gid;
		/* mostly near-equal GIDs, so the QPN rule is exercised too */
		switch (i % 4) {
		case 0:
			prandom_bytes_state(&rnd, b.gid.raw, sizeof(b.gid.raw));
			break;
		case 1:
			b.gid.raw[prandom_u32_state(&rnd) % 16] ^=
				1 << (prandom_u32_state(&rnd) % 8);
			break;
		default:
			break;
		}
		a.qpn = prandom_u32_state(&rnd);
		b.qpn = i % 8 ? prandom_u32_state(&rnd) & 0xff : a.qpn;
		a.qpn &= i % 3 ? 0xff : 0xffffffff;
		decided += p2p_check_pair(test, &a, &b);
	}
	KUNIT_EXPECT_GT(test, decided, 15000U);
}

/* Rendezvous queue. */

static void p2p_rdv_release(void *rdv)
{
	cm_p2p_rdv_free(rdv);
}

static struct cm_p2p_rdv *p2p_test_rdv(struct kunit *test,
				       unsigned int max_held,
				       unsigned int max_age_ms)
{
	struct cm_p2p_rdv *rdv = cm_p2p_rdv_alloc(max_held, max_age_ms,
						  GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, rdv);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   p2p_rdv_release,
							   rdv));
	return rdv;
}

/* A key for a REQ from @gid to our port GID ::ffff:198.18.0.1 */
static void p2p_key(struct cm_p2p_rdv_key *key, u64 sid, const char *gid)
{
	key->service_id = SID(sid);
	p2p_gid(&key->remote_gid, gid);
	p2p_gid(&key->local_gid, GID_V4_1);
}

static void p2p_held_release(void *held)
{
	cm_p2p_held_free(held);
}

static struct cm_p2p_held *p2p_claim(struct kunit *test,
				     struct cm_p2p_rdv *rdv,
				     const struct cm_p2p_rdv_key *key)
{
	struct cm_p2p_held *held = cm_p2p_rdv_claim(rdv, key);

	if (held)
		KUNIT_ASSERT_EQ(test, 0,
				kunit_add_action_or_reset(test,
							  p2p_held_release,
							  held));
	return held;
}

static void p2p_rdv_hold_claim(struct kunit *test)
{
	struct cm_p2p_rdv *rdv = p2p_test_rdv(test, 8, 10000);
	struct cm_p2p_rdv_key key, other_sid, other_gid, other_local;
	u8 req[256];
	struct cm_p2p_held *held;
	unsigned int i;

	for (i = 0; i < sizeof(req); i++)
		req[i] = i * 7;
	p2p_key(&key, 0x10000, GID_V4_2);
	p2p_key(&other_sid, 0x10001, GID_V4_2);
	p2p_key(&other_gid, 0x10000, GID_V4_1);
	/* same ServiceID and sender, sent to another local GID */
	p2p_key(&other_local, 0x10000, GID_V4_2);
	p2p_gid(&other_local.local_gid, GID_LL_A);

	KUNIT_EXPECT_EQ(test, 0, cm_p2p_rdv_hold(rdv, &key, cpu_to_be32(0xabc),
						 0x44, req, sizeof(req),
						 GFP_KERNEL));
	KUNIT_EXPECT_EQ(test, 1U, cm_p2p_rdv_count(rdv));
	KUNIT_EXPECT_NULL(test, p2p_claim(test, rdv, &other_sid));
	KUNIT_EXPECT_NULL(test, p2p_claim(test, rdv, &other_gid));
	KUNIT_EXPECT_NULL(test, p2p_claim(test, rdv, &other_local));
	KUNIT_EXPECT_EQ(test, 1U, cm_p2p_rdv_count(rdv));

	held = p2p_claim(test, rdv, &key);
	KUNIT_ASSERT_NOT_NULL(test, held);
	KUNIT_EXPECT_EQ(test, 0U, cm_p2p_rdv_count(rdv));
	KUNIT_EXPECT_EQ(test, sizeof(req), held->len);
	KUNIT_EXPECT_MEMEQ(test, req, held->data, sizeof(req));
	KUNIT_EXPECT_TRUE(test, held->remote_comm_id == cpu_to_be32(0xabc));
	KUNIT_EXPECT_EQ(test, 0x44U, held->remote_qpn);
	KUNIT_EXPECT_TRUE(test, key.service_id == held->key.service_id);
	KUNIT_EXPECT_NULL(test, p2p_claim(test, rdv, &key));

	/* a zero-length copy is fine; an oversized one is refused */
	KUNIT_EXPECT_EQ(test, 0, cm_p2p_rdv_hold(rdv, &key, cpu_to_be32(1), 1,
						 NULL, 0, GFP_KERNEL));
	KUNIT_EXPECT_EQ(test, -EMSGSIZE,
			cm_p2p_rdv_hold(rdv, &key, cpu_to_be32(2), 1, req,
					CM_P2P_RDV_MAX_DATA + 1, GFP_KERNEL));
	KUNIT_EXPECT_EQ(test, 1U, cm_p2p_rdv_count(rdv));
}

static void p2p_rdv_bounds(struct kunit *test)
{
	struct cm_p2p_rdv *rdv = p2p_test_rdv(test, 4, 10000);
	struct cm_p2p_rdv_key key;
	u32 v;

	p2p_key(&key, 0x20000, GID_LL_A);
	for (v = 0; v < 4; v++)
		KUNIT_EXPECT_EQ(test, 0,
				cm_p2p_rdv_hold(rdv, &key, cpu_to_be32(v), v,
						&v, sizeof(v), GFP_KERNEL));
	KUNIT_EXPECT_EQ(test, -ENOSPC,
			cm_p2p_rdv_hold(rdv, &key, cpu_to_be32(v), v, &v,
					sizeof(v), GFP_KERNEL));
	/* a retransmitted REQ is recognised even when the queue is full */
	KUNIT_EXPECT_EQ(test, -EALREADY,
			cm_p2p_rdv_hold(rdv, &key, cpu_to_be32(2), 2, &v,
					sizeof(v), GFP_KERNEL));
	KUNIT_EXPECT_EQ(test, 4U, cm_p2p_rdv_count(rdv));
	KUNIT_EXPECT_NOT_NULL(test, p2p_claim(test, rdv, &key));
	KUNIT_EXPECT_EQ(test, 0, cm_p2p_rdv_hold(rdv, &key, cpu_to_be32(v), v,
						 &v, sizeof(v), GFP_KERNEL));
	KUNIT_EXPECT_EQ(test, 4U, cm_p2p_rdv_count(rdv));
	/* entries left in the queue are freed with it */
}

static void p2p_rdv_default_limit(struct kunit *test)
{
	/* 0 follows the p2p_rdv_max_held module parameter (default 64) */
	struct cm_p2p_rdv *rdv = p2p_test_rdv(test, 0, 0);
	struct cm_p2p_rdv_key key;
	unsigned long when;
	u32 v;

	p2p_key(&key, 0x30000, GID_LL_B);
	for (v = 0; v < 64; v++)
		KUNIT_ASSERT_EQ(test, 0,
				cm_p2p_rdv_hold(rdv, &key, cpu_to_be32(v), v,
						NULL, 0, GFP_KERNEL));
	KUNIT_EXPECT_EQ(test, -ENOSPC,
			cm_p2p_rdv_hold(rdv, &key, cpu_to_be32(v), v, NULL, 0,
					GFP_KERNEL));
	/* default age 5000 ms */
	KUNIT_ASSERT_TRUE(test, cm_p2p_rdv_next_expiry(rdv, &when));
	KUNIT_EXPECT_TRUE(test, time_after(when, jiffies +
					   msecs_to_jiffies(4000)));
	KUNIT_EXPECT_TRUE(test, time_before_eq(when, jiffies +
					       msecs_to_jiffies(5000)));
}

/* withdraw's match: the entry's data (a u32 "source") equals *arg */
static bool p2p_withdraw_match(const struct cm_p2p_held *held, const void *arg)
{
	return held->len == sizeof(u32) && *(const u32 *)held->data ==
					    *(const u32 *)arg;
}

/*
 * A REJ from a held REQ's sender takes it out: found by communication ID
 * and the caller's source check alone, whatever its ServiceID.
 */
static void p2p_rdv_withdraw(struct kunit *test)
{
	struct cm_p2p_rdv *rdv = p2p_test_rdv(test, 8, 10000);
	struct cm_p2p_rdv_key k1, k2;
	struct cm_p2p_held *held;
	u32 src_a = 0xa, src_b = 0xb, other = 0xc;

	p2p_key(&k1, 0x50000, GID_V4_2);
	p2p_key(&k2, 0x50001, GID_V4_2);
	/* same comm ID 7 from two sources, and comm ID 8 from source a */
	KUNIT_ASSERT_EQ(test, 0, cm_p2p_rdv_hold(rdv, &k1, cpu_to_be32(7), 1,
						 &src_a, sizeof(u32),
						 GFP_KERNEL));
	KUNIT_ASSERT_EQ(test, 0, cm_p2p_rdv_hold(rdv, &k2, cpu_to_be32(7), 2,
						 &src_b, sizeof(u32),
						 GFP_KERNEL));
	KUNIT_ASSERT_EQ(test, 0, cm_p2p_rdv_hold(rdv, &k2, cpu_to_be32(8), 3,
						 &src_a, sizeof(u32),
						 GFP_KERNEL));

	/* unknown source, unknown comm ID: nothing taken */
	KUNIT_EXPECT_NULL(test, cm_p2p_rdv_withdraw(rdv, cpu_to_be32(7),
						    p2p_withdraw_match,
						    &other));
	KUNIT_EXPECT_NULL(test, cm_p2p_rdv_withdraw(rdv, cpu_to_be32(9),
						    p2p_withdraw_match,
						    &src_a));
	KUNIT_EXPECT_EQ(test, 3U, cm_p2p_rdv_count(rdv));

	held = cm_p2p_rdv_withdraw(rdv, cpu_to_be32(7), p2p_withdraw_match,
				   &src_b);
	KUNIT_ASSERT_NOT_NULL(test, held);
	KUNIT_EXPECT_EQ(test, 2U, held->remote_qpn);
	cm_p2p_held_free(held);
	KUNIT_EXPECT_EQ(test, 2U, cm_p2p_rdv_count(rdv));
	/* gone: not claimable, not withdrawn twice */
	KUNIT_EXPECT_NULL(test, cm_p2p_rdv_withdraw(rdv, cpu_to_be32(7),
						    p2p_withdraw_match,
						    &src_b));
	held = p2p_claim(test, rdv, &k2);
	KUNIT_ASSERT_NOT_NULL(test, held);
	KUNIT_EXPECT_EQ(test, 3U, held->remote_qpn);

	held = cm_p2p_rdv_withdraw(rdv, cpu_to_be32(7), p2p_withdraw_match,
				   &src_a);
	KUNIT_ASSERT_NOT_NULL(test, held);
	KUNIT_EXPECT_EQ(test, 1U, held->remote_qpn);
	cm_p2p_held_free(held);
	KUNIT_EXPECT_EQ(test, 0U, cm_p2p_rdv_count(rdv));
}

static void p2p_rdv_order_and_drop(struct kunit *test)
{
	struct cm_p2p_rdv *rdv = p2p_test_rdv(test, 8, 10000);
	struct cm_p2p_rdv_key key;
	struct cm_p2p_held *held;
	u32 v;

	p2p_key(&key, 0x40000, GID_V4_1);
	for (v = 10; v < 14; v++)
		KUNIT_ASSERT_EQ(test, 0,
				cm_p2p_rdv_hold(rdv, &key, cpu_to_be32(v), v,
						&v, sizeof(v), GFP_KERNEL));
	KUNIT_EXPECT_TRUE(test, cm_p2p_rdv_drop(rdv, &key, cpu_to_be32(11)));
	KUNIT_EXPECT_FALSE(test, cm_p2p_rdv_drop(rdv, &key, cpu_to_be32(11)));
	KUNIT_EXPECT_EQ(test, 3U, cm_p2p_rdv_count(rdv));
	for (v = 10; v < 14; v++) {
		if (v == 11)
			continue;
		held = p2p_claim(test, rdv, &key);
		KUNIT_ASSERT_NOT_NULL(test, held);
		KUNIT_EXPECT_EQ(test, v, held->remote_qpn);
		KUNIT_EXPECT_EQ(test, v, *(u32 *)held->data);
	}
	KUNIT_EXPECT_NULL(test, p2p_claim(test, rdv, &key));
	KUNIT_EXPECT_EQ(test, 0U, cm_p2p_rdv_count(rdv));
}

static void p2p_rdv_expiry(struct kunit *test)
{
	struct cm_p2p_rdv *rdv = p2p_test_rdv(test, 8, 30);
	struct cm_p2p_rdv_key key, fresh;
	unsigned long when;
	LIST_HEAD(expired);
	struct cm_p2p_held *held;
	u32 v = 1;

	p2p_key(&key, 0x50000, GID_V4_2);
	p2p_key(&fresh, 0x50001, GID_V4_2);
	KUNIT_EXPECT_FALSE(test, cm_p2p_rdv_next_expiry(rdv, &when));
	KUNIT_ASSERT_EQ(test, 0, cm_p2p_rdv_hold(rdv, &key, cpu_to_be32(1), 1,
						 &v, sizeof(v), GFP_KERNEL));
	KUNIT_ASSERT_EQ(test, 0, cm_p2p_rdv_hold(rdv, &key, cpu_to_be32(2), 2,
						 &v, sizeof(v), GFP_KERNEL));
	KUNIT_EXPECT_TRUE(test, cm_p2p_rdv_next_expiry(rdv, &when));
	KUNIT_EXPECT_EQ(test, 0U, cm_p2p_rdv_expire(rdv, &expired));
	KUNIT_EXPECT_TRUE(test, list_empty(&expired));

	msleep(120);
	KUNIT_EXPECT_TRUE(test, time_after_eq(jiffies, when));
	KUNIT_ASSERT_EQ(test, 0, cm_p2p_rdv_hold(rdv, &fresh, cpu_to_be32(3),
						 3, &v, sizeof(v),
						 GFP_KERNEL));
	/* expired entries are never handed out by a claim */
	KUNIT_EXPECT_NULL(test, p2p_claim(test, rdv, &key));
	KUNIT_EXPECT_EQ(test, 3U, cm_p2p_rdv_count(rdv));
	KUNIT_EXPECT_EQ(test, 2U, cm_p2p_rdv_expire(rdv, &expired));
	KUNIT_EXPECT_EQ(test, 1U, cm_p2p_rdv_count(rdv));
	KUNIT_EXPECT_EQ(test, 1U, list_first_entry(&expired, struct cm_p2p_held,
						   list)->remote_qpn);
	KUNIT_EXPECT_EQ(test, 2U, list_last_entry(&expired, struct cm_p2p_held,
						  list)->remote_qpn);
	cm_p2p_held_list_free(&expired);
	KUNIT_EXPECT_TRUE(test, list_empty(&expired));
	held = p2p_claim(test, rdv, &fresh);
	KUNIT_ASSERT_NOT_NULL(test, held);
	KUNIT_EXPECT_EQ(test, 3U, held->remote_qpn);
}

static void p2p_rdv_disabled(struct kunit *test)
{
	/* an age of 1 ms: entries stop being claimable almost at once */
	struct cm_p2p_rdv *rdv = p2p_test_rdv(test, 2, 1);
	struct cm_p2p_rdv_key key;
	LIST_HEAD(expired);

	p2p_key(&key, 0x60000, GID_V4_1);
	KUNIT_ASSERT_EQ(test, 0, cm_p2p_rdv_hold(rdv, &key, cpu_to_be32(1), 1,
						 NULL, 0, GFP_KERNEL));
	msleep(30);
	KUNIT_EXPECT_NULL(test, p2p_claim(test, rdv, &key));
	KUNIT_EXPECT_EQ(test, 1U, cm_p2p_rdv_expire(rdv, &expired));
	cm_p2p_held_list_free(&expired);
}

static void p2p_rdv_drain(struct kunit *test)
{
	struct cm_p2p_rdv *rdv = p2p_test_rdv(test, 8, 250);
	struct cm_p2p_rdv_key a, b;
	struct cm_p2p_held *held;
	LIST_HEAD(all);
	u32 v;

	KUNIT_EXPECT_EQ(test, 250U, cm_p2p_rdv_max_age_ms(rdv));
	p2p_key(&a, 0x80000, GID_V4_1);
	p2p_key(&b, 0x80001, GID_V4_2);
	for (v = 0; v < 6; v++)
		KUNIT_ASSERT_EQ(test, 0,
				cm_p2p_rdv_hold(rdv, v % 2 ? &b : &a,
						cpu_to_be32(v), v, &v, sizeof(v),
						GFP_KERNEL));
	KUNIT_EXPECT_EQ(test, 6U, cm_p2p_rdv_drain(rdv, &all));
	KUNIT_EXPECT_EQ(test, 0U, cm_p2p_rdv_count(rdv));
	KUNIT_EXPECT_NULL(test, p2p_claim(test, rdv, &a));
	v = 0;
	list_for_each_entry(held, &all, list)
		KUNIT_EXPECT_EQ(test, v++, held->remote_qpn);
	KUNIT_EXPECT_EQ(test, 6U, v);
	cm_p2p_held_list_free(&all);
	/* the queue still works after a drain */
	KUNIT_EXPECT_EQ(test, 0, cm_p2p_rdv_hold(rdv, &a, cpu_to_be32(9), 9,
						 NULL, 0, GFP_KERNEL));
	KUNIT_EXPECT_EQ(test, 1U, cm_p2p_rdv_count(rdv));
}

static void p2p_rdv_default_age(struct kunit *test)
{
	struct cm_p2p_rdv *rdv = p2p_test_rdv(test, 1, 0);

	/* 0 follows the p2p_rdv_max_age_ms module parameter (default 5000) */
	KUNIT_EXPECT_EQ(test, 5000U, cm_p2p_rdv_max_age_ms(rdv));
}

struct p2p_rdv_producer {
	struct cm_p2p_rdv *rdv;
	struct cm_p2p_rdv_key key;
	unsigned long held, refused;
};

static int p2p_rdv_producer_fn(void *arg)
{
	struct p2p_rdv_producer *p = arg;
	u32 id = 0;

	while (!kthread_should_stop()) {
		if (cm_p2p_rdv_hold(p->rdv, &p->key, cpu_to_be32(id), id, &id,
				    sizeof(id), GFP_KERNEL))
			p->refused++;
		else
			p->held++;
		id++;
		cond_resched();
	}
	return 0;
}

static void p2p_rdv_concurrent(struct kunit *test)
{
	struct cm_p2p_rdv *rdv = p2p_test_rdv(test, 16, 10000);
	struct p2p_rdv_producer p = { .rdv = rdv };
	unsigned long claimed = 0, deadline;
	struct task_struct *task;
	struct cm_p2p_held *held;
	u32 last = 0;
	bool order_ok = true;

	p2p_key(&p.key, 0x70000, GID_LL_A);
	task = kthread_run(p2p_rdv_producer_fn, &p, "cm_p2p_rdv");
	KUNIT_ASSERT_FALSE(test, IS_ERR(task));
	deadline = jiffies + msecs_to_jiffies(200);
	while (time_before(jiffies, deadline)) {
		held = cm_p2p_rdv_claim(rdv, &p.key);
		if (held) {
			u32 id = *(u32 *)held->data;

			if (claimed && id <= last)
				order_ok = false;
			last = id;
			claimed++;
			cm_p2p_held_free(held);
		}
		KUNIT_EXPECT_LE(test, cm_p2p_rdv_count(rdv), 16U);
		cond_resched();
	}
	kthread_stop(task);
	kunit_info(test, "held %lu, refused %lu, claimed %lu\n", p.held,
		   p.refused, claimed);
	KUNIT_EXPECT_GT(test, claimed, 0UL);
	KUNIT_EXPECT_TRUE(test, order_ok);
	KUNIT_EXPECT_EQ(test, p.held, claimed + cm_p2p_rdv_count(rdv));
}

static struct kunit_case cm_p2p_table_test_cases[] = {
	KUNIT_CASE_PARAM(p2p_table_script, p2p_table_gen_params),
	KUNIT_CASE(p2p_table_many),
	KUNIT_CASE(p2p_table_model),
	KUNIT_CASE_SLOW(p2p_table_concurrent),
	{}
};

static struct kunit_suite cm_p2p_table_test_suite = {
	.name = "cm_p2p_table",
	.test_cases = cm_p2p_table_test_cases,
};

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

static struct kunit_case cm_p2p_rdv_test_cases[] = {
	KUNIT_CASE(p2p_rdv_hold_claim),
	KUNIT_CASE(p2p_rdv_bounds),
	KUNIT_CASE(p2p_rdv_default_limit),
	KUNIT_CASE(p2p_rdv_order_and_drop),
	KUNIT_CASE(p2p_rdv_withdraw),
	KUNIT_CASE(p2p_rdv_expiry),
	KUNIT_CASE(p2p_rdv_disabled),
	KUNIT_CASE(p2p_rdv_drain),
	KUNIT_CASE(p2p_rdv_default_age),
	KUNIT_CASE_SLOW(p2p_rdv_concurrent),
	{}
};

static struct kunit_suite cm_p2p_rdv_test_suite = {
	.name = "cm_p2p_rdv",
	.test_cases = cm_p2p_rdv_test_cases,
};

kunit_test_suites(&cm_p2p_table_test_suite, &cm_p2p_arbiter_test_suite,
		  &cm_p2p_rdv_test_suite);
