# Stable verbs: make (build), make test, make bench, make format, make clean.
# The DuckDB we build against (vendored headers, smoke job) is pinned here and in
# extension/refresh_headers.sh.
DUCKDB_VERSION := 1.5.5

PYTHON ?= python3
BUILD_DIR ?= build
EXTENSION := $(BUILD_DIR)/anatid.duckdb_extension
CLANG_FORMAT ?= $(shell command -v clang-format 2>/dev/null)
FORMAT_SOURCES = $(wildcard src/*.cpp src/*.hpp extension/*.cpp extension/*.hpp test/cpp/*.cpp test/cpp/*.hpp)

.PHONY: all build test test-cpp test-python bench bench-smoke bench-graph bench-hybrid bench-writes bench-ann format clean headers

all: build

# Configure + build (extension and C++ tests), then link the binary into the
# package so an editable/dev checkout (PYTHONPATH=python) loads the fresh build.
build:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DANATID_BUILD_TESTS=ON -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD_DIR)
	ln -sf $(abspath $(EXTENSION)) python/anatid/anatid.duckdb_extension

test: test-cpp test-python

test-cpp: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure

# The same command the README gives; PYTHONPATH makes it use this checkout.
test-python: build
	PYTHONPATH=python $(PYTHON) -m pytest -q test

# Every benchmark side by side per engine, then the charts docs/benchmarks.md embeds.
bench: build bench-graph bench-hybrid bench-writes bench-ann
	PYTHONPATH=python $(PYTHON) -m benchmark.charts

# CI-sized, ids only: graph_2hop and hybrid_recall at 100k memories (scale 0.1), every anatid
# engine against the SQL oracle; exits nonzero on a mismatch and writes nothing to
# benchmark/results (.ci/run runs it; about 25-40 s on 2 cores).
bench-smoke: build
	PYTHONPATH=python $(PYTHON) -m benchmark.smoke

# Graph recall side by side (native, SQL oracle, LadybugDB) at 100k and 1M memories;
# CI runs only the ids check of make bench-smoke.
bench-graph: build
	PYTHONPATH=python $(PYTHON) -m benchmark.graph_2hop --scale 0.1
	PYTHONPATH=python $(PYTHON) -m benchmark.graph_2hop --scale 1

format:
ifeq ($(CLANG_FORMAT),)
	@echo "clang-format not found; install it (apt-get install clang-format) to format C++ sources"
else
	$(CLANG_FORMAT) -i $(FORMAT_SOURCES)
endif

# Re-vendor extension/include from the PyPI sdist of DuckDB $(DUCKDB_VERSION).
headers:
	extension/refresh_headers.sh $(DUCKDB_VERSION)

clean:
	rm -rf $(BUILD_DIR) dist _skbuild
	rm -f python/anatid/anatid.duckdb_extension

bench-hybrid: build
	PYTHONPATH=python $(PYTHON) -m benchmark.hybrid_recall --scale 0.1 --keep-journal
	PYTHONPATH=python $(PYTHON) -m benchmark.hybrid_recall --scale 1 --queries 100 --keep-journal

bench-writes: build
	PYTHONPATH=python $(PYTHON) benchmark/writes.py --large

# The opt-in ANN index against the exact scan at 100k rows per tenant, 64-d and 384-d
# on clustered and on i.i.d. normal data (benchmark/results/ann.json, ann_normal.json;
# python -m benchmark.ann --smoke for a 5k-row check).
bench-ann: build
	PYTHONPATH=python $(PYTHON) -m benchmark.ann
	PYTHONPATH=python $(PYTHON) -m benchmark.ann --data normal
