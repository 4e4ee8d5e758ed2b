/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * IB CM peer-to-peer connection establishment: the engine.
 *
 * The engine knows nothing about ib_cm internals.  It provides three
 * pieces that cm.c glues into its REQ handling:
 *
 *  - a per-device ServiceID mode table (peer or client/server),
 *  - the arbiter that decides which end of a REQ collision stays active,
 *  - a bounded rendezvous queue for peer REQs that arrive before the
 *    local side has sent its own REQ.
 */
#ifndef _CM_P2P_H
#define _CM_P2P_H

#include <linux/types.h>
#include <linux/list.h>
#include <linux/gfp.h>
#include <rdma/ib_verbs.h>

/**
 * enum cm_p2p_mode - how inbound REQs for a ServiceID are matched
 * @CM_P2P_MODE_NONE: nothing is bound for the ServiceID
 * @CM_P2P_MODE_CLIENT_SERVER: a listener owns it (ib_cm_listen())
 * @CM_P2P_MODE_PEER: peers own it; REQs are matched to local REQs
 */
enum cm_p2p_mode {
	CM_P2P_MODE_NONE,
	CM_P2P_MODE_CLIENT_SERVER,
	CM_P2P_MODE_PEER,
};

/**
 * enum cm_p2p_role - outcome of a REQ collision for the local end
 * @CM_P2P_PASSIVE: drop the local REQ, answer the remote REQ with a REP
 * @CM_P2P_ACTIVE: drop the remote REQ, wait for the REP to the local REQ
 */
enum cm_p2p_role {
	CM_P2P_PASSIVE,
	CM_P2P_ACTIVE,
};

/**
 * struct cm_p2p_ident - what the arbiter compares of one REQ
 * @gid: primary path port GID of the REQ's sender (REQ:Primary Local Port GID)
 * @qpn: QPN of the REQ's sender (REQ:Local QPN, 24 bits; upper bits ignored)
 */
struct cm_p2p_ident {
	union ib_gid gid;
	u32 qpn;
};

int cm_p2p_arbitrate(const struct cm_p2p_ident *local,
		     const struct cm_p2p_ident *remote);

struct cm_p2p_table;

struct cm_p2p_table *cm_p2p_table_alloc(gfp_t gfp);
void cm_p2p_table_free(struct cm_p2p_table *table);
int cm_p2p_bind(struct cm_p2p_table *table, __be64 service_id,
		__be64 service_mask, enum cm_p2p_mode mode, gfp_t gfp);
int cm_p2p_unbind(struct cm_p2p_table *table, __be64 service_id,
		  __be64 service_mask, enum cm_p2p_mode mode);
enum cm_p2p_mode cm_p2p_lookup(struct cm_p2p_table *table,
			       __be64 service_id);
unsigned int cm_p2p_peer_binds(const struct cm_p2p_table *table);

/**
 * cm_p2p_sid_is_peer() - is an inbound REQ's ServiceID bound as peer?
 * @table: the device's mode table, or NULL
 * @service_id: the REQ's ServiceID
 *
 * The decision ib_cm makes for every inbound REQ: while no peer ServiceID
 * is bound in @table it costs one load and no lookup, so client/server
 * REQs pay nothing else.
 *
 * Return: true when @service_id falls in a peer bind.
 */
static inline bool cm_p2p_sid_is_peer(struct cm_p2p_table *table,
				      __be64 service_id)
{
	return table && cm_p2p_peer_binds(table) &&
	       cm_p2p_lookup(table, service_id) == CM_P2P_MODE_PEER;
}

/**
 * struct cm_p2p_rdv_key - what a held REQ is claimed by
 * @service_id: REQ:ServiceID
 * @remote_gid: REQ:Primary Local Port GID, i.e. the remote end's port GID
 * @local_gid: REQ:Primary Remote Port GID, the local port GID it was sent
 *	to: only a peer REQ sent from that GID claims it
 */
struct cm_p2p_rdv_key {
	__be64 service_id;
	union ib_gid remote_gid;
	union ib_gid local_gid;
};

/* Upper bound of the opaque copy a held REQ may carry. */
#define CM_P2P_RDV_MAX_DATA 512

/**
 * struct cm_p2p_held - a peer REQ held in the rendezvous queue
 * @list: queue linkage, owned by the queue until the entry is handed out
 * @key: what the entry is claimed by
 * @remote_comm_id: REQ:Local Communication ID (duplicate detection)
 * @remote_qpn: REQ:Local QPN
 * @expires: jiffies after which the entry is no longer claimable
 * @len: bytes in @data
 * @data: the caller's copy of the REQ, opaque to the engine
 *
 * An entry returned by cm_p2p_rdv_claim() or cm_p2p_rdv_expire() belongs
 * to the caller, who frees it with cm_p2p_held_free().
 */
struct cm_p2p_held {
	struct list_head list;
	struct cm_p2p_rdv_key key;
	__be32 remote_comm_id;
	u32 remote_qpn;
	unsigned long expires;
	size_t len;
	u8 data[] __counted_by(len);
};

struct cm_p2p_rdv;

struct cm_p2p_rdv *cm_p2p_rdv_alloc(unsigned int max_held,
				    unsigned int max_age_ms, gfp_t gfp);
void cm_p2p_rdv_free(struct cm_p2p_rdv *rdv);
int cm_p2p_rdv_hold(struct cm_p2p_rdv *rdv, const struct cm_p2p_rdv_key *key,
		    __be32 remote_comm_id, u32 remote_qpn,
		    const void *data, size_t len, gfp_t gfp);
struct cm_p2p_held *cm_p2p_rdv_claim(struct cm_p2p_rdv *rdv,
				     const struct cm_p2p_rdv_key *key);
bool cm_p2p_rdv_drop(struct cm_p2p_rdv *rdv, const struct cm_p2p_rdv_key *key,
		     __be32 remote_comm_id);
struct cm_p2p_held *
cm_p2p_rdv_withdraw(struct cm_p2p_rdv *rdv, __be32 remote_comm_id,
		    bool (*match)(const struct cm_p2p_held *held,
				  const void *arg),
		    const void *arg);
unsigned int cm_p2p_rdv_expire(struct cm_p2p_rdv *rdv,
			       struct list_head *expired);
unsigned int cm_p2p_rdv_drain(struct cm_p2p_rdv *rdv, struct list_head *list);
unsigned int cm_p2p_rdv_max_age_ms(const struct cm_p2p_rdv *rdv);
bool cm_p2p_rdv_next_expiry(struct cm_p2p_rdv *rdv, unsigned long *when);
unsigned int cm_p2p_rdv_count(struct cm_p2p_rdv *rdv);
void cm_p2p_held_free(struct cm_p2p_held *held);
void cm_p2p_held_list_free(struct list_head *list);

#endif /* _CM_P2P_H */
