// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Microbenchmarks of the IB CM peer-to-peer index (suite cm_peer_bench,
 * CONFIG_INFINIBAND_CM_PEER_KUNIT_BENCH; built only in the benchmark
 * kernel, never in the test run).
 *
 * A REQ for a peer service ID is matched in that service ID's index:
 * first among the waiting peer ids, then, if none waits for it, held.
 * The cases time, in one run, with n = 1, 1k and 100k entries of 100k
 * distinct keys (rdma_cm's 36-byte match blob, GIDs of one port pair):
 *
 *  - match: cm_peer_first() of the waiting ids, for a key present and one
 *    absent;
 *  - hold, claim: cm_peer_hold() of REQs and cm_peer_claim() of them
 *    back by key, timed apart, with n REQs held;
 *  - the cost of a listen_service_table-like lookup (an rb-tree of n
 *    64-bit service IDs), what every REQ pays before and after the patch.
 *
 * Results are "bench: <name> <ns per op>" lines in the KUnit log; the
 * expectations check only that the lookups are right.
 */
#include <kunit/test.h>
#include <linux/ktime.h>
#include <linux/rbtree.h>
#include <linux/vmalloc.h>

#include "cm_peer.h"

#define BENCH_OPS	BIT(20)
#define BENCH_MATCH	36
#define BENCH_MAX	100000

struct bench_ent {
	struct cm_peer_held held;
	u8 match[BENCH_MATCH];
};

/* Key @i: the remote's port and address in a cma_hdr-like blob. */
static void bench_key(struct cm_peer_key *key, u8 *match, u32 i)
{
	memset(key, 0, sizeof(*key));
	key->local_gid.raw[15] = 1;
	key->remote_gid.raw[15] = 2;
	memset(match, 0, BENCH_MATCH);
	match[0] = 0x00;		/* version */
	match[1] = 0x40;		/* IPv4 */
	match[2] = 0x1d + (i >> 8) % 16; /* port 7424 + i % 4096 */
	match[3] = i;
	match[16] = 198;		/* 198.18.x.y, i / 4096 */
	match[17] = 18;
	match[18] = i >> 20;
	match[19] = i >> 12;
	key->match = match;
}

static void bench_report(struct kunit *test, const char *name, u32 n,
			 u64 ns, u32 ops)
{
	u64 ps = div_u64(ns * 1000, ops);

	kunit_info(test, "bench: %s n=%u %llu.%03llu\n", name, n,
		   ps / 1000, ps % 1000);
}

static const u32 bench_sizes[] = { 1, 1000, BENCH_MAX };

static void bench_match(struct kunit *test)
{
	struct bench_ent *e = vzalloc(sizeof(*e) * BENCH_MAX);
	struct cm_peer_index idx;
	struct cm_peer_key key;
	u8 match[BENCH_MATCH];
	unsigned int s, i, found;
	u64 t;

	KUNIT_ASSERT_NOT_NULL(test, e);
	for (s = 0; s < ARRAY_SIZE(bench_sizes); s++) {
		u32 n = bench_sizes[s];

		cm_peer_index_init(&idx, BENCH_MATCH);
		for (i = 0; i < n; i++) {
			bench_key(&e[i].held.entry.key, e[i].match, i);
			cm_peer_add(&idx, CM_PEER_WAITING, &e[i].held.entry);
		}
		found = 0;
		t = ktime_get_ns();
		for (i = 0; i < BENCH_OPS; i++) {
			bench_key(&key, match, i % n);
			found += !!cm_peer_first(&idx, CM_PEER_WAITING, &key);
		}
		bench_report(test, "match_hit", n, ktime_get_ns() - t,
			     BENCH_OPS);
		KUNIT_EXPECT_EQ(test, BENCH_OPS, found);
		found = 0;
		t = ktime_get_ns();
		for (i = 0; i < BENCH_OPS; i++) {
			bench_key(&key, match, n + i % n);
			found += !!cm_peer_first(&idx, CM_PEER_WAITING, &key);
		}
		bench_report(test, "match_miss", n, ktime_get_ns() - t,
			     BENCH_OPS);
		KUNIT_EXPECT_EQ(test, 0U, found);
		for (i = 0; i < n; i++)
			cm_peer_del(&idx, CM_PEER_WAITING, &e[i].held.entry);
	}
	vfree(e);
}

/*
 * Hold and claim, timed apart: with n REQs held, BENCH_BATCH more are
 * held, then claimed back by key, BENCH_OPS of each in all.
 */
#define BENCH_BATCH	1024

static void bench_hold_batch(struct cm_peer_queue *q,
			     struct cm_peer_index *idx, struct bench_ent *x,
			     u32 first, u64 *hold_ns, u64 *claim_ns,
			     unsigned int *ok)
{
	unsigned int i;
	u64 t;

	for (i = 0; i < BENCH_BATCH; i++) {
		bench_key(&x[i].held.entry.key, x[i].match, first + i);
		x[i].held.remote_comm_id = cpu_to_be32(first + i);
	}
	t = ktime_get_ns();
	for (i = 0; i < BENCH_BATCH; i++)
		*ok += !cm_peer_hold(q, idx, &x[i].held, 0);
	*hold_ns += ktime_get_ns() - t;
	t = ktime_get_ns();
	for (i = 0; i < BENCH_BATCH; i++)
		*ok += cm_peer_claim(q, idx, &x[i].held.entry.key) ==
		       &x[i].held;
	*claim_ns += ktime_get_ns() - t;
}

static void bench_hold_claim(struct kunit *test)
{
	struct bench_ent *e = vzalloc(sizeof(*e) * (BENCH_MAX + BENCH_BATCH));
	struct cm_peer_index idx;
	struct cm_peer_queue q;
	u64 hold_ns, claim_ns;
	unsigned int s, i, ok;

	KUNIT_ASSERT_NOT_NULL(test, e);
	for (s = 0; s < ARRAY_SIZE(bench_sizes); s++) {
		u32 n = bench_sizes[s];

		cm_peer_index_init(&idx, BENCH_MATCH);
		cm_peer_queue_init(&q, n + BENCH_BATCH, n + BENCH_BATCH,
				   600000);
		for (i = 0; i < n; i++) {
			bench_key(&e[i].held.entry.key, e[i].match, i);
			e[i].held.remote_comm_id = cpu_to_be32(i);
			KUNIT_ASSERT_EQ(test, 0,
					cm_peer_hold(&q, &idx, &e[i].held, 0));
		}
		ok = 0;
		hold_ns = 0;
		claim_ns = 0;
		for (i = 0; i < BENCH_OPS / BENCH_BATCH; i++)
			bench_hold_batch(&q, &idx, &e[BENCH_MAX],
					 n + (i * BENCH_BATCH) % BENCH_MAX,
					 &hold_ns, &claim_ns, &ok);
		bench_report(test, "hold", n, hold_ns, BENCH_OPS);
		bench_report(test, "claim", n, claim_ns, BENCH_OPS);
		KUNIT_EXPECT_EQ(test, 2 * BENCH_OPS, ok);
		for (i = 0; i < n; i++)
			cm_peer_unhold(&q, &e[i].held);
		KUNIT_EXPECT_TRUE(test, cm_peer_index_empty(&idx));
	}
	vfree(e);
}

/* What cm_find_listen() does for every REQ: an rb-tree of service IDs. */
struct bench_sid {
	struct rb_node node;
	u64 sid;
};

static noinline struct bench_sid *bench_find_sid(struct rb_root *root,
						 u64 sid)
{
	struct rb_node *node = root->rb_node;

	while (node) {
		struct bench_sid *cur = rb_entry(node, struct bench_sid, node);

		if (sid < cur->sid)
			node = node->rb_left;
		else if (sid > cur->sid)
			node = node->rb_right;
		else
			return cur;
	}
	return NULL;
}

static void bench_listen_lookup(struct kunit *test)
{
	struct bench_sid *e = vzalloc(sizeof(*e) * BENCH_MAX);
	unsigned int s, i, found;
	struct rb_root root;
	u64 t;

	KUNIT_ASSERT_NOT_NULL(test, e);
	for (s = 0; s < ARRAY_SIZE(bench_sizes); s++) {
		u32 n = bench_sizes[s];

		root = RB_ROOT;
		for (i = 0; i < n; i++) {
			struct rb_node **link = &root.rb_node, *parent = NULL;

			e[i].sid = 0x10000ULL * i + 7500;
			while (*link) {
				parent = *link;
				link = e[i].sid < rb_entry(parent,
							   struct bench_sid,
							   node)->sid ?
				       &parent->rb_left : &parent->rb_right;
			}
			rb_link_node(&e[i].node, parent, link);
			rb_insert_color(&e[i].node, &root);
		}
		found = 0;
		t = ktime_get_ns();
		for (i = 0; i < BENCH_OPS; i++)
			found += !!bench_find_sid(&root,
						  0x10000ULL * (i % n) + 7500);
		bench_report(test, "listen_lookup", n, ktime_get_ns() - t,
			     BENCH_OPS);
		KUNIT_EXPECT_EQ(test, BENCH_OPS, found);
	}
	vfree(e);
}

static struct kunit_case cm_peer_bench_cases[] = {
	KUNIT_CASE_SLOW(bench_listen_lookup),
	KUNIT_CASE_SLOW(bench_match),
	KUNIT_CASE_SLOW(bench_hold_claim),
	{}
};

static struct kunit_suite cm_peer_bench_suite = {
	.name = "cm_peer_bench",
	.test_cases = cm_peer_bench_cases,
};

kunit_test_suite(cm_peer_bench_suite);
