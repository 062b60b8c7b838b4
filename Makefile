# Bikaroo fleet MCP server. `make run` serves (with a throwaway PostgreSQL when DATABASE_URL is
# unset); `make test` runs every test (unit, integration on real PostgreSQL, real MCP clients).

CC      ?= cc
PKGS    := libmicrohttpd jansson libpq libcrypto
WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wformat=2 -Wvla -Wpointer-arith
CFLAGS  ?= -O2 -g
override CFLAGS += -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE $(WARN) -pthread \
           -fstack-protector-strong -D_FORTIFY_SOURCE=2 $(shell pkg-config --cflags $(PKGS))
LDLIBS  += $(shell pkg-config --libs $(PKGS)) -pthread
TEST_LDLIBS := $(shell pkg-config --libs check libcurl 2>/dev/null)

B       ?= build
COMMON  := $(wildcard common/*.c)
DOMAIN  := $(wildcard domain/*.c)
SERVER  := $(filter-out server/main.c,$(wildcard server/*.c))
LIBSRC  := $(COMMON) $(DOMAIN) $(SERVER)
LIBOBJ  := $(LIBSRC:%.c=$(B)/%.o)
UNIT    := $(wildcard tests/unit/*.c)
INTEG   := $(wildcard tests/integration/*.c)

.PHONY: all deps run test unit integration e2e asan valgrind lint format format-check bench clean

all: $(B)/bikaroo-mcp

deps:
	@scripts/deps.sh

$(B)/%.o: %.c $(wildcard */*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(B)/libbikaroo.a: $(LIBOBJ)
	$(AR) rcs $@ $^

$(B)/bikaroo-mcp: $(B)/server/main.o $(B)/libbikaroo.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/unit-tests: $(UNIT:%.c=$(B)/%.o) $(B)/libbikaroo.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(TEST_LDLIBS)

$(B)/integration-tests: $(INTEG:%.c=$(B)/%.o) $(B)/libbikaroo.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(TEST_LDLIBS)

run: deps all
	scripts/run.sh $(B)/bikaroo-mcp

# Everything, against a throwaway PostgreSQL that the harness creates and removes.
test: deps
	$(MAKE) --no-print-directory all $(B)/unit-tests $(B)/integration-tests
	scripts/test.sh $(B)

unit: all $(B)/unit-tests
	$(B)/unit-tests

# The same suite with AddressSanitizer + UndefinedBehaviorSanitizer (e2e included: the clients
# drive the sanitized binary).
asan: deps
	$(MAKE) --no-print-directory B=build/asan \
	  CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	  LDFLAGS="-fsanitize=address,undefined" all build/asan/unit-tests build/asan/integration-tests
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  scripts/test.sh build/asan

# The suite with every server process and the unit tests under valgrind memcheck.
valgrind: deps
	$(MAKE) --no-print-directory B=build/vg CFLAGS="-O0 -g" all build/vg/unit-tests build/vg/integration-tests
	BIKAROO_VALGRIND=1 scripts/test.sh build/vg

lint:
	cppcheck --quiet --error-exitcode=1 --enable=warning,performance,portability \
	  --inline-suppr --std=c11 -I common -I domain -I server common domain server tests
	@scripts/banned.sh

format:
	clang-format -i $(LIBSRC) server/main.c $(UNIT) $(INTEG) $(wildcard */*.h tests/*/*.h)

format-check:
	clang-format --dry-run --Werror $(LIBSRC) server/main.c $(UNIT) $(INTEG) $(wildcard */*.h tests/*/*.h)

bench: all
	bench/run.sh $(B)

clean:
	rm -rf build
