/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Shared by the KUnit suites of the IB CM peer-to-peer model that run over
 * a real RDMA device (cm_peer_{ib,rdma,fuzz,fault,race}_test.c and
 * cm_peer_req_bench.c), in cm_peer_kunit_helpers.c.
 *
 * They drive the real ib_cm (no model of it) on a soft-RoCE device: two RC
 * QPs on one port (loopback, so the GIDs are equal and the QPN decides),
 * each with its own cm_id.  The device is named by the cm_peer_ib_test.dev
 * parameter (default "rxe0").  At boot no such device exists and every case
 * is skipped; the test runner creates it and runs the suites again through
 * /sys/kernel/debug/kunit/<suite>/run.
 */
#ifndef _CM_PEER_KUNIT_HELPERS_H
#define _CM_PEER_KUNIT_HELPERS_H

#include <kunit/test.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/inetdevice.h>
#include <linux/iopoll.h>
#include <linux/moduleparam.h>
#include <linux/netdevice.h>
#include <linux/prandom.h>
#include <linux/random.h>
#include <linux/vmstat.h>
#include <linux/workqueue.h>
#include <net/ipv6.h>
#include <rdma/iba.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_sa.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "cm_msgs.h"
#include "cm_peer.h"
#include "cm_peer_test.h"

/* all suites' parameters under one name, as when they were one object */
#undef MODULE_PARAM_PREFIX
#define MODULE_PARAM_PREFIX "cm_peer_ib_test."

#define PEER_SID		0x0000000100f2f2f2ULL
#define PEER_TIMEOUT	(10 * HZ)
#define CM_PEER_TEST_MATCH_MAX	92	/* a REQ's private data */
#define PEER_ID_LEN	8	/* match blob: the sender's service ID */
#define PEER_NAME_LEN	16

/*
 * The fuzz and flood cases bound the test device's held REQs as the
 * defaults did before they were derived (a hook of cm.c for KUnit): the
 * floods stay short and their REQs, which carry no timeouts, stay held.
 */
#define PEER_TEST_MAX_HELD	64
#define PEER_TEST_AGE_MS	5000

/* DELAY holds a MAD this long; REORDER at most this long. */
#define PEER_FAULT_DELAY_MS	300

/* One end's data path: a SEND from one buffer, a RECV into another */
struct peer_wire {
	const char *name;
	struct ib_qp *qp;
	struct ib_cq *cq;
	struct ib_sge send_sge, recv_sge;
	struct ib_cqe send_cqe, recv_cqe;
	int sends, recvs, wc_errors;
};

struct peer_end {
	struct kunit *test;
	const char *name;
	struct ib_device *dev;
	const struct ib_gid_attr *sgid_attr;
	struct sa_path_rec path;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct ib_cm_id *cm_id;
	struct completion done;
	int status;		/* 0 established, < 0 failed */
	bool got_req, req_on_own_id, got_rep, got_mra, got_rtu, got_rej;
	bool no_retries;	/* its REQ is never resent */
	u8 response_timeout;	/* of its REQ, when not 0 */
	bool refuse_req;	/* fail the REQ event: the CM destroys the id */
	bool hold_req;		/* leave a REQ or REP unanswered (peer_send_rep()) */
	bool hand_back;		/* ib_cm_peer_hold_req() on a listener's REQ */
	int hand_back_ret;
	unsigned int slow_req_ms;	/* the REQ event takes this long */
	bool gate_req;		/* the REQ event waits for req_go */
	struct completion req_go;
	bool in_req, req_refused;	/* the REQ event began, refused */
	int rej_reason;
	/* identity: REQ private data and what the partner's REQ starts with */
	u8 req_data[PEER_ID_LEN + PEER_NAME_LEN], match[PEER_ID_LEN + 2];
	bool has_match;
	char peer_name[PEER_NAME_LEN];	/* from its REQ or REP */
	/* data path */
	struct peer_wire wire;
	u64 *send_buf, *recv_buf;
	u64 send_dma, recv_dma;
};

struct peer_fuzz {
	struct kunit *test;
	struct peer_end *end;	/* path, GID; its cm_id is the idle peer */
	struct ib_mad_agent *agent;
	struct ib_ah *ah;
	atomic_t in_flight;
	wait_queue_head_t wq;
	unsigned int sent, send_errors;
	struct rnd_state rnd;
};

extern char *peer_dev_name;

int peer_send_rep(struct peer_end *e);
int peer_cm_handler(struct ib_cm_id *cm_id,
		    const struct ib_cm_event *ev);
int peer_wire_init(struct peer_wire *w, const char *name,
		   struct ib_qp *qp, struct ib_cq *cq, u32 lkey,
		   u64 send_addr, u64 recv_addr, u32 len);
void peer_wire_exchange(struct kunit *test, struct peer_wire *a,
			struct peer_wire *b);
const struct ib_gid_attr *peer_find_gid(struct ib_device *dev);
void peer_end_release(void *data);
struct peer_end *peer_end_create(struct kunit *test, const char *name);
struct ib_cm_req_param peer_req_param(struct peer_end *e, u64 sid);
unsigned int peer_req_budget_ms(const struct ib_cm_req_param *req);
int peer_send_req(struct peer_end *e, u64 sid);
void peer_end_wait(struct peer_end *e);
void peer_exchange(struct kunit *test, struct peer_end *a,
		   struct peer_end *b);
struct peer_end *peer_passive_of(struct peer_end *a, struct peer_end *b);
void peer_expect_one_connection(struct kunit *test, struct peer_end *a,
				struct peer_end *b);
void peer_wait_held(struct kunit *test, unsigned long held0);
void peer_hold_at(struct kunit *test, struct peer_end *a,
		  struct peer_end *b, u64 sid);
void peer_claim_held(struct kunit *test, struct peer_end *a,
		     struct peer_end *b, u64 sid);
void peer_wait_in_req(struct kunit *test, struct peer_end *e);
void peer_wait_mra(struct peer_end *e);
void peer_identity(struct kunit *test, struct peer_end *e, u64 sid,
		   u64 peer_sid, const char *name);
void peer_identity_mask(struct kunit *test, struct peer_end *e, u64 sid,
			u64 peer_sid, const char *name, u8 match_len,
			const u8 *mask);
int peer_listen_handler(struct ib_cm_id *cm_id,
			const struct ib_cm_event *ev);
void peer_unlisten(void *listen);
struct ib_cm_id *peer_listen_on(struct kunit *test,
				struct peer_end *al, u64 sid);
struct ib_cm_id *peer_listen_on_len(struct kunit *test, struct peer_end *al,
				    u64 sid, u8 match_len);
int cm_peer_ib_suite_init(struct kunit_suite *suite);
void peer_set_limits(struct kunit *test, struct ib_device *dev,
		     unsigned int max_held, unsigned int max_age_ms);
void peer_set_window(struct kunit *test, struct ib_device *dev,
		     unsigned int window, unsigned int rto_ms);
struct peer_fuzz *peer_fuzz_create(struct kunit *test);
void peer_fuzz_base_req(struct peer_fuzz *f, struct cm_req_msg *req,
			u64 sid);
int peer_fuzz_send(struct peer_fuzz *f, const struct cm_req_msg *req);
unsigned long peer_counter(struct kunit *test, const char *name);
unsigned long peer_rdv_occupancy(struct kunit *test);
unsigned long peer_rdv_wait_below(struct kunit *test,
				  unsigned long limit);

#endif /* _CM_PEER_KUNIT_HELPERS_H */
