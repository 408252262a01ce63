# SPDX-License-Identifier: GPL-2.0-only
# jtr - Linux jitter measurement, attribution and tuning.
#
#   make run            install what `jtr run` needs, build, run `jtr run`
#   make test           install what the tests need too, build, pass every test
#   make bench          benchmarks against oslat, sockperf, the cache line and memcpy
#                       (docs/bench.md; BENCH=transports,... selects items)
#   make install        PREFIX=/usr/local (DESTDIR honoured)
#   make install-caps   install, then give the probes and senders cap_sys_nice,cap_ipc_lock
#   make install-setuid install, then make the probes and senders setuid root (the old way)
#   make man            man pages in build/man; make completion: bash, zsh in build/completion
#   make deb            the Debian package, build/jtr_VERSION_ARCH.deb (docs/install.md)
#   make rpm            the RPM, build/rpm/RPMS/ARCH/jtr-VERSION-*.rpm (dist/jtr.spec)
#   V=1                 show full commands

CC      ?= gcc
CFLAGS  ?= -O2 -g
WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wformat=2 -Wno-format-nonliteral
CPPFLAGS += -D_GNU_SOURCE -Ilib
LDLIBS  += -lm -lpthread
TP_LDLIBS := -lnuma -lz
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
# the programs install-caps and install-setuid give privileges to: the probes
# and the senders (the seeds made their socket-send tools setuid too)
PRIV_PROBES := null gap clock wake send ping pong pub sub
BINS     := $(addprefix $(BUILD)/bin/jtr-,$(PROBES) $(TPROGS))
PROBE_BINS := $(addprefix $(BUILD)/bin/jtr-,$(filter-out send,$(PROBES)))
TPROG_BINS := $(addprefix $(BUILD)/bin/jtr-,$(filter-out ipc,$(TPROGS)))
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
# jtr export --perfetto's walk over an event log (ebpf/perfetto.c): no BPF needed
PERFETTO := $(BUILD)/bin/jtr-perfetto
BINS     += $(PERFETTO)

# the eBPF tracer: clang for the kernel side, bpftool for vmlinux.h (from the
# running kernel's BTF) and the skeleton, libbpf for the user side
CLANG   ?= clang
BPFTOOL ?= bpftool
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux
ARCH    := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
# make test compiles through ccache where it is installed (scripts/deps.sh test
# installs it): its tests build this tree from source again (a clone for pip, a
# fleet host, the .deb, the RPM), the same objects each time. The cache is
# build/ccache (make clean empties it); CCACHE= turns it off. Exported, so the
# builds the tests start use it too; objects only (a compile-and-link is never cached)
ifneq ($(filter test test-e2e test-stress,$(MAKECMDGOALS)),)
CCACHE ?= $(shell command -v ccache 2>/dev/null)
endif
ifneq ($(CCACHE),)
export CCACHE
export CCACHE_DIR ?= $(CURDIR)/$(BUILD)/ccache
# the same objects wherever the tree is (debug info keeps the first one's folder),
# and whatever the locale (rpmbuild sets LANG=C: only the compiler's messages change)
export CCACHE_NOHASHDIR ?= 1
export CCACHE_SLOPPINESS ?= locale
endif
# the host compiler's system include folders after ours, as libbpf-tools does:
# bpf/usdt.bpf.h takes <linux/errno.h>, which needs the multiarch <asm/errno.h>
# (clang -target bpf does not look there by itself); read when clang runs
BPF_SYS_INCS = $(shell $(CLANG) -v -E - </dev/null 2>&1 | \
	sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')
BPF_CFLAGS = -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -I$(BUILD)/ebpf -Iebpf $(BPF_SYS_INCS)
BPF_LDLIBS := -lbpf -lelf -lz
UNIT_SRCS := $(wildcard lib/tests/test_*.c)
UNITS    := $(patsubst lib/tests/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
TP_UNIT_SRCS := $(wildcard transports/tests/test_*.c)
UNITS    += $(patsubst transports/tests/%.c,$(BUILD)/tests/%,$(TP_UNIT_SRCS))
UNITS    += $(BUILD)/tests/test_watch
UNITS    += $(BUILD)/tests/test_cgroups
# the value grammar, line by line, against tests/vectors/values.txt (and the Python side)
VALUES   := $(BUILD)/tests/jtr-values

.SECONDARY: $(BUILD)/ebpf/trace.bpf.o $(BUILD)/ebpf/watch.bpf.o

.PHONY: all deps deps-run deps-bench run test test-unit test-e2e test-stress test-vm bench install install-setuid \
	install-caps uninstall clean distclean

# the tracer needs clang, bpftool, libbpf's headers and the kernel's BTF; without
# them the probes are built all the same and make says what the tracer needs
# (jtr run then says it too, and traces with perf where it can). Looked for when
# the tracer is to be built, not when this file is read: make run, bench and test
# install them first (their deps step), in the same make
all: $(BINS) $(VALUES) tracer bytecode

# the front end's bytecode beside its sources: Python reads it even where
# PYTHONDONTWRITEBYTECODE keeps it from writing any, so a jtr command does not
# compile its modules each time it starts (0.05-0.08 s of each; a source edited
# since is compiled again as it loads). PYTHON is the one ./jtr runs (python3)
.PHONY: bytecode
bytecode:
	$(Q)$(PYTHON) -m compileall -q analysis/jtrpy

# the deps step of the goals given: the tracer's tools are looked for after it
DEPS_STEP := $(if $(filter run,$(MAKECMDGOALS)),deps-run) \
	$(if $(filter bench,$(MAKECMDGOALS)),deps-bench) $(if $(filter test,$(MAKECMDGOALS)),deps)

.PHONY: tracer
tracer: $(LIBJTR) | $(strip $(DEPS_STEP)) $(BUILD)/bin
	$(Q)missing=""; \
	command -v $(CLANG) >/dev/null 2>&1 || missing="$$missing $(CLANG)"; \
	command -v $(BPFTOOL) >/dev/null 2>&1 || missing="$$missing $(BPFTOOL)"; \
	[ -e /usr/include/bpf/libbpf.h ] || missing="$$missing libbpf-dev"; \
	[ -e $(VMLINUX_BTF) ] || missing="$$missing $(VMLINUX_BTF)"; \
	if [ -z "$$missing" ]; then $(MAKE) --no-print-directory $(TRACER); else \
	echo "make: the kernel-event tracer (jtr-trace) is not built: missing$$missing." \
		"Debian: apt-get install clang bpftool libbpf-dev libelf-dev zlib1g-dev;" \
		"Ubuntu: clang linux-tools-common libbpf-dev; Fedora, RHEL: dnf install clang" \
		"bpftool libbpf-devel elfutils-libelf-devel; then make again. The probes are built."; fi

$(BUILD)/lib/%.o: lib/%.c $(wildcard lib/*.h) VERSION | $(BUILD)/lib
	$(call msg,CC,$@)
	$(Q)$(CCACHE) $(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -c $< -o $@

# an archive is made anew, and again when this file changes, so that an object
# moved out of it does not linger
$(LIBJTR): $(LIB_OBJS) Makefile
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $(filter %.o,$^)

# each program's own file is compiled, then linked: a compiler cache (make test's
# ccache, CCACHE=) keeps objects, never a compile-and-link
$(BUILD)/jitter/%.o: jitter/%.c $(wildcard lib/*.h) VERSION | $(BUILD)/jitter
	$(call msg,CC,$@)
	$(Q)$(CCACHE) $(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -c $< -o $@

$(PROBE_BINS): $(BUILD)/bin/jtr-%: $(BUILD)/jitter/%.o $(LIBJTR) | $(BUILD)/bin
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $< $(LDFLAGS) $(LIBJTR) $(LDLIBS) -o $@

# jtr send is a probe whose body is a send call: it links the transports
$(BUILD)/jitter/send.o: jitter/send.c $(TP_HDRS) $(wildcard lib/*.h) VERSION | $(BUILD)/jitter
	$(call msg,CC,$@)
	$(Q)$(CCACHE) $(CC) $(CPPFLAGS) $(TP_INC) $(CFLAGS) $(WARN) -c $< -o $@

$(BUILD)/bin/jtr-send: $(BUILD)/jitter/send.o $(TP_LIBS) | $(BUILD)/bin
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $< $(LDFLAGS) $(TP_LIBS) $(TP_LDLIBS) $(LDLIBS) -o $@

$(BUILD)/transports/lib/%.o: transports/lib/%.c $(wildcard transports/lib/*.h) \
		$(wildcard lib/*.h) VERSION | $(BUILD)/transports/lib
	$(call msg,CC,$@)
	$(Q)$(CCACHE) $(CC) $(CPPFLAGS) -Itransports/lib $(CFLAGS) $(WARN) -c $< -o $@

$(BUILD)/transports/prog/%.o: transports/prog/%.c $(TP_HDRS) $(wildcard lib/*.h) VERSION \
		| $(BUILD)/transports/prog
	$(call msg,CC,$@)
	$(Q)$(CCACHE) $(CC) $(CPPFLAGS) $(TP_INC) $(CFLAGS) $(WARN) -c $< -o $@

$(BUILD)/transports/ipc/%.o: transports/ipc/%.c transports/ipc/ipc.h $(TP_HDRS) \
		$(wildcard lib/*.h) VERSION | $(BUILD)/transports/ipc
	$(call msg,CC,$@)
	$(Q)$(CCACHE) $(CC) $(CPPFLAGS) $(TP_INC) $(CFLAGS) $(WARN) -c $< -o $@

$(BUILD)/bin/jtr-ipc: $(IPC_OBJS) $(TP_LIBS) | $(BUILD)/bin
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $(IPC_OBJS) $(LDFLAGS) $(TP_LIBS) $(TP_LDLIBS) $(LDLIBS) -o $@

$(LIBTP): $(TP_OBJS) Makefile
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $(filter %.o,$^)

$(LIBTPPROG): $(TPPROG_OBJS) Makefile
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $(filter %.o,$^)

$(BUILD)/transports/%.o: transports/%.c $(TP_HDRS) $(wildcard lib/*.h) VERSION \
		| $(BUILD)/transports
	$(call msg,CC,$@)
	$(Q)$(CCACHE) $(CC) $(CPPFLAGS) $(TP_INC) $(CFLAGS) $(WARN) -c $< -o $@

$(TPROG_BINS): $(BUILD)/bin/jtr-%: $(BUILD)/transports/%.o $(TP_LIBS) | $(BUILD)/bin
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $< $(LDFLAGS) $(TP_LIBS) $(TP_LDLIBS) $(LDLIBS) -o $@

# the transport library's unit tests link the library alone
$(BUILD)/tests/%: transports/tests/%.c $(LIBTP) $(LIBJTR) $(wildcard transports/lib/*.h) \
		$(wildcard lib/*.h) VERSION | $(BUILD)/tests
	$(call msg,CCLD,$@)
	$(Q)$(CC) $(CPPFLAGS) -Itransports/lib $(CFLAGS) $(WARN) $< $(LIBTP) $(LIBJTR) $(TP_LDLIBS) \
		$(LDFLAGS) $(LDLIBS) -lcmocka -o $@

# the program and the library `jtr run app`'s tests time (tests/apps/)
APP_TARGET := $(BUILD)/tests/jtr-app-target $(BUILD)/tests/libjtr-target.so
$(BUILD)/tests/libjtr-target.so: tests/apps/target_lib.c tests/apps/target.h | $(BUILD)/tests
	$(call msg,CCLD,$@)
	$(Q)$(CC) $(CFLAGS) $(WARN) -fPIC -shared $< -o $@

$(BUILD)/tests/jtr-app-target: tests/apps/target.c tests/apps/target.h \
		$(BUILD)/tests/libjtr-target.so | $(BUILD)/tests
	$(call msg,CCLD,$@)
	$(Q)$(CC) $(CFLAGS) $(WARN) $< -L$(BUILD)/tests -ljtr-target -lpthread \
		-Wl,-rpath,'$$ORIGIN' -o $@

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

$(BUILD)/ebpf/%.bpf.o: ebpf/%.bpf.c ebpf/%.h ebpf/watch_model.h $(BUILD)/ebpf/vmlinux.h | $(BUILD)/ebpf
	$(call msg,BPF,$@)
	$(Q)$(CCACHE) $(CLANG) $(BPF_CFLAGS) -Wall -Werror -c $< -o $@

$(BUILD)/ebpf/%.skel.h: $(BUILD)/ebpf/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

# jtr watch's object: the same file with the counting in the kernel compiled in
# (trace.bpf.c JTR_WATCH_BUILD); the tracer opens it with trace.skel.h's layout
$(BUILD)/ebpf/watch.bpf.o: ebpf/trace.bpf.c ebpf/trace.h ebpf/watch_model.h \
		$(BUILD)/ebpf/vmlinux.h | $(BUILD)/ebpf
	$(call msg,BPF,$@)
	$(Q)$(CCACHE) $(CLANG) $(BPF_CFLAGS) -DJTR_WATCH_BUILD=1 -Wall -Werror -c $< -o $@

# jtr-trace: the tool (trace.c) and the files of its parts (ebpf/README.md)
TRACE_SRCS := ebpf/trace.c ebpf/programs.c ebpf/ksyms.c ebpf/trace_json.c ebpf/watch_run.c \
	ebpf/watch.c ebpf/cgroups.c ebpf/calls.c
TRACE_OBJS := $(patsubst ebpf/%.c,$(BUILD)/ebpf/user/%.o,$(TRACE_SRCS))
$(BUILD)/ebpf/user/%.o: ebpf/%.c $(wildcard ebpf/*.h) $(BUILD)/ebpf/trace.skel.h \
		$(BUILD)/ebpf/watch.skel.h \
		$(wildcard lib/*.h) VERSION | $(BUILD)/ebpf/user
	$(call msg,CC,$@)
	$(Q)$(CCACHE) $(CC) $(CPPFLAGS) -I$(BUILD)/ebpf -Iebpf $(CFLAGS) $(WARN) -c $< -o $@

$(BUILD)/bin/jtr-trace: $(TRACE_OBJS) $(LIBJTR) | $(BUILD)/bin
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $(TRACE_OBJS) $(LIBJTR) $(LDFLAGS) $(BPF_LDLIBS) $(LDLIBS) -o $@

$(PERFETTO): ebpf/perfetto.c ebpf/trace.h ebpf/trace_names.h $(LIBJTR) VERSION | $(BUILD)/bin
	$(call msg,CCLD,$@)
	$(Q)$(CC) $(CPPFLAGS) -Iebpf $(CFLAGS) $(WARN) $< $(LDFLAGS) $(LIBJTR) $(LDLIBS) -o $@

# jtr watch's accounting (ebpf/watch.c) on synthetic events: no BPF needed
$(BUILD)/tests/test_watch: ebpf/tests/test_watch.c ebpf/watch.c ebpf/watch.h ebpf/watch_model.h ebpf/trace.h \
		$(LIBJTR) $(wildcard lib/*.h) VERSION | $(BUILD)/tests
	$(call msg,CCLD,$@)
	$(Q)$(CC) $(CPPFLAGS) -Iebpf $(CFLAGS) $(WARN) $< ebpf/watch.c $(LIBJTR) $(LDLIBS) \
		$(LDFLAGS) -lcmocka -o $@

# cgroup paths to container labels, ids to paths (ebpf/cgroups.c): no BPF needed
$(BUILD)/tests/test_cgroups: ebpf/tests/test_cgroups.c ebpf/cgroups.c ebpf/cgroups.h ebpf/trace.h \
		$(LIBJTR) $(wildcard lib/*.h) VERSION | $(BUILD)/tests
	$(call msg,CCLD,$@)
	$(Q)$(CC) $(CPPFLAGS) -Iebpf $(CFLAGS) $(WARN) $< ebpf/cgroups.c $(LIBJTR) $(LDLIBS) \
		$(LDFLAGS) -lcmocka -o $@

$(BUILD)/lib $(BUILD)/bin $(BUILD)/tests $(BUILD)/bench $(BUILD)/ebpf $(BUILD)/transports/lib \
		$(BUILD)/transports/prog $(BUILD)/transports/ipc $(BUILD)/jitter $(BUILD)/transports \
		$(BUILD)/ebpf/user:
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

# the tracer's tools are looked for after deps-run (DEPS_STEP): what it installs is
# used by this same make
run: deps-run all
	./jtr run

# make test: the packages, then the venv and the build side by side (the build
# through the ccache the packages brought; the C unit tests as soon as they are
# built, while the venv is made), then the Python tests
# (a job per CPU unless make was given -j; CCACHE= on the command line: no ccache)
test:
	$(Q)PYTHON=$(PYTHON) VENV=$(VENV) DEPS_ONLY=packages scripts/deps.sh test
	$(Q)case " $$MAKEFLAGS" in *" -j"*) jobs="" ;; *) jobs=-j$$(nproc) ;; esac; \
	$(MAKE) --no-print-directory $$jobs test-build test-unit \
		$(if $(filter command line,$(origin CCACHE)),,CCACHE="$$(command -v ccache)")
	$(Q)$(MAKE) --no-print-directory test-collect
	$(Q)$(MAKE) --no-print-directory test-e2e

.PHONY: venv test-build test-collect
venv:
	$(Q)PYTHON=$(PYTHON) VENV=$(VENV) DEPS_ONLY=venv scripts/deps.sh test

test-build: venv all $(UNITS) $(APP_TARGET)

# the tests collected once, a process per folder (5.5 s here, 12 s in one; beside
# the C unit tests, test_ring's spinning threads took 10 s instead of 3): pytest's
# cache of the modules' rewritten asserts (tests/conftest.py) is written then, so
# the tests' pytest processes read it instead of each rewriting every module
# (what collection finds wrong, the runs after it report)
test-collect: | venv
	$(Q)for d in analysis/tests tests; do \
		$(VENV)/bin/python -m pytest -q --collect-only -p no:cacheprovider $$d \
			>/dev/null 2>&1 & \
	done; wait

test-unit: $(UNITS) $(VALUES)
	$(Q)set -e; for t in $(UNITS); do echo "== $$t"; $$t; done
	$(Q)echo "== $(VALUES) --check tests/vectors/values.txt"
	$(Q)$(VALUES) --check tests/vectors/values.txt

# the tests that measure nothing (end-to-end tests whose runs are only read, never
# timed) run TEST_WORKERS at a time, a file to a pytest-xdist worker (three on two
# CPUs: the third runs while the others wait on their programs); then every test
# that measures (marked measures: it times or attributes real runs) runs alone:
# timing and attribution tests must have the machine to themselves. They leave
# most of the first CPU idle: the tests marked beside (the unit tests of
# analysis/, the damaged-file cases, the suite, compare, packaging: nothing
# timed, traced or machine-wide) but those marked every_cpu run there
# meanwhile, on BESIDE_CPU alone at SCHED_IDLE (scripts/beside.sh; first: the
# first CPU this make may use, where it may use two or more), what they print
# shown after the measuring tests'. A tracer would run on every CPU: the
# damaged-file cases take a copy of a traced run made before
# (JTR_TEST_TRACED_RUN). BESIDE_CPU= runs them in the first phase. Once the
# measuring tests are done they go on at SCHED_OTHER (beside.sh's SIGUSR1): beside
# a busy process on that CPU, SCHED_IDLE would have them take hours.
TEST_WORKERS ?= 3
BESIDE_CPU ?= first
test-e2e: all
	$(Q)$(VENV)/bin/ruff check analysis tests bench setup.py
	$(Q)cpu='$(BESIDE_CPU)'; \
	if [ "$$cpu" = first ]; then \
		cpu=$$($(VENV)/bin/python -c 'import os; c = sorted(os.sched_getaffinity(0)); \
			print(c[0] if len(c) > 1 else "")'); \
	fi; \
	$(VENV)/bin/python -m pytest $(PYTEST_ARGS) -n $(TEST_WORKERS) --dist loadgroup \
		-m "not measures and not vm$${cpu:+ and not (beside and not every_cpu)}" \
		analysis/tests tests \
		|| exit $$?; \
	if [ -n "$$cpu" ]; then \
		rm -rf build/test-traced-run; \
		./jtr run -d 300ms -o build/test-traced-run >/dev/null 2>&1; \
		JTR_TEST_TRACED_RUN=$(CURDIR)/build/test-traced-run \
		scripts/beside.sh "$$cpu" $(VENV)/bin/python -m pytest $(PYTEST_ARGS) \
			-m "beside and not every_cpu and not vm" analysis/tests tests \
			>build/test-beside.log 2>&1 & \
		beside=$$!; \
	fi; \
	$(VENV)/bin/python -m pytest $(PYTEST_ARGS) -m "measures and not vm" tests; rc=$$?; \
	if [ -n "$$cpu" ]; then \
		kill -USR1 $$beside 2>/dev/null; \
		wait $$beside || rc=1; \
		echo; echo "== the tests marked beside, run beside the measuring tests:"; \
		cat build/test-beside.log; \
	fi; \
	exit $$rc

# the kernels users run, booted in virtual machines (tests/vm/: Debian's standard and
# PREEMPT_RT kernels under QEMU, TCG where /dev/kvm cannot run them): after make test
# (.ci/run), never in it; QEMU and busybox from scripts/deps.sh vm
test-vm: venv all
	$(Q)PYTHON=$(PYTHON) VENV=$(VENV) DEPS_ONLY=packages scripts/deps.sh vm
	$(Q)$(VENV)/bin/python -m pytest $(PYTEST_ARGS) -m vm tests/vm

# the measuring tests beside a busy loop pinned to the first CPU (they measure the
# last one): what they must survive on the machines users run them on; not part
# of make test (docs/testing.md)
STRESS_CPU ?= 0
test-stress: deps all
	$(Q)taskset -c $(STRESS_CPU) sh -c 'while :; do :; done' & loop=$$!; \
		trap 'kill $$loop' EXIT INT TERM; \
		echo "== a busy loop (pid $$loop) on CPU $(STRESS_CPU) beside the measuring tests"; \
		$(VENV)/bin/python -m pytest $(PYTEST_ARGS) -m measures tests

bench: deps-bench all $(BUILD)/bench/hist_bench $(BUILD)/bench/cacheline_rtt $(BUILD)/bench/memcpy_bw \
		$(BUILD)/bench/switch_storm \
		$(APP_TARGET)
	$(Q)$(VENV)/bin/python bench/bench.py

LIBEXEC := $(DESTDIR)$(PREFIX)/libexec/jtr
PYLIB   := $(DESTDIR)$(PREFIX)/lib/jtr
SHARE   := $(DESTDIR)$(PREFIX)/share/jtr
DOCDIR  ?= $(PREFIX)/share/doc/jtr
MANDIR  ?= $(PREFIX)/share/man
BASH_COMPDIR ?= $(PREFIX)/share/bash-completion/completions
# zsh reads vendor-completions under /usr (Debian's fpath), site-functions elsewhere
ZSH_COMPDIR ?= $(PREFIX)/share/zsh/$(if $(filter /usr,$(PREFIX)),vendor-completions,site-functions)
# tuned reads profiles only from its own folders, which depend on its version
# (tuned/consts.py): /usr/lib/tuned and /etc/tuned before 2.23, /usr/lib/tuned/profiles
# and /etc/tuned/profiles from 2.23; jtr-isolate includes /etc/tuned/jtr-variables.conf
# (the variables files stay in /etc/tuned in both). With PREFIX /usr the profiles are
# linked into TUNEDDIR, the system folder of the tuned installed here (`jtr tune
# install-profiles --print-dir system` says which, and why; without tuned, 2.23's),
# and the template goes to TUNEDCONFDIR when there is none; under another PREFIX
# nothing is put outside it (`jtr tune install-profiles` copies them into tuned's
# user folder), unless TUNEDDIR and TUNEDCONFDIR are given. TUNEDDIR may name several
# folders (the packages link into both layouts' folders: debian/rules, dist/jtr.spec)
TUNEDDIR ?= $(if $(filter /usr,$(PREFIX)),$(eval TUNEDDIR := $(shell $(PYTHON) ./jtr tune \
	install-profiles --print-dir system))$(TUNEDDIR))
TUNEDCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc/tuned)
JTR_PROFILES := $(notdir $(patsubst %/,%,$(wildcard tuning-profiles/jtr-*/)))
# man pages and bash and zsh completion, made from the commands' own --help; each file
# replaced whole, the folder never emptied (the tests run installs side by side)
MAN_OUT  := $(BUILD)/man
COMP_OUT := $(BUILD)/completion

.PHONY: man completion deb rpm

man: all
	$(call msg,GEN,$(MAN_OUT))
	$(Q)$(PYTHON) scripts/gen-docs.py man $(MAN_OUT) --bin $(BUILD)/bin \
		--prefix $(PREFIX)

completion: all
	$(call msg,GEN,$(COMP_OUT))
	$(Q)$(PYTHON) scripts/gen-docs.py completion $(COMP_OUT) \
		--bin $(BUILD)/bin

# the watch unit is written with this PREFIX's jtr (ExecStart) and documents
install: all man completion
	install -d $(LIBEXEC) $(PYLIB)/jtrpy $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BINS) $(LIBEXEC)/
	[ ! -e $(TRACER) ] || install -m 0755 $(TRACER) $(LIBEXEC)/
	for f in $$(cd analysis && find jtrpy -name '*.py'); do \
		install -D -m 0644 analysis/$$f $(PYLIB)/$$f || exit 1; done
	install -m 0644 VERSION $(PYLIB)/jtrpy/VERSION
	$(PYTHON) -m compileall -q -d $(PREFIX)/lib/jtr $(PYLIB)/jtrpy
	for p in tuning-profiles/jtr-*/; do \
		install -d $(DESTDIR)$(PREFIX)/share/jtr/$$p && \
		install -m 0644 $$p/tuned.conf $(DESTDIR)$(PREFIX)/share/jtr/$$p/; done
	install -m 0644 tuning-profiles/jtr-variables.conf $(DESTDIR)$(PREFIX)/share/jtr/tuning-profiles/
	sed -e 's|@BINDIR@|$(PREFIX)/bin|g' -e 's|@DOCDIR@|$(DOCDIR)|g' dist/jtr-watch.service.in \
		> $(SHARE)/jtr-watch.service && chmod 0644 $(SHARE)/jtr-watch.service
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
	for d in $(TUNEDDIR); do install -d $(DESTDIR)$$d && \
	for p in $(JTR_PROFILES); do \
		if [ -d $(DESTDIR)$$d/$$p ] && [ ! -L $(DESTDIR)$$d/$$p ]; then \
			echo "$$d/$$p: a profile jtr did not link is there; left as it is"; \
		else ln -sfn $(PREFIX)/share/jtr/tuning-profiles/$$p $(DESTDIR)$$d/$$p || exit 1; fi; \
	done; done
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
	for d in $(TUNEDDIR); do for p in $(JTR_PROFILES); do \
		[ ! -L $(DESTDIR)$$d/$$p ] || rm -f $(DESTDIR)$$d/$$p; done; done
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

# the RPM (dist/jtr.spec; docs/install.md): rpmbuild -bb in build/rpm (its _topdir)
# from a tarball of the tree made as make deb copies it; the packages are left in
# build/rpm/RPMS. RPMBUILD_FLAGS: more for rpmbuild (--nodeps where the build
# dependencies are not RPMs, as on Debian)
RPM_TOP := $(CURDIR)/$(BUILD)/rpm
rpm:
	rm -rf $(RPM_TOP) && mkdir -p $(RPM_TOP)/SOURCES
	tar -c -z --exclude-vcs --exclude=./build --exclude=./$(VENV) --exclude=./results \
		--exclude=__pycache__ --exclude=.pytest_cache --exclude=.ruff_cache \
		--transform 's,^\.,jtr-$(VERSION),' -f $(RPM_TOP)/SOURCES/jtr-$(VERSION).tar.gz .
	rpmbuild -bb --define '_topdir $(RPM_TOP)' $(RPMBUILD_FLAGS) dist/jtr.spec
	@ls $(RPM_TOP)/RPMS/*/jtr-$(VERSION)-*.rpm

clean:
	rm -rf $(BUILD)

distclean: clean
	rm -rf $(VENV)
