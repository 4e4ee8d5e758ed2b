// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Peer-to-peer connection establishment for the IB CM:
 * peer service IDs, REQ collisions, held REQs.
 */

#include <linux/delay.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <rdma/ib_cache.h>
#include <kunit/visibility.h>
#include "cm_priv.h"
#include "cm_peer_test.h"
#include "core_priv.h"
#include "cm_trace.h"

static void cm_peer_reject_held(struct list_head *list);
static void cm_peer_resend_handler(struct work_struct *_work);
static void cm_peer_resend_now(struct cm_id_private *cm_id_priv);
static void cm_peer_stay_active(struct cm_id_private *cm_id_priv);
static void cm_peer_lost_handler(struct work_struct *_work);

bool cm_peer_listed(struct cm_id_private *cm_id_priv)
{
	return cm_id_priv->peer_wait &&
	       !RB_EMPTY_NODE(&cm_id_priv->peer_wait->entry.node);
}

void cm_peer_unlist(struct cm_id_private *cm_id_priv)
{
	struct cm_peer_pending *pend = cm_id_priv->peer_pending;

	lockdep_assert_held(&cm.lock);
	if (cm_peer_listed(cm_id_priv)) {
		cm_peer_window_del(cm_id_priv);
		cm_peer_del(&cm_id_priv->peer_node->peer_svc->index,
			    CM_PEER_WAITING, &cm_id_priv->peer_wait->entry);
	}
	if (pend && pend->node && !RB_EMPTY_NODE(&pend->entry.node)) {
		cm_peer_del(&pend->node->peer_svc->index, CM_PEER_PENDING,
			    &pend->entry);
		if (pend->hands_back && !pend->hold)
			cm_peer_unbehind(pend, true);
	}
	/* before cm_destroy_id() waits for the REQs delivered through it */
	if (cm_id_priv->peer_listen)
		list_del_init(&cm_id_priv->peer_listen_item);
}

static int cm_peer_node_handler(struct ib_cm_id *cm_id,
				const struct ib_cm_event *event)
{
	return 0;	/* never called: peer ids take the node's REQs over */
}

static int cm_peer_node_cmp(const void *key, const struct rb_node *rb)
{
	u64 sid = be64_to_cpu(*(const __be64 *)key);
	u64 cur = be64_to_cpu(rb_entry(rb, struct cm_id_private,
				       service_node)->id.service_id);

	return sid < cur ? -1 : sid > cur;
}

static int cm_peer_node_cmp_rb(struct rb_node *a, const struct rb_node *b)
{
	return cm_peer_node_cmp(&rb_entry(a, struct cm_id_private,
					  service_node)->id.service_id, b);
}

/* Are a service ID's REQs told apart by @match_len bytes under @mask? */
static bool cm_peer_same_match(const struct cm_peer_svc *svc, u8 match_len,
			       const u8 *mask)
{
	if (svc->index.match_len != match_len ||
	    !svc->index.match_mask != !mask)
		return false;
	return !mask || !memcmp(svc->match_mask, mask, match_len);
}

/*
 * Put @node in the ring of @head's service ID, which goes from the node in
 * the tree down by match length: a REQ is offered first to the ids that
 * compare most of it.  Under cm.lock.
 */
static void cm_peer_add_sibling(struct cm_id_private *node,
				struct cm_id_private *head, struct rb_root *tree)
{
	u8 len = node->peer_svc->index.match_len;
	struct cm_id_private *sib;

	for (sib = head; sib; sib = cm_peer_next_sibling(sib, head))
		if (sib->peer_svc->index.match_len < len)
			break;
	list_add_tail(&node->peer_svc->siblings,
		      &(sib ?: head)->peer_svc->siblings);
	if (sib == head) {
		rb_replace_node(&head->service_node, &node->service_node, tree);
		RB_CLEAR_NODE(&head->service_node);
		cm_peer_rehold(&head->peer_svc->index, &node->peer_svc->index);
	}
}

/*
 * The node of @service_id on @cm_dev that compares @match_len bytes under
 * @mask: shared, or a new one, a sibling of the others of @service_id.
 */
static struct cm_id_private *cm_peer_node_get(struct cm_device *cm_dev,
					      __be64 service_id, u8 match_len,
					      const u8 *mask)
{
	struct cm_id_private *node, *head, *cur = NULL;
	struct rb_node *rb;

	node = cm_alloc_id_priv(cm_dev->ib_device, cm_peer_node_handler, NULL);
	if (IS_ERR(node))
		return node;
	node->peer_svc = kzalloc(struct_size(node->peer_svc, match_mask,
					     mask ? match_len : 0), GFP_KERNEL);
	if (!node->peer_svc) {
		ib_destroy_cm_id(&node->id);
		return ERR_PTR(-ENOMEM);
	}
	cm_peer_index_init(&node->peer_svc->index, match_len);
	if (mask) {
		memcpy(node->peer_svc->match_mask, mask, match_len);
		cm_peer_index_mask(&node->peer_svc->index,
				   node->peer_svc->match_mask);
	}
	INIT_LIST_HEAD(&node->peer_svc->listeners);
	INIT_LIST_HEAD(&node->peer_svc->siblings);
	node->peer_svc->node = node;
	kref_get(&cm_dev->kref);
	node->peer_svc->cm_dev = cm_dev;
	atomic_inc(&cm_dev->peer_nodes);
	node->id.service_id = service_id;

	spin_lock_irq(&cm.lock);
	rb = rb_find_add(&node->service_node, &cm_dev->peer_node_tree,
			 cm_peer_node_cmp_rb);
	head = rb ? rb_entry(rb, struct cm_id_private, service_node) : NULL;
	if (head) {
		for (cur = head; cur; cur = cm_peer_next_sibling(cur, head))
			if (cm_peer_same_match(cur->peer_svc, match_len, mask))
				break;
		if (cur) {
			refcount_inc(&cur->refcount);
			cur->listen_sharecount++;
		} else {
			cm_peer_add_sibling(node, head, &cm_dev->peer_node_tree);
		}
	}
	if (!cur)
		node->listen_sharecount = 1;
	spin_unlock_irq(&cm.lock);
	if (!cur)
		return node;
	ib_destroy_cm_id(&node->id);
	return cur;
}

/*
 * Give back a share of @node, a reference included; the last one unbinds
 * the service ID.
 */
static void cm_peer_node_put(struct cm_id_private *node)
{
	struct cm_device *cm_dev = node->peer_svc->cm_dev;
	struct cm_id_private *next;
	bool last;

	spin_lock_irq(&cm.lock);
	last = !--node->listen_sharecount;
	if (last && !RB_EMPTY_NODE(&node->service_node)) {
		next = cm_peer_next_sibling(node, node);
		if (next) {
			rb_replace_node(&node->service_node,
					&next->service_node,
					&cm_dev->peer_node_tree);
			cm_peer_rehold(&node->peer_svc->index,
				       &next->peer_svc->index);
		} else {
			rb_erase(&node->service_node, &cm_dev->peer_node_tree);
		}
		RB_CLEAR_NODE(&node->service_node);
	}
	if (last)
		list_del_init(&node->peer_svc->siblings);
	spin_unlock_irq(&cm.lock);
	if (last)
		ib_destroy_cm_id(&node->id);
	else
		cm_deref_id(node);
}

/*
 * Where a REQ to a service ID goes, under cm.lock: a peer REQ to the peer
 * node, and to @listen only when there is none (a peer REQ answered in the
 * client/server model); a client/server REQ to @listen, and to the node
 * only when there is no listener: the node rejects it at once unless a
 * peer listener takes it.  Returns the one referenced, drops the other.
 */
struct cm_id_private *cm_peer_route_req(struct cm_work *work,
					struct cm_id_private *listen)
{
	struct cm_req_msg *req_msg =
		(struct cm_req_msg *)work->mad_recv_wc->recv_buf.mad;
	__be64 sid = cpu_to_be64(IBA_GET(CM_REQ_SERVICE_ID, req_msg));
	struct cm_id_private *node;
	struct rb_node *rb;

	lockdep_assert_held(&cm.lock);
	if (listen && !IBA_GET(CM_REQ_PEER_TO_PEER, req_msg))
		return listen;
	rb = rb_find(&sid, &work->port->cm_dev->peer_node_tree,
		     cm_peer_node_cmp);
	if (!rb)
		return listen;
	if (listen)
		cm_deref_id(listen);
	node = rb_entry(rb, struct cm_id_private, service_node);
	refcount_inc(&node->refcount);
	return node;
}

/* The last peer id of a node went: reject what is held for it. */
static void cm_peer_node_free(struct cm_id_private *node)
{
	struct cm_peer_svc *svc = node->peer_svc;
	struct cm_peer_entry *entry;
	struct cm_peer_held *held;
	struct rb_node *rb;
	LIST_HEAD(list);

	spin_lock_irq(&cm.lock);
	while ((rb = rb_first(&svc->index.root[CM_PEER_HELD]))) {
		entry = rb_entry(rb, struct cm_peer_entry, node);
		held = container_of(entry, struct cm_peer_held, entry);
		cm_peer_unhold(&svc->cm_dev->peer_held, held);
		list_add_tail(&held->list, &list);
	}
	spin_unlock_irq(&cm.lock);
	cm_peer_reject_held(&list);
	atomic_dec(&svc->cm_dev->peer_nodes);
	cm_device_put(svc->cm_dev);
	kfree(svc);
}

/*
 * ib_destroy_cm_id() of a peer id, a node, a peer listener or a listener's
 * id, once nobody uses it: give back its share of the node.
 */
void cm_peer_unbind(struct cm_id_private *cm_id_priv)
{
	struct cm_peer_pending *pend = cm_id_priv->peer_pending;

	if (cm_id_priv->peer_svc)
		cm_peer_node_free(cm_id_priv);
	if (pend) {
		if (pend->node)
			cm_peer_node_put(pend->node);
		kfree(pend);
	}
	if (!cm_id_priv->peer_node)
		return;
	cm_peer_node_put(cm_id_priv->peer_node);
	kfree(cm_id_priv->peer_wait);
}

/*
 * Peer-to-peer connection establishment (IBTA Vol 1, chapter 12).
 *
 * A peer id binds its own service ID (ib_cm_peer_bind()), a node of its
 * device's peer_node_tree, and sends its REQ to the other end's service ID
 * with ib_send_cm_peer_req().  A REQ that reaches a peer node is matched
 * with a peer id of that node waiting for it, by key: the two port GIDs
 * and the first match_len bytes of the REQ's private data, as the peer id
 * expects them (cm_peer_find_peer()).  The arbiter (cm_peer_arbitrate())
 * then picks the role of this end: active drops the received REQ and waits
 * for the REP to its own; passive cancels its own REQ, takes over the
 * received one on the same cm_id (state REQ_RCVD, IB_CM_REQ_RECEIVED with
 * listen_id == the cm_id) and the ULP answers it with ib_send_cm_rep().  A
 * peer REQ that matches no waiting id is held in the node's index;
 * ib_send_cm_peer_req() claims it by the same key and turns passive
 * without sending a REQ, or the REQ expires and is rejected.  Only a
 * retransmission of a held REQ is answered with an MRA (or a REQ that is
 * never resent): most holds end within the sender's first timeout, and a
 * storm of MRAs would compete with the REQs for the GSI receive queues.
 */

void cm_peer_count(struct cm_port *port, int index)
{
	atomic_long_inc(&port->counters[CM_PEER][index]);
}

void cm_peer_parse_req(struct cm_req_msg *req_msg, struct cm_peer_req *req)
{
	u8 timeout, ack;

	req->key.local_gid =
		*IBA_GET_MEM_PTR(CM_REQ_PRIMARY_REMOTE_PORT_GID, req_msg);
	req->key.remote_gid =
		*IBA_GET_MEM_PTR(CM_REQ_PRIMARY_LOCAL_PORT_GID, req_msg);
	req->key.match = IBA_GET_MEM_PTR(CM_REQ_PRIVATE_DATA, req_msg);
	req->remote.ca_guid =
		cpu_to_be64(IBA_GET(CM_REQ_LOCAL_CA_GUID, req_msg));
	req->remote.qpn = IBA_GET(CM_REQ_LOCAL_QPN, req_msg);
	req->comm_id = cpu_to_be32(IBA_GET(CM_REQ_LOCAL_COMM_ID, req_msg));
	req->remote.comm_id = req->comm_id;
	/* held as long as its sender waits for an answer (cm_send_req()) */
	timeout = IBA_GET(CM_REQ_REMOTE_CM_RESPONSE_TIMEOUT, req_msg);
	ack = IBA_GET(CM_REQ_PRIMARY_LOCAL_ACK_TIMEOUT, req_msg);
	req->age_ms = (cm_convert_to_ms(timeout) + cm_convert_to_ms(ack)) *
		      (IBA_GET(CM_REQ_MAX_CM_RETRIES, req_msg) + 1);
}

/*
 * The oldest id of @idx waiting for the REQ @req, referenced, and our role.
 * An id listed but whose REQ is not out yet is skipped: the REQ is held
 * and cm_peer_list() claims it; unless our REQ waits for the window or
 * behind the listener's REQ, then we take the passive role.  On one
 * device our own REQ may come back.  An id whose REQ the arbiter cannot
 * order against @req comes with -ENOTUNIQ.
 * *@listed tells whether any id of @idx has the REQ's key.
 */
static struct cm_id_private *cm_peer_find_in(struct cm_peer_index *idx,
					     const struct cm_peer_req *req,
					     int *role, bool *listed)
{
	struct cm_peer_entry *entry;
	struct cm_peer_wait *wait;

	entry = cm_peer_first(idx, CM_PEER_WAITING, &req->key);
	*listed = entry;
	for (; entry; entry = cm_peer_next(idx, entry)) {
		wait = container_of(entry, struct cm_peer_wait, entry);
		if (wait->deferred && !list_empty(&wait->window)) {
			/* failed behind the listener's REQ, about to end */
			if (wait->behind &&
			    time_after_eq(jiffies, wait->deadline))
				continue;
			/* ours never left: no arbitration, we give way */
			list_del_init(&wait->window);
			wait->behind = false;
			*role = CM_PEER_PASSIVE;
			/* the unposted REQ holds a reference */
			refcount_inc(&wait->cm_id_priv->refcount);
			return wait->cm_id_priv;
		}
		if (!wait->sent)
			continue;
		*role = cm_peer_arbitrate(&wait->ident, &req->remote);
		if (*role == -ELOOP)
			continue;
		if (refcount_inc_not_zero(&wait->cm_id_priv->refcount))
			return wait->cm_id_priv;
	}
	return NULL;
}

/* The node of @node's service ID in the tree, NULL once @node is unbound */
static struct cm_id_private *cm_peer_ring_head(struct cm_id_private *node)
{
	struct cm_id_private *sib;

	for (sib = node; sib; sib = cm_peer_next_sibling(sib, node))
		if (!RB_EMPTY_NODE(&sib->service_node))
			return sib;
	return NULL;
}

/*
 * As cm_peer_find_in(), in the nodes of @head's service ID in the ring's
 * order: the first node with an id of the REQ's key decides, so that a
 * longer key's id, listed early (ib_cm_peer_expect()), is not passed over
 * for a shorter one's.  Under cm.lock.
 */
static struct cm_id_private *cm_peer_find_peer(struct cm_id_private *head,
					       const struct cm_peer_req *req,
					       u8 min_len, int *role)
{
	struct cm_id_private *sib, *found = NULL;
	bool listed = false;

	lockdep_assert_held(&cm.lock);
	for (sib = head; sib && !listed; sib = cm_peer_next_sibling(sib, head))
		if (sib->peer_svc->index.match_len >= min_len)
			found = cm_peer_find_in(&sib->peer_svc->index, req,
						role, &listed);
	return found;
}

/*
 * The shortest key that may take @req: a REQ of its key held for a longer
 * one's (handed back, ib_cm_peer_hold_req()) keeps its resends and
 * successors from a shorter key's ids too.  Under cm.lock.
 */
static u8 cm_peer_req_floor(struct cm_id_private *head,
			    const struct cm_peer_req *req)
{
	struct cm_peer_index *idx = &head->peer_svc->index;
	struct cm_peer_entry *cur;
	u8 len = req->min_len;

	for (cur = cm_peer_first(idx, CM_PEER_HELD, &req->key); cur;
	     cur = cm_peer_next(idx, cur))
		len = max(len, container_of(cur, struct cm_peer_held,
					    entry)->min_len);
	return len;
}

/* Has a node before @node in @head's ring an id listed for @key? */
static bool cm_peer_listed_before(struct cm_id_private *head,
				  struct cm_id_private *node,
				  const struct cm_peer_key *key)
{
	struct cm_id_private *sib;

	for (sib = head; sib && sib != node;
	     sib = cm_peer_next_sibling(sib, head))
		if (cm_peer_first(&sib->peer_svc->index, CM_PEER_WAITING, key))
			return true;
	return false;
}

/*
 * A claimable REQ held for our key, in the tree node of our service ID,
 * where all are held (cm_peer_match_req()), compared under our node's
 * length and mask; none that an id of a node before ours in the ring, a
 * longer key's, waits for.  Under cm.lock.
 */
static struct cm_peer_held *cm_peer_claim_any(struct cm_id_private *cm_id_priv)
{
	struct cm_id_private *node = cm_id_priv->peer_node;
	const struct cm_peer_key *key = &cm_id_priv->peer_wait->entry.key;
	struct cm_id_private *head = cm_peer_ring_head(node);
	struct cm_peer_index *idx = &node->peer_svc->index, *from;
	struct cm_peer_entry *cur;
	struct cm_peer_held *held;

	if (!head)
		return NULL;
	from = &head->peer_svc->index;
	for (cur = cm_peer_first_in(from, CM_PEER_HELD, idx, key); cur;
	     cur = cm_peer_next_in(from, idx, key, cur)) {
		held = container_of(cur, struct cm_peer_held, entry);
		if (time_before(jiffies, held->expires) &&
		    idx->match_len >= held->min_len &&
		    !cm_peer_listed_before(head, node, &cur->key)) {
			cm_peer_unhold(&node->peer_svc->cm_dev->peer_held,
				       held);
			return held;
		}
	}
	return NULL;
}

/* A local peer took @held out: its REQ's work is the caller's. */
static struct cm_work *cm_peer_claimed_work(struct cm_peer_held *held)
{
	struct cm_work *work = held->req;

	kfree(held);
	cm_peer_count(work->port, CM_PEER_CLAIMED_COUNTER);
	return work;
}

/* Did @rej come from the sender of @req: same port, GRH source or SLID? */
static bool cm_peer_same_sender(const struct cm_work *req,
				const struct cm_work *rej)
{
	const struct ib_wc *rej_wc = rej->mad_recv_wc->wc;
	const struct ib_wc *req_wc = req->mad_recv_wc->wc;

	if (req->port != rej->port ||
	    !(req_wc->wc_flags & IB_WC_GRH) != !(rej_wc->wc_flags & IB_WC_GRH))
		return false;
	if (req_wc->wc_flags & IB_WC_GRH)
		return !memcmp(req->mad_recv_wc->recv_buf.grh->sgid.raw,
			       rej->mad_recv_wc->recv_buf.grh->sgid.raw,
			       sizeof(union ib_gid));
	return req_wc->slid == rej_wc->slid;
}

static bool cm_peer_sender_matches(const struct cm_peer_held *held,
				   const void *arg)
{
	return cm_peer_same_sender(held->req, arg);
}

/*
 * The REP to our peer REQ: the other end turned passive and cancelled its
 * own REQ.  That REQ may have been held here while our REQ was not out
 * yet, and cm_peer_list() found us answered already: take it out, or a
 * later connect of this service ID would claim it.  Under cm.lock.
 */
struct cm_peer_held *cm_peer_rep_held(struct cm_id_private *cm_id_priv,
				      struct cm_work *work,
				      const struct cm_rep_msg *rep_msg)
{
	lockdep_assert_held(&cm.lock);
	if (!cm_id_priv->peer_wait)
		return NULL;
	cm_peer_window_answered(cm_id_priv);
	return cm_peer_withdraw(&work->port->cm_dev->peer_held,
				cpu_to_be32(IBA_GET(CM_REP_LOCAL_COMM_ID,
						    rep_msg)),
				cm_peer_sender_matches, work);
}

void cm_peer_free_held(struct cm_peer_held *held)
{
	struct cm_work *req = held->req;

	cm_peer_count(req->port, CM_PEER_WITHDRAWN_COUNTER);
	cm_free_work(req);
	kfree(held);
}

/*
 * A REJ that withdrew no held REQ (cm_peer_rej_held()) may have overtaken
 * its REQ: cm.wq is not ordered.  It is kept a moment, so that the REQ is
 * dropped instead of held for a peer to claim.  At most CM_PEER_MAX_REJS
 * per device, for CM_PEER_REJ_TTL; the list is under cm.lock, oldest first.
 */
#define CM_PEER_MAX_REJS	32
#define CM_PEER_REJ_TTL	HZ

/* Backoff of a peer REQ sent again (cm_peer_persist()): 100 ms doubling */
#define CM_PEER_RESEND_MS	100
#define CM_PEER_RESEND_MAX_MS	1000

struct cm_peer_rej {
	struct list_head list;
	struct cm_work *work;
	unsigned long expires;
};

static void cm_peer_rej_list_free(struct list_head *list)
{
	struct cm_peer_rej *cur, *tmp;

	list_for_each_entry_safe(cur, tmp, list, list) {
		cm_free_work(cur->work);
		kfree(cur);
	}
}

/* Move the expired REJs, and the oldest beyond @keep, to @dead. */
static void cm_peer_rej_trim(struct cm_device *cm_dev, unsigned int keep,
			     struct list_head *dead)
{
	struct cm_peer_rej *cur, *tmp;

	lockdep_assert_held(&cm.lock);
	list_for_each_entry_safe(cur, tmp, &cm_dev->peer_rejs, list) {
		if (cm_dev->peer_nr_rejs <= keep &&
		    time_before(jiffies, cur->expires))
			break;
		list_move_tail(&cur->list, dead);
		cm_dev->peer_nr_rejs--;
	}
}

/* Did the sender of the peer REQ in @req reject it already? */
static bool cm_peer_rej_first(struct cm_device *cm_dev, struct cm_work *req,
			      __be32 comm_id, struct list_head *dead)
{
	struct cm_peer_rej *cur;
	struct cm_rej_msg *rej_msg;

	cm_peer_rej_trim(cm_dev, CM_PEER_MAX_REJS, dead);
	list_for_each_entry(cur, &cm_dev->peer_rejs, list) {
		rej_msg = (struct cm_rej_msg *)cur->work->mad_recv_wc->recv_buf.mad;
		if (cpu_to_be32(IBA_GET(CM_REJ_LOCAL_COMM_ID, rej_msg)) ==
		    comm_id && cm_peer_same_sender(req, cur->work)) {
			list_move_tail(&cur->list, dead);
			cm_dev->peer_nr_rejs--;
			return true;
		}
	}
	return false;
}

static void cm_peer_schedule_expiry(struct cm_device *cm_dev)
{
	unsigned long when;
	bool any;

	spin_lock_irq(&cm.lock);
	any = cm_peer_next_expiry(&cm_dev->peer_held, &when);
	spin_unlock_irq(&cm.lock);
	if (any)
		mod_delayed_work(cm.wq, &cm_dev->peer_expire,
				 time_after(when, jiffies) ? when - jiffies : 0);
}

/* Nobody took the service ID in time, as if nobody listened. */
static void cm_peer_reject_held(struct list_head *list)
{
	struct cm_peer_held *held, *tmp;
	struct cm_work *work;

	list_for_each_entry_safe(held, tmp, list, list) {
		work = held->req;
		cm_peer_count(work->port, CM_PEER_EXPIRED_COUNTER);
		/*
		 * (A timeout REJ would be matched by the remote's remote-ID
		 * table, where a REQ-Sent id is not yet.)
		 */
		cm_issue_rej(work->port, work->mad_recv_wc,
			     IB_CM_REJ_INVALID_SERVICE_ID, CM_MSG_RESPONSE_REQ,
			     NULL, 0);
		cm_free_work(work);
		kfree(held);
	}
}

void cm_peer_expire_handler(struct work_struct *_work)
{
	struct cm_device *cm_dev = container_of(to_delayed_work(_work),
						struct cm_device, peer_expire);
	struct cm_peer_held *held;
	LIST_HEAD(expired);

	spin_lock_irq(&cm.lock);
	while ((held = cm_peer_expired(&cm_dev->peer_held)))
		list_add_tail(&held->list, &expired);
	spin_unlock_irq(&cm.lock);
	cm_peer_reject_held(&expired);
	cm_peer_schedule_expiry(cm_dev);
}

/* Free the REQs held on a device that goes away; nothing is sent. */
void cm_peer_drain(struct cm_device *cm_dev)
{
	struct cm_peer_held *held, *tmp;
	LIST_HEAD(rejs);
	LIST_HEAD(list);

	cancel_delayed_work_sync(&cm_dev->peer_expire);
	cm_peer_send_all(cm_dev);
	spin_lock_irq(&cm.lock);
	cm_peer_rej_trim(cm_dev, 0, &rejs);
	while ((held = list_first_entry_or_null(&cm_dev->peer_held.list,
						struct cm_peer_held, list))) {
		cm_peer_unhold(&cm_dev->peer_held, held);
		list_add_tail(&held->list, &list);
	}
	spin_unlock_irq(&cm.lock);
	cm_peer_rej_list_free(&rejs);
	list_for_each_entry_safe(held, tmp, &list, list) {
		cm_free_work(held->req);
		kfree(held);
	}
}

/*
 * An MRA for a held REQ (its retransmission, or one never resent), sent
 * without a cm_id: the REQ stays claimable.  It covers the whole hold, not
 * the time left: the expiry REJ ends the sender's wait anyway.
 */
static void cm_peer_send_mra(struct cm_work *work, unsigned int age_ms)
{
	struct cm_req_msg *req_msg =
		(struct cm_req_msg *)work->mad_recv_wc->recv_buf.mad;
	u64 us = (u64)cm_peer_hold_age_ms(&work->port->cm_dev->peer_held,
					  age_ms) * USEC_PER_MSEC;
	struct ib_mad_send_buf *msg;
	struct cm_mra_msg *mra_msg;

	if (cm_alloc_response_msg(work->port, work->mad_recv_wc, &msg))
		return;
	mra_msg = (struct cm_mra_msg *)msg->mad;
	cm_format_mad_hdr(&mra_msg->hdr, CM_MRA_ATTR_ID, req_msg->hdr.tid);
	IBA_SET(CM_MRA_MESSAGE_MRAED, mra_msg, CM_MSG_RESPONSE_REQ);
	IBA_SET(CM_MRA_REMOTE_COMM_ID, mra_msg,
		IBA_GET(CM_REQ_LOCAL_COMM_ID, req_msg));
	/* service timeout: 4.096 us * 2^t covers the hold time */
	IBA_SET(CM_MRA_SERVICE_TIMEOUT, mra_msg,
		min_t(u32, 31, order_base_2(DIV_ROUND_UP(us, 4) | 1)));
	if (ib_post_send_mad(msg, NULL))
		cm_free_response_msg(msg);
}

/*
 * The duplicate check, the match and (with @held) the hold of a peer REQ
 * in one cm.lock section.  cm.wq is not ordered: a retransmission handled
 * on another CPU must find the REQ taken over (in the remote tables, see
 * cm_peer_insert_remote()), matchable or held, never in between.  Returns
 * the id found, referenced, with *@dup and *@role set; or NULL with *@ret
 * from cm_peer_hold(), -ECONNRESET when the REQ's REJ came first, or
 * -ENOENT when the node was unbound meanwhile.
 */
static struct cm_id_private *cm_peer_match_req(struct cm_work *work,
					       struct cm_id_private *node,
					       const struct cm_peer_req *req,
					       struct cm_peer_held *held,
					       bool *dup, int *role, int *ret)
{
	struct cm_device *cm_dev = node->peer_svc->cm_dev;
	struct cm_id_private *cm_id_priv, *head;
	struct rb_node *rb;
	LIST_HEAD(dead);
	u8 min_len = 0;

	spin_lock_irq(&cm.lock);
	/* the tree node may have changed since cm_peer_route_req() */
	head = cm_peer_ring_head(node);
	if (!head) {
		rb = rb_find(&node->id.service_id, &cm_dev->peer_node_tree,
			     cm_peer_node_cmp);
		head = rb ? rb_entry(rb, struct cm_id_private, service_node) :
			    NULL;
	}
	cm_id_priv = __cm_find_remote_id(req->remote.ca_guid, req->comm_id);
	*dup = cm_id_priv;
	if (head)
		min_len = cm_peer_req_floor(head, req);
	if (!cm_id_priv && head)
		cm_id_priv = cm_peer_find_peer(head, req, min_len, role);
	if (cm_id_priv || !held)
		goto out;
	if (!head) {
		*ret = -ENOENT;
	} else if (cm_peer_rej_first(cm_dev, work, req->comm_id, &dead)) {
		*ret = -ECONNRESET;
	} else {
		held->entry.key = req->key;
		held->remote_comm_id = req->comm_id;
		held->min_len = min_len;
		held->req = work;
		*ret = cm_peer_hold(&cm_dev->peer_held, &head->peer_svc->index,
				    held, req->age_ms);
	}
out:
	spin_unlock_irq(&cm.lock);
	cm_peer_rej_list_free(&dead);
	return cm_id_priv;
}

/*
 * After cm_peer_hold() returned @ret for @work.  Once held, the work
 * belongs to the queue and a claim on another CPU may free it: only @port
 * is used then.  Returns 0 when the work was kept.
 */
static int cm_peer_req_held(struct cm_port *port, struct cm_work *work,
			    unsigned int age_ms, int ret)
{
	switch (ret) {
	case 0:
		cm_peer_count(port, CM_PEER_HELD_COUNTER);
		cm_peer_schedule_expiry(port->cm_dev);
		return 0;
	case -EALREADY:
		/* The sender timed out: make it wait for the claim. */
		atomic_long_inc(&port->counters[CM_RECV_DUPLICATES]
					       [CM_REQ_COUNTER]);
		cm_peer_send_mra(work, age_ms);
		return -EINVAL;
	case -ECONNRESET:
		cm_peer_count(port, CM_PEER_DROPPED_COUNTER);
		return -EINVAL;
	case -ENOENT:
		break;
	default:
		/* queue full: "not there yet", the sender's CM tries again */
		cm_peer_count(port, CM_PEER_REFUSED_COUNTER);
		break;
	}
	cm_issue_rej(port, work->mad_recv_wc, IB_CM_REJ_INVALID_SERVICE_ID,
		     CM_MSG_RESPONSE_REQ, NULL, 0);
	return -EINVAL;
}

static void cm_peer_deliver_handler(struct work_struct *_work)
{
	struct cm_work *work = container_of(_work, struct cm_work, work.work);
	struct cm_id_private *cm_id_priv;

	cm_id_priv = cm_acquire_id(work->local_id, work->remote_id);
	if (!cm_id_priv) {
		cm_free_work(work);
		return;
	}
	spin_lock_irq(&cm_id_priv->lock);
	if (cm_id_priv->id.state != IB_CM_REQ_RCVD) {
		spin_unlock_irq(&cm_id_priv->lock);
		cm_deref_id(cm_id_priv);
		cm_free_work(work);
		return;
	}
	/* The reference from cm_acquire_id() belongs to the event. */
	cm_queue_work_unlock(cm_id_priv, work);
}

/* The address vectors to the sender of a peer REQ; rejects it on failure. */
static int cm_peer_req_av(struct cm_work *work, struct cm_av *av,
			  struct cm_av *alt_av)
{
	int ret;

	ret = cm_init_av_for_response(work->port, work->mad_recv_wc->wc,
				      work->mad_recv_wc->recv_buf.grh, av);
	if (ret)
		return ret;
	ret = cm_req_init_paths(work, av, alt_av);
	if (ret) {
		cm_issue_rej(work->port, work->mad_recv_wc, ret,
			     CM_MSG_RESPONSE_REQ, NULL, 0);
		return -EINVAL;
	}
	return 0;
}

/*
 * Enter the sender of the peer REQ in @req_msg in the remote tables for
 * @cm_id_priv, as cm_match_req() does for a listener's new id.  From then
 * on a retransmission of the REQ is a duplicate (cm_find_remote_id() also
 * compares id.remote_id, so it is set here, in the same section).
 */
static int cm_peer_insert_remote(struct cm_id_private *cm_id_priv,
				 const struct cm_req_msg *req_msg)
{
	struct cm_timewait_info *tw = cm_id_priv->timewait_info;

	lockdep_assert_held(&cm_id_priv->lock);
	lockdep_assert_held(&cm.lock);
	tw->work.remote_id = cpu_to_be32(IBA_GET(CM_REQ_LOCAL_COMM_ID, req_msg));
	tw->remote_ca_guid = cpu_to_be64(IBA_GET(CM_REQ_LOCAL_CA_GUID, req_msg));
	tw->remote_qpn = cpu_to_be32(IBA_GET(CM_REQ_LOCAL_QPN, req_msg));
	if (cm_insert_remote_id(tw) || cm_insert_remote_qpn(tw)) {
		/* A duplicate or stale REQ won a race with us: drop it. */
		cm_remove_remote(cm_id_priv);
		return -EINVAL;
	}
	cm_id_priv->id.remote_id = tw->work.remote_id;
	return 0;
}

/* The id takes over the peer REQ in @work, as if a listener made it. */
static void cm_peer_take_over(struct cm_work *work,
			      struct cm_id_private *cm_id_priv,
			      struct cm_av *av, struct cm_av *alt_av)
{
	struct cm_req_msg *req_msg =
		(struct cm_req_msg *)work->mad_recv_wc->recv_buf.mad;

	lockdep_assert_held(&cm_id_priv->lock);
	cm_req_fill_id(cm_id_priv, req_msg);
	cm_move_av_from_path(&cm_id_priv->av, av);
	cm_id_priv->av.dlid_datapath = av->dlid_datapath;
	if (cm_req_has_alt_path(req_msg))
		cm_move_av_from_path(&cm_id_priv->alt_av, alt_av);
	cm_id_priv->id.state = IB_CM_REQ_RCVD;
	cm_format_req_event(work, cm_id_priv, &cm_id_priv->id);
	cm_peer_count(work->port, CM_PEER_TURNED_PASSIVE_COUNTER);
	trace_icm_peer_passive(&cm_id_priv->id);
}

/*
 * We lost the arbitration: cancel our REQ and take over the peer REQ in
 * @work on the same id.  On success the caller's reference to the id goes
 * to the REQ event.  Returns 0 when the work was consumed.
 */
static int cm_peer_turn_passive(struct cm_work *work,
				struct cm_id_private *cm_id_priv)
{
	struct cm_req_msg *req_msg =
		(struct cm_req_msg *)work->mad_recv_wc->recv_buf.mad;
	struct cm_av av = {}, alt_av = {};
	int ret;

	ret = cm_peer_req_av(work, &av, &alt_av);
	if (ret)
		goto out;

	spin_lock_irq(&cm_id_priv->lock);
	spin_lock(&cm.lock);
	/* still listed: our REQ is still waiting (cm_peer_find_peer()) */
	ret = cm_peer_listed(cm_id_priv) ?
		cm_peer_insert_remote(cm_id_priv, req_msg) : -EINVAL;
	if (!ret)
		cm_peer_unlist(cm_id_priv);
	spin_unlock(&cm.lock);
	if (ret) {
		spin_unlock_irq(&cm_id_priv->lock);
		goto out;
	}
	ib_cancel_mad(cm_id_priv->msg);
	cm_peer_take_over(work, cm_id_priv, &av, &alt_av);
	/*
	 * Pairs with cm_process_work(): the handler may fail and have the id
	 * destroyed right here, which waits for every reference.
	 */
	cm_queue_work_unlock(cm_id_priv, work);
out:
	if (ret)
		cm_peer_unyield(cm_id_priv);
	cm_destroy_av(&av);
	cm_destroy_av(&alt_av);
	return ret;
}

/* The peer id's key for a REQ along @param, with @match; under cm.lock. */
static void cm_peer_wait_key(struct cm_peer_wait *wait,
			     const union ib_gid *local_gid,
			     const union ib_gid *remote_gid, const void *match)
{
	u8 len = wait->cm_id_priv->peer_node->peer_svc->index.match_len;

	wait->entry.key.local_gid = *local_gid;
	wait->entry.key.remote_gid = *remote_gid;
	if (len)
		memcpy(wait->match, match, len);
	wait->entry.key.match = wait->match;
}

/* Take an id listed by ib_cm_peer_expect() out, under cm.lock. */
static void cm_peer_unexpect(struct cm_id_private *cm_id_priv)
{
	struct cm_peer_wait *wait = cm_id_priv->peer_wait;

	lockdep_assert_held(&cm.lock);
	if (!wait->expected)
		return;
	wait->expected = false;
	if (cm_peer_listed(cm_id_priv))
		cm_peer_del(&cm_id_priv->peer_node->peer_svc->index,
			    CM_PEER_WAITING, &wait->entry);
}

static void cm_peer_set_key(struct cm_id_private *cm_id_priv,
			    const struct ib_cm_req_param *param,
			    const void *match)
{
	struct cm_peer_wait *wait = cm_id_priv->peer_wait;

	cm_peer_wait_key(wait, &param->primary_path->sgid,
			 &param->primary_path->dgid, match);
	wait->ident.ca_guid = cm_id_priv->id.device->node_guid;
	wait->ident.qpn = param->qp_num;
	wait->ident.comm_id = cm_id_priv->id.local_id;
	wait->sent = false;
}

/*
 * ib_send_cm_peer_req() on an idle id: take over the other end's REQ if it
 * is held, in one section with the remote tables (see cm_peer_match_req());
 * else list the id, not matchable before its REQ is out (cm_peer_list()),
 * unless the listener took a REQ of the key; behind it when the listener
 * may hand it back.  Returns the held REQ's work,
 * NULL when none is held, or an ERR_PTR.
 */
static struct cm_work *cm_peer_claim_req(struct cm_id_private *cm_id_priv,
					 const struct ib_cm_req_param *param,
					 const void *match)
{
	struct cm_peer_svc *svc;
	struct cm_work *work = NULL, *stale = NULL;
	struct cm_timewait_info *tw;
	struct cm_peer_held *held;
	bool behind;
	int ret;

	tw = cm_create_timewait_info(cm_id_priv->id.local_id);
	if (IS_ERR(tw))
		return ERR_CAST(tw);

	spin_lock_irq(&cm_id_priv->lock);
	if (cm_id_priv->id.state != IB_CM_IDLE || cm_id_priv->timewait_info ||
	    (cm_peer_listed(cm_id_priv) && !cm_id_priv->peer_wait->expected) ||
	    cm_id_priv->peer_listen) {
		spin_unlock_irq(&cm_id_priv->lock);
		kfree(tw);
		return ERR_PTR(-EINVAL);
	}
	svc = cm_id_priv->peer_node->peer_svc;
	spin_lock(&cm.lock);
	cm_peer_unexpect(cm_id_priv);
	cm_peer_set_key(cm_id_priv, param, match);
	ret = cm_peer_taken(cm_id_priv->peer_node,
			    &cm_id_priv->peer_wait->entry.key);
	/* the listener's answer first: our REQ waits, unsent */
	behind = ret == -EINPROGRESS;
	if (behind)
		ret = 0;
	held = ret ? NULL : cm_peer_claim_any(cm_id_priv);
	if (ret) {
		work = ERR_PTR(ret);
	} else if (!held) {
		cm_peer_add(&svc->index, CM_PEER_WAITING,
			    &cm_id_priv->peer_wait->entry);
		cm_id_priv->peer_wait->behind = behind;
	} else {
		work = cm_peer_claimed_work(held);
		cm_id_priv->timewait_info = tw;
		tw = NULL;
		if (cm_peer_insert_remote(cm_id_priv, (struct cm_req_msg *)
					  work->mad_recv_wc->recv_buf.mad)) {
			tw = cm_id_priv->timewait_info;
			cm_id_priv->timewait_info = NULL;
			stale = work;
			work = NULL;
		}
	}
	spin_unlock(&cm.lock);
	spin_unlock_irq(&cm_id_priv->lock);
	kfree(tw);
	if (stale)
		cm_free_work(stale);
	return work;
}

/*
 * Turn passive on the claimed REQ in @work.  The event is delivered from
 * cm.wq: we are called by the ULP, maybe under its own locks.
 */
static int cm_peer_claimed_passive(struct cm_work *work,
				   struct cm_id_private *cm_id_priv)
{
	struct cm_av av = {}, alt_av = {};
	int ret;

	ret = cm_peer_req_av(work, &av, &alt_av);
	spin_lock_irq(&cm_id_priv->lock);
	if (ret) {
		cm_reset_to_idle(cm_id_priv);
		cm_id_priv->id.remote_id = 0;
		spin_unlock_irq(&cm_id_priv->lock);
		cm_free_work(work);
		goto out;
	}
	cm_peer_take_over(work, cm_id_priv, &av, &alt_av);
	spin_unlock_irq(&cm_id_priv->lock);
	work->local_id = cm_id_priv->id.local_id;
	work->remote_id = cm_id_priv->id.remote_id;
	/*
	 * The hold's cm_work_handler() may still be returning on another CPU;
	 * it no longer reads the work (cm_peer_req_held()).
	 */
	INIT_DELAYED_WORK(&work->work, cm_peer_deliver_handler);
	queue_delayed_work(cm.wq, &work->work, 0);
out:
	cm_destroy_av(&av);
	cm_destroy_av(&alt_av);
	return ret;
}

/*
 * A REQ reached the peer node @node, for ids of keys @min_len long or
 * longer; consumes the reference to @node.
 */
static int cm_peer_handle_req(struct cm_work *work,
			      struct cm_id_private *node, u8 min_len)
{
	struct cm_req_msg *req_msg =
		(struct cm_req_msg *)work->mad_recv_wc->recv_buf.mad;
	struct cm_port *port = work->port;
	struct cm_peer_held *held = NULL;
	struct cm_id_private *cm_id_priv;
	struct cm_peer_req req;
	int role = CM_PEER_ACTIVE, ret = 0;
	bool dup;

	if (!IBA_GET(CM_REQ_PEER_TO_PEER, req_msg)) {
		/* client/server, with no listener: as if none were bound */
		cm_deref_id(node);
		cm_issue_rej(port, work->mad_recv_wc,
			     IB_CM_REJ_INVALID_SERVICE_ID, CM_MSG_RESPONSE_REQ,
			     NULL, 0);
		return -EINVAL;
	}
	cm_peer_parse_req(req_msg, &req);
	req.min_len = min_len;
	cm_id_priv = cm_peer_match_req(work, node, &req, NULL, &dup, &role,
				       &ret);
	if (!cm_id_priv) {
		/* a sender that never resends would time out while held */
		if (!IBA_GET(CM_REQ_MAX_CM_RETRIES, req_msg))
			cm_peer_send_mra(work, req.age_ms);
		held = kzalloc(sizeof(*held), GFP_KERNEL);
		if (!held)
			ret = -ENOMEM;
		else
			cm_id_priv = cm_peer_match_req(work, node, &req, held,
						       &dup, &role, &ret);
		if (!cm_id_priv) {
			if (ret)
				kfree(held);
			cm_deref_id(node);
			return cm_peer_req_held(port, work, req.age_ms, ret);
		}
		kfree(held);
	}
	cm_deref_id(node);
	if (dup) {
		/* A retransmission of a REQ we took over, as in cm_match_req(). */
		cm_dup_req_handler(work, cm_id_priv);
		ret = -EINVAL;
	} else if (role == -ENOTUNIQ) {
		/* the other end, seeing ours the same way, rejects it too */
		cm_issue_rej(port, work->mad_recv_wc,
			     IB_CM_REJ_INVALID_COMM_INSTANCE,
			     CM_MSG_RESPONSE_REQ, NULL, 0);
		ret = -EINVAL;
	} else if (role == CM_PEER_PASSIVE) {
		cm_peer_count(port, CM_PEER_MATCHED_COUNTER);
		/* on success our reference went to the REQ event */
		ret = cm_peer_turn_passive(work, cm_id_priv);
		if (!ret)
			return 0;
	} else {
		/*
		 * Active, decided under cm.lock while our REQ was waiting: the
		 * other end turns passive and answers it.
		 */
		cm_peer_count(port, CM_PEER_MATCHED_COUNTER);
		cm_peer_count(port, CM_PEER_STAYED_ACTIVE_COUNTER);
		trace_icm_peer_active(&cm_id_priv->id);
		cm_peer_stay_active(cm_id_priv);
		ret = -EINVAL;
	}
	cm_deref_id(cm_id_priv);
	return ret;
}

int cm_peer_req_handler(struct cm_work *work, struct cm_id_private *node)
{
	return cm_peer_handle_req(work, node, 0);
}

/*
 * After the REQ event of a peer listener's id, in cm_process_work(): a REQ
 * its ULP handed back (ib_cm_peer_hold_req()) goes on as one that no
 * listener takes, for the ids of the listener's node or of a longer key's:
 * a shorter key's user of the port does not get it, as it would not have
 * from the listener.  Returns true when that took @work.
 */
bool cm_peer_redo_req(struct cm_id_private *cm_id_priv, struct cm_work *work)
{
	struct cm_peer_pending *pend = cm_id_priv->peer_pending;

	if (!pend || !pend->hold ||
	    work->cm_event.event != IB_CM_REQ_RECEIVED)
		return false;
	pend->hold = false;
	/* cm_peer_handle_req() consumes a reference to the node */
	refcount_inc(&pend->node->refcount);
	return !cm_peer_handle_req(work, pend->node,
				   pend->node->peer_svc->index.match_len);
}

/**
 * ib_cm_peer_bind_mask - Make a cm_id a peer of a service ID
 * @cm_id: Connection identifier, idle.
 * @service_id: This end's service ID: the one the other end's peer REQ is
 *   sent to, in network byte order.
 * @match_len: How many bytes of an inbound REQ's private data identify the
 *   connection, besides the two port GIDs; 0 to 92.
 * @mask: NULL, or @match_len bytes: only the bits set in them identify the
 *   connection, for a ULP whose private data holds fields the two ends
 *   may fill differently (a protocol version) before those that tell its
 *   connections apart.  All bits set is the same as NULL.
 *
 * A peer REQ (one sent by ib_send_cm_peer_req()) for @service_id on the
 * cm_id's device is then matched with the peer ids bound to it by
 * ib_send_cm_peer_req()'s key; a client/server REQ goes to a listener of
 * @service_id, which may live beside the bind, or is rejected.  Several
 * ids may bind the same service ID; their keys tell them apart.  Peers of
 * one service ID may compare other match bytes (two users of one port in
 * two namespaces, one a ULP with a mask): a REQ goes to the first id or
 * listener that takes it by its own key.  A peer REQ that no peer id waits
 * for is held until
 * ib_send_cm_peer_req() claims it or its sender would have given up (its
 * response timeout and retries; 20 s at most, CM_PEER_MAX_AGE_MS),
 * answered with an MRA when resent (at once if never); with
 * ib_cm_insert_peer_listen() it goes to the listener instead.
 * ib_destroy_cm_id() releases the bind.  Binding again with the same
 * arguments is a no-op.
 *
 * Context: Process context; may sleep.
 * Return: 0; -EINVAL when the cm_id is not idle or is bound otherwise, when
 * @service_id is in the range the CM assigns, or when @match_len is too
 * long; -EOPNOTSUPP when the device has no IB CM port or peer-to-peer
 * support is not built; -ENOMEM.
 */
int ib_cm_peer_bind_mask(struct ib_cm_id *cm_id, __be64 service_id,
			 u8 match_len, const u8 *mask)
{
	struct cm_id_private *cm_id_priv =
		container_of(cm_id, struct cm_id_private, id);
	struct cm_id_private *node;
	struct cm_peer_wait *wait;
	struct cm_device *cm_dev;
	int ret = 0;

	might_sleep();
	if ((service_id & IB_SERVICE_ID_AGN_MASK) == IB_CM_ASSIGN_SERVICE_ID ||
	    match_len > CM_PEER_MATCH_MAX)
		return -EINVAL;
	/* a mask of all bits is no mask: such binds share a node */
	if (mask && (!match_len || !memchr_inv(mask, 0xff, match_len)))
		mask = NULL;
	node = READ_ONCE(cm_id_priv->peer_node);
	if (node)
		return node->id.service_id == service_id &&
		       cm_peer_same_match(node->peer_svc, match_len, mask) ?
		       0 : -EINVAL;
	cm_dev = ib_get_client_data(cm_id->device, &cm_client);
	if (!cm_dev)
		return -EOPNOTSUPP;
	wait = kzalloc(struct_size(wait, match, match_len), GFP_KERNEL);
	if (!wait)
		return -ENOMEM;
	RB_CLEAR_NODE(&wait->entry.node);
	wait->cm_id_priv = cm_id_priv;
	wait->owner = (unsigned long)cm_id->cm_handler;
	INIT_DELAYED_WORK(&wait->resend, cm_peer_resend_handler);
	INIT_DELAYED_WORK(&wait->lost, cm_peer_lost_handler);
	INIT_DELAYED_WORK(&wait->expire, cm_peer_window_expire_handler);
	INIT_LIST_HEAD(&wait->window);
	node = cm_peer_node_get(cm_dev, service_id, match_len, mask);
	if (IS_ERR(node)) {
		kfree(wait);
		return PTR_ERR(node);
	}
	spin_lock_irq(&cm_id_priv->lock);
	if (cm_id->state != IB_CM_IDLE || cm_id_priv->peer_node) {
		ret = -EINVAL;
	} else {
		spin_lock(&cm.lock);
		cm_id_priv->peer_wait = wait;
		cm_id_priv->peer_node = node;
		spin_unlock(&cm.lock);
		cm_id->service_id = service_id;
	}
	spin_unlock_irq(&cm_id_priv->lock);
	if (ret) {
		cm_peer_node_put(node);
		kfree(wait);
	}
	return ret;
}
EXPORT_SYMBOL(ib_cm_peer_bind_mask);

/**
 * ib_cm_peer_bind - Make a cm_id a peer of a service ID
 * @cm_id: Connection identifier, idle.
 * @service_id: This end's service ID, in network byte order.
 * @match_len: How many bytes of an inbound REQ's private data identify the
 *   connection, all their bits.
 *
 * ib_cm_peer_bind_mask() without a mask.
 *
 * Context: Process context; may sleep.
 * Return: As ib_cm_peer_bind_mask().
 */
int ib_cm_peer_bind(struct ib_cm_id *cm_id, __be64 service_id, u8 match_len)
{
	return ib_cm_peer_bind_mask(cm_id, service_id, match_len, NULL);
}
EXPORT_SYMBOL(ib_cm_peer_bind);

/**
 * ib_cm_peer_set_owner - Set whose share of the window a peer id's REQs take
 * @cm_id: Connection identifier, bound with ib_cm_peer_bind().
 * @owner: A key: the REQs of all peer ids with one key are one flow.
 *
 * The peer REQs waiting for a port's window are taken a flow at a time, in
 * turn, so that no owner delays another by more than a turn however many
 * REQs it queues.  A peer id's owner is by default its cm_handler: one
 * flow per kernel user of ib_cm.  A user of ib_cm that serves several
 * owners, as rdma_cm does for users, names them here.
 *
 * Context: Any context.
 * Return: 0, or -EINVAL when @cm_id is not bound as a peer.
 */
int ib_cm_peer_set_owner(struct ib_cm_id *cm_id, unsigned long owner)
{
	struct cm_id_private *cm_id_priv =
		container_of(cm_id, struct cm_id_private, id);
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&cm_id_priv->lock, flags);
	if (cm_id_priv->peer_wait)
		cm_id_priv->peer_wait->owner = owner;
	else
		ret = -EINVAL;
	spin_unlock_irqrestore(&cm_id_priv->lock, flags);
	return ret;
}
EXPORT_SYMBOL(ib_cm_peer_set_owner);

/*
 * Our REQ is out: matchable from now on, and kept for cm_peer_persist(),
 * with the budget the ULP gave it (its timeout and retries).
 */
void cm_peer_keep_req(struct cm_id_private *cm_id_priv)
{
	struct cm_peer_wait *wait = cm_id_priv->peer_wait;

	lockdep_assert_held(&cm_id_priv->lock);
	wait->sent = true;
	memcpy(&wait->req, cm_id_priv->msg->mad, sizeof(wait->req));
	wait->resends = 0;
}

/*
 * A REJ(invalid service ID) of our peer REQ: the other end has not bound
 * its service ID yet.  Within the REQ's budget, send the REQ again after a
 * backoff instead of reporting it; the id stays matchable meanwhile.
 * Returns true when the REJ was taken so.
 */
bool cm_peer_persist(struct cm_id_private *cm_id_priv,
		     const struct cm_rej_msg *rej_msg)
{
	struct cm_peer_wait *wait = cm_id_priv->peer_wait;
	unsigned long delay;

	lockdep_assert_held(&cm_id_priv->lock);
	if (!cm_peer_listed(cm_id_priv) || !wait->sent ||
	    IBA_GET(CM_REJ_REASON, rej_msg) != IB_CM_REJ_INVALID_SERVICE_ID ||
	    !time_before(jiffies, wait->deadline))
		return false;
	ib_cancel_mad(cm_id_priv->msg);
	cm_peer_window_leave(cm_id_priv);
	delay = min3(msecs_to_jiffies(CM_PEER_RESEND_MS << min(wait->resends, 4U)),
		     msecs_to_jiffies(CM_PEER_RESEND_MAX_MS),
		     wait->deadline - jiffies);
	if (queue_delayed_work(cm.wq, &wait->resend, delay))
		refcount_inc(&cm_id_priv->refcount);
	return true;
}

/*
 * The REQ could not be sent again: report it as failed, as
 * cm_process_send_error() does, dropping the work's reference first.
 */
void cm_peer_resend_failed(struct cm_id_private *cm_id_priv)
	__releases(&cm_id_priv->lock)
{
	struct ib_cm_event event = { .event = IB_CM_REQ_ERROR };
	int ret;

	cm_reset_to_idle(cm_id_priv);
	spin_unlock_irq(&cm_id_priv->lock);
	ret = cm_id_priv->id.cm_handler(&cm_id_priv->id, &event);
	cm_deref_id(cm_id_priv);
	if (ret)
		ib_destroy_cm_id(&cm_id_priv->id);
}

static void cm_peer_resend_handler(struct work_struct *_work)
{
	struct cm_peer_wait *wait = container_of(to_delayed_work(_work),
						 struct cm_peer_wait, resend);
	struct cm_id_private *cm_id_priv = wait->cm_id_priv;
	struct ib_mad_send_buf *msg;

	spin_lock_irq(&cm_id_priv->lock);
	if ((cm_id_priv->id.state != IB_CM_REQ_SENT &&
	     cm_id_priv->id.state != IB_CM_MRA_REQ_RCVD) ||
	    !cm_peer_listed(cm_id_priv))
		goto out;
	msg = cm_alloc_priv_msg(cm_id_priv);
	if (IS_ERR(msg)) {
		cm_peer_resend_failed(cm_id_priv);
		return;
	}
	memcpy(msg->mad, &wait->req, sizeof(wait->req));
	msg->timeout_ms = cm_id_priv->timeout_ms;
	/* what is left of the REQ's budget, not a new one */
	msg->retries = cm_peer_retries_left(cm_id_priv);
	msg->context[1] = (void *)(unsigned long)IB_CM_REQ_SENT;
	if (ib_post_send_mad(msg, NULL)) {
		cm_free_priv_msg(msg);
		cm_peer_resend_failed(cm_id_priv);
		return;
	}
	wait->resends++;
	cm_peer_count(cm_id_priv->av.port, CM_PEER_RESENT_COUNTER);
out:
	spin_unlock_irq(&cm_id_priv->lock);
	cm_deref_id(cm_id_priv);
}

/*
 * Our REQ, out since before the other end's REQ came (cm_peer_stay_active()),
 * still has no answer at the end of its RTO: it was likely lost, sent
 * before the other end was there.  Its REQ shows that it is now, so ours
 * goes again now, not at the MAD layer's retry, which may be seconds away
 * (rdma_cm's response timeout is 4 s).  At most once an RTO, within the
 * REQ's budget.
 */
static void cm_peer_lost_handler(struct work_struct *_work)
{
	struct cm_peer_wait *wait = container_of(to_delayed_work(_work),
						 struct cm_peer_wait, lost);
	struct cm_id_private *cm_id_priv = wait->cm_id_priv;
	bool lost;

	spin_lock_irq(&cm_id_priv->lock);
	spin_lock(&cm.lock);
	lost = cm_id_priv->id.state == IB_CM_REQ_SENT && wait->sent &&
	       cm_peer_listed(cm_id_priv) && cm_id_priv->msg &&
	       cm_peer_window_resend(wait);
	spin_unlock(&cm.lock);
	if (lost) {
		/* the flushed send is discarded: cm_process_send_error() */
		ib_cancel_mad(cm_id_priv->msg);
		if (queue_delayed_work(cm.wq, &wait->resend, 0))
			refcount_inc(&cm_id_priv->refcount);
	}
	spin_unlock_irq(&cm_id_priv->lock);
	cm_deref_id(cm_id_priv);
}

/*
 * We stay active: the other end answers our REQ, which must reach it.  One
 * that waits for its resend (cm_peer_persist()) goes now.  One out is
 * looked at when its RTO ends, or now if it has: REQs that only crossed
 * are answered by then, and no duplicate goes.  cm_peer_window_del()
 * cancels the look once ours is answered, or the id leaves the index.
 */
static void cm_peer_stay_active(struct cm_id_private *cm_id_priv)
{
	struct cm_peer_wait *wait = cm_id_priv->peer_wait;
	unsigned long now = jiffies, delay = 0;

	spin_lock_irq(&cm_id_priv->lock);
	spin_lock(&cm.lock);
	/* listed: cm_peer_window_del() cancels the look when it is not */
	if (cm_id_priv->id.state == IB_CM_REQ_SENT && wait->sent &&
	    cm_peer_listed(cm_id_priv) && !wait->deferred && wait->out_at) {
		if (time_before(now, wait->out_until))
			delay = wait->out_until - now;
		if (queue_delayed_work(cm.wq, &wait->lost, delay))
			refcount_inc(&cm_id_priv->refcount);
	}
	spin_unlock(&cm.lock);
	spin_unlock_irq(&cm_id_priv->lock);
	cm_peer_resend_now(cm_id_priv);
}

/* Our REQ waits for its resend: send it now. */
static void cm_peer_resend_now(struct cm_id_private *cm_id_priv)
{
	struct cm_peer_wait *wait = cm_id_priv->peer_wait;

	/* a pending work's reference is ours once cancelled */
	if (wait && cancel_delayed_work(&wait->resend) &&
	    !queue_delayed_work(cm.wq, &wait->resend, 0))
		cm_deref_id(cm_id_priv);
}

/*
 * After ib_send_cm_req(): a peer REQ held while the id was listed but not
 * matchable yet (its REQ not posted, cm_peer_post_req()) is claimed here
 * under cm.lock like the hold and goes through the matching again; its
 * work is returned.  The id leaves the index if its REQ already failed or
 * was answered.
 */
static struct cm_work *cm_peer_list(struct cm_id_private *cm_id_priv)
{
	struct cm_peer_held *held = NULL;

	spin_lock_irq(&cm_id_priv->lock);
	spin_lock(&cm.lock);
	if (cm_peer_listed(cm_id_priv) &&
	    (cm_id_priv->id.state == IB_CM_REQ_SENT ||
	     cm_id_priv->id.state == IB_CM_MRA_REQ_RCVD)) {
		held = cm_peer_claim_any(cm_id_priv);
	} else {
		cm_peer_unlist(cm_id_priv);
	}
	spin_unlock(&cm.lock);
	spin_unlock_irq(&cm_id_priv->lock);
	return held ? cm_peer_claimed_work(held) : NULL;
}

/**
 * ib_send_cm_peer_req - Send a peer-to-peer connection request
 * @cm_id: Connection identifier, idle.  Bound here with ib_cm_peer_bind()
 *   to @param->service_id, with no match bytes, unless bound before.
 * @param: As for ib_send_cm_req(); @param->service_id is the other end's
 *   service ID.
 * @match: What the other end's REQ carries at the start of its private
 *   data, as many bytes as the bind's match_len; may be NULL when that is 0.
 *
 * Like ib_send_cm_req(), except that the other end sends a REQ to this one
 * at about the same time and exactly one connection results.  The other
 * end's REQ is recognised by its service ID (this end's), its source and
 * destination port GIDs (@param's primary path, reversed) and @match.
 * When the REQs cross, the CM compares them: on the end that stays active
 * nothing changes, its REQ is answered with a REP.  The end that turns
 * passive drops its own REQ and gets IB_CM_REQ_RECEIVED on this same
 * @cm_id, with listen_id set to @cm_id; it answers with ib_send_cm_rep()
 * (or rejects) as a passive side does.  When the other end's REQ was
 * already held, no REQ is sent and this end turns passive at once; the
 * event is then delivered from the CM's workqueue, never from within this
 * call.  A REJ with IB_CM_REJ_INVALID_SERVICE_ID (nothing bound there yet)
 * is not reported while @param's budget lasts, its response timeout times
 * max_cm_retries + 1: the REQ is sent again after a backoff.  Peer REQs
 * go out through a window per port (256 at most) and per owner
 * (ib_cm_peer_set_owner()); past it the REQ waits, as if in flight, until
 * the window opens, and a REQ of the other end that comes meanwhile makes
 * this end passive at once.  A REQ that waits for the window to the end of
 * its budget fails with IB_CM_REQ_ERROR; once posted late, it is resent
 * only within its budget.
 *
 * Context: Process context; may sleep (unlike ib_send_cm_req()).
 * Return: 0 or a negative errno, as ib_send_cm_req() and ib_cm_peer_bind();
 * -EALREADY when a REQ with this key is at the service ID's listener,
 * unanswered (ib_cm_insert_peer_listen()), unless the listener hands
 * REQs back (ib_cm_peer_listen_hands_back()); -EISCONN when it was
 * answered and its connection lasts.
 */
int ib_send_cm_peer_req(struct ib_cm_id *cm_id,
			struct ib_cm_req_param *param, const void *match)
{
	struct cm_id_private *cm_id_priv =
		container_of(cm_id, struct cm_id_private, id);
	struct cm_work *work;
	int ret;

	might_sleep();
	if (!param->primary_path)
		return -EINVAL;
	if (!cm_id_priv->peer_node) {
		ret = ib_cm_peer_bind(cm_id, param->service_id, 0);
		if (ret)
			return ret;
	}
	if (!match && cm_id_priv->peer_node->peer_svc->index.match_len)
		return -EINVAL;

	work = cm_peer_claim_req(cm_id_priv, param, match);
	if (IS_ERR(work))
		return PTR_ERR(work);
	if (work)
		return cm_peer_claimed_passive(work, cm_id_priv);

	ret = ib_send_cm_req(cm_id, param);
	cm_peer_test_posted();
	work = cm_peer_list(cm_id_priv);
	if (work)
		queue_delayed_work(cm.wq, &work->work, 0);
	return ret;
}
EXPORT_SYMBOL(ib_send_cm_peer_req);

/**
 * ib_cm_peer_expect - Hold the other end's REQ before ours is sent
 * @cm_id: Connection identifier, idle, bound with ib_cm_peer_bind_mask().
 * @local_gid: The source GID of the primary path our REQ will take.
 * @remote_gid: Its destination GID.
 * @match: As for ib_send_cm_peer_req().
 *
 * Until ib_send_cm_peer_req() a peer id is not known by its key, and a
 * peer REQ of that key goes to the service ID's listener, if there is one
 * (ib_cm_insert_peer_listen()): a ULP that is still setting up its QP
 * would find a second connection of the pair there.  A ULP that knows the
 * key early (rdma_cm once the address is resolved) tells it here: such a
 * REQ is then held for @cm_id, as one that came while our REQ was being
 * sent, and ib_send_cm_peer_req() claims it.  Holds are bounded as ever:
 * if we never send, it expires and its sender is rejected.  Calling again
 * replaces the key; ib_cm_peer_unexpect() and ib_destroy_cm_id() withdraw
 * it.  Until then ib_send_cm_req() fails: the REQ of the key is a peer one.
 *
 * Context: Process context or a work item; does not sleep.
 * Return: 0; -EINVAL when @cm_id is not an idle peer id; -EALREADY or
 * -EISCONN when the listener took a REQ of the key, as
 * ib_send_cm_peer_req() would then fail (not -EALREADY for a listener
 * that hands REQs back: a REQ handed back is then held for @cm_id).
 */
int ib_cm_peer_expect(struct ib_cm_id *cm_id, const union ib_gid *local_gid,
		      const union ib_gid *remote_gid, const void *match)
{
	struct cm_id_private *cm_id_priv =
		container_of(cm_id, struct cm_id_private, id);
	struct cm_peer_wait *wait = cm_id_priv->peer_wait;
	struct cm_peer_svc *svc;
	int ret = -EINVAL;

	spin_lock_irq(&cm_id_priv->lock);
	if (cm_id->state != IB_CM_IDLE || !wait || cm_id_priv->peer_listen ||
	    cm_id_priv->timewait_info ||
	    (cm_peer_listed(cm_id_priv) && !wait->expected))
		goto out;
	svc = cm_id_priv->peer_node->peer_svc;
	spin_lock(&cm.lock);
	cm_peer_unexpect(cm_id_priv);
	cm_peer_wait_key(wait, local_gid, remote_gid, match);
	wait->sent = false;
	ret = cm_peer_taken(cm_id_priv->peer_node, &wait->entry.key);
	/* a REQ the listener may hand back is then held for us */
	if (ret == -EINPROGRESS)
		ret = 0;
	if (!ret) {
		/* not matchable: cm_peer_find_peer() skips it, REQs are held */
		cm_peer_add(&svc->index, CM_PEER_WAITING, &wait->entry);
		wait->expected = true;
	}
	spin_unlock(&cm.lock);
out:
	spin_unlock_irq(&cm_id_priv->lock);
	return ret;
}
EXPORT_SYMBOL(ib_cm_peer_expect);

/**
 * ib_cm_peer_unexpect - Withdraw ib_cm_peer_expect()
 * @cm_id: Connection identifier.
 *
 * For a ULP whose REQ will not go, or not with that key (rdma_cm when the
 * address query fails).  A REQ already held for the key stays held until
 * it is claimed or expires.  Does nothing for an id not expected.
 *
 * Context: Any context; does not sleep.
 */
void ib_cm_peer_unexpect(struct ib_cm_id *cm_id)
{
	struct cm_id_private *cm_id_priv =
		container_of(cm_id, struct cm_id_private, id);
	unsigned long flags;

	spin_lock_irqsave(&cm_id_priv->lock, flags);
	if (cm_id_priv->peer_wait) {
		spin_lock(&cm.lock);
		cm_peer_unexpect(cm_id_priv);
		spin_unlock(&cm.lock);
	}
	spin_unlock_irqrestore(&cm_id_priv->lock, flags);
}
EXPORT_SYMBOL(ib_cm_peer_unexpect);

#if IS_ENABLED(CONFIG_INFINIBAND_CM_PEER_KUNIT_TEST)
static unsigned int cm_peer_test_pause_ms;

/* KUnit only: let answers to our REQ come before cm_peer_list() */
void cm_peer_test_post_pause(unsigned int ms)
{
	WRITE_ONCE(cm_peer_test_pause_ms, ms);
}
EXPORT_SYMBOL_IF_KUNIT(cm_peer_test_post_pause);

void cm_peer_test_posted(void)
{
	unsigned int ms = READ_ONCE(cm_peer_test_pause_ms);

	if (ms)
		msleep(ms);
}

/*
 * KUnit only: bounds of @device's held REQs, its window and a fixed
 * retransmission timeout for its REQs; 0s: defaults.  Its flows start
 * afresh.
 */
int cm_peer_test_limits(struct ib_device *device, unsigned int max_held,
			unsigned int max_held_svc, unsigned int max_age_ms,
			unsigned int window, unsigned int rto_ms)
{
	struct cm_device *cm_dev = ib_get_client_data(device, &cm_client);
	u32 i;

	if (!cm_dev)
		return -ENODEV;
	spin_lock_irq(&cm.lock);
	cm_peer_queue_limits(&cm_dev->peer_held, max_held, max_held_svc,
			     max_age_ms);
	cm_dev->peer_window = window ?: CM_PEER_WINDOW;
	cm_dev->peer_rto_ms = rto_ms;
	/* each case's flows start afresh */
	rdma_for_each_port(device, i)
		if (cm_dev->port[i - 1])
			cm_peer_window_fresh(cm_dev->port[i - 1]);
	spin_unlock_irq(&cm.lock);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(cm_peer_test_limits);

/* KUnit only: how many peer REQs @device holds now */
unsigned int cm_peer_test_held(struct ib_device *device)
{
	struct cm_device *cm_dev = ib_get_client_data(device, &cm_client);
	unsigned int count;

	if (!cm_dev)
		return 0;
	spin_lock_irq(&cm.lock);
	count = cm_dev->peer_held.count;
	spin_unlock_irq(&cm.lock);
	return count;
}
EXPORT_SYMBOL_IF_KUNIT(cm_peer_test_held);

/* KUnit only: the flow of @device's window that peer REQs of @owner take */
unsigned int cm_peer_test_flow(struct ib_device *device, unsigned long owner)
{
	struct cm_device *cm_dev = ib_get_client_data(device, &cm_client);

	return cm_dev ? cm_peer_window_flow(cm_dev, owner) : 0;
}
EXPORT_SYMBOL_IF_KUNIT(cm_peer_test_flow);

/* KUnit only: the congestion window of @owner's flow on port 1 */
unsigned int cm_peer_test_cwnd(struct ib_device *device, unsigned long owner)
{
	struct cm_device *cm_dev = ib_get_client_data(device, &cm_client);
	unsigned int cwnd;

	if (!cm_dev || !cm_dev->port[0])
		return 0;
	spin_lock_irq(&cm.lock);
	cwnd = cm_dev->port[0]->peer_flow[cm_peer_window_flow(cm_dev,
							      owner)].cwnd;
	spin_unlock_irq(&cm.lock);
	return cwnd;
}
EXPORT_SYMBOL_IF_KUNIT(cm_peer_test_cwnd);

/*
 * KUnit only: the queue in its flow of @owner's peer REQ to the address
 * @cm_id sent one to, for @sid; -ENOENT before @cm_id sent one
 */
int cm_peer_test_dest(struct ib_cm_id *cm_id, u64 sid, unsigned long owner)
{
	struct cm_id_private *cm_id_priv =
		container_of(cm_id, struct cm_id_private, id);
	int dest = -ENOENT;

	spin_lock_irq(&cm_id_priv->lock);
	if (cm_id_priv->av.port)
		dest = cm_peer_window_dest(&cm_id_priv->av, cpu_to_be64(sid),
					   owner);
	spin_unlock_irq(&cm_id_priv->lock);
	return dest;
}
EXPORT_SYMBOL_IF_KUNIT(cm_peer_test_dest);

/* KUnit only: is @cm_id listed by ib_cm_peer_expect()? */
bool cm_peer_test_expected(struct ib_cm_id *cm_id)
{
	struct cm_id_private *cm_id_priv =
		container_of(cm_id, struct cm_id_private, id);
	bool ret;

	spin_lock_irq(&cm_id_priv->lock);
	ret = cm_peer_expected(cm_id_priv);
	spin_unlock_irq(&cm_id_priv->lock);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(cm_peer_test_expected);
#endif

/*
 * Peer-to-peer: a passive end in user space was told ESTABLISHED when its
 * accept returned, at the RTU or when its wait for it ended (librdmacm
 * completes its connect as an active one's).  If it disconnects before
 * the RTU came, the other end is established: stop the REP and send DREQ
 * as from ESTABLISHED, not the REJ of a destroy.
 */
void cm_peer_establish(struct cm_id_private *cm_id_priv)
{
	lockdep_assert_held(&cm_id_priv->lock);

	if (!cm_id_priv->peer_node ||
	    (cm_id_priv->id.state != IB_CM_REP_SENT &&
	     cm_id_priv->id.state != IB_CM_MRA_REP_RCVD))
		return;
	ib_cancel_mad(cm_id_priv->msg);
	cm_id_priv->id.state = IB_CM_ESTABLISHED;
}

/*
 * A REJ that matches no cm_id: it may come from the sender of a held peer
 * REQ that gave up (its cm_id was destroyed while we held the REQ).  Take
 * the REQ out, so that our peer does not claim it and answer a dead end;
 * if none is held, keep the REJ for a moment (cm_peer_rej_first()).
 * Returns true when the REJ's work was kept.
 */
bool cm_peer_rej_held(struct cm_work *work, struct cm_rej_msg *rej_msg)
{
	struct cm_device *cm_dev = work->port->cm_dev;
	struct cm_peer_held *held;
	struct cm_peer_rej *rej;
	LIST_HEAD(dead);

	if (!atomic_read(&cm_dev->peer_nodes))
		return false;
	rej = kmalloc(sizeof(*rej), GFP_KERNEL);
	spin_lock_irq(&cm.lock);
	held = cm_peer_withdraw(&cm_dev->peer_held,
				cpu_to_be32(IBA_GET(CM_REJ_LOCAL_COMM_ID,
						    rej_msg)),
				cm_peer_sender_matches, work);
	if (!held && rej) {
		cm_peer_rej_trim(cm_dev, CM_PEER_MAX_REJS - 1, &dead);
		rej->work = work;
		rej->expires = jiffies + CM_PEER_REJ_TTL;
		list_add_tail(&rej->list, &cm_dev->peer_rejs);
		cm_dev->peer_nr_rejs++;
		work = NULL;
		rej = NULL;
	}
	spin_unlock_irq(&cm.lock);
	kfree(rej);
	cm_peer_rej_list_free(&dead);
	if (held)
		cm_peer_free_held(held);
	return !work;
}
