#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
#   dkms.sh install   `make dkms`: copy the DKMS sources (dkms.conf,
#                     patches/, our new files, scripts/dkms-build.sh) to
#                     /usr/src/cm-peer-<version>, `dkms add` and
#                     `dkms install` for $KVER (default: the running
#                     kernel when it is a 6.12 one, else $KRELEASE)
#   dkms.sh remove    `make dkms-remove`: dkms remove --all, drop the sources
#   dkms.sh check     for `make test`: the same add + build under a version
#                     of its own (<version>-check) for $KRELEASE, the ABI
#                     check on what dkms built, dkms install (modprobe
#                     must resolve to it), dkms remove (back to the
#                     in-tree modules); prints "name<TAB>PASS|FAIL" lines
set -uo pipefail
. "$(dirname "$0")/common.sh"

name=cm-peer
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$TOP/dkms.conf")

stage_src() {	# stage_src <version>
	local dir=/usr/src/$name-$1
	rm -rf "$dir"
	mkdir -p "$dir/scripts"
	cp -r "$TOP/drivers" "$TOP/patches" "$dir/"
	cp "$TOP/scripts/dkms-build.sh" "$dir/scripts/"
	sed "s/^PACKAGE_VERSION=.*/PACKAGE_VERSION=\"$1\"/" "$TOP/dkms.conf" \
		>"$dir/dkms.conf"
}

# dkms refuses to replace an in-tree module whose (empty) MODULE_VERSION
# equals ours; this documented DKMS list lets it for cm-peer, including on
# the autoinstall when a new kernel comes.
force=/usr/share/dkms/modules_to_force_install/$name
force_on() {
	mkdir -p "$(dirname "$force")"
	echo "${name}_version-override" >"$force"
}

drop() {	# drop <version>
	dkms remove -m "$name" -v "$1" --all >/dev/null 2>&1
	rm -rf "/usr/src/$name-$1" "/var/lib/dkms/$name/$1"
	rmdir "/var/lib/dkms/$name" 2>/dev/null
	return 0
}

[ "$(id -u)" -eq 0 ] || die "dkms needs root"
command -v dkms >/dev/null || die "dkms missing: run scripts/install-deps.sh"

case "${1:-}" in
install)
	kver=${KVER:-$(uname -r)}
	case "$kver" in 6.12.*) ;; *) kver=$KRELEASE ;; esac
	drop "$version"
	stage_src "$version"
	force_on
	dkms add -m "$name" -v "$version" &&
		dkms install -m "$name" -v "$version" -k "$kver"
	;;
remove)
	drop "$version"
	rm -f "$force"
	echo "removed $name/$version from dkms"
	;;
check)
	v=$version-check
	out=$BUILD/dkms.log
	drop "$v"
	stage_src "$v"
	made_force=
	[ -e "$force" ] || { force_on; made_force=1; }
	ok=FAIL
	export CM_PEER_KEEP_SYMVERS=$BUILD/dkms.symvers
	rm -f "$CM_PEER_KEEP_SYMVERS"
	if dkms add -m "$name" -v "$v" >"$out" 2>&1 &&
	   dkms build -m "$name" -v "$v" -k "$KRELEASE" >>"$out" 2>&1; then
		ok=PASS
	else
		tail -n 40 "$out" >&2
		make_log=/var/lib/dkms/$name/$v/build/make.log
		[ -f "$make_log" ] && tail -n 40 "$make_log" >&2
	fi
	printf 'dkms/add_and_build\t%s\n' "$ok"
	rc=0
	[ $ok = PASS ] || rc=1
	tree=/var/lib/dkms/$name/$v
	if [ $ok = PASS ]; then
		ABI_PREFIX=dkms "$TOP/scripts/abi-check.py" \
			"$CM_PEER_KEEP_SYMVERS" "$DEB_HDR/Module.symvers" \
			"$KRELEASE" "$tree/$KRELEASE"/*/module/*.ko* || rc=1
	fi
	# dkms install puts them in updates/dkms of the installed $KRELEASE
	# (linux-headers depends on its linux-image), modprobe must pick them;
	# dkms remove must give the in-tree ones back.
	res() { modprobe -S "$KRELEASE" --show-depends rdma_ucm 2>/dev/null; }
	ok=FAIL
	if [ $rc -eq 0 ] &&
	   dkms install -m "$name" -v "$v" -k "$KRELEASE" >>"$out" 2>&1 &&
	   res | grep -q 'updates/dkms/rdma_cm\.ko' &&
	   res | grep -q 'updates/dkms/ib_cm\.ko'; then
		ok=PASS
	fi
	printf 'dkms/install_modprobe_uses_ours\t%s\n' "$ok"
	[ $ok = PASS ] || rc=1
	drop "$v"
	[ -z "$made_force" ] || rm -f "$force"
	ok=FAIL
	res | grep -q 'kernel/drivers/infiniband/core/rdma_cm\.ko' && ok=PASS
	printf 'dkms/remove_restores_in_tree\t%s\n' "$ok"
	[ $ok = PASS ] || rc=1
	exit $rc
	;;
*)
	die "usage: $0 install|remove|check"
	;;
esac
