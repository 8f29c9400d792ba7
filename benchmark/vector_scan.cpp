// Exact cosine top-50 in the C++ core alone: the int8 screen + exact rescore (CosineTopK)
// against scoring every vector exactly (CosineTopKExact), interleaved, one thread.
//
//   make build && g++ -O2 -std=c++17 -Isrc benchmark/vector_scan.cpp build/libanatid_core.a -o /tmp/vector_scan
//   (make build also builds it, Release flags, as build/bench_vector_scan; the numbers in docs/ come from the g++ line)
//   /tmp/vector_scan 100000 384 50      # rows, dim, queries
//   /tmp/vector_scan 100000 384 50 iid  # i.i.d. Gaussian rows (as hybrid_recall.py --dim384)
//
// Data: 256 Gaussian centres plus noise (as benchmark/hybrid_recall.py's 64-d data), or
// i.i.d. N(0, 1) rows with `iid`; random Gaussian queries. Checks that both return the same ids and scores before printing p50s.
#include "vector.hpp"
#include "vector_data.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace anatid;

int main(int argc, char **argv) {
	const size_t n = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 100000;
	const size_t dim = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 384;
	const size_t queries = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 50;
	const bool iid = argc > 4 && std::string(argv[4]) == "iid";
	vector_data::Rng rng(7);
	vector_data::Gauss gauss(0.0f, 1.0f);
	const std::vector<float> rows =
	    vector_data::ClusteredRows(rng, gauss, n, dim, 256, 0.5f, iid, vector_data::CentrePick::kUniform);
	const std::vector<double> norms = vector_data::RowNorms(rows, dim);
	std::vector<int64_t> ids(n), vf(n, 0), vt(n, kOpenEnd);
	for (size_t i = 0; i < n; i++) {
		ids[i] = int64_t(i + 1);
	}
	auto gen = VectorGeneration::FromRows(dim, ids, vf, vt, norms, rows);
	std::vector<double> t_screen, t_exact, rescored;
	for (size_t qi = 0; qi < queries; qi++) {
		const std::vector<double> q = vector_data::GaussianQuery(rng, gauss, dim);
		CosineInput in;
		in.base = gen.get();
		in.query = q.data();
		in.dim = dim;
		in.query_norm = vector_data::Norm(q.data(), dim);
		in.valid_at = 1;
		in.depth = 50;
		auto t0 = std::chrono::steady_clock::now();
		auto a = CosineTopK(in);
		auto t1 = std::chrono::steady_clock::now();
		rescored.push_back(double(LastCosineRescored()));
		auto b = CosineTopKExact(in);
		auto t2 = std::chrono::steady_clock::now();
		if (a.size() != b.size()) {
			std::fprintf(stderr, "MISMATCH in size\n");
			return 1;
		}
		for (size_t i = 0; i < a.size(); i++) {
			if (a[i].id != b[i].id || a[i].score != b[i].score) {
				std::fprintf(stderr, "MISMATCH at query %zu rank %zu\n", qi, i);
				return 1;
			}
		}
		t_screen.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
		t_exact.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
	}
	auto p50 = [](std::vector<double> v) {
		std::sort(v.begin(), v.end());
		return v[v.size() / 2];
	};
	std::printf("{\"rows\": %zu, \"dim\": %zu, \"data\": \"%s\", \"queries\": %zu, \"depth\": 50, \"identical\": true, "
	            "\"screen_rescore_p50_ms\": %.3f, \"exact_p50_ms\": %.3f, \"rescored_p50\": %.0f}\n",
	            n, dim, iid ? "iid" : "clustered", queries, p50(t_screen), p50(t_exact), p50(rescored));
	return 0;
}
