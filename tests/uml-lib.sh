# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Shared by the PID-1 scripts of the UML test kernels (hostfs root):
# tests/kunit/uml-init.sh and tests/e2e/uml-e2e-init.sh.  Source it.
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH

uml_mount() {
	mount -t proc proc /proc
	mount -t sysfs sys /sys
	mount -t debugfs debugfs /sys/kernel/debug
	mount -t tmpfs tmpfs /run
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
	echo o >/proc/sysrq-trigger
	sleep 10
}
