// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Helpers of the KUnit suites of the IB CM peer-to-peer model over a real
 * RDMA device: two ends and their data path, REQs, holds and listeners,
 * the fuzz suites' MAD agent, and the CM's counters and limits.
 */
#include "cm_peer_kunit_helpers.h"

char *peer_dev_name = "rxe0";
module_param_named(dev, peer_dev_name, charp, 0644);
MODULE_PARM_DESC(dev, "RDMA device the cm_peer_ib suites run on");

#define PEER_FUZZ_WINDOW	16	/* MADs in flight */

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

int peer_send_rep(struct peer_end *e)
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

int peer_cm_handler(struct ib_cm_id *cm_id,
		    const struct ib_cm_event *ev)
{
	struct peer_end *e = cm_id->context;
	int ret;

	switch (ev->event) {
	case IB_CM_REQ_RECEIVED:
		WRITE_ONCE(e->in_req, true);
		if (e->slow_req_ms)
			msleep(e->slow_req_ms);
		if (e->gate_req)
			wait_for_completion_timeout(&e->req_go, PEER_TIMEOUT);
		e->got_req = true;
		memcpy(e->peer_name, (u8 *)ev->private_data + PEER_ID_LEN,
		       PEER_NAME_LEN - 1);
		e->req_on_own_id = ev->param.req_rcvd.listen_id == cm_id;
		if (e->hand_back) {
			/* a connect of ours has its key; the CM destroys cm_id */
			WRITE_ONCE(e->hand_back_ret,
				   ib_cm_peer_hold_req(cm_id));
			return -EAGAIN;
		}
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
		if (e->hold_req)
			break;
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
int peer_wire_init(struct peer_wire *w, const char *name,
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
void peer_wire_exchange(struct kunit *test, struct peer_wire *a,
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
const struct ib_gid_attr *peer_find_gid(struct ib_device *dev)
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

void peer_end_release(void *data)
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
struct peer_end *peer_end_create(struct kunit *test, const char *name)
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
	init_completion(&e->req_go);
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

struct ib_cm_req_param peer_req_param(struct peer_end *e, u64 sid)
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
unsigned int peer_req_budget_ms(const struct ib_cm_req_param *req)
{
	return (2 * (1U << (req->primary_path->packet_life_time - 8)) +
		(1U << (req->remote_cm_response_timeout - 8))) *
	       (req->max_cm_retries + 1);
}

int peer_send_req(struct peer_end *e, u64 sid)
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

void peer_end_wait(struct peer_end *e)
{
	KUNIT_ASSERT_GT_MSG(e->test,
			    wait_for_completion_timeout(&e->done, PEER_TIMEOUT),
			    0L, "%s: no outcome in %d s", e->name,
			    PEER_TIMEOUT / HZ);
}

/* A SEND each way; each end sends its QPN. */
void peer_exchange(struct kunit *test, struct peer_end *a,
		   struct peer_end *b)
{
	peer_wire_exchange(test, &a->wire, &b->wire);
	/* each end received the other's QPN: connected to each other */
	KUNIT_EXPECT_EQ(test, (u64)b->qp->qp_num, *a->recv_buf);
	KUNIT_EXPECT_EQ(test, (u64)a->qp->qp_num, *b->recv_buf);
}

struct peer_end *peer_passive_of(struct peer_end *a, struct peer_end *b)
{
	return a->got_req ? a : b;
}

/* Exactly one connection: one end passive on its own id, one active. */
void peer_expect_one_connection(struct kunit *test, struct peer_end *a,
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

/* Wait for the CM to hold one more REQ than @held0 */
void peer_wait_held(struct kunit *test, unsigned long held0)
{
	unsigned long deadline = jiffies + PEER_TIMEOUT;

	while (peer_counter(test, "cm_peer/held") == held0 &&
	       time_before(jiffies, deadline))
		msleep(20);
	/* an earlier case's REQ, resent after its expiry, may be held too */
	KUNIT_ASSERT_LE(test, held0 + 1, peer_counter(test, "cm_peer/held"));
}

/* b binds @sid as peer, a sends its REQ, b's CM holds it */
void peer_hold_at(struct kunit *test, struct peer_end *a,
		  struct peer_end *b, u64 sid)
{
	unsigned long held0 = peer_counter(test, "cm_peer/held");

	KUNIT_ASSERT_EQ(test, 0, ib_cm_peer_bind(b->cm_id, cpu_to_be64(sid), 0));
	KUNIT_ASSERT_EQ(test, 0, peer_send_req(a, sid));
	peer_wait_held(test, held0);
}

/* a's REQ is held at b: b connects, claims it and turns passive */
void peer_claim_held(struct kunit *test, struct peer_end *a,
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

/* Wait for the REQ event of @e, a listener's end, to begin. */
void peer_wait_in_req(struct kunit *test, struct peer_end *e)
{
	unsigned long deadline = jiffies + PEER_TIMEOUT;

	while (!READ_ONCE(e->in_req) && time_before(jiffies, deadline))
		usleep_range(5000, 10000);
	KUNIT_ASSERT_TRUE(test, READ_ONCE(e->in_req));
}

/* Wait, while @e is connecting, for an MRA to its REQ. */
void peer_wait_mra(struct peer_end *e)
{
	unsigned long deadline = jiffies + PEER_TIMEOUT;

	while (!e->got_mra && e->status == 1 && time_before(jiffies, deadline))
		msleep(20);
}

/*
 * @e binds @sid, sends its REQ to @peer_sid and takes only the REQ that
 * starts with @peer_sid: the identity the ranks of an MPI job have (one
 * port each, a connection to every other rank).
 */
void peer_identity(struct kunit *test, struct peer_end *e, u64 sid,
		   u64 peer_sid, const char *name)
{
	peer_identity_mask(test, e, sid, peer_sid, name, PEER_ID_LEN, NULL);
}

/*
 * peer_identity() with @match_len bytes under @mask: the partner's
 * service ID, then (match_len > PEER_ID_LEN) the start of its name, which
 * the caller expects in e->match past the service ID.
 */
void peer_identity_mask(struct kunit *test, struct peer_end *e, u64 sid,
			u64 peer_sid, const char *name, u8 match_len,
			const u8 *mask)
{
	__be64 own = cpu_to_be64(sid), other = cpu_to_be64(peer_sid);

	e->name = name;
	memcpy(e->req_data, &own, PEER_ID_LEN);
	strscpy(e->req_data + PEER_ID_LEN, name, PEER_NAME_LEN);
	memcpy(e->match, &other, PEER_ID_LEN);
	e->has_match = true;
	KUNIT_ASSERT_EQ(test, 0, ib_cm_peer_bind_mask(e->cm_id, own, match_len,
						      mask));
}

/*
 * On demand: a peer service ID with a listener (ib_cm_insert_peer_listen()).
 * The listener's REQs go to peer_listen_end, an end whose own idle cm_id
 * was dropped (cases run one at a time).
 */
static struct peer_end *peer_listen_end;

int peer_listen_handler(struct ib_cm_id *cm_id,
			const struct ib_cm_event *ev)
{
	if (ev->event == IB_CM_REQ_RECEIVED) {
		if (!peer_listen_end)
			return -ECONNREFUSED;	/* the case is over */
		cm_id->context = peer_listen_end;
	}
	return peer_cm_handler(cm_id, ev);
}

void peer_unlisten(void *listen)
{
	ib_destroy_cm_id(listen);
	peer_listen_end = NULL;
}

/* @al listens on @sid as peer: ends with an idle cm_id cannot take REQs */
struct ib_cm_id *peer_listen_on(struct kunit *test,
				struct peer_end *al, u64 sid)
{
	return peer_listen_on_len(test, al, sid, PEER_ID_LEN);
}

/* peer_listen_on(), its key @match_len bytes of private data */
struct ib_cm_id *peer_listen_on_len(struct kunit *test, struct peer_end *al,
				    u64 sid, u8 match_len)
{
	struct ib_cm_id *listen;

	ib_destroy_cm_id(al->cm_id);
	al->cm_id = NULL;
	peer_listen_end = al;
	listen = ib_cm_insert_peer_listen(al->dev, peer_listen_handler, NULL,
					  NULL, cpu_to_be64(sid), match_len,
					  NULL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(listen));
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, peer_unlisten, listen));
	return listen;
}

/*
 * KUnit keeps a case that skipped marked as skipped and does not run it
 * again; the boot-time run skips every case (no device yet), so clear the
 * marks for the run through debugfs.
 */
int cm_peer_ib_suite_init(struct kunit_suite *suite)
{
	struct kunit_case *c;

	for (c = suite->test_cases; c->run_case; c++)
		c->status = KUNIT_SUCCESS;
	return 0;
}

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

static void peer_limits_restore(void *dev)
{
	cm_peer_test_limits(dev, 0, 0, 0, 0, 0);
}

void peer_set_limits(struct kunit *test, struct ib_device *dev,
		     unsigned int max_held, unsigned int max_age_ms)
{
	KUNIT_ASSERT_EQ(test, 0, cm_peer_test_limits(dev, max_held, max_held,
						     max_age_ms, 0, 0));
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   peer_limits_restore, dev));
}

/*
 * The device's window of peer REQs out: @window instead of 64, and a REQ
 * out unanswered leaves it after @rto_ms (0: the RTO estimated).
 */
void peer_set_window(struct kunit *test, struct ib_device *dev,
		     unsigned int window, unsigned int rto_ms)
{
	KUNIT_ASSERT_EQ(test, 0, cm_peer_test_limits(dev, 0, 0, 0, window,
						     rto_ms));
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   peer_limits_restore, dev));
}

struct peer_fuzz *peer_fuzz_create(struct kunit *test)
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
void peer_fuzz_base_req(struct peer_fuzz *f, struct cm_req_msg *req,
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
	IBA_SET(CM_REQ_PEER_TO_PEER, req, 1);
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

int peer_fuzz_send(struct peer_fuzz *f, const struct cm_req_msg *req)
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

unsigned long peer_counter(struct kunit *test, const char *name)
{
	char rel[64];

	snprintf(rel, sizeof(rel), "%s/ports/1/%s", peer_dev_name, name);
	return peer_read_ulong(test, "/sys/class/infiniband/%s", rel);
}

/* REQs in the device's queue of held REQs now (from the counters) */
unsigned long peer_rdv_occupancy(struct kunit *test)
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
unsigned long peer_rdv_wait_below(struct kunit *test,
				  unsigned long limit)
{
	unsigned long deadline = jiffies +
				 msecs_to_jiffies(PEER_TEST_AGE_MS + 2000);

	while (time_before(jiffies, deadline) &&
	       peer_rdv_occupancy(test) >= limit)
		msleep(100);
	return peer_rdv_occupancy(test);
}

MODULE_DESCRIPTION("Helpers of the IB CM peer-to-peer KUnit suites");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
MODULE_LICENSE("Dual BSD/GPL");
