# MPIFT Makefile: a thin wrapper over cargo, cmake and the MPI compiler wrappers.
#
#   make [MPI=mpich|openmpi|ompi5 | MPICC=/path/to/mpicc]   build libmpift.a
#   make MPI_Test_ft / make MPI_Test_regular           thesis test program, with / without MPIFT
#   make demo                                           run the demo (examples/master_worker.cpp)
#   make test                                           every test, on MPICH and Open MPI
#   make campaign [MPI=...]                            every kill point of ft_loop, master_worker, MPI_Test_ft (+200 pairs), loaded, nonblocking
#   make memcheck [MPI=...]                            examples/ulfm under valgrind (tests/valgrind/run.sh)
#   make mpi4py [MPI=openmpi|mpich]                   mpi4py's test suite with MPIFT vs plain (scripts/mpi4py.sh)
#   make mpi4py-plain [MPI=...]                        rewrite tests/mpi4py/plain-<mpi>.txt (the reference)
#   make coverage [MPI=...]                             MPI functions redirected, measured on mpi.h
#   make bench [QUICK=1]                                benchmarks -> bench/results/ (not part of test)
#   make bench-calls [MPI=...] [BASE=rev]               callgrind instructions per call: working tree vs BASE
#   make install PREFIX=/usr/local                      headers, library, CMake package, pkg-config
#
# Default MPI: the system `mpicc` (Open MPI on Debian when both are installed).

MPI ?=
ifeq ($(MPI),mpich)
  MPICC ?= mpicc.mpich
  MPICXX ?= mpicxx.mpich
  MPIEXEC ?= mpiexec.mpich
  MPI_PC ?= mpich
else ifeq ($(MPI),openmpi)
  MPICC ?= mpicc.openmpi
  MPICXX ?= mpicxx.openmpi
  MPIEXEC ?= mpiexec.openmpi
  MPI_PC ?= ompi-c
else ifeq ($(MPI),ompi5)
  # Open MPI 5 from PyPI in a venv (scripts/ompi5.sh installs it on first use).
  OMPI5_PREFIX := $(shell scripts/ompi5.sh)
  MPICC ?= $(OMPI5_PREFIX)/bin/mpicc
  MPICXX ?= $(OMPI5_PREFIX)/bin/mpicxx
  MPIEXEC ?= $(OMPI5_PREFIX)/bin/mpiexec
  MPI_PC ?=
else
  MPICC ?= mpicc
  MPICXX ?= $(patsubst %mpicc,%mpicxx,$(MPICC))
  MPIEXEC ?= $(patsubst %mpicc,%mpiexec,$(MPICC))
  MPI_PC ?=
endif
# One cargo target directory per MPI: mpi-sys does not notice a changed $MPICC.
BUILD_NAME := $(if $(MPI),$(MPI),$(subst /,_,$(MPICC)))
TARGET_DIR := $(CURDIR)/target/$(BUILD_NAME)
LIB        := $(TARGET_DIR)/release/libmpift.a
CONFIG_INC := $(TARGET_DIR)/release/include
OUT        := $(CURDIR)/build-out/$(BUILD_NAME)
PREFIX     ?= /usr/local
NP         ?= 4
DEMO_NP    ?= 5
TIMEOUT    ?= 120
# System libraries a static Rust library needs (checked against rustc by scripts/run-tests.sh).
RUST_LIBS  := -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
# Run mpiexec as root (containers, CI) and beyond the core count: Open MPI refuses
# without these (PRTE_*: Open MPI 5's launcher).
export OMPI_ALLOW_RUN_AS_ROOT := 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM := 1
export OMPI_MCA_rmaps_base_oversubscribe := 1
export PRTE_MCA_rmaps_default_mapping_policy ?= :oversubscribe
MPIRUN     := timeout -k 10 $(TIMEOUT) $(MPIEXEC) -n
FT_FLAGS   := -Iinclude/compat -Iinclude -I$(CONFIG_INC)
CXXFLAGS   ?= -O2 -g -Wall -Wextra
SOURCES    := $(shell find src build cpp -type f) Cargo.toml build.rs cbindgen.toml

.PHONY: all lib deps campaign memcheck mpi4py mpi4py-plain MPI_Test_ft MPI_Test_regular demo demo-run test coverage bench bench-calls install headers-check clean

all: lib

deps:
	@scripts/install-deps.sh

lib: $(LIB)

# The static library alone: with the rlib beside it (Cargo.toml's crate-type, for
# the Rust tests) cargo leaves `lto = true` off; built alone it is on, and the
# failure-free path runs 5-10 % fewer instructions (bench/callgrind.sh).
$(LIB): $(SOURCES)
	MPICC=$(MPICC) CARGO_TARGET_DIR=$(TARGET_DIR) cargo rustc --release --quiet --lib --crate-type staticlib
	@touch $@

$(OUT):
	@mkdir -p $@

# Thesis section 5.6: the same test program with and without the layer.
MPI_Test_ft: $(LIB) | $(OUT)
	$(MPICXX) $(CXXFLAGS) $(FT_FLAGS) examples/MPI_Test.cpp -o $(OUT)/MPI_Test_ft $(LIB) $(RUST_LIBS)
	@echo "built $(OUT)/MPI_Test_ft; run: $(MPIEXEC) -n $(NP) $(OUT)/MPI_Test_ft"

MPI_Test_regular: | $(OUT)
	$(MPICXX) $(CXXFLAGS) examples/MPI_Test.cpp -o $(OUT)/MPI_Test_regular
	@echo "built $(OUT)/MPI_Test_regular; run: $(MPIEXEC) -n $(NP) $(OUT)/MPI_Test_regular"

demo: deps
	@$(MAKE) --no-print-directory MPI=$(or $(MPI),openmpi) demo-run

demo-run: $(LIB) | $(OUT)
	$(MPICXX) $(CXXFLAGS) $(FT_FLAGS) examples/master_worker.cpp -o $(OUT)/master_worker $(LIB) $(RUST_LIBS)
	$(MPIRUN) $(DEMO_NP) $(OUT)/master_worker

# Every test: Rust unit/protocol tests, then the MPI-level suite on each MPI.
TEST_MPIS ?= mpich openmpi ompi5
test: deps
	@scripts/run-tests.sh $(TEST_MPIS)

# Exhaustive kill-point campaigns (docs/CAMPAIGN.md), on MPI (default: mpich and
# openmpi); results and PNG matrices in build-out/<mpi>/campaign/. Then the long
# runs make test samples: 40 kill points a program on a loaded machine
# (tests/campaign/loaded.sh) and examples/ulfm with MPIFT_COLLECTIVES=nonblocking.
CAMPAIGN_MPIS ?= $(or $(MPI),mpich openmpi)
campaign: deps
	@rc=0; for m in $(CAMPAIGN_MPIS); do $(MAKE) --no-print-directory lib MPI=$$m && tests/campaign/liveness.sh $$m full || rc=1; \
	  LOADED_SAMPLE=40 tests/campaign/loaded.sh $$m || rc=1; tests/campaign/nonblocking.sh $$m || rc=1; done; exit $$rc

# Every examples/ulfm program under valgrind's memcheck at 4 ranks (not in make test:
# 10-30 s per program); logs in build-out/<mpi>/valgrind/.
memcheck: deps
	@scripts/install-deps.sh valgrind
	@rc=0; for m in $(CAMPAIGN_MPIS); do $(MAKE) --no-print-directory lib MPI=$$m && tests/valgrind/run.sh $$m 4 || rc=1; done; exit $$rc

# mpi4py 4.1.2 built with MPIFT, its whole test suite at 1 and 2 ranks (test_ulfm also
# at 4) against the outcomes of plain mpi4py in tests/mpi4py/plain-<mpi>.txt, and
# examples/python/ulfm_loop.py with deaths (docs/PYTHON.md; not in make test yet).
# mpi4py-plain: run plain mpi4py and rewrite that file. Open MPI unless MPI=mpich.
mpi4py: deps
	@scripts/install-deps.sh python3-venv python3-dev
	@scripts/mpi4py.sh mpift $(or $(MPI),openmpi)

mpi4py-plain: deps
	@scripts/install-deps.sh python3-venv python3-dev
	@scripts/mpi4py.sh plain $(or $(MPI),openmpi)

# MPI coverage: the real mpi.h against the redirect header (prints the figure).
coverage:
	MPICC=$(MPICC) CARGO_TARGET_DIR=$(TARGET_DIR) cargo test --release --quiet --test coverage -- --nocapture

# Benchmarks (bench/README.md): failure-free tests 1-5 MPIFT vs plain MPI, failure
# path MPIFT vs Open MPI 5 ULFM, accounting, plots. Open MPI unless MPI=mpich.
# QUICK=1: fewer sizes and repetitions (under 3 minutes), same outputs.
BENCH_NPS ?= 2 4
bench: deps
	@scripts/install-deps.sh gnuplot-nox
	bench/run.sh $(if $(filter 1,$(QUICK)),--quick) --mpi $(or $(MPI),openmpi) --nps "$(BENCH_NPS)"

# Per-call instruction counts under callgrind (bench/callgrind.sh): tests 1-5 and
# Irecv+Isend+Waitall at 1 int, plain / MPIFT at BASE (default 015567b) / the working
# tree, on MPICH and Open MPI unless MPI= names one; build-out/callgrind/<mpi>.md.
bench-calls: deps
	@scripts/install-deps.sh valgrind
	bench/callgrind.sh $(if $(MPI),--mpi $(MPI)) $(if $(BASE),--base $(BASE))

install: $(LIB)
	scripts/install.sh "$(PREFIX)" "$(LIB)" "$(CONFIG_INC)/mpift_config.h" "$(MPICC)" "$(MPICXX)" "$(MPIEXEC)" "$(MPI_PC)" "$(RUST_LIBS)"

# The checked-in generated headers must equal what the build produces.
headers-check: $(LIB)
	git diff --exit-code -- include/MPI-FT.h include/MPI-FT_redefine.h

clean:
	rm -rf target build-out
