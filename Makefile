# qosim build. `make` builds build/libqosim.a and build/qosim; `make check`
# runs the whole suite (unit tests of both builds; the CLI end-to-end tests
# and cachegrind comparisons once, under ASan+UBSan, with the release build
# held to the same outputs; the whole-guest boots; a fuzz smoke run); `make
# help` lists the rest.

CC      ?= cc
CLANG   ?= clang
JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
SAN     ?= 0
BUILD   ?= build
O       := $(BUILD)
SANITIZE := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
ifeq ($(SAN),1)
O       := $(BUILD)/san
SANFLAGS := $(SANITIZE)
endif

CFLAGS  ?= -O2 -g
# Position-independent, so that one set of objects serves the qosim
# executable, the tests and the whole guest's plugin, a shared object that
# QEMU loads (qemu/vm.mk); no semantic interposition, so that calls within
# the library are still direct and inlined as in an executable.
ALLCFLAGS = -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror $(CFLAGS) $(SANFLAGS) \
            -fPIC -fno-semantic-interposition -Iinclude -Isrc -MMD -MP
LDLIBS  = -llzma -lyaml -lzstd -ljson-c -lnettle -lm
# QEMU's plugin API header, for the version of qemu-user installed
# (scripts/install-deps puts it there from Debian's source package).
QEMU_PLUGIN_INC ?= /usr/local/include/qosim-qemu

LIB_SRC  := $(sort $(wildcard src/util/*.c src/sim/*.c src/sim/*/*.c src/hw/*.c src/drv/*.c \
                               src/sweep/*.c))
CLI_SRC  := $(sort $(wildcard src/cli/*.c))
TEST_SRC := $(sort $(wildcard tests/unit/test_*.c))
# Helper programs of the end-to-end tests: the other tests/unit/*.c.
HELP_SRC := $(sort $(filter-out $(TEST_SRC),$(wildcard tests/unit/*.c)))
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))

GEN_SRC  := build/gen/profiles.c
LIB_OBJ  := $(LIB_SRC:%.c=$(O)/%.o) $(O)/gen/profiles.o
CLI_OBJ  := $(CLI_SRC:%.c=$(O)/%.o)
TESTS    := $(TEST_SRC:tests/unit/%.c=$(O)/tests/%)
HELPERS  := $(HELP_SRC:tests/unit/%.c=$(O)/tests/%)
FUZZERS  := $(FUZZ_SRC:tests/fuzz/%.c=build/fuzz/%)
FUZZ_OBJ := $(LIB_SRC:%.c=build/fuzz/obj/%.o) $(GEN_SRC:%.c=build/fuzz/obj/%.o)

.PHONY: all check test test-san fuzz fuzz-smoke format format-check bench demo demo-cachegrind demo-live fidelity clean help

all: $(O)/qosim $(TESTS) $(HELPERS) $(O)/qemu/qosim-plugin.so

$(O)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) -c $< -o $@

# Shipped profiles, compiled in (scripts/embed-profiles).
build/gen/profiles.c: $(sort $(wildcard profiles/*.yaml)) scripts/embed-profiles
	@mkdir -p $(dir $@)
	scripts/embed-profiles $(sort $(wildcard profiles/*.yaml)) > $@.tmp && mv $@.tmp $@

$(O)/gen/profiles.o: build/gen/profiles.c
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) -c $< -o $@

# The commit qosim is built from, for sweep keys and records; rewritten only
# when it changes, so that nothing rebuilds for nothing.
build/gen/commit.h: FORCE
	@mkdir -p $(dir $@)
	@c=$$(git describe --always --dirty 2>/dev/null || echo unknown); \
	  printf '#define QOSIM_COMMIT "%s"\n' "$$c" >$@.tmp; \
	  if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
$(O)/src/sweep/sweep.o build/fuzz/obj/src/sweep/sweep.o: build/gen/commit.h
$(O)/src/sweep/sweep.o build/fuzz/obj/src/sweep/sweep.o: ALLCFLAGS += -Ibuild/gen
build/fuzz/obj/src/sweep/sweep.o: FUZZ_CFLAGS += -Ibuild/gen

$(O)/libqosim.a: $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

$(O)/qosim: $(CLI_OBJ) $(O)/libqosim.a
	$(CC) $(SANFLAGS) -o $@ $^ $(LDLIBS)

# The TCG plugin is loaded by QEMU, not by qosim: position-independent, and
# never sanitized (QEMU has no sanitizer runtime to give it). It shares
# only the ring's layout and the x86 decoder with the library.
PLUGIN_SRC := qemu/plugin/qosim-plugin.c src/sim/trace/x86br.c
$(O)/qemu/qosim-plugin.so: $(PLUGIN_SRC) src/sim/wl/live_ring.h src/sim/trace/x86br.h src/sim/trace/trace.h
	@mkdir -p $(dir $@)
	@test -f $(QEMU_PLUGIN_INC)/qemu-plugin.h || \
	  { echo "$(QEMU_PLUGIN_INC)/qemu-plugin.h missing: run scripts/install-deps" >&2; exit 1; }
	$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror $(CFLAGS) -fPIC -shared \
	  -fvisibility=hidden -I$(QEMU_PLUGIN_INC) -Iinclude -Isrc -o $@ $(PLUGIN_SRC)

$(O)/tests/%: tests/unit/%.c $(O)/libqosim.a
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) -o $@ $< $(O)/libqosim.a $(LDLIBS) -lcmocka

# Not tests themselves (tests/run.sh runs only test_*), so no cmocka.
$(HELPERS): $(O)/tests/%: tests/unit/%.c $(O)/libqosim.a
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) -o $@ $< $(O)/libqosim.a $(LDLIBS)

# The stand-in for qemu-x86_64 that test_live drives the plugin with: it
# exports the plugin API the plugin calls back into.
$(O)/tests/fake_qemu: ALLCFLAGS += -I$(QEMU_PLUGIN_INC) -rdynamic
$(O)/tests/test_live: $(O)/tests/fake_qemu $(O)/qemu/qosim-plugin.so

# libFuzzer harnesses: clang. The library is compiled once with the
# sanitizers and coverage, then linked into every harness.
FUZZ_CFLAGS = -std=c11 -D_GNU_SOURCE -g -O1 -Iinclude -Isrc -fno-sanitize-recover=all -MMD -MP

build/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link,address,undefined -c $< -o $@

build/fuzz/libqosim.a: $(FUZZ_OBJ)
	rm -f $@
	ar rcs $@ $^

build/fuzz/%: tests/fuzz/%.c build/fuzz/libqosim.a
	@mkdir -p $(dir $@)
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer,address,undefined \
	  -o $@ $< build/fuzz/libqosim.a $(LDLIBS)

fuzz: $(FUZZERS)

fuzz-smoke: fuzz
	rm -f build/results/fuzz
	tests/fuzz/smoke.sh

# Everything: the three builds, each with all processors, and the whole
# guest (make vm: QEMU is built once, then reused); then the suite in
# the normal and the sanitizer build, one pool of test files; then a short
# fuzz run of every harness. The closing line is the sum of all three.
# The fuzzers are built beside the whole guest: QEMU's build spends most of
# its first minute on one processor (unpacking, configure), and the
# fuzzers' compiles take the other.
check:
	$(MAKE) -j$(JOBS) all
	$(MAKE) -j$(JOBS) SAN=1 all
	$(MAKE) -j$(JOBS) vm-san fuzz
	rm -rf build/results
	tests/run.sh --e2e-once build build/san; tests/fuzz/smoke.sh; tests/summary.sh

test:
	$(MAKE) -j$(JOBS) all
	$(MAKE) -j$(JOBS) vm
	rm -rf build/results
	tests/run.sh $(O); tests/summary.sh

test-san:
	$(MAKE) -j$(JOBS) vm-san
	$(MAKE) -j$(JOBS) SAN=1 all
	rm -rf build/results
	tests/run.sh build/san; tests/summary.sh

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

format-check:
	clang-format --dry-run --Werror $$(git ls-files '*.c' '*.h')

bench: all vm-san $(O)/bench/bench_lwp
	bench/cachesim.sh
	bench/platform.sh
	$(O)/bench/bench_lwp
	bench/live.sh
	bench/vm.sh
	bench/hostile.sh
	bench/sweep.sh

# C benchmarks of the library (bench/bench_*.c), never part of `all`.
$(O)/bench/%: bench/%.c $(O)/libqosim.a
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) -o $@ $< $(O)/libqosim.a $(LDLIBS)

# The README's main job: the noisy-neighbour scenario, its table and its plot.
demo:
	$(MAKE) -j$(JOBS) all
	QOSIM=$(O)/qosim scripts/demo.sh

# Two real programs live under QEMU: bzip2 beside STREAM triads, with and
# without L3 partitioning.
demo-live:
	$(MAKE) -j$(JOBS) all
	QOSIM=$(O)/qosim scripts/demo-live.sh

# Record a real program, replay it, compare with cachegrind.
demo-cachegrind:
	$(MAKE) -j$(JOBS) all
	QOSIM=$(O)/qosim scripts/demo-cachegrind.sh

# The model beside published hardware measurements (docs/fidelity.md): a
# table and a plot per effect in build/fidelity/. Under 5 minutes on 2 cores.
fidelity:
	$(MAKE) -j$(JOBS) $(O)/qosim
	QOSIM=$(O)/qosim fidelity/run

clean:
	rm -rf build

help:
	@echo "make            build build/qosim and the unit tests"
	@echo "make check      the whole test suite (normal, ASan+UBSan, fuzz smoke)"
	@echo "make test       the suite in the normal build only"
	@echo "make demo       the noisy-neighbour scenario: table and plot (build/demo/)"
	@echo "make demo-cachegrind  record 'sort' with valgrind, replay it, compare with cachegrind"
	@echo "make demo-live  bzip2 and STREAM triads live under QEMU, with and without CAT"
	@echo "make vm         QEMU with qosim's hooks, Debian's kernel, the initramfs (docs/vm.md)"
	@echo "make bench      cachesim, full-platform, LWP and live-program benchmarks (bench/)"
	@echo "make fidelity   the model beside published hardware measurements (build/fidelity/)"
	@echo "make fuzz       build the libFuzzer harnesses (build/fuzz/)"
	@echo "make format     apply .clang-format"

include qemu/vm.mk

-include $(shell find build -path build/vm -prune -o -name '*.d' -type f -print 2>/dev/null)
