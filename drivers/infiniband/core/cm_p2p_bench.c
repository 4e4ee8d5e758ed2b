// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Microbenchmarks of the IB CM peer-to-peer REQ decision (suite
 * cm_p2p_bench, CONFIG_INFINIBAND_CM_P2P_KUNIT_BENCH; built only in the
 * benchmark kernel, never in the test run).
 *
 * Every inbound REQ asks cm_p2p_sid_is_peer() whether its ServiceID is
 * bound as peer.  The cases time, in one run:
 *
 *  - cs_decision: that decision for client/server REQs with no peer bind
 *    (empty table, and 1000 client/server binds as listeners make), next
 *    to a loop that makes no decision at all, as before the patch;
 *  - lookup: the decision with 1k, 100k and 1M exact peer ServiceIDs
 *    bound, for bound and for unbound ServiceIDs, then again with one
 *    range bind added (a miss in the hash table then searches the tree).
 *
 * Results are "bench: <name> <ns per op>" lines in the KUnit log; the
 * expectations check only that the decisions are right.
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/ktime.h>
#include <linux/prandom.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "cm_p2p.h"

#define BENCH_OPS	(2u * 1024 * 1024)

/* Spread ServiceIDs over the space; odd multiples only, so that ID i is
 * bound and i + BENCH_UNBOUND_SHIFT never is.
 */
#define BENCH_UNBOUND_SHIFT	1

/* A range bind (2^32 ServiceIDs) below every ServiceID bench_sid() makes */
#define BENCH_RANGE_SID		cpu_to_be64(0x0800000000000000ULL)
#define BENCH_RANGE_MASK	cpu_to_be64(~0ULL << 32)

static __be64 bench_sid(u32 i)
{
	return cpu_to_be64(0x1000000000000000ULL + 2ULL * i *
			   0x9e3779b97ULL);
}

/* The "before the patch" loop body: no decision, same call shape. */
static noinline bool bench_no_decision(struct cm_p2p_table *table,
				       __be64 service_id)
{
	barrier();
	return false;
}

static noinline bool bench_decision(struct cm_p2p_table *table,
				    __be64 service_id)
{
	return cm_p2p_sid_is_peer(table, service_id);
}

static noinline bool bench_lookup_any(struct cm_p2p_table *table,
				      __be64 service_id)
{
	return cm_p2p_lookup(table, service_id) != CM_P2P_MODE_NONE;
}

static u32 *bench_order(struct kunit *test, u32 n, u32 seed)
{
	struct rnd_state rnd;
	u32 *order, i;

	order = vmalloc(array_size(BENCH_OPS, sizeof(*order)));
	KUNIT_ASSERT_NOT_NULL(test, order);
	prandom_seed_state(&rnd, seed);
	for (i = 0; i < BENCH_OPS; i++)
		order[i] = prandom_u32_state(&rnd) % n;
	return order;
}

/* ps per call of @fn over BENCH_OPS ServiceIDs; *hits counts true results */
static u64 bench_time(bool (*fn)(struct cm_p2p_table *, __be64),
		      struct cm_p2p_table *table, const u32 *order, u32 shift,
		      u32 *hits)
{
	u64 start, ns;
	u32 i, h = 0;

	start = ktime_get_ns();
	for (i = 0; i < BENCH_OPS; i++)
		h += fn(table, cpu_to_be64(be64_to_cpu(bench_sid(order[i])) +
					   shift));
	ns = ktime_get_ns() - start;
	*hits = h;
	return div_u64(ns, BENCH_OPS / 1000);	/* ps per call */
}

static void bench_report(struct kunit *test, const char *name, u64 ps)
{
	kunit_info(test, "bench: %s %llu.%03llu\n", name, ps / 1000, ps % 1000);
}

static void p2p_bench_cs_decision(struct kunit *test)
{
	struct cm_p2p_table *table = cm_p2p_table_alloc(GFP_KERNEL);
	u32 *order = bench_order(test, 1000, 1);
	u32 i, hits;
	u64 ps;

	KUNIT_ASSERT_NOT_NULL(test, table);
	ps = bench_time(bench_no_decision, table, order, 0, &hits);
	bench_report(test, "cs_no_decision_ns", ps);
	ps = bench_time(bench_decision, table, order, 0, &hits);
	bench_report(test, "cs_decision_empty_table_ns", ps);
	KUNIT_EXPECT_EQ(test, hits, 0);

	for (i = 0; i < 1000; i++)
		KUNIT_ASSERT_EQ(test, cm_p2p_bind(table, bench_sid(i),
						  cpu_to_be64(~0ULL),
						  CM_P2P_MODE_CLIENT_SERVER,
						  GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, cm_p2p_peer_binds(table), 0);
	msleep(500);	/* the hash table's resize work, see below */
	ps = bench_time(bench_decision, table, order, 0, &hits);
	bench_report(test, "cs_decision_1k_cs_binds_ns", ps);
	KUNIT_EXPECT_EQ(test, hits, 0);
	/* what the decision would cost if it looked the ServiceID up */
	ps = bench_time(bench_lookup_any, table, order, 0, &hits);
	bench_report(test, "cs_lookup_1k_cs_binds_ns", ps);
	KUNIT_EXPECT_EQ(test, hits, BENCH_OPS);

	vfree(order);
	cm_p2p_table_free(table);
}

static const u32 bench_sizes[] = { 1000, 100000, 1000000 };

/*
 * The floor under any lookup on this machine: two dependent loads (an
 * array slot, then the object it points to) at random among @n objects of
 * a bind's size, as a hash lookup does (bucket, then bind).  Each step's
 * index depends on the value loaded by the step before (always 0), so the
 * loads cannot overlap, as a lookup's cannot be overlapped with the next
 * REQ's.
 */
static void bench_random_load(struct kunit *test, u32 n, const u32 *order)
{
	u64 **objs, start, ns, sum = 0;
	char name[48];
	u32 i, made;

	objs = vcalloc(n, sizeof(*objs));
	KUNIT_ASSERT_NOT_NULL(test, objs);
	for (i = 0; i < n; i++) {
		objs[i] = kzalloc(128, GFP_KERNEL);
		if (!objs[i])
			break;
		*objs[i] = 0;
		if (!(i & 1023))
			cond_resched();
	}
	made = i;
	KUNIT_EXPECT_EQ(test, made, n);
	if (made == n) {
		u64 v = 0;

		start = ktime_get_ns();
		for (i = 0; i < BENCH_OPS; i++) {
			v = READ_ONCE(*objs[order[i] ^ (u32)v]);
			sum += v;
		}
		ns = ktime_get_ns() - start;
		snprintf(name, sizeof(name), "dependent_load_%u_objs_ns", n);
		bench_report(test, name, div_u64(ns, BENCH_OPS / 1000));
		KUNIT_EXPECT_EQ(test, sum, 0);
	}
	while (made--)
		kfree(objs[made]);
	vfree(objs);
}

static void p2p_bench_lookup(struct kunit *test)
{
	u32 i, s, hits;
	char name[48];
	u64 ps;

	for (s = 0; s < ARRAY_SIZE(bench_sizes); s++) {
		u32 n = bench_sizes[s], *order = bench_order(test, n, 2 + s);
		struct cm_p2p_table *table = cm_p2p_table_alloc(GFP_KERNEL);
		u64 start = ktime_get_ns();

		KUNIT_ASSERT_NOT_NULL(test, table);
		for (i = 0; i < n; i++) {
			int ret = cm_p2p_bind(table, bench_sid(i),
					      cpu_to_be64(~0ULL),
					      CM_P2P_MODE_PEER, GFP_KERNEL);

			KUNIT_ASSERT_EQ(test, ret, 0);
			if (!(i & 1023))
				cond_resched();
		}
		KUNIT_EXPECT_EQ(test, cm_p2p_peer_binds(table), n);
		snprintf(name, sizeof(name), "bind_%u_peer_ns", n);
		bench_report(test, name, div_u64((ktime_get_ns() - start) * 1000,
						 n));
		/*
		 * The hash table grows in a work item; on a uniprocessor
		 * kernel without preemption (UML) it runs only when this
		 * thread sleeps.  Time lookups on the table as it settles.
		 */
		msleep(500);

		ps = bench_time(bench_decision, table, order, 0, &hits);
		snprintf(name, sizeof(name), "decision_%u_peer_bound_ns", n);
		bench_report(test, name, ps);
		KUNIT_EXPECT_EQ(test, hits, BENCH_OPS);

		ps = bench_time(bench_decision, table, order,
				BENCH_UNBOUND_SHIFT, &hits);
		snprintf(name, sizeof(name), "decision_%u_peer_unbound_ns", n);
		bench_report(test, name, ps);
		KUNIT_EXPECT_EQ(test, hits, 0);

		/* one range bind too: misses in the hash search the tree */
		KUNIT_ASSERT_EQ(test, cm_p2p_bind(table, BENCH_RANGE_SID,
						  BENCH_RANGE_MASK,
						  CM_P2P_MODE_PEER,
						  GFP_KERNEL), 0);
		ps = bench_time(bench_decision, table, order, 0, &hits);
		snprintf(name, sizeof(name),
			 "decision_%u_peer_bound_range_too_ns", n);
		bench_report(test, name, ps);
		KUNIT_EXPECT_EQ(test, hits, BENCH_OPS);
		ps = bench_time(bench_decision, table, order,
				BENCH_UNBOUND_SHIFT, &hits);
		snprintf(name, sizeof(name),
			 "decision_%u_peer_unbound_range_too_ns", n);
		bench_report(test, name, ps);
		KUNIT_EXPECT_EQ(test, hits, 0);
		KUNIT_EXPECT_EQ(test, cm_p2p_unbind(table, BENCH_RANGE_SID,
						    BENCH_RANGE_MASK,
						    CM_P2P_MODE_PEER), 0);

		bench_random_load(test, n, order);
		vfree(order);
		cm_p2p_table_free(table);
	}
}

static struct kunit_case cm_p2p_bench_cases[] = {
	KUNIT_CASE(p2p_bench_cs_decision),
	KUNIT_CASE_SLOW(p2p_bench_lookup),
	{}
};

static struct kunit_suite cm_p2p_bench_suite = {
	.name = "cm_p2p_bench",
	.test_cases = cm_p2p_bench_cases,
};

kunit_test_suite(cm_p2p_bench_suite);
