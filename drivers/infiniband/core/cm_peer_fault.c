// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * IB CM MAD fault injection for tests (CONFIG_INFINIBAND_CM_PEER_FAULT_INJECT).
 *
 * cm.c asks cm_peer_fault_recv() about every MAD it receives; without
 * the option that hook is an inline returning false.  Rules, set by KUnit
 * tests or through /sys/kernel/debug/ib_cm_peer_fault/rules, then lose,
 * duplicate, delay, reorder or migrate (to another CPU) the MADs they
 * match.  Nothing here knows ib_cm's internals: it sees MAD agents and
 * receive completions only (and, to copy one, the MAD layer's buffer).
 * Held MADs are delivered by a work item through the handler cm.c passed
 * in, or freed by cm_peer_fault_flush() before cm.c unregisters the agent
 * they arrived on.
 */

#include <linux/debugfs.h>
#include <linux/init.h>
#include <linux/jiffies.h>
#include <linux/list.h>
#include <linux/cpumask.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_verbs.h>

#include "cm_peer_fault.h"
#include "mad_priv.h"

#define CM_PEER_FAULT_MAX_RULES	16

struct cm_peer_fault_rule {
	bool used;
	enum cm_peer_fault_action action;
	__be16 attr_id;			/* 0: any CM MAD */
	unsigned int skip;		/* matches to let pass first */
	unsigned int count;		/* matches still to act on */
	unsigned int delay_ms;
	unsigned int hits;
};

/*
 * A received MAD held back by a DELAY, REORDER or MIGRATE rule, or the
 * copy a DUP rule delivers again.
 */
struct cm_peer_fault_held {
	struct list_head list;
	struct work_struct work;	/* MIGRATE */
	struct ib_mad_agent *agent;
	struct ib_mad_recv_wc *wc;
	cm_peer_fault_deliver_t deliver;
	unsigned long due;
	bool reorder;
};

static DEFINE_SPINLOCK(cm_peer_fault_lock);
static struct cm_peer_fault_rule cm_peer_fault_rules[CM_PEER_FAULT_MAX_RULES];
static unsigned int cm_peer_fault_total_hits;
static LIST_HEAD(cm_peer_fault_stash);
/* serialises delivery of held MADs against cm_peer_fault_flush() */
static DEFINE_MUTEX(cm_peer_fault_deliver_mutex);
/* the held MAD being delivered: cm_peer_fault_recv() lets it through */
static struct ib_mad_recv_wc *cm_peer_fault_reinject;

static void cm_peer_fault_work_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(cm_peer_fault_work, cm_peer_fault_work_fn);
/* per-CPU: a MIGRATE delivery runs on the CPU it is queued on */
static struct workqueue_struct *cm_peer_fault_wq;

static const char *const cm_peer_fault_action_names[] = {
	[CM_PEER_FAULT_DROP] = "drop",
	[CM_PEER_FAULT_DUP] = "dup",
	[CM_PEER_FAULT_DELAY] = "delay",
	[CM_PEER_FAULT_REORDER] = "reorder",
	[CM_PEER_FAULT_MIGRATE] = "migrate",
};

static const struct {
	const char *name;
	__be16 attr_id;
} cm_peer_fault_attrs[] = {
	{ "any", 0 },
	{ "req", CM_REQ_ATTR_ID },
	{ "mra", CM_MRA_ATTR_ID },
	{ "rej", CM_REJ_ATTR_ID },
	{ "rep", CM_REP_ATTR_ID },
	{ "rtu", CM_RTU_ATTR_ID },
	{ "dreq", CM_DREQ_ATTR_ID },
	{ "drep", CM_DREP_ATTR_ID },
};

/* Find the rule that acts on a MAD; cm_peer_fault_lock held. */
static struct cm_peer_fault_rule *cm_peer_fault_match(__be16 attr_id)
{
	struct cm_peer_fault_rule *r;
	int i;

	for (i = 0; i < CM_PEER_FAULT_MAX_RULES; i++) {
		r = &cm_peer_fault_rules[i];
		if (!r->used || !r->count ||
		    (r->attr_id && r->attr_id != attr_id))
			continue;
		if (r->skip) {
			r->skip--;
			continue;
		}
		r->count--;
		r->hits++;
		cm_peer_fault_total_hits++;
		return r;
	}
	return NULL;
}

/* Run the delivery work when the first held MAD is due; lock held. */
static void cm_peer_fault_kick(void)
{
	struct cm_peer_fault_held *h;
	unsigned long first = 0;
	bool any = false;

	list_for_each_entry(h, &cm_peer_fault_stash, list) {
		if (!any || time_before(h->due, first))
			first = h->due;
		any = true;
	}
	if (any)
		mod_delayed_work(system_wq, &cm_peer_fault_work,
				 time_after(first, jiffies) ?
				 first - jiffies : 0);
}

static struct cm_peer_fault_held *cm_peer_fault_pop_due(void)
{
	struct cm_peer_fault_held *h;

	list_for_each_entry(h, &cm_peer_fault_stash, list) {
		if (time_after_eq(jiffies, h->due)) {
			list_del(&h->list);
			return h;
		}
	}
	return NULL;
}

static void cm_peer_fault_deliver(struct cm_peer_fault_held *h)
{
	lockdep_assert_held(&cm_peer_fault_deliver_mutex);
	WRITE_ONCE(cm_peer_fault_reinject, h->wc);
	h->deliver(h->agent, NULL, h->wc);
	WRITE_ONCE(cm_peer_fault_reinject, NULL);
	kfree(h);
}

static void cm_peer_fault_migrated(struct work_struct *work)
{
	mutex_lock(&cm_peer_fault_deliver_mutex);
	cm_peer_fault_deliver(container_of(work, struct cm_peer_fault_held,
					   work));
	mutex_unlock(&cm_peer_fault_deliver_mutex);
}

/* Hand @h to another online CPU, or to any when there is none. */
static void cm_peer_fault_migrate(struct cm_peer_fault_held *h)
{
	unsigned int cpu;

	cpu = cpumask_any_but(cpu_online_mask, raw_smp_processor_id());
	INIT_WORK(&h->work, cm_peer_fault_migrated);
	queue_work_on(cpu < nr_cpu_ids ? cpu : WORK_CPU_UNBOUND,
		      cm_peer_fault_wq, &h->work);
}

static void cm_peer_fault_work_fn(struct work_struct *work)
{
	struct cm_peer_fault_held *h;
	unsigned long flags;

	mutex_lock(&cm_peer_fault_deliver_mutex);
	for (;;) {
		spin_lock_irqsave(&cm_peer_fault_lock, flags);
		h = cm_peer_fault_pop_due();
		if (!h)
			cm_peer_fault_kick();
		spin_unlock_irqrestore(&cm_peer_fault_lock, flags);
		if (!h)
			break;
		cm_peer_fault_deliver(h);
	}
	mutex_unlock(&cm_peer_fault_deliver_mutex);
}

/* A DUP that could not be done: not counted */
static void cm_peer_fault_undo(struct cm_peer_fault_held *h)
{
	unsigned long flags;

	if (h->wc)
		ib_free_recv_mad(h->wc);
	kfree(h);
	spin_lock_irqsave(&cm_peer_fault_lock, flags);
	cm_peer_fault_total_hits--;
	spin_unlock_irqrestore(&cm_peer_fault_lock, flags);
	pr_warn_ratelimited("cm_peer_fault: cannot copy a MAD\n");
}

/*
 * A second receive completion for the MAD of @wc, in a buffer of the MAD
 * layer's layout so that ib_free_recv_mad() frees it.  CM MADs are never
 * RMPP: one buffer.
 */
static struct ib_mad_recv_wc *cm_peer_fault_copy_wc(struct ib_mad_recv_wc *wc)
{
	struct ib_mad_private_header *hdr =
		container_of(wc, struct ib_mad_private_header, recv_wc);
	struct ib_mad_private *priv =
		container_of(hdr, struct ib_mad_private, header);
	struct ib_mad_private *copy;

	copy = kmemdup(priv, sizeof(*priv) + priv->mad_size, GFP_ATOMIC);
	if (!copy)
		return NULL;
	wc = &copy->header.recv_wc;
	wc->wc = &copy->header.wc;
	wc->recv_buf.grh = &copy->grh;
	wc->recv_buf.mad = (struct ib_mad *)copy->mad;
	INIT_LIST_HEAD(&wc->rmpp_list);
	list_add(&wc->recv_buf.list, &wc->rmpp_list);
	return wc;
}

/**
 * cm_peer_fault_recv() - apply the receive rules to a MAD the CM received
 * @agent: the CM's MAD agent it arrived on
 * @wc: the receive completion
 * @deliver: the CM's receive handler, for MADs delivered late
 *
 * Context: the MAD layer's receive path (process context).
 * Return: true when a rule took @wc (it is freed or delivered later by
 * calling @deliver), false when the CM should handle it now.
 */
bool cm_peer_fault_recv(struct ib_mad_agent *agent, struct ib_mad_recv_wc *wc,
			cm_peer_fault_deliver_t deliver)
{
	__be16 attr_id = wc->recv_buf.mad->mad_hdr.attr_id;
	struct cm_peer_fault_rule *r;
	struct cm_peer_fault_held *h;
	unsigned long flags;

	if (READ_ONCE(cm_peer_fault_reinject) == wc)
		return false;

	spin_lock_irqsave(&cm_peer_fault_lock, flags);
	r = cm_peer_fault_match(attr_id);
	if (!r) {
		/* MADs held for reordering follow this one (a tick later) */
		list_for_each_entry(h, &cm_peer_fault_stash, list) {
			if (h->reorder && h->agent == agent) {
				h->reorder = false;
				h->due = jiffies + 1;
			}
		}
		cm_peer_fault_kick();
		spin_unlock_irqrestore(&cm_peer_fault_lock, flags);
		return false;
	}
	if (r->action == CM_PEER_FAULT_DROP) {
		spin_unlock_irqrestore(&cm_peer_fault_lock, flags);
		ib_free_recv_mad(wc);
		return true;
	}
	h = kzalloc(sizeof(*h), GFP_ATOMIC);
	if (!h) {
		spin_unlock_irqrestore(&cm_peer_fault_lock, flags);
		return false;
	}
	h->agent = agent;
	h->wc = wc;
	h->deliver = deliver;
	if (r->action == CM_PEER_FAULT_DUP) {
		/* the copy races the original from another CPU */
		spin_unlock_irqrestore(&cm_peer_fault_lock, flags);
		h->wc = cm_peer_fault_copy_wc(wc);
		if (h->wc && cm_peer_fault_wq)
			cm_peer_fault_migrate(h);
		else
			cm_peer_fault_undo(h);
		return false;
	}
	if (r->action == CM_PEER_FAULT_MIGRATE && cm_peer_fault_wq) {
		spin_unlock_irqrestore(&cm_peer_fault_lock, flags);
		cm_peer_fault_migrate(h);
		return true;
	}
	h->due = jiffies + msecs_to_jiffies(r->delay_ms);
	h->reorder = r->action == CM_PEER_FAULT_REORDER;
	list_add_tail(&h->list, &cm_peer_fault_stash);
	cm_peer_fault_kick();
	spin_unlock_irqrestore(&cm_peer_fault_lock, flags);
	return true;
}

/**
 * cm_peer_fault_flush() - free the MADs held back for a MAD agent
 * @agent: the agent about to be unregistered
 *
 * Waits for a delivery in progress.  Context: process context.
 */
void cm_peer_fault_flush(struct ib_mad_agent *agent)
{
	struct cm_peer_fault_held *h, *tmp;
	unsigned long flags;
	LIST_HEAD(list);

	/* migrated MADs are delivered: the CM drops them, going down */
	if (cm_peer_fault_wq)
		flush_workqueue(cm_peer_fault_wq);
	mutex_lock(&cm_peer_fault_deliver_mutex);
	spin_lock_irqsave(&cm_peer_fault_lock, flags);
	list_for_each_entry_safe(h, tmp, &cm_peer_fault_stash, list)
		if (h->agent == agent)
			list_move_tail(&h->list, &list);
	spin_unlock_irqrestore(&cm_peer_fault_lock, flags);
	mutex_unlock(&cm_peer_fault_deliver_mutex);

	list_for_each_entry_safe(h, tmp, &list, list) {
		ib_free_recv_mad(h->wc);
		kfree(h);
	}
}

/**
 * cm_peer_fault_add() - add a fault rule
 * @action: what to do to the matching MADs
 * @attr_id: CM attribute ID to match (e.g. CM_REP_ATTR_ID), 0 for any
 * @skip: number of matching MADs to let pass before acting
 * @count: number of matching MADs to act on
 * @delay_ms: for DELAY, the delay; for REORDER, the longest hold; unused
 *	for MIGRATE, which delivers a received MAD from a work item on
 *	another online CPU, so that the CM handles it there
 *
 * Rules are tried in the order they were added; the first one that
 * matches a MAD acts on it.
 *
 * Return: 0, -EINVAL for a bad @action, or -ENOSPC when the table is full.
 */
int cm_peer_fault_add(enum cm_peer_fault_action action, __be16 attr_id,
		      unsigned int skip, unsigned int count,
		      unsigned int delay_ms)
{
	struct cm_peer_fault_rule *r;
	unsigned long flags;
	int i, ret = -ENOSPC;

	if (action >= CM_PEER_FAULT_NR_ACTIONS || !count)
		return -EINVAL;
	spin_lock_irqsave(&cm_peer_fault_lock, flags);
	for (i = 0; i < CM_PEER_FAULT_MAX_RULES; i++) {
		r = &cm_peer_fault_rules[i];
		if (r->used)
			continue;
		*r = (struct cm_peer_fault_rule){
			.used = true,
			.action = action,
			.attr_id = attr_id,
			.skip = skip,
			.count = count,
			.delay_ms = delay_ms,
		};
		ret = 0;
		break;
	}
	spin_unlock_irqrestore(&cm_peer_fault_lock, flags);
	return ret;
}

/**
 * cm_peer_fault_clear() - remove every rule, deliver what is held back
 *
 * Returns once the held MADs have been handed to the CM.
 * Context: process context.
 */
void cm_peer_fault_clear(void)
{
	struct cm_peer_fault_held *h;
	unsigned long flags;

	spin_lock_irqsave(&cm_peer_fault_lock, flags);
	memset(cm_peer_fault_rules, 0, sizeof(cm_peer_fault_rules));
	list_for_each_entry(h, &cm_peer_fault_stash, list)
		h->due = jiffies;
	cm_peer_fault_kick();
	spin_unlock_irqrestore(&cm_peer_fault_lock, flags);
	flush_delayed_work(&cm_peer_fault_work);
	if (cm_peer_fault_wq)
		flush_workqueue(cm_peer_fault_wq);
}

/**
 * cm_peer_fault_hits() - number of MADs the rules acted on so far
 *
 * Return: the count since boot.
 */
unsigned int cm_peer_fault_hits(void)
{
	return READ_ONCE(cm_peer_fault_total_hits);
}

/*
 * debugfs: /sys/kernel/debug/ib_cm_peer_fault/rules.  Write
 * "<action> <attr> <skip> <count> <delay_ms>" to add a rule, e.g.
 * "drop rep 0 1 0", or "clear"; read it for the rules and their hits.
 */
static int cm_peer_fault_show(struct seq_file *s, void *unused)
{
	struct cm_peer_fault_rule *r;
	unsigned long flags;
	unsigned int held = 0;
	struct list_head *pos;
	int i, j;

	spin_lock_irqsave(&cm_peer_fault_lock, flags);
	for (i = 0; i < CM_PEER_FAULT_MAX_RULES; i++) {
		r = &cm_peer_fault_rules[i];
		if (!r->used)
			continue;
		for (j = 0; j < ARRAY_SIZE(cm_peer_fault_attrs); j++)
			if (cm_peer_fault_attrs[j].attr_id == r->attr_id)
				break;
		seq_printf(s, "%s %s skip %u count %u delay_ms %u hits %u\n",
			   cm_peer_fault_action_names[r->action],
			   j < ARRAY_SIZE(cm_peer_fault_attrs) ?
			   cm_peer_fault_attrs[j].name : "?", r->skip,
			   r->count, r->delay_ms, r->hits);
	}
	list_for_each(pos, &cm_peer_fault_stash)
		held++;
	seq_printf(s, "held %u hits %u\n", held, cm_peer_fault_total_hits);
	spin_unlock_irqrestore(&cm_peer_fault_lock, flags);
	return 0;
}

static int cm_peer_fault_open(struct inode *inode, struct file *file)
{
	return single_open(file, cm_peer_fault_show, NULL);
}

static int cm_peer_fault_parse(char *buf)
{
	unsigned int skip, count, delay_ms;
	char action[8], attr[8];
	int a, b;

	if (!strcmp(strim(buf), "clear")) {
		cm_peer_fault_clear();
		return 0;
	}
	if (sscanf(buf, "%7s %7s %u %u %u", action, attr, &skip, &count,
		   &delay_ms) != 5)
		return -EINVAL;
	a = match_string(cm_peer_fault_action_names,
			 ARRAY_SIZE(cm_peer_fault_action_names), action);
	if (a < 0)
		return a;
	for (b = 0; b < ARRAY_SIZE(cm_peer_fault_attrs); b++)
		if (!strcmp(cm_peer_fault_attrs[b].name, attr))
			break;
	if (b == ARRAY_SIZE(cm_peer_fault_attrs))
		return -EINVAL;
	return cm_peer_fault_add(a, cm_peer_fault_attrs[b].attr_id, skip, count,
				 delay_ms);
}

static ssize_t cm_peer_fault_write(struct file *file, const char __user *ubuf,
				   size_t len, loff_t *ppos)
{
	char buf[64];
	int ret;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	ret = cm_peer_fault_parse(buf);
	return ret ? ret : len;
}

static const struct file_operations cm_peer_fault_fops = {
	.owner = THIS_MODULE,
	.open = cm_peer_fault_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = cm_peer_fault_write,
};

static int __init cm_peer_fault_init(void)
{
	struct dentry *dir;

	cm_peer_fault_wq = alloc_workqueue("ib_cm_peer_fault", 0, 0);
	if (!cm_peer_fault_wq)
		return -ENOMEM;
	dir = debugfs_create_dir("ib_cm_peer_fault", NULL);

	debugfs_create_file("rules", 0600, dir, NULL, &cm_peer_fault_fops);
	return 0;
}
late_initcall(cm_peer_fault_init);
