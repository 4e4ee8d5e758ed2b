/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * IB CM peer-to-peer connection establishment: the engine.
 *
 * The engine knows nothing about ib_cm internals.  It provides the pieces
 * that ib_cm's peer code (cm_peer_ib.c and the others) glues into its REQ
 * handling:
 *
 *  - the arbiter that decides which end of a REQ collision stays active;
 *  - the index of one peer service ID (a node of ib_cm's
 *    listen_service_table): the local peer ids waiting for the other end,
 *    the peer REQs held for them and the REQs its listener took, all
 *    found by the same key;
 *  - the device's queue of held REQs, bounded in count and age.
 *
 * Nothing here takes a lock: the caller serializes every call on the
 * indexes and the queue of one device (ib_cm uses cm.lock).
 */
#ifndef _CM_PEER_H
#define _CM_PEER_H

#include <linux/types.h>
#include <linux/jhash.h>
#include <linux/list.h>
#include <linux/rbtree.h>
#include <rdma/ib_verbs.h>

/**
 * enum cm_peer_role - outcome of a REQ collision for the local end
 * @CM_PEER_PASSIVE: drop the local REQ, answer the remote REQ with a REP
 * @CM_PEER_ACTIVE: drop the remote REQ, wait for the REP to the local REQ
 */
enum cm_peer_role {
	CM_PEER_PASSIVE,
	CM_PEER_ACTIVE,
};

/**
 * struct cm_peer_ident - what the arbiter compares of one REQ
 * @ca_guid: REQ:Local CA GUID of the REQ's sender
 * @qpn: REQ:Local QPN of the REQ's sender (24 bits; upper bits ignored)
 * @comm_id: REQ:Local Communication ID, tells loopback from a tie
 */
struct cm_peer_ident {
	__be64 ca_guid;
	u32 qpn;
	__be32 comm_id;
};

int cm_peer_arbitrate(const struct cm_peer_ident *local,
		      const struct cm_peer_ident *remote);

/* Longest match blob: all of a REQ's private data. */
#define CM_PEER_MATCH_MAX 92

/*
 * A peer REQ (ib_send_cm_peer_req()) sets the first bit of the REQ's
 * reserved byte 4 (IBTA Vol 1, 12.6.5), so that the receiving CM holds
 * only peer REQs and rejects a client/server REQ with no listener at once.
 * A CM without peer support ignores it, as the spec requires of reserved
 * fields: the REQ is then answered in the client/server model.
 */
#define CM_REQ_PEER_TO_PEER CM_FIELD_BLOC(struct cm_req_msg, 4, 0, 1)

/**
 * struct cm_peer_key - what a peer REQ and a waiting peer id are matched by
 * @local_gid: the local end's port GID (REQ:Primary Remote Port GID)
 * @remote_gid: the remote end's port GID (REQ:Primary Local Port GID)
 * @match: the first match_len bytes of the REQ's private data, as the
 *	index's owner expects them (see &struct cm_peer_index); owned by
 *	whoever owns the entry
 *
 * The service ID is not part of the key: each service ID has its own index.
 */
struct cm_peer_key {
	union ib_gid local_gid;
	union ib_gid remote_gid;
	const u8 *match;
};

/**
 * struct cm_peer_entry - a waiting peer id or a held REQ in an index
 * @node: in one of the index's trees
 * @key: what it is found by
 * @seq: arrival order among equal keys, set by the index
 */
struct cm_peer_entry {
	struct rb_node node;
	struct cm_peer_key key;
	u64 seq;
};

/**
 * enum cm_peer_tree - the trees of an index
 * @CM_PEER_WAITING: local peer ids whose REQ waits for the other end
 * @CM_PEER_HELD: peer REQs that arrived before their local peer's REQ
 * @CM_PEER_PENDING: REQs the service ID's listener took (on demand),
 *	while their connection lasts
 * @CM_PEER_TREES: number of trees
 */
enum cm_peer_tree {
	CM_PEER_WAITING,
	CM_PEER_HELD,
	CM_PEER_PENDING,
	CM_PEER_TREES,
};

/**
 * struct cm_peer_index - the peer ids and held REQs of one service ID
 * @root: one tree per &enum cm_peer_tree, ordered by key, then arrival
 * @seq: next arrival number
 * @match_len: bytes of private data every key of the index compares
 * @match_mask: NULL, or @match_len bytes: only the bits set in them are
 *	compared (a ULP's private data may hold fields, such as a protocol
 *	version, that the two ends of one connection may fill differently)
 * @nr_held: entries in its %CM_PEER_HELD tree
 *
 * Lookups are O(log n): a key is two GIDs and @match_len bytes, compared
 * with memcmp() or under @match_mask.  Equal keys are allowed (raw ib_cm
 * peers of one service ID on one port, without a match blob, are told
 * apart only by the arbiter); they are kept in arrival order.
 */
struct cm_peer_index {
	struct rb_root root[CM_PEER_TREES];
	u64 seq;
	u8 match_len;
	const u8 *match_mask;
	unsigned int nr_held;
};

void cm_peer_index_init(struct cm_peer_index *idx, u8 match_len);
void cm_peer_index_mask(struct cm_peer_index *idx, const u8 *mask);
bool cm_peer_index_empty(const struct cm_peer_index *idx);
void cm_peer_add(struct cm_peer_index *idx, enum cm_peer_tree tree,
		 struct cm_peer_entry *entry);
void cm_peer_del(struct cm_peer_index *idx, enum cm_peer_tree tree,
		 struct cm_peer_entry *entry);
struct cm_peer_entry *cm_peer_first(const struct cm_peer_index *idx,
				    enum cm_peer_tree tree,
				    const struct cm_peer_key *key);
struct cm_peer_entry *cm_peer_first_in(const struct cm_peer_index *from,
				       enum cm_peer_tree tree,
				       const struct cm_peer_index *idx,
				       const struct cm_peer_key *key);
struct cm_peer_entry *cm_peer_next_in(const struct cm_peer_index *from,
				      const struct cm_peer_index *idx,
				      const struct cm_peer_key *key,
				      const struct cm_peer_entry *entry);
struct cm_peer_entry *cm_peer_next(const struct cm_peer_index *idx,
				   const struct cm_peer_entry *entry);

/**
 * struct cm_peer_held - a peer REQ held for a local peer
 * @entry: in its index's %CM_PEER_HELD tree
 * @comm_node: in the queue's tree by @remote_comm_id (REJs find it there)
 * @list: in the queue, in expiry order
 * @index: the index it is held in
 * @expires: jiffies after which it is no longer claimable
 * @remote_comm_id: REQ:Local Communication ID
 * @req: the caller's, e.g. the REQ's receive work
 * @min_len: the caller's, e.g. the shortest key that may claim it
 *
 * Allocated and freed by the caller; owned by the queue from
 * cm_peer_hold() until one of the functions that take it out returns it.
 */
struct cm_peer_held {
	struct cm_peer_entry entry;
	struct rb_node comm_node;
	struct list_head list;
	struct cm_peer_index *index;
	unsigned long expires;
	__be32 remote_comm_id;
	void *req;
	u8 min_len;
};

/*
 * Held REQs per device: each costs its receive buffer and work, about
 * 1 KiB, so a device holds at most ~4 MiB; one service ID, and one
 * sending port GID, take at most a quarter each, so that a flood of one
 * port, or from one host, leaves room for the others.
 */
#define CM_PEER_MAX_HELD	4096

/*
 * How long a REQ is held at most, whatever its sender's timeouts say (up
 * to 74 hours): its expiry REJ makes a peer sender send it again, within
 * its own budget, so a longer wait costs a round trip per 20 s.
 */
#define CM_PEER_MAX_AGE_MS	20000

/* Counters of held REQs per sending port GID, hashed with a random key */
#define CM_PEER_GID_BUCKETS	64

/**
 * struct cm_peer_queue - the REQs held on one device
 * @list: &struct cm_peer_held, in expiry order
 * @by_comm: &struct cm_peer_held by remote communication ID
 * @count: entries held
 * @max_held: most entries at once
 * @max_held_svc: most entries of one index, and of one sending GID, at once
 * @max_age_ms: claimable lifetime of every entry, or 0: each entry's own
 * @gid_seed: the hash key of @by_gid
 * @by_gid: entries per bucket of the sender's port GID (key.remote_gid)
 */
struct cm_peer_queue {
	struct list_head list;
	struct rb_root by_comm;
	unsigned int count;
	unsigned int max_held;
	unsigned int max_held_svc;
	unsigned int max_age_ms;
	u32 gid_seed;
	unsigned int by_gid[CM_PEER_GID_BUCKETS];
};

#if IS_ENABLED(CONFIG_INFINIBAND_CM_PEER)
void cm_peer_queue_init(struct cm_peer_queue *q, unsigned int max_held,
			unsigned int max_held_svc, unsigned int max_age_ms);
#else
/* ib_cm sets up its queue of held REQs; without the engine it stays empty */
static inline void cm_peer_queue_init(struct cm_peer_queue *q,
				      unsigned int max_held,
				      unsigned int max_held_svc,
				      unsigned int max_age_ms)
{
}
#endif
void cm_peer_queue_limits(struct cm_peer_queue *q, unsigned int max_held,
			  unsigned int max_held_svc, unsigned int max_age_ms);

/* How long cm_peer_hold() would keep an entry it is given @age_ms for. */
static inline unsigned int cm_peer_hold_age_ms(const struct cm_peer_queue *q,
					       unsigned int age_ms)
{
	return min(READ_ONCE(q->max_age_ms) ?: age_ms, CM_PEER_MAX_AGE_MS);
}

/* The @by_gid bucket of the sender's port GID @gid */
static inline unsigned int cm_peer_gid_bucket(const struct cm_peer_queue *q,
					      const union ib_gid *gid)
{
	return jhash(gid->raw, sizeof(gid->raw), q->gid_seed) %
	       CM_PEER_GID_BUCKETS;
}

int cm_peer_hold(struct cm_peer_queue *q, struct cm_peer_index *idx,
		 struct cm_peer_held *held, unsigned int age_ms);
void cm_peer_unhold(struct cm_peer_queue *q, struct cm_peer_held *held);
void cm_peer_rehold(struct cm_peer_index *from, struct cm_peer_index *to);
struct cm_peer_held *cm_peer_claim(struct cm_peer_queue *q,
				   struct cm_peer_index *idx,
				   const struct cm_peer_key *key);
struct cm_peer_held *
cm_peer_withdraw(struct cm_peer_queue *q, __be32 remote_comm_id,
		 bool (*match)(const struct cm_peer_held *held,
			       const void *arg),
		 const void *arg);
struct cm_peer_held *cm_peer_expired(struct cm_peer_queue *q);
bool cm_peer_next_expiry(const struct cm_peer_queue *q, unsigned long *when);

#endif /* _CM_PEER_H */
