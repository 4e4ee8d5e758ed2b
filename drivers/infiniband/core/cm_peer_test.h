/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The KUnit-only hook of ib_cm for the peer-to-peer suites, defined in
 * cm_peer_ib.c with CONFIG_INFINIBAND_CM_PEER_KUNIT_TEST.
 */
#ifndef _CM_PEER_TEST_H
#define _CM_PEER_TEST_H

#include <linux/types.h>
#include <kunit/visibility.h>

struct ib_device;
struct ib_cm_id;

/* bounds of @device's held REQs, its window and RTO; 0s: the defaults */
int cm_peer_test_limits(struct ib_device *device, unsigned int max_held,
			unsigned int max_held_svc, unsigned int max_age_ms,
			unsigned int window, unsigned int rto_ms);
/* how many peer REQs @device holds now, counted under the CM's lock */
unsigned int cm_peer_test_held(struct ib_device *device);
unsigned int cm_peer_test_flow(struct ib_device *device, unsigned long owner);
unsigned int cm_peer_test_cwnd(struct ib_device *device, unsigned long owner);
int cm_peer_test_dest(struct ib_cm_id *cm_id, u64 sid, unsigned long owner);
bool cm_peer_test_expected(struct ib_cm_id *cm_id);
/* how long ib_send_cm_peer_req() waits between its post and listing */
void cm_peer_test_post_pause(unsigned int ms);
#if IS_ENABLED(CONFIG_INFINIBAND_CM_PEER_KUNIT_TEST)
void cm_peer_test_posted(void);
#else
static inline void cm_peer_test_posted(void) {}
#endif

#endif /* _CM_PEER_TEST_H */
