// The HNSW build (src/hnsw.hpp) on one thread against several, interleaved, in the C++ core
// alone: wall and process CPU seconds per build, and a check that every build gives the same
// bytes (the thread count must never change the index).
//
//   make build && g++ -O2 -std=c++17 -Isrc benchmark/ann_build.cpp build/libanatid_core.a -pthread -o /tmp/ann_build
//   (make build also builds it, Release flags, as build/bench_ann_build; the numbers in docs/ come from the g++ line)
//   /tmp/ann_build 100000 384 clustered 2 2   # rows, dim, clustered|iid, threads, rounds
//
// Data as benchmark/ann.py: 256 Gaussian centres N(0, 1) plus N(0, 1) noise per row, or i.i.d.
// N(0, 1) rows with `iid`. m = 16, ef_construction = 200, seed 42 (build_ann_index's defaults).
// Prints one JSON object (benchmark/results/ann_build.json holds a run).
#include "hnsw.hpp"
#include "vector_data.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

using namespace anatid;

int main(int argc, char **argv) {
	const size_t n = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 100000;
	const size_t dim = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 384;
	const bool iid = argc > 3 && std::string(argv[3]) == "iid";
	const uint32_t threads = argc > 4 ? uint32_t(std::strtoul(argv[4], nullptr, 10)) : 2;
	const int rounds = argc > 5 ? std::atoi(argv[5]) : 2;
	vector_data::Rng rng(20261202);
	vector_data::Gauss gauss(0.0f, 1.0f);
	const std::vector<float> vectors =
	    vector_data::ClusteredRows(rng, gauss, n, dim, 256, 1.0f, iid, vector_data::CentrePick::kLowBits);
	const std::vector<double> norms = vector_data::RowNorms(vectors, dim);
	std::vector<HnswRow> rows(n);
	for (size_t i = 0; i < n; i++) {
		rows[i] = HnswRow {int64_t(i + 1), 0, INT64_MAX, norms[i]};
	}
	std::string first;
	std::vector<double> wall[2], cpu[2];
	HnswCalibration calibration;
	for (int r = 0; r < rounds; r++) {
		for (int k = 0; k < 2; k++) {
			const uint32_t t = k == 0 ? 1 : threads;
			const auto w0 = std::chrono::steady_clock::now();
			const std::clock_t c0 = std::clock(); // process CPU time, every thread
			auto index = HnswIndex::Build(dim, rows, vectors, HnswParams {16, 200, 42, t});
			cpu[k].push_back(double(std::clock() - c0) / CLOCKS_PER_SEC);
			wall[k].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count());
			const std::string blob = index->Serialize();
			if (first.empty()) {
				first = blob;
				calibration = index->Calibration();
			} else if (blob != first) {
				std::fprintf(stderr, "MISMATCH: %u threads gave other bytes\n", t);
				return 1;
			}
			std::fprintf(stderr, "round %d, %u thread(s): %.1f s wall, %.1f s CPU\n", r + 1, t, wall[k].back(),
			             cpu[k].back());
		}
	}
	auto list = [](const std::vector<double> &v) {
		std::string s = "[";
		char buf[32];
		for (size_t i = 0; i < v.size(); i++) {
			std::snprintf(buf, sizeof(buf), "%s%.2f", i ? ", " : "", v[i]);
			s += buf;
		}
		return s + "]";
	};
	double load[3] = {0, 0, 0};
	if (FILE *f = std::fopen("/proc/loadavg", "r")) {
		if (std::fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3) {
			load[0] = load[1] = load[2] = -1;
		}
		std::fclose(f);
	}
	std::printf("{\"rows\": %zu, \"dim\": %zu, \"data\": \"%s\", \"m\": 16, \"ef_construction\": 200, "
	            "\"identical_bytes\": true, \"threads\": %u, \"wall_s_1_thread\": %s, \"wall_s_threads\": %s, "
	            "\"cpu_s_1_thread\": %s, \"cpu_s_threads\": %s, \"calibrated_ef\": [%u, %u], "
	            "\"loadavg_at_end\": [%.2f, %.2f, %.2f]}\n",
	            n, dim, iid ? "iid" : "clustered", threads, list(wall[0]).c_str(), list(wall[1]).c_str(),
	            list(cpu[0]).c_str(), list(cpu[1]).c_str(), calibration.at[0].ef, calibration.at[1].ef, load[0],
	            load[1], load[2]);
	return 0;
}
