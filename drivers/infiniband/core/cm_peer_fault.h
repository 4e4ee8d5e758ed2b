/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * IB CM MAD fault injection, for test kernels only
 * (CONFIG_INFINIBAND_CM_PEER_FAULT_INJECT).
 *
 * Rules lose, duplicate, delay, reorder or migrate the MADs the CM
 * receives, so that tests can check that both ends of a peer-to-peer
 * collision still agree on the outcome.  Without the option the hooks are
 * inlines that do nothing.
 */
#ifndef _CM_PEER_FAULT_H
#define _CM_PEER_FAULT_H

#include <rdma/ib_mad.h>

/**
 * enum cm_peer_fault_action - what a rule does to the MADs it matches
 * @CM_PEER_FAULT_DROP: a received MAD is lost
 * @CM_PEER_FAULT_DUP: a received MAD is also delivered a second time, from
 *	another online CPU, as a duplicating fabric would
 * @CM_PEER_FAULT_DELAY: a received MAD is delivered @delay_ms late
 * @CM_PEER_FAULT_REORDER: a received MAD is delivered after the next CM MAD
 *	received on the same port, or @delay_ms late if none comes
 * @CM_PEER_FAULT_MIGRATE: a received MAD is delivered from another online
 *	CPU, so that the CM handles it in parallel with the next ones
 * @CM_PEER_FAULT_NR_ACTIONS: number of actions
 */
enum cm_peer_fault_action {
	CM_PEER_FAULT_DROP,
	CM_PEER_FAULT_DUP,
	CM_PEER_FAULT_DELAY,
	CM_PEER_FAULT_REORDER,
	CM_PEER_FAULT_MIGRATE,
	CM_PEER_FAULT_NR_ACTIONS
};

typedef void (*cm_peer_fault_deliver_t)(struct ib_mad_agent *agent,
					struct ib_mad_send_buf *send_buf,
					struct ib_mad_recv_wc *wc);

#ifdef CONFIG_INFINIBAND_CM_PEER_FAULT_INJECT
int cm_peer_fault_add(enum cm_peer_fault_action action, __be16 attr_id,
		      unsigned int skip, unsigned int count,
		      unsigned int delay_ms);
void cm_peer_fault_clear(void);
unsigned int cm_peer_fault_hits(void);
bool cm_peer_fault_recv(struct ib_mad_agent *agent,
			struct ib_mad_recv_wc *wc,
			cm_peer_fault_deliver_t deliver);
void cm_peer_fault_flush(struct ib_mad_agent *agent);

/* for kunit_add_action(): no rule outlives its test */
static inline void cm_peer_fault_clear_action(void *unused)
{
	cm_peer_fault_clear();
}
#else
static inline bool cm_peer_fault_recv(struct ib_mad_agent *agent,
				      struct ib_mad_recv_wc *wc,
				      cm_peer_fault_deliver_t deliver)
{
	return false;
}

static inline void cm_peer_fault_flush(struct ib_mad_agent *agent)
{
}
#endif

#endif /* _CM_PEER_FAULT_H */
