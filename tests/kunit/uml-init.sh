#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# PID 1 of the UML test kernel (hostfs root).  Built-in KUnit suites have
# already run when this starts; here we ask kmemleak for a report on
# everything the tests allocated, store it on the host and power off.
# P2P_OUT (from the kernel command line) is the host folder for results.
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH

mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t debugfs debugfs /sys/kernel/debug
mount -t tmpfs tmpfs /run

out=${P2P_OUT:-/tmp}
leak=/sys/kernel/debug/kmemleak
if [ -w "$leak" ]; then
	# Two scans: kmemleak reports an object only once it has stayed
	# unreferenced over more than one scan.
	echo scan >"$leak"
	sleep 6
	echo scan >"$leak"
	cat "$leak" >"$out/kmemleak.txt"
	echo done >"$out/kmemleak.status"
else
	echo unavailable >"$out/kmemleak.status"
fi
sync
echo o >/proc/sysrq-trigger
sleep 10
