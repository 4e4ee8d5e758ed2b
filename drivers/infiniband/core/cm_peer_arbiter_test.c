// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * KUnit suite cm_peer_arbiter: the arbiter of the IB CM peer-to-peer
 * engine (cm_peer.c), against a reference order written independently of
 * the implementation.
 */

#include <kunit/test.h>
#include <linux/prandom.h>

#include "cm_peer.h"

struct peer_arb_case {
	const char *name;
	u64 lguid;
	u32 lqpn;
	u64 rguid;
	u32 rqpn;
	int expect;
	u32 lcomm, rcomm;	/* communication IDs, 0 unless given */
};

#define GUID_A	0x0002c903000e1a01ULL
#define GUID_B	0x0002c903000e1a02ULL

static const struct peer_arb_case peer_arb_cases[] = {
	{ "greater guid is active", GUID_B, 0x11, GUID_A, 0x22, CM_PEER_ACTIVE },
	{ "smaller guid is passive", GUID_A, 0x22, GUID_B, 0x11,
	  CM_PEER_PASSIVE },
	{ "guid decides before qpn", GUID_B, 0x1, GUID_A, 0xffffff,
	  CM_PEER_ACTIVE },
	{ "equal guid: greater qpn active", GUID_A, 0x12, GUID_A, 0x11,
	  CM_PEER_ACTIVE },
	{ "equal guid: smaller qpn passive", GUID_A, 0x11, GUID_A, 0x12,
	  CM_PEER_PASSIVE },
	{ "qpn is 24 bits", GUID_A, 0x01000011, GUID_A, 0x12, CM_PEER_PASSIVE },
	{ "own req is an error", GUID_A, 0x11, GUID_A, 0x11, -ELOOP },
	{ "own req, qpn upper bits", GUID_A, 0xff000011, GUID_A, 0x11, -ELOOP },
	{ "own req, own comm id", GUID_A, 0x11, GUID_A, 0x11, -ELOOP, 7, 7 },
	{ "same ca and qp, other comm id: a tie", GUID_A, 0x11, GUID_A, 0x11,
	  -ENOTUNIQ, 7, 8 },
	{ "tie of guid 0 (vfs)", 0, 0x11, 0, 0x11, -ENOTUNIQ, 1, 2 },
	{ "comm id does not order distinct qps", GUID_A, 0x12, GUID_A, 0x11,
	  CM_PEER_ACTIVE, 1, 2 },
	{ "guid is unsigned", 0x8000000000000000ULL, 1, 0x7fffffffffffffffULL,
	  2, CM_PEER_ACTIVE },
	{ "first byte decides", 0x01ffffffffffffffULL, 1, 0x0200000000000000ULL,
	  2, CM_PEER_PASSIVE },
};

static void peer_arb_case_desc(const struct peer_arb_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(peer_arb, peer_arb_cases, peer_arb_case_desc);

static void peer_arbiter_cases(struct kunit *test)
{
	const struct peer_arb_case *c = test->param_value;
	struct cm_peer_ident l = { cpu_to_be64(c->lguid), c->lqpn,
				   cpu_to_be32(c->lcomm) };
	struct cm_peer_ident r = { cpu_to_be64(c->rguid), c->rqpn,
				   cpu_to_be32(c->rcomm) };

	KUNIT_EXPECT_EQ(test, c->expect, cm_peer_arbitrate(&l, &r));
}

/*
 * Reference order: the REQ identity as an 88-bit big-endian number, the
 * CA GUID's bytes as sent, then the 24-bit QPN.
 */
static int peer_ref_cmp(const struct cm_peer_ident *a,
			const struct cm_peer_ident *b)
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

static unsigned int peer_check_pair(struct kunit *test,
				    const struct cm_peer_ident *a,
				    const struct cm_peer_ident *b)
{
	int ab = cm_peer_arbitrate(a, b), ba = cm_peer_arbitrate(b, a);
	int ref = peer_ref_cmp(a, b);

	if (!ref) {
		KUNIT_EXPECT_EQ(test, -ELOOP, ab);
		KUNIT_EXPECT_EQ(test, -ELOOP, ba);
		return 0;
	}
	KUNIT_EXPECT_EQ(test, ref > 0 ? CM_PEER_ACTIVE : CM_PEER_PASSIVE, ab);
	KUNIT_EXPECT_EQ(test, ref > 0 ? CM_PEER_PASSIVE : CM_PEER_ACTIVE, ba);
	return 1;
}

static const u64 peer_guids[] = {
	0, ~0ULL, GUID_A, GUID_B, 0x0002c903000e1afeULL, 0x0002c903000e1affULL,
	0x7002c903000e1affULL, 0x8002c903000e1aff, 0x0102030405060708ULL,
};

static const u32 peer_qpns[] = {
	0x1, 0x2, 0x11, 0x12, 0x7fffff, 0x800000, 0xfffffe, 0xffffff,
	0x01000001,	/* == 0x1 once masked to 24 bits */
};

static void peer_arbiter_exhaustive(struct kunit *test)
{
	const unsigned int ng = ARRAY_SIZE(peer_guids), nq = ARRAY_SIZE(peer_qpns);
	struct cm_peer_ident *id;
	unsigned int i, j, pairs = 0, selfs = 0;

	id = kunit_kcalloc(test, ng * nq, sizeof(*id), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, id);
	for (i = 0; i < ng * nq; i++) {
		id[i].ca_guid = cpu_to_be64(peer_guids[i / nq]);
		id[i].qpn = peer_qpns[i % nq];
	}
	for (i = 0; i < ng * nq; i++)
		for (j = i; j < ng * nq; j++) {
			if (peer_check_pair(test, &id[i], &id[j]))
				pairs++;
			else
				selfs++;
		}
	/* every identity with itself, plus qpn 0x1 vs 0x01000001 per guid */
	KUNIT_EXPECT_EQ(test, ng * nq + ng, selfs);
	KUNIT_EXPECT_EQ(test, ng * nq * (ng * nq + 1) / 2 - selfs, pairs);
}

static void peer_arbiter_random(struct kunit *test)
{
	struct cm_peer_ident a, b;
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
		decided += peer_check_pair(test, &a, &b);
	}
	KUNIT_EXPECT_GT(test, decided, 15000U);
}

static struct kunit_case cm_peer_arbiter_test_cases[] = {
	KUNIT_CASE_PARAM(peer_arbiter_cases, peer_arb_gen_params),
	KUNIT_CASE(peer_arbiter_exhaustive),
	KUNIT_CASE(peer_arbiter_random),
	{}
};

static struct kunit_suite cm_peer_arbiter_test_suite = {
	.name = "cm_peer_arbiter",
	.test_cases = cm_peer_arbiter_test_cases,
};

kunit_test_suite(cm_peer_arbiter_test_suite);
