// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Peer-to-peer connection establishment for the IB CM:
 * the listener of a peer service ID.
 */

#include <linux/slab.h>
#include <linux/workqueue.h>
#include <rdma/ib_cache.h>
#include "cm_priv.h"
#include "core_priv.h"

/*
 * On demand: a peer service ID with a listener.  A REQ no local peer id
 * of its key waits for, listed or held for, is the listener's, as in
 * client/server.  Its id keeps the key in the index while the connection
 * lasts: a peer connect of the same key is refused (cm_peer_taken()), so
 * that a pair never gets two connections.  The entry is allocated before
 * cm.lock is taken, on devices with peer service IDs; without it a peer
 * REQ is held, a client/server one rejected.
 */
void cm_peer_pending_alloc(struct cm_id_private *cm_id_priv)
{
	struct cm_peer_pending *pend;

	pend = kzalloc(sizeof(*pend), GFP_KERNEL);
	if (!pend)
		return;		/* as without a listener */
	RB_CLEAR_NODE(&pend->entry.node);
	pend->cm_id_priv = cm_id_priv;
	cm_id_priv->peer_pending = pend;
}

bool cm_peer_pending(struct cm_id_private *cm_id_priv)
{
	return cm_id_priv->peer_pending && cm_id_priv->peer_pending->node;
}

/* The first listener of @svc that takes a REQ; under cm.lock */
static struct cm_id_private *
cm_peer_find_listener(struct cm_peer_svc *svc,
		      const struct ib_gid_attr *gid_attr, const void *data)
{
	struct cm_id_private *listener;

	list_for_each_entry(listener, &svc->listeners, peer_listen_item) {
		if (!listener->peer_takes ||
		    listener->peer_takes(&listener->id, gid_attr, data))
			return listener;
	}
	return NULL;
}

/*
 * Called by cm_match_req() for a peer service ID's REQ, with the node
 * found (referenced), under cm.lock.  Returns the listener, referenced,
 * that the REQ goes to, or NULL for the peer path.  The REQ is delivered
 * with the listener's id as listen_id, so that ib_destroy_cm_id() of the
 * listener waits for it, as for any listener.
 */
struct cm_id_private *cm_peer_listener_takes(struct cm_id_private *node,
					     struct cm_id_private *cm_id_priv,
					     struct cm_req_msg *req_msg)
{
	const struct ib_gid_attr *gid_attr =
		rdma_ah_read_grh(&cm_id_priv->av.ah_attr)->sgid_attr;
	const void *data = IBA_GET_MEM_PTR(CM_REQ_PRIVATE_DATA, req_msg);
	struct cm_peer_pending *pend = cm_id_priv->peer_pending;
	struct cm_id_private *listener = NULL, *sib;
	struct cm_peer_svc *svc;
	struct cm_peer_req req;
	bool peer;

	lockdep_assert_held(&cm.lock);
	if (!pend)
		return NULL;
	cm_peer_parse_req(req_msg, &req);
	peer = IBA_GET(CM_REQ_PEER_TO_PEER, req_msg);
	/*
	 * From @node, the tree node, where REQs are held, in the ring's
	 * order, a longer key first: a REQ that a node's ids wait for or are
	 * held for is theirs; else its listener's, if one takes it (a REQ
	 * for another address waits on).
	 */
	for (sib = node; sib; sib = cm_peer_next_sibling(sib, node)) {
		if (peer && (cm_peer_first(&sib->peer_svc->index,
					   CM_PEER_WAITING, &req.key) ||
			     (sib == node &&
			      cm_peer_first(&sib->peer_svc->index,
					    CM_PEER_HELD, &req.key))))
			return NULL;
		listener = cm_peer_find_listener(sib->peer_svc, gid_attr, data);
		if (listener)
			break;
	}
	if (!sib)
		return NULL;
	svc = listener->peer_node->peer_svc;
	pend->entry.key = req.key;
	/* all of it: an id of another node compares its own length */
	memcpy(pend->match, req.key.match, sizeof(pend->match));
	pend->entry.key.match = pend->match;
	pend->peer = peer;
	pend->hands_back = READ_ONCE(listener->peer_hands_back);
	cm_peer_add(&svc->index, CM_PEER_PENDING, &pend->entry);
	/* the lookup's reference to the node becomes the new id's share */
	if (svc->node != node) {
		refcount_inc(&svc->node->refcount);
		cm_deref_id(node);
	}
	svc->node->listen_sharecount++;
	pend->node = svc->node;
	refcount_inc(&listener->refcount);
	return listener;
}

/*
 * A connection of @key that a listener of @node's service ID took, in
 * any of its nodes: -EALREADY while its REQ is unanswered, -EINPROGRESS
 * instead when the listener may hand it back to @node (a key as long as
 * the listener's, see cm_peer_redo_req()), -EISCONN after; 0 when there
 * is none.  An id that is idle (rejected or handed back) is about to
 * leave the index: it hides no other.  Under cm.lock.
 */
int cm_peer_taken(struct cm_id_private *node, const struct cm_peer_key *key)
{
	const struct cm_peer_index *idx = &node->peer_svc->index;
	struct cm_peer_entry *entry;
	struct cm_peer_pending *pend;
	struct cm_peer_index *from;
	struct cm_id_private *sib;

	lockdep_assert_held(&cm.lock);
	for (sib = node; sib; sib = cm_peer_next_sibling(sib, node)) {
		from = &sib->peer_svc->index;
		for (entry = cm_peer_first_in(from, CM_PEER_PENDING, idx, key);
		     entry; entry = cm_peer_next_in(from, idx, key, entry)) {
			pend = container_of(entry, struct cm_peer_pending,
					    entry);
			switch (READ_ONCE(pend->cm_id_priv->id.state)) {
			case IB_CM_IDLE:
				continue;
			case IB_CM_REQ_RCVD:
			case IB_CM_MRA_REQ_SENT:
				return pend->hands_back &&
				       idx->match_len >= from->match_len ?
				       -EINPROGRESS : -EALREADY;
			default:
				return -EISCONN;
			}
		}
	}
	return 0;
}

/*
 * The listener answered its REQ @pend otherwise than by handing it back.
 * The REQs that waited behind it, unsent (cm_peer_claim_req()), go now
 * (@go: rejected, its id destroyed, or its connection over), or fail at
 * once (accepted, or the device going away).  A REQ handed back comes to
 * them instead (cm_peer_redo_req()).  One not deferred yet is left to
 * cm_peer_post_req(), which looks again.  Each wait is compared under its
 * own node's key: @pend's match has CM_PEER_MATCH_MAX bytes.  Under
 * cm.lock.
 */
void cm_peer_unbehind(struct cm_peer_pending *pend, bool go)
{
	bool fail = !go || pend->node->peer_svc->cm_dev->going_down;
	const struct cm_peer_key *key = &pend->entry.key;
	struct cm_peer_entry *entry;
	struct cm_peer_index *from;
	struct cm_peer_wait *wait;
	struct cm_id_private *sib;

	lockdep_assert_held(&cm.lock);
	for (sib = pend->node; sib;
	     sib = cm_peer_next_sibling(sib, pend->node)) {
		from = &sib->peer_svc->index;
		for (entry = cm_peer_first(from, CM_PEER_WAITING, key); entry;
		     entry = cm_peer_next(from, entry)) {
			wait = container_of(entry, struct cm_peer_wait, entry);
			/* not deferred: cm_peer_post_req() looks again */
			if (!wait->behind || !wait->deferred)
				continue;
			if (fail) {
				cm_peer_window_fail(wait);
				continue;
			}
			list_del_init(&wait->window);
			wait->behind = false;
			cm_peer_requeue(wait);
		}
	}
}

/* The listener's id @cm_id_priv sent its REP: see cm_peer_unbehind(). */
void cm_peer_accepted(struct cm_id_private *cm_id_priv)
{
	struct cm_peer_pending *pend = cm_id_priv->peer_pending;

	lockdep_assert_held(&cm_id_priv->lock);
	if (!pend || !pend->hands_back || !pend->node)
		return;
	spin_lock(&cm.lock);
	if (!RB_EMPTY_NODE(&pend->entry.node))
		cm_peer_unbehind(pend, false);
	spin_unlock(&cm.lock);
}

/**
 * ib_cm_peer_hold_req - Hand a peer REQ a listener got back to its peer ids
 * @cm_id: The new cm_id of a peer listener's IB_CM_REQ_RECEIVED event
 *   (ib_cm_insert_peer_listen()), not answered.
 *
 * The listener gets a peer REQ that no peer id of its key waits for.  A
 * ULP whose own connect of that key has started, but is not known to the
 * CM yet (ib_cm_peer_expect(), ib_send_cm_peer_req()), hands the REQ back
 * instead of rejecting it: it goes on as if no listener had taken it,
 * matched with a peer id of its key that is there by now, or held for one
 * to claim, of the listener's node or a longer key's.  Nothing is sent for
 * @cm_id; a REQ that nobody claims expires as any held REQ.
 *
 * Context: Only from the IB_CM_REQ_RECEIVED handler of @cm_id, before it
 * answers; does not sleep.  The handler must then return non-zero, so
 * that @cm_id is destroyed.
 * Return: 0; -EINVAL when @cm_id is not such a cm_id, or its REQ is a
 * client/server one; -EOPNOTSUPP without CONFIG_INFINIBAND_CM_PEER.
 */
int ib_cm_peer_hold_req(struct ib_cm_id *cm_id)
{
	struct cm_id_private *cm_id_priv =
		container_of(cm_id, struct cm_id_private, id);
	struct cm_peer_pending *pend = cm_id_priv->peer_pending;
	int ret = -EINVAL;

	spin_lock_irq(&cm_id_priv->lock);
	if (cm_id->state == IB_CM_REQ_RCVD && cm_peer_pending(cm_id_priv) &&
	    pend->peer && !pend->hold) {
		/*
		 * Out of the remote tables, so that a retransmission is no
		 * dup, and of the listener's index (cm_peer_unlist()), as
		 * handed back: the REQs behind it wait for it.
		 */
		pend->hold = true;
		cm_reset_to_idle(cm_id_priv);
		ret = 0;
	}
	spin_unlock_irq(&cm_id_priv->lock);
	return ret;
}
EXPORT_SYMBOL(ib_cm_peer_hold_req);

/**
 * ib_cm_peer_listen_hands_back - Let connects wait for a listener's answer
 * @listen_id: A listener from ib_cm_insert_peer_listen().
 *
 * For a ULP whose listener hands back (ib_cm_peer_hold_req()) the REQs of
 * the connections it is connecting itself.  Its handler may run late,
 * behind another REQ's.  Meanwhile ib_send_cm_peer_req() of a key whose
 * REQ the listener has, unanswered, does not fail with -EALREADY: it
 * builds its REQ, which waits unsent for the listener's answer.  Handed
 * back, the listener's REQ comes to this connect, which turns passive;
 * rejected, or its cm_id destroyed, the waiting REQ goes; accepted, the
 * connect fails at once with IB_CM_REQ_ERROR.  Only connects of keys as
 * long as the listener's wait: a REQ handed back reaches no shorter one.
 * REQs that the listener got before this call are not waited for.
 *
 * Context: Process context; does not sleep.
 */
void ib_cm_peer_listen_hands_back(struct ib_cm_id *listen_id)
{
	struct cm_id_private *cm_id_priv =
		container_of(listen_id, struct cm_id_private, id);

	WRITE_ONCE(cm_id_priv->peer_hands_back, true);
}
EXPORT_SYMBOL(ib_cm_peer_listen_hands_back);

/**
 * ib_cm_insert_peer_listen - Listen on a peer service ID (on demand)
 * @device: Device the listener is on.
 * @cm_handler: Called with IB_CM_REQ_RECEIVED on a new cm_id, listen_id
 *   the returned cm_id, as for ib_cm_insert_listen(); every listener of
 *   @service_id uses the same.
 * @takes: Whether this listener takes a REQ, from the local GID it came to
 *   and its private data; NULL to take every one.  Called under a
 *   spinlock.
 * @context: The returned cm_id's context, for @takes.
 * @service_id: The service ID, in network byte order, peer ids may bind.
 * @match_len: As for ib_cm_peer_bind_mask().
 * @mask: As for ib_cm_peer_bind_mask().
 *
 * Like ib_cm_insert_listen(), for a service ID that peer ids bound with
 * ib_cm_peer_bind() share: a REQ that no peer id of the REQ's key waits
 * for (see ib_send_cm_peer_req()), and that is not held for one, goes to
 * @cm_handler as in client/server, through the first listener of the
 * service ID that @takes it.  A peer REQ that none takes is held for a
 * peer id; a client/server REQ is rejected.  While that connection lasts,
 * ib_send_cm_peer_req() with the same key fails, so that a pair never
 * gets two.  ib_destroy_cm_id() of the returned cm_id stops listening; it waits for
 * the REQ events being delivered through it.
 *
 * Context: Process context; may sleep.
 * Return: The listener's cm_id or an ERR_PTR: -EBUSY when a listener with
 * another handler is there; as ib_cm_peer_bind_mask() otherwise.
 */
struct ib_cm_id *ib_cm_insert_peer_listen(struct ib_device *device,
					  ib_cm_handler cm_handler,
					  ib_cm_peer_takes takes, void *context,
					  __be64 service_id, u8 match_len,
					  const u8 *mask)
{
	struct cm_id_private *cm_id_priv, *first;
	struct cm_peer_svc *svc;
	struct ib_cm_id *cm_id;
	int ret;

	cm_id = ib_create_cm_id(device, cm_handler, context);
	if (IS_ERR(cm_id))
		return cm_id;
	ret = ib_cm_peer_bind_mask(cm_id, service_id, match_len, mask);
	if (ret)
		goto err;
	cm_id_priv = container_of(cm_id, struct cm_id_private, id);
	svc = cm_id_priv->peer_node->peer_svc;
	spin_lock_irq(&cm.lock);
	first = list_first_entry_or_null(&svc->listeners,
					 struct cm_id_private, peer_listen_item);
	if (first && first->id.cm_handler != cm_handler) {
		ret = -EBUSY;
	} else {
		cm_id_priv->peer_takes = takes;
		list_add_tail(&cm_id_priv->peer_listen_item, &svc->listeners);
		cm_id_priv->peer_listen = true;
	}
	spin_unlock_irq(&cm.lock);
	if (ret)
		goto err;
	return cm_id;
err:
	ib_destroy_cm_id(cm_id);
	return ERR_PTR(ret);
}
EXPORT_SYMBOL(ib_cm_insert_peer_listen);
