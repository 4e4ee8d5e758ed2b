/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Copyright (c) 2004-2007 Intel Corporation.  All rights reserved.
 * Copyright (c) 2004 Topspin Corporation.  All rights reserved.
 * Copyright (c) 2004, 2005 Voltaire Corporation.  All rights reserved.
 * Copyright (c) 2005 Sun Microsystems, Inc. All rights reserved.
 * Copyright (c) 2019, Mellanox Technologies inc.  All rights reserved.
 *
 * The IB CM's private structures, shared by cm.c and the files of its
 * peer-to-peer support.
 */

#ifndef _CM_PRIV_H
#define _CM_PRIV_H

#include <linux/completion.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/rbtree.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_cm.h>
#include "cm_msgs.h"
#include "cm_peer.h"

struct ib_cm {
	spinlock_t lock;	/* the rb_roots and timewait_list */
	struct list_head device_list;
	rwlock_t device_lock;
	struct rb_root listen_service_table;
	u64 listen_service_id;
	struct rb_root remote_qp_table;
	struct rb_root remote_id_table;
	struct rb_root remote_sidr_table;
	struct xarray local_id_table;
	u32 local_id_next;
	__be32 random_id_operand;
	struct list_head timewait_list;
	struct workqueue_struct *wq;
};

/* Counter indexes ordered by attribute ID */
enum {
	CM_REQ_COUNTER,
	CM_MRA_COUNTER,
	CM_REJ_COUNTER,
	CM_REP_COUNTER,
	CM_RTU_COUNTER,
	CM_DREQ_COUNTER,
	CM_DREP_COUNTER,
	CM_SIDR_REQ_COUNTER,
	CM_SIDR_REP_COUNTER,
	CM_LAP_COUNTER,
	CM_APR_COUNTER,
	CM_ATTR_COUNT,
	CM_ATTR_ID_OFFSET = 0x0010,
};

enum {
	CM_XMIT,
	CM_XMIT_RETRIES,
	CM_RECV,
	CM_RECV_DUPLICATES,
	CM_PEER,
	CM_COUNTER_GROUPS
};

/* Counter indexes of the CM_PEER group (cm_peer in sysfs) */
enum {
	CM_PEER_MATCHED_COUNTER,	/* peer REQ matched a local peer REQ */
	CM_PEER_STAYED_ACTIVE_COUNTER,	/* ... and we stayed active */
	CM_PEER_TURNED_PASSIVE_COUNTER,	/* ... and we turned passive */
	CM_PEER_HELD_COUNTER,		/* peer REQ held for a local peer */
	CM_PEER_CLAIMED_COUNTER,	/* held REQ claimed by a local peer */
	CM_PEER_EXPIRED_COUNTER,	/* held REQ expired and was rejected */
	CM_PEER_REFUSED_COUNTER,	/* peer REQ rejected, queue full */
	CM_PEER_WITHDRAWN_COUNTER,	/* held REQ taken out by its sender */
	CM_PEER_DROPPED_COUNTER,	/* peer REQ dropped, its REJ came first */
	CM_PEER_RESENT_COUNTER,		/* peer REQ sent again, REJ(no SID) */
	CM_PEER_DEFERRED_COUNTER,	/* peer REQ waited for the window */
	CM_PEER_COUNTERS
};

/* Flows of a port's waiting peer REQs, taken in turn: owners, hashed */
#define CM_PEER_FLOWS	64
/* ... and a flow's queues, taken in turn: its REQs' destinations, hashed */
#define CM_PEER_DESTS	8

/*
 * A flow's congestion window (cm_peer_window.c), as TCP's: at most cwnd of
 * its REQs out; under cm.lock.
 */
struct cm_peer_flow {
	unsigned int out;
	unsigned int cwnd;
	unsigned int ssthresh;
	unsigned int answered;		/* since cwnd last grew, over ssthresh */
	unsigned long cut_until;	/* jiffies: cwnd halves once per RTO */
	unsigned long last_out;		/* jiffies: a REQ of it last posted */
	unsigned long srtt;		/* jiffies << 3, see cm_peer_rto() */
	unsigned long rttvar;		/* jiffies << 2 */
};

struct cm_port {
	struct cm_device *cm_dev;
	struct ib_mad_agent *mad_agent;
	u32 port_num;
	atomic_long_t counters[CM_COUNTER_GROUPS][CM_ATTR_COUNT];
	/* the peer REQ window, see CM_PEER_WINDOW; under cm.lock */
	struct list_head peer_out;	/* cm_peer_wait.window: REQs posted */
	/* ... and REQs waiting to be, [CM_PEER_FLOWS] by flow and destination */
	struct list_head (*peer_deferred)[CM_PEER_DESTS];
	/* ... and REQs waiting behind a listener's REQ (cm_peer_post_req()) */
	struct list_head peer_behind;
	DECLARE_BITMAP(peer_flows, CM_PEER_FLOWS);	/* may be waiting */
	unsigned int peer_next_flow;
	u8 peer_next_dest[CM_PEER_FLOWS];	/* each flow's queue in turn */
	struct cm_peer_flow peer_flow[CM_PEER_FLOWS];
	unsigned int peer_nr_out;
	struct delayed_work peer_send;	/* cm_peer_send_handler() */
};

struct cm_device {
	struct kref kref;
	struct list_head list;
	rwlock_t mad_agent_lock;
	struct ib_device *ib_device;
	u8 ack_delay;
	int going_down;
	struct cm_peer_queue peer_held;	/* early peer REQs, under cm.lock */
	struct delayed_work peer_expire;
	struct list_head peer_rejs;	/* see cm_peer_rej_first(), cm.lock */
	unsigned int peer_nr_rejs;
	atomic_t peer_nodes;		/* peer service IDs bound */
	struct rb_root peer_node_tree;	/* their nodes, cm.lock; kzalloc'd */
	unsigned int peer_window;	/* CM_PEER_WINDOW; KUnit changes it */
	unsigned int peer_rto_ms;	/* KUnit: a fixed RTO, see cm_peer_rto() */
	struct cm_port *port[];
};

struct cm_av {
	struct cm_port *port;
	struct rdma_ah_attr ah_attr;
	u16 dlid_datapath;
	u16 pkey_index;
	u8 timeout;
};

struct cm_work {
	struct delayed_work work;
	struct list_head list;
	struct cm_port *port;
	struct ib_mad_recv_wc *mad_recv_wc;	/* Received MADs */
	__be32 local_id;			/* Established / timewait */
	__be32 remote_id;
	struct ib_cm_event cm_event;
	struct sa_path_rec path[];
};

struct cm_timewait_info {
	struct cm_work work;
	struct list_head list;
	struct rb_node remote_qp_node;
	struct rb_node remote_id_node;
	__be64 remote_ca_guid;
	__be32 remote_qpn;
	u8 inserted_remote_qp;
	u8 inserted_remote_id;
};

struct cm_id_private {
	struct ib_cm_id	id;

	struct rb_node service_node;
	struct rb_node sidr_id_node;
	u32 sidr_slid;
	spinlock_t lock;	/* Do not acquire inside cm.lock */
	struct completion comp;
	refcount_t refcount;
	/* Number of clients sharing this ib_cm_id. Only valid for listeners.
	 * Protected by the cm.lock spinlock.
	 */
	int listen_sharecount;
	struct rcu_head rcu;

	struct ib_mad_send_buf *msg;
	struct cm_timewait_info *timewait_info;
	/* todo: use alternate port on send failure */
	struct cm_av av;
	struct cm_av alt_av;

	void *private_data;
	__be64 tid;
	__be32 local_qpn;
	__be32 remote_qpn;
	enum ib_qp_type qp_type;
	__be32 sq_psn;
	__be32 rq_psn;
	int timeout_ms;
	enum ib_mtu path_mtu;
	__be16 pkey;
	u8 private_data_len;
	u8 max_cm_retries;
	u8 responder_resources;
	u8 initiator_depth;
	u8 retry_count;
	u8 rnr_retry_count;
	u8 service_timeout;
	u8 target_ack_delay;

	struct list_head work_list;
	atomic_t work_count;

	struct rdma_ucm_ece ece;

	/*
	 * Peer-to-peer, see ib_send_cm_peer_req().  peer_node and peer_wait
	 * are set once, under both locks, by ib_cm_peer_bind() and stay until
	 * cm_destroy_id(); peer_wait's entry and window are under cm.lock.
	 */
	struct cm_peer_svc *peer_svc;	/* a peer service ID's node */
	struct cm_id_private *peer_node; /* our service ID's node */
	struct cm_peer_wait *peer_wait;	/* our key, see cm_peer_list() */
	struct cm_peer_pending *peer_pending; /* cm_peer_listener_takes() */
	bool peer_listen;		/* ib_cm_insert_peer_listen() */
	bool peer_hands_back;		/* ib_cm_peer_listen_hands_back() */
	ib_cm_peer_takes peer_takes;	/* ... its filter, or NULL */
	struct list_head peer_listen_item; /* cm_peer_svc.listeners */
};

/*
 * Peer-to-peer: a peer service ID is a node of its device's peer_node_tree
 * shared by the peer ids bound to it, as ib_cm_insert_listen() shares a
 * listener.  A listen of the same service ID lives beside it: the REQ's
 * CM_REQ_PEER_TO_PEER bit picks one (cm_peer_route_req()).  Its index
 * holds the peer ids waiting for the other end and the REQs held for
 * them, under cm.lock.  With a listener (on demand), the REQs no peer id
 * waits for go to it.  Binds of the service ID that compare other match
 * bytes (rdma_cm's ids of one port in two namespaces, one with a ULP's
 * match) get nodes of their own, siblings of the one in the tree.
 */
struct cm_peer_svc {
	struct cm_peer_index index;
	struct cm_device *cm_dev;	/* referenced, owns the held REQs */
	struct cm_id_private *node;	/* whose this is */
	struct list_head siblings;	/* a ring of the service ID's nodes */
	struct list_head listeners;	/* ib_cm_insert_peer_listen(), cm.lock */
	u8 match_mask[];		/* index.match_mask's, if it has one */
};

/*
 * The next node of @head's service ID after @sib, NULL after the last:
 * from @head, every node once.  Under cm.lock.
 */
static inline struct cm_id_private *
cm_peer_next_sibling(struct cm_id_private *sib, struct cm_id_private *head)
{
	sib = list_next_entry(sib->peer_svc, siblings)->node;
	return sib == head ? NULL : sib;
}

/* A REQ the listener took: its key, in the index while connected */
struct cm_peer_pending {
	struct cm_peer_entry entry;
	struct cm_id_private *cm_id_priv;
	struct cm_id_private *node;	/* a share of it once listed */
	u8 match[CM_PEER_MATCH_MAX];
	bool peer;			/* a peer REQ, not client/server */
	bool hold;			/* ib_cm_peer_hold_req() */
	bool hands_back;		/* its listener's, see cm_peer_taken() */
};

/* A peer id's key: in its node's index while its REQ waits */
struct cm_peer_wait {
	struct cm_peer_entry entry;
	struct cm_id_private *cm_id_priv;
	struct cm_peer_ident ident;	/* of our REQ */
	bool sent;			/* our REQ is out: it may collide */
	bool expected;			/* listed early: ib_cm_peer_expect() */
	/* our REQ waits, unsent, for the listener's answer; under cm.lock */
	bool behind;
	/*
	 * The window (cm_peer_post_req()): our REQ built but not posted; on
	 * port->peer_deferred (or peer_behind, behind the listener's REQ),
	 * or off it while we give way to the other end's REQ.  Written
	 * under both cm_id_priv->lock and cm.lock.
	 */
	bool deferred;
	struct list_head window;	/* port->peer_out, _deferred, _behind */
	struct delayed_work expire;	/* while deferred: budget's end */
	struct cm_port *port;
	unsigned long owner;		/* see ib_cm_peer_set_owner() */
	unsigned int flow;		/* port->peer_deferred[], by owner */
	unsigned int dest;		/* ... [flow][], by destination */
	unsigned long out_at;		/* jiffies: posted; 0 once timed */
	unsigned long out_until;	/* jiffies: leaves peer_out then */
	/* the REQ again after REJ(invalid service ID), see cm_peer_persist() */
	struct delayed_work resend;
	/* the other end's REQ came: is ours lost?  cm_peer_stay_active() */
	struct delayed_work lost;
	unsigned long deadline;
	unsigned int resends;
	struct cm_req_msg req;
	u8 match[];
};

/*
 * The REQ's key: @match points into the REQ, so @work must stay alive
 * while the key is used (a held REQ's work is owned by its entry).
 */
struct cm_peer_req {
	struct cm_peer_key key;
	struct cm_peer_ident remote;
	__be32 comm_id;
	unsigned int age_ms;
	u8 min_len;		/* for ids of keys this long only */
};

/*
 * Peer REQs a port has out unanswered, at most: half of a receiver's GSI
 * queue (ib_mad's 512 receive buffers by default).  In a storm both ends
 * send a REQ per connection at once; unpaced, the bursts overrun the
 * receivers' queues, and a lost REQ costs its sender a whole timeout.
 * Within that, each flow of REQs (an owner, CM_PEER_FLOWS) has a window
 * of its own that follows the answers, as TCP's congestion window does:
 * from CM_PEER_CWND_INIT it opens by one per REQ answered (slow start,
 * then one per window of answers) and halves when a REQ goes unanswered
 * for an RTO, at most once per RTO, down to CM_PEER_CWND_MIN; half the
 * port's bound at most, so that one owner never fills it alone; back to
 * CM_PEER_CWND_INIT after CM_PEER_FLOW_IDLE_MS with nothing out, so that
 * the next owner hashed to the flow starts afresh.  A REQ past the window
 * is built but not posted, and gives way to the other end's REQ
 * (cm_peer_find_peer()): most connections of a storm then cost one REQ,
 * not two.  A REQ not answered within a retransmission timeout, estimated
 * from its flow's answered REQs as TCP does (RFC 6298) and kept within
 * constants of ours, so that no owner's answers set another's, is held
 * there or lost; either way it no longer fills a receive queue and leaves
 * the window, so that REQs to ends not there yet do not stall the others.
 * A path's packet lifetime is the user's to set: it plays no part.
 */
#define CM_PEER_WINDOW		256
#define CM_PEER_CWND_INIT	32
#define CM_PEER_CWND_MIN	2
#define CM_PEER_FLOW_IDLE_MS	2000
#define CM_PEER_RTO_INIT_MS	500
#define CM_PEER_RTO_MIN_MS	20
#define CM_PEER_RTO_MAX_MS	1000

extern struct ib_cm cm;

static inline void cm_deref_id(struct cm_id_private *cm_id_priv)
{
	if (refcount_dec_and_test(&cm_id_priv->refcount))
		complete(&cm_id_priv->comp);
}

static inline int cm_convert_to_ms(int iba_time)
{
	/* approximate conversion to ms from 4.096us x 2^iba_time */
	return 1 << max(iba_time - 8, 0);
}

/* cm.c, for the peer-to-peer files */
extern struct ib_client cm_client;
void cm_device_put(struct cm_device *cm_dev);
struct ib_mad_send_buf *cm_alloc_priv_msg(struct cm_id_private *cm_id_priv);
void cm_free_priv_msg(struct ib_mad_send_buf *msg);
int cm_alloc_response_msg(struct cm_port *port,
			  struct ib_mad_recv_wc *mad_recv_wc,
			  struct ib_mad_send_buf **msg);
void cm_free_response_msg(struct ib_mad_send_buf *msg);
int cm_init_av_for_response(struct cm_port *port, struct ib_wc *wc,
			    struct ib_grh *grh, struct cm_av *av);
void cm_move_av_from_path(struct cm_av *dest, struct cm_av *src);
void cm_destroy_av(struct cm_av *av);
struct cm_id_private *cm_acquire_id(__be32 local_id, __be32 remote_id);
struct cm_timewait_info *
cm_insert_remote_id(struct cm_timewait_info *timewait_info);
struct cm_id_private *__cm_find_remote_id(__be64 remote_ca_guid,
					  __be32 remote_id);
struct cm_timewait_info *
cm_insert_remote_qpn(struct cm_timewait_info *timewait_info);
struct cm_id_private *cm_alloc_id_priv(struct ib_device *device,
				       ib_cm_handler cm_handler, void *context);
void cm_free_work(struct cm_work *work);
void cm_queue_work_unlock(struct cm_id_private *cm_id_priv,
			  struct cm_work *work)
	__releases(&cm_id_priv->lock);
void cm_remove_remote(struct cm_id_private *cm_id_priv);
struct cm_timewait_info *cm_create_timewait_info(__be32 local_id);
void cm_reset_to_idle(struct cm_id_private *cm_id_priv);
void cm_format_mad_hdr(struct ib_mad_hdr *hdr, __be16 attr_id, __be64 tid);
int cm_issue_rej(struct cm_port *port, struct ib_mad_recv_wc *mad_recv_wc,
		 enum ib_cm_rej_reason reason,
		 enum cm_msg_response msg_rejected, void *ari, u8 ari_length);
bool cm_req_has_alt_path(struct cm_req_msg *req_msg);
void cm_format_req_event(struct cm_work *work, struct cm_id_private *cm_id_priv,
			 struct ib_cm_id *listen_id);
void cm_dup_req_handler(struct cm_work *work, struct cm_id_private *cm_id_priv);
void cm_req_fill_id(struct cm_id_private *cm_id_priv,
		    struct cm_req_msg *req_msg);
int cm_req_init_paths(struct cm_work *work, struct cm_av *av,
		      struct cm_av *alt_av);

#if IS_ENABLED(CONFIG_INFINIBAND_CM_PEER)
/* Listed by ib_cm_peer_expect(): its REQ goes with ib_send_cm_peer_req() */
static inline bool cm_peer_expected(const struct cm_id_private *cm_id_priv)
{
	return cm_id_priv->peer_wait && cm_id_priv->peer_wait->expected;
}

/* cm_peer_ib.c */
bool cm_peer_listed(struct cm_id_private *cm_id_priv);
void cm_peer_unlist(struct cm_id_private *cm_id_priv);
void cm_peer_unbind(struct cm_id_private *cm_id_priv);
void cm_peer_count(struct cm_port *port, int index);
void cm_peer_parse_req(struct cm_req_msg *req_msg, struct cm_peer_req *req);
struct cm_peer_held *cm_peer_rep_held(struct cm_id_private *cm_id_priv,
				      struct cm_work *work,
				      const struct cm_rep_msg *rep_msg);
void cm_peer_free_held(struct cm_peer_held *held);
void cm_peer_expire_handler(struct work_struct *_work);
void cm_peer_drain(struct cm_device *cm_dev);
struct cm_id_private *cm_peer_route_req(struct cm_work *work,
					struct cm_id_private *listen);
int cm_peer_req_handler(struct cm_work *work, struct cm_id_private *node);
bool cm_peer_redo_req(struct cm_id_private *cm_id_priv, struct cm_work *work);
void cm_peer_keep_req(struct cm_id_private *cm_id_priv);
bool cm_peer_persist(struct cm_id_private *cm_id_priv,
		     const struct cm_rej_msg *rej_msg);
void cm_peer_resend_failed(struct cm_id_private *cm_id_priv)
	__releases(&cm_id_priv->lock);
void cm_peer_establish(struct cm_id_private *cm_id_priv);
bool cm_peer_rej_held(struct cm_work *work, struct cm_rej_msg *rej_msg);

/* cm_peer_listen.c */
void cm_peer_pending_alloc(struct cm_id_private *cm_id_priv);
bool cm_peer_pending(struct cm_id_private *cm_id_priv);
struct cm_id_private *cm_peer_listener_takes(struct cm_id_private *node,
					     struct cm_id_private *cm_id_priv,
					     struct cm_req_msg *req_msg);
int cm_peer_taken(struct cm_id_private *node, const struct cm_peer_key *key);
void cm_peer_unbehind(struct cm_peer_pending *pend, bool go);
void cm_peer_accepted(struct cm_id_private *cm_id_priv);

/* cm_peer_window.c */
bool cm_peer_unposted(struct cm_id_private *cm_id_priv);
void cm_peer_window_del(struct cm_id_private *cm_id_priv);
void cm_peer_window_leave(struct cm_id_private *cm_id_priv);
void cm_peer_window_answered(struct cm_id_private *cm_id_priv);
bool cm_peer_window_resend(struct cm_peer_wait *wait);
int cm_peer_retries_left(struct cm_id_private *cm_id_priv);
void cm_peer_window_expire_handler(struct work_struct *_work);
int cm_peer_post_req(struct cm_id_private *cm_id_priv,
		     struct ib_mad_send_buf *msg);
void cm_peer_unyield(struct cm_id_private *cm_id_priv);
void cm_peer_requeue(struct cm_peer_wait *wait);
void cm_peer_window_fail(struct cm_peer_wait *wait);
int cm_peer_window_init(struct cm_port *port);
void cm_peer_window_free(struct cm_port *port);
void cm_peer_window_fresh(struct cm_port *port);
unsigned int cm_peer_window_flow(struct cm_device *cm_dev, unsigned long owner);
unsigned int cm_peer_window_dest(const struct cm_av *av, __be64 sid,
				 unsigned long owner);
void cm_peer_send_all(struct cm_device *cm_dev);
#else
/* CONFIG_INFINIBAND_CM_PEER=n: the hooks of cm.c do nothing */
static inline bool cm_peer_expected(const struct cm_id_private *cm_id_priv)
{
	return false;
}

static inline void cm_peer_unlist(struct cm_id_private *cm_id_priv)
{
}

static inline void cm_peer_unbind(struct cm_id_private *cm_id_priv)
{
}

static inline struct cm_peer_held *
cm_peer_rep_held(struct cm_id_private *cm_id_priv,
		 struct cm_work *work,
		 const struct cm_rep_msg *rep_msg)
{
	return NULL;
}

static inline void cm_peer_free_held(struct cm_peer_held *held)
{
}

static inline void cm_peer_expire_handler(struct work_struct *_work)
{
}

static inline void cm_peer_drain(struct cm_device *cm_dev)
{
}

static inline struct cm_id_private *
cm_peer_route_req(struct cm_work *work, struct cm_id_private *listen)
{
	return listen;
}

static inline int
cm_peer_req_handler(struct cm_work *work, struct cm_id_private *node)
{
	return -EOPNOTSUPP;
}

static inline bool cm_peer_persist(struct cm_id_private *cm_id_priv,
				   const struct cm_rej_msg *rej_msg)
{
	return false;
}

static inline void cm_peer_establish(struct cm_id_private *cm_id_priv)
{
}

static inline void cm_peer_accepted(struct cm_id_private *cm_id_priv)
{
}

static inline bool
cm_peer_rej_held(struct cm_work *work, struct cm_rej_msg *rej_msg)
{
	return false;
}

static inline void cm_peer_pending_alloc(struct cm_id_private *cm_id_priv)
{
}

static inline bool cm_peer_pending(struct cm_id_private *cm_id_priv)
{
	return false;
}

static inline struct cm_id_private *
cm_peer_listener_takes(struct cm_id_private *node,
		       struct cm_id_private *cm_id_priv,
		       struct cm_req_msg *req_msg)
{
	return NULL;
}

static inline bool cm_peer_redo_req(struct cm_id_private *cm_id_priv,
				    struct cm_work *work)
{
	return false;
}

static inline bool cm_peer_unposted(struct cm_id_private *cm_id_priv)
{
	return false;
}

static inline void cm_peer_window_leave(struct cm_id_private *cm_id_priv)
{
}

static inline int cm_peer_post_req(struct cm_id_private *cm_id_priv,
				   struct ib_mad_send_buf *msg)
{
	return -EOPNOTSUPP;
}

static inline int cm_peer_window_init(struct cm_port *port)
{
	return 0;
}

static inline void cm_peer_window_free(struct cm_port *port)
{
}
#endif /* CONFIG_INFINIBAND_CM_PEER */

#endif /* _CM_PRIV_H */
