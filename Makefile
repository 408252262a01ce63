# jtr - Linux jitter measurement, attribution and tuning.
#
#   make run            install what `jtr run` needs, build, run `jtr run`
#   make test           install what the tests need too, build, pass every test
#   make bench          benchmarks against oslat, sockperf, the cache line and memcpy
#                       (docs/bench.md; BENCH=transports,... selects items)
#   make install        PREFIX=/usr/local (DESTDIR honoured)
#   make install-caps   install, then give the probes cap_sys_nice,cap_ipc_lock
#   make install-setuid install, then make the probes setuid root (the old way)
#   make man            man pages in build/man; make completion: bash, zsh in build/completion
#   make deb            the Debian package, build/jtr_VERSION_ARCH.deb (docs/install.md)
#   V=1                 show full commands

CC      ?= gcc
CFLAGS  ?= -O2 -g
WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wformat=2 -Wno-format-nonliteral
CPPFLAGS += -D_GNU_SOURCE -Ilib
LDLIBS  += -lm -lpthread
TP_LDLIBS := -lnuma
PREFIX  ?= /usr/local
BUILD   := build
# one version for the C programs and the Python front end: the VERSION file
VERSION := $(shell cat VERSION)
CPPFLAGS += -DJTR_VERSION='"$(VERSION)"'
PYTHON  ?= python3
VENV    := .venv
PYTEST_ARGS ?= -rs

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

LIB_SRCS := $(wildcard lib/*.c)
LIB_OBJS := $(patsubst lib/%.c,$(BUILD)/lib/%.o,$(LIB_SRCS))
LIBJTR   := $(BUILD)/libjtr.a
PROBES   := null gap clock send wake
TPROGS   := ping pong pub sub ipc
# the probes install-caps and install-setuid give privileges to
PRIV_PROBES := null gap clock wake
BINS     := $(addprefix $(BUILD)/bin/jtr-,$(PROBES) $(TPROGS))
# transports/: the library (lib/: returns -errno, never prints or exits; built
# without the glue's headers on its include path), the program glue (prog/:
# options, files, messages and exits for main()), and the programs
TP_SRCS  := $(wildcard transports/lib/*.c)
TP_OBJS  := $(patsubst transports/lib/%.c,$(BUILD)/transports/lib/%.o,$(TP_SRCS))
LIBTP    := $(BUILD)/libjtrtp.a
TPPROG_SRCS := $(wildcard transports/prog/*.c)
TPPROG_OBJS := $(patsubst transports/prog/%.c,$(BUILD)/transports/prog/%.o,$(TPPROG_SRCS))
LIBTPPROG := $(BUILD)/libjtrtpprog.a
TP_HDRS  := $(wildcard transports/lib/*.h transports/prog/*.h)
TP_INC   := -Itransports/lib -Itransports/prog
# what a transport program links: glue, library, lib/
TP_LIBS  := $(LIBTPPROG) $(LIBTP) $(LIBJTR)
# jtr ipc: one file per concern in transports/ipc/
IPC_SRCS := $(wildcard transports/ipc/*.c)
IPC_OBJS := $(patsubst transports/ipc/%.c,$(BUILD)/transports/ipc/%.o,$(IPC_SRCS))
TRACER   := $(BUILD)/bin/jtr-trace

# the eBPF tracer: clang for the kernel side, bpftool for vmlinux.h (from the
# running kernel's BTF) and the skeleton, libbpf for the user side
CLANG   ?= clang
BPFTOOL ?= bpftool
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux
ARCH    := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -I$(BUILD)/ebpf -Iebpf
BPF_LDLIBS := -lbpf -lelf -lz
UNIT_SRCS := $(wildcard lib/tests/test_*.c)
UNITS    := $(patsubst lib/tests/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
TP_UNIT_SRCS := $(wildcard transports/tests/test_*.c)
UNITS    += $(patsubst transports/tests/%.c,$(BUILD)/tests/%,$(TP_UNIT_SRCS))
UNITS    += $(BUILD)/tests/test_watch
# the value grammar, line by line, against tests/vectors/values.txt (and the Python side)
VALUES   := $(BUILD)/tests/jtr-values

.SECONDARY: $(BUILD)/ebpf/trace.bpf.o

.PHONY: all deps deps-run deps-bench run test test-unit test-e2e bench install install-setuid \
	install-caps uninstall clean distclean

# the tracer needs clang, bpftool, libbpf's headers and the kernel's BTF; without
# them the probes are built all the same and make says what the tracer needs
# (jtr run then says it too, and traces with perf where it can)
BPF_MISSING := $(strip $(if $(shell command -v $(CLANG) 2>/dev/null),,$(CLANG)) \
	$(if $(shell command -v $(BPFTOOL) 2>/dev/null),,$(BPFTOOL)) \
	$(if $(wildcard /usr/include/bpf/libbpf.h),,libbpf-dev) \
	$(if $(wildcard $(VMLINUX_BTF)),,$(VMLINUX_BTF)))
ifeq ($(BPF_MISSING),)
all: $(BINS) $(TRACER) $(VALUES)
else
all: $(BINS) $(VALUES)
	@echo "make: the kernel-event tracer (jtr-trace) is not built: missing $(BPF_MISSING)." \
		"Debian: apt-get install clang bpftool libbpf-dev libelf-dev zlib1g-dev;" \
		"Ubuntu: clang linux-tools-common libbpf-dev; Fedora, RHEL: dnf install clang" \
		"bpftool libbpf-devel elfutils-libelf-devel; then make again. The probes are built."
endif

$(BUILD)/lib/%.o: lib/%.c $(wildcard lib/*.h) VERSION | $(BUILD)/lib
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -c $< -o $@

# an archive is made anew, and again when this file changes, so that an object
# moved out of it does not linger
$(LIBJTR): $(LIB_OBJS) Makefile
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $(filter %.o,$^)

$(BUILD)/bin/jtr-%: jitter/%.c $(LIBJTR) $(wildcard lib/*.h) VERSION | $(BUILD)/bin
	$(call msg,CCLD,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $< $(LDFLAGS) $(LIBJTR) $(LDLIBS) -o $@

# jtr send is a probe whose body is a send call: it links the transports
$(BUILD)/bin/jtr-send: jitter/send.c $(TP_LIBS) $(TP_HDRS) $(wildcard lib/*.h) VERSION \
		| $(BUILD)/bin
	$(call msg,CCLD,$@)
	$(Q)$(CC) $(CPPFLAGS) $(TP_INC) $(CFLAGS) $(WARN) $< $(LDFLAGS) $(TP_LIBS) $(TP_LDLIBS) $(LDLIBS) -o $@

$(BUILD)/transports/lib/%.o: transports/lib/%.c $(wildcard transports/lib/*.h) \
		$(wildcard lib/*.h) VERSION | $(BUILD)/transports/lib
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) -Itransports/lib $(CFLAGS) $(WARN) -c $< -o $@

$(BUILD)/transports/prog/%.o: transports/prog/%.c $(TP_HDRS) $(wildcard lib/*.h) VERSION \
		| $(BUILD)/transports/prog
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(TP_INC) $(CFLAGS) $(WARN) -c $< -o $@

$(BUILD)/transports/ipc/%.o: transports/ipc/%.c transports/ipc/ipc.h $(TP_HDRS) \
		$(wildcard lib/*.h) VERSION | $(BUILD)/transports/ipc
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(TP_INC) $(CFLAGS) $(WARN) -c $< -o $@

$(BUILD)/bin/jtr-ipc: $(IPC_OBJS) $(TP_LIBS) | $(BUILD)/bin
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $(IPC_OBJS) $(LDFLAGS) $(TP_LIBS) $(TP_LDLIBS) $(LDLIBS) -o $@

$(LIBTP): $(TP_OBJS) Makefile
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $(filter %.o,$^)

$(LIBTPPROG): $(TPPROG_OBJS) Makefile
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $(filter %.o,$^)

$(BUILD)/bin/jtr-%: transports/%.c $(TP_LIBS) $(TP_HDRS) $(wildcard lib/*.h) VERSION \
		| $(BUILD)/bin
	$(call msg,CCLD,$@)
	$(Q)$(CC) $(CPPFLAGS) $(TP_INC) $(CFLAGS) $(WARN) $< $(LDFLAGS) $(TP_LIBS) $(TP_LDLIBS) $(LDLIBS) -o $@

# the transport library's unit tests link the library alone
$(BUILD)/tests/%: transports/tests/%.c $(LIBTP) $(LIBJTR) $(wildcard transports/lib/*.h) \
		$(wildcard lib/*.h) VERSION | $(BUILD)/tests
	$(call msg,CCLD,$@)
	$(Q)$(CC) $(CPPFLAGS) -Itransports/lib $(CFLAGS) $(WARN) $< $(LIBTP) $(LIBJTR) $(TP_LDLIBS) \
		$(LDFLAGS) $(LDLIBS) -lcmocka -o $@

$(VALUES): lib/tests/jtr_values.c $(LIBJTR) $(wildcard lib/*.h) VERSION | $(BUILD)/tests
	$(call msg,CCLD,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $< $(LDFLAGS) $(LIBJTR) $(LDLIBS) -o $@

$(BUILD)/tests/%: lib/tests/%.c $(LIBJTR) $(wildcard lib/*.h) VERSION | $(BUILD)/tests
	$(call msg,CCLD,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $< $(LDFLAGS) $(LIBJTR) $(LDLIBS) -lcmocka -o $@

$(BUILD)/bench/%: bench/%.c $(LIBJTR) $(wildcard lib/*.h bench/*.h) VERSION | $(BUILD)/bench
	$(call msg,CCLD,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $< $(LDFLAGS) $(LIBJTR) $(LDLIBS) -o $@

$(BUILD)/ebpf/vmlinux.h: | $(BUILD)/ebpf
	$(call msg,GEN,$@)
	$(Q)test -r $(VMLINUX_BTF) || { echo "no kernel BTF at $(VMLINUX_BTF): the tracer needs a" \
		"kernel with CONFIG_DEBUG_INFO_BTF=y, or VMLINUX_BTF=FILE" >&2; exit 2; }
	$(Q)$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@.tmp && mv $@.tmp $@

$(BUILD)/ebpf/%.bpf.o: ebpf/%.bpf.c ebpf/%.h $(BUILD)/ebpf/vmlinux.h | $(BUILD)/ebpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -Wall -Werror -c $< -o $@

$(BUILD)/ebpf/%.skel.h: $(BUILD)/ebpf/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

$(BUILD)/bin/jtr-trace: ebpf/trace.c ebpf/watch.c ebpf/trace.h ebpf/watch.h \
		$(BUILD)/ebpf/trace.skel.h $(LIBJTR) $(wildcard lib/*.h) VERSION | $(BUILD)/bin
	$(call msg,CCLD,$@)
	$(Q)$(CC) $(CPPFLAGS) -I$(BUILD)/ebpf -Iebpf $(CFLAGS) $(WARN) $< ebpf/watch.c $(LIBJTR) \
		$(LDFLAGS) $(BPF_LDLIBS) $(LDLIBS) -o $@

# jtr watch's accounting (ebpf/watch.c) on synthetic events: no BPF needed
$(BUILD)/tests/test_watch: ebpf/tests/test_watch.c ebpf/watch.c ebpf/watch.h ebpf/trace.h \
		$(LIBJTR) $(wildcard lib/*.h) VERSION | $(BUILD)/tests
	$(call msg,CCLD,$@)
	$(Q)$(CC) $(CPPFLAGS) -Iebpf $(CFLAGS) $(WARN) $< ebpf/watch.c $(LIBJTR) $(LDLIBS) \
		$(LDFLAGS) -lcmocka -o $@

$(BUILD)/lib $(BUILD)/bin $(BUILD)/tests $(BUILD)/bench $(BUILD)/ebpf $(BUILD)/transports/lib \
		$(BUILD)/transports/prog $(BUILD)/transports/ipc:
	$(Q)mkdir -p $@

# what each target needs (scripts/deps.sh says what and why, per distribution):
# deps-run the packages of make run (no venv: jtr runs on the system python3),
# deps-bench those of make bench and the venv, deps everything make test needs
deps:
	$(Q)PYTHON=$(PYTHON) VENV=$(VENV) scripts/deps.sh test

deps-run:
	$(Q)scripts/deps.sh run

deps-bench:
	$(Q)PYTHON=$(PYTHON) VENV=$(VENV) scripts/deps.sh bench

run: deps-run all
	./jtr run

test: deps all $(UNITS)
	$(Q)$(MAKE) --no-print-directory test-unit
	$(Q)$(MAKE) --no-print-directory test-e2e

test-unit: $(UNITS) $(VALUES)
	$(Q)set -e; for t in $(UNITS); do echo "== $$t"; $$t; done
	$(Q)echo "== $(VALUES) --check tests/vectors/values.txt"
	$(Q)$(VALUES) --check tests/vectors/values.txt

# the tests that measure nothing (the unit tests; end-to-end files whose runs are
# only read, never timed) run two at a time, a file to a pytest-xdist worker; then
# every test that measures runs alone, as before: timing and attribution tests
# must have the machine to themselves
PARALLEL_TESTS := analysis/tests tests/test_fuzz_files.py tests/test_report.py \
	tests/test_interop.py tests/test_frontend.py tests/test_packaging.py \
	tests/test_compare_e2e.py tests/test_values.py tests/test_bench_tools.py \
	tests/test_suite.py tests/test_results_fd.py tests/test_transport_library.py \
	tests/test_errors.py

test-e2e: all
	$(Q)$(VENV)/bin/ruff check analysis tests bench setup.py
	$(Q)$(VENV)/bin/python -m pytest $(PYTEST_ARGS) -n 2 --dist loadfile $(PARALLEL_TESTS)
	$(Q)$(VENV)/bin/python -m pytest $(PYTEST_ARGS) tests \
		$(addprefix --ignore=,$(filter tests/%,$(PARALLEL_TESTS)))

bench: deps-bench all $(BUILD)/bench/hist_bench $(BUILD)/bench/cacheline_rtt $(BUILD)/bench/memcpy_bw
	$(Q)$(VENV)/bin/python bench/bench.py

LIBEXEC := $(DESTDIR)$(PREFIX)/libexec/jtr
PYLIB   := $(DESTDIR)$(PREFIX)/lib/jtr
SHARE   := $(DESTDIR)$(PREFIX)/share/jtr
DOCDIR  ?= $(PREFIX)/share/doc/jtr
MANDIR  ?= $(PREFIX)/share/man
BASH_COMPDIR ?= $(PREFIX)/share/bash-completion/completions
# zsh reads vendor-completions under /usr (Debian's fpath), site-functions elsewhere
ZSH_COMPDIR ?= $(PREFIX)/share/zsh/$(if $(filter /usr,$(PREFIX)),vendor-completions,site-functions)
# tuned reads profiles only from /usr/lib/tuned and /etc/tuned (tuned/consts.py,
# LOAD_DIRECTORIES), and jtr-isolate includes /etc/tuned/jtr-variables.conf: with
# PREFIX /usr (the package) the profiles are linked into TUNEDDIR and the template
# goes to TUNEDCONFDIR when there is none; under another PREFIX nothing is put
# outside it (`jtr tune install-profiles` copies them into /etc/tuned), unless
# TUNEDDIR and TUNEDCONFDIR are given
TUNEDDIR ?= $(if $(filter /usr,$(PREFIX)),/usr/lib/tuned)
TUNEDCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc/tuned)
JTR_PROFILES := $(notdir $(patsubst %/,%,$(wildcard tuning-profiles/jtr-*/)))
# man pages and bash and zsh completion, made from the commands' own --help
MAN_OUT  := $(BUILD)/man
COMP_OUT := $(BUILD)/completion

.PHONY: man completion deb

man: all
	$(call msg,GEN,$(MAN_OUT))
	$(Q)rm -rf $(MAN_OUT) && $(PYTHON) scripts/gen-docs.py man $(MAN_OUT) --bin $(BUILD)/bin \
		--prefix $(PREFIX)

completion: all
	$(call msg,GEN,$(COMP_OUT))
	$(Q)rm -rf $(COMP_OUT) && $(PYTHON) scripts/gen-docs.py completion $(COMP_OUT) \
		--bin $(BUILD)/bin

install: all man completion
	install -d $(LIBEXEC) $(PYLIB)/jtrpy $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BINS) $(wildcard $(TRACER)) $(LIBEXEC)/
	for f in $$(cd analysis && find jtrpy -name '*.py'); do \
		install -D -m 0644 analysis/$$f $(PYLIB)/$$f || exit 1; done
	install -m 0644 VERSION $(PYLIB)/jtrpy/VERSION
	for p in tuning-profiles/jtr-*/; do \
		install -d $(DESTDIR)$(PREFIX)/share/jtr/$$p && \
		install -m 0644 $$p/tuned.conf $(DESTDIR)$(PREFIX)/share/jtr/$$p/; done
	install -m 0644 tuning-profiles/jtr-variables.conf $(DESTDIR)$(PREFIX)/share/jtr/tuning-profiles/
	install -D -m 0644 dist/jtr-watch.service $(DESTDIR)$(PREFIX)/share/jtr/jtr-watch.service
	install -D -m 0644 dist/grafana/jtr-watch.json $(DESTDIR)$(PREFIX)/share/jtr/grafana/jtr-watch.json
	install -m 0755 jtr $(DESTDIR)$(PREFIX)/bin/jtr
	install -d $(DESTDIR)$(DOCDIR) $(SHARE)/schemas $(SHARE)/bpftrace $(DESTDIR)$(MANDIR)/man1
	install -m 0644 README.md docs/*.md $(wildcard docs/*.png) $(DESTDIR)$(DOCDIR)/
	install -m 0644 docs/*.schema.json $(SHARE)/schemas/
	install -m 0755 ebpf/bpftrace/*.bt $(SHARE)/bpftrace/
	install -m 0644 ebpf/bpftrace/README.md $(SHARE)/bpftrace/
	install -m 0644 $(MAN_OUT)/*.1 $(DESTDIR)$(MANDIR)/man1/
	install -D -m 0644 $(COMP_OUT)/jtr $(DESTDIR)$(BASH_COMPDIR)/jtr
	install -D -m 0644 $(COMP_OUT)/_jtr $(DESTDIR)$(ZSH_COMPDIR)/_jtr
ifneq ($(TUNEDDIR),)
	install -d $(DESTDIR)$(TUNEDDIR)
	for p in $(JTR_PROFILES); do \
		if [ -d $(DESTDIR)$(TUNEDDIR)/$$p ] && [ ! -L $(DESTDIR)$(TUNEDDIR)/$$p ]; then \
			echo "$(TUNEDDIR)/$$p: a profile jtr did not link is there; left as it is"; \
		else ln -sfn $(PREFIX)/share/jtr/tuning-profiles/$$p $(DESTDIR)$(TUNEDDIR)/$$p; fi; \
	done
endif
ifneq ($(TUNEDCONFDIR),)
	[ -e $(DESTDIR)$(TUNEDCONFDIR)/jtr-variables.conf ] || install -D -m 0644 \
		tuning-profiles/jtr-variables.conf $(DESTDIR)$(TUNEDCONFDIR)/jtr-variables.conf
endif

install-setuid: install
	chown root:root $(addprefix $(LIBEXEC)/jtr-,$(PRIV_PROBES))
	chmod 4755 $(addprefix $(LIBEXEC)/jtr-,$(PRIV_PROBES))

install-caps: install
	for p in $(PRIV_PROBES); do \
		setcap cap_sys_nice,cap_ipc_lock+ep $(LIBEXEC)/jtr-$$p || exit 1; done

# the tuned links only where they are jtr's, and the variables file only when it
# is still the template (an edited one is the admin's)
uninstall:
	rm -rf $(LIBEXEC) $(PYLIB) $(DESTDIR)$(PREFIX)/share/jtr $(DESTDIR)$(PREFIX)/bin/jtr
	rm -rf $(DESTDIR)$(DOCDIR) $(DESTDIR)$(MANDIR)/man1/jtr.1 $(DESTDIR)$(MANDIR)/man1/jtr-*.1 \
		$(DESTDIR)$(BASH_COMPDIR)/jtr $(DESTDIR)$(ZSH_COMPDIR)/_jtr
ifneq ($(TUNEDDIR),)
	for p in $(JTR_PROFILES); do \
		[ ! -L $(DESTDIR)$(TUNEDDIR)/$$p ] || rm -f $(DESTDIR)$(TUNEDDIR)/$$p; done
endif
ifneq ($(TUNEDCONFDIR),)
	! cmp -s tuning-profiles/jtr-variables.conf $(DESTDIR)$(TUNEDCONFDIR)/jtr-variables.conf || \
		rm -f $(DESTDIR)$(TUNEDCONFDIR)/jtr-variables.conf
endif

# the Debian package (debian/; docs/install.md): dpkg-buildpackage in a copy of the
# tree under build/deb, so that the checkout's build/ and debian/ are not touched
# and nothing is written beside the checkout; the .deb is moved to build/.
# DEB_BUILD_OPTIONS=nocheck skips the C unit tests of the package build
DEB_SRC := $(BUILD)/deb/jtr-$(VERSION)
deb:
	rm -rf $(BUILD)/deb && mkdir -p $(DEB_SRC)
	tar -c --exclude-vcs --exclude=./build --exclude=./$(VENV) --exclude=./results \
		--exclude=__pycache__ --exclude=.pytest_cache --exclude=.ruff_cache . | \
		tar -x -C $(DEB_SRC)
	cd $(DEB_SRC) && dpkg-buildpackage -b -uc -us -Jauto
	mv $(BUILD)/deb/jtr_*.deb $(BUILD)/
	@ls $(BUILD)/jtr_*.deb

clean:
	rm -rf $(BUILD)

distclean: clean
	rm -rf $(VENV)
