# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Guest side of the qemu VMs (PID-1 scripts tests/vm/*-init.sh): the root
# is the host's / over virtio-9p, read-only; the host folder PEER_SHARE is
# the writable share (tag peerout), mounted at the same path.  Source it
# after tests/uml-lib.sh (it redefines uml_clock_sync).

# vm_mount: proc, sys, debugfs, /run, /dev, then the share.  /tmp stays
# the host's (read-only: the checkout may live below it); TMPDIR=/run.
vm_mount() {
	uml_mount
	mount -t devtmpfs devtmpfs /dev 2>/dev/null
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 \
		peerout "$PEER_SHARE" || {
		echo "cannot mount the share peerout on $PEER_SHARE" >/dev/console
		echo o >/proc/sysrq-trigger
		sleep 30
	}
	export TMPDIR=/run
	uml_clock_sync "$PEER_SHARE"
}

# The guest's clock from the host's: a file written on the share gets
# its mtime from the host's clock.  One process reads our clock around
# the write and sets it (forks between the write and `date -s` cost
# hundreds of ms under TCG); peer_ping's rendezvous measures what is left.
uml_clock_sync() {
	python3 - "$1/.clock.${PEER_NAME:-vm}" <<'PY'
import os, sys, time
t0 = time.time()
with open(sys.argv[1], "w") as f:
    f.write("x")
t1 = time.time()
off = (t0 + t1) / 2 - os.stat(sys.argv[1]).st_mtime_ns / 1e9
time.clock_settime(time.CLOCK_REALTIME, time.time() - off)
print(f"clock: was {off * 1e3:+.1f} ms off the host's (+-{(t1 - t0) * 500:.1f})", file=sys.stderr)
PY
}

# vm_netdev: the name of the NIC whose address is PEER_MAC (waits for it).
vm_netdev() {
	local d i
	for i in $(seq 100); do
		for d in /sys/class/net/*; do
			if [ "$(cat "$d/address" 2>/dev/null)" = "$PEER_MAC" ]; then
				basename "$d"
				return 0
			fi
		done
		sleep 0.1
	done
	return 1
}

# vm_stage_modules: /lib/modules from the staged Debian tree with ours
# (PEER_STAGE, `make install DESTDIR=`), then the NIC's driver, soft-RoCE
# and rdma_ucm (which brings ib_cm and rdma_cm) loaded with modprobe.
vm_stage_modules() {
	mount --bind "$PEER_STAGE/lib/modules" /lib/modules
	modprobe virtio_net
	modprobe rdma_rxe
	modprobe rdma_ucm
}
