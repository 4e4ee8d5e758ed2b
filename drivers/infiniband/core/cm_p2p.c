// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * IB CM peer-to-peer connection establishment: ServiceID mode table,
 * REQ arbiter and rendezvous queue.
 *
 * See cm_p2p.h for the overview.  Nothing here depends on ib_cm's private
 * structures, so the whole file is exercised by cm_p2p_test.c.
 */

#include <linux/interval_tree_generic.h>
#include <linux/jiffies.h>
#include <linux/limits.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/rcupdate.h>
#include <linux/rhashtable.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>

#include "cm_p2p.h"

static unsigned int cm_p2p_param_max_held = 64;
module_param_named(p2p_rdv_max_held, cm_p2p_param_max_held, uint, 0644);
MODULE_PARM_DESC(p2p_rdv_max_held,
		 "Peer REQs held per device while waiting for the local peer (default 64, 0 disables holding)");

static unsigned int cm_p2p_param_max_age_ms = 5000;
module_param_named(p2p_rdv_max_age_ms, cm_p2p_param_max_age_ms, uint, 0644);
MODULE_PARM_DESC(p2p_rdv_max_age_ms,
		 "Milliseconds a held peer REQ stays claimable (default 5000)");

/*
 * The arbiter.
 *
 * IBTA Vol 1, chapter 12 (Communication Management), peer-to-peer
 * connection establishment: when a CM in REQ-Sent for a peer ServiceID
 * receives a REQ for the same ServiceID from the port it sent its own REQ
 * to, the two REQs are compared and exactly one CM continues as the active
 * side.  The comparison used here is:
 *
 *  1. REQ:Primary Local Port GID, compared as a 128-bit unsigned number in
 *     network byte order (i.e. memcmp() of the raw GIDs);
 *  2. if the GIDs are equal (both ends on one port, loopback), REQ:Local
 *     QPN, compared as a 24-bit unsigned number.
 *
 * The end whose own REQ compares greater stays ACTIVE (it drops the REQ it
 * received and waits for the REP); the other end turns PASSIVE (it drops
 * its own REQ and answers the received one with a REP on its own QP).  The
 * direction matches the rule Linux's ib_cm used for peer REQs before the
 * peer code was removed (cm_is_active_peer(): greater identity is active).
 *
 * The comparison is a strict total order on (GID, QPN), so the two ends of
 * any pair of distinct REQs always reach opposite decisions.  Two REQs
 * with the same GID and QPN can only be one end's own REQ coming back to
 * it; that is reported as -ELOOP rather than resolved by a coin toss.
 */

/**
 * cm_p2p_arbitrate() - decide which end of a peer REQ collision is active
 * @local: identity of the REQ this end sent
 * @remote: identity of the REQ this end received
 *
 * Return: %CM_P2P_ACTIVE or %CM_P2P_PASSIVE for the local end, or -ELOOP
 * when both identities are the same (the REQ is our own).
 */
int cm_p2p_arbitrate(const struct cm_p2p_ident *local,
		     const struct cm_p2p_ident *remote)
{
	u32 lqpn = local->qpn & 0xffffff;
	u32 rqpn = remote->qpn & 0xffffff;
	int cmp;

	cmp = memcmp(local->gid.raw, remote->gid.raw, sizeof(local->gid.raw));
	if (!cmp) {
		if (lqpn == rqpn)
			return -ELOOP;
		cmp = lqpn > rqpn ? 1 : -1;
	}
	return cmp > 0 ? CM_P2P_ACTIVE : CM_P2P_PASSIVE;
}

/*
 * The ServiceID mode table.
 *
 * A bind covers the ServiceIDs S with (S & mask) == sid; masks must be
 * prefixes (leading ones), so every bind is one interval [sid, sid | ~mask]
 * of the 64-bit ServiceID space.  Binds live in an augmented interval tree
 * (lib/interval_tree_generic.h): lookup of a ServiceID and the overlap scan
 * of a new bind are O(log n + k).  An xarray or maple tree would give RCU
 * lookups, but both index by unsigned long, which cannot hold a 64-bit
 * ServiceID on 32-bit kernels, and neither answers "does anything overlap
 * this range" for nested binds of equal mode.  The tree is protected by a
 * spinlock taken with interrupts saved, so lookups are safe from any MAD
 * receive context and never sleep.
 *
 * Invariant: no two overlapping binds have different modes (such a bind is
 * refused with -EADDRINUSE), so the first bind found containing a
 * ServiceID gives its mode.  Binding the same (sid, mask, mode) again takes
 * a reference; each unbind drops one.
 *
 * Exact binds (mask ~0, what rdma_cm and most ULPs make) are also in a
 * resizable hash table keyed by ServiceID.  By the invariant, an exact bind
 * found there gives the mode without looking at the tree, and while no
 * range bind exists a miss there means NONE.  That lookup takes no lock:
 * it runs under RCU, and binds are freed after a grace period.  The tree,
 * under the lock, stays the authority for binds and overlaps.
 */

/* What a hash lookup reads (hnode, start, mode) is in the first 24 bytes. */
struct cm_p2p_bind {
	struct rhash_head hnode;	/* exact binds only */
	u64 start;
	enum cm_p2p_mode mode;
	unsigned int refs;
	u64 last;
	struct rb_node rb;
	u64 subtree_last;
	struct rcu_head rcu;
};

static const struct rhashtable_params cm_p2p_exact_params = {
	.key_len = sizeof(u64),
	.key_offset = offsetof(struct cm_p2p_bind, start),
	.head_offset = offsetof(struct cm_p2p_bind, hnode),
	.automatic_shrinking = true,
};

static bool cm_p2p_bind_exact(const struct cm_p2p_bind *bind)
{
	return bind->start == bind->last;
}

#define CM_P2P_BIND_START(b) ((b)->start)
#define CM_P2P_BIND_LAST(b) ((b)->last)

INTERVAL_TREE_DEFINE(struct cm_p2p_bind, rb, u64, subtree_last,
		     CM_P2P_BIND_START, CM_P2P_BIND_LAST, static, cm_p2p_it)

struct cm_p2p_table {
	spinlock_t lock;	/* protects root, range_binds, refs, writers of exact */
	struct rb_root_cached root;
	struct rhashtable exact;	/* exact binds, also in root */
	unsigned int peer_binds;
	unsigned int range_binds;	/* binds in root that are not exact */
};

/**
 * cm_p2p_table_alloc() - allocate an empty ServiceID mode table
 * @gfp: allocation flags for the table itself
 *
 * Context: may sleep (the hash table of exact binds is set up with
 * GFP_KERNEL).
 *
 * Return: the table, or NULL when out of memory.
 */
struct cm_p2p_table *cm_p2p_table_alloc(gfp_t gfp)
{
	struct cm_p2p_table *table;

	table = kzalloc(sizeof(*table), gfp);
	if (!table)
		return NULL;
	if (rhashtable_init(&table->exact, &cm_p2p_exact_params)) {
		kfree(table);
		return NULL;
	}
	spin_lock_init(&table->lock);
	table->root = RB_ROOT_CACHED;
	return table;
}

/**
 * cm_p2p_table_free() - free a mode table and every bind left in it
 * @table: the table, may be NULL
 *
 * The caller guarantees that nobody uses the table any more.
 */
void cm_p2p_table_free(struct cm_p2p_table *table)
{
	struct rb_node *node;

	if (!table)
		return;
	/* binds are freed below, through the tree */
	rhashtable_destroy(&table->exact);
	while ((node = rb_first_cached(&table->root))) {
		struct cm_p2p_bind *bind = rb_entry(node, struct cm_p2p_bind, rb);

		cm_p2p_it_remove(bind, &table->root);
		kfree(bind);
	}
	kfree(table);
}

static int cm_p2p_range(__be64 service_id, __be64 service_mask,
			u64 *start, u64 *last)
{
	u64 sid = be64_to_cpu(service_id);
	u64 wild = ~be64_to_cpu(service_mask);

	/* The wildcard bits must be trailing: mask is a prefix. */
	if (wild & (wild + 1))
		return -EINVAL;
	if (sid & wild)
		return -EINVAL;
	*start = sid;
	*last = sid | wild;
	return 0;
}

/**
 * cm_p2p_bind() - bind a ServiceID (range) to a mode
 * @table: the device's mode table
 * @service_id: ServiceID, with the bits outside @service_mask clear
 * @service_mask: prefix mask; cpu_to_be64(~0ULL) binds one ServiceID
 * @mode: %CM_P2P_MODE_PEER or %CM_P2P_MODE_CLIENT_SERVER
 * @gfp: allocation flags for a new bind
 *
 * Binding exactly the same (@service_id, @service_mask, @mode) again takes
 * another reference, released by cm_p2p_unbind().
 *
 * Return: 0 on success; -EINVAL for a bad mode, a mask that is not a prefix
 * or a ServiceID with bits outside the mask; -EADDRINUSE when an
 * overlapping bind of the other mode exists; -EOVERFLOW when the bind's
 * reference count is saturated; -ENOMEM, or another error from growing the
 * hash table of exact binds.
 */
int cm_p2p_bind(struct cm_p2p_table *table, __be64 service_id,
		__be64 service_mask, enum cm_p2p_mode mode, gfp_t gfp)
{
	struct cm_p2p_bind *bind, *new;
	unsigned long flags;
	u64 start, last;
	int ret;

	if (mode != CM_P2P_MODE_PEER && mode != CM_P2P_MODE_CLIENT_SERVER)
		return -EINVAL;
	ret = cm_p2p_range(service_id, service_mask, &start, &last);
	if (ret)
		return ret;

	new = kzalloc(sizeof(*new), gfp);
	if (!new)
		return -ENOMEM;
	new->start = start;
	new->last = last;
	new->mode = mode;
	new->refs = 1;

	spin_lock_irqsave(&table->lock, flags);
	for (bind = cm_p2p_it_iter_first(&table->root, start, last); bind;
	     bind = cm_p2p_it_iter_next(bind, start, last)) {
		if (bind->mode != mode) {
			ret = -EADDRINUSE;
			goto out_unlock;
		}
		if (bind->start == start && bind->last == last) {
			if (bind->refs == UINT_MAX) {
				ret = -EOVERFLOW;
				goto out_unlock;
			}
			bind->refs++;
			goto out_unlock;
		}
	}
	if (cm_p2p_bind_exact(new)) {
		ret = rhashtable_insert_fast(&table->exact, &new->hnode,
					     cm_p2p_exact_params);
		if (ret)
			goto out_unlock;
	} else {
		WRITE_ONCE(table->range_binds, table->range_binds + 1);
	}
	cm_p2p_it_insert(new, &table->root);
	if (mode == CM_P2P_MODE_PEER)
		WRITE_ONCE(table->peer_binds, table->peer_binds + 1);
	new = NULL;
out_unlock:
	spin_unlock_irqrestore(&table->lock, flags);
	kfree(new);
	return ret;
}

/**
 * cm_p2p_unbind() - drop one reference of a bind made by cm_p2p_bind()
 * @table: the device's mode table
 * @service_id: as passed to cm_p2p_bind()
 * @service_mask: as passed to cm_p2p_bind()
 * @mode: as passed to cm_p2p_bind()
 *
 * Return: 0, -EINVAL for a malformed range, or -ENOENT when no such bind
 * exists.
 */
int cm_p2p_unbind(struct cm_p2p_table *table, __be64 service_id,
		  __be64 service_mask, enum cm_p2p_mode mode)
{
	struct cm_p2p_bind *bind, *dead = NULL;
	unsigned long flags;
	u64 start, last;
	int ret;

	ret = cm_p2p_range(service_id, service_mask, &start, &last);
	if (ret)
		return ret;

	ret = -ENOENT;
	spin_lock_irqsave(&table->lock, flags);
	for (bind = cm_p2p_it_iter_first(&table->root, start, last); bind;
	     bind = cm_p2p_it_iter_next(bind, start, last)) {
		if (bind->start != start || bind->last != last ||
		    bind->mode != mode)
			continue;
		ret = 0;
		if (--bind->refs)
			break;
		if (cm_p2p_bind_exact(bind))
			WARN_ON(rhashtable_remove_fast(&table->exact,
						       &bind->hnode,
						       cm_p2p_exact_params));
		else
			WRITE_ONCE(table->range_binds, table->range_binds - 1);
		cm_p2p_it_remove(bind, &table->root);
		if (mode == CM_P2P_MODE_PEER)
			WRITE_ONCE(table->peer_binds, table->peer_binds - 1);
		dead = bind;
		break;
	}
	spin_unlock_irqrestore(&table->lock, flags);
	/* a lockless lookup of the hash table may still be looking at it */
	if (dead)
		kfree_rcu(dead, rcu);
	return ret;
}

/**
 * cm_p2p_lookup() - mode of an inbound ServiceID
 * @table: the device's mode table
 * @service_id: REQ:ServiceID
 *
 * Safe in atomic context.  An exact bind is found in the hash table
 * without the table lock; only when range binds exist does a miss there
 * take the lock and search the tree.
 *
 * Return: the mode of the bind covering @service_id, or %CM_P2P_MODE_NONE.
 */
enum cm_p2p_mode cm_p2p_lookup(struct cm_p2p_table *table, __be64 service_id)
{
	u64 sid = be64_to_cpu(service_id);
	enum cm_p2p_mode mode = CM_P2P_MODE_NONE;
	struct cm_p2p_bind *bind;
	unsigned long flags;

	rcu_read_lock();
	bind = rhashtable_lookup(&table->exact, &sid, cm_p2p_exact_params);
	if (bind)
		mode = READ_ONCE(bind->mode);
	rcu_read_unlock();
	if (mode != CM_P2P_MODE_NONE || !READ_ONCE(table->range_binds))
		return mode;

	spin_lock_irqsave(&table->lock, flags);
	bind = cm_p2p_it_iter_first(&table->root, sid, sid);
	if (bind)
		mode = bind->mode;
	spin_unlock_irqrestore(&table->lock, flags);
	return mode;
}

/**
 * cm_p2p_peer_binds() - number of distinct peer binds in a table
 * @table: the device's mode table
 *
 * Lockless; meant for the REQ path to skip all peer work while no peer
 * ServiceID is bound.
 *
 * Return: the number of peer binds at some point during the call.
 */
unsigned int cm_p2p_peer_binds(const struct cm_p2p_table *table)
{
	return READ_ONCE(table->peer_binds);
}

/*
 * The rendezvous queue.
 *
 * A peer REQ that finds no local REQ to collide with is held here, bounded
 * by a count per device and by age.  When the local side sends its peer
 * REQ, cm.c claims the held REQ (by ServiceID and remote port GID) instead.
 * Entries past their age are not claimable; cm_p2p_rdv_expire() hands them
 * to the caller, which rejects them.  The list is in arrival order, so
 * claims take the oldest match.
 */

struct cm_p2p_rdv {
	spinlock_t lock;	/* protects held and count */
	struct list_head held;
	unsigned int count;
	unsigned int max_held;
	unsigned int max_age_ms;
};

static unsigned int cm_p2p_rdv_limit(const struct cm_p2p_rdv *rdv)
{
	return rdv->max_held ? rdv->max_held : READ_ONCE(cm_p2p_param_max_held);
}

static unsigned int cm_p2p_rdv_age(const struct cm_p2p_rdv *rdv)
{
	return rdv->max_age_ms ? rdv->max_age_ms :
				 READ_ONCE(cm_p2p_param_max_age_ms);
}

static bool cm_p2p_key_eq(const struct cm_p2p_rdv_key *a,
			  const struct cm_p2p_rdv_key *b)
{
	return a->service_id == b->service_id &&
	       !memcmp(a->remote_gid.raw, b->remote_gid.raw,
		       sizeof(a->remote_gid.raw)) &&
	       !memcmp(a->local_gid.raw, b->local_gid.raw,
		       sizeof(a->local_gid.raw));
}

/* The held REQ with @key from @remote_comm_id; rdv->lock held. */
static struct cm_p2p_held *cm_p2p_rdv_find(struct cm_p2p_rdv *rdv,
					   const struct cm_p2p_rdv_key *key,
					   __be32 remote_comm_id)
{
	struct cm_p2p_held *cur;

	lockdep_assert_held(&rdv->lock);
	list_for_each_entry(cur, &rdv->held, list)
		if (cur->remote_comm_id == remote_comm_id &&
		    cm_p2p_key_eq(&cur->key, key))
			return cur;
	return NULL;
}

static bool cm_p2p_held_expired(const struct cm_p2p_held *held)
{
	return time_after_eq(jiffies, held->expires);
}

/**
 * cm_p2p_rdv_alloc() - allocate a rendezvous queue
 * @max_held: most entries held at once; 0 follows the p2p_rdv_max_held
 *	      module parameter
 * @max_age_ms: claimable lifetime of an entry; 0 follows the
 *		p2p_rdv_max_age_ms module parameter
 * @gfp: allocation flags
 *
 * Return: the queue, or NULL when out of memory.
 */
struct cm_p2p_rdv *cm_p2p_rdv_alloc(unsigned int max_held,
				    unsigned int max_age_ms, gfp_t gfp)
{
	struct cm_p2p_rdv *rdv;

	rdv = kzalloc(sizeof(*rdv), gfp);
	if (!rdv)
		return NULL;
	spin_lock_init(&rdv->lock);
	INIT_LIST_HEAD(&rdv->held);
	rdv->max_held = max_held;
	rdv->max_age_ms = max_age_ms;
	return rdv;
}

/**
 * cm_p2p_rdv_free() - free a rendezvous queue and every entry it holds
 * @rdv: the queue, may be NULL
 *
 * The caller guarantees that nobody uses the queue any more.
 */
void cm_p2p_rdv_free(struct cm_p2p_rdv *rdv)
{
	if (!rdv)
		return;
	cm_p2p_held_list_free(&rdv->held);
	kfree(rdv);
}

/**
 * cm_p2p_rdv_hold() - hold a copy of a peer REQ
 * @rdv: the device's rendezvous queue
 * @key: ServiceID and remote port GID the REQ will be claimed by
 * @remote_comm_id: REQ:Local Communication ID
 * @remote_qpn: REQ:Local QPN
 * @data: the caller's copy of the REQ, opaque to the engine
 * @len: bytes at @data, at most %CM_P2P_RDV_MAX_DATA
 * @gfp: allocation flags
 *
 * Return: 0 when held; -EALREADY when a REQ with the same @key and
 * @remote_comm_id is already held (a retransmission); -ENOSPC when the
 * queue is full (expired entries still count until cm_p2p_rdv_expire()
 * takes them out); -EMSGSIZE when @len is too large; -ENOMEM.
 */
int cm_p2p_rdv_hold(struct cm_p2p_rdv *rdv, const struct cm_p2p_rdv_key *key,
		    __be32 remote_comm_id, u32 remote_qpn,
		    const void *data, size_t len, gfp_t gfp)
{
	struct cm_p2p_held *held;
	unsigned long flags;
	int ret = 0;

	if (len > CM_P2P_RDV_MAX_DATA)
		return -EMSGSIZE;
	held = kmalloc(struct_size(held, data, len), gfp);
	if (!held)
		return -ENOMEM;
	held->len = len;
	held->key = *key;
	held->remote_comm_id = remote_comm_id;
	held->remote_qpn = remote_qpn;
	memcpy(held->data, data, len);

	spin_lock_irqsave(&rdv->lock, flags);
	if (cm_p2p_rdv_find(rdv, key, remote_comm_id)) {
		ret = -EALREADY;
		goto out_unlock;
	}
	if (rdv->count >= cm_p2p_rdv_limit(rdv)) {
		ret = -ENOSPC;
		goto out_unlock;
	}
	held->expires = jiffies + msecs_to_jiffies(cm_p2p_rdv_age(rdv));
	list_add_tail(&held->list, &rdv->held);
	WRITE_ONCE(rdv->count, rdv->count + 1);
	held = NULL;
out_unlock:
	spin_unlock_irqrestore(&rdv->lock, flags);
	kfree(held);
	return ret;
}

/* Take the oldest entry @pred accepts out of the queue; the caller owns it. */
static struct cm_p2p_held *
cm_p2p_rdv_take(struct cm_p2p_rdv *rdv,
		bool (*pred)(const struct cm_p2p_held *held, const void *arg),
		const void *arg)
{
	struct cm_p2p_held *cur, *found = NULL;
	unsigned long flags;

	spin_lock_irqsave(&rdv->lock, flags);
	list_for_each_entry(cur, &rdv->held, list) {
		if (pred(cur, arg)) {
			list_del_init(&cur->list);
			WRITE_ONCE(rdv->count, rdv->count - 1);
			found = cur;
			break;
		}
	}
	spin_unlock_irqrestore(&rdv->lock, flags);
	return found;
}

static bool cm_p2p_claimable(const struct cm_p2p_held *held, const void *key)
{
	return cm_p2p_key_eq(&held->key, key) && !cm_p2p_held_expired(held);
}

struct cm_p2p_withdraw_arg {
	__be32 remote_comm_id;
	bool (*match)(const struct cm_p2p_held *held, const void *arg);
	const void *arg;
};

static bool cm_p2p_withdrawable(const struct cm_p2p_held *held,
				const void *arg)
{
	const struct cm_p2p_withdraw_arg *w = arg;

	return held->remote_comm_id == w->remote_comm_id &&
	       w->match(held, w->arg);
}

/**
 * cm_p2p_rdv_claim() - take the oldest claimable REQ held for a key
 * @rdv: the device's rendezvous queue
 * @key: ServiceID and remote port GID of the local peer REQ
 *
 * Return: the entry, now owned by the caller (free it with
 * cm_p2p_held_free()), or NULL when none matches or all matches expired.
 */
struct cm_p2p_held *cm_p2p_rdv_claim(struct cm_p2p_rdv *rdv,
				     const struct cm_p2p_rdv_key *key)
{
	return cm_p2p_rdv_take(rdv, cm_p2p_claimable, key);
}

/**
 * cm_p2p_rdv_drop() - forget a held REQ, e.g. when its sender gave up
 * @rdv: the device's rendezvous queue
 * @key: the entry's key
 * @remote_comm_id: the entry's REQ:Local Communication ID
 *
 * Return: true when an entry was found and freed.
 */
bool cm_p2p_rdv_drop(struct cm_p2p_rdv *rdv, const struct cm_p2p_rdv_key *key,
		     __be32 remote_comm_id)
{
	struct cm_p2p_held *found;
	unsigned long flags;

	spin_lock_irqsave(&rdv->lock, flags);
	found = cm_p2p_rdv_find(rdv, key, remote_comm_id);
	if (found) {
		list_del(&found->list);
		WRITE_ONCE(rdv->count, rdv->count - 1);
	}
	spin_unlock_irqrestore(&rdv->lock, flags);
	kfree(found);
	return found;
}

/**
 * cm_p2p_rdv_withdraw() - take out a held REQ whose sender gave up
 * @rdv: the device's rendezvous queue
 * @remote_comm_id: REQ:Local Communication ID of the entry, i.e. the
 *	sender's REJ:Local Communication ID
 * @match: tells whether an entry with that ID came from the REJ's sender
 *	(called with the queue's lock held: must not sleep)
 * @arg: passed to @match
 *
 * A REJ carries no ServiceID, so the entry is found by the sender's
 * communication ID and @match, which compares what the caller knows of
 * the REJ's source with the copy of the REQ in the entry.
 *
 * Return: the oldest such entry, now owned by the caller (free it with
 * cm_p2p_held_free()), or NULL.
 */
struct cm_p2p_held *
cm_p2p_rdv_withdraw(struct cm_p2p_rdv *rdv, __be32 remote_comm_id,
		    bool (*match)(const struct cm_p2p_held *held,
				  const void *arg),
		    const void *arg)
{
	struct cm_p2p_withdraw_arg w = {
		.remote_comm_id = remote_comm_id,
		.match = match,
		.arg = arg,
	};

	return cm_p2p_rdv_take(rdv, cm_p2p_withdrawable, &w);
}

/**
 * cm_p2p_rdv_expire() - take every expired entry out of the queue
 * @rdv: the device's rendezvous queue
 * @expired: list the expired entries are appended to; the caller owns
 *	     them (reject, then cm_p2p_held_list_free())
 *
 * Return: the number of entries moved to @expired.
 */
unsigned int cm_p2p_rdv_expire(struct cm_p2p_rdv *rdv,
			       struct list_head *expired)
{
	struct cm_p2p_held *cur, *tmp;
	unsigned int n = 0;
	unsigned long flags;

	spin_lock_irqsave(&rdv->lock, flags);
	list_for_each_entry_safe(cur, tmp, &rdv->held, list) {
		if (!cm_p2p_held_expired(cur))
			continue;
		list_move_tail(&cur->list, expired);
		WRITE_ONCE(rdv->count, rdv->count - 1);
		n++;
	}
	spin_unlock_irqrestore(&rdv->lock, flags);
	return n;
}

/**
 * cm_p2p_rdv_drain() - take every entry out of the queue
 * @rdv: the device's rendezvous queue
 * @list: list the entries are appended to, oldest first; the caller owns
 *	  them (e.g. on device removal)
 *
 * Return: the number of entries moved to @list.
 */
unsigned int cm_p2p_rdv_drain(struct cm_p2p_rdv *rdv, struct list_head *list)
{
	unsigned long flags;
	unsigned int n;

	spin_lock_irqsave(&rdv->lock, flags);
	n = rdv->count;
	list_splice_tail_init(&rdv->held, list);
	WRITE_ONCE(rdv->count, 0);
	spin_unlock_irqrestore(&rdv->lock, flags);
	return n;
}

/**
 * cm_p2p_rdv_max_age_ms() - how long new entries stay claimable
 * @rdv: the device's rendezvous queue
 *
 * Return: the age limit in milliseconds that cm_p2p_rdv_hold() applies now,
 * e.g. to derive the service timeout of the MRA sent for a held REQ.
 */
unsigned int cm_p2p_rdv_max_age_ms(const struct cm_p2p_rdv *rdv)
{
	return cm_p2p_rdv_age(rdv);
}

/**
 * cm_p2p_rdv_next_expiry() - when the next held entry expires
 * @rdv: the device's rendezvous queue
 * @when: set to the earliest expiry time (jiffies) when the queue is not
 *	  empty
 *
 * Return: true when the queue holds an entry and @when was set.
 */
bool cm_p2p_rdv_next_expiry(struct cm_p2p_rdv *rdv, unsigned long *when)
{
	struct cm_p2p_held *cur;
	unsigned long flags;
	bool found = false;

	spin_lock_irqsave(&rdv->lock, flags);
	list_for_each_entry(cur, &rdv->held, list) {
		if (!found || time_before(cur->expires, *when))
			*when = cur->expires;
		found = true;
	}
	spin_unlock_irqrestore(&rdv->lock, flags);
	return found;
}

/**
 * cm_p2p_rdv_count() - number of entries held, expired ones included
 * @rdv: the device's rendezvous queue
 *
 * Return: the count at some point during the call.
 */
unsigned int cm_p2p_rdv_count(struct cm_p2p_rdv *rdv)
{
	return READ_ONCE(rdv->count);
}

/**
 * cm_p2p_held_free() - free an entry handed out by the queue
 * @held: the entry, may be NULL
 */
void cm_p2p_held_free(struct cm_p2p_held *held)
{
	kfree(held);
}

/**
 * cm_p2p_held_list_free() - free a list of entries handed out by the queue
 * @list: list of &struct cm_p2p_held linked by their @list member
 */
void cm_p2p_held_list_free(struct list_head *list)
{
	struct cm_p2p_held *cur, *tmp;

	list_for_each_entry_safe(cur, tmp, list, list) {
		list_del(&cur->list);
		kfree(cur);
	}
}
