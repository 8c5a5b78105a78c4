# qosim build. `make` builds build/libqosim.a and build/qosim; `make check`
# runs the whole suite (unit, CLI end-to-end, cachegrind comparisons, the same
# under ASan+UBSan, and a fuzz smoke run); `make help` lists the rest.

CC      ?= cc
CLANG   ?= clang
JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
SAN     ?= 0
BUILD   ?= build
O       := $(BUILD)
ifeq ($(SAN),1)
O       := $(BUILD)/san
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
endif

CFLAGS  ?= -O2 -g
ALLCFLAGS = -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror $(CFLAGS) $(SANFLAGS) \
            -Iinclude -Isrc -MMD -MP
LDLIBS  = -llzma -lzstd -lyaml -lm

LIB_SRC  := $(sort $(wildcard src/util/*.c src/sim/*.c src/sim/*/*.c src/hw/*.c src/drv/*.c))
CLI_SRC  := $(sort $(wildcard src/cli/*.c))
TEST_SRC := $(sort $(wildcard tests/unit/test_*.c))
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))

GEN_SRC  := build/gen/profiles.c
LIB_OBJ  := $(LIB_SRC:%.c=$(O)/%.o) $(O)/gen/profiles.o
CLI_OBJ  := $(CLI_SRC:%.c=$(O)/%.o)
TESTS    := $(TEST_SRC:tests/unit/%.c=$(O)/tests/%)
FUZZERS  := $(FUZZ_SRC:tests/fuzz/%.c=build/fuzz/%)
FUZZ_OBJ := $(LIB_SRC:%.c=build/fuzz/obj/%.o) $(GEN_SRC:%.c=build/fuzz/obj/%.o)

.PHONY: all check test test-san fuzz fuzz-smoke format format-check bench demo demo-cachegrind clean help

all: $(O)/qosim $(TESTS)

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

$(O)/libqosim.a: $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

$(O)/qosim: $(CLI_OBJ) $(O)/libqosim.a
	$(CC) $(SANFLAGS) -o $@ $^ $(LDLIBS)

$(O)/tests/%: tests/unit/%.c $(O)/libqosim.a
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) -o $@ $< $(O)/libqosim.a $(LDLIBS) -lcmocka

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

# Everything: the three builds, each with all processors; then the suite in
# the normal and the sanitizer build, one pool of test files; then a short
# fuzz run of every harness. The closing line is the sum of all three.
check:
	$(MAKE) -j$(JOBS) all
	$(MAKE) -j$(JOBS) SAN=1 all
	$(MAKE) -j$(JOBS) fuzz
	rm -rf build/results
	tests/run.sh build build/san; tests/fuzz/smoke.sh; tests/summary.sh

test:
	$(MAKE) -j$(JOBS) all
	rm -rf build/results
	tests/run.sh $(O); tests/summary.sh

test-san:
	$(MAKE) -j$(JOBS) SAN=1 all
	rm -rf build/results
	tests/run.sh build/san; tests/summary.sh

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

format-check:
	clang-format --dry-run --Werror $$(git ls-files '*.c' '*.h')

bench: all $(O)/bench/bench_lwp
	bench/cachesim.sh
	bench/platform.sh
	$(O)/bench/bench_lwp

# C benchmarks of the library (bench/bench_*.c), never part of `all`.
$(O)/bench/%: bench/%.c $(O)/libqosim.a
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) -o $@ $< $(O)/libqosim.a $(LDLIBS)

# The README's main job: the noisy-neighbour scenario, its table and its plot.
demo:
	$(MAKE) -j$(JOBS) all
	QOSIM=$(O)/qosim scripts/demo.sh

# Record a real program, replay it, compare with cachegrind.
demo-cachegrind:
	$(MAKE) -j$(JOBS) all
	QOSIM=$(O)/qosim scripts/demo-cachegrind.sh

clean:
	rm -rf build

help:
	@echo "make            build build/qosim and the unit tests"
	@echo "make check      the whole test suite (normal, ASan+UBSan, fuzz smoke)"
	@echo "make test       the suite in the normal build only"
	@echo "make demo       the noisy-neighbour scenario: table and plot (build/demo/)"
	@echo "make demo-cachegrind  record 'sort' with valgrind, replay it, compare with cachegrind"
	@echo "make bench      cachesim, full-platform and LWP benchmarks (bench/)"
	@echo "make fuzz       build the libFuzzer harnesses (build/fuzz/)"
	@echo "make format     apply .clang-format"

-include $(shell find build -name '*.d' 2>/dev/null)
