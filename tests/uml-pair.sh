# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Two UML hosts, a (198.18.0.1) and b (198.18.0.2), joined by a UML vector
# device (l2tpv3 over UDP on 127.0.0.1), hostfs root; used by
# tests/e2e/run-e2e.sh and tests/bench/run-bench.sh (uml_userspace_check
# also by scripts/run-kunit.sh; uml_lan, more hosts on a bridge, by
# run-bench.sh).  Source it.
#
# uml_userspace_check <kernel> <out dir>
#   boots <kernel> once with tests/uml/userspace-init.sh as PID 1 (no KUnit
#   suites): fails at once, with the reason, where UML cannot run user
#   space on this host (say its FP state does not fit the host's ptrace:
#   tests/uml/0002-*.patch).  Log in <out dir>/uml-userspace.log.
#
# uml_pair <kernel> <timeout s> <out dir> <sync dir> <init> <args...>
#   boots both with <init> as PID 1 and <args> on the command line (plus
#   PEER_NAME, PEER_IP, PEER_REMOTE, PEER_OUT=<out dir>/<name>, PEER_SYNC), waits
#   for both; console in <out dir>/<name>.console, exit in <name>.exit.

# _uml_boot <kernel> <timeout s> <out dir> <sync dir> <init> <name> <ip>
#   <peer ip> <vec0 spec> <args...>: one host, until it powers off
_uml_boot() {
	local kernel=$1 limit=$2 dir=$3 sync=$4 init=$5 name=$6 ip=$7 peer=$8
	local vec=$9

	shift 9
	timeout --kill-after=15 "$limit" "$kernel" console=tty \
		kunit.enable=0 rootfstype=hostfs rootflags=/ rw \
		init="$init" PEER_NAME="$name" PEER_IP="$ip" \
		PEER_REMOTE="$peer" PEER_OUT="$dir/$name" PEER_SYNC="$sync" \
		"$@" "vec0:$vec,depth=128" </dev/null >"$dir/$name.console" 2>&1
	echo $? >"$dir/$name.exit"
}

uml_pair() {
	local kernel=$1 limit=$2 dir=$3 sync=$4 init=$5 p1 p2 start l2tp
	shift 5
	p1=$((20000 + RANDOM % 20000))
	p2=$((p1 + 1))
	l2tp=transport=l2tpv3,udp=1,src=127.0.0.1,dst=127.0.0.1,rx_session=0xffff,tx_session=0xffff
	start=$(date +%s)
	_uml_boot "$kernel" "$limit" "$dir" "$sync" "$init" a 198.18.0.1 \
		198.18.0.2 "$l2tp,srcport=$p1,dstport=$p2" "$@" &
	_uml_boot "$kernel" "$limit" "$dir" "$sync" "$init" b 198.18.0.2 \
		198.18.0.1 "$l2tp,srcport=$p2,dstport=$p1" "$@" &
	wait
	stty sane 2>/dev/null || true
	log "hosts done after $(($(date +%s) - start)) s"
}

# uml_lan <kernel> <timeout s> <out dir> <sync dir> <init> <n> <args...>
#   as uml_pair for n (2 to 8) hosts a, b, c, ... (198.18.0.1, .2, ...),
#   each on a tap device of one bridge of this host (root only), with
#   PEER_HOSTS=n; PEER_REMOTE is a's address (b's for a).  The bridge and
#   the taps go when it returns or is interrupted.
uml_lan() (
	kernel=$1 limit=$2 dir=$3 sync=$4 init=$5 n=$6
	names=(a b c d e f g h)
	br=pbr$$
	shift 6
	[ "$n" -ge 2 ] && [ "$n" -le ${#names[@]} ] || return 1
	[ "$(cat /proc/sys/net/bridge/bridge-nf-call-iptables 2>/dev/null)" = 1 ] &&
		log "warning: bridged traffic goes through iptables (br_netfilter)"
	trap 'for ((i = 0; i < n; i++)); do ip link del "${br}t$i"; done 2>/dev/null
	      ip link del "$br" 2>/dev/null' EXIT
	ip link add "$br" type bridge || return 1
	for ((i = 0; i < n; i++)); do
		ip tuntap add dev "${br}t$i" mode tap &&
			ip link set "${br}t$i" master "$br" up || return 1
	done
	ip link set "$br" up || return 1
	start=$(date +%s)
	for ((i = 0; i < n; i++)); do
		_uml_boot "$kernel" "$limit" "$dir" "$sync" "$init" "${names[i]}" \
			"198.18.0.$((i + 1))" "198.18.0.$((i ? 1 : 2))" \
			"transport=tap,ifname=${br}t$i" PEER_HOSTS="$n" "$@" &
	done
	wait
	stty sane 2>/dev/null || true
	log "$n hosts done after $(($(date +%s) - start)) s"
)

uml_userspace_check() {
	local kernel=$1 out=$2 mark=$2/uml-userspace.txt expect why
	expect=$("$TOP/tests/uml/userspace-init.sh" --sum)
	rm -f "$mark"
	timeout --kill-after=10 120 "$kernel" mem=512M console=tty \
		kunit.enable=0 rootfstype=hostfs rootflags=/ rw \
		init="$TOP/tests/uml/userspace-init.sh" UML_CHECK_OUT="$mark" \
		UML_FP_EXPECT="$expect" </dev/null >"$out/uml-userspace.log" 2>&1
	stty sane 2>/dev/null || true
	[ "$(cat "$mark" 2>/dev/null)" = ok ] && return 0
	why=$(cat "$mark" 2>/dev/null ||
	      grep -m2 -E 'failed, errno|Kernel panic|XSAVE' "$out/uml-userspace.log")
	printf 'error: UML (%s) cannot run user space on this host (%s): %s\n' \
		"${kernel#"$TOP"/}" "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')" \
		"${why:-no result, see ${out#"$TOP"/}/uml-userspace.log}" >&2
	return 1
}
