# cordon: kernel-enforced sandbox for AI agents.
#
#   make            build everything into $(BUILD)
#   make deps       install the Debian packages the build and tests need
#   make test       unit + host + VM tests (the CI entry point)
#   make demo       the quick-start demonstration
#   make bench      benchmarks, printed as ratios against baselines and peers
#   make install    install into $(DESTDIR)$(PREFIX) (PREFIX=/usr/local)
#   make deb        a Debian package of the tree, in $(BUILD)/deb
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
.PHONY: all deps test test-unit test-host test-vm redteam demo bench clean install deb

WARN := -Wall -Wextra -Werror -Werror=shadow -Werror=missing-prototypes \
        -Werror=format=2 -Wswitch-enum -Wno-unused-parameter
HARDEN := -D_FORTIFY_SOURCE=2 -fstack-protector-strong -fPIE
CFLAGS ?= -O2 -g
# No include path here: each layer gets its own (layers, below).
ALL_CFLAGS := $(CFLAGS) $(WARN) $(HARDEN) -std=gnu11 -MMD -MP
LDFLAGS ?=
# pack-relative-relocs (DT_RELR, glibc >= 2.36): the loader's table of
# cordon's ~22,700 relative relocations shrinks from 545 KB to 7 KB, read at
# every exec of cordon (two a session: the supervisor and the broker).
# Measured: `cordon --version` 0.2-0.3 ms less CPU an exec (startlat, 200-300
# interleaved runs, three runs).  The pages they write are the same: PIE and
# its ASLR stay.
ALL_LDFLAGS := $(LDFLAGS) -pie -Wl,-z,relro,-z,now,-z,pack-relative-relocs -Wl,--as-needed
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

# --- layers ---------------------------------------------------------------------
# Each layer is an archive compiled with only its own and lower folders on the
# include path, so an include of a higher layer fails to compile
# (docs/architecture.md; tools/layers checks calls and cycles too):
#   base    base/       macros, logging, file I/O, hex: nothing of cordon
#   policy  policy/     the policy language (and bpf/cordon.h, the ABI it targets)
#   floor   loader/     the kernel floor's user side (and the generated skeletons)
#   cordon  userspace/  the binary's subsystems, one folder each
BASE_SRC   := $(wildcard base/*.c)
POLICY_SRC := $(wildcard policy/*.c policy/english/*.c)
FLOOR_SRC  := $(wildcard loader/*.c)
USER_DIRS  := $(sort $(dir $(wildcard userspace/*/*.c userspace/*/*.h)))
USER_SRC   := $(filter-out userspace/cmd/main.c,$(wildcard userspace/*/*.c))
PROFILES   := $(filter-out %.scenarios.json,$(wildcard policy/profiles/*.json))

base_INC   := -Ibase
policy_INC := $(base_INC) -Ibpf -Ipolicy -Ipolicy/english
floor_INC  := $(policy_INC) -Iloader -I$(BUILD)
cordon_INC := $(floor_INC) $(patsubst %/,-I%,$(USER_DIRS))

$(BUILD)/base/%.o:      INC = $(base_INC)
$(BUILD)/policy/%.o:    INC = $(policy_INC)
$(BUILD)/profiles.o:    INC = $(policy_INC)
$(BUILD)/loader/%.o:    INC = $(floor_INC)
$(BUILD)/userspace/%.o: INC = $(cordon_INC)
$(BUILD)/tests/%.o:     INC = $(cordon_INC)
$(BUILD)/tools/%.o:     INC = $(cordon_INC)

BASE_OBJ   := $(BASE_SRC:%.c=$(BUILD)/%.o)
POLICY_OBJ := $(POLICY_SRC:%.c=$(BUILD)/%.o) $(BUILD)/profiles.o
FLOOR_OBJ  := $(FLOOR_SRC:%.c=$(BUILD)/%.o)
USER_OBJ   := $(USER_SRC:%.c=$(BUILD)/%.o)
# Highest first, for the linker.
LAYER_LIBS := $(BUILD)/libcordon.a $(BUILD)/libfloor.a $(BUILD)/libpolicy.a $(BUILD)/libbase.a

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
GEN_H      := $(SKEL_H) $(ID_H) $(BUILD)/seccomp_filters.h

BENCH_BIN  := $(addprefix $(BUILD)/tools/bench/,policy_bench startlat proxy_bench fsloop floor_bench \
              drain ptyrun)

all: $(BUILD)/cordon $(TEST_BIN) $(BUILD)/tools/demo_floor $(BENCH_BIN)

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
	$(Q)$(CC) $(ALL_CFLAGS) $(floor_INC) -o $@ tools/buildid.c loader/buildid.c

# The agent's seccomp filters, compiled to BPF once (loader/filters.h).
$(BUILD)/tools/seccomp_gen: tools/seccomp_gen.c loader/filters.c loader/filters.h | $(BUILD)/.dir
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(base_INC) -Iloader -o $@ tools/seccomp_gen.c loader/filters.c -lseccomp

$(BUILD)/seccomp_filters.h: $(BUILD)/tools/seccomp_gen
	$(call msg,GEN,$@)
	$(Q)$(BUILD)/tools/seccomp_gen > $@.tmp && mv $@.tmp $@

$(BUILD)/%.id.h: $(BUILD)/%.linked.o $(BUILD)/tools/buildid
	$(call msg,GEN,$@)
	$(Q)$(BUILD)/tools/buildid $* $< > $@.tmp && mv $@.tmp $@

# --- host C -------------------------------------------------------------------
# The generated headers are order-only: they must exist before the first
# compile, and after it each object's -MMD file names the ones it really
# includes, so a BPF edit rebuilds only their users.
HOST_OBJ := $(BASE_OBJ) $(filter-out $(BUILD)/profiles.o,$(POLICY_OBJ)) $(FLOOR_OBJ) $(USER_OBJ) \
            $(BUILD)/userspace/cmd/main.o \
            $(patsubst %.c,$(BUILD)/%.o,$(UNIT_SRC) $(HOSTC_SRC) $(VMC_SRC)) \
            $(BUILD)/tools/demo_floor.o $(BUILD)/tools/bench/policy_bench.o $(BUILD)/tools/bench/floor_bench.o
$(HOST_OBJ): $(BUILD)/%.o: %.c | $(GEN_H)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(INC) -c $< -o $@

# The shipped profiles are compiled into the binary.
$(BUILD)/profiles.c: $(PROFILES) tools/embed-profiles | $(BUILD)/.dir
	$(call msg,GEN,$@)
	$(Q)tools/embed-profiles $@ $(PROFILES)

$(BUILD)/profiles.o: $(BUILD)/profiles.c
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(INC) -c $< -o $@

$(BUILD)/libbase.a: $(BASE_OBJ)
$(BUILD)/libpolicy.a: $(POLICY_OBJ)
$(BUILD)/libfloor.a: $(FLOOR_OBJ)
$(BUILD)/libcordon.a: $(USER_OBJ)
# q, not r: two folders may hold files of one name (cmd/audit.c and
# audit/audit.c), and r would keep only the last of two members so named.
$(LAYER_LIBS):
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar qcs $@ $^

$(BUILD)/cordon: $(BUILD)/userspace/cmd/main.o $(LAYER_LIBS)
	$(call msg,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(CORDON_LIBS)

# The floor demo (tools/demo runs it in the VM).
$(BUILD)/tools/demo_floor: $(BUILD)/tools/demo_floor.o $(LAYER_LIBS)
	$(call msg,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/tests/unit/%: $(BUILD)/tests/unit/%.o $(LAYER_LIBS)
	$(call msg,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS) -lcmocka

$(BUILD)/tests/host/%: $(BUILD)/tests/host/%.o $(LAYER_LIBS)
	$(call msg,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/tests/vm/%: $(BUILD)/tests/vm/%.o $(LAYER_LIBS)
	$(call msg,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/tests/agents/%: tests/agents/%.c
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< -lpthread

%/.dir:
	@mkdir -p $(@D) && touch $@

# --- install and package ---------------------------------------------------------
# The binary holds the shipped profiles (tools/embed-profiles): a profile
# name never resolves through a file on disk another user could swap, so the
# profiles installed under $(DATADIR)/cordon/profiles (JSON and the English
# sources) are for reading and copying, not what `--profile` loads.
# `cordon mcp-bridge` runs inside sessions: $(BINDIR) must be a directory the
# policy lets the agent execute (every shipped profile allows /usr; a
# /usr/local prefix is under /usr too).
PREFIX        ?= /usr/local
BINDIR        ?= $(PREFIX)/bin
DATADIR       ?= $(PREFIX)/share
MANDIR        ?= $(DATADIR)/man
BASHCOMPDIR   ?= $(DATADIR)/bash-completion/completions
ZSHCOMPDIR    ?= $(DATADIR)/zsh/vendor-completions
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
TMPFILESDIR   ?= $(PREFIX)/lib/tmpfiles.d
DESTDIR       ?=
MAN1          := $(wildcard dist/man/*.1)
MAN5          := $(wildcard dist/man/*.5)
PROFILE_SRC   := $(PROFILES) $(wildcard policy/profiles/*.en)
INSTALL_BIN   ?= $(BUILD)/cordon

# Installs what is built; it does not build (`make` first, as the user who
# builds: a `sudo make install` then only copies).
install:
	@test -x $(INSTALL_BIN) || { echo "install: $(INSTALL_BIN) is not built; run make first" >&2; exit 1; }
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(DATADIR)/cordon/profiles \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(BASHCOMPDIR) \
		$(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(SYSTEMDUNITDIR) $(DESTDIR)$(TMPFILESDIR)
	$(Q)install -m 0755 $(INSTALL_BIN) $(DESTDIR)$(BINDIR)/cordon
	$(Q)install -m 0644 $(PROFILE_SRC) $(DESTDIR)$(DATADIR)/cordon/profiles/
	$(Q)for f in $(MAN1); do gzip -9nc $$f > $(DESTDIR)$(MANDIR)/man1/$${f##*/}.gz; done
	$(Q)for f in $(MAN5); do gzip -9nc $$f > $(DESTDIR)$(MANDIR)/man5/$${f##*/}.gz; done
	$(Q)chmod 0644 $(DESTDIR)$(MANDIR)/man1/*.gz $(DESTDIR)$(MANDIR)/man5/*.gz
	$(Q)install -m 0644 dist/completion/cordon.bash $(DESTDIR)$(BASHCOMPDIR)/cordon
	$(Q)install -m 0644 dist/completion/_cordon $(DESTDIR)$(ZSHCOMPDIR)/_cordon
	$(Q)sed 's|/usr/bin/cordon|$(BINDIR)/cordon|' dist/systemd/cordon-floor.service \
		> $(DESTDIR)$(SYSTEMDUNITDIR)/cordon-floor.service
	$(Q)sed 's|/usr/bin/cordon|$(BINDIR)/cordon|' dist/systemd/cordon-prune.service \
		> $(DESTDIR)$(SYSTEMDUNITDIR)/cordon-prune.service
	$(Q)install -m 0644 dist/systemd/cordon-prune.timer $(DESTDIR)$(SYSTEMDUNITDIR)/cordon-prune.timer
	$(Q)chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/cordon-floor.service \
		$(DESTDIR)$(SYSTEMDUNITDIR)/cordon-prune.service
	$(Q)install -m 0644 dist/tmpfiles/cordon.conf $(DESTDIR)$(TMPFILESDIR)/cordon.conf

# The Debian package: built from the tree by tools/mkdeb (dpkg-deb, no
# debhelper), runtime dependencies only.  Its binary is the same objects
# linked against the shared libraries (STATIC=0's link): a distribution's
# security update of libssl, libbpf or zlib then reaches cordon without a
# rebuild, which Debian requires of a package (no embedded copies), at the
# ~0.7 ms of start-up the static link saves (see STATIC above).
$(BUILD)/deb/cordon: $(BUILD)/userspace/cmd/main.o $(LAYER_LIBS) | $(BUILD)/deb/.dir
	$(call msg,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

deb: $(BUILD)/cordon $(BUILD)/deb/cordon
	$(Q)tools/mkdeb --build $(BUILD)

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

# -type f: a package root under $(BUILD)/deb holds directories named *.d.
-include $(shell find $(BUILD) -name '*.d' -type f 2>/dev/null)

# --- fuzzing and the policy benchmark (tools/fuzz, tools/bench) ----------------
# `make fuzz` builds the libFuzzer targets.  They compile their sources
# directly instead of linking libcordon.a: every object they run must carry
# the coverage and sanitizer instrumentation, and UBSan must abort (not just
# print) so that libFuzzer keeps the input.  Needs libclang-rt-14-dev.
FUZZ_CC     ?= $(CLANG)
FUZZ_CFLAGS := -g -O1 -std=gnu11 -fsanitize=fuzzer,address,undefined \
               -fno-sanitize-recover=all -Wall -Wextra -Wno-unused-parameter \
               $(policy_INC) -Iuserspace/mcp -Iuserspace/egress
FUZZ_HDR    := $(wildcard policy/*.h) base/util.h bpf/cordon.h
FUZZ_POLICY := $(POLICY_SRC) base/util.c $(BUILD)/profiles.c
.PHONY: fuzz
fuzz: $(BUILD)/fuzz/policy_fuzz $(BUILD)/fuzz/jsonpos_fuzz $(BUILD)/fuzz/jsonrpc_fuzz \
      $(BUILD)/fuzz/http_fuzz

$(BUILD)/fuzz/policy_fuzz: tools/fuzz/policy_fuzz.c $(FUZZ_POLICY) $(FUZZ_HDR) | $(BUILD)/fuzz/.dir
	$(call msg,FUZZ,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_POLICY) -ljansson -lcrypto

$(BUILD)/fuzz/jsonpos_fuzz: tools/fuzz/jsonpos_fuzz.c policy/jsonpos.c $(FUZZ_HDR) | $(BUILD)/fuzz/.dir
	$(call msg,FUZZ,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $< policy/jsonpos.c -ljansson

FUZZ_RPC := userspace/mcp/jsonrpc.c userspace/egress/scrub.c
$(BUILD)/fuzz/jsonrpc_fuzz: tools/fuzz/jsonrpc_fuzz.c $(FUZZ_RPC) userspace/mcp/jsonrpc.h userspace/egress/scrub.h $(FUZZ_HDR) | $(BUILD)/fuzz/.dir
	$(call msg,FUZZ,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_RPC) -ljansson -lcrypto

# The HTTP head parser is pure: no library to link.
FUZZ_HTTP := userspace/egress/http.c userspace/egress/http_authority.c \
             userspace/egress/http_chunked.c userspace/egress/http_fields.c
FUZZ_HTTP_HDR := userspace/egress/http.h userspace/egress/http_authority.h \
                 userspace/egress/http_chunked.h userspace/egress/http_fields.h userspace/egress/http_lex.h
$(BUILD)/fuzz/http_fuzz: tools/fuzz/http_fuzz.c $(FUZZ_HTTP) $(FUZZ_HTTP_HDR) | $(BUILD)/fuzz/.dir
	$(call msg,FUZZ,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_HTTP)

# The benchmarks' programs (tools/bench): `all` builds them so `make bench`
# has them.  policy_bench and floor_bench are ordinary host programs linked
# like cordon (floor_bench runs in the VM: floor_vm.sh copies it in); startlat
# times every sandbox's start (fork, exec, wait on CLOCK_MONOTONIC, no shell
# in the timed region); proxy_bench is one OpenSSL program (server and
# client); fsloop is the file system work timed inside each sandbox; drain
# and ptyrun time a stream through a pipe and through a terminal.
$(BUILD)/tools/bench/policy_bench $(BUILD)/tools/bench/floor_bench: %: %.o $(LAYER_LIBS)
	$(call msg,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/tools/bench/startlat $(BUILD)/tools/bench/fsloop $(BUILD)/tools/bench/drain \
$(BUILD)/tools/bench/ptyrun: $(BUILD)/tools/bench/%: tools/bench/%.c
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $<

$(BUILD)/tools/bench/proxy_bench: tools/bench/proxy_bench.c
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< -lssl -lcrypto -lpthread
