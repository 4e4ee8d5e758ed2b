// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * KUnit tests of the IB CM peer-to-peer model over a real RDMA device.
 *
 * The suite drives the real ib_cm (no model of it) on a soft-RoCE device:
 * two RC QPs on one port (loopback, so the GIDs are equal and the QPN
 * decides), each with its own cm_id, connect with ib_send_cm_peer_req(),
 * must end up as exactly one connection, with both QPs in RTS and a SEND
 * delivered each way.  The device is named by the cm_peer_ib_test.dev
 * parameter (default "rxe0").  At boot no such device exists and every case
 * is skipped; the test runner creates it and runs the suite again through
 * /sys/kernel/debug/kunit/cm_peer_ib/run.
 */

#include <kunit/test.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/inetdevice.h>
#include <linux/iopoll.h>
#include <linux/moduleparam.h>
#include <linux/netdevice.h>
#include <linux/prandom.h>
#include <linux/random.h>
#include <linux/vmstat.h>
#include <linux/workqueue.h>
#include <net/ipv6.h>
#include <rdma/iba.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_sa.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "cm_msgs.h"
#include "cm_peer.h"
#include "cm_peer_fault.h"

static char *peer_dev_name = "rxe0";
module_param_named(dev, peer_dev_name, charp, 0644);
MODULE_PARM_DESC(dev, "RDMA device the cm_peer_ib suite runs on");

#define PEER_SID		0x0000000100f2f2f2ULL
#define PEER_TIMEOUT	(10 * HZ)
#define CM_PEER_TEST_MATCH_MAX	92	/* a REQ's private data */
#define PEER_ID_LEN	8	/* match blob: the sender's service ID */
#define PEER_NAME_LEN	16

/* One end's data path: a SEND from one buffer, a RECV into another */
struct peer_wire {
	const char *name;
	struct ib_qp *qp;
	struct ib_cq *cq;
	struct ib_sge send_sge, recv_sge;
	struct ib_cqe send_cqe, recv_cqe;
	int sends, recvs, wc_errors;
};

struct peer_end {
	struct kunit *test;
	const char *name;
	struct ib_device *dev;
	const struct ib_gid_attr *sgid_attr;
	struct sa_path_rec path;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct ib_cm_id *cm_id;
	struct completion done;
	int status;		/* 0 established, < 0 failed */
	bool got_req, req_on_own_id, got_rep, got_mra, got_rtu, got_rej;
	bool no_retries;	/* its REQ is never resent */
	u8 response_timeout;	/* of its REQ, when not 0 */
	bool refuse_req;	/* fail the REQ event: the CM destroys the id */
	bool hold_req;		/* leave the REQ unanswered, see peer_send_rep() */
	unsigned int slow_req_ms;	/* the REQ event takes this long */
	bool in_req, req_refused;	/* the REQ event began, refused */
	int rej_reason;
	/* identity: REQ private data and what the partner's REQ starts with */
	u8 req_data[PEER_ID_LEN + PEER_NAME_LEN], match[PEER_ID_LEN];
	bool has_match;
	char peer_name[PEER_NAME_LEN];	/* from its REQ or REP */
	/* data path */
	struct peer_wire wire;
	u64 *send_buf, *recv_buf;
	u64 send_dma, recv_dma;
};

static unsigned long peer_counter(struct kunit *test, const char *name);
static void peer_set_limits(struct kunit *test, struct ib_device *dev,
			    unsigned int max_held, unsigned int max_age_ms);
static void peer_set_window(struct kunit *test, struct ib_device *dev,
			    unsigned int window);

static void peer_finish(struct peer_end *e, int status)
{
	e->status = status;
	complete(&e->done);
}

static int peer_modify(struct peer_end *e, enum ib_qp_state state)
{
	struct ib_qp_attr attr = { .qp_state = state };
	int mask, ret;

	ret = ib_cm_init_qp_attr(e->cm_id, &attr, &mask);
	if (ret)
		return ret;
	/*
	 * Before the REP is sent the CM does not know our receive PSN yet:
	 * use the one the REP will carry, as ULPs (e.g. IPoIB CM) do.
	 */
	if (state == IB_QPS_RTR && e->got_req)
		attr.rq_psn = e->qp->qp_num & 0xffffff;
	return ib_modify_qp(e->qp, &attr, mask);
}

static int peer_send_rep(struct peer_end *e)
{
	struct ib_cm_rep_param rep = {
		.qp_num = e->qp->qp_num,
		.starting_psn = e->qp->qp_num & 0xffffff,
		.responder_resources = 1,
		.initiator_depth = 1,
		.flow_control = 1,
		.rnr_retry_count = 7,
		.private_data = e->name,
		.private_data_len = strlen(e->name) + 1,
	};
	int ret;

	ret = peer_modify(e, IB_QPS_RTR);
	if (ret)
		return ret;
	return ib_send_cm_rep(e->cm_id, &rep);
}

static int peer_cm_handler(struct ib_cm_id *cm_id,
			   const struct ib_cm_event *ev)
{
	struct peer_end *e = cm_id->context;
	int ret;

	switch (ev->event) {
	case IB_CM_REQ_RECEIVED:
		WRITE_ONCE(e->in_req, true);
		if (e->slow_req_ms)
			msleep(e->slow_req_ms);
		e->got_req = true;
		memcpy(e->peer_name, (u8 *)ev->private_data + PEER_ID_LEN,
		       PEER_NAME_LEN - 1);
		e->req_on_own_id = ev->param.req_rcvd.listen_id == cm_id;
		if (e->refuse_req) {
			/* non-zero return: ib_cm destroys cm_id after us */
			if (cm_id == e->cm_id)
				e->cm_id = NULL;
			peer_finish(e, -ECANCELED);
			WRITE_ONCE(e->req_refused, true);
			return -ECANCELED;
		}
		if (cm_id != e->cm_id) {
			/* client/server: the listener created a new id */
			e->cm_id = cm_id;
		}
		if (e->hold_req)
			break;
		ret = peer_send_rep(e);
		if (ret)
			peer_finish(e, ret);
		break;
	case IB_CM_MRA_RECEIVED:
		e->got_mra = true;
		break;
	case IB_CM_REP_RECEIVED:
		e->got_rep = true;
		memcpy(e->peer_name, ev->private_data, PEER_NAME_LEN - 1);
		ret = peer_modify(e, IB_QPS_RTR);
		if (!ret)
			ret = peer_modify(e, IB_QPS_RTS);
		if (!ret)
			ret = ib_send_cm_rtu(cm_id, NULL, 0);
		peer_finish(e, ret);
		break;
	case IB_CM_RTU_RECEIVED:
		e->got_rtu = true;
		peer_finish(e, peer_modify(e, IB_QPS_RTS));
		break;
	case IB_CM_REJ_RECEIVED:
		e->got_rej = true;
		e->rej_reason = ev->param.rej_rcvd.reason;
		peer_finish(e, -ECONNREFUSED);
		break;
	case IB_CM_REQ_ERROR:
	case IB_CM_REP_ERROR:
		peer_finish(e, -ETIMEDOUT);
		break;
	case IB_CM_DREQ_RECEIVED:
		ib_send_cm_drep(cm_id, NULL, 0);
		break;
	default:
		break;
	}
	return 0;
}

static void peer_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct peer_wire *w = container_of(wc->wr_cqe, struct peer_wire,
					   send_cqe);

	if (wc->status == IB_WC_SUCCESS)
		w->sends++;
	else
		w->wc_errors++;
}

static void peer_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct peer_wire *w = container_of(wc->wr_cqe, struct peer_wire,
					   recv_cqe);

	if (wc->status == IB_WC_SUCCESS)
		w->recvs++;
	else
		w->wc_errors++;
}

/* Set up @w for @len bytes each way, DMA addresses given, post the RECV. */
static int peer_wire_init(struct peer_wire *w, const char *name,
			  struct ib_qp *qp, struct ib_cq *cq, u32 lkey,
			  u64 send_addr, u64 recv_addr, u32 len)
{
	struct ib_recv_wr wr = {
		.wr_cqe = &w->recv_cqe,
		.sg_list = &w->recv_sge,
		.num_sge = 1,
	};

	w->name = name;
	w->qp = qp;
	w->cq = cq;
	w->send_sge = (struct ib_sge){ .addr = send_addr, .length = len,
				       .lkey = lkey };
	w->recv_sge = (struct ib_sge){ .addr = recv_addr, .length = len,
				       .lkey = lkey };
	w->send_cqe.done = peer_send_done;
	w->recv_cqe.done = peer_recv_done;
	return ib_post_recv(qp, &wr, NULL);
}

/* Post one SEND each way and wait for both ends' completions. */
static void peer_wire_exchange(struct kunit *test, struct peer_wire *a,
			       struct peer_wire *b)
{
	struct peer_wire *ends[2] = { a, b };
	unsigned long deadline = jiffies + PEER_TIMEOUT;
	int i;

	for (i = 0; i < 2; i++) {
		struct ib_send_wr wr = {
			.wr_cqe = &ends[i]->send_cqe,
			.sg_list = &ends[i]->send_sge,
			.num_sge = 1,
			.opcode = IB_WR_SEND,
			.send_flags = IB_SEND_SIGNALED,
		};

		KUNIT_ASSERT_EQ(test, 0, ib_post_send(ends[i]->qp, &wr, NULL));
	}
	while (time_before(jiffies, deadline)) {
		for (i = 0; i < 2; i++)
			ib_process_cq_direct(ends[i]->cq, 8);
		if (a->sends && a->recvs && b->sends && b->recvs)
			break;
		usleep_range(5000, 10000);
	}
	for (i = 0; i < 2; i++) {
		KUNIT_EXPECT_EQ_MSG(test, 1, ends[i]->sends, "%s",
				    ends[i]->name);
		KUNIT_EXPECT_EQ_MSG(test, 1, ends[i]->recvs, "%s",
				    ends[i]->name);
		KUNIT_EXPECT_EQ(test, 0, ends[i]->wc_errors);
	}
}

/* The first RoCE v2 GID with an IPv4 address: our end of the path. */
static const struct ib_gid_attr *peer_find_gid(struct ib_device *dev)
{
	const struct ib_gid_attr *attr;
	int i;

	for (i = 0; i < 64; i++) {
		attr = rdma_get_gid_attr(dev, 1, i);
		if (IS_ERR(attr)) {
			if (PTR_ERR(attr) == -EINVAL)
				break;
			continue;
		}
		if (attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP &&
		    ipv6_addr_v4mapped((struct in6_addr *)attr->gid.raw))
			return attr;
		rdma_put_gid_attr(attr);
	}
	return NULL;
}

static void peer_end_release(void *data)
{
	struct peer_end *e = data;

	if (e->cm_id)
		ib_destroy_cm_id(e->cm_id);
	if (e->qp)
		ib_destroy_qp(e->qp);
	if (e->cq)
		ib_free_cq(e->cq);
	if (e->send_dma)
		ib_dma_unmap_single(e->dev, e->send_dma, sizeof(u64),
				    DMA_TO_DEVICE);
	if (e->recv_dma)
		ib_dma_unmap_single(e->dev, e->recv_dma, sizeof(u64),
				    DMA_FROM_DEVICE);
	kfree(e->send_buf);
	kfree(e->recv_buf);
	if (e->pd)
		ib_dealloc_pd(e->pd);
	if (e->sgid_attr)
		rdma_put_gid_attr(e->sgid_attr);
	ib_device_put(e->dev);
}

/* One end: PD, CQ, RC QP in INIT with a RECV posted, an idle cm_id. */
static struct peer_end *peer_end_create(struct kunit *test, const char *name)
{
	struct ib_qp_init_attr init = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type = IB_QPT_RC,
	};
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IB_ACCESS_LOCAL_WRITE,
	};
	struct net_device *ndev;
	struct ib_device *dev;
	struct peer_end *e;

	dev = ib_device_get_by_name(peer_dev_name, RDMA_DRIVER_UNKNOWN);
	if (!dev)
		kunit_skip(test, "no RDMA device %s", peer_dev_name);

	e = kunit_kzalloc(test, sizeof(*e), GFP_KERNEL);
	if (!e) {
		ib_device_put(dev);
		KUNIT_FAIL_AND_ABORT(test, "out of memory");
	}
	e->test = test;
	e->name = name;
	e->dev = dev;
	init_completion(&e->done);
	e->status = 1;
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, peer_end_release, e));

	e->sgid_attr = peer_find_gid(dev);
	KUNIT_ASSERT_NOT_NULL_MSG(test, e->sgid_attr,
				  "%s has no RoCE v2 IPv4 GID", peer_dev_name);

	/* Loopback: the path leads from our GID to itself. */
	e->path.rec_type = sa_conv_gid_to_pathrec_type(e->sgid_attr->gid_type);
	e->path.sgid = e->sgid_attr->gid;
	e->path.dgid = e->sgid_attr->gid;
	e->path.hop_limit = 64;
	e->path.reversible = 1;
	e->path.pkey = cpu_to_be16(0xffff);
	e->path.mtu_selector = IB_SA_EQ;
	e->path.mtu = IB_MTU_1024;
	e->path.rate_selector = IB_SA_EQ;
	e->path.rate = IB_RATE_10_GBPS;
	e->path.packet_life_time_selector = IB_SA_EQ;
	e->path.packet_life_time = 14;
	e->path.roce.route_resolved = true;
	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(e->sgid_attr);
	if (!IS_ERR(ndev))
		memcpy(sa_path_get_dmac(&e->path), ndev->dev_addr, ETH_ALEN);
	rcu_read_unlock();
	KUNIT_ASSERT_FALSE(test, IS_ERR(ndev));

	e->pd = ib_alloc_pd(dev, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(e->pd));
	e->cq = ib_alloc_cq(dev, NULL, 16, 0, IB_POLL_DIRECT);
	if (IS_ERR(e->cq)) {
		e->cq = NULL;
		KUNIT_FAIL_AND_ABORT(test, "ib_alloc_cq failed");
	}
	init.send_cq = e->cq;
	init.recv_cq = e->cq;
	e->qp = ib_create_qp(e->pd, &init);
	if (IS_ERR(e->qp)) {
		e->qp = NULL;
		KUNIT_FAIL_AND_ABORT(test, "ib_create_qp failed");
	}
	KUNIT_ASSERT_EQ(test, 0, ib_modify_qp(e->qp, &attr,
					      IB_QP_STATE | IB_QP_PKEY_INDEX |
					      IB_QP_PORT | IB_QP_ACCESS_FLAGS));

	e->send_buf = kzalloc(sizeof(u64), GFP_KERNEL);
	e->recv_buf = kzalloc(sizeof(u64), GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, e->send_buf && e->recv_buf);
	*e->send_buf = e->qp->qp_num;
	e->send_dma = ib_dma_map_single(dev, e->send_buf, sizeof(u64),
					DMA_TO_DEVICE);
	e->recv_dma = ib_dma_map_single(dev, e->recv_buf, sizeof(u64),
					DMA_FROM_DEVICE);
	KUNIT_ASSERT_EQ(test, 0,
			peer_wire_init(&e->wire, name, e->qp, e->cq,
				       e->pd->local_dma_lkey, e->send_dma,
				       e->recv_dma, sizeof(u64)));

	e->cm_id = ib_create_cm_id(dev, peer_cm_handler, e);
	if (IS_ERR(e->cm_id)) {
		e->cm_id = NULL;
		KUNIT_FAIL_AND_ABORT(test, "ib_create_cm_id failed");
	}
	return e;
}

static struct ib_cm_req_param peer_req_param(struct peer_end *e, u64 sid)
{
	return (struct ib_cm_req_param){
		.primary_path = &e->path,
		.ppath_sgid_attr = e->sgid_attr,
		.service_id = cpu_to_be64(sid),
		.qp_num = e->qp->qp_num,
		.qp_type = IB_QPT_RC,
		.starting_psn = e->qp->qp_num & 0xffffff,
		.responder_resources = 1,
		.initiator_depth = 1,
		.remote_cm_response_timeout = 16,
		.local_cm_response_timeout = 16,
		.flow_control = 1,
		.retry_count = 7,
		.rnr_retry_count = 7,
		.max_cm_retries = 3,
	};
}

/* A REQ's budget, timeout x (retries + 1), as ib_send_cm_req() computes it */
static unsigned int peer_req_budget_ms(const struct ib_cm_req_param *req)
{
	return (2 * (1U << (req->primary_path->packet_life_time - 8)) +
		(1U << (req->remote_cm_response_timeout - 8))) *
	       (req->max_cm_retries + 1);
}

static int peer_send_req(struct peer_end *e, u64 sid)
{
	struct ib_cm_req_param req = peer_req_param(e, sid);

	if (e->no_retries)
		req.max_cm_retries = 0;
	if (e->response_timeout)
		req.remote_cm_response_timeout = e->response_timeout;
	if (e->has_match) {
		req.private_data = e->req_data;
		req.private_data_len = sizeof(e->req_data);
	}
	return ib_send_cm_peer_req(e->cm_id, &req,
				   e->has_match ? e->match : NULL);
}

static void peer_end_wait(struct peer_end *e)
{
	KUNIT_ASSERT_GT_MSG(e->test,
			    wait_for_completion_timeout(&e->done, PEER_TIMEOUT),
			    0L, "%s: no outcome in %d s", e->name,
			    PEER_TIMEOUT / HZ);
}

/* A SEND each way; each end sends its QPN. */
static void peer_exchange(struct kunit *test, struct peer_end *a,
			  struct peer_end *b)
{
	peer_wire_exchange(test, &a->wire, &b->wire);
	/* each end received the other's QPN: connected to each other */
	KUNIT_EXPECT_EQ(test, (u64)b->qp->qp_num, *a->recv_buf);
	KUNIT_EXPECT_EQ(test, (u64)a->qp->qp_num, *b->recv_buf);
}

static struct peer_end *peer_passive_of(struct peer_end *a, struct peer_end *b)
{
	return a->got_req ? a : b;
}

/* Exactly one connection: one end passive on its own id, one active. */
static void peer_expect_one_connection(struct kunit *test, struct peer_end *a,
				       struct peer_end *b)
{
	struct peer_end *passive = peer_passive_of(a, b);
	struct peer_end *active = passive == a ? b : a;

	KUNIT_EXPECT_EQ(test, 0, a->status);
	KUNIT_EXPECT_EQ(test, 0, b->status);
	KUNIT_EXPECT_NE_MSG(test, a->got_req, b->got_req,
			    "exactly one end must turn passive");
	KUNIT_EXPECT_TRUE(test, passive->req_on_own_id);
	KUNIT_EXPECT_TRUE(test, passive->got_rtu);
	KUNIT_EXPECT_FALSE(test, passive->got_rep);
	KUNIT_EXPECT_TRUE(test, active->got_rep);
	KUNIT_EXPECT_FALSE(test, active->got_req);
	KUNIT_EXPECT_EQ(test, IB_CM_ESTABLISHED, a->cm_id->state);
	KUNIT_EXPECT_EQ(test, IB_CM_ESTABLISHED, b->cm_id->state);
	KUNIT_EXPECT_TRUE(test, a->cm_id->local_id == b->cm_id->remote_id);
	KUNIT_EXPECT_TRUE(test, b->cm_id->local_id == a->cm_id->remote_id);
	kunit_info(test, "%s passive (QPN %#x), %s active (QPN %#x)\n",
		   passive->name, passive->qp->qp_num, active->name,
		   active->qp->qp_num);
}

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

/* Wait for the CM to hold one more REQ than @held0 */
static void peer_wait_held(struct kunit *test, unsigned long held0)
{
	unsigned long deadline = jiffies + PEER_TIMEOUT;

	while (peer_counter(test, "cm_peer/held") == held0 &&
	       time_before(jiffies, deadline))
		msleep(20);
	KUNIT_ASSERT_EQ(test, held0 + 1, peer_counter(test, "cm_peer/held"));
}

/* b binds @sid as peer, a sends its REQ, b's CM holds it */
static void peer_hold_at(struct kunit *test, struct peer_end *a,
			 struct peer_end *b, u64 sid)
{
	unsigned long held0 = peer_counter(test, "cm_peer/held");

	KUNIT_ASSERT_EQ(test, 0, ib_cm_peer_bind(b->cm_id, cpu_to_be64(sid), 0));
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(a, sid));
	peer_wait_held(test, held0);
}

/* a's REQ is held at b: b connects, claims it and turns passive */
static void peer_claim_held(struct kunit *test, struct peer_end *a,
			    struct peer_end *b, u64 sid)
{
	KUNIT_EXPECT_EQ(test, 1, a->status);	/* still connecting */
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(b, sid));
	peer_end_wait(a);
	peer_end_wait(b);
	peer_expect_one_connection(test, a, b);
	KUNIT_EXPECT_TRUE(test, b->got_req);	/* the late end is passive */
	peer_exchange(test, a, b);
}

/* Wait, while @e is connecting, for an MRA to its REQ. */
static void peer_wait_mra(struct peer_end *e)
{
	unsigned long deadline = jiffies + PEER_TIMEOUT;

	while (!e->got_mra && e->status == 1 && time_before(jiffies, deadline))
		msleep(20);
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
 * @e binds @sid, sends its REQ to @peer_sid and takes only the REQ that
 * starts with @peer_sid: the identity the ranks of an MPI job have (one
 * port each, a connection to every other rank).
 */
static void peer_identity(struct kunit *test, struct peer_end *e, u64 sid,
			  u64 peer_sid, const char *name)
{
	__be64 own = cpu_to_be64(sid), other = cpu_to_be64(peer_sid);

	e->name = name;
	memcpy(e->req_data, &own, PEER_ID_LEN);
	strscpy(e->req_data + PEER_ID_LEN, name, PEER_NAME_LEN);
	memcpy(e->match, &other, PEER_ID_LEN);
	e->has_match = true;
	KUNIT_ASSERT_EQ(test, 0, ib_cm_peer_bind(e->cm_id, own, PEER_ID_LEN));
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

/* Listens and peer binds of one service ID refuse each other. */
static void peer_ib_conflicts(struct kunit *test)
{
	struct peer_end *a = peer_end_create(test, "a");
	struct peer_end *b = peer_end_create(test, "b");
	struct ib_cm_id *listen;

	KUNIT_ASSERT_EQ(test, 0, ib_cm_peer_bind(a->cm_id,
						 cpu_to_be64(PEER_SID + 2), 0));
	KUNIT_EXPECT_EQ(test, 0, ib_cm_peer_bind(a->cm_id,
						 cpu_to_be64(PEER_SID + 2), 0));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			ib_cm_peer_bind(a->cm_id, cpu_to_be64(PEER_SID + 3), 0));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			ib_cm_peer_bind(a->cm_id, cpu_to_be64(PEER_SID + 2), 4));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			ib_cm_peer_bind(b->cm_id, cpu_to_be64(PEER_SID + 2), 4));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			ib_cm_peer_bind(b->cm_id, cpu_to_be64(PEER_SID + 3),
					CM_PEER_TEST_MATCH_MAX + 1));
	KUNIT_EXPECT_EQ(test, -EBUSY,
			ib_cm_listen(b->cm_id, cpu_to_be64(PEER_SID + 2)));
	listen = ib_cm_insert_listen(b->dev, peer_cm_handler,
				     cpu_to_be64(PEER_SID + 2));
	KUNIT_EXPECT_TRUE(test, IS_ERR(listen));
	if (!IS_ERR(listen))
		ib_destroy_cm_id(listen);

	KUNIT_ASSERT_EQ(test, 0, ib_cm_listen(b->cm_id,
					      cpu_to_be64(PEER_SID + 4)));
	ib_destroy_cm_id(a->cm_id);
	a->cm_id = ib_create_cm_id(a->dev, peer_cm_handler, a);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a->cm_id));
	KUNIT_EXPECT_EQ(test, -EADDRINUSE,
			ib_cm_peer_bind(a->cm_id, cpu_to_be64(PEER_SID + 4), 0));
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
 * On demand: a peer service ID with a listener (ib_cm_insert_peer_listen()).
 * The listener's REQs go to peer_listen_end, an end whose own idle cm_id
 * was dropped (cases run one at a time).
 */
static struct peer_end *peer_listen_end;

static int peer_listen_handler(struct ib_cm_id *cm_id,
			       const struct ib_cm_event *ev)
{
	if (ev->event == IB_CM_REQ_RECEIVED) {
		if (!peer_listen_end)
			return -ECONNREFUSED;	/* the case is over */
		cm_id->context = peer_listen_end;
	}
	return peer_cm_handler(cm_id, ev);
}

static void peer_unlisten(void *listen)
{
	ib_destroy_cm_id(listen);
	peer_listen_end = NULL;
}

/* @al listens on @sid as peer: ends with an idle cm_id cannot take REQs */
static struct ib_cm_id *peer_listen_on(struct kunit *test,
				       struct peer_end *al, u64 sid)
{
	struct ib_cm_id *listen;

	ib_destroy_cm_id(al->cm_id);
	al->cm_id = NULL;
	peer_listen_end = al;
	listen = ib_cm_insert_peer_listen(al->dev, peer_listen_handler,
					  cpu_to_be64(sid), PEER_ID_LEN);
	KUNIT_ASSERT_FALSE(test, IS_ERR(listen));
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, peer_unlisten, listen));
	return listen;
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
	other = ib_cm_insert_peer_listen(a->dev, peer_cm_handler,
					 cpu_to_be64(port), PEER_ID_LEN);
	KUNIT_EXPECT_EQ(test, -EBUSY, PTR_ERR_OR_ZERO(other));
	other = ib_cm_insert_listen(a->dev, peer_listen_handler,
				    cpu_to_be64(port));
	KUNIT_EXPECT_TRUE(test, IS_ERR(other));
	if (!IS_ERR(other))
		ib_destroy_cm_id(other);

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
 * fills it, and the REQs of a and b, connecting to each other, wait.
 */
static void peer_window_fill(struct kunit *test, struct peer_end *x,
			     struct peer_end *y, struct peer_end *a,
			     struct peer_end *b, u64 sid)
{
	unsigned long deferred = peer_counter(test, "cm_peer/deferred");

	peer_set_window(test, x->dev, 1);
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

	/* x's round trip (2 x 4.3 s) outlasts the test: only REPs open it */
	x->path.packet_life_time = 20;
	peer_window_fill(test, x, y, a, b, PEER_SID + 0x300);
	msleep(300);
	KUNIT_EXPECT_EQ(test, 1, a->status);
	KUNIT_EXPECT_EQ(test, 1, b->status);
	peer_claim_held(test, x, y, PEER_SID + 0x300);
	peer_window_opened(test, a, b);
	/* x's REQ and a's: b's was never sent */
	KUNIT_EXPECT_EQ(test, reqs + 2, peer_reqs_sent(test));
}

/*
 * x's REQ is not answered: the window opens after its round trip (134 ms),
 * long before its first timeout (4.4 s) would bring an MRA.
 */
static void peer_ib_window_round_trip(struct kunit *test)
{
	struct peer_end *x = peer_end_create(test, "x");
	struct peer_end *y = peer_end_create(test, "y");
	struct peer_end *a = peer_end_create(test, "a");
	struct peer_end *b = peer_end_create(test, "b");

	x->response_timeout = 20;
	peer_window_fill(test, x, y, a, b, PEER_SID + 0x310);
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

	x->path.packet_life_time = 20;
	peer_window_fill(test, x, y, a, b, PEER_SID + 0x320);
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

static struct kunit_case cm_peer_ib_test_cases[] = {
	KUNIT_CASE_SLOW(peer_ib_collision),
	KUNIT_CASE_SLOW(peer_ib_early_req),
	KUNIT_CASE_SLOW(peer_ib_held_resent),
	KUNIT_CASE_SLOW(peer_ib_held_no_retries),
	KUNIT_CASE_SLOW(peer_ib_shared_sid),
	KUNIT_CASE_SLOW(peer_ib_late_bind),
	KUNIT_CASE_SLOW(peer_ib_never_bound),
	KUNIT_CASE_SLOW(peer_ib_conflicts),
	KUNIT_CASE_SLOW(peer_ib_destroy_during_collision),
	KUNIT_CASE_SLOW(peer_ib_client_server),
	KUNIT_CASE_SLOW(peer_ib_listen_takes),
	KUNIT_CASE_SLOW(peer_ib_listen_collision),
	KUNIT_CASE_SLOW(peer_ib_listen_pending),
	KUNIT_CASE_SLOW(peer_ib_listen_gone),
	KUNIT_CASE_SLOW(peer_ib_listen_destroy_during_req),
	KUNIT_CASE_SLOW(peer_teardown_before_match),
	KUNIT_CASE_SLOW(peer_teardown_between_match_and_rep),
	KUNIT_CASE_SLOW(peer_teardown_holder_during_hold),
	KUNIT_CASE_SLOW(peer_teardown_held_during_hold),
	KUNIT_CASE_SLOW(peer_ib_window_answered),
	KUNIT_CASE_SLOW(peer_ib_window_round_trip),
	KUNIT_CASE_SLOW(peer_ib_window_destroy),
	{}
};

/*
 * KUnit keeps a case that skipped marked as skipped and does not run it
 * again; the boot-time run skips every case (no device yet), so clear the
 * marks for the run through debugfs.
 */
static int cm_peer_ib_suite_init(struct kunit_suite *suite)
{
	struct kunit_case *c;

	for (c = suite->test_cases; c->run_case; c++)
		c->status = KUNIT_SUCCESS;
	return 0;
}

static struct kunit_suite cm_peer_ib_test_suite = {
	.name = "cm_peer_ib",
	.suite_init = cm_peer_ib_suite_init,
	.test_cases = cm_peer_ib_test_cases,
};

kunit_test_suite(cm_peer_ib_test_suite);

#ifdef CONFIG_INFINIBAND_CM_PEER_FAULT_INJECT
static void peer_fault_clear_action(void *unused)
{
	cm_peer_fault_clear();
}
#endif

#if IS_ENABLED(CONFIG_INFINIBAND_ADDR_TRANS)
/*
 * Suite cm_peer_rdma: the rdma_cm kernel API with kernel QPs, as an
 * in-kernel ULP uses it (and once without, as ucma uses it for user
 * space).  Two rdma_cm ids on the device's IPv4 address,
 * two ports, connect to each other with rdma_set_peer_to_peer(): the
 * passive end's REP is sent by rdma_cm from its CM handler, both ends get
 * RDMA_CM_EVENT_ESTABLISHED with the other's private data, and a SEND
 * goes each way.
 */
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
	struct ib_qp *uqp;		/* a QP not on @id, as user space has */
};

static int peer_rdma_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct peer_rdma_end *e = id->context;

	if ((ev->event == RDMA_CM_EVENT_ESTABLISHED ||
	     ev->event == RDMA_CM_EVENT_CONNECT_REQUEST ||
	     ev->event == RDMA_CM_EVENT_CONNECT_RESPONSE) &&
	    ev->param.conn.private_data)
		memcpy(e->peer_name, ev->param.conn.private_data,
		       PEER_NAME_LEN - 1);
	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		e->id = id;	/* the listener's is in listen_id */
	if (ev->event == RDMA_CM_EVENT_ESTABLISHED)
		e->ece_got = ev->ece;
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
	if (e->listen_id)
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
		.responder_resources = 1,
		.initiator_depth = 1,
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

#ifdef CONFIG_INFINIBAND_CM_PEER_FAULT_INJECT
/*
 * A passive end in user space has no QP on its id: CONNECT_RESPONSE, then
 * librdmacm's rdma_accept() without parameters sends the REP and reports
 * ESTABLISHED at once.  Its RTU lost, it disconnects: the other end,
 * established, must see DISCONNECTED (a DREQ), not nothing and then the
 * REJ of the destroy.
 */
static void peer_rdma_user_passive_disconnect(struct kunit *test)
{
	struct ib_qp_init_attr init;
	struct peer_rdma_end *a, *b;
	unsigned long held, now;
	unsigned int hits, got;
	int ret;

	cm_peer_fault_clear();
	ret = kunit_add_action_or_reset(test, peer_fault_clear_action, NULL);
	KUNIT_ASSERT_EQ(test, 0, ret);
	a = peer_rdma_end_create(test, "ka", PEER_RDMA_PORT + 14,
				 PEER_RDMA_PORT + 15, false);
	b = peer_rdma_end_create(test, "kb", PEER_RDMA_PORT + 15,
				 PEER_RDMA_PORT + 14, false);
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
	hits = cm_peer_fault_hits();
	KUNIT_ASSERT_EQ(test, 0, cm_peer_fault_add(CM_PEER_FAULT_DROP,
						   CM_RTU_ATTR_ID, 0, 1, 0));
	KUNIT_ASSERT_EQ(test, 0, peer_rdma_connect(b, false));
	peer_rdma_expect(b, RDMA_CM_EVENT_CONNECT_RESPONSE);
	KUNIT_EXPECT_STREQ(test, b->peer_name, a->name);
	rdma_lock_handler(b->id);
	ret = rdma_accept(b->id, NULL);
	rdma_unlock_handler(b->id);
	KUNIT_ASSERT_EQ(test, 0, ret);
	peer_rdma_expect(a, RDMA_CM_EVENT_ESTABLISHED);
	read_poll_timeout(cm_peer_fault_hits, got, got != hits, 20000,
			  jiffies_to_usecs(PEER_TIMEOUT), false);
	KUNIT_ASSERT_EQ_MSG(test, hits + 1, got, "the RTU was not lost");

	KUNIT_ASSERT_EQ(test, 0, rdma_disconnect(b->id));
	peer_rdma_expect(a, RDMA_CM_EVENT_DISCONNECTED);
	KUNIT_ASSERT_EQ(test, 0, rdma_disconnect(a->id));	/* the DREP */
	peer_rdma_expect(b, RDMA_CM_EVENT_DISCONNECTED);
	KUNIT_EXPECT_EQ(test, 0, b->status);
}
#endif

static struct kunit_case cm_peer_rdma_test_cases[] = {
	KUNIT_CASE_SLOW(peer_rdma_collision),
	KUNIT_CASE_SLOW(peer_rdma_late),
	KUNIT_CASE_SLOW(peer_rdma_ondemand),
	KUNIT_CASE_SLOW(peer_rdma_ece),
	KUNIT_CASE_SLOW(peer_rdma_iwarp),
#ifdef CONFIG_INFINIBAND_CM_PEER_FAULT_INJECT
	KUNIT_CASE_SLOW(peer_rdma_user_passive_disconnect),
#endif
	{}
};

static struct kunit_suite cm_peer_rdma_test_suite = {
	.name = "cm_peer_rdma",
	.suite_init = cm_peer_ib_suite_init,
	.test_cases = cm_peer_rdma_test_cases,
};

kunit_test_suite(cm_peer_rdma_test_suite);
#endif /* CONFIG_INFINIBAND_ADDR_TRANS */

/*
 * Suite cm_peer_fuzz: REQ MADs from a MAD agent of our own, sent to the CM
 * of the same port.  A flood of valid peer REQs nobody claims must stay
 * within the rendezvous bound; then seeded random mutations of REQ fields
 * (ServiceID, GIDs, QPN, communication IDs, transport type, timeouts, MTU,
 * alternate path, private data, header fields, random bytes) must not
 * crash, leak or wedge the CM: a collision afterwards still connects.
 */
static unsigned int peer_fuzz_cases = 2000;
module_param_named(fuzz_cases, peer_fuzz_cases, uint, 0644);
MODULE_PARM_DESC(fuzz_cases, "REQs the cm_peer_fuzz suite sends (default 2000)");

static unsigned int peer_fuzz_seed = 1;
module_param_named(fuzz_seed, peer_fuzz_seed, uint, 0644);
MODULE_PARM_DESC(fuzz_seed, "PRNG seed of the cm_peer_fuzz suite, 0 for a random one");

#define PEER_FUZZ_SID	0x0000000100f2f300ULL
#define PEER_FUZZ_WINDOW	16	/* MADs in flight */

struct peer_fuzz {
	struct kunit *test;
	struct peer_end *end;	/* path, GID; its cm_id is the idle peer */
	struct ib_mad_agent *agent;
	struct ib_ah *ah;
	atomic_t in_flight;
	wait_queue_head_t wq;
	unsigned int sent, send_errors;
	struct rnd_state rnd;
};

static void peer_fuzz_send_done(struct ib_mad_agent *agent,
				struct ib_mad_send_wc *wc)
{
	struct peer_fuzz *f = agent->context;

	if (wc->status != IB_WC_SUCCESS)
		f->send_errors++;
	ib_free_send_mad(wc->send_buf);
	atomic_dec(&f->in_flight);
	wake_up(&f->wq);
}

static void peer_fuzz_release(void *data)
{
	struct peer_fuzz *f = data;

	wait_event_timeout(f->wq, !atomic_read(&f->in_flight), 10 * HZ);
	if (f->agent)
		ib_unregister_mad_agent(f->agent);
	if (f->ah)
		rdma_destroy_ah(f->ah, RDMA_DESTROY_AH_SLEEPABLE);
}

/*
 * The fuzz and flood cases bound the test device's held REQs as the
 * defaults did before they were derived (a hook of cm.c for KUnit): the
 * floods stay short and their REQs, which carry no timeouts, stay held.
 */
#define PEER_TEST_MAX_HELD	64
#define PEER_TEST_AGE_MS	5000

static void peer_limits_restore(void *dev)
{
	cm_peer_test_limits(dev, 0, 0, 0, 0);
}

static void peer_set_limits(struct kunit *test, struct ib_device *dev,
			    unsigned int max_held, unsigned int max_age_ms)
{
	KUNIT_ASSERT_EQ(test, 0, cm_peer_test_limits(dev, max_held, max_held,
						     max_age_ms, 0));
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   peer_limits_restore, dev));
}

/* The device's window of peer REQs out: @window instead of 64 */
static void peer_set_window(struct kunit *test, struct ib_device *dev,
			    unsigned int window)
{
	KUNIT_ASSERT_EQ(test, 0, cm_peer_test_limits(dev, 0, 0, 0, window));
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   peer_limits_restore, dev));
}

static struct peer_fuzz *peer_fuzz_create(struct kunit *test)
{
	struct rdma_ah_attr attr;
	struct peer_fuzz *f;
	struct ib_ah *ah;
	int ret;

	f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f);
	f->test = test;
	f->end = peer_end_create(test, "fuzz");
	peer_set_limits(test, f->end->dev, PEER_TEST_MAX_HELD,
			PEER_TEST_AGE_MS);
	init_waitqueue_head(&f->wq);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, peer_fuzz_release, f));
	f->agent = ib_register_mad_agent(f->end->dev, 1, IB_QPT_GSI, NULL, 0,
					 peer_fuzz_send_done, NULL, f, 0);
	if (IS_ERR(f->agent)) {
		f->agent = NULL;
		KUNIT_FAIL_AND_ABORT(test, "ib_register_mad_agent failed");
	}
	ret = ib_init_ah_attr_from_path(f->end->dev, 1, &f->end->path, &attr,
					f->end->sgid_attr);
	KUNIT_ASSERT_EQ(test, 0, ret);
	ah = rdma_create_ah(f->agent->qp->pd, &attr, RDMA_CREATE_AH_SLEEPABLE);
	rdma_destroy_ah_attr(&attr);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ah));
	f->ah = ah;
	return f;
}

/* A valid REQ from a made-up remote port for @sid, to our port. */
static void peer_fuzz_base_req(struct peer_fuzz *f, struct cm_req_msg *req,
			       u64 sid)
{
	struct ib_mad_hdr *hdr = (struct ib_mad_hdr *)req;
	union ib_gid remote = f->end->sgid_attr->gid;

	memset(req, 0, sizeof(*req));
	hdr->base_version = IB_MGMT_BASE_VERSION;
	hdr->mgmt_class = IB_MGMT_CLASS_CM;
	hdr->class_version = IB_CM_CLASS_VERSION;
	hdr->method = IB_MGMT_METHOD_SEND;
	hdr->attr_id = CM_REQ_ATTR_ID;
	hdr->tid = cpu_to_be64(prandom_u32_state(&f->rnd));
	/* a remote port of its own: last GID bytes from the PRNG */
	put_unaligned_be32(prandom_u32_state(&f->rnd), &remote.raw[12]);

	IBA_SET(CM_REQ_LOCAL_COMM_ID, req, prandom_u32_state(&f->rnd) | 1);
	IBA_SET(CM_REQ_SERVICE_ID, req, sid);
	IBA_SET(CM_REQ_LOCAL_CA_GUID, req, prandom_u32_state(&f->rnd));
	IBA_SET(CM_REQ_LOCAL_QPN, req, prandom_u32_state(&f->rnd) & 0xffffff);
	IBA_SET(CM_REQ_RESPONDER_RESOURCES, req, 1);
	IBA_SET(CM_REQ_INITIATOR_DEPTH, req, 1);
	IBA_SET(CM_REQ_REMOTE_CM_RESPONSE_TIMEOUT, req, 16);
	IBA_SET(CM_REQ_TRANSPORT_SERVICE_TYPE, req, 0);	/* RC */
	IBA_SET(CM_REQ_END_TO_END_FLOW_CONTROL, req, 1);
	IBA_SET(CM_REQ_STARTING_PSN, req, prandom_u32_state(&f->rnd) & 0xffffff);
	IBA_SET(CM_REQ_LOCAL_CM_RESPONSE_TIMEOUT, req, 16);
	IBA_SET(CM_REQ_RETRY_COUNT, req, 7);
	IBA_SET(CM_REQ_PARTITION_KEY, req, 0xffff);
	IBA_SET(CM_REQ_PATH_PACKET_PAYLOAD_MTU, req, IB_MTU_1024);
	IBA_SET(CM_REQ_RNR_RETRY_COUNT, req, 7);
	IBA_SET(CM_REQ_MAX_CM_RETRIES, req, 3);
	IBA_SET(CM_REQ_PRIMARY_LOCAL_PORT_LID, req, 0xffff);
	IBA_SET(CM_REQ_PRIMARY_REMOTE_PORT_LID, req, 0xffff);
	*IBA_GET_MEM_PTR(CM_REQ_PRIMARY_LOCAL_PORT_GID, req) = remote;
	*IBA_GET_MEM_PTR(CM_REQ_PRIMARY_REMOTE_PORT_GID, req) =
		f->end->sgid_attr->gid;
	IBA_SET(CM_REQ_PRIMARY_HOP_LIMIT, req, 64);
	IBA_SET(CM_REQ_PRIMARY_SUBNET_LOCAL, req, 1);
	IBA_SET(CM_REQ_PRIMARY_LOCAL_ACK_TIMEOUT, req, 14);
	IBA_SET(CM_REQ_PRIMARY_PACKET_RATE, req, IB_RATE_10_GBPS);
}

static u64 peer_fuzz_u64(struct peer_fuzz *f)
{
	return (u64)prandom_u32_state(&f->rnd) << 32 |
	       prandom_u32_state(&f->rnd);
}

/* Mutate one field of @req; returns what it changed, for the log. */
static const char *peer_fuzz_mutate(struct peer_fuzz *f, struct cm_req_msg *req)
{
	struct ib_mad_hdr *hdr = (struct ib_mad_hdr *)req;
	u8 *bytes = (u8 *)req;
	u32 r = prandom_u32_state(&f->rnd);
	static const u64 sids[] = { 0, ~0ULL, PEER_FUZZ_SID + 1,
				    0x0000000100000000ULL, 0x0200000000000000ULL };

	switch (r % 14) {
	case 0:
		IBA_SET(CM_REQ_SERVICE_ID, req,
			r & 0x100 ? sids[(r >> 9) % ARRAY_SIZE(sids)] :
			peer_fuzz_u64(f));
		return "sid";
	case 1:
		get_random_bytes(IBA_GET_MEM_PTR(CM_REQ_PRIMARY_LOCAL_PORT_GID,
						 req), sizeof(union ib_gid));
		return "local gid";
	case 2:
		if (r & 0x100)
			memset(IBA_GET_MEM_PTR(CM_REQ_PRIMARY_REMOTE_PORT_GID, req),
			       0, sizeof(union ib_gid));
		else
			get_random_bytes(IBA_GET_MEM_PTR(CM_REQ_PRIMARY_REMOTE_PORT_GID,
							 req), sizeof(union ib_gid));
		return "remote gid";
	case 3:
		IBA_SET(CM_REQ_LOCAL_QPN, req,
			r & 0x100 ? (r >> 9) % 3 : prandom_u32_state(&f->rnd));
		return "qpn";
	case 4:
		IBA_SET(CM_REQ_LOCAL_COMM_ID, req, r & 0x100 ? 0 : r >> 9);
		return "comm id";
	case 5:
		IBA_SET(CM_REQ_TRANSPORT_SERVICE_TYPE, req, r >> 8);
		IBA_SET(CM_REQ_EXTENDED_TRANSPORT_TYPE, req, r >> 12);
		return "transport";
	case 6:
		IBA_SET(CM_REQ_REMOTE_CM_RESPONSE_TIMEOUT, req, r >> 8);
		IBA_SET(CM_REQ_LOCAL_CM_RESPONSE_TIMEOUT, req, r >> 16);
		IBA_SET(CM_REQ_MAX_CM_RETRIES, req, r >> 24);
		return "timeouts";
	case 7:
		IBA_SET(CM_REQ_PATH_PACKET_PAYLOAD_MTU, req, r >> 8);
		IBA_SET(CM_REQ_PRIMARY_PACKET_RATE, req, r >> 12);
		IBA_SET(CM_REQ_PRIMARY_HOP_LIMIT, req, r >> 20);
		return "mtu/rate/hops";
	case 8:
		/* an alternate path: the CM then resolves two paths */
		IBA_SET(CM_REQ_ALTERNATE_LOCAL_PORT_LID, req, r >> 8);
		get_random_bytes(IBA_GET_MEM_PTR(CM_REQ_ALTERNATE_LOCAL_PORT_GID,
						 req), sizeof(union ib_gid));
		IBA_SET(CM_REQ_ALTERNATE_PACKET_RATE, req, r >> 24);
		return "alternate path";
	case 9:
		IBA_SET(CM_REQ_RESPONDER_RESOURCES, req, r >> 8);
		IBA_SET(CM_REQ_INITIATOR_DEPTH, req, r >> 16);
		IBA_SET(CM_REQ_SRQ, req, r >> 24);
		IBA_SET(CM_REQ_RDC_EXISTS, req, r >> 25);
		return "resources";
	case 10:
		get_random_bytes(IBA_GET_MEM_PTR(CM_REQ_PRIVATE_DATA, req),
				 (r >> 8) % IB_CM_REQ_PRIVATE_DATA_SIZE + 1);
		return "private data";
	case 11:
		hdr->class_version = r >> 8;
		hdr->attr_mod = cpu_to_be32(r);
		return "header";
	case 12:
		hdr->status = cpu_to_be16(r >> 8);
		hdr->method = r & 0x100 ? IB_MGMT_METHOD_GET : hdr->method;
		return "status/method";
	default:
		bytes[sizeof(struct ib_mad_hdr) + (r >> 8) %
		      (sizeof(*req) - sizeof(struct ib_mad_hdr))] ^= r >> 24 | 1;
		return "byte";
	}
}

static int peer_fuzz_send(struct peer_fuzz *f, const struct cm_req_msg *req)
{
	struct ib_mad_send_buf *msg;
	int ret;

	wait_event_timeout(f->wq,
			   atomic_read(&f->in_flight) < PEER_FUZZ_WINDOW, HZ);
	msg = ib_create_send_mad(f->agent, 1, 0, 0, IB_MGMT_MAD_HDR,
				 IB_MGMT_MAD_DATA, GFP_KERNEL,
				 IB_MGMT_BASE_VERSION);
	if (IS_ERR(msg))
		return PTR_ERR(msg);
	memcpy(msg->mad, req, sizeof(*req));
	msg->ah = f->ah;
	atomic_inc(&f->in_flight);
	ret = ib_post_send_mad(msg, NULL);
	if (ret) {
		atomic_dec(&f->in_flight);
		ib_free_send_mad(msg);
		return ret;
	}
	f->sent++;
	return 0;
}

static void peer_fuzz_drain(struct peer_fuzz *f)
{
	long left = wait_event_timeout(f->wq, !atomic_read(&f->in_flight),
				       10 * HZ);

	KUNIT_EXPECT_GT(f->test, left, 0L);
	msleep(500);	/* let the CM's work queue catch up */
}

/* An unsigned number from sysfs (a counter). */
static unsigned long peer_read_ulong(struct kunit *test, const char *fmt,
				     const char *arg)
{
	char path[128], buf[32] = {};
	unsigned long val = 0;
	struct file *file;
	loff_t pos = 0;
	ssize_t n;

	snprintf(path, sizeof(path), fmt, arg);
	file = filp_open(path, O_RDONLY, 0);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(file), "cannot open %s", path);
	n = kernel_read(file, buf, sizeof(buf) - 1, &pos);
	fput(file);
	KUNIT_ASSERT_GT_MSG(test, n, 0L, "cannot read %s", path);
	KUNIT_ASSERT_EQ(test, 0, kstrtoul(strim(buf), 10, &val));
	return val;
}

static unsigned long peer_counter(struct kunit *test, const char *name)
{
	char rel[64];

	snprintf(rel, sizeof(rel), "%s/ports/1/%s", peer_dev_name, name);
	return peer_read_ulong(test, "/sys/class/infiniband/%s", rel);
}

/* REQs in the device's queue of held REQs now (from the counters) */
static unsigned long peer_rdv_occupancy(struct kunit *test)
{
	return peer_counter(test, "cm_peer/held") -
	       peer_counter(test, "cm_peer/claimed") -
	       peer_counter(test, "cm_peer/expired") -
	       peer_counter(test, "cm_peer/withdrawn");
}

/*
 * Wait, at most until everything held now has expired, for fewer than
 * @limit REQs in the queue; returns how many there are.
 */
static unsigned long peer_rdv_wait_below(struct kunit *test,
					 unsigned long limit)
{
	unsigned long deadline = jiffies +
				 msecs_to_jiffies(PEER_TEST_AGE_MS + 2000);

	while (time_before(jiffies, deadline) &&
	       peer_rdv_occupancy(test) >= limit)
		msleep(100);
	return peer_rdv_occupancy(test);
}

static long peer_slab_bytes(void)
{
	return global_node_page_state_pages(NR_SLAB_UNRECLAIMABLE_B) *
	       PAGE_SIZE;
}

/* Wait until the CM has answered @n more REQs than @base (held or not). */
static void peer_fuzz_settle(struct peer_fuzz *f, unsigned long base,
			     unsigned long n)
{
	unsigned long deadline = jiffies + 10 * HZ;

	while (time_before(jiffies, deadline) &&
	       peer_counter(f->test, "cm_peer/held") +
	       peer_counter(f->test, "cm_peer/refused") < base + n)
		msleep(50);
}

/*
 * Wait until the CM has handled every REQ sent so far: its work queue
 * handles MADs one at a time, and thousands of REQs take it many seconds
 * under KASAN, during which any other REQ waits behind them.  Every REQ
 * handled ends held, refused, rejected or counted as a duplicate, so the
 * CM is through once none of those counters moved for a second.
 */
static unsigned long peer_fuzz_progress(struct kunit *test)
{
	return peer_counter(test, "cm_peer/held") +
	       peer_counter(test, "cm_peer/refused") +
	       peer_counter(test, "cm_tx_msgs/rej") +
	       peer_counter(test, "cm_rx_duplicates/req");
}

static void peer_fuzz_sync(struct peer_fuzz *f)
{
	unsigned long deadline = jiffies + 300 * HZ, start = jiffies;
	unsigned long now, last = peer_fuzz_progress(f->test);
	unsigned int still = 0;

	peer_fuzz_drain(f);
	while (still < 4 && time_before(jiffies, deadline)) {
		msleep(250);
		now = peer_fuzz_progress(f->test);
		still = now == last ? still + 1 : 0;
		last = now;
	}
	KUNIT_EXPECT_EQ_MSG(f->test, 4U, still,
			    "the CM did not get through the REQs in time");
	kunit_info(f->test, "the CM got through the REQs %u ms after the last was sent\n",
		   jiffies_to_msecs(jiffies - start));
}

/*
 * Unsolicited peer REQs from distinct remote ports, for a ServiceID whose
 * local peer never connects: at most PEER_TEST_MAX_HELD of them are held,
 * the others are refused, and a second flood adds nothing.
 */
static void peer_fuzz_flood(struct kunit *test)
{
	struct peer_fuzz *f = peer_fuzz_create(test);
	unsigned long max_held, held0, refused0, held1, refused1;
	unsigned long held2, refused2, n;
	struct cm_req_msg req;
	long slab0, slab1, slab2;
	unsigned int i, round;

	max_held = PEER_TEST_MAX_HELD;
	n = 3 * max_held;
	/* wait until what earlier cases left held has expired */
	KUNIT_ASSERT_EQ(test, 0UL, peer_rdv_wait_below(test, 1));
	prandom_seed_state(&f->rnd, 42);
	KUNIT_ASSERT_EQ(test, 0, ib_cm_peer_bind(f->end->cm_id,
						 cpu_to_be64(PEER_FUZZ_SID), 0));

	held0 = peer_counter(test, "cm_peer/held");
	refused0 = peer_counter(test, "cm_peer/refused");
	slab0 = peer_slab_bytes();
	for (round = 0; round < 2; round++) {
		unsigned long base = peer_counter(test, "cm_peer/held") +
				     peer_counter(test, "cm_peer/refused");

		for (i = 0; i < n; i++) {
			peer_fuzz_base_req(f, &req, PEER_FUZZ_SID);
			KUNIT_ASSERT_EQ(test, 0, peer_fuzz_send(f, &req));
		}
		peer_fuzz_drain(f);
		peer_fuzz_settle(f, base, n);
		if (!round) {
			held1 = peer_counter(test, "cm_peer/held");
			refused1 = peer_counter(test, "cm_peer/refused");
			slab1 = peer_slab_bytes();
		}
	}
	held2 = peer_counter(test, "cm_peer/held");
	refused2 = peer_counter(test, "cm_peer/refused");
	slab2 = peer_slab_bytes();

	KUNIT_EXPECT_EQ(test, n, (held1 - held0) + (refused1 - refused0));
	KUNIT_EXPECT_LE(test, held1 - held0, max_held);
	KUNIT_EXPECT_GE(test, held1 - held0, max_held / 2);
	KUNIT_EXPECT_EQ_MSG(test, 0UL, held2 - held1, "queue full, yet held");
	KUNIT_EXPECT_EQ(test, n, refused2 - refused1);
	/* the second flood was refused outright: no growth beyond noise */
	KUNIT_EXPECT_LT(test, slab2 - slab1, 2L << 20);
	kunit_info(test, "flood of %lu REQs x2 (max_held %lu): held %lu, refused %lu then %lu; slab %+ld KiB, then %+ld KiB\n",
		   n, max_held, held1 - held0, refused1 - refused0,
		   refused2 - refused1, (slab1 - slab0) >> 10,
		   (slab2 - slab1) >> 10);
}

/*
 * Persisting senders against a peer-bound service ID whose own peer never
 * connects: 3 x PEER_TEST_MAX_HELD peer ids on this device send it a REQ
 * each.  max_held are held; the others, and the held ones once expired,
 * are rejected as "not there yet" and sent again by their CMs until their
 * budgets are spent.  Bounds, sampled every 50 ms: never more than
 * max_held held; REQs sent at most one per id plus its resends and MAD
 * retries; slab growth bounded per sender.  Every id gets its outcome (REJ
 * or timeout) and nothing is held once they are gone.
 */
struct peer_flood_end {
	atomic_t outcomes, rejs;
};

static int peer_flood_handler(struct ib_cm_id *cm_id,
			      const struct ib_cm_event *ev)
{
	struct peer_flood_end *fe = cm_id->context;

	switch (ev->event) {
	case IB_CM_REJ_RECEIVED:
		atomic_inc(&fe->rejs);
		fallthrough;
	case IB_CM_REQ_ERROR:
		atomic_inc(&fe->outcomes);
		break;
	default:
		break;
	}
	return 0;
}

#define PEER_FLOOD_SID	(PEER_SID + 0x30000)

static void peer_fuzz_flood_persist(struct kunit *test)
{
	struct peer_end *h = peer_end_create(test, "holder");
	struct ib_cm_req_param req = peer_req_param(h, PEER_FLOOD_SID);
	unsigned long max_held, n, i, occ, peak = 0, deadline;
	unsigned long resent0, tx0, retries0, sent;
	struct peer_flood_end *fe;
	unsigned int budget;
	struct ib_cm_id **ids;
	long slab0, slab1;

	max_held = PEER_TEST_MAX_HELD;
	peer_set_limits(test, h->dev, max_held, PEER_TEST_AGE_MS);
	n = 3 * max_held;
	/* a budget of seconds: a slow host answers late, MADs are retried */
	req.remote_cm_response_timeout = 18;
	req.max_cm_retries = 7;
	budget = peer_req_budget_ms(&req);
	KUNIT_ASSERT_EQ(test, 0UL, peer_rdv_wait_below(test, 1));
	fe = kunit_kzalloc(test, sizeof(*fe), GFP_KERNEL);
	ids = kunit_kcalloc(test, n, sizeof(*ids), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fe);
	KUNIT_ASSERT_NOT_NULL(test, ids);
	KUNIT_ASSERT_EQ(test, 0, ib_cm_peer_bind(h->cm_id,
						 cpu_to_be64(PEER_FLOOD_SID),
						 0));
	resent0 = peer_counter(test, "cm_peer/resent");
	tx0 = peer_counter(test, "cm_tx_msgs/req");
	retries0 = peer_counter(test, "cm_tx_retries/req");
	slab0 = peer_slab_bytes();
	for (i = 0; i < n; i++) {
		ids[i] = ib_create_cm_id(h->dev, peer_flood_handler, fe);
		KUNIT_ASSERT_FALSE(test, IS_ERR(ids[i]));
		/* each its own service ID, apart from the holder's */
		KUNIT_ASSERT_EQ(test, 0,
				ib_cm_peer_bind(ids[i],
						cpu_to_be64(PEER_FLOOD_SID + 1 + i),
						0));
		req.qp_num = 0x700000 + i;
		KUNIT_ASSERT_EQ(test, 0,
				ib_send_cm_peer_req(ids[i], &req, NULL));
	}
	deadline = jiffies + msecs_to_jiffies(budget) + PEER_TIMEOUT;
	while (atomic_read(&fe->outcomes) < n &&
	       time_before(jiffies, deadline)) {
		occ = peer_rdv_occupancy(test);
		peak = max(peak, occ);
		msleep(50);
	}
	slab1 = peer_slab_bytes();
	sent = peer_counter(test, "cm_tx_msgs/req") - tx0;
	kunit_info(test, "%lu senders (max_held %lu, budget %u ms): peak held %lu, REQs sent %lu (resent %lu, MAD retries %lu), outcomes %d (REJ %d), slab %+ld KiB\n",
		   n, max_held, budget, peak, sent,
		   peer_counter(test, "cm_peer/resent") - resent0,
		   peer_counter(test, "cm_tx_retries/req") - retries0,
		   atomic_read(&fe->outcomes), atomic_read(&fe->rejs),
		   (slab1 - slab0) >> 10);
	KUNIT_EXPECT_EQ(test, (int)n, atomic_read(&fe->outcomes));
	KUNIT_EXPECT_LE(test, peak, max_held);
	KUNIT_EXPECT_GE(test, peak, max_held / 2);
	/* the refused ones were sent again, not reported at once */
	KUNIT_EXPECT_GE(test, peer_counter(test, "cm_peer/resent") - resent0,
			n - max_held);
	/* one REQ per id outstanding: its first, resends, MAD retries */
	KUNIT_EXPECT_LE(test, sent,
			n + peer_counter(test, "cm_peer/resent") - resent0 +
			peer_counter(test, "cm_tx_retries/req") - retries0);
	/*
	 * Per sender: its cm_id, REQ MAD and address handle, plus KASAN's
	 * redzones and quarantine, which the resends' frees fill: 27 KiB in
	 * UML, 37 KiB in the SMP debug kernel with a 9 s budget.  A sanity
	 * bound; the structural bounds are the two above.
	 */
	KUNIT_EXPECT_LT(test, slab1 - slab0, (long)n << 16);
	for (i = 0; i < n; i++)
		ib_destroy_cm_id(ids[i]);
	ib_destroy_cm_id(h->cm_id);
	h->cm_id = NULL;
	KUNIT_EXPECT_EQ(test, 0UL, peer_rdv_wait_below(test, 1));
}

/*
 * The REP to our peer REQ comes from an end whose own REQ is held here:
 * it arrived while our REQ was not out yet (on SMP, between our claim and
 * cm_peer_list(), which then found us answered).  That end turned passive
 * and cancelled its REQ; the REP takes it out.  Here the held REQ gets a
 * key our claim does not take, and the REP is sent by the MAD agent.
 */
static void peer_fuzz_rep_withdraws_held(struct kunit *test)
{
	struct peer_fuzz *f = peer_fuzz_create(test);
	struct peer_end *q = f->end;
	unsigned long held0, withdrawn0, occ0;
	struct cm_req_msg req;
	struct cm_rep_msg rep = {};

	KUNIT_ASSERT_EQ(test, 0UL, peer_rdv_wait_below(test, 1));
	KUNIT_ASSERT_EQ(test, 0, ib_cm_peer_bind(q->cm_id,
						 cpu_to_be64(PEER_FUZZ_SID + 0x40),
						 0));
	occ0 = peer_rdv_occupancy(test);
	held0 = peer_counter(test, "cm_peer/held");
	withdrawn0 = peer_counter(test, "cm_peer/withdrawn");
	peer_fuzz_base_req(f, &req, PEER_FUZZ_SID + 0x40);
	KUNIT_ASSERT_EQ(test, 0, peer_fuzz_send(f, &req));
	peer_wait_held(test, held0);

	/* our REQ: to a service ID nobody binds, it is sent again meanwhile */
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(q, PEER_FUZZ_SID + 0x41));
	KUNIT_ASSERT_EQ(test, occ0 + 1, peer_rdv_occupancy(test));

	/* the REP of the held REQ's sender, turned passive */
	rep.hdr = req.hdr;
	rep.hdr.attr_id = CM_REP_ATTR_ID;
	IBA_SET(CM_REP_LOCAL_COMM_ID, &rep,
		IBA_GET(CM_REQ_LOCAL_COMM_ID, &req));
	IBA_SET(CM_REP_REMOTE_COMM_ID, &rep,
		be32_to_cpu(q->cm_id->local_id));
	IBA_SET(CM_REP_LOCAL_CA_GUID, &rep,
		IBA_GET(CM_REQ_LOCAL_CA_GUID, &req));
	IBA_SET(CM_REP_LOCAL_QPN, &rep,
		IBA_GET(CM_REQ_LOCAL_QPN, &req));
	IBA_SET(CM_REP_STARTING_PSN, &rep, 1);
	IBA_SET(CM_REP_RESPONDER_RESOURCES, &rep, 1);
	IBA_SET(CM_REP_INITIATOR_DEPTH, &rep, 1);
	IBA_SET(CM_REP_END_TO_END_FLOW_CONTROL, &rep, 1);
	IBA_SET(CM_REP_RNR_RETRY_COUNT, &rep, 7);
	KUNIT_ASSERT_EQ(test, 0, peer_fuzz_send(f, (struct cm_req_msg *)&rep));
	peer_end_wait(q);
	KUNIT_EXPECT_TRUE(test, q->got_rep);
	KUNIT_EXPECT_EQ(test, withdrawn0 + 1,
			peer_counter(test, "cm_peer/withdrawn"));
	KUNIT_EXPECT_EQ_MSG(test, occ0, peer_rdv_occupancy(test),
			    "the answered end's REQ is still held");
}

/* counters reported when the connect after the fuzzing fails */
static const char *const peer_fuzz_diag[] = {
	"cm_tx_msgs/req", "cm_rx_msgs/req", "cm_tx_msgs/rej", "cm_rx_msgs/rej",
	"cm_tx_msgs/mra", "cm_rx_msgs/mra", "cm_rx_duplicates/req",
	"cm_peer/matched", "cm_peer/held", "cm_peer/refused",
};

/* Seeded mutations of peer REQs; afterwards the CM still connects. */
static void peer_fuzz_req(struct kunit *test)
{
	unsigned long diag[ARRAY_SIZE(peer_fuzz_diag)];
	struct peer_fuzz *f = peer_fuzz_create(test);
	unsigned int seed = peer_fuzz_seed ?: get_random_u32();
	unsigned long rx0 = peer_counter(test, "cm_rx_msgs/req");
	struct peer_end *a, *b;
	struct cm_req_msg req;
	unsigned int i, m;
	const char *what;

	kunit_info(test, "seed %u, %u cases\n", seed, peer_fuzz_cases);
	prandom_seed_state(&f->rnd, seed);
	KUNIT_ASSERT_EQ(test, 0, ib_cm_peer_bind(f->end->cm_id,
						 cpu_to_be64(PEER_FUZZ_SID), 0));
	for (i = 0; i < peer_fuzz_cases; i++) {
		peer_fuzz_base_req(f, &req, PEER_FUZZ_SID);
		for (m = 1 + prandom_u32_state(&f->rnd) % 4; m; m--)
			what = peer_fuzz_mutate(f, &req);
		if (peer_fuzz_send(f, &req)) {
			KUNIT_FAIL(test, "case %u (last: %s): send failed",
				   i, what);
			break;
		}
	}
	peer_fuzz_sync(f);
	KUNIT_EXPECT_EQ(test, 0U, f->send_errors);
	kunit_info(test, "sent %u, the CM received %lu REQs\n", f->sent,
		   peer_counter(test, "cm_rx_msgs/req") - rx0);
	/* most mutations keep a MAD the CM accepts as a REQ */
	KUNIT_EXPECT_GT(test, peer_counter(test, "cm_rx_msgs/req") - rx0,
			(unsigned long)f->sent / 2);

	/* the idle peer was never connected by any of it */
	KUNIT_EXPECT_EQ(test, IB_CM_IDLE, f->end->cm_id->state);
	KUNIT_EXPECT_FALSE(test, f->end->got_req);

	a = peer_end_create(test, "a");
	b = peer_end_create(test, "b");
	for (i = 0; i < ARRAY_SIZE(peer_fuzz_diag); i++)
		diag[i] = peer_counter(test, peer_fuzz_diag[i]);
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(a, PEER_FUZZ_SID + 2));
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(b, PEER_FUZZ_SID + 2));
	peer_end_wait(a);
	peer_end_wait(b);
	peer_expect_one_connection(test, a, b);
	if (!a->status && !b->status) {
		peer_exchange(test, a, b);
		return;
	}
	for (i = 0; i < ARRAY_SIZE(peer_fuzz_diag); i++)
		kunit_info(test, "%s %+ld\n", peer_fuzz_diag[i],
			   (long)(peer_counter(test, peer_fuzz_diag[i]) - diag[i]));
	kunit_info(test, "a: mra %d rej %d (%d); b: mra %d rej %d (%d)\n",
		   a->got_mra, a->got_rej, a->rej_reason, b->got_mra,
		   b->got_rej, b->rej_reason);
}

static struct kunit_case cm_peer_fuzz_test_cases[] = {
	KUNIT_CASE_SLOW(peer_fuzz_flood),
	KUNIT_CASE_SLOW(peer_fuzz_flood_persist),
	KUNIT_CASE_SLOW(peer_fuzz_rep_withdraws_held),
	KUNIT_CASE_SLOW(peer_fuzz_req),
	{}
};

static struct kunit_suite cm_peer_fuzz_test_suite = {
	.name = "cm_peer_fuzz",
	.suite_init = cm_peer_ib_suite_init,
	.test_cases = cm_peer_fuzz_test_cases,
};

kunit_test_suite(cm_peer_fuzz_test_suite);

#ifdef CONFIG_INFINIBAND_CM_PEER_FAULT_INJECT
/*
 * Suite cm_peer_fault: one MAD of a peer collision is lost, duplicated,
 * delayed or reordered (cm_peer_fault.c rules, applied by ib_cm itself).
 * Whatever happens, both ends must reach the same state in bounded time:
 * one connection with data flowing both ways, or a reported failure on
 * both.  A single fault on REQ, REP, RTU or MRA is within what the CM's
 * retransmissions recover from, so those scenarios must connect.
 */
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

/* DELAY holds a MAD this long; REORDER at most this long. */
#define PEER_FAULT_DELAY_MS	300

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
	ret = kunit_add_action_or_reset(test, peer_fault_clear_action, NULL);
	KUNIT_ASSERT_EQ(test, 0, ret);
	a = peer_end_create(test, "a");
	b = peer_end_create(test, "b");
	hits = cm_peer_fault_hits();
	KUNIT_ASSERT_EQ(test, 0, cm_peer_fault_add(c->action, c->attr_id, 0, 1,
						   PEER_FAULT_DELAY_MS));

	switch (c->path) {
	case PEER_PATH_COLLISION:
	case PEER_PATH_REJECT:
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

static struct kunit_case cm_peer_fault_test_cases[] = {
	KUNIT_CASE_PARAM_ATTR(peer_fault_scenario, peer_fault_gen_params,
			      { .speed = KUNIT_SPEED_SLOW }),
	{}
};

static struct kunit_suite cm_peer_fault_test_suite = {
	.name = "cm_peer_fault",
	.suite_init = cm_peer_ib_suite_init,
	.test_cases = cm_peer_fault_test_cases,
};

kunit_test_suite(cm_peer_fault_test_suite);

/*
 * Suite cm_peer_race: the races an SMP host can run into, each repeated
 * race_rounds times with the two sides on different CPUs (a work item
 * queued on another online CPU; on one CPU they only interleave) and the
 * CM's own handling spread over CPUs by MIGRATE fault rules.  Every round
 * must end in exactly one connection or a reported failure, and nothing
 * may stay held; KASAN, lockdep and kmemleak watch the rest.
 */
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
	int ret = kunit_add_action_or_reset(test, peer_fault_clear_action, NULL);

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
			peer_set_window(test, a->dev, 1);
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

static struct kunit_case cm_peer_race_test_cases[] = {
	KUNIT_CASE_SLOW(peer_race_claim_vs_hold),
	KUNIT_CASE_SLOW(peer_race_dup_vs_passive),
	KUNIT_CASE_SLOW(peer_race_rej_vs_hold),
	KUNIT_CASE_SLOW(peer_race_destroy_vs_match),
	KUNIT_CASE_SLOW(peer_race_destroy_vs_give_way),
	KUNIT_CASE_SLOW(peer_race_listen_vs_connect),
	{}
};

static struct kunit_suite cm_peer_race_test_suite = {
	.name = "cm_peer_race",
	.suite_init = cm_peer_ib_suite_init,
	.test_cases = cm_peer_race_test_cases,
};

kunit_test_suite(cm_peer_race_test_suite);

#ifdef CONFIG_INFINIBAND_CM_PEER_KUNIT_BENCH
/*
 * Suite cm_peer_req_bench (benchmark kernels only): what an inbound REQ
 * costs the CM on its whole path (MAD receive, work queue,
 * cm_req_handler()), client/server against peer with one and with many
 * peer ids waiting (25k: each holds its REQ's MAD and address handle, and
 * rxe has 32k AHs a device) or REQs held (100k).  The fuzz suite's MAD
 * agent sends the REQs to
 * our own port; a run is timed from its first send until the CM counted
 * its last REQ.  The same REQs dropped on receipt by a fault rule time
 * the sender and the device alone, which is subtracted.
 *
 *  - cs: to a listener whose handler refuses (the CM sends a REJ);
 *  - peer_match: each matches one of n waiting ids (their own REQs were
 *    dropped) and loses the arbitration (CA GUID 1): the CM discards it;
 *  - peer_hold: matches no waiting id and is held (nothing is sent), with
 *    n REQs held already;
 *  - cs_loaded: client/server again, beside both peer populations.
 *
 * Lines "bench: req_<case> n=<n> <ns per REQ>" and "bench: ratio_<case>
 * n=<n> <the CM's share against cs's>", medians (peer_bench_case()).
 */
#define PEER_BENCH_SID_CS	(PEER_SID + 0x20000)
#define PEER_BENCH_SID_PEER	(PEER_SID + 0x20001)
#define PEER_BENCH_SID_HOLD	(PEER_SID + 0x20002)
#define PEER_BENCH_MATCH		36
#define PEER_BENCH_WAIT		25000
#define PEER_BENCH_HELD_N	100000
#define PEER_BENCH_REQS		10000
#define PEER_BENCH_REPS		5

enum peer_bench_kind { PEER_BENCH_DROP, PEER_BENCH_CS, PEER_BENCH_MATCHED,
		      PEER_BENCH_HELD };

struct peer_bench {
	struct kunit *test;
	struct peer_fuzz *f;
	struct ib_cm_id *cs, *hold, **ids;
	unsigned int nids;
	u32 seq;		/* comm ID and QPN of the next REQ */
	u32 next_blob;		/* first blob no REQ has carried */
	atomic_t refused;
	atomic_t turned;	/* waiting ids that got a REQ (passive) */
};

static int peer_bench_handler(struct ib_cm_id *cm_id,
			      const struct ib_cm_event *ev)
{
	struct peer_bench *b = cm_id->context;

	if (ev->event != IB_CM_REQ_RECEIVED)
		return 0;
	/* not expected: b->ids owns a waiting id, keep it and count it */
	if (ev->param.req_rcvd.listen_id == cm_id) {
		atomic_inc(&b->turned);
		return 0;
	}
	atomic_inc(&b->refused);
	return -ECONNREFUSED;	/* the CM rejects and destroys cm_id */
}

/* For a stall: the waiting ids no longer in REQ-Sent, and the first one. */
static void peer_bench_strays(struct peer_bench *b)
{
	unsigned int i, n = 0, first = 0;

	for (i = 0; i < b->nids; i++) {
		if (READ_ONCE(b->ids[i]->state) == IB_CM_REQ_SENT)
			continue;
		if (!n++)
			first = i;
	}
	kunit_info(b->test, "bench: %u of %u waiting ids left REQ-Sent (first: %u, state %d), %d turned passive\n",
		   n, b->nids, first, n ? READ_ONCE(b->ids[first]->state) : 0,
		   atomic_read(&b->turned));
}

/* Match blob @i: a cma_hdr-like remote address and port. */
static void peer_bench_blob(u8 *blob, u32 i)
{
	memset(blob, 0, PEER_BENCH_MATCH);
	blob[1] = 0x40;
	put_unaligned_be16(7000 + i % 1000, &blob[2]);
	put_unaligned_be32(i, &blob[16]);
}

/* Destroy the waiting ids and the holder (it rejects what it holds). */
static void peer_bench_unpopulate(struct peer_bench *b)
{
	while (b->nids)
		ib_destroy_cm_id(b->ids[--b->nids]);
	if (b->hold)
		ib_destroy_cm_id(b->hold);
	b->hold = NULL;
}

static void peer_bench_release(void *data)
{
	struct peer_bench *b = data;

	cm_peer_fault_clear();
	peer_bench_unpopulate(b);
	kvfree(b->ids);
	if (b->cs)
		ib_destroy_cm_id(b->cs);
}

/* How many REQs of a kind the CM got through so far. */
static unsigned long peer_bench_done(struct peer_bench *b,
				     enum peer_bench_kind kind)
{
	switch (kind) {
	case PEER_BENCH_DROP:
		return cm_peer_fault_hits();
	case PEER_BENCH_CS:
		return atomic_read(&b->refused);
	case PEER_BENCH_MATCHED:
		return peer_counter(b->test, "cm_peer/stayed_active");
	default:
		return peer_counter(b->test, "cm_peer/held");
	}
}

/*
 * Send @m REQs for @sid, carrying blob first + k % mod (none if !mod),
 * and wait until the CM got through them; returns the ns it took, or 0 if
 * some never came (rxe loses a MAD when the GSI receive queue overflows):
 * no progress for PEER_BENCH_STALL.
 */
#define PEER_BENCH_STALL	(5 * HZ)

static u64 peer_bench_send(struct peer_bench *b, enum peer_bench_kind kind,
			   u64 sid, u32 m, u32 first, u32 mod)
{
	unsigned long base = peer_bench_done(b, kind), last = base, done;
	unsigned long stall;
	struct cm_req_msg req;
	u64 t0 = ktime_get_ns();
	u32 k;

	for (k = 0; k < m; k++) {
		peer_fuzz_base_req(b->f, &req, sid);
		/* from our port, a CA GUID below ours: we stay active */
		*IBA_GET_MEM_PTR(CM_REQ_PRIMARY_LOCAL_PORT_GID, &req) =
			b->f->end->sgid_attr->gid;
		IBA_SET(CM_REQ_LOCAL_CA_GUID, &req, 1);
		/* distinct, so that no REQ is taken for a stale one */
		b->seq++;
		IBA_SET(CM_REQ_LOCAL_COMM_ID, &req, b->seq);
		IBA_SET(CM_REQ_LOCAL_QPN, &req, b->seq & 0xffffff);
		if (mod)
			peer_bench_blob(IBA_GET_MEM_PTR(CM_REQ_PRIVATE_DATA,
							&req), first + k % mod);
		KUNIT_ASSERT_EQ(b->test, 0, peer_fuzz_send(b->f, &req));
	}
	stall = jiffies + PEER_BENCH_STALL;
	while ((done = peer_bench_done(b, kind)) - base < m) {
		if (done != last) {
			last = done;
			stall = jiffies + PEER_BENCH_STALL;
		} else if (time_after(jiffies, stall)) {
			kunit_info(b->test, "bench: the CM got %lu of %u REQs (kind %d, held %lu, stayed active %lu, fault hits %u)\n",
				   done - base, m, kind,
				   peer_counter(b->test, "cm_peer/held"),
				   peer_counter(b->test, "cm_peer/stayed_active"),
				   cm_peer_fault_hits());
			peer_bench_strays(b);
			return 0;
		}
		usleep_range(200, 400);
	}
	return ktime_get_ns() - t0;
}

/*
 * One run of PEER_BENCH_REQS REQs of @kind, in ns per REQ; a run that lost
 * REQs is not timed, it is done again (up to PEER_BENCH_TRIES times).
 */
#define PEER_BENCH_TRIES	3

static u64 peer_bench_run(struct peer_bench *b, enum peer_bench_kind kind,
			  u64 sid, u32 n)
{
	u32 first = 0, mod = 0;
	unsigned int try;
	u64 ns;

	for (try = 0; try < PEER_BENCH_TRIES; try++) {
		if (kind == PEER_BENCH_DROP)
			KUNIT_ASSERT_EQ(b->test, 0,
					cm_peer_fault_add(CM_PEER_FAULT_DROP,
							  CM_REQ_ATTR_ID, 0,
							  PEER_BENCH_REQS, 0));
		if (kind == PEER_BENCH_MATCHED) {
			mod = n;	/* the blobs of the waiting ids */
		} else if (kind == PEER_BENCH_HELD) {
			first = b->next_blob;	/* blobs nobody waits for */
			mod = U32_MAX;
			b->next_blob += PEER_BENCH_REQS;
		}
		ns = peer_bench_send(b, kind, sid, PEER_BENCH_REQS, first,
				     mod);
		cm_peer_fault_clear();
		if (ns)
			return div_u64(ns, PEER_BENCH_REQS);
		kunit_info(b->test, "bench: REQs lost, run again\n");
	}
	KUNIT_FAIL_AND_ABORT(b->test, "REQs lost in %u runs in a row",
			     PEER_BENCH_TRIES);
	return 0;
}

static u64 peer_bench_median(u64 *t)
{
	unsigned int i, j;

	for (i = 1; i < PEER_BENCH_REPS; i++)
		for (j = i; j && t[j - 1] > t[j]; j--)
			swap(t[j - 1], t[j]);
	return t[PEER_BENCH_REPS / 2];
}

/*
 * PEER_BENCH_REPS rounds of (drop, cs, @kind) back to back, so that each
 * ratio compares runs under the same conditions (UML's speed drifts):
 * reports the medians of the case's ns per REQ and of its CM share
 * against cs's, (case - drop) / (cs - drop), in hundredths.
 */
static void peer_bench_case(struct peer_bench *b, const char *name, u32 n,
			    enum peer_bench_kind kind, u64 sid, u32 wait)
{
	u64 t[PEER_BENCH_REPS], ratio[PEER_BENCH_REPS], drop, cs;
	unsigned int r;

	for (r = 0; r < PEER_BENCH_REPS; r++) {
		drop = peer_bench_run(b, PEER_BENCH_DROP, PEER_BENCH_SID_CS, 0);
		cs = peer_bench_run(b, PEER_BENCH_CS, PEER_BENCH_SID_CS, 0);
		t[r] = peer_bench_run(b, kind, sid, wait);
		KUNIT_ASSERT_GT(b->test, cs, drop);
		ratio[r] = div64_u64(100 * (t[r] > drop ? t[r] - drop : 0),
				     cs - drop);
	}
	r = peer_bench_median(ratio);
	kunit_info(b->test, "bench: req_%s n=%u %llu\n", name, n,
		   peer_bench_median(t));
	kunit_info(b->test, "bench: ratio_%s n=%u %u.%02u\n", name, n,
		   r / 100, r % 100);
}

/* @n ids waiting for REQs on SID_PEER, @held REQs held on SID_HOLD. */
static void peer_bench_populate(struct peer_bench *b, u32 n, u32 held)
{
	struct ib_cm_req_param param = peer_req_param(b->f->end,
						      PEER_BENCH_SID_PEER);
	unsigned long hits = cm_peer_fault_hits(), deadline;
	u8 blob[PEER_BENCH_MATCH];
	struct ib_cm_id *id;

	KUNIT_ASSERT_EQ(b->test, 0,
			cm_peer_fault_add(CM_PEER_FAULT_DROP, CM_REQ_ATTR_ID, 0,
					  n, 0));
	param.remote_cm_response_timeout = 31;	/* no resend while timed */
	param.local_cm_response_timeout = 31;
	while (b->nids < n) {
		id = ib_create_cm_id(b->f->end->dev, peer_bench_handler, b);
		KUNIT_ASSERT_FALSE(b->test, IS_ERR(id));
		b->ids[b->nids++] = id;
		KUNIT_ASSERT_EQ(b->test, 0,
				ib_cm_peer_bind(id, cpu_to_be64(PEER_BENCH_SID_PEER),
						PEER_BENCH_MATCH));
		param.qp_num = 0x800000 | b->nids;
		peer_bench_blob(blob, b->nids - 1);
		KUNIT_ASSERT_EQ_MSG(b->test, 0,
				    ib_send_cm_peer_req(id, &param, blob),
				    "waiting id %u", b->nids);
		if (!(b->nids % 64))
			cond_resched();
	}
	deadline = jiffies + 120 * HZ;
	while (cm_peer_fault_hits() - hits < n &&
	       time_before(jiffies, deadline))
		msleep(20);
	KUNIT_ASSERT_EQ(b->test, (unsigned long)n, cm_peer_fault_hits() - hits);
	cm_peer_fault_clear();

	b->hold = ib_create_cm_id(b->f->end->dev, peer_bench_handler, b);
	KUNIT_ASSERT_FALSE(b->test, IS_ERR(b->hold));
	KUNIT_ASSERT_EQ(b->test, 0,
			ib_cm_peer_bind(b->hold, cpu_to_be64(PEER_BENCH_SID_HOLD),
					PEER_BENCH_MATCH));
	KUNIT_ASSERT_NE_MSG(b->test, 0ULL,
			    peer_bench_send(b, PEER_BENCH_HELD,
					    PEER_BENCH_SID_HOLD, held,
					    b->next_blob, U32_MAX),
			    "held REQs lost");
	b->next_blob += held;
}

static void peer_bench_req(struct kunit *test)
{
	static const u32 sizes[][2] = { { 1, 1 },
					{ PEER_BENCH_WAIT, PEER_BENCH_HELD_N } };
	struct peer_bench *b = kunit_kzalloc(test, sizeof(*b), GFP_KERNEL);
	unsigned int s;

	KUNIT_ASSERT_NOT_NULL(test, b);
	b->test = test;
	b->f = peer_fuzz_create(test);
	b->ids = kvcalloc(PEER_BENCH_WAIT, sizeof(*b->ids), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, b->ids);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, peer_bench_release, b));
	peer_set_limits(test, b->f->end->dev,
			PEER_BENCH_HELD_N + (PEER_BENCH_REPS + PEER_BENCH_TRIES) *
					    PEER_BENCH_REQS,
			3600 * 1000);

	b->cs = ib_create_cm_id(b->f->end->dev, peer_bench_handler, b);
	KUNIT_ASSERT_FALSE(test, IS_ERR(b->cs));
	KUNIT_ASSERT_EQ(test, 0,
			ib_cm_listen(b->cs, cpu_to_be64(PEER_BENCH_SID_CS)));

	/* warm up (slabs, MAD buffers, caches), then time */
	peer_bench_run(b, PEER_BENCH_CS, PEER_BENCH_SID_CS, 0);
	peer_bench_case(b, "drop", 0, PEER_BENCH_DROP, PEER_BENCH_SID_CS, 0);
	peer_bench_case(b, "cs", 0, PEER_BENCH_CS, PEER_BENCH_SID_CS, 0);
	for (s = 0; s < ARRAY_SIZE(sizes); s++) {
		u32 n = sizes[s][0], held = sizes[s][1];

		peer_bench_populate(b, n, held);
		peer_bench_case(b, "peer_match", n, PEER_BENCH_MATCHED,
				PEER_BENCH_SID_PEER, n);
		peer_bench_case(b, "peer_hold", held, PEER_BENCH_HELD,
				PEER_BENCH_SID_HOLD, 0);
		peer_bench_case(b, "cs_loaded", n + held, PEER_BENCH_CS,
				PEER_BENCH_SID_CS, 0);
		peer_bench_unpopulate(b);
	}
	/* every REQ sent here loses the arbitration */
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&b->turned));
}

static struct kunit_case cm_peer_req_bench_cases[] = {
	KUNIT_CASE_SLOW(peer_bench_req),
	{}
};

static struct kunit_suite cm_peer_req_bench_suite = {
	.name = "cm_peer_req_bench",
	.suite_init = cm_peer_ib_suite_init,
	.test_cases = cm_peer_req_bench_cases,
};

kunit_test_suite(cm_peer_req_bench_suite);
#endif /* CONFIG_INFINIBAND_CM_PEER_KUNIT_BENCH */
#endif /* CONFIG_INFINIBAND_CM_PEER_FAULT_INJECT */

MODULE_DESCRIPTION("KUnit tests of IB CM peer-to-peer over an RDMA device");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
MODULE_LICENSE("Dual BSD/GPL");
