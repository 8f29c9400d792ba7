#include "hnsw.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <exception>
#include <mutex>
#include <numeric>
#include <queue>
#include <random>
#include <stdexcept>
#include <system_error>
#include <thread>

namespace anatid {

namespace {

constexpr char kMagic[8] = {'A', 'N', 'A', 'H', 'N', 'S', 'W', '_'};
constexpr uint32_t kFormatVersion = 2;
constexpr int kMaxLevel = 48;
constexpr size_t kLanes = 8;

// Eight independent partial sums: the compiler vectorizes the lane loop without being
// allowed to reassociate anything, so every clone computes the same floats (no FMA: a fused
// multiply-add rounds differently, and the graph must not depend on the CPU). These
// similarities only pick candidates. (32 lanes in four registers was measured slower: a
// random row read costs far more than the adds, and 64-d rows lost the 8-wide tail.)
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
__attribute__((target_clones("avx2", "default")))
#endif
float Dot(const float *a, const float *b, size_t dim) {
	float acc[kLanes] = {0, 0, 0, 0, 0, 0, 0, 0};
	size_t d = 0;
	for (; d + kLanes <= dim; d += kLanes) {
		for (size_t j = 0; j < kLanes; j++) {
			acc[j] += a[d + j] * b[d + j];
		}
	}
	float s = 0;
	for (; d < dim; d++) {
		s += a[d] * b[d];
	}
	for (size_t j = 0; j < kLanes; j++) {
		s += acc[j];
	}
	return s;
}

// The first cache lines of a row (the hardware prefetcher follows the rest).
inline void Prefetch(const float *row, size_t dim) {
#if defined(__GNUC__)
	const char *p = reinterpret_cast<const char *>(row);
	const size_t lines = std::min<size_t>((dim * sizeof(float) + 63) / 64, 4);
	for (size_t l = 0; l < lines; l++) {
		__builtin_prefetch(p + 64 * l);
	}
#else
	(void)row;
	(void)dim;
#endif
}

// Best first: higher similarity, then lower row index (a total order, so builds are reproducible).
bool Better(const HnswCandidate &a, const HnswCandidate &b) {
	return a.similarity > b.similarity || (a.similarity == b.similarity && a.row < b.row);
}
struct WorseOnTop { // priority_queue whose top is the worst kept result
	bool operator()(const HnswCandidate &a, const HnswCandidate &b) const {
		return Better(a, b);
	}
};
struct BestOnTop {
	bool operator()(const HnswCandidate &a, const HnswCandidate &b) const {
		return Better(b, a);
	}
};

// Visited marks reused across searches on one thread (a search never runs on two).
struct Visited {
	std::vector<uint32_t> tag;
	uint32_t epoch = 0;
	void Reset(size_t n) {
		if (tag.size() < n) {
			tag.assign(n, 0);
			epoch = 0;
		}
		if (++epoch == 0) {
			std::fill(tag.begin(), tag.end(), 0);
			epoch = 1;
		}
	}
	bool Visit(uint32_t i) {
		if (tag[i] == epoch) {
			return false;
		}
		tag[i] = epoch;
		return true;
	}
};

Visited &ThreadVisited() {
	thread_local Visited visited;
	return visited;
}

float InvNorm(double norm) {
	return norm > 0 && std::isfinite(norm) ? static_cast<float>(1.0 / norm) : 0.0f;
}

// fn(i) for i in [0, count) on up to `threads` threads. Each i writes only its own slot, so
// the result never depends on the schedule; the first exception is rethrown here.
template <class F>
void ParallelFor(size_t count, size_t threads, F &&fn) {
	threads = std::min(threads, count);
	if (threads <= 1) {
		for (size_t i = 0; i < count; i++) {
			fn(i);
		}
		return;
	}
	std::atomic<size_t> next {0};
	std::exception_ptr error;
	std::mutex error_mutex;
	auto work = [&]() {
		try {
			for (size_t i = next++; i < count; i = next++) {
				fn(i);
			}
		} catch (...) {
			std::lock_guard<std::mutex> lock(error_mutex);
			if (!error) {
				error = std::current_exception();
			}
			next = count;
		}
	};
	std::vector<std::thread> pool;
	pool.reserve(threads - 1);
	for (size_t t = 1; t < threads; t++) {
		try {
			pool.emplace_back(work);
		} catch (const std::system_error &) { // no thread to be had: fewer do the same work
			break;
		}
	}
	work();
	for (std::thread &t : pool) {
		t.join();
	}
	if (error) {
		std::rethrow_exception(error);
	}
}

size_t BuildThreads(uint32_t requested) {
	if (requested > 0) {
		return requested;
	}
	const unsigned hw = std::thread::hardware_concurrency();
	return hw == 0 ? 1 : std::min<size_t>(hw, 16);
}

// The candidates recall() asks for at a depth (python/anatid/indexes/ann.py, plan()).
uint32_t CandidatesFor(uint32_t depth) {
	return std::max(2 * depth, depth + 50);
}

// ---- blob writing / reading -----------------------------------------------------------

template <class T>
void Put(std::string &out, const T &value) {
	out.append(reinterpret_cast<const char *>(&value), sizeof(T));
}

template <class T>
void PutArray(std::string &out, const std::vector<T> &values) {
	if (!values.empty()) {
		out.append(reinterpret_cast<const char *>(values.data()), values.size() * sizeof(T));
	}
}

uint64_t Fnv1a(std::string_view bytes) {
	uint64_t h = 1469598103934665603ULL;
	for (unsigned char c : bytes) {
		h = (h ^ c) * 1099511628211ULL;
	}
	return h;
}

struct Reader {
	std::string_view blob;
	size_t at = 0;
	template <class T>
	T Get(const char *what) {
		T value;
		Need(sizeof(T), what);
		std::memcpy(&value, blob.data() + at, sizeof(T));
		at += sizeof(T);
		return value;
	}
	template <class T>
	void Array(std::vector<T> &out, uint64_t count, const char *what) {
		if (count > (blob.size() - at) / sizeof(T)) {
			throw std::runtime_error(std::string("ANN blob: truncated in ") + what);
		}
		out.resize(count);
		if (count) {
			std::memcpy(out.data(), blob.data() + at, count * sizeof(T));
		}
		at += count * sizeof(T);
	}
	void Need(size_t bytes, const char *what) const {
		if (blob.size() - at < bytes) {
			throw std::runtime_error(std::string("ANN blob: truncated in ") + what);
		}
	}
};

} // namespace

float HnswIndex::Similarity(const float *q, uint32_t row) const {
	return Dot(q, Vector(row), dim_) * inv_norms_[row];
}

const int32_t *HnswIndex::Links(uint32_t row, int level) const {
	if (level == 0) {
		return links0_.data() + static_cast<size_t>(row) * (1 + 2 * params_.m);
	}
	return upper_.data() + upper_at_[row] + static_cast<size_t>(level - 1) * (1 + params_.m);
}

int32_t *HnswIndex::MutableLinks(uint32_t row, int level) {
	return const_cast<int32_t *>(Links(row, level));
}

void HnswIndex::FinishLayout() {
	const size_t n = rows_.size();
	inv_norms_.resize(n);
	upper_at_.assign(n + 1, 0);
	for (size_t i = 0; i < n; i++) {
		inv_norms_[i] = InvNorm(rows_[i].norm);
		upper_at_[i + 1] = upper_at_[i] + static_cast<uint64_t>(levels_[i]) * (1 + params_.m);
	}
}

void HnswIndex::SearchLayer(const float *q, std::vector<HnswCandidate> &entry, size_t ef, int level,
                            std::vector<HnswCandidate> &out, size_t *evaluations) const {
	size_t evaluated = 0;
	Visited &visited = ThreadVisited();
	visited.Reset(rows_.size());
	std::priority_queue<HnswCandidate, std::vector<HnswCandidate>, BestOnTop> frontier;
	std::priority_queue<HnswCandidate, std::vector<HnswCandidate>, WorseOnTop> kept;
	for (const HnswCandidate &c : entry) {
		if (visited.Visit(c.row)) {
			frontier.push(c);
			kept.push(c);
			if (kept.size() > ef) {
				kept.pop();
			}
		}
	}
	while (!frontier.empty()) {
		const HnswCandidate current = frontier.top();
		if (kept.size() >= ef && Better(kept.top(), current)) {
			break; // nothing left in the frontier can improve the kept set
		}
		frontier.pop();
		const int32_t *links = Links(current.row, level);
		// the rows are random reads: ask for each neighbour's vector ahead of its turn
		for (int32_t k = 1; k <= links[0]; k++) {
			Prefetch(Vector(static_cast<uint32_t>(links[k])), dim_);
		}
		for (int32_t k = 1; k <= links[0]; k++) {
			const uint32_t next = static_cast<uint32_t>(links[k]);
			if (!visited.Visit(next)) {
				continue;
			}
			const HnswCandidate c {next, Similarity(q, next)};
			evaluated++;
			if (kept.size() < ef || Better(c, kept.top())) {
				frontier.push(c);
				kept.push(c);
				if (kept.size() > ef) {
					kept.pop();
				}
			}
		}
	}
	if (evaluations) {
		*evaluations += evaluated;
	}
	out.clear();
	out.reserve(kept.size());
	while (!kept.empty()) {
		out.push_back(kept.top());
		kept.pop();
	}
	std::reverse(out.begin(), out.end()); // best first
}

// The heuristic of the HNSW paper (Malkov & Yashunin, algorithm 4): keep a candidate only
// if it is closer to the base than to every neighbour kept so far, which spreads links
// across clusters.
void HnswIndex::SelectNeighbors(std::vector<HnswCandidate> &cands, size_t keep) const {
	std::sort(cands.begin(), cands.end(), Better);
	if (cands.size() <= keep) {
		return;
	}
	std::vector<HnswCandidate> chosen;
	chosen.reserve(keep);
	std::vector<float> unit(dim_);
	for (const HnswCandidate &c : cands) {
		if (chosen.size() >= keep) {
			break;
		}
		const float *v = Vector(c.row);
		for (size_t d = 0; d < dim_; d++) {
			unit[d] = v[d] * inv_norms_[c.row];
		}
		bool good = true;
		for (const HnswCandidate &r : chosen) {
			if (Similarity(unit.data(), r.row) > c.similarity) {
				good = false;
				break;
			}
		}
		if (good) {
			chosen.push_back(c);
		}
	}
	cands = std::move(chosen);
}

void HnswIndex::Connect(uint32_t from, uint32_t to, int level) {
	int32_t *links = MutableLinks(from, level);
	const uint32_t slots = Slots(level);
	for (int32_t k = 1; k <= links[0]; k++) {
		if (static_cast<uint32_t>(links[k]) == to) {
			return;
		}
	}
	if (static_cast<uint32_t>(links[0]) < slots) {
		links[1 + links[0]] = static_cast<int32_t>(to);
		links[0]++;
		return;
	}
	std::vector<float> unit(dim_);
	const float *v = Vector(from);
	for (size_t d = 0; d < dim_; d++) {
		unit[d] = v[d] * inv_norms_[from];
	}
	std::vector<HnswCandidate> cands;
	cands.reserve(slots + 1);
	for (int32_t k = 1; k <= links[0]; k++) {
		cands.push_back({static_cast<uint32_t>(links[k]), Similarity(unit.data(), static_cast<uint32_t>(links[k]))});
	}
	cands.push_back({to, Similarity(unit.data(), to)});
	SelectNeighbors(cands, slots);
	links[0] = static_cast<int32_t>(cands.size());
	for (size_t k = 0; k < cands.size(); k++) {
		links[1 + k] = static_cast<int32_t>(cands[k].row);
	}
}

// From the entry point down to (not into) `level`: on each layer above it, move to the
// best neighbour until none is better. Build and search share it.
HnswCandidate HnswIndex::GreedyDescent(const float *q, int level) const {
	HnswCandidate cur {static_cast<uint32_t>(entry_), Similarity(q, static_cast<uint32_t>(entry_))};
	for (int l = max_level_; l > level; l--) {
		for (bool moved = true; moved;) {
			moved = false;
			const int32_t *links = Links(cur.row, l);
			for (int32_t k = 1; k <= links[0]; k++) {
				const HnswCandidate c {static_cast<uint32_t>(links[k]), Similarity(q, links[k])};
				if (Better(c, cur)) {
					cur = c;
					moved = true;
				}
			}
		}
	}
	return cur;
}

void HnswIndex::UnitVector(uint32_t row, std::vector<float> &out) const {
	out.resize(dim_);
	const float *v = Vector(row);
	for (size_t d = 0; d < dim_; d++) {
		out[d] = v[d] * inv_norms_[row];
	}
}

// Inserts batch[0..count) as the sequential build would, up to what rows of one batch know of
// each other. Phase 1 (parallel, the graph read only): each row descends and searches the graph
// as it stood before the batch, adds the batch's earlier rows as candidates by brute force, and
// selects its neighbours. Phase 2 (parallel per target): the link updates (row -> neighbour and
// neighbour -> row, in the order the sequential build makes them) are grouped by the list they
// change and applied in that order, so every list ends as it would sequentially. Phase 3: the
// entry point, in batch order.
void HnswIndex::InsertBatch(const uint32_t *batch, size_t count, size_t threads) {
	std::vector<std::vector<std::vector<HnswCandidate>>> chosen(count); // [row][level]
	ParallelFor(count, threads, [&](size_t i) {
		const uint32_t row = batch[i];
		const int level = levels_[row];
		std::vector<float> q;
		UnitVector(row, q);
		std::vector<std::vector<HnswCandidate>> &per_level = chosen[i];
		per_level.assign(static_cast<size_t>(level) + 1, {});
		if (entry_ >= 0) {
			std::vector<HnswCandidate> entry {GreedyDescent(q.data(), level)}, found;
			for (int l = std::min(level, max_level_); l >= 0; l--) {
				SearchLayer(q.data(), entry, params_.ef_construction, l, found);
				entry = found;
				per_level[l] = found;
			}
		}
		for (size_t j = 0; j < i; j++) {
			const uint32_t other = batch[j];
			const int top = std::min(level, levels_[other]);
			if (top < 0) {
				continue;
			}
			const HnswCandidate c {other, Similarity(q.data(), other)};
			for (int l = 0; l <= top; l++) {
				per_level[l].push_back(c);
			}
		}
		for (std::vector<HnswCandidate> &cands : per_level) {
			std::sort(cands.begin(), cands.end(), Better);
			if (cands.size() > params_.ef_construction) {
				cands.resize(params_.ef_construction);
			}
			SelectNeighbors(cands, params_.m);
		}
	});
	struct Update {
		uint32_t target, add;
		int32_t level;
		uint32_t seq;
	};
	std::vector<Update> updates;
	for (size_t i = 0; i < count; i++) {
		for (int l = static_cast<int>(chosen[i].size()) - 1; l >= 0; l--) {
			for (const HnswCandidate &c : chosen[i][l]) {
				updates.push_back({batch[i], c.row, l, static_cast<uint32_t>(updates.size())});
				updates.push_back({c.row, batch[i], l, static_cast<uint32_t>(updates.size())});
			}
		}
	}
	std::sort(updates.begin(), updates.end(), [](const Update &a, const Update &b) {
		return a.target != b.target ? a.target < b.target : a.level != b.level ? a.level < b.level : a.seq < b.seq;
	});
	std::vector<size_t> starts;
	for (size_t u = 0; u < updates.size(); u++) {
		if (u == 0 || updates[u].target != updates[u - 1].target || updates[u].level != updates[u - 1].level) {
			starts.push_back(u);
		}
	}
	starts.push_back(updates.size());
	ParallelFor(starts.size() - 1, threads, [&](size_t g) {
		for (size_t u = starts[g]; u < starts[g + 1]; u++) {
			Connect(updates[u].target, updates[u].add, updates[u].level);
		}
	});
	for (size_t i = 0; i < count; i++) {
		if (levels_[batch[i]] > max_level_) {
			entry_ = static_cast<int32_t>(batch[i]);
			max_level_ = levels_[batch[i]];
		}
	}
}

std::vector<HnswCandidate> HnswIndex::SearchUnit(const float *q, size_t count, size_t ef,
                                                 size_t *evaluations) const {
	std::vector<HnswCandidate> out;
	if (entry_ < 0 || count == 0) {
		return out;
	}
	std::vector<HnswCandidate> entry {GreedyDescent(q, 0)};
	SearchLayer(q, entry, std::max(ef, count), 0, out, evaluations);
	if (out.size() > count) {
		out.resize(count);
	}
	return out;
}

// Each held-out row queries the graph of `graph` (the rows inserted so far), whose exact top 50
// comes from brute force with the same similarity. Per depth, ef climbs the ladder (x1.25 a
// step) until the recall over the held-out queries reaches the target or covers every row.
void HnswIndex::Calibrate(const std::vector<uint32_t> &held_out, const std::vector<uint32_t> &graph,
                          size_t threads) {
	constexpr size_t kTruth = 50;
	const size_t nq = held_out.size();
	std::vector<std::vector<float>> queries(nq);
	std::vector<std::vector<uint32_t>> truth(nq);
	ParallelFor(nq, threads, [&](size_t i) {
		UnitVector(held_out[i], queries[i]);
		std::vector<HnswCandidate> all;
		all.reserve(graph.size());
		for (uint32_t row : graph) {
			all.push_back({row, Similarity(queries[i].data(), row)});
		}
		const size_t keep = std::min(kTruth, all.size());
		std::partial_sort(all.begin(), all.begin() + keep, all.end(), Better);
		for (size_t k = 0; k < keep; k++) {
			truth[i].push_back(all[k].row);
		}
	});
	const uint32_t depths[2] = {10, 50};
	for (int d = 0; d < 2; d++) {
		HnswCalibration::Depth &at = calibration_.at[d];
		at.depth = depths[d];
		at.candidates = CandidatesFor(at.depth);
		const size_t all_rows = std::max<size_t>(graph.size(), at.candidates);
		// the deeper recall starts where the shallower one stopped (recall() searches a depth in
		// (10, 50] with the larger width anyway), which halves the calibration on hard data
		size_t ef = std::min(all_rows, std::max<size_t>(at.candidates, d > 0 ? calibration_.at[d - 1].ef : 0));
		for (;;) {
			std::vector<size_t> found10(nq), found_depth(nq), wanted10(nq), wanted_depth(nq), evaluated(nq);
			ParallelFor(nq, threads, [&](size_t i) {
				const auto hits = SearchUnit(queries[i].data(), at.candidates, ef, &evaluated[i]);
				std::vector<uint32_t> top10, top_depth;
				for (size_t k = 0; k < hits.size(); k++) {
					if (k < 10) {
						top10.push_back(hits[k].row);
					}
					if (k < at.depth) {
						top_depth.push_back(hits[k].row);
					}
				}
				std::sort(top10.begin(), top10.end());
				std::sort(top_depth.begin(), top_depth.end());
				for (size_t k = 0; k < truth[i].size(); k++) {
					if (k < 10) {
						wanted10[i]++;
						found10[i] += std::binary_search(top10.begin(), top10.end(), truth[i][k]);
					}
					if (k < at.depth) {
						wanted_depth[i]++;
						found_depth[i] += std::binary_search(top_depth.begin(), top_depth.end(), truth[i][k]);
					}
				}
			});
			auto ratio = [](const std::vector<size_t> &a, const std::vector<size_t> &b) {
				const size_t num = std::accumulate(a.begin(), a.end(), size_t(0));
				const size_t den = std::accumulate(b.begin(), b.end(), size_t(0));
				return den == 0 ? 1.0 : double(num) / double(den);
			};
			at.ef = static_cast<uint32_t>(ef);
			at.recall_at_10 = ratio(found10, wanted10);
			at.recall_at_depth = ratio(found_depth, wanted_depth);
			at.visited = ratio(evaluated, std::vector<size_t>(nq, graph.size())); // mean share of rows
			if ((at.recall_at_10 >= HnswCalibration::kTarget && at.recall_at_depth >= HnswCalibration::kTarget) ||
			    ef >= all_rows) {
				break;
			}
			ef = std::min(all_rows, std::max(ef + 1, ef + ef / 4));
		}
	}
	calibration_.queries = static_cast<uint32_t>(nq);
}

std::shared_ptr<const HnswIndex> HnswIndex::Build(size_t dim, std::vector<HnswRow> rows,
                                                  const std::vector<float> &vectors, const HnswParams &params) {
	if (dim == 0 || dim > 65536) {
		throw std::invalid_argument("ANN build: dimension must be 1..65536");
	}
	if (params.m < 2 || params.m > 256) {
		throw std::invalid_argument("ANN build: m must be 2..256");
	}
	if (params.ef_construction < 1) {
		throw std::invalid_argument("ANN build: ef_construction must be >= 1");
	}
	if (vectors.size() != rows.size() * dim) {
		throw std::invalid_argument("ANN build: " + std::to_string(vectors.size()) + " floats for " +
		                            std::to_string(rows.size()) + " rows of " + std::to_string(dim));
	}
	if (rows.size() > static_cast<size_t>(INT32_MAX) - 1) {
		throw std::invalid_argument("ANN build: too many rows");
	}
	auto index = std::make_shared<HnswIndex>();
	index->dim_ = dim;
	index->params_ = params;
	const size_t n = rows.size();
	std::vector<uint32_t> order(n);
	std::iota(order.begin(), order.end(), 0u);
	std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return rows[a].id < rows[b].id; });
	for (size_t i = 1; i < n; i++) {
		if (rows[order[i]].id == rows[order[i - 1]].id) {
			throw std::invalid_argument("ANN build: memory id " + std::to_string(rows[order[i]].id) +
			                            " appears twice");
		}
	}
	index->rows_.resize(n);
	index->vectors_.resize(n * dim);
	for (size_t i = 0; i < n; i++) {
		index->rows_[i] = rows[order[i]];
		std::memcpy(index->vectors_.data() + i * dim, vectors.data() + static_cast<size_t>(order[i]) * dim,
		            dim * sizeof(float));
	}
	std::mt19937_64 rng(params.seed);
	const double ml = 1.0 / std::log(static_cast<double>(params.m));
	index->levels_.resize(n);
	for (size_t i = 0; i < n; i++) {
		const double u = (static_cast<double>(rng() >> 11) + 1.0) * 0x1.0p-53; // (0, 1]
		index->levels_[i] = std::min(kMaxLevel, static_cast<int>(-std::log(u) * ml));
	}
	index->FinishLayout();
	index->links0_.assign(n * (1 + 2 * params.m), 0);
	index->upper_.assign(index->upper_at_[n], 0);
	// Held out: a stride sample in id order, inserted after the calibration that queries with it.
	const size_t n_held = n < 1000 ? 0 : std::min<size_t>(HnswCalibration::kMaxQueries, n / 10);
	std::vector<char> held(n, 0);
	std::vector<uint32_t> graph, held_out;
	for (size_t j = 0; j < n_held; j++) {
		held[(2 * j + 1) * n / (2 * n_held)] = 1;
	}
	for (size_t i = 0; i < n; i++) {
		(held[i] ? held_out : graph).push_back(static_cast<uint32_t>(i));
	}
	const size_t threads = BuildThreads(params.threads);
	// Batches grow with the graph (a batch's rows do not see each other's links, only each
	// other), and their bounds depend on the row count alone, never on the thread count.
	size_t inserted = 0;
	auto insert_all = [&](const std::vector<uint32_t> &rows) {
		for (size_t at = 0; at < rows.size();) {
			const size_t batch = std::min(rows.size() - at, std::clamp<size_t>(inserted / 16, 1, 256));
			index->InsertBatch(rows.data() + at, batch, threads);
			at += batch;
			inserted += batch;
		}
	};
	insert_all(graph);
	if (n_held > 0) {
		index->Calibrate(held_out, graph, threads);
	} else {
		const uint32_t depths[2] = {10, 50};
		for (int d = 0; d < 2; d++) {
			const uint32_t cands = CandidatesFor(depths[d]);
			index->calibration_.at[d] = {depths[d], cands, static_cast<uint32_t>(std::max<size_t>(n, cands)), 0, 0, 1};
		}
	}
	insert_all(held_out);
	return index;
}

std::vector<HnswCandidate> HnswIndex::Search(const double *query, size_t count, size_t ef) const {
	if (entry_ < 0 || count == 0) {
		return {};
	}
	double qn = 0;
	for (size_t d = 0; d < dim_; d++) {
		qn += query[d] * query[d];
	}
	qn = std::sqrt(qn);
	if (!(qn > 0) || !std::isfinite(qn)) {
		return {};
	}
	std::vector<float> q(dim_);
	for (size_t d = 0; d < dim_; d++) {
		q[d] = static_cast<float>(query[d] / qn);
	}
	return SearchUnit(q.data(), count, ef);
}

size_t HnswIndex::MemoryBytes() const {
	return vectors_.size() * sizeof(float) + rows_.size() * (sizeof(HnswRow) + sizeof(float) + sizeof(int32_t) + 8) +
	       links0_.size() * sizeof(int32_t) + upper_.size() * sizeof(int32_t);
}

// ---- the blob --------------------------------------------------------------------------
// Little-endian (the hosts anatid builds for), in this order:
//   char[8] "ANAHNSW_", uint32 version, uint32 dim, uint64 n, uint32 m, uint32 ef_construction,
//   uint64 seed, uint32 calibration queries, 2 x (uint32 depth, uint32 candidates, uint32 ef,
//   double recall@10, double recall@depth, double visited), int32 entry, int32 max_level,
//   int64 ids[n], int64 vf[n], int64 vt[n], double norms[n], int32 levels[n],
//   float vectors[n * dim], int32 links0[n * (1 + 2m)], uint64 n_upper, int32 upper[n_upper],
//   uint64 FNV-1a of every byte before it.

std::string HnswIndex::Serialize() const {
	std::string out;
	const size_t n = rows_.size();
	out.reserve(64 + n * (36 + 4 * dim_) + (links0_.size() + upper_.size()) * 4);
	out.append(kMagic, sizeof(kMagic));
	Put(out, kFormatVersion);
	Put(out, static_cast<uint32_t>(dim_));
	Put(out, static_cast<uint64_t>(n));
	Put(out, params_.m);
	Put(out, params_.ef_construction);
	Put(out, params_.seed);
	Put(out, calibration_.queries);
	for (const HnswCalibration::Depth &at : calibration_.at) {
		Put(out, at.depth);
		Put(out, at.candidates);
		Put(out, at.ef);
		Put(out, at.recall_at_10);
		Put(out, at.recall_at_depth);
		Put(out, at.visited);
	}
	Put(out, entry_);
	Put(out, static_cast<int32_t>(max_level_));
	std::vector<int64_t> col(n);
	for (auto field : {&HnswRow::id, &HnswRow::vf, &HnswRow::vt}) {
		for (size_t i = 0; i < n; i++) {
			col[i] = rows_[i].*field;
		}
		PutArray(out, col);
	}
	std::vector<double> norms(n);
	for (size_t i = 0; i < n; i++) {
		norms[i] = rows_[i].norm;
	}
	PutArray(out, norms);
	PutArray(out, levels_);
	PutArray(out, vectors_);
	PutArray(out, links0_);
	Put(out, static_cast<uint64_t>(upper_.size()));
	PutArray(out, upper_);
	Put(out, Fnv1a(out));
	return out;
}

namespace {

// Magic, version and the fixed fields up to the entry point; r.at ends after them.
HnswInfo ReadHeader(Reader &r) {
	if (r.blob.size() < sizeof(kMagic) || std::memcmp(r.blob.data(), kMagic, sizeof(kMagic)) != 0) {
		throw std::runtime_error("ANN blob: not an anatid HNSW index (bad magic)");
	}
	r.at = sizeof(kMagic);
	HnswInfo info;
	info.version = r.Get<uint32_t>("header");
	if (info.version != kFormatVersion) {
		throw std::runtime_error("ANN blob: format version " + std::to_string(info.version) + ", this build reads " +
		                         std::to_string(kFormatVersion) + ": rebuild the index");
	}
	info.dim = r.Get<uint32_t>("header");
	info.rows = r.Get<uint64_t>("header");
	info.m = r.Get<uint32_t>("header");
	info.ef_construction = r.Get<uint32_t>("header");
	info.seed = r.Get<uint64_t>("header");
	info.calibration.queries = r.Get<uint32_t>("header");
	for (HnswCalibration::Depth &at : info.calibration.at) {
		at.depth = r.Get<uint32_t>("header");
		at.candidates = r.Get<uint32_t>("header");
		at.ef = r.Get<uint32_t>("header");
		at.recall_at_10 = r.Get<double>("header");
		at.recall_at_depth = r.Get<double>("header");
		at.visited = r.Get<double>("header");
	}
	return info;
}

} // namespace

HnswInfo HnswIndex::ReadInfo(std::string_view blob) {
	Reader r {blob, 0};
	return ReadHeader(r);
}

std::shared_ptr<const HnswIndex> HnswIndex::Deserialize(std::string_view blob) {
	if (blob.size() < sizeof(kMagic) + 8 || std::memcmp(blob.data(), kMagic, sizeof(kMagic)) != 0) {
		throw std::runtime_error("ANN blob: not an anatid HNSW index (bad magic)");
	}
	uint64_t stored_sum;
	std::memcpy(&stored_sum, blob.data() + blob.size() - 8, 8);
	if (Fnv1a(blob.substr(0, blob.size() - 8)) != stored_sum) {
		throw std::runtime_error("ANN blob: checksum mismatch (damaged or truncated)");
	}
	Reader r {blob.substr(0, blob.size() - 8), 0};
	const HnswInfo info = ReadHeader(r);
	auto index = std::make_shared<HnswIndex>();
	const uint32_t dim = info.dim;
	const uint64_t n = info.rows;
	index->params_.m = info.m;
	index->params_.ef_construction = info.ef_construction;
	index->params_.seed = info.seed;
	index->calibration_ = info.calibration;
	index->entry_ = r.Get<int32_t>("header");
	index->max_level_ = r.Get<int32_t>("header");
	const uint32_t m = index->params_.m;
	if (dim == 0 || dim > 65536 || m < 2 || m > 256 || n > static_cast<uint64_t>(INT32_MAX) - 1 ||
	    n > r.blob.size() / 8) {
		throw std::runtime_error("ANN blob: bad header");
	}
	index->dim_ = dim;
	std::vector<int64_t> ids, vf, vt;
	std::vector<double> norms;
	r.Array(ids, n, "ids");
	r.Array(vf, n, "valid_from");
	r.Array(vt, n, "valid_to");
	r.Array(norms, n, "norms");
	r.Array(index->levels_, n, "levels");
	if (n > (r.blob.size() - r.at) / 4 / dim) {
		throw std::runtime_error("ANN blob: truncated in vectors");
	}
	r.Array(index->vectors_, n * dim, "vectors");
	r.Array(index->links0_, n * (1 + 2 * m), "level-0 links");
	const uint64_t n_upper = r.Get<uint64_t>("upper links");
	r.Array(index->upper_, n_upper, "upper links");
	if (r.at != r.blob.size()) {
		throw std::runtime_error("ANN blob: trailing bytes");
	}
	index->rows_.resize(n);
	for (size_t i = 0; i < n; i++) {
		index->rows_[i] = HnswRow {ids[i], vf[i], vt[i], norms[i]};
		if (index->levels_[i] < 0 || index->levels_[i] > kMaxLevel) {
			throw std::runtime_error("ANN blob: bad level");
		}
	}
	// Every structural invariant the search relies on, so a blob that passes the checksum
	// by accident still cannot send it out of bounds.
	uint64_t upper_total = 0;
	for (size_t i = 0; i < n; i++) {
		upper_total += static_cast<uint64_t>(index->levels_[i]) * (1 + m);
	}
	if (upper_total != n_upper) {
		throw std::runtime_error("ANN blob: upper links do not match the levels");
	}
	if (n == 0 ? (index->entry_ != -1 || index->max_level_ != -1)
	           : (index->entry_ < 0 || static_cast<uint64_t>(index->entry_) >= n ||
	              index->levels_[index->entry_] != index->max_level_)) {
		throw std::runtime_error("ANN blob: bad entry point");
	}
	index->FinishLayout();
	for (size_t i = 0; i < n; i++) {
		for (int l = 0; l <= index->levels_[i]; l++) {
			const int32_t *links = index->Links(static_cast<uint32_t>(i), l);
			if (links[0] < 0 || static_cast<uint32_t>(links[0]) > index->Slots(l)) {
				throw std::runtime_error("ANN blob: bad link count");
			}
			for (int32_t k = 1; k <= links[0]; k++) {
				if (links[k] < 0 || static_cast<uint64_t>(links[k]) >= n || index->levels_[links[k]] < l) {
					throw std::runtime_error("ANN blob: bad link");
				}
			}
		}
	}
	return index;
}

} // namespace anatid
