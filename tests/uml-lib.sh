# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Shared by the PID-1 scripts of the UML test kernels (hostfs root):
# tests/kunit/uml-init.sh, tests/e2e/uml-e2e-init.sh and
# tests/bench/uml-bench-init.sh, and of the qemu VMs (tests/vm/*-init.sh,
# the host's root over 9p).  Source it.
#
# PEER_NETDEV: the link to the other host (UML: vec0; a VM: its virtio-net
# NIC); PEER_BARRIER_TRIES: how long uml_barrier waits for the other host,
# in tenths of a second (VMs boot at different speeds).
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
PEER_NETDEV=${PEER_NETDEV:-vec0}

uml_mount() {
	mount -t proc proc /proc
	mount -t sysfs sys /sys
	mount -t debugfs debugfs /sys/kernel/debug
	mount -t tmpfs tmpfs /run
	# kmemleak's own scans (a minute after boot, then ten minutes after
	# each) cost the debug kernels seconds of CPU (KASAN; under TCG too)
	# and stall the timed runs; uml_finish scans when the report is due
	if [ -w /sys/kernel/debug/kmemleak ]; then
		echo scan=off 2>/dev/null >/sys/kernel/debug/kmemleak
	fi
}

# uml_rxe_up <ip> <peer ip>: address $PEER_NETDEV, soft-RoCE rxe0 on it,
# wait until the peer answers a ping.
uml_rxe_up() {
	ip link set lo up
	ip addr add "$1/24" dev "$PEER_NETDEV"
	ip link set "$PEER_NETDEV" up
	rdma link add rxe0 type rxe netdev "$PEER_NETDEV"
	for i in $(seq 50); do
		ping -c1 -W1 "$2" >/dev/null 2>&1 && break
		sleep 0.2
	done
	rdma link show
}

# uml_loop_rxe <out dir>: soft-RoCE rxe0 on one end of a veth pair
# (198.18.0.1, from the 198.18.0.0/15 test range), for the KUnit suites
# that connect QPs in loopback, and siw0 (198.18.1.1) on veth1; the log
# goes to <out>/ib-setup.log.
uml_loop_rxe() {
	{
		set -x
		ip link set lo up
		ip link add veth0 type veth peer name veth1 &&
		ip addr add 198.18.0.1/24 dev veth0 &&
		ip link set veth0 up && ip link set veth1 up &&
		rdma link add rxe0 type rxe netdev veth0 &&
		sleep 2 &&
		rdma link show && ip addr show veth0
		# iWARP on the other end, for the case that checks the option
		# refuses it
		ip addr add 198.18.1.1/24 dev veth1 &&
		rdma link add siw0 type siw netdev veth1
		set +x
	} >"$1/ib-setup.log" 2>&1
}

# uml_held_now: REQs in rxe0's rendezvous queue now, from its counters
uml_held_now() {
	local d=/sys/class/infiniband/rxe0/ports/1/cm_peer
	echo $(($(cat $d/held) - $(cat $d/claimed) - $(cat $d/expired) - \
		$(cat $d/withdrawn)))
}

# uml_counters: "name value" lines, rxe0's cm_peer counters by name, the
# other CM groups as dir/name.
uml_counters() {
	(cd /sys/class/infiniband/rxe0/ports/1 &&
	 grep -H '' cm_peer/* cm_[rt]x_*/* | sed 's|^cm_peer/||; s|:| |')
}

# uml_clock_sync <sync dir>: set this host's clock from the host's (UML
# kernels read the host clock: nothing to do; the VMs redefine it).
uml_clock_sync() { :; }

# uml_barrier <sync dir> <me> <others> <name> <margin ms>: wait for the
# other hosts (<others>: their names, comma separated; PEER_BARRIER_TRIES
# for each), then print a start time (host clock, ms) <margin> ahead,
# chosen by host a.
uml_barrier() {
	local o i

	touch "$1/$4.$2"
	for o in ${3//,/ }; do
		for i in $(seq "${PEER_BARRIER_TRIES:-600}"); do
			[ -e "$1/$4.$o" ] && break
			sleep 0.1
		done
	done
	uml_clock_sync "$1"
	if [ "$2" = a ]; then
		echo $(($(date +%s%3N) + $5)) >"$1/$4.start.tmp"
		mv "$1/$4.start.tmp" "$1/$4.start"
	fi
	for i in $(seq 600); do
		[ -e "$1/$4.start" ] && break
		sleep 0.1
	done
	cat "$1/$4.start"
}

# uml_finish <out dir>: kmemleak report into <out>/kmemleak.txt (status in
# kmemleak.status), then power off.  Two scans: kmemleak reports an object
# only once it has stayed unreferenced over more than one scan.
uml_finish() {
	local leak=/sys/kernel/debug/kmemleak

	if [ -w "$leak" ]; then
		echo scan >"$leak"
		sleep 6
		echo scan >"$leak"
		cat "$leak" >"$1/kmemleak.txt"
		echo done >"$1/kmemleak.status"
	else
		echo unavailable >"$1/kmemleak.status"
	fi
	sync
	# PID 1 must outlive the power-off: start the wait before it, as an
	# exec from the 9p root can fail once shutdown began (exit 126,
	# "Attempted to kill init", seen once on a Debian VM)
	sleep 600 &
	echo o >/proc/sysrq-trigger
	while :; do
		wait
	done
}
