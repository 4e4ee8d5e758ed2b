// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Suite cm_peer_race: the races an SMP host can run into, each repeated
 * race_rounds times with the two sides on different CPUs (a work item
 * queued on another online CPU; on one CPU they only interleave) and the
 * CM's own handling spread over CPUs by MIGRATE fault rules.  Every round
 * must end in exactly one connection or a reported failure, and nothing
 * may stay held; KASAN, lockdep and kmemleak watch the rest.
 */
#include "cm_peer_fault.h"
#include "cm_peer_kunit_helpers.h"

static unsigned int peer_race_rounds = 200;
module_param_named(race_rounds, peer_race_rounds, uint, 0644);
MODULE_PARM_DESC(race_rounds, "Rounds of each cm_peer_race case");

#define PEER_RACE_SID		(PEER_SID + 0x10000)
/* spans a REQ's transit in loopback (UML, qemu TCG, KASAN): before/after */
#define PEER_RACE_JITTER_US	2000

/* Something to do on another CPU, started by peer_race_start(). */
struct peer_race {
	struct work_struct work;
	struct peer_end *e;
	u64 sid;
	unsigned int delay_us;
	unsigned int max_delay_us;	/* PEER_RACE_JITTER_US if 0 */
	bool destroy;	/* destroy e's cm_id instead of connecting */
	int ret;
};

static void peer_race_fn(struct work_struct *work)
{
	struct peer_race *r = container_of(work, struct peer_race, work);

	udelay(r->delay_us);
	if (r->destroy) {
		ib_destroy_cm_id(r->e->cm_id);
		r->e->cm_id = NULL;
		r->ret = 0;
	} else {
		r->ret = peer_send_req(r->e, r->sid);
	}
}

static void peer_race_start(struct peer_race *r)
{
	unsigned int cpu;

	r->delay_us = get_random_u32_below(r->max_delay_us ?:
					   PEER_RACE_JITTER_US);
	cpu = cpumask_any_but(cpu_online_mask, raw_smp_processor_id());
	INIT_WORK_ONSTACK(&r->work, peer_race_fn);
	queue_work_on(cpu < nr_cpu_ids ? cpu : WORK_CPU_UNBOUND,
		      system_highpri_wq, &r->work);
}

static void peer_race_finish(struct peer_race *r)
{
	flush_work(&r->work);
	destroy_work_on_stack(&r->work);
}

static void peer_race_release(struct kunit *test, struct peer_end *a,
			      struct peer_end *b)
{
	kunit_release_action(test, peer_end_release, a);
	kunit_release_action(test, peer_end_release, b);
}

static bool peer_race_failed(struct kunit *test, unsigned int round)
{
	static const char *const names[] = {
		"held", "claimed", "expired", "withdrawn", "dropped",
		"matched", "turned_passive", "resent", "refused",
	};
	char name[32];
	unsigned int i;

	if (test->status != KUNIT_FAILURE)
		return false;
	kunit_info(test, "failed in round %u of %u\n", round + 1,
		   peer_race_rounds);
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		snprintf(name, sizeof(name), "cm_peer/%s", names[i]);
		kunit_info(test, "  %s %lu\n", name, peer_counter(test, name));
	}
	return true;
}

static void peer_race_clear_rules_at_end(struct kunit *test)
{
	int ret = kunit_add_action_or_reset(test, cm_peer_fault_clear_action, NULL);

	KUNIT_ASSERT_EQ(test, 0, ret);
}

/* One fault rule acting on the (@skip + 1)th MAD of @attr_id */
static void peer_race_rule(struct kunit *test,
			   enum cm_peer_fault_action action, __be16 attr_id,
			   unsigned int skip)
{
	int ret = cm_peer_fault_add(action, attr_id, skip, 1,
				    PEER_FAULT_DELAY_MS);

	KUNIT_ASSERT_EQ(test, 0, ret);
}

/*
 * Skip without the device; else wait until what earlier suites left held
 * has expired.  Returns the queue's occupancy then, the baseline of the
 * case: 0, unless the counters lost track of a REQ before.
 */
static unsigned long peer_race_begin(struct kunit *test)
{
	struct ib_device *dev;
	unsigned long held0;

	dev = ib_device_get_by_name(peer_dev_name, RDMA_DRIVER_UNKNOWN);
	if (!dev)
		kunit_skip(test, "no RDMA device %s", peer_dev_name);
	ib_device_put(dev);
	held0 = peer_rdv_wait_below(test, 1);
	if (held0)
		kunit_info(test, "counters show %lu REQs held before the case\n",
			   held0);
	return held0;
}

/* Nothing held is left over, before the age limit. */
static void peer_race_expect_none_held(struct kunit *test, unsigned long held0)
{
	KUNIT_EXPECT_EQ_MSG(test, held0, peer_rdv_wait_below(test, held0 + 1),
			    "REQs left held");
}

/* Peer REQs the CM handled without a match: held, or dropped after a REJ */
static unsigned long peer_race_handled(struct kunit *test)
{
	struct file *f;
	char path[96];

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/1/cm_peer/dropped", peer_dev_name);
	f = filp_open(path, O_RDONLY, 0);
	if (IS_ERR(f))	/* a CM without the counter: it never drops */
		return peer_counter(test, "cm_peer/held");
	fput(f);
	return peer_counter(test, "cm_peer/held") +
	       peer_counter(test, "cm_peer/dropped");
}

/*
 * b's ib_send_cm_peer_req() on another CPU, while the CM handles a's REQ:
 * the claim meets the hold (a's REQ held, then claimed) or the match (a
 * collision), never neither nor both.
 */
static void peer_race_claim_vs_hold(struct kunit *test)
{
	unsigned long held0, held_ctr;
	unsigned int i, held;

	held0 = peer_race_begin(test);
	held_ctr = peer_counter(test, "cm_peer/held");
	for (i = 0; i < peer_race_rounds; i++) {
		struct peer_end *a = peer_end_create(test, "a");
		struct peer_end *b = peer_end_create(test, "b");
		struct peer_race r = { .e = b, .sid = PEER_RACE_SID + i };

		KUNIT_ASSERT_EQ(test, 0, ib_cm_peer_bind(b->cm_id,
							 cpu_to_be64(r.sid), 0));
		peer_race_start(&r);
		KUNIT_EXPECT_EQ(test, 0, peer_send_req(a, r.sid));
		peer_race_finish(&r);
		KUNIT_EXPECT_EQ(test, 0, r.ret);
		peer_end_wait(a);
		peer_end_wait(b);
		peer_expect_one_connection(test, a, b);
		peer_exchange(test, a, b);
		peer_race_release(test, a, b);
		if (peer_race_failed(test, i))
			return;
	}
	held = peer_counter(test, "cm_peer/held") - held_ctr;
	kunit_info(test, "%u rounds: %u held, %u collisions\n", i, held,
		   i - held);
	peer_race_expect_none_held(test, held0);
}

/*
 * A retransmission of the REQ an end turns passive on, handled on another
 * CPU at the same time: p sends first, q's REQ is sent twice (DUP) and
 * the CM handles the second copy on another CPU (MIGRATE).  p (the smaller
 * QPN) turns passive on one copy; the other must be seen as a duplicate,
 * not held (it would stay there, claimable by p's next connect).
 */
static void peer_race_dup_vs_passive(struct kunit *test)
{
	unsigned long held0;
	unsigned int i, hits;

	held0 = peer_race_begin(test);
	hits = cm_peer_fault_hits();
	peer_race_clear_rules_at_end(test);
	for (i = 0; i < peer_race_rounds; i++) {
		struct peer_end *p = peer_end_create(test, "p");
		struct peer_end *q = peer_end_create(test, "q");
		u64 sid = PEER_RACE_SID + 0x1000 + i;

		if (p->qp->qp_num > q->qp->qp_num)
			swap(p, q);
		cm_peer_fault_clear();
		peer_race_rule(test, CM_PEER_FAULT_DUP, CM_REQ_ATTR_ID, 1);
		peer_race_rule(test, CM_PEER_FAULT_MIGRATE, CM_REQ_ATTR_ID, 2);
		KUNIT_EXPECT_EQ(test, 0, peer_send_req(p, sid));
		KUNIT_EXPECT_EQ(test, 0, peer_send_req(q, sid));
		peer_end_wait(p);
		peer_end_wait(q);
		peer_expect_one_connection(test, p, q);
		peer_exchange(test, p, q);
		cm_peer_fault_clear();
		/* the CM is through with both copies: nothing was held */
		KUNIT_EXPECT_EQ(test, held0, peer_rdv_occupancy(test));
		peer_race_release(test, p, q);
		if (peer_race_failed(test, i))
			return;
	}
	kunit_info(test, "%u rounds, fault hits %u\n", i,
		   cm_peer_fault_hits() - hits);
}

/*
 * a connects and goes away at once: its CM sends a REQ, then a REJ, and
 * b's CM handles the REJ on another CPU (MIGRATE), maybe before the REQ;
 * every other round the REQ is handled after the REJ (REORDER), the order
 * two CPUs can produce.  Either way a's REQ must not stay held for b to
 * claim.
 */
static void peer_race_rej_vs_hold(struct kunit *test)
{
	unsigned long held0;
	unsigned int i;

	held0 = peer_race_begin(test);
	peer_race_clear_rules_at_end(test);
	for (i = 0; i < peer_race_rounds; i++) {
		struct peer_end *a = peer_end_create(test, "a");
		struct peer_end *b = peer_end_create(test, "b");
		u64 sid = PEER_RACE_SID + 0x2000 + i;
		unsigned long deadline, base;

		KUNIT_ASSERT_EQ(test, 0, ib_cm_peer_bind(b->cm_id,
							 cpu_to_be64(sid), 0));
		cm_peer_fault_clear();
		if (i & 1)
			peer_race_rule(test, CM_PEER_FAULT_REORDER,
				       CM_REQ_ATTR_ID, 0);
		else
			peer_race_rule(test, CM_PEER_FAULT_MIGRATE,
				       CM_REJ_ATTR_ID, 0);
		base = peer_race_handled(test);
		KUNIT_EXPECT_EQ(test, 0, peer_send_req(a, sid));
		udelay(get_random_u32_below(PEER_RACE_JITTER_US));
		ib_destroy_cm_id(a->cm_id);
		a->cm_id = NULL;
		/* the REQ is held and withdrawn, or dropped, in a moment */
		deadline = jiffies + msecs_to_jiffies(1000);
		while ((peer_race_handled(test) == base ||
			peer_rdv_occupancy(test) != held0) &&
		       time_before(jiffies, deadline))
			usleep_range(5000, 10000);
		KUNIT_EXPECT_EQ_MSG(test, held0, peer_rdv_occupancy(test),
				    "a's REQ stayed held after its REJ");
		peer_race_release(test, a, b);
		if (peer_race_failed(test, i))
			return;
	}
	cm_peer_fault_clear();
}

/*
 * The end of a round that destroys r->e (a) on another CPU: b may be
 * connected for a moment (a's REP went out first), counted in *@ok; both
 * ends released.  Returns true when the case failed.
 */
static bool peer_race_destroyed(struct kunit *test, struct peer_race *r,
				struct peer_end *b, unsigned int round,
				unsigned int *ok)
{
	peer_race_finish(r);
	if (wait_for_completion_timeout(&b->done, HZ / 10) && !b->status)
		(*ok)++;
	peer_race_release(test, r->e, b);
	return peer_race_failed(test, round);
}

/*
 * ib_destroy_cm_id() on another CPU while the CM matches the other end's
 * REQ with the id: b must learn of it (no hang), nothing stays held.
 */
static void peer_race_destroy_vs_match(struct kunit *test)
{
	unsigned long held0;
	unsigned int i, ok = 0;

	held0 = peer_race_begin(test);
	for (i = 0; i < peer_race_rounds; i++) {
		struct peer_end *a = peer_end_create(test, "a");
		struct peer_end *b = peer_end_create(test, "b");
		struct peer_race r = { .e = a, .destroy = true };
		u64 sid = PEER_RACE_SID + 0x3000 + i;

		KUNIT_EXPECT_EQ(test, 0, peer_send_req(a, sid));
		peer_race_start(&r);
		KUNIT_EXPECT_EQ(test, 0, peer_send_req(b, sid));
		if (peer_race_destroyed(test, &r, b, i, &ok))
			return;
	}
	kunit_info(test, "%u rounds, b established first in %u\n", i, ok);
	peer_race_expect_none_held(test, held0);
}

/*
 * A window of one: b's REQ is out and a's waits for the window.  b's REQ
 * comes back to a, which gives way, while a is destroyed on another CPU.
 * a's unsent REQ is freed once, by whichever comes first, and nothing is
 * left queued: a last pair still connects through the window.
 */
static void peer_race_destroy_vs_give_way(struct kunit *test)
{
	unsigned long held0, deferred0;
	unsigned int i, ok = 0;
	struct peer_end *a, *b;

	held0 = peer_race_begin(test);
	deferred0 = peer_counter(test, "cm_peer/deferred");
	for (i = 0; i < peer_race_rounds; i++) {
		struct peer_race r = { .destroy = true };
		u64 sid = PEER_RACE_SID + 0x5000 + i;

		a = peer_end_create(test, "a");
		b = peer_end_create(test, "b");
		if (!i)
			peer_set_window(test, a->dev, 1, 0);
		r.e = a;
		KUNIT_EXPECT_EQ(test, 0, peer_send_req(b, sid));
		KUNIT_EXPECT_EQ(test, 0, peer_send_req(a, sid));
		peer_race_start(&r);
		if (peer_race_destroyed(test, &r, b, i, &ok))
			return;
	}
	deferred0 = peer_counter(test, "cm_peer/deferred") - deferred0;
	kunit_info(test, "%u rounds, a's REQ waited in %lu, b established first in %u\n",
		   i, deferred0, ok);
	KUNIT_EXPECT_GT(test, deferred0, 0UL);
	peer_race_expect_none_held(test, held0);
	a = peer_end_create(test, "a");
	b = peer_end_create(test, "b");
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(a, PEER_RACE_SID + 0x5fff));
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(b, PEER_RACE_SID + 0x5fff));
	peer_end_wait(a);
	peer_end_wait(b);
	peer_expect_one_connection(test, a, b);
}

/*
 * On demand: b's REQ reaches a's port, which has a listener, while a's
 * peer connect to b runs on another CPU.  The REQ is the listener's (a's
 * connect says EALREADY or EISCONN, the listener's id answers) or a's
 * peer id's (collision or hold), never both and never neither.
 */
static void peer_race_listen_vs_connect(struct kunit *test)
{
	unsigned int i, listened = 0;
	unsigned long held0;

	held0 = peer_race_begin(test);
	for (i = 0; i < peer_race_rounds; i++) {
		u64 port = PEER_RACE_SID + 0x4000 + 2 * i;
		struct peer_end *al = peer_end_create(test, "al");
		struct peer_end *a = peer_end_create(test, "a");
		struct peer_end *b = peer_end_create(test, "b");
		/* the REQ's handling takes longer than its transit */
		struct peer_race r = { .e = a, .sid = port + 1,
				      .max_delay_us = 10 * PEER_RACE_JITTER_US };
		struct ib_cm_id *listen;

		listen = peer_listen_on(test, al, port);
		peer_identity(test, a, port, port + 1, "a");
		peer_identity(test, b, port + 1, port, "b");
		peer_race_start(&r);
		KUNIT_EXPECT_EQ(test, 0, peer_send_req(b, port));
		peer_race_finish(&r);
		peer_end_wait(b);
		if (r.ret) {
			KUNIT_EXPECT_TRUE_MSG(test, r.ret == -EALREADY ||
					      r.ret == -EISCONN, "%d", r.ret);
			peer_end_wait(al);
			KUNIT_EXPECT_EQ(test, 0, al->status);
			KUNIT_EXPECT_TRUE(test, b->got_rep);
			KUNIT_EXPECT_FALSE(test, a->got_req);
			peer_exchange(test, al, b);
			listened++;
		} else {
			peer_end_wait(a);
			peer_expect_one_connection(test, a, b);
			KUNIT_EXPECT_FALSE(test, al->got_req);
			peer_exchange(test, a, b);
		}
		kunit_release_action(test, peer_unlisten, listen);
		kunit_release_action(test, peer_end_release, al);
		peer_race_release(test, a, b);
		if (peer_race_failed(test, i))
			return;
	}
	kunit_info(test, "%u rounds: %u to the listener, %u to the peer id\n",
		   i, listened, i - listened);
	peer_race_expect_none_held(test, held0);
}

/*
 * As peer_race_listen_vs_connect(), with a listener that hands its REQs
 * back (ib_cm_peer_listen_hands_back(), as RDS's does): whether a's
 * connect comes before, during or after the listener's handler, it never
 * fails, and b's REQ ends on a's peer id.  One connection, no REJ.
 */
static void peer_race_listen_hand_back(struct kunit *test)
{
	unsigned long held0, deferred;
	unsigned int i, behind = 0;

	held0 = peer_race_begin(test);
	for (i = 0; i < peer_race_rounds; i++) {
		u64 port = PEER_RACE_SID + 0x6000 + 2 * i;
		struct peer_end *al = peer_end_create(test, "al");
		struct peer_end *a = peer_end_create(test, "a");
		struct peer_end *b = peer_end_create(test, "b");
		struct peer_race r = { .e = a, .sid = port + 1,
				      .max_delay_us = 25 * PEER_RACE_JITTER_US };
		struct ib_cm_id *listen;

		listen = peer_listen_on(test, al, port);
		ib_cm_peer_listen_hands_back(listen);
		al->hand_back = true;
		/* a's connect may come while the handler runs: behind it */
		al->slow_req_ms = 20;
		peer_identity(test, a, port, port + 1, "a");
		peer_identity(test, b, port + 1, port, "b");
		deferred = peer_counter(test, "cm_peer/deferred");
		peer_race_start(&r);
		KUNIT_EXPECT_EQ(test, 0, peer_send_req(b, port));
		peer_race_finish(&r);
		KUNIT_EXPECT_EQ(test, 0, r.ret);
		/* a's REQ deferred: behind the listener's (or the window) */
		behind += peer_counter(test, "cm_peer/deferred") != deferred;
		peer_end_wait(a);
		peer_end_wait(b);
		peer_expect_one_connection(test, a, b);
		KUNIT_EXPECT_FALSE(test, b->got_rej);
		peer_exchange(test, a, b);
		kunit_release_action(test, peer_unlisten, listen);
		kunit_release_action(test, peer_end_release, al);
		peer_race_release(test, a, b);
		if (peer_race_failed(test, i))
			return;
	}
	kunit_info(test, "%u rounds, %u with a's REQ deferred\n", i, behind);
	peer_race_expect_none_held(test, held0);
}

static struct kunit_case cm_peer_race_test_cases[] = {
	KUNIT_CASE_SLOW(peer_race_claim_vs_hold),
	KUNIT_CASE_SLOW(peer_race_dup_vs_passive),
	KUNIT_CASE_SLOW(peer_race_rej_vs_hold),
	KUNIT_CASE_SLOW(peer_race_destroy_vs_match),
	KUNIT_CASE_SLOW(peer_race_destroy_vs_give_way),
	KUNIT_CASE_SLOW(peer_race_listen_vs_connect),
	KUNIT_CASE_SLOW(peer_race_listen_hand_back),
	{}
};

static struct kunit_suite cm_peer_race_test_suite = {
	.name = "cm_peer_race",
	.suite_init = cm_peer_ib_suite_init,
	.test_cases = cm_peer_race_test_cases,
};

kunit_test_suite(cm_peer_race_test_suite);

MODULE_DESCRIPTION("KUnit suite cm_peer_race: SMP races of IB CM peer-to-peer");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
MODULE_LICENSE("Dual BSD/GPL");
