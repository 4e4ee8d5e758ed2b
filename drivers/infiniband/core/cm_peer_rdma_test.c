// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Suite cm_peer_rdma: the rdma_cm kernel API with kernel QPs, as an
 * in-kernel ULP uses it (and without, as ucma uses it for user space).
 * Two rdma_cm ids on the device's IPv4 address, two ports, connect to
 * each other with rdma_set_peer_to_peer(): the passive end's REP is sent
 * by rdma_cm from its CM handler, both ends get RDMA_CM_EVENT_ESTABLISHED
 * with the other's private data, and a SEND goes each way.
 */
#include <linux/cred.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include "cm_peer_fault.h"
#include "cm_peer_kunit_helpers.h"
#include "cm_peer_test.h"
#include "cma_priv.h"

#define PEER_RDMA_PORT	7900

struct peer_rdma_end {
	struct kunit *test;
	char name[PEER_NAME_LEN];
	struct ib_device *dev;
	struct rdma_cm_id *id;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct sockaddr_in src, dst;
	struct completion event;
	enum rdma_cm_event_type last;
	int status;
	char peer_name[PEER_NAME_LEN];
	struct peer_wire wire;
	char *buf;		/* what we send, then what we receive */
	u64 dma;
	struct rdma_cm_id *listen_id;	/* on demand: @id is its new id */
	struct rdma_ucm_ece ece;	/* sent with rdma_connect_ece() */
	struct rdma_ucm_ece ece_got;	/* with ESTABLISHED */
	u32 qpn_got;			/* qp_num with ESTABLISHED */
	u8 data_len;			/* private_data_len, last event */
	struct ib_qp *uqp;		/* a QP not on @id, as user space has */
	u8 rd_atom;			/* RDMA reads each way, 0: 1 */
};

static int peer_rdma_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct peer_rdma_end *e = id->context;

	/* one new id per listener: a second would outlive the case */
	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST &&
	    e->id != e->listen_id)
		return -ECONNREFUSED;
	if ((ev->event == RDMA_CM_EVENT_ESTABLISHED ||
	     ev->event == RDMA_CM_EVENT_CONNECT_REQUEST ||
	     ev->event == RDMA_CM_EVENT_CONNECT_RESPONSE) &&
	    ev->param.conn.private_data)
		memcpy(e->peer_name, ev->param.conn.private_data,
		       PEER_NAME_LEN - 1);
	e->data_len = ev->param.conn.private_data_len;
	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		e->id = id;	/* the listener's is in listen_id */
	if (ev->event == RDMA_CM_EVENT_ESTABLISHED) {
		e->ece_got = ev->ece;
		e->qpn_got = ev->param.conn.qp_num;
	}
	e->last = ev->event;
	e->status = ev->status;
	complete(&e->event);
	return 0;
}

static void peer_rdma_expect(struct peer_rdma_end *e,
			     enum rdma_cm_event_type want)
{
	KUNIT_ASSERT_GT_MSG(e->test,
			    wait_for_completion_timeout(&e->event, PEER_TIMEOUT),
			    0L, "%s: no event in %d s", e->name,
			    PEER_TIMEOUT / HZ);
	KUNIT_ASSERT_EQ_MSG(e->test, want, e->last, "%s: %s, status %d",
			    e->name, rdma_event_msg(e->last), e->status);
}

static void peer_rdma_end_release(void *data)
{
	struct peer_rdma_end *e = data;

	if (e->id && e->id->qp)
		rdma_destroy_qp(e->id);
	if (e->id)
		rdma_destroy_id(e->id);
	if (e->uqp)
		ib_destroy_qp(e->uqp);
	if (e->listen_id && e->listen_id != e->id)
		rdma_destroy_id(e->listen_id);
	if (e->cq)
		ib_free_cq(e->cq);
	if (e->dma)
		ib_dma_unmap_single(e->dev, e->dma, 2 * PEER_NAME_LEN,
				    DMA_BIDIRECTIONAL);
	kfree(e->buf);
	if (e->pd)
		ib_dealloc_pd(e->pd);
	ib_device_put(e->dev);
}

static void peer_rdma_addr(struct sockaddr_in *sin, __be32 ip, u16 port)
{
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = ip;
	sin->sin_port = htons(port);
}

/* An end with an rdma_cm id on @dev, whose reference it takes over. */
static struct peer_rdma_end *peer_rdma_end_alloc(struct kunit *test,
						 const char *name,
						 struct ib_device *dev)
{
	struct peer_rdma_end *e;

	e = kunit_kzalloc(test, sizeof(*e), GFP_KERNEL);
	if (!e) {
		ib_device_put(dev);
		KUNIT_FAIL_AND_ABORT(test, "out of memory");
	}
	e->test = test;
	e->dev = dev;
	strscpy(e->name, name, sizeof(e->name));
	init_completion(&e->event);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, peer_rdma_end_release,
						  e));
	e->id = rdma_create_id(&init_net, peer_rdma_handler, e, RDMA_PS_TCP,
			       IB_QPT_RC);
	if (IS_ERR(e->id)) {
		e->id = NULL;
		KUNIT_FAIL_AND_ABORT(test, "rdma_create_id failed");
	}
	return e;
}

/*
 * An id bound to the device's IPv4 address, @port (shared with @reuse);
 * the peer at @peer_port.
 */
static struct peer_rdma_end *peer_rdma_end_create(struct kunit *test,
						  const char *name, u16 port,
						  u16 peer_port, bool reuse)
{
	const struct ib_gid_attr *gid;
	struct peer_rdma_end *e;
	struct ib_device *dev;
	__be32 ip;

	dev = ib_device_get_by_name(peer_dev_name, RDMA_DRIVER_UNKNOWN);
	if (!dev)
		kunit_skip(test, "no RDMA device %s", peer_dev_name);
	gid = peer_find_gid(dev);
	if (!gid) {
		ib_device_put(dev);
		KUNIT_FAIL_AND_ABORT(test, "%s has no RoCE v2 IPv4 GID",
				     peer_dev_name);
	}
	memcpy(&ip, &gid->gid.raw[12], sizeof(ip));
	rdma_put_gid_attr(gid);

	e = peer_rdma_end_alloc(test, name, dev);
	peer_rdma_addr(&e->src, ip, port);
	peer_rdma_addr(&e->dst, ip, peer_port);
	if (reuse)
		KUNIT_ASSERT_EQ(test, 0, rdma_set_reuseaddr(e->id, 1));
	KUNIT_ASSERT_EQ(test, 0, rdma_bind_addr(e->id,
						(struct sockaddr *)&e->src));
	return e;
}

/* A PD and a CQ for @e's QP; @init gets its attributes. */
static void peer_rdma_pd_cq(struct peer_rdma_end *e,
			    struct ib_qp_init_attr *init)
{
	struct kunit *test = e->test;

	*init = (struct ib_qp_init_attr){
		.cap = { .max_send_wr = 2, .max_recv_wr = 2,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type = IB_QPT_RC,
	};
	e->pd = ib_alloc_pd(e->id->device, 0);
	if (IS_ERR(e->pd)) {
		e->pd = NULL;
		KUNIT_FAIL_AND_ABORT(test, "ib_alloc_pd failed");
	}
	e->cq = ib_alloc_cq(e->id->device, NULL, 8, 0, IB_POLL_DIRECT);
	if (IS_ERR(e->cq)) {
		e->cq = NULL;
		KUNIT_FAIL_AND_ABORT(test, "ib_alloc_cq failed");
	}
	init->send_cq = e->cq;
	init->recv_cq = e->cq;
}

/* A kernel QP on @e->id with a RECV posted. */
static void peer_rdma_qp(struct peer_rdma_end *e)
{
	struct kunit *test = e->test;
	struct ib_qp_init_attr init;

	peer_rdma_pd_cq(e, &init);
	KUNIT_ASSERT_EQ(test, 0, rdma_create_qp(e->id, e->pd, &init));

	e->buf = kzalloc(2 * PEER_NAME_LEN, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, e->buf);
	strscpy(e->buf, e->name, PEER_NAME_LEN);
	e->dma = ib_dma_map_single(e->dev, e->buf, 2 * PEER_NAME_LEN,
				   DMA_BIDIRECTIONAL);
	KUNIT_ASSERT_EQ(test, 0,
			peer_wire_init(&e->wire, e->name, e->id->qp, e->cq,
				       e->pd->local_dma_lkey, e->dma,
				       e->dma + PEER_NAME_LEN, PEER_NAME_LEN));
}

/* Resolve, set the option. */
static void peer_rdma_resolve(struct peer_rdma_end *e)
{
	struct kunit *test = e->test;

	KUNIT_ASSERT_EQ(test, 0,
			rdma_resolve_addr(e->id, (struct sockaddr *)&e->src,
					  (struct sockaddr *)&e->dst, 2000));
	peer_rdma_expect(e, RDMA_CM_EVENT_ADDR_RESOLVED);
	KUNIT_ASSERT_EQ(test, 0, rdma_resolve_route(e->id, 2000));
	peer_rdma_expect(e, RDMA_CM_EVENT_ROUTE_RESOLVED);
	KUNIT_ASSERT_EQ(test, 0, rdma_set_peer_to_peer(e->id, true));
}

/* Resolve, set the option, a kernel QP with a RECV posted. */
static void peer_rdma_prepare(struct peer_rdma_end *e)
{
	peer_rdma_resolve(e);
	peer_rdma_qp(e);
}

static int peer_rdma_connect(struct peer_rdma_end *e, bool accept)
{
	struct rdma_conn_param cp = {
		.private_data = e->name,
		.private_data_len = PEER_NAME_LEN,
		.responder_resources = e->rd_atom ?: 1,
		.initiator_depth = e->rd_atom ?: 1,
		.retry_count = 7,
		.rnr_retry_count = 7,
		.qp_num = e->uqp ? e->uqp->qp_num : 0,
	};

	int ret;

	if (!accept)
		return rdma_connect_ece(e->id, &cp, &e->ece);
	rdma_lock_handler(e->id);	/* as if from its CONNECT_REQUEST */
	ret = rdma_accept(e->id, &cp);
	rdma_unlock_handler(e->id);
	return ret;
}

/* Both ESTABLISHED with the other's name, then a SEND each way. */
static void peer_rdma_expect_connected(struct peer_rdma_end *a,
				       struct peer_rdma_end *b)
{
	struct kunit *test = a->test;

	peer_rdma_expect(a, RDMA_CM_EVENT_ESTABLISHED);
	peer_rdma_expect(b, RDMA_CM_EVENT_ESTABLISHED);
	KUNIT_EXPECT_STREQ(test, a->peer_name, b->name);
	KUNIT_EXPECT_STREQ(test, b->peer_name, a->name);
	peer_wire_exchange(test, &a->wire, &b->wire);
	ib_dma_sync_single_for_cpu(a->dev, a->dma, 2 * PEER_NAME_LEN,
				   DMA_BIDIRECTIONAL);
	ib_dma_sync_single_for_cpu(b->dev, b->dma, 2 * PEER_NAME_LEN,
				   DMA_BIDIRECTIONAL);
	KUNIT_EXPECT_STREQ(test, a->buf + PEER_NAME_LEN, b->name);
	KUNIT_EXPECT_STREQ(test, b->buf + PEER_NAME_LEN, a->name);
}

/*
 * a on @port and b on @port + 1 rdma_connect() to each other at once, with
 * ECE attr_mod @attr_a and @attr_b (0: no ECE); one connection results.
 */
static void peer_rdma_collide(struct kunit *test, u16 port, u32 attr_a,
			      u32 attr_b, struct peer_rdma_end **pa,
			      struct peer_rdma_end **pb)
{
	struct peer_rdma_end *a, *b;

	a = peer_rdma_end_create(test, "ka", port, port + 1, false);
	b = peer_rdma_end_create(test, "kb", port + 1, port, false);
	if (attr_a)
		a->ece = (struct rdma_ucm_ece){ .vendor_id = 0x1234,
						.attr_mod = attr_a };
	if (attr_b)
		b->ece = (struct rdma_ucm_ece){ .vendor_id = 0x1234,
						.attr_mod = attr_b };
	peer_rdma_prepare(a);
	peer_rdma_prepare(b);
	KUNIT_ASSERT_EQ(test, 0, peer_rdma_connect(a, false));
	KUNIT_ASSERT_EQ(test, 0, peer_rdma_connect(b, false));
	peer_rdma_expect_connected(a, b);
	*pa = a;
	*pb = b;
}

/* Both rdma_connect() at once: collision or hold, one connection. */
static void peer_rdma_collision(struct kunit *test)
{
	struct peer_rdma_end *a, *b;

	peer_rdma_collide(test, PEER_RDMA_PORT, 0, 0, &a, &b);
}

/*
 * b's id does not exist yet when a connects: a's REQ is rejected and sent
 * again, then held once b is bound, and b turns passive on it, its REP
 * sent from the CM handler with a kernel QP.
 */
static void peer_rdma_late(struct kunit *test)
{
	unsigned long passive, resent;
	struct peer_rdma_end *a, *b;

	a = peer_rdma_end_create(test, "ka", PEER_RDMA_PORT + 2,
				 PEER_RDMA_PORT + 3, false);
	passive = peer_counter(test, "cm_peer/turned_passive");
	resent = peer_counter(test, "cm_peer/resent");
	peer_rdma_prepare(a);
	KUNIT_ASSERT_EQ(test, 0, peer_rdma_connect(a, false));
	msleep(300);
	b = peer_rdma_end_create(test, "kb", PEER_RDMA_PORT + 3,
				 PEER_RDMA_PORT + 2, false);
	peer_rdma_prepare(b);
	KUNIT_ASSERT_EQ(test, 0, peer_rdma_connect(b, false));
	peer_rdma_expect_connected(a, b);
	KUNIT_EXPECT_GT(test, peer_counter(test, "cm_peer/resent"), resent);
	KUNIT_EXPECT_GT(test, peer_counter(test, "cm_peer/turned_passive"),
			passive);
}

/*
 * On demand: a's listener (the option set before rdma_listen()) takes b's
 * REQ, which no peer id of a waits for: a CONNECT_REQUEST with b's name,
 * accepted with a kernel QP.  While that connection lasts, a peer id of
 * a's port connecting to b fails: one connection per pair.
 */
static void peer_rdma_ondemand(struct kunit *test)
{
	struct peer_rdma_end *l, *b, *a;

	l = peer_rdma_end_create(test, "kl", PEER_RDMA_PORT + 4, 0, true);
	KUNIT_ASSERT_EQ(test, 0, rdma_set_peer_to_peer(l->id, true));
	KUNIT_ASSERT_EQ(test, 0, rdma_listen(l->id, 4));
	l->listen_id = l->id;
	b = peer_rdma_end_create(test, "kb", PEER_RDMA_PORT + 5,
				 PEER_RDMA_PORT + 4, false);
	peer_rdma_prepare(b);
	KUNIT_ASSERT_EQ(test, 0, peer_rdma_connect(b, false));
	peer_rdma_expect(l, RDMA_CM_EVENT_CONNECT_REQUEST);
	KUNIT_EXPECT_STREQ(test, l->peer_name, b->name);
	peer_rdma_qp(l);
	KUNIT_ASSERT_EQ(test, 0, peer_rdma_connect(l, true));
	peer_rdma_expect_connected(l, b);

	a = peer_rdma_end_create(test, "ka", PEER_RDMA_PORT + 4,
				 PEER_RDMA_PORT + 5, true);
	peer_rdma_prepare(a);
	KUNIT_EXPECT_EQ(test, -EISCONN, peer_rdma_connect(a, false));
}

/*
 * ECE: a listener's ULP decides on the REQ's (rdma_accept_ece()); the
 * passive end of a collision has nothing to decide on, so its REP carries
 * ECE only when both REQs had the same.  The active end sees the REP's.
 */
static void peer_rdma_ece_round(struct kunit *test, u16 port, u32 attr_b)
{
	struct peer_rdma_end *a, *b;
	u32 got;

	peer_rdma_collide(test, port, 1, attr_b, &a, &b);
	/* the passive end's ESTABLISHED (from the RTU) carries none */
	got = a->ece_got.vendor_id | b->ece_got.vendor_id;
	KUNIT_EXPECT_EQ(test, attr_b == 1 ? 0x1234U : 0U, got);
	KUNIT_EXPECT_EQ(test, attr_b == 1 ? 1U : 0U,
			a->ece_got.attr_mod | b->ece_got.attr_mod);
}

static void peer_rdma_ece(struct kunit *test)
{
	peer_rdma_ece_round(test, PEER_RDMA_PORT + 10, 1);
	peer_rdma_ece_round(test, PEER_RDMA_PORT + 12, 2);
}

/*
 * No peer model without the IB CM.  On siw0 (added by the test's init with
 * an IPv4 address; the case skips without it): the option fails on an id bound to
 * it, and an id that had the option before it got the device fails
 * rdma_connect() and rdma_listen(), all with -EOPNOTSUPP.
 */
#define PEER_IWARP_DEV	"siw0"

static struct peer_rdma_end *peer_iwarp_end(struct kunit *test,
					    const char *name, u16 port,
					    u16 peer_port)
{
	struct net_device *ndev;
	struct peer_rdma_end *e;
	struct ib_device *dev;
	__be32 ip;

	dev = ib_device_get_by_name(PEER_IWARP_DEV, RDMA_DRIVER_UNKNOWN);
	if (!dev)
		kunit_skip(test, "no iWARP device %s", PEER_IWARP_DEV);
	ndev = ib_device_get_netdev(dev, 1);
	ip = ndev ? inet_select_addr(ndev, 0, RT_SCOPE_UNIVERSE) : 0;
	dev_put(ndev);
	if (!ip) {
		ib_device_put(dev);
		KUNIT_FAIL_AND_ABORT(test, "%s: no IPv4 address", PEER_IWARP_DEV);
	}
	e = peer_rdma_end_alloc(test, name, dev);
	peer_rdma_addr(&e->src, ip, port);
	peer_rdma_addr(&e->dst, ip, peer_port);
	return e;
}

static void peer_rdma_iwarp(struct kunit *test)
{
	struct peer_rdma_end *x, *y, *z;

	x = peer_iwarp_end(test, "ix", PEER_RDMA_PORT + 6, 0);
	KUNIT_ASSERT_EQ(test, 0, rdma_bind_addr(x->id,
						(struct sockaddr *)&x->src));
	KUNIT_ASSERT_PTR_EQ(test, x->dev, x->id->device);
	KUNIT_EXPECT_EQ(test, -EOPNOTSUPP, rdma_set_peer_to_peer(x->id, true));

	y = peer_iwarp_end(test, "iy", PEER_RDMA_PORT + 7, PEER_RDMA_PORT + 6);
	KUNIT_ASSERT_EQ(test, 0, rdma_set_peer_to_peer(y->id, true));
	KUNIT_ASSERT_EQ(test, 0,
			rdma_resolve_addr(y->id, (struct sockaddr *)&y->src,
					  (struct sockaddr *)&y->dst, 2000));
	peer_rdma_expect(y, RDMA_CM_EVENT_ADDR_RESOLVED);
	KUNIT_ASSERT_EQ(test, 0, rdma_resolve_route(y->id, 2000));
	peer_rdma_expect(y, RDMA_CM_EVENT_ROUTE_RESOLVED);
	KUNIT_EXPECT_EQ(test, -EOPNOTSUPP, peer_rdma_connect(y, false));

	z = peer_iwarp_end(test, "iz", PEER_RDMA_PORT + 8, 0);
	KUNIT_ASSERT_EQ(test, 0, rdma_set_peer_to_peer(z->id, true));
	KUNIT_ASSERT_EQ(test, 0, rdma_bind_addr(z->id,
						(struct sockaddr *)&z->src));
	KUNIT_EXPECT_EQ(test, -EOPNOTSUPP, rdma_listen(z->id, 4));
}

/*
 * A passive end in user space has no QP on its id: CONNECT_RESPONSE, then
 * librdmacm's rdma_accept() without parameters sends the REP.  b on
 * @port + 1 is such an end, a's REQ held there when b connects.
 */
static void peer_rdma_user_turned(struct kunit *test, u16 port,
				  struct peer_rdma_end **pa,
				  struct peer_rdma_end **pb)
{
	struct ib_qp_init_attr init;
	struct peer_rdma_end *a, *b;
	unsigned long held, now;
	int ret;

	a = peer_rdma_end_create(test, "ka", port, port + 1, false);
	b = peer_rdma_end_create(test, "kb", port + 1, port, false);
	peer_rdma_resolve(b);
	peer_rdma_pd_cq(b, &init);
	b->uqp = ib_create_qp(b->pd, &init);
	if (IS_ERR(b->uqp)) {
		b->uqp = NULL;
		KUNIT_FAIL_AND_ABORT(test, "ib_create_qp failed");
	}

	held = peer_counter(test, "cm_peer/held");
	peer_rdma_prepare(a);
	KUNIT_ASSERT_EQ(test, 0, peer_rdma_connect(a, false));
	ret = read_poll_timeout(peer_counter, now, now > held, 20000,
				jiffies_to_usecs(PEER_TIMEOUT), false, test,
				"cm_peer/held");
	KUNIT_ASSERT_EQ_MSG(test, 0, ret, "a's REQ not held");
	KUNIT_ASSERT_EQ(test, 0, peer_rdma_connect(b, false));
	peer_rdma_expect(b, RDMA_CM_EVENT_CONNECT_RESPONSE);
	KUNIT_EXPECT_STREQ(test, b->peer_name, a->name);
	KUNIT_EXPECT_EQ(test, 56, b->data_len);	/* 92 less rdma_cm's header */
	*pa = a;
	*pb = b;
}

/*
 * librdmacm may ask, accepting, to be told ESTABLISHED at the RTU, as a
 * listener's accepted id is, rather than when its accept returns: then
 * that event must come, with a's private data and QPN.  Any other id may
 * not ask: it would wait for nothing.
 */
static void peer_rdma_user_rtu_event(struct kunit *test)
{
	struct peer_rdma_end *a, *b;
	int ret;

	peer_rdma_user_turned(test, PEER_RDMA_PORT + 18, &a, &b);
	rdma_lock_handler(a->id);
	KUNIT_EXPECT_FALSE(test, rdma_peer_passive(a->id));
	KUNIT_EXPECT_EQ(test, -EINVAL, rdma_peer_report_rtu(a->id));
	rdma_unlock_handler(a->id);
	memset(b->peer_name, 0, sizeof(b->peer_name));
	rdma_lock_handler(b->id);
	KUNIT_EXPECT_TRUE(test, rdma_peer_passive(b->id));
	ret = rdma_peer_report_rtu(b->id) ?: rdma_accept(b->id, NULL);
	rdma_unlock_handler(b->id);
	KUNIT_ASSERT_EQ(test, 0, ret);
	peer_rdma_expect(a, RDMA_CM_EVENT_ESTABLISHED);
	peer_rdma_expect(b, RDMA_CM_EVENT_ESTABLISHED);
	KUNIT_EXPECT_STREQ(test, b->peer_name, a->name);
	KUNIT_EXPECT_EQ(test, b->qpn_got, a->id->qp->qp_num);
	/* the REQ's 92 bytes less rdma_cm's header, as in CONNECT_RESPONSE */
	KUNIT_EXPECT_EQ(test, 56, b->data_len);
}

/*
 * Stock librdmacm reports ESTABLISHED itself when its accept returns:
 * without the request, the RTU must bring no second one.
 */
static void peer_rdma_user_no_rtu_event(struct kunit *test)
{
	struct peer_rdma_end *a, *b;
	int ret;

	peer_rdma_user_turned(test, PEER_RDMA_PORT + 24, &a, &b);
	rdma_lock_handler(b->id);
	ret = rdma_accept(b->id, NULL);
	rdma_unlock_handler(b->id);
	KUNIT_ASSERT_EQ(test, 0, ret);
	peer_rdma_expect(a, RDMA_CM_EVENT_ESTABLISHED);
	/* a sent its RTU before its ESTABLISHED; loopback takes microseconds */
	KUNIT_EXPECT_EQ_MSG(test, 0L,
			    wait_for_completion_timeout(&b->event, HZ / 2),
			    "b: %s", rdma_event_msg(b->last));
}

#ifdef CONFIG_INFINIBAND_CM_PEER_FAULT_INJECT
/*
 * As peer_rdma_user_turned(), b accepting, but b's RTUs are lost: all of
 * them, so that a slow run cannot see one sent for a resent REP.
 */
static void peer_rdma_user_passive(struct kunit *test, u16 port,
				   struct peer_rdma_end **pa,
				   struct peer_rdma_end **pb)
{
	struct peer_rdma_end *a, *b;
	unsigned int hits, got;
	int ret;

	cm_peer_fault_clear();
	ret = kunit_add_action_or_reset(test, cm_peer_fault_clear_action, NULL);
	KUNIT_ASSERT_EQ(test, 0, ret);
	hits = cm_peer_fault_hits();
	KUNIT_ASSERT_EQ(test, 0, cm_peer_fault_add(CM_PEER_FAULT_DROP,
						   CM_RTU_ATTR_ID, 0, UINT_MAX,
						   0));
	peer_rdma_user_turned(test, port, &a, &b);
	rdma_lock_handler(b->id);
	ret = rdma_accept(b->id, NULL);
	rdma_unlock_handler(b->id);
	KUNIT_ASSERT_EQ(test, 0, ret);
	peer_rdma_expect(a, RDMA_CM_EVENT_ESTABLISHED);
	read_poll_timeout(cm_peer_fault_hits, got, got != hits, 20000,
			  jiffies_to_usecs(PEER_TIMEOUT), false);
	KUNIT_ASSERT_EQ_MSG(test, hits + 1, got, "the RTU was not lost");
	*pa = a;
	*pb = b;
}

/*
 * librdmacm reports ESTABLISHED when its accept returns.  The user-space
 * passive end, its RTU lost, disconnects: the other end, established,
 * must see DISCONNECTED (a DREQ), not nothing and then the REJ of the
 * destroy.
 */
static void peer_rdma_user_passive_disconnect(struct kunit *test)
{
	struct peer_rdma_end *a, *b;

	peer_rdma_user_passive(test, PEER_RDMA_PORT + 14, &a, &b);
	KUNIT_ASSERT_EQ(test, 0, rdma_disconnect(b->id));
	peer_rdma_expect(a, RDMA_CM_EVENT_DISCONNECTED);
	KUNIT_ASSERT_EQ(test, 0, rdma_disconnect(a->id));	/* the DREP */
	peer_rdma_expect(b, RDMA_CM_EVENT_DISCONNECTED);
	KUNIT_EXPECT_EQ(test, 0, b->status);
}

/* Ends an rdma_peer_accepted() call from elsewhere, meanwhile. */
struct peer_rdma_waker {
	struct delayed_work work;
	struct wait_queue_head *wq;
	struct list_head *events;
	struct list_head queued;
	struct rdma_cm_id *id;		/* else queue an event */
	int ret;			/* rdma_notify()'s */
};

static void peer_rdma_waker_fn(struct work_struct *work)
{
	struct peer_rdma_waker *w =
		container_of(work, struct peer_rdma_waker, work.work);

	if (w->id) {		/* as the first packet in would */
		w->ret = rdma_notify(w->id, IB_EVENT_COMM_EST);
		return;
	}
	list_add(&w->queued, w->events);	/* as ucma does, then wakes */
	wake_up_interruptible(w->wq);
}

/* How long rdma_peer_accepted() waits, @w acting after 50 ms if given */
static s64 peer_rdma_accepted_ms(struct rdma_cm_id *id,
				 struct wait_queue_head *wq,
				 struct list_head *events,
				 struct peer_rdma_waker *w)
{
	ktime_t t = ktime_get();
	s64 ms;

	if (w)
		schedule_delayed_work(&w->work, msecs_to_jiffies(50));
	rdma_peer_accepted(id, wq, events);
	ms = ktime_ms_delta(ktime_get(), t);
	if (w)
		flush_delayed_work(&w->work);
	return ms;
}

/*
 * ucma's accept waits in rdma_peer_accepted() for that RTU, but only
 * while the caller has no event queued: two processes each waiting for
 * the RTU the other sends once it handles a REP queued behind would stall
 * each other.  The RTU lost, the wait lasts its bound (500 ms; 450 allows
 * for the jiffy) with nothing queued, does not start with an event
 * queued, and ends when one is queued or the connection is established
 * (COMM_EST, as the RTU) 50 ms into it: under 400 ms, short of the
 * bound, for the debug kernels' delays (an event queued before: 250).
 */
static void peer_rdma_user_accept_wait(struct kunit *test)
{
	DECLARE_WAIT_QUEUE_HEAD_ONSTACK(wq);
	struct peer_rdma_waker w = { .wq = &wq };
	struct peer_rdma_end *a, *b;
	struct list_head queued;
	LIST_HEAD(events);
	s64 ms;

	peer_rdma_user_passive(test, PEER_RDMA_PORT + 16, &a, &b);
	w.events = &events;
	INIT_DELAYED_WORK_ONSTACK(&w.work, peer_rdma_waker_fn);

	ms = peer_rdma_accepted_ms(b->id, &wq, &events, NULL);
	KUNIT_EXPECT_GE_MSG(test, ms, 450, "nothing queued: returned early");
	list_add(&queued, &events);
	ms = peer_rdma_accepted_ms(b->id, &wq, &events, NULL);
	KUNIT_EXPECT_LT_MSG(test, ms, 250, "an event queued: waited");
	list_del(&queued);

	ms = peer_rdma_accepted_ms(b->id, &wq, &events, &w);
	KUNIT_EXPECT_GE(test, ms, 40);
	KUNIT_EXPECT_LT_MSG(test, ms, 400, "an event came: still waited");
	list_del(&w.queued);

	w.id = b->id;
	ms = peer_rdma_accepted_ms(b->id, &wq, &events, &w);
	KUNIT_EXPECT_EQ(test, 0, w.ret);
	KUNIT_EXPECT_GE(test, ms, 40);
	KUNIT_EXPECT_LT_MSG(test, ms, 400, "established: still waited");
	destroy_delayed_work_on_stack(&w.work);
}
#endif

static void peer_rdma_destroy_id(void *id)
{
	rdma_destroy_id(id);
}

enum { PEER_NONE, PEER_BEFORE_BIND, PEER_AFTER_BIND };

/*
 * As user @uid, an id created as ucma creates them (rdma_create_user_id()),
 * reusable, bound to @src, with the option set as @peer says.
 */
static int peer_rdma_user_bind(struct kunit *test, uid_t uid,
			       struct sockaddr *src, int peer)
{
	struct cred *cred = prepare_creds();
	const struct cred *old;
	struct rdma_cm_id *id;
	int ret;

	KUNIT_ASSERT_NOT_NULL(test, cred);
	cred->euid = make_kuid(&init_user_ns, uid);
	old = override_creds(cred);
	id = rdma_create_user_id(peer_rdma_handler, NULL, RDMA_PS_TCP,
				 IB_QPT_RC);
	if (IS_ERR(id)) {
		ret = PTR_ERR(id);
		goto out;
	}
	ret = kunit_add_action_or_reset(test, peer_rdma_destroy_id, id) ?:
	      rdma_set_reuseaddr(id, 1);
	if (!ret && peer == PEER_BEFORE_BIND)
		ret = rdma_set_peer_to_peer(id, true);
	if (!ret)
		ret = rdma_bind_addr(id, src);
	if (!ret && peer == PEER_AFTER_BIND)
		ret = rdma_set_peer_to_peer(id, true);
out:
	revert_creds(old);
	put_cred(cred);
	return ret;
}

/*
 * Peer ids share an address and port only with ids of their owner:
 * another user's would take the REQs meant for them, or block their
 * listener.  Ids without the option share as before among themselves.
 */
static void peer_rdma_owner(struct kunit *test)
{
	struct peer_rdma_end *k;
	struct rdma_cm_id *kid;
	struct sockaddr_in sin;
	struct sockaddr *src;

	/* the device's address; the kernel's id keeps its own port */
	k = peer_rdma_end_create(test, "kk", PEER_RDMA_PORT + 20, 0, true);
	sin = k->src;
	sin.sin_port = htons(PEER_RDMA_PORT + 21);
	src = (struct sockaddr *)&sin;
	KUNIT_EXPECT_EQ(test, 0,
			peer_rdma_user_bind(test, 1000, src, PEER_BEFORE_BIND));
	KUNIT_EXPECT_EQ(test, 0,
			peer_rdma_user_bind(test, 1000, src, PEER_AFTER_BIND));
	KUNIT_EXPECT_EQ(test, 0,
			peer_rdma_user_bind(test, 1000, src, PEER_NONE));
	KUNIT_EXPECT_EQ(test, -EADDRINUSE,
			peer_rdma_user_bind(test, 1001, src, PEER_BEFORE_BIND));
	KUNIT_EXPECT_EQ(test, -EADDRINUSE,
			peer_rdma_user_bind(test, 1001, src, PEER_NONE));
	KUNIT_EXPECT_EQ(test, -EADDRINUSE,
			peer_rdma_user_bind(test, 0, src, PEER_NONE));

	/* without the option ids of two users share; then none takes it */
	sin.sin_port = htons(PEER_RDMA_PORT + 22);
	KUNIT_EXPECT_EQ(test, 0,
			peer_rdma_user_bind(test, 1000, src, PEER_NONE));
	KUNIT_EXPECT_EQ(test, -EADDRINUSE,
			peer_rdma_user_bind(test, 1001, src, PEER_AFTER_BIND));
	KUNIT_EXPECT_EQ(test, 0,
			peer_rdma_user_bind(test, 1001, src, PEER_NONE));
	/* the kernel's ids are root's, not a user's */
	kid = rdma_create_id(&init_net, peer_rdma_handler, NULL, RDMA_PS_TCP,
			     IB_QPT_RC);
	KUNIT_ASSERT_FALSE(test, IS_ERR(kid));
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   peer_rdma_destroy_id,
							   kid));
	sin.sin_port = htons(PEER_RDMA_PORT + 21);
	KUNIT_EXPECT_EQ(test, -EADDRINUSE,
			rdma_set_reuseaddr(kid, 1) ?:
			rdma_set_peer_to_peer(kid, true) ?:
			rdma_bind_addr(kid, src));
}

/*
 * On demand on the wildcard address, as RDS listens: each device's part
 * of the listener takes the REQs for its addresses.  The port is the
 * listener owner's: its peer ids share it, another user's ids do not.
 */
static void peer_rdma_ondemand_any(struct kunit *test)
{
	struct peer_rdma_end *l, *b, *a;
	struct sockaddr_in any, sin;

	b = peer_rdma_end_create(test, "kb", PEER_RDMA_PORT + 31,
				 PEER_RDMA_PORT + 30, false);
	l = peer_rdma_end_alloc(test, "kl",
				ib_device_get_by_name(peer_dev_name,
						      RDMA_DRIVER_UNKNOWN));
	peer_rdma_addr(&any, htonl(INADDR_ANY), PEER_RDMA_PORT + 30);
	KUNIT_ASSERT_EQ(test, 0, rdma_set_reuseaddr(l->id, 1));
	KUNIT_ASSERT_EQ(test, 0, rdma_set_peer_to_peer(l->id, true));
	KUNIT_ASSERT_EQ(test, 0, rdma_bind_addr(l->id,
						(struct sockaddr *)&any));
	KUNIT_ASSERT_EQ(test, 0, rdma_listen(l->id, 4));
	l->listen_id = l->id;

	sin = b->dst;
	KUNIT_EXPECT_EQ(test, -EADDRINUSE,
			peer_rdma_user_bind(test, 1000, (struct sockaddr *)&sin,
					    PEER_BEFORE_BIND));
	KUNIT_EXPECT_EQ(test, -EADDRINUSE,
			peer_rdma_user_bind(test, 1000, (struct sockaddr *)&sin,
					    PEER_NONE));

	peer_rdma_prepare(b);
	KUNIT_ASSERT_EQ(test, 0, peer_rdma_connect(b, false));
	peer_rdma_expect(l, RDMA_CM_EVENT_CONNECT_REQUEST);
	KUNIT_EXPECT_STREQ(test, l->peer_name, b->name);
	peer_rdma_qp(l);
	KUNIT_ASSERT_EQ(test, 0, peer_rdma_connect(l, true));
	peer_rdma_expect_connected(l, b);

	/* the owner's peer id shares the port; the pair has its connection */
	a = peer_rdma_end_create(test, "ka", PEER_RDMA_PORT + 30,
				 PEER_RDMA_PORT + 31, true);
	peer_rdma_prepare(a);
	KUNIT_EXPECT_EQ(test, -EISCONN, peer_rdma_connect(a, false));
}

/*
 * Two connections on one 4-tuple, told apart by the other end's private
 * data under a mask (rdma_set_peer_match()), while a masked-out byte
 * differs: each id connects to its own, all four at once.  A third id of
 * one of them is refused, with the same mask or another.  Ids of the port
 * with another mask, or none, connect beside them.
 */
static void peer_rdma_match(struct kunit *test)
{
	static const u8 mask[] = { 0xff, 0xff, 0x00 };
	static const u8 other[] = { 0xff, 0x00, 0x00 };
	struct peer_rdma_end *a[2], *b[2], *c, *d;
	int i;

	for (i = 0; i < 2; i++) {
		a[i] = peer_rdma_end_create(test, i ? "m1a" : "m0a",
					    PEER_RDMA_PORT + 32,
					    PEER_RDMA_PORT + 33, true);
		b[i] = peer_rdma_end_create(test, i ? "m1b" : "m0b",
					    PEER_RDMA_PORT + 33,
					    PEER_RDMA_PORT + 32, true);
		/* the masked-out third byte differs from what comes */
		KUNIT_ASSERT_EQ(test, 0, rdma_set_peer_match(a[i]->id,
							     i ? "m1x" : "m0x",
							     mask, 3));
		KUNIT_ASSERT_EQ(test, 0, rdma_set_peer_match(b[i]->id,
							     i ? "m1y" : "m0y",
							     mask, 3));
		peer_rdma_prepare(a[i]);
		peer_rdma_prepare(b[i]);
		KUNIT_EXPECT_EQ(test, -EINVAL,
				rdma_set_peer_match(a[i]->id, NULL, NULL, 0));
	}
	KUNIT_ASSERT_EQ(test, 0, peer_rdma_connect(a[0], false));
	KUNIT_ASSERT_EQ(test, 0, peer_rdma_connect(a[1], false));
	KUNIT_ASSERT_EQ(test, 0, peer_rdma_connect(b[1], false));
	KUNIT_ASSERT_EQ(test, 0, peer_rdma_connect(b[0], false));
	peer_rdma_expect_connected(a[0], b[0]);
	peer_rdma_expect_connected(a[1], b[1]);

	c = peer_rdma_end_create(test, "m0c", PEER_RDMA_PORT + 32,
				 PEER_RDMA_PORT + 33, true);
	KUNIT_ASSERT_EQ(test, 0, rdma_set_peer_match(c->id, "m0z", mask, 3));
	KUNIT_ASSERT_EQ(test, 0,
			rdma_resolve_addr(c->id, (struct sockaddr *)&c->src,
					  (struct sockaddr *)&c->dst, 2000));
	peer_rdma_expect(c, RDMA_CM_EVENT_ADDR_RESOLVED);
	KUNIT_EXPECT_EQ(test, -EADDRINUSE, rdma_set_peer_to_peer(c->id, true));

	c = peer_rdma_end_create(test, "m0d", PEER_RDMA_PORT + 32,
				 PEER_RDMA_PORT + 33, true);
	KUNIT_ASSERT_EQ(test, 0, rdma_set_peer_match(c->id, "mzz", other, 3));
	KUNIT_ASSERT_EQ(test, 0,
			rdma_resolve_addr(c->id, (struct sockaddr *)&c->src,
					  (struct sockaddr *)&c->dst, 2000));
	peer_rdma_expect(c, RDMA_CM_EVENT_ADDR_RESOLVED);
	KUNIT_EXPECT_EQ(test, -EADDRINUSE, rdma_set_peer_to_peer(c->id, true));

	/*
	 * Another mask on the port, and no mask on the other end's: each REQ
	 * goes to the id whose key takes it, beside the connections above.
	 */
	c = peer_rdma_end_create(test, "m2c", PEER_RDMA_PORT + 32,
				 PEER_RDMA_PORT + 34, true);
	d = peer_rdma_end_create(test, "m2d", PEER_RDMA_PORT + 34,
				 PEER_RDMA_PORT + 32, true);
	KUNIT_ASSERT_EQ(test, 0, rdma_set_peer_match(c->id, "mzz", other, 3));
	peer_rdma_prepare(c);
	peer_rdma_prepare(d);
	KUNIT_ASSERT_EQ(test, 0, peer_rdma_connect(c, false));
	KUNIT_ASSERT_EQ(test, 0, peer_rdma_connect(d, false));
	peer_rdma_expect_connected(c, d);
}

/*
 * A peer id whose address is resolved, still resolving its route and
 * setting up its QP when the other end's REQ comes: the REQ is held for
 * it (ib_cm_peer_expect()), not taken by the port's listener, and the id
 * turns passive on it once it connects.  The option is set before the
 * bind here, so the address's resolution lists the id.
 */
static void peer_rdma_expect_early(struct kunit *test)
{
	struct peer_rdma_end *l, *a, *b;
	unsigned long passive;

	l = peer_rdma_end_create(test, "kl", PEER_RDMA_PORT + 35, 0, true);
	KUNIT_ASSERT_EQ(test, 0, rdma_set_peer_to_peer(l->id, true));
	KUNIT_ASSERT_EQ(test, 0, rdma_listen(l->id, 4));
	l->listen_id = l->id;	/* a CONNECT_REQUEST would replace @l->id */

	a = peer_rdma_end_alloc(test, "ka",
				ib_device_get_by_name(peer_dev_name,
						      RDMA_DRIVER_UNKNOWN));
	peer_rdma_addr(&a->src, l->src.sin_addr.s_addr, PEER_RDMA_PORT + 35);
	peer_rdma_addr(&a->dst, l->src.sin_addr.s_addr, PEER_RDMA_PORT + 36);
	KUNIT_ASSERT_EQ(test, 0, rdma_set_reuseaddr(a->id, 1));
	KUNIT_ASSERT_EQ(test, 0, rdma_set_peer_to_peer(a->id, true));
	KUNIT_ASSERT_EQ(test, 0,
			rdma_resolve_addr(a->id, (struct sockaddr *)&a->src,
					  (struct sockaddr *)&a->dst, 2000));
	peer_rdma_expect(a, RDMA_CM_EVENT_ADDR_RESOLVED);

	passive = peer_counter(test, "cm_peer/turned_passive");
	b = peer_rdma_end_create(test, "kb", PEER_RDMA_PORT + 36,
				 PEER_RDMA_PORT + 35, false);
	peer_rdma_prepare(b);
	KUNIT_ASSERT_EQ(test, 0, peer_rdma_connect(b, false));
	msleep(300);
	KUNIT_EXPECT_FALSE_MSG(test, completion_done(&l->event),
			       "the listener took the REQ: %d", l->last);
	KUNIT_ASSERT_EQ(test, 0, rdma_resolve_route(a->id, 2000));
	peer_rdma_expect(a, RDMA_CM_EVENT_ROUTE_RESOLVED);
	peer_rdma_qp(a);
	KUNIT_ASSERT_EQ(test, 0, peer_rdma_connect(a, false));
	peer_rdma_expect_connected(a, b);
	KUNIT_EXPECT_GT(test, peer_counter(test, "cm_peer/turned_passive"),
			passive);
}

/* An id whose ADDR_RESOLVED handler holds up ib_addr's ordered queue */
struct peer_rdma_plug {
	struct rdma_cm_id *id;
	struct completion entered, release;
};

static int peer_rdma_plug_handler(struct rdma_cm_id *id,
				  struct rdma_cm_event *ev)
{
	struct peer_rdma_plug *plug = id->context;

	complete(&plug->entered);
	wait_for_completion_timeout(&plug->release, 3 * PEER_TIMEOUT);
	return 0;
}

static void peer_rdma_unplug(void *data)
{
	struct peer_rdma_plug *plug = data;

	complete(&plug->release);
	rdma_destroy_id(plug->id);
}

static struct peer_rdma_plug *
peer_rdma_plug(struct kunit *test, struct sockaddr_in *addr)
{
	struct peer_rdma_plug *plug = kunit_kzalloc(test, sizeof(*plug),
						    GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, plug);
	init_completion(&plug->entered);
	init_completion(&plug->release);
	plug->id = rdma_create_id(&init_net, peer_rdma_plug_handler, plug,
				  RDMA_PS_TCP, IB_QPT_RC);
	KUNIT_ASSERT_FALSE(test, IS_ERR(plug->id));
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   peer_rdma_unplug,
							   plug));
	KUNIT_ASSERT_EQ(test, 0, rdma_resolve_addr(plug->id, NULL,
						   (struct sockaddr *)addr,
						   2000));
	KUNIT_ASSERT_GT(test, wait_for_completion_timeout(&plug->entered,
							  PEER_TIMEOUT), 0L);
	return plug;
}

/* @e's id is listed by its key (ib_cm_peer_expect()) */
static bool peer_rdma_expected(struct peer_rdma_end *e)
{
	struct rdma_id_private *id_priv =
		container_of(e->id, struct rdma_id_private, id);

	return id_priv->cm_id.ib && cm_peer_test_expected(id_priv->cm_id.ib);
}

/*
 * On RoCE a peer id is listed by its key from rdma_resolve_addr() on:
 * while a's address query waits in ib_addr's queue (behind a plug), a is
 * listed; b's REQ comes and is held, and a turns passive once connected.
 * (A REQ waits in that queue too, for its reply's MAC: which of the REQ
 * and the query goes first is up to their arrival.)
 */
static void peer_rdma_expect_resolving(struct kunit *test)
{
	struct peer_rdma_end *l, *a, *b;
	struct peer_rdma_plug *plug;
	unsigned long passive;

	l = peer_rdma_end_create(test, "kl", PEER_RDMA_PORT + 37, 0, true);
	KUNIT_ASSERT_EQ(test, 0, rdma_set_peer_to_peer(l->id, true));
	KUNIT_ASSERT_EQ(test, 0, rdma_listen(l->id, 4));
	l->listen_id = l->id;
	b = peer_rdma_end_create(test, "kb", PEER_RDMA_PORT + 38,
				 PEER_RDMA_PORT + 37, false);
	peer_rdma_prepare(b);

	plug = peer_rdma_plug(test, &b->src);
	a = peer_rdma_end_alloc(test, "ka",
				ib_device_get_by_name(peer_dev_name,
						      RDMA_DRIVER_UNKNOWN));
	peer_rdma_addr(&a->src, l->src.sin_addr.s_addr, PEER_RDMA_PORT + 37);
	peer_rdma_addr(&a->dst, l->src.sin_addr.s_addr, PEER_RDMA_PORT + 38);
	KUNIT_ASSERT_EQ(test, 0, rdma_set_reuseaddr(a->id, 1));
	KUNIT_ASSERT_EQ(test, 0, rdma_set_peer_to_peer(a->id, true));
	KUNIT_ASSERT_EQ(test, 0,
			rdma_resolve_addr(a->id, (struct sockaddr *)&a->src,
					  (struct sockaddr *)&a->dst, 2000));
	KUNIT_EXPECT_TRUE(test, peer_rdma_expected(a));
	KUNIT_EXPECT_FALSE_MSG(test, completion_done(&a->event),
			       "a's address was resolved: %d", a->last);

	passive = peer_counter(test, "cm_peer/turned_passive");
	KUNIT_ASSERT_EQ(test, 0, peer_rdma_connect(b, false));
	complete(&plug->release);
	peer_rdma_expect(a, RDMA_CM_EVENT_ADDR_RESOLVED);
	KUNIT_ASSERT_EQ(test, 0, rdma_resolve_route(a->id, 2000));
	peer_rdma_expect(a, RDMA_CM_EVENT_ROUTE_RESOLVED);
	peer_rdma_qp(a);
	KUNIT_ASSERT_EQ(test, 0, peer_rdma_connect(a, false));
	peer_rdma_expect_connected(a, b);
	KUNIT_EXPECT_FALSE(test, completion_done(&l->event));
	KUNIT_EXPECT_GT(test, peer_counter(test, "cm_peer/turned_passive"),
			passive);
}

/*
 * A query that fails takes back what was listed early: a resolves to an
 * address nobody answers ARP for, then to c's remote address, from c's
 * address and port, and c claimed that 4-tuple first.  a's rdma_connect()
 * fails with -EADDRINUSE, as if the first query never was; kept, the
 * first claim would let it through.
 */
static void peer_rdma_addr_error(struct kunit *test)
{
	u16 port = PEER_RDMA_PORT + 46;
	struct peer_rdma_end *a, *c;
	struct sockaddr_in nobody;

	c = peer_rdma_end_create(test, "kc", port, port + 1, true);
	peer_rdma_prepare(c);
	a = peer_rdma_end_alloc(test, "ka",
				ib_device_get_by_name(peer_dev_name,
						      RDMA_DRIVER_UNKNOWN));
	a->src = c->src;
	a->dst = c->dst;
	/* on the veth's /24, not ours (tests/kunit/uml-init.sh) */
	nobody = c->dst;
	nobody.sin_addr.s_addr ^= htonl(0x80);
	KUNIT_ASSERT_EQ(test, 0, rdma_set_reuseaddr(a->id, 1));
	KUNIT_ASSERT_EQ(test, 0, rdma_set_peer_to_peer(a->id, true));
	KUNIT_ASSERT_EQ(test, 0,
			rdma_resolve_addr(a->id, (struct sockaddr *)&a->src,
					  (struct sockaddr *)&nobody, 500));
	KUNIT_ASSERT_GT(test, wait_for_completion_timeout(&a->event,
							  PEER_TIMEOUT), 0L);
	if (a->last != RDMA_CM_EVENT_ADDR_ERROR)
		kunit_skip(test, "%pI4 answered: %s", &nobody.sin_addr,
			   rdma_event_msg(a->last));
	KUNIT_EXPECT_FALSE(test, peer_rdma_expected(a));
	KUNIT_ASSERT_EQ(test, 0,
			rdma_resolve_addr(a->id, (struct sockaddr *)&a->src,
					  (struct sockaddr *)&a->dst, 2000));
	peer_rdma_expect(a, RDMA_CM_EVENT_ADDR_RESOLVED);
	KUNIT_ASSERT_EQ(test, 0, rdma_resolve_route(a->id, 2000));
	peer_rdma_expect(a, RDMA_CM_EVENT_ROUTE_RESOLVED);
	peer_rdma_qp(a);
	KUNIT_EXPECT_EQ(test, -EADDRINUSE, peer_rdma_connect(a, false));
}

/*
 * The passive end's REP offers no more RDMA reads than the REQ it answers
 * offers, as a listener's ULP does: with one end asking for 4 each way
 * and the other for 1, both QPs get 1, whichever end turned passive (the
 * end asking for 4 is a, then b).
 */
static void peer_rdma_rd_atomic(struct kunit *test)
{
	struct ib_qp_init_attr init;
	struct peer_rdma_end *e[2];
	struct ib_qp_attr attr;
	int r, i;

	for (r = 0; r < 2; r++) {
		u16 port = PEER_RDMA_PORT + 40 + 2 * r;

		e[0] = peer_rdma_end_create(test, "ra", port, port + 1, false);
		e[1] = peer_rdma_end_create(test, "rb", port + 1, port, false);
		e[r]->rd_atom = 4;
		peer_rdma_prepare(e[0]);
		peer_rdma_prepare(e[1]);
		KUNIT_ASSERT_EQ(test, 0, peer_rdma_connect(e[0], false));
		KUNIT_ASSERT_EQ(test, 0, peer_rdma_connect(e[1], false));
		peer_rdma_expect_connected(e[0], e[1]);
		for (i = 0; i < 2; i++) {
			KUNIT_ASSERT_EQ(test, 0,
					ib_query_qp(e[i]->id->qp, &attr,
						    IB_QP_MAX_QP_RD_ATOMIC |
						    IB_QP_MAX_DEST_RD_ATOMIC,
						    &init));
			KUNIT_EXPECT_EQ(test, 1, attr.max_rd_atomic);
			KUNIT_EXPECT_EQ(test, 1, attr.max_dest_rd_atomic);
		}
	}
}

static struct kunit_case cm_peer_rdma_test_cases[] = {
	KUNIT_CASE_SLOW(peer_rdma_collision),
	KUNIT_CASE_SLOW(peer_rdma_late),
	KUNIT_CASE_SLOW(peer_rdma_ondemand),
	KUNIT_CASE_SLOW(peer_rdma_ondemand_any),
	KUNIT_CASE_SLOW(peer_rdma_match),
	KUNIT_CASE_SLOW(peer_rdma_expect_early),
	KUNIT_CASE_SLOW(peer_rdma_expect_resolving),
	KUNIT_CASE_SLOW(peer_rdma_addr_error),
	KUNIT_CASE_SLOW(peer_rdma_rd_atomic),
	KUNIT_CASE_SLOW(peer_rdma_ece),
	KUNIT_CASE_SLOW(peer_rdma_iwarp),
	KUNIT_CASE_SLOW(peer_rdma_owner),
	KUNIT_CASE_SLOW(peer_rdma_user_rtu_event),
	KUNIT_CASE_SLOW(peer_rdma_user_no_rtu_event),
#ifdef CONFIG_INFINIBAND_CM_PEER_FAULT_INJECT
	KUNIT_CASE_SLOW(peer_rdma_user_passive_disconnect),
	KUNIT_CASE_SLOW(peer_rdma_user_accept_wait),
#endif
	{}
};

static struct kunit_suite cm_peer_rdma_test_suite = {
	.name = "cm_peer_rdma",
	.suite_init = cm_peer_ib_suite_init,
	.test_cases = cm_peer_rdma_test_cases,
};

kunit_test_suite(cm_peer_rdma_test_suite);

MODULE_DESCRIPTION("KUnit suite cm_peer_rdma: rdma_cm peer-to-peer over an RDMA device");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
MODULE_LICENSE("Dual BSD/GPL");
