// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * IB CM peer-to-peer connection establishment: the arbiter, the index of
 * a peer service ID and the queue of held REQs.
 *
 * See cm_peer.h for the overview.  Nothing here depends on ib_cm's private
 * structures, so the whole file is exercised by the KUnit suites
 * cm_peer_arbiter and cm_peer_index.
 */

#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/string.h>

#include "cm_peer.h"

/*
 * The arbiter: REQ:Local CA GUID, then REQ:Local QPN (24 bits), both as
 * unsigned numbers; the end whose own REQ compares greater stays active.
 * This is the rule of cm_is_active_peer(), written with the original
 * ib_cm in 2005 and deleted as unused in v5.5 ("RDMA/cm: Delete unused
 * cm_is_active_peer function").  A strict order of (CA GUID, QPN), so the
 * two ends of REQs that differ there always decide oppositely.  Equal CA
 * GUID and QPN are our own REQ, come back to us (loopback), when its
 * communication ID is ours: refused with -ELOOP.  Otherwise two ends that
 * cannot be told apart (VFs with node GUID 0 and equal QPNs): -ENOTUNIQ,
 * no end may take either role, or both would, so ib_cm rejects the REQ.
 */

/**
 * cm_peer_arbitrate() - decide which end of a peer REQ collision is active
 * @local: identity of the REQ this end sent
 * @remote: identity of the REQ this end received
 *
 * Return: %CM_PEER_ACTIVE or %CM_PEER_PASSIVE for the local end; -ELOOP
 * when both identities are the same (the REQ is our own); -ENOTUNIQ when
 * only the communication IDs differ (the ends cannot be ordered).
 */
int cm_peer_arbitrate(const struct cm_peer_ident *local,
		      const struct cm_peer_ident *remote)
{
	u64 lguid = be64_to_cpu(local->ca_guid);
	u64 rguid = be64_to_cpu(remote->ca_guid);
	u32 lqpn = local->qpn & 0xffffff;
	u32 rqpn = remote->qpn & 0xffffff;

	if (lguid != rguid)
		return lguid > rguid ? CM_PEER_ACTIVE : CM_PEER_PASSIVE;
	if (lqpn != rqpn)
		return lqpn > rqpn ? CM_PEER_ACTIVE : CM_PEER_PASSIVE;
	return local->comm_id == remote->comm_id ? -ELOOP : -ENOTUNIQ;
}

/*
 * The index of a peer service ID: red-black trees ordered by key, then
 * arrival, so that the oldest of equal keys is found first.
 */

static int cm_peer_match_cmp(const struct cm_peer_index *idx, const u8 *a,
			     const u8 *b)
{
	const u8 *mask = idx->match_mask;
	unsigned int i;
	u8 x, y;

	if (!mask)
		return memcmp(a, b, idx->match_len);
	for (i = 0; i < idx->match_len; i++) {
		x = a[i] & mask[i];
		y = b[i] & mask[i];
		if (x != y)
			return x < y ? -1 : 1;
	}
	return 0;
}

static int cm_peer_key_cmp(const struct cm_peer_index *idx,
			   const struct cm_peer_key *a,
			   const struct cm_peer_key *b)
{
	int cmp;

	cmp = memcmp(a->local_gid.raw, b->local_gid.raw, sizeof(a->local_gid));
	if (!cmp)
		cmp = memcmp(a->remote_gid.raw, b->remote_gid.raw,
			     sizeof(a->remote_gid));
	if (!cmp && idx->match_len)
		cmp = cm_peer_match_cmp(idx, a->match, b->match);
	return cmp;
}

/* An index of no match bytes: orders keys by their GIDs, as all do first */
static const struct cm_peer_index cm_peer_by_gids;

/**
 * cm_peer_index_init() - set up the empty index of a peer service ID
 * @idx: the index
 * @match_len: bytes of REQ private data every key compares, at most
 *	%CM_PEER_MATCH_MAX
 */
void cm_peer_index_init(struct cm_peer_index *idx, u8 match_len)
{
	int i;

	for (i = 0; i < CM_PEER_TREES; i++)
		idx->root[i] = RB_ROOT;
	idx->seq = 0;
	idx->nr_held = 0;
	idx->match_len = min_t(u8, match_len, CM_PEER_MATCH_MAX);
	idx->match_mask = NULL;
}

/**
 * cm_peer_index_mask() - compare only some bits of the match bytes
 * @idx: the index, empty
 * @mask: NULL for all bits, or match_len bytes that live as long as the
 *	index
 */
void cm_peer_index_mask(struct cm_peer_index *idx, const u8 *mask)
{
	WARN_ON_ONCE(!cm_peer_index_empty(idx));
	idx->match_mask = mask;
}

/**
 * cm_peer_index_empty() - does the index hold nothing?
 * @idx: the index
 *
 * Return: true when no tree has an entry.
 */
bool cm_peer_index_empty(const struct cm_peer_index *idx)
{
	int i;

	for (i = 0; i < CM_PEER_TREES; i++)
		if (!RB_EMPTY_ROOT(&idx->root[i]))
			return false;
	return true;
}

/**
 * cm_peer_add() - add an entry after every entry with an equal key
 * @idx: the index
 * @tree: which of its trees
 * @entry: the entry, its key set
 */
void cm_peer_add(struct cm_peer_index *idx, enum cm_peer_tree tree,
		 struct cm_peer_entry *entry)
{
	struct rb_node **link = &idx->root[tree].rb_node, *parent = NULL;

	entry->seq = idx->seq++;
	while (*link) {
		struct cm_peer_entry *cur =
			rb_entry(*link, struct cm_peer_entry, node);

		parent = *link;
		if (cm_peer_key_cmp(idx, &entry->key, &cur->key) < 0)
			link = &parent->rb_left;
		else
			link = &parent->rb_right;
	}
	rb_link_node(&entry->node, parent, link);
	rb_insert_color(&entry->node, &idx->root[tree]);
}

/**
 * cm_peer_del() - take an entry out of its tree
 * @idx: the index
 * @tree: the tree @entry is in
 * @entry: the entry; its node is cleared (RB_EMPTY_NODE() is then true)
 */
void cm_peer_del(struct cm_peer_index *idx, enum cm_peer_tree tree,
		 struct cm_peer_entry *entry)
{
	rb_erase(&entry->node, &idx->root[tree]);
	RB_CLEAR_NODE(&entry->node);
}

/* The first entry of @root whose key is @key as @order compares keys */
static struct cm_peer_entry *cm_peer_lowest(const struct rb_root *root,
					    const struct cm_peer_index *order,
					    const struct cm_peer_key *key)
{
	struct rb_node *node = root->rb_node;
	struct cm_peer_entry *found = NULL;

	while (node) {
		struct cm_peer_entry *cur =
			rb_entry(node, struct cm_peer_entry, node);
		int res = cm_peer_key_cmp(order, key, &cur->key);

		if (res <= 0) {
			if (!res)
				found = cur;
			node = node->rb_left;
		} else {
			node = node->rb_right;
		}
	}
	return found;
}

/**
 * cm_peer_first() - the oldest entry with a key
 * @idx: the index
 * @tree: which of its trees
 * @key: the key
 *
 * Return: the entry, or NULL.
 */
struct cm_peer_entry *cm_peer_first(const struct cm_peer_index *idx,
				    enum cm_peer_tree tree,
				    const struct cm_peer_key *key)
{
	return cm_peer_lowest(&idx->root[tree], idx, key);
}

/**
 * cm_peer_next() - the next entry with the same key
 * @idx: the index
 * @entry: an entry of one of its trees
 *
 * Return: the entry after @entry when its key is equal, or NULL.
 */
struct cm_peer_entry *cm_peer_next(const struct cm_peer_index *idx,
				   const struct cm_peer_entry *entry)
{
	struct rb_node *node = rb_next(&entry->node);
	struct cm_peer_entry *next;

	if (!node)
		return NULL;
	next = rb_entry(node, struct cm_peer_entry, node);
	return cm_peer_key_cmp(idx, &entry->key, &next->key) ? NULL : next;
}

/*
 * The queue of a device's held REQs: a list in arrival order, for expiry,
 * and a tree by the sender's communication ID, for its REJ (which carries
 * no service ID).  The entries are also in their service ID's index, where
 * the local peer claims them by key.
 */

/**
 * cm_peer_queue_limits() - set the bounds of a queue
 * @q: the queue
 * @max_held: most entries at once, 0 for %CM_PEER_MAX_HELD
 * @max_held_svc: most entries of one index, and of one sending port GID,
 *	at once; 0 for a quarter of @max_held
 * @max_age_ms: claimable lifetime of every new entry, 0 for the age
 *	cm_peer_hold() is given (tests set one); %CM_PEER_MAX_AGE_MS at most
 *
 * Entries held already keep their expiry; bounds apply to new ones.
 */
void cm_peer_queue_limits(struct cm_peer_queue *q, unsigned int max_held,
			  unsigned int max_held_svc, unsigned int max_age_ms)
{
	q->max_held = max_held ?: CM_PEER_MAX_HELD;
	q->max_held_svc = max_held_svc ?: max(q->max_held / 4, 1U);
	WRITE_ONCE(q->max_age_ms, max_age_ms);
}

/**
 * cm_peer_queue_init() - set up an empty queue
 * @q: the queue
 * @max_held: see cm_peer_queue_limits()
 * @max_held_svc: see cm_peer_queue_limits()
 * @max_age_ms: see cm_peer_queue_limits()
 */
void cm_peer_queue_init(struct cm_peer_queue *q, unsigned int max_held,
			unsigned int max_held_svc, unsigned int max_age_ms)
{
	INIT_LIST_HEAD(&q->list);
	q->by_comm = RB_ROOT;
	q->count = 0;
	q->gid_seed = get_random_u32();
	memset(q->by_gid, 0, sizeof(q->by_gid));
	cm_peer_queue_limits(q, max_held, max_held_svc, max_age_ms);
}

static bool cm_peer_dup(struct cm_peer_index *idx,
			const struct cm_peer_held *held)
{
	struct cm_peer_entry *cur;

	for (cur = cm_peer_first(idx, CM_PEER_HELD, &held->entry.key); cur;
	     cur = cm_peer_next(idx, cur))
		if (container_of(cur, struct cm_peer_held, entry)
			    ->remote_comm_id == held->remote_comm_id)
			return true;
	return false;
}

static void cm_peer_add_comm(struct cm_peer_queue *q,
			     struct cm_peer_held *held)
{
	struct rb_node **link = &q->by_comm.rb_node, *parent = NULL;
	u32 id = be32_to_cpu(held->remote_comm_id);

	while (*link) {
		struct cm_peer_held *cur =
			rb_entry(*link, struct cm_peer_held, comm_node);

		parent = *link;
		if (id < be32_to_cpu(cur->remote_comm_id))
			link = &parent->rb_left;
		else
			link = &parent->rb_right;
	}
	rb_link_node(&held->comm_node, parent, link);
	rb_insert_color(&held->comm_node, &q->by_comm);
}

/**
 * cm_peer_hold() - hold a peer REQ in a service ID's index
 * @q: the device's queue
 * @idx: the index of the REQ's service ID
 * @held: the entry: @held->entry.key, @held->remote_comm_id and @held->req
 *	set by the caller
 * @age_ms: how long it stays claimable (unless the queue sets an age)
 *
 * Return: 0 when held, the queue then owns @held; -EALREADY when a REQ
 * with the same key and communication ID is held (a retransmission);
 * -ENOSPC when the queue, the index or the share of the sender's port GID
 * is full (expired entries count until taken out).
 */
int cm_peer_hold(struct cm_peer_queue *q, struct cm_peer_index *idx,
		 struct cm_peer_held *held, unsigned int age_ms)
{
	unsigned int b = cm_peer_gid_bucket(q, &held->entry.key.remote_gid);
	struct list_head *pos;

	if (cm_peer_dup(idx, held))
		return -EALREADY;
	if (q->count >= q->max_held || idx->nr_held >= q->max_held_svc ||
	    q->by_gid[b] >= q->max_held_svc)
		return -ENOSPC;
	held->index = idx;
	held->expires = jiffies +
			msecs_to_jiffies(cm_peer_hold_age_ms(q, age_ms));
	cm_peer_add(idx, CM_PEER_HELD, &held->entry);
	cm_peer_add_comm(q, held);
	/* in expiry order; senders mostly share their timeouts: O(1) */
	for (pos = q->list.prev; pos != &q->list; pos = pos->prev)
		if (!time_after(list_entry(pos, struct cm_peer_held,
					   list)->expires, held->expires))
			break;
	list_add(&held->list, pos);
	idx->nr_held++;
	q->by_gid[b]++;
	WRITE_ONCE(q->count, q->count + 1);
	return 0;
}

/**
 * cm_peer_unhold() - take a held REQ out of its index and the queue
 * @q: the device's queue
 * @held: the entry; the caller owns it again
 */
void cm_peer_unhold(struct cm_peer_queue *q, struct cm_peer_held *held)
{
	cm_peer_del(held->index, CM_PEER_HELD, &held->entry);
	rb_erase(&held->comm_node, &q->by_comm);
	list_del_init(&held->list);
	held->index->nr_held--;
	q->by_gid[cm_peer_gid_bucket(q, &held->entry.key.remote_gid)]--;
	WRITE_ONCE(q->count, q->count - 1);
}

/**
 * cm_peer_rehold() - move the REQs held in an index to another
 * @from: the index they are held in
 * @to: an index of the same service ID, which takes them
 *
 * The keys point into the REQs' whole private data, so @to's order holds
 * them as well; their expiry and the queue are unchanged.
 */
void cm_peer_rehold(struct cm_peer_index *from, struct cm_peer_index *to)
{
	struct cm_peer_held *held;
	struct rb_node *rb;

	while ((rb = rb_first(&from->root[CM_PEER_HELD]))) {
		held = container_of(rb_entry(rb, struct cm_peer_entry, node),
				    struct cm_peer_held, entry);
		cm_peer_del(from, CM_PEER_HELD, &held->entry);
		from->nr_held--;
		cm_peer_add(to, CM_PEER_HELD, &held->entry);
		to->nr_held++;
		held->index = to;
	}
}

/**
 * cm_peer_claim() - take out the oldest claimable REQ held for a key
 * @q: the device's queue
 * @idx: the index of the local peer's service ID
 * @key: the local peer's key
 *
 * Return: the entry, now the caller's, or NULL when none is held for @key
 * or all have expired (they wait for cm_peer_expired()).
 */
struct cm_peer_held *cm_peer_claim(struct cm_peer_queue *q,
				   struct cm_peer_index *idx,
				   const struct cm_peer_key *key)
{
	struct cm_peer_entry *cur;
	struct cm_peer_held *held;

	for (cur = cm_peer_first(idx, CM_PEER_HELD, key); cur;
	     cur = cm_peer_next(idx, cur)) {
		held = container_of(cur, struct cm_peer_held, entry);
		if (time_before(jiffies, held->expires)) {
			cm_peer_unhold(q, held);
			return held;
		}
	}
	return NULL;
}

/**
 * cm_peer_first_in() - the first entry of an index's tree with a key as
 *	another index compares it
 * @from: the index searched, of the same service ID as @idx
 * @tree: which of its trees
 * @idx: the index whose match length and mask @key is compared with
 * @key: the key
 *
 * As cm_peer_first(), for an index with another match length or mask
 * (ib_cm_peer_bind_mask()): @from is searched by the GIDs, which every
 * index orders first, and then scanned in its own order.  Its entries'
 * keys have @idx's match_len bytes: a held REQ's points into its whole
 * private data, and a pending one copies %CM_PEER_MATCH_MAX bytes.
 *
 * Return: the entry, or NULL.
 */
struct cm_peer_entry *cm_peer_first_in(const struct cm_peer_index *from,
				       enum cm_peer_tree tree,
				       const struct cm_peer_index *idx,
				       const struct cm_peer_key *key)
{
	struct cm_peer_entry *cur;

	if (from == idx)
		return cm_peer_first(idx, tree, key);
	cur = cm_peer_lowest(&from->root[tree], &cm_peer_by_gids, key);
	if (cur && cm_peer_key_cmp(idx, key, &cur->key))
		cur = cm_peer_next_in(from, idx, key, cur);
	return cur;
}

/**
 * cm_peer_next_in() - the next entry with a key as another index compares it
 * @from: the index of @entry
 * @idx: as for cm_peer_first_in()
 * @key: as for cm_peer_first_in()
 * @entry: an entry cm_peer_first_in() or this returned
 *
 * Return: the next such entry of @entry's tree, or NULL.
 */
struct cm_peer_entry *cm_peer_next_in(const struct cm_peer_index *from,
				      const struct cm_peer_index *idx,
				      const struct cm_peer_key *key,
				      const struct cm_peer_entry *entry)
{
	if (from == idx)
		return cm_peer_next(idx, entry);
	while ((entry = cm_peer_next(&cm_peer_by_gids, entry)))
		if (!cm_peer_key_cmp(idx, key, &entry->key))
			return (struct cm_peer_entry *)entry;
	return NULL;
}

/**
 * cm_peer_withdraw() - take out a held REQ whose sender rejected it
 * @q: the device's queue
 * @remote_comm_id: the REJ's Local Communication ID
 * @match: tells whether an entry with that ID came from the REJ's sender
 * @arg: passed to @match
 *
 * Return: the oldest such entry, now the caller's, or NULL.
 */
struct cm_peer_held *
cm_peer_withdraw(struct cm_peer_queue *q, __be32 remote_comm_id,
		 bool (*match)(const struct cm_peer_held *held,
			       const void *arg),
		 const void *arg)
{
	struct rb_node *node = q->by_comm.rb_node;
	u32 id = be32_to_cpu(remote_comm_id);
	struct cm_peer_held *cur, *found = NULL;

	/* the leftmost entry with @id, then the equal ones in order */
	while (node) {
		cur = rb_entry(node, struct cm_peer_held, comm_node);
		if (id <= be32_to_cpu(cur->remote_comm_id)) {
			if (cur->remote_comm_id == remote_comm_id)
				found = cur;
			node = node->rb_left;
		} else {
			node = node->rb_right;
		}
	}
	for (cur = found; cur && cur->remote_comm_id == remote_comm_id;
	     cur = rb_entry_safe(rb_next(&cur->comm_node),
				 struct cm_peer_held, comm_node)) {
		if (match(cur, arg)) {
			cm_peer_unhold(q, cur);
			return cur;
		}
	}
	return NULL;
}

/**
 * cm_peer_expired() - take out the first held REQ to expire, if it has
 * @q: the device's queue
 *
 * Return: the entry, now the caller's, or NULL.
 */
struct cm_peer_held *cm_peer_expired(struct cm_peer_queue *q)
{
	struct cm_peer_held *held;

	held = list_first_entry_or_null(&q->list, struct cm_peer_held, list);
	if (!held || time_before(jiffies, held->expires))
		return NULL;
	cm_peer_unhold(q, held);
	return held;
}

/**
 * cm_peer_next_expiry() - when the first held REQ expires
 * @q: the device's queue
 * @when: set to that time (jiffies) when the queue is not empty
 *
 * Return: true when @when was set.
 */
bool cm_peer_next_expiry(const struct cm_peer_queue *q, unsigned long *when)
{
	const struct cm_peer_held *held;

	if (list_empty(&q->list))
		return false;
	held = list_first_entry(&q->list, struct cm_peer_held, list);
	*when = held->expires;
	return true;
}
