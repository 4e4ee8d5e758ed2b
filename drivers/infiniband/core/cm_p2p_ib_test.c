// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * KUnit tests of the IB CM peer-to-peer model over a real RDMA device.
 *
 * The suite drives the real ib_cm (no model of it) on a soft-RoCE device:
 * two RC QPs on one port (loopback, so the GIDs are equal and the QPN
 * decides), each with its own cm_id, connect with ib_send_cm_peer_req(),
 * must end up as exactly one connection, with both QPs in RTS and a SEND
 * delivered each way.  The device is named by the cm_p2p_ib_test.dev
 * parameter (default "rxe0").  At boot no such device exists and every case
 * is skipped; the test runner creates it and runs the suite again through
 * /sys/kernel/debug/kunit/cm_p2p_ib/run.
 */

#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/moduleparam.h>
#include <linux/netdevice.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_verbs.h>

static char *p2p_dev_name = "rxe0";
module_param_named(dev, p2p_dev_name, charp, 0644);
MODULE_PARM_DESC(dev, "RDMA device the cm_p2p_ib suite runs on");

#define P2P_SID		0x0000000100f2f2f2ULL
#define P2P_TIMEOUT	(10 * HZ)

struct p2p_end {
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
	int rej_reason;
	/* data path */
	struct ib_cqe send_cqe, recv_cqe;
	u64 *send_buf, *recv_buf;
	u64 send_dma, recv_dma;
	int sends_done, recvs_done, wc_errors;
};

static void p2p_finish(struct p2p_end *e, int status)
{
	e->status = status;
	complete(&e->done);
}

static int p2p_modify(struct p2p_end *e, enum ib_qp_state state)
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

static int p2p_send_rep(struct p2p_end *e)
{
	struct ib_cm_rep_param rep = {
		.qp_num = e->qp->qp_num,
		.starting_psn = e->qp->qp_num & 0xffffff,
		.responder_resources = 1,
		.initiator_depth = 1,
		.flow_control = 1,
		.rnr_retry_count = 7,
	};
	int ret;

	ret = p2p_modify(e, IB_QPS_RTR);
	if (ret)
		return ret;
	return ib_send_cm_rep(e->cm_id, &rep);
}

static int p2p_cm_handler(struct ib_cm_id *cm_id,
			  const struct ib_cm_event *ev)
{
	struct p2p_end *e = cm_id->context;
	int ret;

	switch (ev->event) {
	case IB_CM_REQ_RECEIVED:
		e->got_req = true;
		e->req_on_own_id = ev->param.req_rcvd.listen_id == cm_id;
		if (cm_id != e->cm_id) {
			/* client/server: the listener created a new id */
			e->cm_id = cm_id;
		}
		ret = p2p_send_rep(e);
		if (ret)
			p2p_finish(e, ret);
		break;
	case IB_CM_MRA_RECEIVED:
		e->got_mra = true;
		break;
	case IB_CM_REP_RECEIVED:
		e->got_rep = true;
		ret = p2p_modify(e, IB_QPS_RTR);
		if (!ret)
			ret = p2p_modify(e, IB_QPS_RTS);
		if (!ret)
			ret = ib_send_cm_rtu(cm_id, NULL, 0);
		p2p_finish(e, ret);
		break;
	case IB_CM_RTU_RECEIVED:
		e->got_rtu = true;
		p2p_finish(e, p2p_modify(e, IB_QPS_RTS));
		break;
	case IB_CM_REJ_RECEIVED:
		e->got_rej = true;
		e->rej_reason = ev->param.rej_rcvd.reason;
		p2p_finish(e, -ECONNREFUSED);
		break;
	case IB_CM_REQ_ERROR:
	case IB_CM_REP_ERROR:
		p2p_finish(e, -ETIMEDOUT);
		break;
	case IB_CM_DREQ_RECEIVED:
		ib_send_cm_drep(cm_id, NULL, 0);
		break;
	default:
		break;
	}
	return 0;
}

static void p2p_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct p2p_end *e = container_of(wc->wr_cqe, struct p2p_end, send_cqe);

	if (wc->status == IB_WC_SUCCESS)
		e->sends_done++;
	else
		e->wc_errors++;
}

static void p2p_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct p2p_end *e = container_of(wc->wr_cqe, struct p2p_end, recv_cqe);

	if (wc->status == IB_WC_SUCCESS)
		e->recvs_done++;
	else
		e->wc_errors++;
}

/* The first RoCE v2 GID with an IPv4 address: our end of the path. */
static const struct ib_gid_attr *p2p_find_gid(struct ib_device *dev)
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

static void p2p_end_release(void *data)
{
	struct p2p_end *e = data;

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
static struct p2p_end *p2p_end_create(struct kunit *test, const char *name)
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
	struct ib_recv_wr wr = {}, *bad;
	struct ib_sge sge;
	struct net_device *ndev;
	struct ib_device *dev;
	struct p2p_end *e;

	dev = ib_device_get_by_name(p2p_dev_name, RDMA_DRIVER_UNKNOWN);
	if (!dev)
		kunit_skip(test, "no RDMA device %s", p2p_dev_name);

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
			kunit_add_action_or_reset(test, p2p_end_release, e));

	e->sgid_attr = p2p_find_gid(dev);
	KUNIT_ASSERT_NOT_NULL_MSG(test, e->sgid_attr,
				  "%s has no RoCE v2 IPv4 GID", p2p_dev_name);

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
	e->recv_cqe.done = p2p_recv_done;
	e->send_cqe.done = p2p_send_done;
	sge.addr = e->recv_dma;
	sge.length = sizeof(u64);
	sge.lkey = e->pd->local_dma_lkey;
	wr.wr_cqe = &e->recv_cqe;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	KUNIT_ASSERT_EQ(test, 0, ib_post_recv(e->qp, &wr,
					      (const struct ib_recv_wr **)&bad));

	e->cm_id = ib_create_cm_id(dev, p2p_cm_handler, e);
	if (IS_ERR(e->cm_id)) {
		e->cm_id = NULL;
		KUNIT_FAIL_AND_ABORT(test, "ib_create_cm_id failed");
	}
	return e;
}

static struct ib_cm_req_param p2p_req_param(struct p2p_end *e, u64 sid)
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

static int p2p_peer_req(struct p2p_end *e, u64 sid)
{
	struct ib_cm_req_param req = p2p_req_param(e, sid);

	return ib_send_cm_peer_req(e->cm_id, &req);
}

static void p2p_wait(struct p2p_end *e)
{
	KUNIT_ASSERT_GT_MSG(e->test,
			    wait_for_completion_timeout(&e->done, P2P_TIMEOUT),
			    0L, "%s: no outcome in %d s", e->name,
			    P2P_TIMEOUT / HZ);
}

/* Post one SEND each way and wait for both ends' completions. */
static void p2p_exchange(struct kunit *test, struct p2p_end *a,
			 struct p2p_end *b)
{
	struct p2p_end *ends[2] = { a, b };
	unsigned long deadline = jiffies + P2P_TIMEOUT;
	int i;

	for (i = 0; i < 2; i++) {
		struct ib_sge sge = {
			.addr = ends[i]->send_dma,
			.length = sizeof(u64),
			.lkey = ends[i]->pd->local_dma_lkey,
		};
		struct ib_send_wr wr = {
			.wr_cqe = &ends[i]->send_cqe,
			.sg_list = &sge,
			.num_sge = 1,
			.opcode = IB_WR_SEND,
			.send_flags = IB_SEND_SIGNALED,
		};

		KUNIT_ASSERT_EQ(test, 0, ib_post_send(ends[i]->qp, &wr, NULL));
	}
	while (time_before(jiffies, deadline)) {
		for (i = 0; i < 2; i++)
			ib_process_cq_direct(ends[i]->cq, 8);
		if (a->sends_done && a->recvs_done && b->sends_done &&
		    b->recvs_done)
			break;
		usleep_range(5000, 10000);
	}
	for (i = 0; i < 2; i++) {
		KUNIT_EXPECT_EQ_MSG(test, 1, ends[i]->sends_done, "%s",
				    ends[i]->name);
		KUNIT_EXPECT_EQ_MSG(test, 1, ends[i]->recvs_done, "%s",
				    ends[i]->name);
		KUNIT_EXPECT_EQ(test, 0, ends[i]->wc_errors);
	}
	/* each end received the other's QPN: connected to each other */
	KUNIT_EXPECT_EQ(test, (u64)b->qp->qp_num, *a->recv_buf);
	KUNIT_EXPECT_EQ(test, (u64)a->qp->qp_num, *b->recv_buf);
}

static struct p2p_end *p2p_passive_of(struct p2p_end *a, struct p2p_end *b)
{
	return a->got_req ? a : b;
}

/* Exactly one connection: one end passive on its own id, one active. */
static void p2p_expect_one_connection(struct kunit *test, struct p2p_end *a,
				      struct p2p_end *b)
{
	struct p2p_end *passive = p2p_passive_of(a, b);
	struct p2p_end *active = passive == a ? b : a;

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
	kunit_info(test, "%s passive (QPN %#x), %s active (QPN %#x)%s\n",
		   passive->name, passive->qp->qp_num, active->name,
		   active->qp->qp_num, active->got_mra ? ", REQ was held" : "");
}

/* Both send their REQ back to back: the REQs collide, QPN decides. */
static void p2p_ib_collision(struct kunit *test)
{
	struct p2p_end *a = p2p_end_create(test, "a");
	struct p2p_end *b = p2p_end_create(test, "b");

	KUNIT_ASSERT_EQ(test, 0, p2p_peer_req(a, P2P_SID));
	KUNIT_ASSERT_EQ(test, 0, p2p_peer_req(b, P2P_SID));
	p2p_wait(a);
	p2p_wait(b);
	p2p_expect_one_connection(test, a, b);
	/*
	 * When the REQs crossed (no MRA: neither was held) the arbiter chose:
	 * equal GIDs, so the smaller QPN is passive.  When a's REQ was
	 * processed before b sent its own, it was held and b, the late end,
	 * turned passive without arbitration.
	 */
	if (!a->got_mra && !b->got_mra)
		KUNIT_EXPECT_LT(test, p2p_passive_of(a, b)->qp->qp_num,
				(p2p_passive_of(a, b) == a ? b : a)->qp->qp_num);
	else
		KUNIT_EXPECT_TRUE(test, b->got_req);
	p2p_exchange(test, a, b);
}

/* b binds, a connects, b connects 200 ms later: a's REQ is held. */
static void p2p_ib_early_req(struct kunit *test)
{
	struct p2p_end *a = p2p_end_create(test, "a");
	struct p2p_end *b = p2p_end_create(test, "b");

	KUNIT_ASSERT_EQ(test, 0, ib_cm_peer_bind(b->cm_id,
						 cpu_to_be64(P2P_SID + 1)));
	KUNIT_ASSERT_EQ(test, 0, p2p_peer_req(a, P2P_SID + 1));
	msleep(200);
	KUNIT_EXPECT_TRUE(test, a->got_mra);
	KUNIT_EXPECT_EQ(test, 1, a->status);	/* still connecting */
	KUNIT_ASSERT_EQ(test, 0, p2p_peer_req(b, P2P_SID + 1));
	p2p_wait(a);
	p2p_wait(b);
	p2p_expect_one_connection(test, a, b);
	KUNIT_EXPECT_TRUE(test, b->got_req);	/* the late end is passive */
	p2p_exchange(test, a, b);
}

/* Mode conflicts between peers and listeners are refused. */
static void p2p_ib_conflicts(struct kunit *test)
{
	struct p2p_end *a = p2p_end_create(test, "a");
	struct p2p_end *b = p2p_end_create(test, "b");
	struct ib_cm_id *listen;
	struct ib_cm_req_param req;

	KUNIT_ASSERT_EQ(test, 0, ib_cm_peer_bind(a->cm_id,
						 cpu_to_be64(P2P_SID + 2)));
	KUNIT_EXPECT_EQ(test, 0, ib_cm_peer_bind(a->cm_id,
						 cpu_to_be64(P2P_SID + 2)));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			ib_cm_peer_bind(a->cm_id, cpu_to_be64(P2P_SID + 3)));
	KUNIT_EXPECT_EQ(test, -EADDRINUSE,
			ib_cm_listen(b->cm_id, cpu_to_be64(P2P_SID + 2)));
	listen = ib_cm_insert_listen(b->dev, p2p_cm_handler,
				     cpu_to_be64(P2P_SID + 2));
	KUNIT_EXPECT_EQ(test, -EADDRINUSE, PTR_ERR_OR_ZERO(listen));
	if (!IS_ERR(listen))
		ib_destroy_cm_id(listen);

	KUNIT_ASSERT_EQ(test, 0, ib_cm_listen(b->cm_id,
					      cpu_to_be64(P2P_SID + 4)));
	req = p2p_req_param(a, P2P_SID + 4);
	KUNIT_EXPECT_EQ(test, -EINVAL, ib_send_cm_peer_req(a->cm_id, &req));
	ib_destroy_cm_id(a->cm_id);
	a->cm_id = ib_create_cm_id(a->dev, p2p_cm_handler, a);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a->cm_id));
	KUNIT_EXPECT_EQ(test, -EADDRINUSE,
			ib_cm_peer_bind(a->cm_id, cpu_to_be64(P2P_SID + 4)));
	/* the peer bind went away with its id: the SID is free again */
	ib_destroy_cm_id(b->cm_id);
	b->cm_id = ib_create_cm_id(b->dev, p2p_cm_handler, b);
	KUNIT_ASSERT_FALSE(test, IS_ERR(b->cm_id));
	KUNIT_EXPECT_EQ(test, 0, ib_cm_listen(b->cm_id,
					      cpu_to_be64(P2P_SID + 2)));
	KUNIT_EXPECT_EQ(test, 0, ib_cm_peer_bind(a->cm_id,
						 cpu_to_be64(P2P_SID + 4)));
}

/* One end goes away mid-collision: the other fails cleanly. */
static void p2p_ib_destroy_during_collision(struct kunit *test)
{
	struct p2p_end *a = p2p_end_create(test, "a");
	struct p2p_end *b = p2p_end_create(test, "b");

	KUNIT_ASSERT_EQ(test, 0, p2p_peer_req(a, P2P_SID + 5));
	KUNIT_ASSERT_EQ(test, 0, p2p_peer_req(b, P2P_SID + 5));
	ib_destroy_cm_id(a->cm_id);
	a->cm_id = NULL;
	p2p_wait(b);
	KUNIT_EXPECT_LT(test, b->status, 0);
	KUNIT_EXPECT_NE(test, IB_CM_ESTABLISHED, b->cm_id->state);
	kunit_info(test, "survivor: status %d, REJ %d (reason %d)\n",
		   b->status, b->got_rej, b->rej_reason);
}

/* The client/server model is unchanged. */
static void p2p_ib_client_server(struct kunit *test)
{
	struct p2p_end *srv = p2p_end_create(test, "server");
	struct p2p_end *cli = p2p_end_create(test, "client");
	struct ib_cm_id *listen_id = srv->cm_id;
	struct ib_cm_req_param req;

	KUNIT_ASSERT_EQ(test, 0, ib_cm_listen(listen_id,
					      cpu_to_be64(P2P_SID + 6)));
	req = p2p_req_param(cli, P2P_SID + 6);
	KUNIT_ASSERT_EQ(test, 0, ib_send_cm_req(cli->cm_id, &req));
	p2p_wait(cli);
	p2p_wait(srv);
	KUNIT_EXPECT_EQ(test, 0, cli->status);
	KUNIT_EXPECT_EQ(test, 0, srv->status);
	KUNIT_EXPECT_TRUE(test, srv->got_req);
	KUNIT_EXPECT_FALSE(test, srv->req_on_own_id);
	KUNIT_EXPECT_TRUE(test, cli->got_rep);
	KUNIT_EXPECT_FALSE(test, cli->got_mra);
	p2p_exchange(test, srv, cli);
	/* the id the listener created is the server's now; drop the listener */
	ib_destroy_cm_id(listen_id);
}

static struct kunit_case cm_p2p_ib_test_cases[] = {
	KUNIT_CASE_SLOW(p2p_ib_collision),
	KUNIT_CASE_SLOW(p2p_ib_early_req),
	KUNIT_CASE_SLOW(p2p_ib_conflicts),
	KUNIT_CASE_SLOW(p2p_ib_destroy_during_collision),
	KUNIT_CASE_SLOW(p2p_ib_client_server),
	{}
};

/*
 * KUnit keeps a case that skipped marked as skipped and does not run it
 * again; the boot-time run skips every case (no device yet), so clear the
 * marks for the run through debugfs.
 */
static int cm_p2p_ib_suite_init(struct kunit_suite *suite)
{
	struct kunit_case *c;

	for (c = suite->test_cases; c->run_case; c++)
		c->status = KUNIT_SUCCESS;
	return 0;
}

static struct kunit_suite cm_p2p_ib_test_suite = {
	.name = "cm_p2p_ib",
	.suite_init = cm_p2p_ib_suite_init,
	.test_cases = cm_p2p_ib_test_cases,
};

kunit_test_suite(cm_p2p_ib_test_suite);

MODULE_DESCRIPTION("KUnit tests of IB CM peer-to-peer over an RDMA device");
MODULE_LICENSE("Dual BSD/GPL");
