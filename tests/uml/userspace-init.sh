#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# PID 1 of the UML user-space check (uml_userspace_check in
# tests/uml-pair.sh): the first user-space step of a test kernel.  Two
# processes compute the same floating-point sum at once, their FP state
# going through UML's ptrace save and restore (PTRACE_[GS]ETREGSET, which
# fail on a host whose XSAVE size UML gets wrong); the result goes to
# UML_CHECK_OUT ("ok", or what differed), then power off.
PATH=/usr/sbin:/usr/bin:/sbin:/bin
sum() { awk 'BEGIN { for (i = 1; i <= 300000; i++) s += 1 / i; printf "%.12f\n", s }'; }
# on the host: the expected sum
[ "${1:-}" = --sum ] && { sum; exit; }
mount -t proc proc /proc
sum >"$UML_CHECK_OUT.1" &
sum >"$UML_CHECK_OUT.2"
wait
got1=$(cat "$UML_CHECK_OUT.1") got2=$(cat "$UML_CHECK_OUT.2")
rm -f "$UML_CHECK_OUT".[12]
if [ "$got1" = "$UML_FP_EXPECT" ] && [ "$got2" = "$UML_FP_EXPECT" ]; then
	echo ok >"$UML_CHECK_OUT"
else
	echo "fp state: expected $UML_FP_EXPECT, got $got1 and $got2" >"$UML_CHECK_OUT"
fi
sync
echo o >/proc/sysrq-trigger
while :; do sleep 60; done
