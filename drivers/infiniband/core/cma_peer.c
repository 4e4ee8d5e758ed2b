// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Peer-to-peer connection establishment for the RDMA CM: both ends
 * rdma_connect(), the IB CM makes one connection of their two REQs.
 */

#include <linux/slab.h>
#include <linux/wait.h>
#include <rdma/rdma_cm.h>
#include <rdma/ib_cm.h>

#include "core_priv.h"
#include "cma_priv.h"
#include "cma_trace.h"

/*
 * Peer-to-peer: the peer's REQ turned our connecting id passive (see
 * ib_send_cm_peer_req()).  With a kernel QP, answer with a REP built from
 * what rdma_connect() was given; RTU then brings ESTABLISHED, carrying the
 * peer's private data.  Unlike cma_ib_req_handler() there is no new id to
 * set up: addresses and device are the id's own, and ib_cm took the
 * REQ's paths for the QP attributes (rdma_init_qp_attr()).  Without one
 * (user space), report CONNECT_RESPONSE: librdmacm moves the QP to RTR and
 * RTS and calls rdma_accept(), which sends the REP, exactly as it completes
 * an active connect.  Stock librdmacm reports ESTABLISHED to the
 * application then; one that asks for it is told at the RTU, see
 * rdma_peer_report_rtu().  Returns 0 when @event is to be reported.
 */
int cma_peer_passive(struct rdma_id_private *id_priv,
		     const struct ib_cm_event *ib_event,
		     struct rdma_cm_event *event)
{
	int offset = cma_user_data_offset(id_priv);
	int ret;

	if (!id_priv->peer || id_priv->peer_passive) {
		pr_err("RDMA CMA: unexpected IB CM event: %d\n",
		       ib_event->event);
		return -EINVAL;
	}
	id_priv->peer_passive = 1;
	/* ESTABLISHED reports it again, see cma_peer_established() */
	id_priv->peer_req_data = kmemdup(ib_event->private_data + offset,
					 IB_CM_REQ_PRIVATE_DATA_SIZE - offset,
					 GFP_KERNEL);
	if (!id_priv->peer_req_data) {
		ret = -ENOMEM;
		goto err;
	}
	cma_set_req_event_data(event, &ib_event->param.req_rcvd,
			       ib_event->private_data, offset);
	id_priv->peer_req_param = event->param.conn;
	id_priv->peer_req_param.private_data = id_priv->peer_req_data;
	if (!id_priv->id.qp) {
		trace_cm_send_mra(id_priv);
		ib_send_cm_mra(id_priv->cm_id.ib, CMA_CM_MRA_SETTING, NULL, 0);
		event->event = RDMA_CM_EVENT_CONNECT_RESPONSE;
		return 0;
	}

	/*
	 * A listener's ULP decides on the REQ's ECE (rdma_accept_ece()); ours
	 * sees no request: the REP carries ECE only if both REQs had the same.
	 */
	if (memcmp(&id_priv->ece, &ib_event->param.req_rcvd.ece,
		   sizeof(id_priv->ece)))
		memset(&id_priv->ece, 0, sizeof(id_priv->ece));
	/* nor more RDMA reads than the REQ offers, as a listener's ULP */
	id_priv->peer_param.responder_resources =
		min(id_priv->peer_param.responder_resources,
		    event->param.conn.responder_resources);
	id_priv->peer_param.initiator_depth =
		min(id_priv->peer_param.initiator_depth,
		    event->param.conn.initiator_depth);
	ret = cma_accept_ib(id_priv, &id_priv->peer_param);
	if (!ret)
		return -EINPROGRESS;
err:
	cma_modify_qp_err(id_priv);
	ib_send_cm_rej(id_priv->cm_id.ib, IB_CM_REJ_CONSUMER_DEFINED, NULL, 0,
		       NULL, 0);
	event->event = RDMA_CM_EVENT_CONNECT_ERROR;
	event->status = ret;
	return 0;
}

/* Keep what rdma_connect() was given: the passive end's REP uses it. */
static int cma_peer_save_param(struct rdma_id_private *id_priv,
			       const struct rdma_conn_param *conn_param)
{
	void *data = NULL;

	if (conn_param->private_data_len) {
		data = kmemdup(conn_param->private_data,
			       conn_param->private_data_len, GFP_KERNEL);
		if (!data)
			return -ENOMEM;
	}
	kfree(id_priv->peer_data);
	id_priv->peer_data = data;
	id_priv->peer_param = *conn_param;
	id_priv->peer_param.private_data = data;
	return 0;
}

/*
 * AF_IB ids have no rdma_cm header to match a REQ by: their peer node
 * would have another match length than the AF_INET ids' of the same
 * service ID, which live in another bind list, maybe another namespace.
 */
static bool cma_peer_af_ib(struct rdma_id_private *id_priv)
{
	return cma_src_addr(id_priv)->sa_family == AF_IB;
}

/* The peer model needs the IB CM: not on iWARP devices. */
static bool cma_peer_unsupported(struct rdma_id_private *id_priv)
{
	return id_priv->id.device &&
	       !rdma_cap_ib_cm(id_priv->id.device, id_priv->id.port_num);
}

/*
 * Whose share of the port's window our REQs take (ib_cm_peer_set_owner()):
 * a user's ids share one, each kernel ULP has its own.
 */
static unsigned long cma_peer_flow(struct rdma_id_private *id_priv)
{
	if (rdma_is_kernel_res(&id_priv->res))
		return (unsigned long)id_priv->id.event_handler;
	return from_kuid(&init_user_ns, id_priv->peer_uid);
}

/*
 * ib_cm compares rdma_cm's header whole, then the bytes of
 * rdma_set_peer_match() under their mask.  A wildcard listener's part on
 * a device has them in the listener.  Returns the match length; @mask
 * (IB_CM_REQ_PRIVATE_DATA_SIZE bytes) gets the mask.
 */
static u8 cma_peer_ib_mask(struct rdma_id_private *id_priv, u8 *mask)
{
	u8 offset = cma_user_data_offset(id_priv);

	if (id_priv->internal_id)
		id_priv = id_priv->id.context;
	memset(mask, 0xff, offset);
	if (id_priv->peer_match_len)
		memcpy(mask + offset,
		       id_priv->peer_match + id_priv->peer_match_len,
		       id_priv->peer_match_len);
	return offset + id_priv->peer_match_len;
}

/* The ULP's part of the key our REQ's answer has: rdma_set_peer_match() */
void cma_peer_match_key(const struct rdma_id_private *id_priv, void *key)
{
	if (id_priv->peer_match_len)
		memcpy(key, id_priv->peer_match, id_priv->peer_match_len);
}

/*
 * Would @a and @b of one 4-tuple take the same REQs?  Only ids that both
 * compare ULP bytes under the same mask, and differ there, are told
 * apart: under two masks one REQ may match both.  Under cma.c's lock.
 */
bool cma_peer_same_match(const struct rdma_id_private *a,
			 const struct rdma_id_private *b)
{
	const u8 *mask = a->peer_match + a->peer_match_len;
	u8 i;

	if (!a->peer_match_len || a->peer_match_len != b->peer_match_len ||
	    memcmp(mask, b->peer_match + b->peer_match_len, a->peer_match_len))
		return true;
	for (i = 0; i < a->peer_match_len; i++)
		if ((a->peer_match[i] ^ b->peer_match[i]) & mask[i])
			return false;
	return true;
}

/*
 * Bind the service ID of our own port as peer on the device as soon as the
 * device and port are known, so that a peer REQ that arrives before our
 * rdma_connect() is held for it; and once the remote address is known
 * (@dst), claim the 4-tuple.  The REQ we send goes to the service ID of
 * the remote port.  Called under handler_mutex.
 */
int cma_peer_bind(struct rdma_id_private *id_priv, bool dst)
{
	u8 mask[IB_CM_REQ_PRIVATE_DATA_SIZE];
	struct ib_cm_id *id;
	int ret = 0;
	u8 len;

	if (!id_priv->peer || !id_priv->id.device ||
	    cma_peer_unsupported(id_priv))
		return 0;
	if (cma_peer_af_ib(id_priv))
		return -EAFNOSUPPORT;
	if (dst) {
		ret = cma_peer_claim_tuple(id_priv);
		if (ret)
			return ret;
	}
	if (id_priv->cm_id.ib)
		return 0;
	id = ib_create_cm_id(id_priv->id.device, cma_ib_handler, id_priv);
	if (IS_ERR(id)) {
		ret = PTR_ERR(id);
		goto err;
	}
	len = cma_peer_ib_mask(id_priv, mask);
	ret = ib_cm_peer_bind_mask(id, rdma_get_service_id(&id_priv->id,
							   cma_src_addr(id_priv)),
				   len, mask);
	if (ret) {
		ib_destroy_cm_id(id);
		goto err;
	}
	ib_cm_peer_set_owner(id, cma_peer_flow(id_priv));
	id_priv->cm_id.ib = id;
	return 0;
err:
	cma_peer_release_tuple(id_priv);
	return ret;
}

/* Undo cma_peer_bind(), under handler_mutex. */
static void cma_peer_unbind(struct rdma_id_private *id_priv)
{
	if (id_priv->cm_id.ib) {
		ib_destroy_cm_id(id_priv->cm_id.ib);
		id_priv->cm_id.ib = NULL;
	}
	cma_peer_release_tuple(id_priv);
}

/*
 * The address query failed after a RoCE id was listed by its key
 * (cma_peer_expect()): the next query may have another remote address.
 * The bind stays: ucma reads cm_id.ib without handler_mutex.  Under
 * handler_mutex.
 */
void cma_peer_addr_error(struct rdma_id_private *id_priv)
{
	if (!id_priv->peer_bound)
		return;
	if (id_priv->cm_id.ib)
		ib_cm_peer_unexpect(id_priv->cm_id.ib);
	cma_peer_release_tuple(id_priv);
}

/*
 * rdma_listen() with the option set (on demand): the listener takes the
 * REQs to its port that no peer id waits for.  It shares its port with
 * the peer ids that connect from it, and only with them: unlike other
 * listeners it stays reusable for them.  The early peer bind is dropped,
 * the listener binds the service ID instead (ib_cm_insert_peer_listen()).
 */
int cma_peer_listen(struct rdma_id_private *id_priv)
{
	/*
	 * A wildcard listener's part on a device has no port number:
	 * cma_listen_on_dev() checked the device, and the listener the rest.
	 */
	if (id_priv->internal_id)
		return 0;
	if (cma_peer_unsupported(id_priv))
		return -EOPNOTSUPP;
	if (cma_peer_af_ib(id_priv))
		return -EAFNOSUPPORT;
	mutex_lock(&id_priv->handler_mutex);
	cma_peer_unbind(id_priv);
	mutex_unlock(&id_priv->handler_mutex);
	if (!id_priv->reuseaddr)
		return 0;
	return cma_peer_listen_port(id_priv);
}

/*
 * The IB CM listener of a peer listener, or of its part on a device.  A
 * kernel ULP's may hand REQs back (rdma_peer_hold_req()): its connects
 * wait for its answer.  User space's answers only by accept or reject.
 */
struct ib_cm_id *cma_peer_ib_listen(struct rdma_id_private *id_priv,
				    ib_cm_handler handler, __be64 svc_id)
{
	u8 mask[IB_CM_REQ_PRIVATE_DATA_SIZE];
	u8 len = cma_peer_ib_mask(id_priv, mask);
	struct ib_cm_id *listen;

	listen = ib_cm_insert_peer_listen(id_priv->id.device, handler,
					  cma_peer_takes, id_priv, svc_id, len,
					  mask);
	if (!IS_ERR(listen) && rdma_is_kernel_res(&id_priv->res))
		ib_cm_peer_listen_hands_back(listen);
	return listen;
}

/*
 * Does our peer listener take a REQ that no peer id waits for?  Only one
 * for its own address and namespace, as cma_find_listener() would pick
 * it: a REQ for another address of the port waits for its peer id there,
 * maybe another user's.  A GID without a netdev (IB) tells no namespace:
 * only the initial one's listeners take such REQs.  Under ib_cm's lock.
 */
bool cma_peer_takes(struct ib_cm_id *listen_id,
		    const struct ib_gid_attr *gid_attr, const void *private_data)
{
	struct rdma_id_private *id_priv = listen_id->context;
	struct net *net = id_priv->id.route.addr.dev_addr.net;
	struct net_device *ndev;
	bool ret;

	if (!cma_match_private_data(id_priv, private_data))
		return false;
	if (!gid_attr)
		return net_eq(net, &init_net);
	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(gid_attr);
	ret = net_eq(IS_ERR(ndev) ? &init_net : dev_net(ndev), net);
	rcu_read_unlock();
	return ret;
}

/* The cm_id of rdma_connect(): the id's peer bind, made at latest here. */
struct ib_cm_id *cma_peer_cm_id(struct rdma_id_private *id_priv,
				const struct rdma_conn_param *conn_param)
{
	int ret;

	ret = cma_peer_save_param(id_priv, conn_param);
	if (!ret)
		ret = cma_peer_bind(id_priv, true);
	return ret ? ERR_PTR(ret) : id_priv->cm_id.ib;
}

/*
 * rdma_peer_accepted() waits this long at most: below the local ACK
 * timeout it saves (537 ms on RoCE); above the REP-to-RTU time of slow
 * hosts (up to 300 ms seen in emulated VMs).
 */
#define CMA_PEER_RTU_WAIT_MS	500

/*
 * RTU: ESTABLISHED with the peer REQ's private data and parameters, as a
 * listener's CONNECT_REQUEST has them, for a kernel QP or when user space
 * asked for it (rdma_peer_report_rtu()).  Stock librdmacm was told when
 * its accept returned: no second ESTABLISHED.  Returns 0 when @event is
 * to be reported, as cma_peer_passive().
 */
int cma_peer_established(struct rdma_id_private *id_priv,
			 struct rdma_cm_event *event)
{
	if (!id_priv->id.qp && !id_priv->peer_rtu_event) {
		if (id_priv->peer_wq)
			wake_up_interruptible(id_priv->peer_wq);
		return -EALREADY;
	}
	event->param.conn = id_priv->peer_req_param;
	return 0;
}

static bool cma_peer_rep_out(struct ib_cm_id *cm_id)
{
	enum ib_cm_state state = READ_ONCE(cm_id->state);

	return state == IB_CM_REP_SENT || state == IB_CM_MRA_REP_RCVD;
}

/**
 * rdma_peer_accepted - Wait for the RTU of a passive peer end's REP
 * @id: Communication identifier whose rdma_accept() has returned.
 * @wq: The caller's wait queue, woken when @events gets one.
 * @events: The caller's queue of events for its event thread.
 *
 * A passive peer end in user space completes its connect as an active end
 * does (see cma_peer_passive()): librdmacm reports ESTABLISHED once its
 * accept returns, which is when the REP is sent.  A SEND posted then
 * reaches the other end before that end's QP is ready to receive and is
 * dropped; it goes again only after the local ACK timeout (537 ms on
 * RoCE).  ucma's accept calls this after the REP went, so that the event
 * comes once the RTU arrived, as a listener's ESTABLISHED does: the other
 * end's QP is then ready.
 *
 * The wait blocks the caller's event thread, so it lasts only while that
 * thread has nothing else to do: it ends when @events is not empty, as
 * well as at the RTU, a signal or 500 ms.  Two processes each waiting for
 * the other's RTU would otherwise stall each other, as the RTU each waits
 * for is sent once the other's REP, queued behind, is handled.  Only the
 * RTU and @events wake it: a REJ or DREQ we send meanwhile does not.  Any
 * other id returns at once.  The caller keeps @id from being destroyed
 * meanwhile (ucma holds its context), as cm_id.ib is read without the
 * id's locks.  @wq is reached by the RTU's handler under the id's
 * handler_mutex, and only during this call.
 *
 * Context: Process context, without the id's handler lock; may sleep.
 */
void rdma_peer_accepted(struct rdma_cm_id *id, struct wait_queue_head *wq,
			const struct list_head *events)
{
	struct rdma_id_private *id_priv =
		container_of(id, struct rdma_id_private, id);
	struct ib_cm_id *cm_id = id_priv->cm_id.ib;

	if (!id_priv->peer || id->qp || !id->device ||
	    !rdma_cap_ib_cm(id->device, id->port_num) || !cm_id ||
	    !cma_peer_rep_out(cm_id))
		return;
	/* the RTU's handler wakes @wq under handler_mutex */
	mutex_lock(&id_priv->handler_mutex);
	id_priv->peer_wq = wq;
	mutex_unlock(&id_priv->handler_mutex);
	wait_event_interruptible_timeout(*wq, !cma_peer_rep_out(cm_id) ||
					 !list_empty(events),
					 msecs_to_jiffies(CMA_PEER_RTU_WAIT_MS));
	mutex_lock(&id_priv->handler_mutex);
	id_priv->peer_wq = NULL;
	mutex_unlock(&id_priv->handler_mutex);
}
EXPORT_SYMBOL(rdma_peer_accepted);

/**
 * rdma_peer_passive - Whether the other end's REQ made a peer id passive
 * @id: Communication identifier.
 *
 * ucma flags the CONNECT_RESPONSE of such an id, so that librdmacm can tell
 * it from the answer to an active connect: it has to accept it, and may
 * ask with rdma_peer_report_rtu() for ESTABLISHED at the RTU.
 *
 * Context: Under the id's handler lock, as in its event handler.
 * Return: true once the peer REQ made @id passive.
 */
bool rdma_peer_passive(struct rdma_cm_id *id)
{
	struct rdma_id_private *id_priv =
		container_of(id, struct rdma_id_private, id);

	return id_priv->peer_passive;
}
EXPORT_SYMBOL(rdma_peer_passive);

/**
 * rdma_peer_hold_req - Hold a peer listener's REQ for a connect of ours
 * @id: The new id of a CONNECT_REQUEST to a listener with the peer option,
 *   neither accepted nor rejected.
 *
 * The listener gets the peer REQs that no connect of ours waits for yet.
 * A ULP whose own connect of that connection has started, its address or
 * route still resolving, calls this from the event handler instead of
 * rejecting the REQ: the REQ is held for that connect, which claims it in
 * rdma_connect() and turns passive, as for a REQ that came with no
 * listener.  Nothing is sent; a REQ that no connect claims expires as any
 * held REQ.  The handler then returns non-zero, which destroys @id.  The
 * handler may run late, behind another REQ's: meanwhile rdma_connect() of
 * that connection does not fail with -EALREADY as in user space, its REQ
 * waits unsent for the listener's answer (ib_cm_peer_listen_hands_back()):
 * handed back, it turns passive; rejected, its REQ goes; accepted, it
 * fails at once with RDMA_CM_EVENT_UNREACHABLE.
 *
 * Context: Only from the RDMA_CM_EVENT_CONNECT_REQUEST handler of @id (its
 * handler_mutex held), before it accepts or rejects; does not sleep.
 * Return: 0; -EINVAL when @id is not such an id, or its REQ is not a peer
 * REQ; -EOPNOTSUPP without CONFIG_INFINIBAND_CM_PEER.
 */
int rdma_peer_hold_req(struct rdma_cm_id *id)
{
	struct rdma_id_private *id_priv =
		container_of(id, struct rdma_id_private, id);

	lockdep_assert_held(&id_priv->handler_mutex);
	if (id_priv->state != RDMA_CM_CONNECT || !id->device ||
	    !rdma_cap_ib_cm(id->device, id->port_num) || !id_priv->cm_id.ib)
		return -EINVAL;
	return ib_cm_peer_hold_req(id_priv->cm_id.ib);
}
EXPORT_SYMBOL(rdma_peer_hold_req);

/**
 * rdma_peer_report_rtu - Report a passive peer end's RTU as ESTABLISHED
 * @id: Communication identifier about to rdma_accept() its CONNECT_RESPONSE.
 *
 * A passive peer end without a QP on its id (user space) gets no event at
 * the RTU: stock librdmacm reports ESTABLISHED when its accept returns.  A
 * caller that would rather be told when the other end's QP is ready, as a
 * listener's accepted id is, calls this before rdma_accept(); the RTU
 * then brings ESTABLISHED with the other end's private data and
 * parameters.
 *
 * Context: Under the id's handler lock, before rdma_accept().
 * Return: 0, or -EINVAL for any other id: its caller would wait for an
 * event that never comes.
 */
int rdma_peer_report_rtu(struct rdma_cm_id *id)
{
	struct rdma_id_private *id_priv =
		container_of(id, struct rdma_id_private, id);

	if (!id_priv->peer_passive || id->qp)
		return -EINVAL;
	id_priv->peer_rtu_event = 1;
	return 0;
}
EXPORT_SYMBOL(rdma_peer_report_rtu);

/**
 * rdma_set_peer_match - Tell apart peer connections that share a 4-tuple
 * @id: Communication identifier, RC, without the peer option yet.
 * @match: What the other end's private data starts with on this id's
 *   connection; NULL for zeros, as a listener has no connection.
 * @mask: The bits of @match that count; NULL for all.
 * @len: Bytes of @match and @mask; 0 for the 4-tuple alone.
 *
 * A peer id takes the peer REQs from the remote address and port it
 * connects to (rdma_set_peer_to_peer()).  A ULP with several connections
 * between one pair of addresses and ports (RDS has one per type of
 * service) tells them apart by private data: a peer REQ then goes to the
 * id whose @match the REQ's private data has under @mask, and two ids of
 * one 4-tuple may differ there, when they give the same @len and @mask.
 * A REQ that no id expects goes to the listener.
 *
 * Context: Process context; may sleep.
 * Return: 0; -EINVAL for a non-RC id, an id with the option, or @len
 * beyond the private data a REQ carries; -ENOMEM.
 */
int rdma_set_peer_match(struct rdma_cm_id *id, const void *match,
			const void *mask, u8 len)
{
	struct rdma_id_private *id_priv =
		container_of(id, struct rdma_id_private, id);
	u8 *key = NULL;
	int ret = 0;

	if (id->qp_type != IB_QPT_RC ||
	    len > IB_CM_REQ_PRIVATE_DATA_SIZE - cma_user_data_offset(id_priv))
		return -EINVAL;
	if (len) {
		key = kzalloc(2 * len, GFP_KERNEL);
		if (!key)
			return -ENOMEM;
		if (match)
			memcpy(key, match, len);
		if (mask)
			memcpy(key + len, mask, len);
		else
			memset(key + len, 0xff, len);
	}
	/* fixed while the option is on: cma.c's lock reads it then */
	mutex_lock(&id_priv->handler_mutex);
	if (id_priv->peer) {
		ret = -EINVAL;
	} else {
		swap(id_priv->peer_match, key);
		id_priv->peer_match_len = len;
	}
	mutex_unlock(&id_priv->handler_mutex);
	kfree(key);
	return ret;
}
EXPORT_SYMBOL(rdma_set_peer_match);

/**
 * rdma_set_peer_to_peer - Connect in the peer-to-peer model
 * @id: Communication identifier, RC, not connected yet.
 * @enable: Peer-to-peer on or off.
 *
 * With the option on, rdma_connect() sends a peer REQ: each end binds its
 * own address and port, resolves the other's and calls rdma_connect(), in
 * any order or at once; the IB CM resolves a REQ collision and both ends
 * get RDMA_CM_EVENT_ESTABLISHED on their own id, no CONNECT_REQUEST and no
 * second id.  The id takes the REQs for its own port's service ID that
 * come from the remote address and port it connects to; several ids may
 * share a local port (RDMA_OPTION_ID_REUSEADDR before rdma_bind_addr()),
 * one per remote address and port, and only ids of one owner (the
 * effective uid that created them; root for kernel ids): a bind that would
 * share an address and port with another user's ids, or the option on an
 * id that shares them, fails.  AF_IB ids cannot take the option.  The end
 * that turns passive answers with what it passed to rdma_connect()
 * (private data, responder resources, initiator depth, RNR retry count)
 * and sees the other end's REQ private data with ESTABLISHED; the active
 * end sees the passive end's in its REP.  The port's service ID is bound as
 * peer as soon as the device and port are known (at once, at
 * rdma_bind_addr() to a device's address, or when address resolution
 * completes), so a peer REQ that arrives before our rdma_connect() waits
 * for it, whatever the order of the calls; the 4-tuple is claimed once the
 * remote address is known.  A peer REQ rejected because the other end has
 * not bound its port yet is sent again, with backoff, within the connect's
 * usual timeout; after it, RDMA_CM_EVENT_REJECTED (status
 * IB_CM_REJ_INVALID_SERVICE_ID).  Set before rdma_listen(), the listener
 * shares its port with the peer ids that connect from it (on demand; all
 * with RDMA_OPTION_ID_REUSEADDR): a REQ that no peer id of the port waits
 * for is a CONNECT_REQUEST of the listener, and while that connection
 * lasts rdma_connect() of a peer id to the same remote address and port
 * fails (-EALREADY, then -EISCONN; a kernel ULP's connect waits for the
 * listener's answer instead, see rdma_peer_hold_req()).  IB CM devices
 * only (IB, RoCE): on an id bound to an iWARP device the option fails,
 * and rdma_connect() or rdma_listen() of an id with the option that got
 * an iWARP device fails, with -EOPNOTSUPP.
 *
 * Context: Process context; may sleep.  With the option, rdma_bind_addr()
 * and rdma_resolve_addr() take the id's handler lock, as rdma_connect()
 * does: not from an event handler.
 * Return: 0; -EINVAL for a non-RC or listening id; -EISCONN once
 * rdma_connect() was called; -EADDRINUSE when another peer id has the same
 * local and remote address and port, or when the id shares its address
 * and port with an id of another owner; -EAFNOSUPPORT for a bound AF_IB
 * id (an idle one fails at rdma_connect() or rdma_listen());
 * -EOPNOTSUPP without peer-to-peer support or on a device without the IB
 * CM.
 */
int rdma_set_peer_to_peer(struct rdma_cm_id *id, bool enable)
{
	struct rdma_id_private *id_priv =
		container_of(id, struct rdma_id_private, id);
	enum rdma_cm_state state;
	int ret = 0;
	bool dst;

	if (id->qp_type != IB_QPT_RC)
		return -EINVAL;

	mutex_lock(&id_priv->handler_mutex);
	state = READ_ONCE(id_priv->state);
	switch (state) {
	case RDMA_CM_IDLE:
	case RDMA_CM_ADDR_BOUND:
	case RDMA_CM_ADDR_QUERY:
	case RDMA_CM_ADDR_RESOLVED:
	case RDMA_CM_ROUTE_QUERY:
	case RDMA_CM_ROUTE_RESOLVED:
		if (enable == id_priv->peer)
			break;
		if (enable && cma_peer_unsupported(id_priv)) {
			ret = -EOPNOTSUPP;
			break;
		}
		id_priv->peer = enable;
		if (!enable) {
			cma_peer_unbind(id_priv);
			cma_peer_own_port(id_priv, false);
			break;
		}
		/* the remote address is known from ADDR_RESOLVED on */
		dst = state != RDMA_CM_IDLE && state != RDMA_CM_ADDR_BOUND &&
		      state != RDMA_CM_ADDR_QUERY;
		ret = cma_peer_own_port(id_priv, true);
		if (!ret)
			ret = cma_peer_bind(id_priv, dst);
		if (ret) {
			id_priv->peer = 0;
			cma_peer_own_port(id_priv, false);
		} else if (dst) {
			cma_peer_expect(id_priv);
		}
		break;
	case RDMA_CM_LISTEN:
		ret = -EINVAL;
		break;
	default:
		ret = -EISCONN;
		break;
	}
	mutex_unlock(&id_priv->handler_mutex);
	return ret;
}
EXPORT_SYMBOL(rdma_set_peer_to_peer);
