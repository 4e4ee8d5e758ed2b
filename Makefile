# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# IB CM peer-to-peer connection establishment, built against Debian's
# linux-source-6.12 (version pinned in kernel.env).
#
#   make            the main job: patched RDMA core modules for Debian's
#                   amd64 kernel (build/host-core/*.ko), with their vermagic
#   make test       every test stage (scripts/test.sh: UML KUnit and e2e,
#                   host modules, ABI, install, DKMS, lint, series, docs,
#                   make vm, make smp), ending with "N passed, N failed"
#   make kunit      only the UML KUnit run
#   make e2e        UML KUnit run, then the two-host end-to-end test
#   make abi        only the ABI/vermagic check of the host modules
#   make lint       only checkpatch/sparse/W=1
#   make series     the series (patches/series) as git format-patch output
#                   in build/series,
#                   checked with git am on the pristine tree
#   make install    (root) the modules built by `make` into
#                   /lib/modules/$(KRELEASE)/updates/cm-peer, depmod
#   make uninstall  (root) remove them again, depmod: in-tree ones load
#   make dkms       (root) the sources into /usr/src/cm-peer-<version>,
#                   dkms add + dkms install (KVER=<release> to choose)
#   make dkms-remove  (root) dkms remove --all, drop the sources
#   make bench      benchmarks (not tests): UML benchmark kernel, KUnit
#                   hot-path suite, single-pair and storm connection
#                   times on two UML hosts -> build/results/bench/;
#                   storms on 4 UML hosts and on the VMs, RDS/IB
#                   (re)connects on the VMs (tests/bench/run-bench.sh)
#   make vm         Debian's kernel in qemu (SMP, TCG): our modules
#                   installed on Debian's module tree and loaded with
#                   modprobe next to the in-tree ULPs, then the two-host
#                   e2e and RDS/IB on two VMs -> build/results/vm-debian/
#   make smp        SMP debug kernel (build/smp) in qemu: KUnit suites,
#                   device suites on rxe, kmemleak, then the two-host e2e
#                   on two VMs -> build/results/smp/
#   make stress     (not in make test) the fault and fuzz suites
#                   STRESS_ROUNDS times in UML -> build/results/stress/
#   make stress-kcsan  (not in make test) make smp's runs on a KCSAN
#                   kernel (build/smp-kcsan), data races listed in
#                   build/results/smp-kcsan/kcsan-summary.txt
#   make docs       Documentation/infiniband with the kernel's Sphinx
#                   build (htmldocs, SPHINXDIRS=infiniband) in build/docs
#   make tree       only unpack/overlay the kernel tree (build/src)
#   make clean      remove build/
#
# Everything is installed (apt, as root) by scripts/install-deps.sh.

include kernel.env

BUILD ?= $(CURDIR)/build
export BUILD

.PHONY: all modules deps tree kunit e2e abi lint series test clean \
	install uninstall dkms dkms-remove docs bench stress vm smp \
	stress-kcsan

all: modules

deps:
	scripts/install-deps.sh

tree: deps
	scripts/prepare-tree.sh

modules: tree
	scripts/build-host.sh

kunit: tree
	scripts/run-kunit.sh

e2e: kunit
	tests/e2e/run-e2e.sh

abi: modules
	scripts/abi-check.py $(BUILD)/host-core/Module.symvers \
		/usr/src/linux-headers-$(KRELEASE)/Module.symvers $(KRELEASE) \
		$(BUILD)/host-core/*.ko
	ABI_PREFIX=abi/rds scripts/abi-check.py \
		$(BUILD)/host-rds/Module.symvers \
		/usr/src/linux-headers-$(KRELEASE)/Module.symvers $(KRELEASE) \
		$(BUILD)/host-rds/*.ko

lint: modules
	scripts/lint.sh

series: tree
	scripts/series.sh

install: modules
	scripts/install.sh install

uninstall:
	scripts/install.sh uninstall

dkms: deps
	scripts/dkms.sh install

dkms-remove:
	scripts/dkms.sh remove

bench: modules
	tests/bench/run-bench.sh

stress: tree
	scripts/stress.sh

vm: modules
	tests/vm/run-vm.sh

smp: tree
	tests/vm/run-smp.sh

stress-kcsan: tree
	tests/vm/run-kcsan.sh

docs: tree
	scripts/docs.sh

test: tree
	scripts/test.sh

clean:
	rm -rf $(BUILD)
