// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Suite cm_peer_fault: one MAD of a peer collision is lost, duplicated,
 * delayed or reordered (cm_peer_fault.c rules, applied by ib_cm itself).
 * Whatever happens, both ends must reach the same state in bounded time:
 * one connection with data flowing both ways, or a reported failure on
 * both.  A single fault on REQ, REP, RTU or MRA is within what the CM's
 * retransmissions recover from, so those scenarios must connect.
 */
#include "cm_peer_fault.h"
#include "cm_peer_kunit_helpers.h"

enum peer_fault_path {
	PEER_PATH_COLLISION,	/* both REQs sent back to back */
	PEER_PATH_HELD,		/* b binds, a's REQ is held, b connects later */
	PEER_PATH_REJECT,	/* both REQs sent, then a goes away */
};

struct peer_fault_case {
	enum cm_peer_fault_action action;
	__be16 attr_id;
	const char *attr;
	enum peer_fault_path path;
};

#define PEER_FAULT(act, name, p)						\
	{ CM_PEER_FAULT_##act, CM_##name##_ATTR_ID, #name, PEER_PATH_##p }

static const struct peer_fault_case peer_fault_cases[] = {
	PEER_FAULT(DROP, REQ, COLLISION), PEER_FAULT(DUP, REQ, COLLISION),
	PEER_FAULT(DELAY, REQ, COLLISION), PEER_FAULT(REORDER, REQ, COLLISION),
	PEER_FAULT(DROP, REP, COLLISION), PEER_FAULT(DUP, REP, COLLISION),
	PEER_FAULT(DELAY, REP, COLLISION), PEER_FAULT(REORDER, REP, COLLISION),
	PEER_FAULT(DROP, RTU, COLLISION), PEER_FAULT(DUP, RTU, COLLISION),
	PEER_FAULT(DELAY, RTU, COLLISION), PEER_FAULT(REORDER, RTU, COLLISION),
	PEER_FAULT(DROP, MRA, HELD), PEER_FAULT(DUP, MRA, HELD),
	PEER_FAULT(DELAY, MRA, HELD), PEER_FAULT(REORDER, MRA, HELD),
	PEER_FAULT(DROP, REJ, REJECT), PEER_FAULT(DUP, REJ, REJECT),
	PEER_FAULT(DELAY, REJ, REJECT), PEER_FAULT(REORDER, REJ, REJECT),
};

static const char *const peer_fault_action_names[] = {
	"drop", "dup", "delay", "reorder", "migrate",
};

static void peer_fault_case_desc(const struct peer_fault_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s_%s",
		 peer_fault_action_names[c->action], c->attr);
}

KUNIT_ARRAY_PARAM(peer_fault, peer_fault_cases, peer_fault_case_desc);

static void peer_fault_scenario(struct kunit *test)
{
	const struct peer_fault_case *c = test->param_value;
	/* a fresh ServiceID per case: nothing left over from the last one */
	u64 sid = PEER_SID + 0x100 + (c - peer_fault_cases);
	struct peer_end *a, *b;
	unsigned long deadline;
	unsigned int hits;
	int ret;

	cm_peer_fault_clear();
	ret = kunit_add_action_or_reset(test, cm_peer_fault_clear_action, NULL);
	KUNIT_ASSERT_EQ(test, 0, ret);
	a = peer_end_create(test, "a");
	b = peer_end_create(test, "b");
	hits = cm_peer_fault_hits();
	KUNIT_ASSERT_EQ(test, 0, cm_peer_fault_add(c->action, c->attr_id, 0, 1,
						   PEER_FAULT_DELAY_MS));

	switch (c->path) {
	case PEER_PATH_REJECT:
		/* a never connects, however late it goes away: it must reject */
		a->hold_req = true;
		fallthrough;
	case PEER_PATH_COLLISION:
		KUNIT_ASSERT_EQ(test, 0, peer_send_req(a, sid));
		KUNIT_ASSERT_EQ(test, 0, peer_send_req(b, sid));
		break;
	case PEER_PATH_HELD:
		/*
		 * The held path needs room in the queue: the fuzz suite
		 * leaves it full until its REQs expire (make stress runs
		 * this suite right after it).
		 */
		peer_rdv_wait_below(test, PEER_TEST_MAX_HELD);
		peer_hold_at(test, a, b, sid);
		/* only a's retransmission is answered with the MRA */
		deadline = jiffies + PEER_TIMEOUT;
		while (cm_peer_fault_hits() == hits &&
		       time_before(jiffies, deadline))
			msleep(20);
		KUNIT_ASSERT_EQ(test, 0, peer_send_req(b, sid));
		break;
	}

	if (c->path == PEER_PATH_REJECT) {
		/* a goes away: its CM rejects; b must fail, and in time */
		ib_destroy_cm_id(a->cm_id);
		a->cm_id = NULL;
		peer_end_wait(b);
		hits = cm_peer_fault_hits() - hits;
		cm_peer_fault_clear();
		KUNIT_EXPECT_LT(test, b->status, 0);
		KUNIT_EXPECT_NE(test, IB_CM_ESTABLISHED, b->cm_id->state);
		KUNIT_EXPECT_EQ_MSG(test, 1U, hits, "the fault never happened");
		kunit_info(test, "b failed: status %d, REJ %d (reason %d), fault hits %u\n",
			   b->status, b->got_rej, b->rej_reason, hits);
		return;
	}

	peer_end_wait(a);
	peer_end_wait(b);
	hits = cm_peer_fault_hits() - hits;
	cm_peer_fault_clear();
	KUNIT_EXPECT_EQ_MSG(test, 1U, hits, "the fault never happened");
	KUNIT_EXPECT_EQ_MSG(test, !a->status, !b->status,
			    "ends disagree: a status %d, b status %d",
			    a->status, b->status);
	/* one fault of this kind is recoverable: it must connect */
	KUNIT_EXPECT_EQ(test, 0, a->status);
	KUNIT_EXPECT_EQ(test, 0, b->status);
	if (a->status || b->status) {
		KUNIT_EXPECT_NE(test, IB_CM_ESTABLISHED, a->cm_id->state);
		KUNIT_EXPECT_NE(test, IB_CM_ESTABLISHED, b->cm_id->state);
		return;
	}
	peer_expect_one_connection(test, a, b);
	peer_exchange(test, a, b);
}

#define PEER_LOST_RTO_MS	100

/*
 * Our REQ is lost (the other end was not there yet, as after a link
 * flap); the other end's REQ comes @after_ms later and we stay active:
 * ours goes again once its RTO has passed, not at its retry, 4 s away, as
 * rdma_cm's would be.
 */
static void peer_fault_lost(struct kunit *test, unsigned int after_ms)
{
	u64 sid = PEER_SID + 0x400;
	struct peer_end *a, *b, *x, *y;
	unsigned long start, deadline;
	unsigned int hits;
	int ret;

	cm_peer_fault_clear();
	ret = kunit_add_action_or_reset(test, cm_peer_fault_clear_action, NULL);
	KUNIT_ASSERT_EQ(test, 0, ret);
	a = peer_end_create(test, "a");
	b = peer_end_create(test, "b");
	/* the higher QPN stays active (cm_peer_arbitrate()): its REQ is lost */
	x = a->qp->qp_num > b->qp->qp_num ? a : b;
	y = x == a ? b : a;
	/* 4 s: neither REQ's retry makes the connection in the time allowed */
	x->response_timeout = 20;
	y->response_timeout = 20;
	peer_set_window(test, x->dev, 0, PEER_LOST_RTO_MS);
	hits = cm_peer_fault_hits();
	KUNIT_ASSERT_EQ(test, 0, cm_peer_fault_add(CM_PEER_FAULT_DROP,
						   CM_REQ_ATTR_ID, 0, 1, 0));
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(x, sid));
	deadline = jiffies + PEER_TIMEOUT;
	while (cm_peer_fault_hits() == hits && time_before(jiffies, deadline))
		msleep(20);
	KUNIT_ASSERT_EQ(test, hits + 1, cm_peer_fault_hits());
	msleep(after_ms);
	start = jiffies;
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(y, sid));
	peer_end_wait(x);
	peer_end_wait(y);
	peer_expect_one_connection(test, x, y);
	KUNIT_EXPECT_TRUE(test, y->got_req);
	KUNIT_EXPECT_LT(test, jiffies_to_msecs(jiffies - start), 2000U);
	peer_exchange(test, x, y);
}

/* ... after ours was out for its RTO: ours goes again at once */
static void peer_fault_lost_req(struct kunit *test)
{
	peer_fault_lost(test, 2 * PEER_LOST_RTO_MS);
}

/* ... before: ours goes again when its RTO ends */
static void peer_fault_lost_req_early(struct kunit *test)
{
	peer_fault_lost(test, PEER_LOST_RTO_MS / 5);
}

static struct kunit_case cm_peer_fault_test_cases[] = {
	KUNIT_CASE_PARAM_ATTR(peer_fault_scenario, peer_fault_gen_params,
			      { .speed = KUNIT_SPEED_SLOW }),
	KUNIT_CASE_SLOW(peer_fault_lost_req),
	KUNIT_CASE_SLOW(peer_fault_lost_req_early),
	{}
};

static struct kunit_suite cm_peer_fault_test_suite = {
	.name = "cm_peer_fault",
	.suite_init = cm_peer_ib_suite_init,
	.test_cases = cm_peer_fault_test_cases,
};

kunit_test_suite(cm_peer_fault_test_suite);

MODULE_DESCRIPTION("KUnit suite cm_peer_fault: MAD faults in IB CM peer-to-peer collisions");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
MODULE_LICENSE("Dual BSD/GPL");
