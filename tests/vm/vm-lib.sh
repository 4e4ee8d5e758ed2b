# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Host side of the qemu test stages (tests/vm/run-vm.sh, run-smp.sh):
# Debian's kernel and modules staged with ours, the small initramfs that
# mounts the host's root over virtio-9p, and qemu boots (TCG, SMP) of one
# VM or of a pair joined by a UDP socket link.  Source it after
# scripts/common.sh.
#
# Every guest has the host's / as its root (virtio-9p, read-only, tag
# hostroot) and one writable share (tag peerout), the host folder $share,
# which the guest mounts at the same path: results and the pair's sync
# folder.  Kernel command line variables PEER_* reach the guest's init as
# environment variables.

VM_DIR=$BUILD/vm			# caches: Debian stage, initramfs
VM_STAGE=$VM_DIR/debian			# Debian's image + our modules (DESTDIR)
VM_INITRD=$VM_DIR/initramfs.cpio.gz
SMP_OUT=${SMP_OUT:-$BUILD/smp}		# O= tree of the SMP debug kernel
VM_DEB=/var/cache/apt/archives/linux-image-$KRELEASE-unsigned_${KPKG_VERSION}_amd64.deb
QEMU=${QEMU:-qemu-system-x86_64}
VM_CPUS=${VM_CPUS:-2}
VM_MEM=${VM_MEM:-2048}
# i440fx (pc) for Debian's kernel; run-smp.sh takes q35: on pc, ACPI's
# _PRT is an AML loop that the debug kernel's interpreter (KASAN, lockdep)
# runs for ~27 s per PCI device under TCG, over ACPICA's 30 s loop limit
# when two VMs share the CPUs (no IRQ: the 9p root never mounts); q35's
# _PRT is a plain table
VM_MACHINE=${VM_MACHINE:-pc}
# the modules the initramfs loads to mount the root (dependency order)
VM_9P_MODULES=(netfs 9pnet 9pnet_virtio 9p)
# root over 9p: page cache on (the host's files do not change under a run)
VM_ROOTFLAGS=trans=virtio,version=9p2000.L,msize=262144,cache=loose

# vm_debian_stage: unpack Debian's linux-image-$KRELEASE-unsigned into
# build/vm/debian once (the package install-check.sh also uses), then
# `make install DESTDIR=build/vm/debian` of the current build/host-core
# (updates/cm-peer, depmod).
vm_debian_stage() {
	local stamp=$VM_STAGE/.peer-deb
	if [ ! -f "$VM_DEB" ]; then
		log "downloading linux-image-$KRELEASE-unsigned $KPKG_VERSION"
		(cd /var/cache/apt/archives &&
		 apt-get download -q "linux-image-$KRELEASE-unsigned=$KPKG_VERSION") >&2 ||
			die "cannot download linux-image-$KRELEASE-unsigned=$KPKG_VERSION"
	fi
	if [ "$(cat "$stamp" 2>/dev/null)" != "$(basename "$VM_DEB")" ]; then
		log "unpacking $(basename "$VM_DEB") into ${VM_STAGE#"$TOP"/}"
		rm -rf "$VM_STAGE"
		mkdir -p "$VM_STAGE"
		dpkg-deb -x "$VM_DEB" "$VM_STAGE" || die "cannot unpack $VM_DEB"
		basename "$VM_DEB" >"$stamp"
	fi
	[ -f "$VM_STAGE/boot/vmlinuz-$KRELEASE" ] ||
		die "no vmlinuz-$KRELEASE in $VM_DEB"
	DESTDIR=$VM_STAGE "$TOP/scripts/install.sh" install >&2 ||
		die "make install into ${VM_STAGE#"$TOP"/} failed"
}

# vm_debian_ready <results dir>: that folder emptied, then qemu, our
# modules for $KRELEASE, Debian's kernel staged with them and the
# initramfs, or die (the benchmarks' VM stages; the log in
# <dir>/stage.log).
vm_debian_ready() {
	rm -rf "$1"
	mkdir -p "$1" "$VM_DIR"
	command -v "$QEMU" >/dev/null ||
		die "no $QEMU: run scripts/install-deps.sh"
	case "$(modinfo -F vermagic "$HOST_MOD/ib_cm.ko" 2>/dev/null)" in
	"$KRELEASE "*) ;;
	*) die "no modules for $KRELEASE in ${HOST_MOD#"$TOP"/}: run make first" ;;
	esac
	( vm_debian_stage && vm_initramfs ) >"$1/stage.log" 2>&1 || {
		cat "$1/stage.log" >&2
		die "staging Debian's kernel with our modules failed"
	}
}

# vm_initramfs: build/vm/initramfs.cpio.gz, busybox (static) and the 9p
# modules of the staged Debian tree, decompressed (busybox's insmod reads
# no .xz), and tests/vm/initramfs-init as /init.  Rebuilt when an input
# changes.
vm_initramfs() {
	local moddir=$VM_STAGE/lib/modules/$KRELEASE bb=/bin/busybox
	local sum tmp m ko
	[ -x "$bb" ] || die "no $bb: install busybox-static (scripts/install-deps.sh)"
	sum=$(cat "$TOP/tests/vm/initramfs-init" "$bb" "$VM_STAGE/.peer-deb" |
		sha256sum | cut -d' ' -f1)
	[ -s "$VM_INITRD" ] && [ "$(cat "$VM_INITRD.sum" 2>/dev/null)" = "$sum" ] &&
		return 0
	log "building ${VM_INITRD#"$TOP"/}"
	tmp=$(mktemp -d "$VM_DIR/initramfs.XXXXXX")
	mkdir -p "$tmp"/{bin,dev,proc,sys,newroot,lib/modules}
	cp "$bb" "$tmp/bin/busybox"
	for m in "${VM_9P_MODULES[@]}"; do
		ko=$(find "$moddir/kernel" -name "$m.ko.xz" | head -1)
		[ -n "$ko" ] || { rm -rf "$tmp"; die "no $m.ko.xz in $moddir"; }
		xz -dc "$ko" >"$tmp/lib/modules/$m.ko"
	done
	install -m 755 "$TOP/tests/vm/initramfs-init" "$tmp/init"
	(cd "$tmp" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) |
		gzip -1 >"$VM_INITRD.tmp" || { rm -rf "$tmp"; die "cpio failed"; }
	rm -rf "$tmp"
	mv "$VM_INITRD.tmp" "$VM_INITRD"
	echo "$sum" >"$VM_INITRD.sum"
}

# vm_boot <name> <dir> <timeout s> <kernel> <initrd|-> <cmdline> [qemu args]
#   one qemu ($VM_MACHINE, TCG, $VM_CPUS vCPUs, $VM_MEM MiB), root = host's
#   / over 9p,
#   <dir> the writable share; console in <dir>/<name>.console, qemu's exit
#   status in <dir>/<name>.exit (124: killed by the timeout).
vm_boot() {
	local name=$1 dir=$2 limit=$3 kernel=$4 initrd=$5 cmdline=$6 rc
	shift 6
	local args=(-M "$VM_MACHINE" -accel tcg,thread=multi -smp "$VM_CPUS" -m "$VM_MEM"
		-nographic -no-reboot -nic none
		-kernel "$kernel" -append "$cmdline"
		-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
		-virtfs "local,path=$dir,mount_tag=peerout,security_model=none")
	[ "$initrd" = - ] || args+=(-initrd "$initrd")
	echo "$QEMU ${args[*]} $*" >"$dir/$name.cmd"
	timeout --kill-after=15 "$limit" "$QEMU" "${args[@]}" "$@" \
		</dev/null >"$dir/$name.console" 2>&1
	rc=$?
	echo $rc >"$dir/$name.exit"
	return $rc
}

# vm_pair <dir> <timeout s> <kernel> <initrd|-> <cmdline> [qemu args]:
#   hosts a (198.18.0.1) and b (198.18.0.2), each a vm_boot with a
#   virtio-net NIC; the two NICs are joined by qemu's UDP socket netdev on
#   127.0.0.1.  The command line gets PEER_NAME, PEER_IP, PEER_REMOTE,
#   PEER_MAC (the NIC's address), PEER_SHARE=<dir>, PEER_OUT=<dir>/<name>,
#   PEER_SYNC=<dir>/sync.
vm_pair() {
	local dir=$1 limit=$2 kernel=$3 initrd=$4 cmdline=$5 p1 p2 start
	shift 5
	p1=$((20000 + RANDOM % 20000))
	p2=$((p1 + 1))
	mkdir -p "$dir/a" "$dir/b" "$dir/sync"
	_vm_host() {	# <name> <ip> <peer ip> <mac> <local port> <peer port> <qemu args>
		local name=$1 ip=$2 peer=$3 mac=$4 lport=$5 pport=$6
		shift 6
		vm_boot "$name" "$dir" "$limit" "$kernel" "$initrd" \
			"$cmdline PEER_NAME=$name PEER_IP=$ip PEER_REMOTE=$peer PEER_MAC=$mac PEER_SHARE=$dir PEER_OUT=$dir/$name PEER_SYNC=$dir/sync" \
			-netdev "socket,id=n0,udp=127.0.0.1:$pport,localaddr=127.0.0.1:$lport" \
			-device "virtio-net-pci,netdev=n0,mac=$mac" "$@"
	}
	start=$(date +%s)
	_vm_host a 198.18.0.1 198.18.0.2 52:54:00:18:00:01 "$p1" "$p2" "$@" &
	_vm_host b 198.18.0.2 198.18.0.1 52:54:00:18:00:02 "$p2" "$p1" "$@" &
	wait
	log "VMs done after $(($(date +%s) - start)) s (exit a=$(cat "$dir/a.exit") b=$(cat "$dir/b.exit"))"
}

# vm_splats <console...>: print the kernel splats found (one excerpt per
# console, with the lines after the first match); exit 1 if any.
vm_splats() {
	local f found=0
	for f in "$@"; do
		if grep -qE -f "$TOP/tests/vm/splat.re" "$f" 2>/dev/null; then
			found=1
			echo "kernel splat in ${f#"$TOP"/}:" >&2
			grep -m1 -n -E -B6 -A25 -f "$TOP/tests/vm/splat.re" "$f" |
				sed 's/^/    /' >&2
		fi
	done
	return $found
}
