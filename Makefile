# qosim build. `make` builds build/libqosim.a and build/qosim; `make check`
# runs the whole suite (unit, CLI end-to-end, cachegrind comparisons, the same
# under ASan+UBSan, and a fuzz smoke run); `make help` lists the rest.

CC      ?= cc
CLANG   ?= clang
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
LDLIBS  = -llzma -lyaml -lm

LIB_SRC  := $(sort $(wildcard src/util/*.c src/sim/*.c src/sim/*/*.c src/hw/*.c src/drv/*.c))
CLI_SRC  := $(sort $(wildcard src/cli/*.c))
TEST_SRC := $(sort $(wildcard tests/unit/test_*.c))
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))

GEN_SRC  := build/gen/profiles.c
LIB_OBJ  := $(LIB_SRC:%.c=$(O)/%.o) $(O)/gen/profiles.o
CLI_OBJ  := $(CLI_SRC:%.c=$(O)/%.o)
TESTS    := $(TEST_SRC:tests/unit/%.c=$(O)/tests/%)
FUZZERS  := $(FUZZ_SRC:tests/fuzz/%.c=build/fuzz/%)

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

# libFuzzer harnesses: clang, with the library built in alongside.
build/fuzz/%: tests/fuzz/%.c $(LIB_SRC) $(GEN_SRC) $(wildcard tests/fuzz/*.h src/*/*.h src/*/*/*.h include/*.h)
	@mkdir -p $(dir $@)
	$(CLANG) -std=c11 -D_GNU_SOURCE -g -O1 -Iinclude -Isrc \
	  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	  -o $@ $< $(LIB_SRC) $(GEN_SRC) $(LDLIBS)

fuzz: $(FUZZERS)

# Everything: the suite in the normal build, again under sanitizers, then fuzzing.
check: all
	rm -f build/test-results
	tests/run.sh build
	$(MAKE) SAN=1 all
	tests/run.sh build/san
	$(MAKE) fuzz
	tests/fuzz/smoke.sh
	tests/summary.sh

test: all
	tests/run.sh $(O) && tests/summary.sh

test-san:
	$(MAKE) SAN=1 all && tests/run.sh build/san && tests/summary.sh

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
demo: all
	QOSIM=$(O)/qosim scripts/demo.sh

# Record a real program, replay it, compare with cachegrind.
demo-cachegrind: all
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
