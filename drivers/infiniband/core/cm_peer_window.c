// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Peer-to-peer connection establishment for the IB CM:
 * the window of peer REQs per port.
 */

#include <linux/jhash.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <rdma/ib_cache.h>
#include "cm_priv.h"
#include "core_priv.h"

static void cm_peer_send_deferred(struct cm_id_private *cm_id_priv);
static void cm_peer_send_handler(struct work_struct *_work);

/*
 * A flow's retransmission timeout for its peer REQs, as RFC 6298 computes
 * it from the answered ones, within constants of ours.
 */
static unsigned long cm_peer_rto(const struct cm_port *port,
				 const struct cm_peer_flow *fl)
{
	unsigned long rto = msecs_to_jiffies(CM_PEER_RTO_INIT_MS);

	if (port->cm_dev->peer_rto_ms)
		return msecs_to_jiffies(port->cm_dev->peer_rto_ms);
	if (fl->srtt)
		rto = (fl->srtt >> 3) + fl->rttvar;
	return clamp(rto, msecs_to_jiffies(CM_PEER_RTO_MIN_MS),
		     msecs_to_jiffies(CM_PEER_RTO_MAX_MS));
}

/*
 * Fairness: the REQs waiting for a port's window are queued by flow, their
 * owner hashed with the device's random key, and the flows take the slots
 * that open in turn.  An owner that filled the window, or queued many REQs,
 * delays another's by one turn, not by its whole queue.  Within a flow the
 * REQs are queued by destination, hashed likewise, and the destinations
 * take the flow's turns in turn: REQs to an end that does not answer yet
 * (a peer not started, a host gone) delay the owner's REQs to others by
 * one turn, not by all of them.
 */
int cm_peer_window_init(struct cm_port *port)
{
	unsigned int i, j;

	BUILD_BUG_ON(CM_PEER_DESTS > 256);	/* u8 peer_next_dest[] */
	/* apart from cm_port: 8 KiB, which only peer REQs use */
	port->peer_deferred = kcalloc(CM_PEER_FLOWS,
				      sizeof(*port->peer_deferred), GFP_KERNEL);
	if (!port->peer_deferred)
		return -ENOMEM;
	INIT_LIST_HEAD(&port->peer_out);
	INIT_LIST_HEAD(&port->peer_behind);
	for (i = 0; i < CM_PEER_FLOWS; i++)
		for (j = 0; j < CM_PEER_DESTS; j++)
			INIT_LIST_HEAD(&port->peer_deferred[i][j]);
	cm_peer_window_fresh(port);
	INIT_DELAYED_WORK(&port->peer_send, cm_peer_send_handler);
	return 0;
}

void cm_peer_window_free(struct cm_port *port)
{
	if (port)
		kfree(port->peer_deferred);
}

/* A flow as new: its window and RTO estimate, not its REQs out */
static void cm_peer_flow_fresh(struct cm_peer_flow *fl)
{
	fl->cwnd = CM_PEER_CWND_INIT;
	fl->ssthresh = UINT_MAX;
	fl->answered = 0;
	fl->srtt = 0;
	fl->rttvar = 0;
}

/* Every flow of @port as new (set-up, and KUnit between cases) */
void cm_peer_window_fresh(struct cm_port *port)
{
	unsigned int i;

	for (i = 0; i < CM_PEER_FLOWS; i++)
		cm_peer_flow_fresh(&port->peer_flow[i]);
	memset(port->peer_next_dest, 0, sizeof(port->peer_next_dest));
}

unsigned int cm_peer_window_flow(struct cm_device *cm_dev, unsigned long owner)
{
	return jhash(&owner, sizeof(owner), cm_dev->peer_held.gid_seed) %
	       CM_PEER_FLOWS;
}

/*
 * The queue of @owner's REQ by @av for @sid: its destination (GID, LID and
 * service ID) and owner hashed, so that owners sharing a flow share no
 * queue unless they collide again.
 */
unsigned int cm_peer_window_dest(const struct cm_av *av, __be64 sid,
				 unsigned long owner)
{
	const struct rdma_ah_attr *ah_attr = &av->ah_attr;
	union ib_gid dgid = {};
	u64 id = be64_to_cpu(sid);
	u32 h;

	if (rdma_ah_get_ah_flags(ah_attr) & IB_AH_GRH)
		dgid = rdma_ah_read_grh(ah_attr)->dgid;
	h = jhash(&dgid, sizeof(dgid), av->port->cm_dev->peer_held.gid_seed);
	h = jhash_3words(upper_32_bits(id), lower_32_bits(id),
			 rdma_ah_get_dlid(ah_attr), h);
	h = jhash_2words(upper_32_bits(owner), lower_32_bits(owner), h);
	return h % CM_PEER_DESTS;
}

static void cm_peer_queue(struct cm_peer_wait *wait, bool first)
{
	struct cm_port *port = wait->port;
	struct list_head *q = &port->peer_deferred[wait->flow][wait->dest];

	lockdep_assert_held(&cm.lock);
	if (first)
		list_add(&wait->window, q);
	else
		list_add_tail(&wait->window, q);
	__set_bit(wait->flow, port->peer_flows);
}

static bool cm_peer_flow_open(struct cm_port *port, unsigned int flow)
{
	return port->peer_flow[flow].out < port->peer_flow[flow].cwnd;
}

/* The first REQ of @flow's queue whose turn it is, if any */
static struct cm_peer_wait *cm_peer_flow_next(struct cm_port *port,
					      unsigned int flow)
{
	unsigned int i, dest = port->peer_next_dest[flow];
	struct cm_peer_wait *wait;

	for (i = 0; i < CM_PEER_DESTS; i++) {
		wait = list_first_entry_or_null(&port->peer_deferred[flow][dest],
						struct cm_peer_wait, window);
		if (wait)
			return wait;
		dest = (dest + 1) % CM_PEER_DESTS;
	}
	return NULL;
}

/*
 * The REQ whose turn it is, among the flows with room in their window
 * (@all: any); clears the flows found empty.
 */
static struct cm_peer_wait *cm_peer_next_waiting(struct cm_port *port,
						 bool all)
{
	struct cm_peer_wait *wait;
	unsigned int i;

	lockdep_assert_held(&cm.lock);
	for_each_set_bit_wrap(i, port->peer_flows, CM_PEER_FLOWS,
			      port->peer_next_flow) {
		wait = cm_peer_flow_next(port, i);
		if (!wait)
			__clear_bit(i, port->peer_flows);
		else if (all || cm_peer_flow_open(port, i))
			return wait;
	}
	return NULL;
}

/* A REQ of @fl answered within its RTO: the flow's window opens. */
static void cm_peer_flow_grow(struct cm_port *port, struct cm_peer_flow *fl)
{
	if (fl->cwnd < fl->ssthresh) {
		fl->cwnd++;
	} else if (++fl->answered >= fl->cwnd) {
		fl->answered = 0;
		fl->cwnd++;
	}
	fl->cwnd = min(fl->cwnd, max(port->cm_dev->peer_window / 2, 1U));
}

/* A REQ of @fl unanswered for an RTO, lost or late: the window closes. */
static void cm_peer_flow_cut(struct cm_port *port, struct cm_peer_flow *fl)
{
	if (time_before(jiffies, fl->cut_until))
		return;
	fl->ssthresh = max(fl->cwnd / 2, CM_PEER_CWND_MIN);
	fl->cwnd = fl->ssthresh;
	fl->answered = 0;
	fl->cut_until = jiffies + cm_peer_rto(port, fl);
}

/* Our peer REQ is deferred, never sent (cm_peer_post_req()). */
bool cm_peer_unposted(struct cm_id_private *cm_id_priv)
{
	lockdep_assert_held(&cm_id_priv->lock);
	return cm_id_priv->peer_wait && cm_id_priv->peer_wait->deferred;
}

/*
 * The other end's CM answered our REQ (REP, MRA or REJ): within its RTO
 * the flow's window opens; a round-trip sample unless the answer may be to
 * a retransmission (Karn) or took longer than our bound (a REQ held for a
 * peer not there yet is answered when that peer comes).
 */
void cm_peer_window_answered(struct cm_id_private *cm_id_priv)
{
	struct cm_peer_wait *wait = cm_id_priv->peer_wait;
	struct cm_peer_flow *fl;
	long m, err;

	lockdep_assert_held(&cm.lock);
	if (wait->deferred || !wait->out_at)
		return;
	fl = &wait->port->peer_flow[wait->flow];
	if (!list_empty(&wait->window))
		cm_peer_flow_grow(wait->port, fl);
	m = jiffies - wait->out_at;
	wait->out_at = 0;
	if (wait->resends || m >= msecs_to_jiffies(CM_PEER_RTO_MAX_MS))
		return;
	m = max(m, 1L);
	if (!fl->srtt) {
		fl->srtt = m << 3;
		fl->rttvar = m << 1;
		return;
	}
	err = m - (long)(fl->srtt >> 3);
	fl->srtt += err;
	fl->rttvar += abs(err) - (fl->rttvar >> 2);
}

/* A REQ waiting for the window ends with its budget; a timer holds a ref */
static void cm_peer_window_time(struct cm_peer_wait *wait)
{
	unsigned long now = jiffies;

	if (queue_delayed_work(cm.wq, &wait->expire,
			       time_after(wait->deadline, now) ?
			       wait->deadline - now : 0))
		refcount_inc(&wait->cm_id_priv->refcount);
}

static void cm_peer_window_untime(struct cm_peer_wait *wait)
{
	if (cancel_delayed_work(&wait->expire))
		cm_deref_id(wait->cm_id_priv);
}

/*
 * The budget of a REQ waiting for the window, or behind the listener's
 * REQ, is over: it fails as a REQ that timed out.  Not while it gives way
 * to the other end's REQ: that REQ decides, and cm_peer_unyield() times
 * ours again.
 */
void cm_peer_window_expire_handler(struct work_struct *_work)
{
	struct cm_peer_wait *wait = container_of(to_delayed_work(_work),
						 struct cm_peer_wait, expire);
	struct cm_id_private *cm_id_priv = wait->cm_id_priv;
	bool expired;

	spin_lock_irq(&cm_id_priv->lock);
	spin_lock(&cm.lock);
	/* a late run of a timer since cancelled may find a newer REQ */
	expired = wait->deferred && !list_empty(&wait->window) &&
		  time_after_eq(jiffies, wait->deadline);
	spin_unlock(&cm.lock);
	if (expired) {
		cm_peer_resend_failed(cm_id_priv);
		return;
	}
	spin_unlock_irq(&cm_id_priv->lock);
	cm_deref_id(cm_id_priv);
}

/* Post the deferred REQs of @port now; under cm.lock. */
static void cm_peer_kick(struct cm_port *port)
{
	lockdep_assert_held(&cm.lock);
	if (!bitmap_empty(port->peer_flows, CM_PEER_FLOWS) &&
	    !port->cm_dev->going_down)
		mod_delayed_work(cm.wq, &port->peer_send, 0);
}

/*
 * Is there room for one more REQ out, of @flow (-1: any)?  The REQs out
 * unanswered for their RTO leave the window first, as lost to their flow:
 * all of them, as the RTO moves and peer_out is in posting order only.
 */
static bool cm_peer_window_open(struct cm_port *port, int flow)
{
	struct cm_peer_wait *wait, *tmp;

	lockdep_assert_held(&cm.lock);
	list_for_each_entry_safe(wait, tmp, &port->peer_out, window) {
		if (time_before(jiffies, wait->out_until))
			continue;
		list_del_init(&wait->window);
		port->peer_nr_out--;
		port->peer_flow[wait->flow].out--;
		cm_peer_flow_cut(port, &port->peer_flow[wait->flow]);
	}
	return port->peer_nr_out < port->cm_dev->peer_window &&
	       (flow < 0 || cm_peer_flow_open(port, flow));
}

/*
 * May our REQ, out unanswered past its RTO within its budget, likely lost,
 * go again now?  Then it leaves the window as lost to its flow, as
 * cm_peer_window_open() would take it out, and the next may go again an
 * RTO later at the earliest.  Under cm.lock.
 */
bool cm_peer_window_resend(struct cm_peer_wait *wait)
{
	struct cm_port *port = wait->port;
	struct cm_peer_flow *fl;

	lockdep_assert_held(&cm.lock);
	if (wait->deferred || !wait->out_at ||
	    time_before(jiffies, wait->out_until) ||
	    !time_before(jiffies, wait->deadline))
		return false;
	fl = &port->peer_flow[wait->flow];
	if (!list_empty(&wait->window)) {
		list_del_init(&wait->window);
		port->peer_nr_out--;
		fl->out--;
		cm_peer_flow_cut(port, fl);
		cm_peer_kick(port);
	}
	wait->out_until = jiffies + cm_peer_rto(port, fl);
	return true;
}

static void cm_peer_window_add(struct cm_peer_wait *wait)
{
	struct cm_peer_flow *fl = &wait->port->peer_flow[wait->flow];

	lockdep_assert_held(&cm.lock);
	if (!fl->out && time_after(jiffies, fl->last_out +
				   msecs_to_jiffies(CM_PEER_FLOW_IDLE_MS)))
		cm_peer_flow_fresh(fl);
	fl->last_out = jiffies;
	wait->out_at = jiffies | 1;
	wait->out_until = jiffies + cm_peer_rto(wait->port, fl);
	list_add_tail(&wait->window, &wait->port->peer_out);
	wait->port->peer_nr_out++;
	fl->out++;
}

/*
 * Our REQ leaves the window or its queue: answered, failed or given up.
 * A REQ never posted is freed here, as nothing else completes it.
 */
void cm_peer_window_del(struct cm_id_private *cm_id_priv)
{
	struct cm_peer_wait *wait = cm_id_priv->peer_wait;

	lockdep_assert_held(&cm.lock);
	wait->behind = false;
	/* answered or ended: not lost (cm_peer_stay_active()) */
	if (cancel_delayed_work(&wait->lost))
		cm_deref_id(cm_id_priv);
	if (wait->deferred) {
		wait->deferred = false;
		cm_peer_window_untime(wait);
		cm_free_priv_msg(cm_id_priv->msg);
	} else if (!list_empty(&wait->window)) {
		wait->port->peer_nr_out--;
		wait->port->peer_flow[wait->flow].out--;
		cm_peer_kick(wait->port);
	}
	list_del_init(&wait->window);
}

/* The other end's CM answered our REQ (MRA, REJ): it leaves the window. */
void cm_peer_window_leave(struct cm_id_private *cm_id_priv)
{
	lockdep_assert_held(&cm_id_priv->lock);
	if (!cm_id_priv->peer_wait || cm_id_priv->peer_wait->deferred)
		return;
	spin_lock(&cm.lock);
	cm_peer_window_answered(cm_id_priv);
	cm_peer_window_del(cm_id_priv);
	spin_unlock(&cm.lock);
}

/*
 * Post our REQ and keep it (cm_peer_keep_req()) once it is out, before a
 * REJ can come (it needs our lock), not after ib_send_cm_req() returned.
 */
static int cm_peer_post_keep(struct cm_id_private *cm_id_priv,
			     struct ib_mad_send_buf *msg)
{
	int ret = ib_post_send_mad(msg, NULL);

	if (!ret) {
		spin_lock(&cm.lock);
		cm_peer_keep_req(cm_id_priv);
		spin_unlock(&cm.lock);
	}
	return ret;
}

/*
 * Post our peer REQ, from ib_send_cm_req() under cm_id_priv->lock, or
 * queue it while the window of its port is full, or keep it while it
 * waits behind the listener's REQ (cm_peer_claim_req()).  Not listed (no
 * ib_send_cm_peer_req()): posted as any REQ.
 */
int cm_peer_post_req(struct cm_id_private *cm_id_priv,
		     struct ib_mad_send_buf *msg)
{
	struct cm_peer_wait *wait = cm_id_priv->peer_wait;
	struct cm_port *port = cm_id_priv->av.port;
	int ret;

	lockdep_assert_held(&cm_id_priv->lock);
	spin_lock(&cm.lock);
	if (cm_peer_listed(cm_id_priv)) {
		IBA_SET(CM_REQ_PEER_TO_PEER, (struct cm_req_msg *)msg->mad, 1);
		wait->port = port;
		wait->flow = cm_peer_window_flow(port->cm_dev, wait->owner);
		wait->dest = cm_peer_window_dest(&cm_id_priv->av,
						 cm_id_priv->id.service_id,
						 wait->owner);
		/* the budget of ib_send_cm_req(), window wait included */
		wait->deadline = jiffies +
			msecs_to_jiffies(cm_id_priv->timeout_ms *
					 (cm_id_priv->max_cm_retries + 1));
		/* the listener may have answered since cm_peer_claim_req() */
		ret = wait->behind ? cm_peer_taken(cm_id_priv->peer_node,
						   &wait->entry.key) : 0;
		wait->behind = ret == -EINPROGRESS &&
			       !port->cm_dev->going_down;
		if (wait->behind) {
			/* cm_peer_unbehind() or cm_peer_find_in() ends it */
			wait->deferred = true;
			list_add_tail(&wait->window, &port->peer_behind);
			cm_peer_window_time(wait);
			cm_peer_count(port, CM_PEER_DEFERRED_COUNTER);
			spin_unlock(&cm.lock);
			return 0;
		}
		if (ret && ret != -EINPROGRESS) {
			/* accepted: that is the pair's connection */
			spin_unlock(&cm.lock);
			return ret;
		}
		/* going down: posted, the MAD agent's end fails it */
		if (!port->cm_dev->going_down &&
		    (!bitmap_empty(port->peer_flows, CM_PEER_FLOWS) ||
		     !cm_peer_window_open(port, wait->flow))) {
			wait->deferred = true;
			cm_peer_queue(wait, false);
			cm_peer_window_time(wait);
			cm_peer_count(port, CM_PEER_DEFERRED_COUNTER);
			/* it reschedules itself for the first round trip out */
			cm_peer_kick(port);
			spin_unlock(&cm.lock);
			return 0;
		}
		cm_peer_window_add(wait);
		spin_unlock(&cm.lock);
		return cm_peer_post_keep(cm_id_priv, msg);
	}
	spin_unlock(&cm.lock);
	return ib_post_send_mad(msg, NULL);
}

/* Our deferred REQ, off the queues, waits in one, first in line. */
void cm_peer_requeue(struct cm_peer_wait *wait)
{
	lockdep_assert_held(&cm.lock);
	cm_peer_queue(wait, true);
	wait->port->peer_next_dest[wait->flow] = wait->dest;
	cm_peer_window_time(wait);
	cm_peer_kick(wait->port);
}

/*
 * Our REQ, waiting behind the listener's REQ (cm_peer_unbehind()), fails
 * now, as one whose budget is spent (cm_peer_find_in() passes it over
 * meanwhile).  The timer holds a reference.
 */
void cm_peer_window_fail(struct cm_peer_wait *wait)
{
	lockdep_assert_held(&cm.lock);
	wait->deadline = jiffies;
	if (!mod_delayed_work(cm.wq, &wait->expire, 0))
		refcount_inc(&wait->cm_id_priv->refcount);
}

/* The REQ we gave way to was refused: ours waits again. */
void cm_peer_unyield(struct cm_id_private *cm_id_priv)
{
	struct cm_peer_wait *wait = cm_id_priv->peer_wait;
	bool post = false;

	spin_lock_irq(&cm.lock);
	if (wait && wait->deferred && list_empty(&wait->window)) {
		cm_peer_requeue(wait);
		/* going down: nothing kicks the port any more */
		post = wait->port->cm_dev->going_down;
	}
	spin_unlock_irq(&cm.lock);
	if (post) {
		refcount_inc(&cm_id_priv->refcount);
		cm_peer_send_deferred(cm_id_priv);
	}
}

/* The next REQ waiting for @port's window, referenced, if there is room. */
static struct cm_id_private *cm_peer_next_deferred(struct cm_port *port,
						   bool all)
{
	struct cm_id_private *cm_id_priv = NULL;
	struct cm_peer_wait *wait = NULL, *out;
	unsigned long next;

	spin_lock_irq(&cm.lock);
	if (all || cm_peer_window_open(port, -1))
		wait = cm_peer_next_waiting(port, all);
	if (wait) {
		port->peer_next_flow = (wait->flow + 1) % CM_PEER_FLOWS;
		port->peer_next_dest[wait->flow] =
			(wait->dest + 1) % CM_PEER_DESTS;
		cm_id_priv = wait->cm_id_priv;
		refcount_inc(&cm_id_priv->refcount);
	} else if (!bitmap_empty(port->peer_flows, CM_PEER_FLOWS) &&
		   !port->cm_dev->going_down) {
		/* full: again when the first REQ out has had its RTO */
		next = jiffies + MAX_JIFFY_OFFSET;
		list_for_each_entry(out, &port->peer_out, window)
			if (time_before(out->out_until, next))
				next = out->out_until;
		queue_delayed_work(cm.wq, &port->peer_send,
				   time_after(next, jiffies) ? next - jiffies : 0);
	}
	spin_unlock_irq(&cm.lock);
	return cm_id_priv;
}

/*
 * The retries of a REQ posted late, or sent again, that fit in what is
 * left of its budget
 */
int cm_peer_retries_left(struct cm_id_private *cm_id_priv)
{
	unsigned long left = cm_id_priv->peer_wait->deadline - jiffies;
	unsigned int tries;

	if (time_after_eq(jiffies, cm_id_priv->peer_wait->deadline))
		return 0;
	tries = jiffies_to_msecs(left) / max(cm_id_priv->timeout_ms, 1);
	return clamp_t(int, (int)tries - 1, 0, cm_id_priv->max_cm_retries);
}

/* Post @cm_id_priv's REQ if it still waits; drops the caller's reference. */
static void cm_peer_send_deferred(struct cm_id_private *cm_id_priv)
{
	struct cm_peer_wait *wait = cm_id_priv->peer_wait;
	bool post;

	spin_lock_irq(&cm_id_priv->lock);
	spin_lock(&cm.lock);
	/* not given way meanwhile (off the list), nor ended (not deferred) */
	post = wait->deferred && !list_empty(&wait->window);
	if (post) {
		list_del(&wait->window);
		wait->deferred = false;
		cm_peer_window_untime(wait);
		cm_id_priv->msg->retries = cm_peer_retries_left(cm_id_priv);
		cm_peer_window_add(wait);
		cm_peer_keep_req(cm_id_priv);
	}
	spin_unlock(&cm.lock);
	if (post && ib_post_send_mad(cm_id_priv->msg, NULL)) {
		cm_free_priv_msg(cm_id_priv->msg);
		cm_peer_resend_failed(cm_id_priv);
		return;
	}
	spin_unlock_irq(&cm_id_priv->lock);
	cm_deref_id(cm_id_priv);
}

static void cm_peer_send_handler(struct work_struct *_work)
{
	struct cm_port *port = container_of(to_delayed_work(_work),
					    struct cm_port, peer_send);
	struct cm_id_private *cm_id_priv;

	while ((cm_id_priv = cm_peer_next_deferred(port, false)))
		cm_peer_send_deferred(cm_id_priv);
}

/*
 * The device goes: post every deferred REQ, window or not, behind a
 * listener's REQ or not.  Unregistering the MAD agent then fails them as
 * it fails the REQs already out.
 */
void cm_peer_send_all(struct cm_device *cm_dev)
{
	struct cm_peer_wait *wait, *tmp;
	struct cm_id_private *cm_id_priv;
	struct cm_port *port;
	u32 i;

	rdma_for_each_port(cm_dev->ib_device, i) {
		port = cm_dev->port[i - 1];
		if (!port)
			continue;
		cancel_delayed_work_sync(&port->peer_send);
		spin_lock_irq(&cm.lock);
		list_for_each_entry_safe(wait, tmp, &port->peer_behind,
					 window) {
			list_del(&wait->window);
			wait->behind = false;
			cm_peer_queue(wait, false);
		}
		spin_unlock_irq(&cm.lock);
		while ((cm_id_priv = cm_peer_next_deferred(port, true)))
			cm_peer_send_deferred(cm_id_priv);
	}
}
