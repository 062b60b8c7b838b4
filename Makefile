# Bikaroo fleet MCP server. `make run` serves (with a throwaway PostgreSQL when DATABASE_URL is
# unset); `make test` runs every test (unit, integration on real PostgreSQL, real MCP clients);
# `make help` lists the rest.
#
# Nothing here runs when the Makefile is read: the libraries' flags are asked of pkg-config by
# the recipes that use them (recursively expanded variables), so that on a fresh machine `deps`
# has installed the libraries before anything asks (tests/firstrun/suite.sh checks both).

CC      ?= cc
PKGS    := libmicrohttpd jansson libpq libcrypto libcurl cjose
WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wformat=2 -Wvla -Wpointer-arith
OPT     ?= -O2 -g
SAN     ?=
override CFLAGS = $(OPT) $(SAN) -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -I. -I$(B) $(WARN) -pthread \
           -fstack-protector-strong -D_FORTIFY_SOURCE=2 $(DEPFLAGS) $(shell pkg-config --cflags $(PKGS))
DEPFLAGS = -MMD -MP
LDLIBS  += $(shell pkg-config --libs $(PKGS)) -pthread
override LDFLAGS += $(SAN)
TEST_LDLIBS = $(shell pkg-config --libs check libcurl 2>/dev/null)
# bikaroo-mcp --version and bikaroo_build_info: the revision is git's, written to $(B)/revision
# when it changed (so that main.o is rebuilt for a new commit, and only then).
# The version is written once, in common/version.h (serverInfo, --version, metrics, package).
VERSION = $(shell sed -n 's/^\#define BIKAROO_VERSION "\(.*\)"$$/\1/p' common/version.h)

B       ?= build
COMMON  := $(wildcard common/*.c)
DOMAIN  := $(wildcard domain/*.c domain/pg/*.c)
SERVER  := server/cfg.c $(wildcard server/*/*.c)
HEADERS := $(wildcard common/*.h domain/*.h domain/pg/*.h server/*.h server/*/*.h tests/*/*.h)
LIBSRC  := $(COMMON) $(DOMAIN) $(SERVER)
LIBOBJ  := $(LIBSRC:%.c=$(B)/%.o) $(B)/gen/capabilities.o
# The capabilities' declarations, checked against their format
# (server/capabilities/declaration.schema.json) and generated into C by the build (scripts/capgen.c).
DECLS   := $(sort $(filter-out %.schema.json,$(wildcard server/capabilities/*.json)))
UNIT    := $(wildcard tests/unit/*.c)
CORE    := $(wildcard tests/core/*.c)
# The protocol core alone (no capability, no domain code, no libpq), for its own unit tests.
COREOBJ := $(patsubst %.c,$(B)/%.o,$(COMMON) $(wildcard server/protocol/*.c) server/transport/sse.c)
INTEG   := $(wildcard tests/integration/*.c)
CONF    := $(wildcard tests/conformance/*.c)
FUZZ    := $(wildcard tests/fuzz/*.c)

# Quiet build lines (`CC server/main.c`); `make V=1` prints every command in full.
ifeq ($(V),1)
Q       :=
SAY     := @true
else
Q       := @
SAY     := @printf '  %-5s %s\n'
endif

.PHONY: all docs-tables deps test-deps run run-serve reset-demo test unit integration e2e script new-capability asan valgrind fuzz lint format format-check bench bench-rss bench-shapes bench-traces hotpath-lines clean \
        install uninstall deb server-json soak budgets help

all: $(B)/bikaroo-mcp $(B)/conformance-server

# The Debian packages by tier (scripts/deps.sh): `deps` what building and running need,
# `test-deps` that and the test lab; bench and fuzz install their own.
deps:
	@scripts/deps.sh

test-deps:
	@scripts/deps.sh test

# Every object lists the headers it includes in its .d file (-MMD): a header edit rebuilds the
# objects that include it, and only those.
$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(SAY) CC $<
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(B)/revision: FORCE
	@mkdir -p $(dir $@)
	@r=$$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown); \
	  [ "$$(cat $@ 2>/dev/null)" = "$$r" ] || echo "$$r" >$@

$(B)/server/main.o: server/main.c $(B)/revision
	@mkdir -p $(dir $@)
	$(SAY) CC $<
	$(Q)$(CC) $(CFLAGS) -DBIKAROO_VERSION='"$(VERSION)"' -DBIKAROO_REVISION='"$(shell cat $(B)/revision)"' \
	  -c $< -o $@

.PHONY: FORCE
FORCE:

# Every declaration checked (valid JSON, the declarations' schema, schemas with only the keywords
# the validator implements, examples that fit them) and generated into C: a capability the server
# could not serve as declared fails the build, not a request.
$(B)/capgen: scripts/capgen.c server/protocol/schema.c common/mem.c
	@mkdir -p $(dir $@)
	$(SAY) LINK $@
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(shell pkg-config --libs jansson)

$(B)/gen/capabilities.c: $(B)/capgen server/capabilities/declaration.schema.json $(DECLS)
	@mkdir -p $(dir $@)
	$(SAY) GEN '$@ ($(words $(DECLS)) declarations)'
	$(Q)$(B)/capgen $(B)/gen server/capabilities/declaration.schema.json $(DECLS)
$(B)/gen/capabilities.h: $(B)/gen/capabilities.c
$(filter $(B)/server/capabilities/%,$(LIBOBJ)) $(B)/tests/contracts/dump.o \
  $(B)/tests/fuzz/fuzz_schema.o $(INTEG:%.c=$(B)/%.o): $(B)/gen/capabilities.h

# The tables written from the declarations: the governance table of docs/capabilities.md, and
# the "What it serves" table of README.md and docs/capabilities.md.
docs-tables:
	python3 scripts/doctable.py write README.md docs/capabilities.md

# The schema version the binary needs (domain/pg/migrate.h) is the number of the highest numbered
# file of MIGRATIONS, read on every build and written only when it changed (then migrate.o alone
# is rebuilt): a new numbered migration is all a schema change needs, and none is forgotten.
MIGRATIONS ?= migrations
$(B)/gen/schema_version.h: FORCE
	@scripts/schema-version.sh '$(MIGRATIONS)' $@ >/dev/null
$(B)/domain/pg/migrate.o: $(B)/gen/schema_version.h

$(B)/libbikaroo.a: $(LIBOBJ)
	$(SAY) AR $@
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(B)/bikaroo-mcp: $(B)/server/main.o $(B)/libbikaroo.a
	$(SAY) LINK $@
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Test-only server with the C-side perimeter check of every read compiled out (domain/reads.c, the
# one read path): the tests show that row-level security alone still refuses other regions.
# Never installed or run by `make run`.
$(B)/domain/reads-rls-only.o: domain/reads.c
	@mkdir -p $(dir $@)
	$(SAY) CC $< '(RLS alone)'
	$(Q)$(CC) $(CFLAGS) -DFLEET_TEST_NO_C_PERIMETER -c $< -o $@

$(B)/bikaroo-mcp-rls-only: $(B)/server/main.o $(B)/domain/reads-rls-only.o $(B)/libbikaroo.a
	$(SAY) LINK $@
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Test-only server whose batches hand the first two statements of every batch each other's
# results (domain/reads.c): the tests show that the echo check refuses them, never sends them.
# Never installed or run by `make run`.
$(B)/domain/reads-swap-rows.o: domain/reads.c
	@mkdir -p $(dir $@)
	$(SAY) CC $< '(rows swapped)'
	$(Q)$(CC) $(CFLAGS) -DFLEET_TEST_SWAP_ROWS -c $< -o $@

$(B)/bikaroo-mcp-swap-rows: $(B)/server/main.o $(B)/domain/reads-swap-rows.o $(B)/libbikaroo.a
	$(SAY) LINK $@
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Test-only: the same server/ objects plus the conformance suite's fixtures (tests/conformance).
$(B)/conformance-server: $(CONF:%.c=$(B)/%.o) $(B)/libbikaroo.a
	$(SAY) LINK $@
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The Check programs share one main (tests/check_main.c); their suites are found, not
# registered: every `Suite *NAME_suite(void)` of the program's files is in the list that
# scripts/check-suites.sh writes (`PROGRAM --list` prints it).
$(B)/gen/%-suites.c: scripts/check-suites.sh
	@mkdir -p $(dir $@)
	$(SAY) GEN $@
	$(Q)scripts/check-suites.sh $(filter %.c,$^) >$@
$(B)/gen/unit-suites.c: $(UNIT)
$(B)/gen/core-suites.c: $(CORE)
$(B)/gen/integration-suites.c: $(INTEG)

$(B)/unit-tests: $(UNIT:%.c=$(B)/%.o) $(B)/gen/unit-suites.o $(B)/tests/check_main.o \
		 $(B)/tests/conformance/uriset.o $(B)/libbikaroo.a
	$(SAY) LINK $@
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(TEST_LDLIBS)

# Linked without libbikaroo.a and without libpq: the core stands on its own.
$(B)/core-tests: $(CORE:%.c=$(B)/%.o) $(B)/gen/core-suites.o $(B)/tests/check_main.o $(COREOBJ)
	$(SAY) LINK $@
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(shell pkg-config --libs jansson libcrypto) -pthread \
	  $(TEST_LDLIBS)

# The same core tests with the tasks' portable switch (ucontext, common/task.c), which the
# architectures without their own switch use.
$(B)/common/task-ucontext.o: common/task.c
	@mkdir -p $(dir $@)
	$(SAY) CC $< '(ucontext)'
	$(Q)$(CC) $(CFLAGS) -DTASK_UCONTEXT -c $< -o $@

$(B)/core-ucontext-tests: $(CORE:%.c=$(B)/%.o) $(B)/gen/core-suites.o $(B)/tests/check_main.o \
			  $(filter-out $(B)/common/task.o,$(COREOBJ)) $(B)/common/task-ucontext.o
	$(SAY) LINK $@
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(shell pkg-config --libs jansson libcrypto) -pthread \
	  $(TEST_LDLIBS)

$(B)/integration-tests: $(INTEG:%.c=$(B)/%.o) $(B)/gen/integration-suites.o $(B)/tests/check_main.o \
			$(B)/libbikaroo.a
	$(SAY) LINK $@
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(TEST_LDLIBS)

$(B)/gen/%.o: $(B)/gen/%.c
	$(SAY) CC $<
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

# libFuzzer targets (tests/fuzz): built by `make fuzz` with clang, ASan and UBSan.
$(B)/fuzz_%: $(B)/tests/fuzz/fuzz_%.o $(B)/libbikaroo.a
	$(SAY) LINK $@
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)

-include $(shell find $(B) -name '*.d' 2>/dev/null)

# One `make run` per checkout: when one serves already, say where (and touch nothing); else
# deps first, then a build that starts only once deps is done (also under make -j), then serve.
run:
	@scripts/run.sh --serving || $(MAKE) --no-print-directory run-serve

run-serve: deps
	$(MAKE) --no-print-directory $(B)/bikaroo-mcp
	scripts/run.sh $(B)/bikaroo-mcp

# The throwaway database of `make run` anew: migrated, the demo data as first loaded.
reset-demo: deps
	$(MAKE) --no-print-directory $(B)/bikaroo-mcp
	scripts/run.sh --reset-demo $(B)/bikaroo-mcp

# Everything, against a throwaway PostgreSQL that the harness creates and removes.
test: test-deps
	$(MAKE) --no-print-directory format-check
	$(MAKE) --no-print-directory all $(B)/core-tests $(B)/core-ucontext-tests $(B)/unit-tests $(B)/integration-tests $(B)/bikaroo-mcp-rls-only \
	  $(B)/bikaroo-mcp-swap-rows
	scripts/test.sh $(B)

unit: test-deps
	$(MAKE) --no-print-directory all $(B)/core-tests $(B)/core-ucontext-tests $(B)/unit-tests
	$(B)/core-tests
	$(B)/core-ucontext-tests
	$(B)/unit-tests

# One part of make test with the same set-up (a throwaway cluster, migrated, demo data):
# `make integration SUITE=hotpath` (one suite; all without SUITE), `make e2e FILE=modern-client`
# (tests/e2e/FILE.test.mjs; all without FILE). An unknown name fails with the list of names.
integration: test-deps
	$(MAKE) --no-print-directory all $(B)/integration-tests $(B)/bikaroo-mcp-rls-only \
	  $(B)/bikaroo-mcp-swap-rows
	@if [ -n "$(SUITE)" ] && ! $(B)/integration-tests --list | grep -qx '$(SUITE)'; then \
	  echo "make integration: no suite named '$(SUITE)'; the suites are:"; \
	  $(B)/integration-tests --list | sed 's/^/  /'; exit 2; fi
	TEST_ONLY=integration SUITE='$(SUITE)' scripts/test.sh $(B)

# `make script SUITE=ui`: one of the script suites (tests/NAME/suite.sh) with the same set-up.
script: test-deps
	@if [ -z "$(SUITE)" ] || [ ! -x 'tests/$(SUITE)/suite.sh' ]; then \
	  echo "make script: SUITE=NAME, one of:"; ls tests/*/suite.sh | sed -E 's|tests/(.*)/suite.sh|  \1|'; exit 2; fi
	$(MAKE) --no-print-directory all $(B)/bikaroo-mcp-rls-only
	TEST_ONLY=script SUITE='$(SUITE)' scripts/test.sh $(B)

e2e: test-deps
	@if [ -n "$(FILE)" ] && [ ! -f 'tests/e2e/$(FILE).test.mjs' ]; then \
	  echo "make e2e: no tests/e2e/$(FILE).test.mjs; the files are:"; \
	  ls tests/e2e/*.test.mjs | sed -E 's|tests/e2e/(.*)\.test\.mjs|  \1|'; exit 2; fi
	$(MAKE) --no-print-directory all
	TEST_ONLY=e2e E2E_FILE='$(FILE)' scripts/test.sh $(B)

# A new tool's skeleton (server/capabilities/README.md): NAME=snake_case KIND=read|write|step
# (a step of the case workflow: FROM=state TO=state), ROLES="a b" to name its roles.
new-capability:
	@FROM='$(FROM)' TO='$(TO)' scripts/new-capability.sh '$(NAME)' '$(KIND)' $(ROLES)

# The same suite with AddressSanitizer + UndefinedBehaviorSanitizer (e2e included: the clients
# drive the sanitized binary; the batched-reads load makes fewer calls: IT_BATCH_CALLS).
# AddressSanitizer's reports go to build/asan/reports, one file per process, and
# scripts/asan-reports.sh fails the run on any (its swapcontext warning aside).
asan: test-deps
	$(MAKE) --no-print-directory B=build/asan OPT="-O1 -g" \
	  SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	  all build/asan/core-tests build/asan/core-ucontext-tests build/asan/unit-tests build/asan/integration-tests \
	  build/asan/bikaroo-mcp-rls-only build/asan/bikaroo-mcp-swap-rows
	rm -rf build/asan/reports && mkdir -p build/asan/reports
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:log_path='$(CURDIR)/build/asan/reports/asan' \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 IT_BATCH_CALLS=10000 scripts/test.sh build/asan; \
	  rc=$$?; scripts/asan-reports.sh build/asan/reports || rc=1; exit $$rc

# The suite with every server process and the unit tests under valgrind memcheck (the batched-reads
# load with fewer calls).
valgrind: test-deps
	$(MAKE) --no-print-directory B=build/vg OPT="-O1 -g -DTASK_VALGRIND" all build/vg/core-tests build/vg/core-ucontext-tests build/vg/unit-tests build/vg/integration-tests \
	  build/vg/bikaroo-mcp-rls-only build/vg/bikaroo-mcp-swap-rows
	BIKAROO_VALGRIND=1 IT_BATCH_CALLS=2000 scripts/test.sh build/vg

# Coverage-guided fuzzing of what comes from outside, FUZZ_SECONDS each (default 60): the
# protocol core, token validation, the request-head framing check, sealed requestState and the
# schema validator, from the seeds of tests/fuzz (scripts/fuzz.sh). Not part of `make test`: a
# campaign, not a check; what it finds becomes a regression case in tests/fuzz/corpus-NAME.
fuzz:
	@scripts/deps.sh fuzz
	$(MAKE) --no-print-directory B=build/fuzz CC=clang OPT="-O1 -g" \
	  SAN="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all" \
	  $(FUZZ:tests/fuzz/%.c=build/fuzz/%)
	scripts/fuzz.sh build/fuzz $${FUZZ_SECONDS:-60}

lint:
	cppcheck --quiet --error-exitcode=1 --enable=warning,performance,portability \
	  --inline-suppr --std=c11 -I . common domain server tests
	@scripts/banned.sh
	@python3 scripts/arrows.py
	@python3 scripts/codemap.py
	@python3 scripts/stale.py
	@python3 scripts/recipe.py
	@$(MAKE) --no-print-directory all
	@python3 scripts/defaults.py $(B)/bikaroo-mcp
	@scripts/globals.sh $(B)

FORMATTED = $(LIBSRC) server/main.c $(UNIT) $(CORE) $(INTEG) $(CONF) $(FUZZ) $(HEADERS) tests/check_main.c tests/check_main.h scripts/capgen.c

format:
	clang-format -i $(FORMATTED)

# Part of make test: a file clang-format would change fails the run (make format fixes it).
format-check:
	@clang-format --dry-run --Werror $(FORMATTED) && echo "format-check: $(words $(FORMATTED)) files as clang-format writes them"

# The benchmarks install what they need (wrk besides the build's packages) on a fresh machine.
bench:
	@scripts/deps.sh bench
	$(MAKE) --no-print-directory all
	bench/run.sh $(B)

# The get_bike_status path as an earlier commit (BENCH_SHAPES_REF, default e07d122) serves it,
# beside this build with one event loop per core and with one in all (bench/README.md).
bench-shapes:
	@scripts/deps.sh bench
	$(MAKE) --no-print-directory all
	bench/run.sh $(B) shapes

# What traces cost a get_bike_status, in instructions under callgrind (untraced, export on with
# no call sampled, one trace in ten, every call): figures a busy machine does not move.
bench-traces:
	@scripts/deps.sh bench
	$(MAKE) --no-print-directory all
	bench/run.sh $(B) traces

# The lines of the get_bike_status path, file by file (bench/README.md: which files, and why).
hotpath-lines:
	@scripts/hotpath.py

# 1,000,000 mixed requests, RSS flat under 32 MiB (not in CI: several minutes).
bench-rss:
	@scripts/deps.sh bench
	$(MAKE) --no-print-directory all
	bench/run.sh $(B) rss

clean:
	rm -rf build

help:
	@echo 'make run           install what is missing, build, serve http://127.0.0.1:8080/mcp'
	@echo '                   (a throwaway PostgreSQL in .run/pg unless DATABASE_URL is set;'
	@echo '                   one per checkout: a second says where the first serves)'
	@echo 'make reset-demo    the throwaway database of make run anew, with the demo data'
	@echo 'make test          every test against a throwaway PostgreSQL: "N passed, N failed"'
	@echo 'make all           build build/bikaroo-mcp (and the conformance server)'
	@echo 'make deps          install the Debian packages building and running need (the run tier)'
	@echo 'make test-deps     the same and the test lab (scripts/deps.sh lists the tiers)'
	@echo 'make unit          the unit tests only'
	@echo 'make integration   the integration tests (SUITE=name: one suite, e.g. hotpath)'
	@echo 'make e2e           the end-to-end tests (FILE=name: tests/e2e/name.test.mjs)'
	@echo 'make script        one script suite: SUITE=name (tests/name/suite.sh)'
	@echo 'make asan          make test with AddressSanitizer and UBSan'
	@echo 'make valgrind      make test under valgrind memcheck'
	@echo 'make fuzz          libFuzzer campaigns (FUZZ_SECONDS each, default 60)'
	@echo 'make bench         the benchmarks'
	@echo 'make bench-shapes  the get_bike_status path: an earlier commit beside this build'
	@echo 'make hotpath-lines the lines of that path, file by file (target 2,000)'
	@echo 'make lint          cppcheck, banned calls, layer arrows, file sizes, the code map, comments citing'
	@echo '                   what exists, the defaults the docs state, no mutable globals'
	@echo 'make new-capability NAME=x KIND=read|write|step   a new tool, compiling and tested (server/capabilities/README.md)'
	@echo 'make format        clang-format the sources (format-check: only check)'
	@echo 'make contracts     record the capability contracts (tests/contracts)'
	@echo 'make soak          a long mixed load (scripts/soak.sh)'
	@echo 'make budgets       one subject at full speed through 3 instances for 60 s (tests/budgets)'
	@echo 'make install       install under PREFIX (DESTDIR stages); make deb: a Debian package'
	@echo 'make server-json   build/server.json, the MCP Registry entry of this version'
	@echo 'make uninstall     remove what make install put under PREFIX (the settings file stays)'
	@echo 'make clean         remove build/'
	@echo 'Variables: B=build dir, OPT, SAN, CC, V=1 (full compiler lines). Server settings: build/bikaroo-mcp help'

# Capability contracts (tests/contracts): the contract of every tool, resource, template and
# prompt as a client lists it; `make contracts` records it in tests/contracts/snapshot.json after
# checking each version bump and the rolling upgrade from the previous release (its snapshot, from
# git; empty in a checkout without it) (docs/capabilities.md: Versioning), then checks the
# capability table of docs/capabilities.md.
.PHONY: contracts
$(B)/contracts-dump: $(B)/tests/contracts/dump.o $(B)/libbikaroo.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

contracts: $(B)/contracts-dump
	$(B)/contracts-dump >$(B)/contracts-current.json
	git show "$$(tr -d '[:space:]' <tests/upgrade/PREVIOUS):tests/contracts/snapshot.json" \
	  >$(B)/contracts-released.json 2>/dev/null || : >$(B)/contracts-released.json
	python3 scripts/contracts.py --update tests/contracts/snapshot.json $(B)/contracts-current.json \
	  $(B)/contracts-released.json
	python3 scripts/contracts.py readme docs/capabilities.md $(B)/contracts-current.json

# Installation (FHS): the binary in $(PREFIX)/bin, its documents, prompts and migrations in
# $(PREFIX)/share/bikaroo-mcp, the unit and the man page. The installed binary is linked with a
# cfg.c compiled for $(DATADIR), so it needs no directory settings; build/bikaroo-mcp keeps
# reading them from the source tree. DESTDIR stages (packaging); `make deb` builds the package.
PREFIX  ?= /usr/local
DATADIR := $(PREFIX)/share/bikaroo-mcp
IB      := $(B)/install$(subst /,_,$(PREFIX))
INSTALL ?= install

$(IB)/cfg.o: server/cfg.c
	@mkdir -p $(dir $@)
	$(SAY) CC '$< (installed)'
	$(Q)$(CC) $(CFLAGS) -DBIKAROO_DATADIR='"$(DATADIR)/"' -c $< -o $@

$(IB)/bikaroo-mcp: $(B)/server/main.o $(IB)/cfg.o $(B)/libbikaroo.a
	$(CC) $(CFLAGS) $(LDFLAGS) -Wl,-z,relro,-z,now -o $@ $^ $(LDLIBS)

install: $(IB)/bikaroo-mcp
	scripts/install.sh "$(DESTDIR)" "$(PREFIX)" $(IB)/bikaroo-mcp

# What `make install` put under PREFIX (the same PREFIX, DESTDIR, UNITDIR), less the settings file.
uninstall:
	scripts/install.sh --uninstall "$(DESTDIR)" "$(PREFIX)"

# A Debian package of the installed tree (dpkg-deb), then lintian on it (docs/operating.md: Install).
deb: test-deps
	$(MAKE) --no-print-directory PREFIX=/usr $(B)/install_usr/bikaroo-mcp
	scripts/deb.sh $(B)

# The MCP Registry's entry (schema 2025-12-11): packaging/server.json.in with the one version of
# common/version.h (docs/operating.md: Publishing to the MCP Registry).
$(B)/server.json: packaging/server.json.in common/version.h
	@mkdir -p $(B)
	sed 's/@VERSION@/$(VERSION)/g' $< >$@
server-json: $(B)/server.json

# 10 minutes (SOAK_SECONDS) of mixed load against two instances behind nginx: RSS, descriptors and
# database connections flat over the second half, no error but the intended 4xx. Not in make test.
soak: test-deps all
	scripts/soak.sh $(B)

# Issue 20's budget test at its full length: one subject at full speed for 60 s through three
# instances behind nginx (make test runs the same suite for 20 s). Not in make test.
budgets: test-deps all
	BUDGET_SECONDS=60 scripts/suite.sh $(B) tests/budgets/suite.sh
