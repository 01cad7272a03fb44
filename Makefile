# cordon: kernel-enforced sandbox for AI agents.
#
#   make            build everything into $(BUILD)
#   make deps       install the Debian packages the build and tests need
#   make test       unit + host + VM tests (the CI entry point)
#   make demo       the quick-start demonstration
#   make bench      benchmarks, printed as ratios against baselines and peers
#
# Quiet by default; V=1 prints full commands.  BUILD=dir moves the build
# directory; VMLINUX_H=path pins a vmlinux.h instead of generating one from
# /sys/kernel/btf/vmlinux.

BUILD     ?= build
VMLINUX_H ?=
CLANG     ?= clang
BPFTOOL   ?= bpftool
CC        ?= cc
ARCH      := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.DELETE_ON_ERROR:
# Linked BPF objects and skeletons are build products, not intermediates.
.SECONDARY:
.SUFFIXES:
.PHONY: all deps test test-unit test-host test-vm redteam demo bench clean

WARN := -Wall -Wextra -Werror -Werror=shadow -Werror=missing-prototypes \
        -Werror=format=2 -Wswitch-enum -Wno-unused-parameter
HARDEN := -D_FORTIFY_SOURCE=2 -fstack-protector-strong -fPIE
CFLAGS ?= -O2 -g
ALL_CFLAGS := $(CFLAGS) $(WARN) $(HARDEN) -std=gnu11 -MMD -MP \
              -I$(BUILD) -Ibpf -Iloader -Iuserspace -Ipolicy
LDFLAGS ?=
ALL_LDFLAGS := $(LDFLAGS) -pie -Wl,-z,relro,-z,now -Wl,--as-needed
LIBS := -lbpf -lelf -lz -lseccomp -ljansson -lssl -lcrypto
# The shipped binary links Debian's static archives of its libraries (glibc
# stays shared, for NSS): the dynamic loader's symbol relocations across
# libcrypto, libbpf and libelf cost ~0.7 ms of every `cordon run` start
# (measured: `cordon --version` 2.05 -> 1.38 ms).  The price: a security
# update of one of those libraries needs a rebuild of cordon.  STATIC=0
# links them dynamically.
STATIC ?= 1
ifeq ($(STATIC),1)
CORDON_LIBS := -Wl,-Bstatic $(LIBS) -Wl,-Bdynamic -lpthread
else
CORDON_LIBS := $(LIBS)
endif

BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
              -I$(BUILD) -Ibpf -MMD -MP

# --- sources -----------------------------------------------------------------
# Each skeleton is one linked BPF object.  `probe` holds the trivial programs
# the doctor loads to measure what the kernel accepts; `floor` is the
# enforcement object.
SKELS      := probe floor net
probe_BPF  := bpf/probe.bpf.c
floor_BPF  := bpf/files.bpf.c bpf/exec.bpf.c bpf/hardening.bpf.c bpf/unix.bpf.c
net_BPF    := bpf/net.bpf.c bpf/exec_recheck.bpf.c

LOADER_SRC := $(wildcard loader/*.c)
USER_SRC   := $(wildcard userspace/*.c)
POLICY_SRC := $(wildcard policy/*.c)
LIB_SRC    := $(LOADER_SRC) $(filter-out userspace/main.c,$(USER_SRC)) $(POLICY_SRC)
PROFILES   := $(filter-out %.scenarios.json,$(wildcard policy/profiles/*.json))
LIB_OBJ    := $(LIB_SRC:%.c=$(BUILD)/%.o) $(BUILD)/profiles.o

UNIT_SRC   := $(wildcard tests/unit/test_*.c)
UNIT_BIN   := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/unit/%)
HOSTC_SRC  := $(wildcard tests/host/*.c)
HOSTC_BIN  := $(HOSTC_SRC:tests/host/%.c=$(BUILD)/tests/host/%)
VMC_SRC    := $(wildcard tests/vm/*.c)
VMC_BIN    := $(VMC_SRC:tests/vm/%.c=$(BUILD)/tests/vm/%)
# Programs the tests run inside sessions (rogue agents): not tests themselves.
AGENT_SRC  := $(wildcard tests/agents/*.c)
AGENT_BIN  := $(AGENT_SRC:tests/agents/%.c=$(BUILD)/tests/agents/%)
TEST_BIN   := $(UNIT_BIN) $(HOSTC_BIN) $(VMC_BIN) $(AGENT_BIN)

SKEL_H     := $(SKELS:%=$(BUILD)/%.skel.h)
ID_H       := $(SKELS:%=$(BUILD)/%.id.h)

all: $(BUILD)/cordon $(TEST_BIN) $(BUILD)/tools/demo_floor

# --- BPF: compile, link (bpftool gen object), skeleton ------------------------
ifeq ($(VMLINUX_H),)
$(BUILD)/vmlinux.h: | $(BUILD)/.dir
	$(call msg,GEN,$@)
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@
else
$(BUILD)/vmlinux.h: $(VMLINUX_H) | $(BUILD)/.dir
	$(call msg,CP,$@)
	$(Q)cp $< $@
endif

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(BUILD)/vmlinux.h | $(BUILD)/bpf/.dir
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

.SECONDEXPANSION:
# The BPF objects of skeleton $(1).
bpf_objs = $(addprefix $(BUILD)/,$(patsubst %.c,%.o,$($(1)_BPF)))
$(BUILD)/%.linked.o: $$(call bpf_objs,$$*)
	$(call msg,LINK,$@)
	$(Q)$(BPFTOOL) gen object $@ $^

$(BUILD)/%.skel.h: $(BUILD)/%.linked.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $*_bpf > $@.tmp && mv $@.tmp $@

# Each object's identity (pin_build_id of its bytes, which the skeleton
# embeds unchanged), computed once here rather than at every start.
$(BUILD)/tools/buildid: tools/buildid.c loader/buildid.c loader/pin.h | $(BUILD)/.dir
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ tools/buildid.c loader/buildid.c

# The agent's seccomp filters, compiled to BPF once (loader/filters.h).
$(BUILD)/tools/seccomp_gen: tools/seccomp_gen.c loader/filters.c loader/filters.h userspace/notify.h | $(BUILD)/.dir
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ tools/seccomp_gen.c loader/filters.c -lseccomp

$(BUILD)/seccomp_filters.h: $(BUILD)/tools/seccomp_gen
	$(call msg,GEN,$@)
	$(Q)$(BUILD)/tools/seccomp_gen > $@.tmp && mv $@.tmp $@

$(BUILD)/%.id.h: $(BUILD)/%.linked.o $(BUILD)/tools/buildid
	$(call msg,GEN,$@)
	$(Q)$(BUILD)/tools/buildid $* $< > $@.tmp && mv $@.tmp $@

# --- host C -------------------------------------------------------------------
# Every host object may include a skeleton, so they all wait for them.
HOST_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o) $(BUILD)/userspace/main.o \
            $(patsubst %.c,$(BUILD)/%.o,$(UNIT_SRC) $(HOSTC_SRC) $(VMC_SRC))
$(HOST_OBJ): $(BUILD)/%.o: %.c $(SKEL_H) $(ID_H) $(BUILD)/seccomp_filters.h
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

# The shipped profiles are compiled into the binary.
$(BUILD)/profiles.c: $(PROFILES) tools/embed-profiles | $(BUILD)/.dir
	$(call msg,GEN,$@)
	$(Q)tools/embed-profiles $@ $(PROFILES)

$(BUILD)/profiles.o: $(BUILD)/profiles.c
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/libcordon.a: $(LIB_OBJ)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/cordon: $(BUILD)/userspace/main.o $(BUILD)/libcordon.a
	$(call msg,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(CORDON_LIBS)

# The floor demo (tools/demo runs it in the VM).
$(BUILD)/tools/demo_floor.o: tools/demo_floor.c $(SKEL_H)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/tools/demo_floor: $(BUILD)/tools/demo_floor.o $(BUILD)/libcordon.a
	$(call msg,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/tests/unit/%: $(BUILD)/tests/unit/%.o $(BUILD)/libcordon.a
	$(call msg,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS) -lcmocka

$(BUILD)/tests/host/%: $(BUILD)/tests/host/%.o $(BUILD)/libcordon.a
	$(call msg,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/tests/vm/%: $(BUILD)/tests/vm/%.o $(BUILD)/libcordon.a
	$(call msg,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/tests/agents/%: tests/agents/%.c
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< -lpthread

%/.dir:
	@mkdir -p $(@D) && touch $@

# --- dependencies -------------------------------------------------------------
# Idempotent: dpkg-query first, apt only for what is missing.
deps:
	$(Q)tools/deps
	$(Q)tools/mcp-deps

# --- tests ----------------------------------------------------------------------
test: deps
	$(Q)$(MAKE) --no-print-directory -s all
	$(Q)tools/testrun --build $(BUILD) unit host vm

test-unit: deps
	$(Q)$(MAKE) --no-print-directory -s all
	$(Q)tools/testrun --build $(BUILD) unit

test-host: deps
	$(Q)$(MAKE) --no-print-directory -s all
	$(Q)tools/testrun --build $(BUILD) host

test-vm: deps
	$(Q)$(MAKE) --no-print-directory -s all
	$(Q)tools/testrun --build $(BUILD) vm

# The red-team harness: a live session attacked from inside, on this host
# (fallback posture) and in the VM (full posture), with its negative control.
redteam: deps
	$(Q)$(MAKE) --no-print-directory -s all
	$(Q)tools/testrun --build $(BUILD) --filter redteam host vm

demo: deps
	$(Q)$(MAKE) --no-print-directory -s all
	$(Q)tools/demo --build $(BUILD)

bench: deps
	$(Q)$(MAKE) --no-print-directory -s all
	$(Q)tools/bench/run --build $(BUILD)

clean:
	$(call msg,CLEAN,$(BUILD))
	$(Q)find $(BUILD) -mindepth 1 -maxdepth 1 ! -name vm -exec rm -rf {} + 2>/dev/null || true

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# --- fuzzing and the policy benchmark (tools/fuzz, tools/bench) ----------------
# `make fuzz` builds the libFuzzer targets.  They compile their sources
# directly instead of linking libcordon.a: every object they run must carry
# the coverage and sanitizer instrumentation, and UBSan must abort (not just
# print) so that libFuzzer keeps the input.  Needs libclang-rt-14-dev.
FUZZ_CC     ?= $(CLANG)
FUZZ_CFLAGS := -g -O1 -std=gnu11 -fsanitize=fuzzer,address,undefined \
               -fno-sanitize-recover=all -Wall -Wextra -Wno-unused-parameter \
               -I$(BUILD) -Ibpf -Iuserspace -Ipolicy
FUZZ_HDR    := $(wildcard policy/*.h) userspace/util.h bpf/cordon.h
FUZZ_POLICY := $(POLICY_SRC) userspace/util.c $(BUILD)/profiles.c
.PHONY: fuzz
fuzz: $(BUILD)/fuzz/policy_fuzz $(BUILD)/fuzz/jsonpos_fuzz $(BUILD)/fuzz/jsonrpc_fuzz \
      $(BUILD)/fuzz/http_fuzz

$(BUILD)/fuzz/policy_fuzz: tools/fuzz/policy_fuzz.c $(FUZZ_POLICY) $(FUZZ_HDR) | $(BUILD)/fuzz/.dir
	$(call msg,FUZZ,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_POLICY) -ljansson -lcrypto

$(BUILD)/fuzz/jsonpos_fuzz: tools/fuzz/jsonpos_fuzz.c policy/jsonpos.c $(FUZZ_HDR) | $(BUILD)/fuzz/.dir
	$(call msg,FUZZ,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $< policy/jsonpos.c -ljansson

FUZZ_RPC := userspace/jsonrpc.c userspace/scrub.c
$(BUILD)/fuzz/jsonrpc_fuzz: tools/fuzz/jsonrpc_fuzz.c $(FUZZ_RPC) userspace/jsonrpc.h userspace/scrub.h $(FUZZ_HDR) | $(BUILD)/fuzz/.dir
	$(call msg,FUZZ,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_RPC) -ljansson -lcrypto

# The HTTP head parser is pure: no library to link.
FUZZ_HTTP := userspace/http.c
$(BUILD)/fuzz/http_fuzz: tools/fuzz/http_fuzz.c $(FUZZ_HTTP) userspace/http.h | $(BUILD)/fuzz/.dir
	$(call msg,FUZZ,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_HTTP)

# The policy evaluator benchmark (tools/bench/policy.sh) is an ordinary host
# program, optimised like cordon itself; `all` builds it so `make bench` has it.
all: $(BUILD)/tools/bench/policy_bench

$(BUILD)/tools/bench/policy_bench.o: tools/bench/policy_bench.c
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/tools/bench/policy_bench: $(BUILD)/tools/bench/policy_bench.o $(BUILD)/libcordon.a
	$(call msg,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

# Start latency, every sandbox timed by one C harness (tools/bench/session.sh):
# fork, exec, wait on CLOCK_MONOTONIC, no shell in the timed region.
all: $(BUILD)/tools/bench/startlat

$(BUILD)/tools/bench/startlat: tools/bench/startlat.c
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $<

# The HTTPS proxy benchmark's server and client (tools/bench/proxy.sh): one
# OpenSSL program, no libcordon.
all: $(BUILD)/tools/bench/proxy_bench

$(BUILD)/tools/bench/proxy_bench: tools/bench/proxy_bench.c
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< -lssl -lcrypto -lpthread

# File system work timed inside each sandbox (tools/bench/peers.sh): a
# stat loop and a timed command, no libcordon.
all: $(BUILD)/tools/bench/fsloop

$(BUILD)/tools/bench/fsloop: tools/bench/fsloop.c
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $<

# --- the kernel floor benchmark (tools/bench/floor_vm.sh) ----------------------
# Runs inside the VM (BPF LSM needs the guest kernel); floor_vm.sh copies it
# in with tools/vmtest --add.  `all` builds it so `make bench` has it.
all: $(BUILD)/tools/bench/floor_bench

$(BUILD)/tools/bench/floor_bench.o: tools/bench/floor_bench.c
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/tools/bench/floor_bench: $(BUILD)/tools/bench/floor_bench.o $(BUILD)/libcordon.a
	$(call msg,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)
