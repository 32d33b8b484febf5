# SPDX-License-Identifier: GPL-2.0
# bpfstderr build. `make help` lists the targets.

PREFIX     ?= /usr/local
DESTDIR    ?=
BUILD      ?= build
# The systemd unit's directory; Debian 12's package puts it in /lib.
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
# The bash completion's directory; empty: not installed (the Debian
# package installs it with dh_bash-completion).
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
# make's own default CC is cc: only a CC given by the user replaces gcc.
ifeq ($(origin CC),default)
CC         := gcc
endif
CLANG      ?= clang-19
BPFTOOL    ?= $(shell command -v bpftool || echo /usr/sbin/bpftool)
PKG_CONFIG ?= pkg-config
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux
VERSION    := 0.1

# Packages `make deps` installs: to build, then to test. Debian 12 names.
BUILD_PKGS := make gcc clang-19 llvm-19 libclang-rt-19-dev pkg-config bpftool libbpf-dev \
	libelf-dev libdw-dev libdebuginfod-dev zlib1g-dev libzstd-dev libncurses-dev \
	libsqlite3-dev libjson-c-dev libmicrohttpd-dev libsystemd-dev
TEST_PKGS  := jq tmux python3 groff-base man-db elfutils debuginfod binutils procps \
	util-linux systemd prometheus python3-prometheus-client curl strace \
	qemu-system-x86 busybox-static cpio xz-utils zstd debian-archive-keyring \
	dpkg-dev debhelper bash-completion fakeroot lintian debootstrap piuparts git patch perl

LIBS_PC    := libbpf libelf libdw libdebuginfod ncursesw sqlite3 json-c libmicrohttpd libsystemd
CFLAGS     ?= -O2 -g
CFLAGS     += -MMD -MP -Wall -Wextra -std=gnu11 -D_GNU_SOURCE -DBPFSTDERR_VERSION='"$(VERSION)"' \
	      -I$(BUILD) $(shell $(PKG_CONFIG) --cflags $(LIBS_PC) 2>/dev/null)
LDLIBS     += $(shell $(PKG_CONFIG) --libs $(LIBS_PC) 2>/dev/null) -lpthread

ifeq ($(SAN),1)
CFLAGS     += -fsanitize=address,undefined -fno-omit-frame-pointer \
	      -fno-sanitize-recover=undefined
LDFLAGS    += -fsanitize=address,undefined
endif
# The fuzzer links the tool's own objects, built by clang for libFuzzer.
ifeq ($(FUZZ),1)
CFLAGS     += -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer \
	      -fno-sanitize-recover=undefined
LDFLAGS    += -fsanitize=fuzzer,address,undefined
endif

# Debian's multiarch include directory (asm/types.h), whatever CC is.
MULTIARCH  := $(shell dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -dumpmachine)
BPF_CFLAGS := -g -O2 -target bpf -Wall -Wno-unused-function \
	      -D__TARGET_ARCH_x86 -I$(BUILD) -Ibpf \
	      -idirafter /usr/include/$(MULTIARCH)

TOOL_SRCS  := $(wildcard tool/*.c)
TOOL_OBJS  := $(patsubst tool/%.c,$(BUILD)/obj/%.o,$(TOOL_SRCS))
BPF_SRCS   := $(wildcard bpf/*.bpf.c)
SKELS      := $(patsubst bpf/%.bpf.c,$(BUILD)/%.skel.h,$(BPF_SRCS))
TEST_BPF   := $(wildcard tests/bpf/*.bpf.c)
TEST_SKELS := $(patsubst tests/bpf/%.bpf.c,$(BUILD)/%.skel.h,$(TEST_BPF))
# Objects that print to their streams are built twice (bpf/stream_printk.h):
# the second build, X_v4_bpf, for kernels whose print kfunc takes 4 args.
PRINTK_SRCS := $(shell grep -l '"stream_printk.h"' $(BPF_SRCS) $(TEST_BPF))
PRINTK_SKELS := $(patsubst %.bpf.c,$(BUILD)/%.v4.skel.h,$(notdir $(PRINTK_SRCS)))
SKELS      += $(PRINTK_SKELS)
HELPERS    := $(patsubst tests/helpers/%.c,$(BUILD)/tests/%,$(wildcard tests/helpers/*.c))
UNITS      := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/test_*.c))
LIVES      := $(patsubst tests/live/%.c,$(BUILD)/tests/%,$(wildcard tests/live/test_*.c))
# Everything of the tool but main(), for unit tests and helpers to link.
LIB_OBJS   := $(filter-out $(BUILD)/obj/bpfstderr.o,$(TOOL_OBJS))

.PHONY: all deps run demo-vm check test vmtest tests-build bench fuzz fuzz-build install uninstall clean help \
	deb debtest
.DELETE_ON_ERROR:
.SECONDARY:

all: $(BUILD)/bpfstderr

help:
	@echo "make deps     install build and test packages (Debian 12, as root)"
	@echo "make          build $(BUILD)/bpfstderr"
	@echo "make run      deps + build + bpfstderr top --demo: here where stream content can"
	@echo "              show (doctor's probes), else in Debian's kernel under qemu; HOST=1: here"
	@echo "make demo-vm  deps + build + bpfstderr top --demo in Debian's kernel under qemu"
	@echo "make check    deps + build + whole test suite (needs root)"
	@echo "make vmtest   build + kernel lab: tests/vm/guest/*.sh in Debian's kernels under qemu"
	@echo "make install  PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)"
	@echo "make deb      build the Debian package into $(DEB_BUILD)/, check it with lintian"
	@echo "make debtest  install, use and purge that package in a debootstrap'd Debian 12 (root)"
	@echo "make clean"

deps:
	@missing=""; for p in $(BUILD_PKGS) $(TEST_PKGS); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi

$(BUILD)/vmlinux.h:
	@mkdir -p $(@D)
	@if [ ! -r "$(VMLINUX_BTF)" ]; then \
		echo "error: $(VMLINUX_BTF) not readable: build on a kernel with BTF," \
		     "or pass VMLINUX_BTF=<a vmlinux or BTF file>" >&2; exit 1; fi
	$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) $(BUILD)/vmlinux.h
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/bpf/%.bpf.o: tests/bpf/%.bpf.c $(wildcard bpf/*.h) $(wildcard tests/bpf/*.h) $(BUILD)/vmlinux.h
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/bpf/%.v4.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) $(BUILD)/vmlinux.h
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -DSTREAM_PRINTK_V4 -c $< -o $@

$(BUILD)/bpf/%.v4.bpf.o: tests/bpf/%.bpf.c $(wildcard bpf/*.h) $(wildcard tests/bpf/*.h) $(BUILD)/vmlinux.h
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -DSTREAM_PRINTK_V4 -c $< -o $@

$(BUILD)/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@

$(BUILD)/%.v4.skel.h: $(BUILD)/bpf/%.v4.bpf.o
	$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_v4_bpf > $@

# Header dependencies come from the compiler (-MMD); the skeletons only
# have to exist before the first compile.
$(BUILD)/obj/%.o: tool/%.c | $(SKELS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/bpfstderr: $(TOOL_OBJS)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(BUILD)/tests/%: tests/unit/%.c $(LIB_OBJS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itool $< $(LIB_OBJS) $(LDFLAGS) $(LDLIBS) -o $@

$(BUILD)/tests/%: tests/live/%.c $(LIB_OBJS) | $(TEST_SKELS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itool $< $(LIB_OBJS) $(LDFLAGS) $(LDLIBS) -o $@

$(BUILD)/tests/%: tests/helpers/%.c $(LIB_OBJS) | $(TEST_SKELS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itool $< $(LIB_OBJS) $(LDFLAGS) $(LDLIBS) -o $@

# Test only: stream_shim serves fixture bytes for BPF_PROG_STREAM_READ_BY_FD,
# refuse_shim makes chosen bpf() calls fail with EPERM.
SHIMS      := $(BUILD)/tests/libstreamshim.so $(BUILD)/tests/librefuseshim.so
$(BUILD)/tests/lib%shim.so: tests/shim/%_shim.c tests/shim/real_syscall.h
	@mkdir -p $(@D)
	$(CC) -O2 -g -Wall -Wextra -fPIC -shared $< -ldl -o $@

$(BUILD)/bench/%: bench/%.c $(LIB_OBJS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itool $< $(LIB_OBJS) $(LDFLAGS) $(LDLIBS) -o $@

BENCHES    := $(patsubst bench/%.c,$(BUILD)/bench/%,$(wildcard bench/*.c))
$(BUILD)/bench/rfc_many $(BUILD)/bench/storm: | $(TEST_SKELS)
bench: $(BENCHES)

# The parser under libFuzzer (clang-19, ASan+UBSan), linked with the same
# objects as the tool, built in their own directory. FUZZ_SECONDS bounds it.
FUZZ_SECONDS ?= 60
FUZZ_BUILD ?= build-fuzz
$(BUILD)/fuzz/fuzz_parse: tests/fuzz/fuzz_parse.c $(LIB_OBJS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itool $< $(LIB_OBJS) $(LDFLAGS) $(LDLIBS) -o $@

fuzz-build:
	$(MAKE) BUILD=$(FUZZ_BUILD) CC=$(CLANG) FUZZ=1 $(FUZZ_BUILD)/fuzz/fuzz_parse

fuzz: fuzz-build
	@mkdir -p $(FUZZ_BUILD)/fuzz/corpus
	cp -n tests/fixtures/*.txt $(FUZZ_BUILD)/fuzz/corpus/ 2>/dev/null || true
	$(FUZZ_BUILD)/fuzz/fuzz_parse -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=1024 \
		-timeout=10 $(FUZZ_BUILD)/fuzz/corpus

# The bench programs are built with the tests, so that they never rot.
tests-build: $(BUILD)/bpfstderr $(UNITS) $(LIVES) $(HELPERS) $(SHIMS) $(BENCHES)

# The suite twice: as built, then under ASan+UBSan (its own build dir);
# then the Debian package (built apart, in build-deb/) and its test, and
# the kernel lab with the plain build (tests/run.sh; BPFSTDERR_DEB=0,
# BPFSTDERR_LAB=0 leave them out).
check: deps
	$(MAKE) tests-build
	$(MAKE) tests-build SAN=1 BUILD=build-san
	$(MAKE) fuzz-build
	tests/run.sh build build-san

test: tests-build
	tests/run.sh $(BUILD)

# The kernel lab: Debian's 6.17, 6.18 and 7.x kernels in qemu, where stream
# writes work (tests/vm/lab.sh; kernels cached in BPFSTDERR_LAB_CACHE).
vmtest: tests-build
	tests/vm/lab.sh $(BUILD)

# deps first, then a fresh make: flags come from pkg-config, which deps may
# have just installed. run decides by measuring (tests/vm/demo.sh): the
# demo here where doctor's probes say stream content can show, else in
# Debian's current kernel under qemu (the kernel lab), on this terminal;
# HOST=1 runs it here anyway. demo-vm runs it in the lab on any machine.
run: deps
	$(MAKE) all
	@tests/vm/demo.sh $(if $(HOST),--host) $(BUILD)

demo-vm: deps
	$(MAKE) all
	@tests/vm/demo.sh --lab $(BUILD)

install: all
	install -D -m 0755 $(BUILD)/bpfstderr $(DESTDIR)$(PREFIX)/sbin/bpfstderr
	install -D -m 0644 man/bpfstderr.8 $(DESTDIR)$(PREFIX)/share/man/man8/bpfstderr.8
	$(if $(BASHCOMPDIR),install -D -m 0644 contrib/bpfstderr.bash-completion $(DESTDIR)$(BASHCOMPDIR)/bpfstderr)
	install -d $(DESTDIR)$(SYSTEMDUNITDIR)
	sed 's|/usr/local/sbin/bpfstderr|$(PREFIX)/sbin/bpfstderr|' contrib/bpfstderr-record.service \
		> $(DESTDIR)$(SYSTEMDUNITDIR)/bpfstderr-record.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/bpfstderr-record.service
	install -D -m 0644 contrib/prometheus/bpfstderr-rules.yml \
		$(DESTDIR)$(PREFIX)/share/bpfstderr/prometheus/bpfstderr-rules.yml
	install -D -m 0644 contrib/grafana/bpfstderr-dashboard.json \
		$(DESTDIR)$(PREFIX)/share/bpfstderr/grafana/bpfstderr-dashboard.json

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/sbin/bpfstderr \
	      $(DESTDIR)$(PREFIX)/share/man/man8/bpfstderr.8 \
	      $(if $(BASHCOMPDIR),$(DESTDIR)$(BASHCOMPDIR)/bpfstderr) \
	      $(DESTDIR)$(SYSTEMDUNITDIR)/bpfstderr-record.service \
	      $(DESTDIR)$(PREFIX)/share/bpfstderr/prometheus/bpfstderr-rules.yml \
	      $(DESTDIR)$(PREFIX)/share/bpfstderr/grafana/bpfstderr-dashboard.json
	-rmdir $(DESTDIR)$(PREFIX)/share/bpfstderr/prometheus $(DESTDIR)$(PREFIX)/share/bpfstderr/grafana \
	       $(DESTDIR)$(PREFIX)/share/bpfstderr 2>/dev/null

# The Debian package (debian/), built from a copy of the checkout's files
# (tracked and untracked, not ignored) in $(DEB_BUILD)/, since
# dpkg-buildpackage writes its results to the parent directory; lintian
# must report no error and no warning. The build needs the BTF of a
# kernel: see debian/rules.
DEB_BUILD  ?= build-deb
DEB_JOBS   ?= 2
deb:
	rm -rf $(DEB_BUILD)
	mkdir -p $(DEB_BUILD)/bpfstderr-$(VERSION)
	git ls-files -z --cached --others --exclude-standard | \
		xargs -0 sh -c 'for f; do [ -e "$$f" ] && printf "%s\0" "$$f"; done' sh | \
		tar --null -T - -cf - | tar -C $(DEB_BUILD)/bpfstderr-$(VERSION) -xf -
	cd $(DEB_BUILD)/bpfstderr-$(VERSION) && dpkg-buildpackage -us -uc -b -j$(DEB_JOBS)
	rm -rf $(DEB_BUILD)/bpfstderr-$(VERSION)
	lintian --fail-on error,warning $(DEB_BUILD)/bpfstderr_*.changes
	@ls $(DEB_BUILD)/*.deb

# Slow the first time (debootstrap; the base root is cached in
# DEBTEST_CACHE); make check runs it too, after make deb (tests/run.sh;
# BPFSTDERR_DEB=0 leaves it out).
DEBTEST_CACHE ?= /var/cache/bpfstderr-debtest
debtest:
	DEBTEST_CACHE=$(DEBTEST_CACHE) tests/deb/debtest.sh $(DEB_BUILD)

clean:
	rm -rf build build-san $(FUZZ_BUILD) $(DEB_BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
