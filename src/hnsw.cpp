#include "hnsw.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <queue>
#include <random>
#include <stdexcept>

namespace anatid {

namespace {

constexpr char kMagic[8] = {'A', 'N', 'A', 'H', 'N', 'S', 'W', '_'};
constexpr uint32_t kFormatVersion = 1;
constexpr int kMaxLevel = 48;
constexpr size_t kLanes = 8;

// Eight independent partial sums: the compiler vectorizes the lane loop without being
// allowed to reassociate anything (these similarities only pick candidates).
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
                            std::vector<HnswCandidate> &out) const {
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
		for (int32_t k = 1; k <= links[0]; k++) {
			const uint32_t next = static_cast<uint32_t>(links[k]);
			if (!visited.Visit(next)) {
				continue;
			}
			const HnswCandidate c {next, Similarity(q, next)};
			if (kept.size() < ef || Better(c, kept.top())) {
				frontier.push(c);
				kept.push(c);
				if (kept.size() > ef) {
					kept.pop();
				}
			}
		}
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

void HnswIndex::Insert(uint32_t row) {
	const int level = levels_[row];
	if (entry_ < 0) {
		entry_ = static_cast<int32_t>(row);
		max_level_ = level;
		return;
	}
	std::vector<float> q(dim_);
	const float *v = Vector(row);
	for (size_t d = 0; d < dim_; d++) {
		q[d] = v[d] * inv_norms_[row];
	}
	const HnswCandidate cur = GreedyDescent(q.data(), level);
	std::vector<HnswCandidate> entry {cur}, found;
	for (int l = std::min(level, max_level_); l >= 0; l--) {
		SearchLayer(q.data(), entry, params_.ef_construction, l, found);
		entry = found;
		SelectNeighbors(found, params_.m);
		for (const HnswCandidate &c : found) {
			Connect(row, c.row, l);
			Connect(c.row, row, l);
		}
	}
	if (level > max_level_) {
		entry_ = static_cast<int32_t>(row);
		max_level_ = level;
	}
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
	for (size_t i = 0; i < n; i++) {
		index->Insert(static_cast<uint32_t>(i));
	}
	return index;
}

std::vector<HnswCandidate> HnswIndex::Search(const double *query, size_t count, size_t ef) const {
	std::vector<HnswCandidate> out;
	if (entry_ < 0 || count == 0) {
		return out;
	}
	double qn = 0;
	for (size_t d = 0; d < dim_; d++) {
		qn += query[d] * query[d];
	}
	qn = std::sqrt(qn);
	if (!(qn > 0) || !std::isfinite(qn)) {
		return out;
	}
	std::vector<float> q(dim_);
	for (size_t d = 0; d < dim_; d++) {
		q[d] = static_cast<float>(query[d] / qn);
	}
	const HnswCandidate cur = GreedyDescent(q.data(), 0);
	std::vector<HnswCandidate> entry {cur};
	SearchLayer(q.data(), entry, std::max(ef, count), 0, out);
	if (out.size() > count) {
		out.resize(count);
	}
	return out;
}

size_t HnswIndex::MemoryBytes() const {
	return vectors_.size() * sizeof(float) + rows_.size() * (sizeof(HnswRow) + sizeof(float) + sizeof(int32_t) + 8) +
	       links0_.size() * sizeof(int32_t) + upper_.size() * sizeof(int32_t);
}

// ---- the blob --------------------------------------------------------------------------
// Little-endian (the hosts anatid builds for), in this order:
//   char[8] "ANAHNSW_", uint32 version, uint32 dim, uint64 n, uint32 m, uint32 ef_construction,
//   uint64 seed, int32 entry, int32 max_level,
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

std::shared_ptr<const HnswIndex> HnswIndex::Deserialize(std::string_view blob) {
	if (blob.size() < sizeof(kMagic) + 8 || std::memcmp(blob.data(), kMagic, sizeof(kMagic)) != 0) {
		throw std::runtime_error("ANN blob: not an anatid HNSW index (bad magic)");
	}
	if (blob.size() < 8) {
		throw std::runtime_error("ANN blob: truncated");
	}
	uint64_t stored_sum;
	std::memcpy(&stored_sum, blob.data() + blob.size() - 8, 8);
	if (Fnv1a(blob.substr(0, blob.size() - 8)) != stored_sum) {
		throw std::runtime_error("ANN blob: checksum mismatch (damaged or truncated)");
	}
	Reader r {blob.substr(0, blob.size() - 8), sizeof(kMagic)};
	const uint32_t version = r.Get<uint32_t>("header");
	if (version != kFormatVersion) {
		throw std::runtime_error("ANN blob: format version " + std::to_string(version) + ", this build reads " +
		                         std::to_string(kFormatVersion) + ": rebuild the index");
	}
	auto index = std::make_shared<HnswIndex>();
	const uint32_t dim = r.Get<uint32_t>("header");
	const uint64_t n = r.Get<uint64_t>("header");
	index->params_.m = r.Get<uint32_t>("header");
	index->params_.ef_construction = r.Get<uint32_t>("header");
	index->params_.seed = r.Get<uint64_t>("header");
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
