#include "vector.hpp"

#include "hybrid_parts.hpp"
#include "journal_overlay.hpp"

#if defined(__GNUC__) && defined(__x86_64__)
#define ANATID_SCREEN_AVX2 1
#include <immintrin.h>
#else
#define ANATID_SCREEN_AVX2 0
#endif

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <queue>
#include <stdexcept>
#include <unordered_set>

namespace anatid {

namespace {

// Screen blocks hold kScreenBlock vectors in pairs of dimensions (an odd dim gets a zero
// code): pair p of lane j is bytes p * 2 * kScreenBlock + 2 * j and the one after it.
size_t ScreenPairs(size_t dim) {
	return (dim + 1) / 2;
}

size_t ScreenBlockBytes(size_t dim) {
	return ScreenPairs(dim) * 2 * kScreenBlock;
}

size_t ScreenOffset(size_t d, size_t lane) {
	return (d / 2) * 2 * kScreenBlock + 2 * lane + (d & 1);
}

// The screen's codes. The screen sums codes times an integer copy of the query exactly
// (int32, ScreenBlock), so its error against the exact double dot product of a vector e
// (scale s, codes c, e = s * c + delta) with the query q (q = qs * qc + r) is at most
//   max_d |delta_d| * |q|_1                (rounding e to codes, exact in double here)
// + s * 127 * dim * max_d |r_d|            (rounding q to integers: per query, CosineTopK)
// + s * 128 * (dim + 4) * 2^-52 * |q|_1    (the exact score's own double accumulation over
//                                          dim terms, gamma_dim with u = 2^-53, doubled)
// slack[i] holds the first and last terms per unit of |q|_1.
void Quantize(VectorGeneration &gen, const std::vector<float> &rows) {
	const size_t n = gen.ids.size(), dim = gen.dim;
	const size_t n_blocks = (n + kScreenBlock - 1) / kScreenBlock;
	gen.codes.assign(n_blocks * ScreenBlockBytes(dim), 0);
	gen.scale.assign(n, 0.0f);
	gen.slack.assign(n, 0.0);
	gen.inv_norms.assign(n, std::numeric_limits<double>::quiet_NaN()); // NaN: no cheap bound
	const double accumulation = 128.0 * (static_cast<double>(dim) + 4.0) * std::ldexp(1.0, -52);
	for (size_t i = 0; i < n; i++) {
		const float *e = rows.data() + i * dim;
		float top = 0.0f;
		bool finite = true;
		for (size_t d = 0; d < dim; d++) {
			finite = finite && std::isfinite(e[d]);
			top = std::max(top, std::fabs(e[d]));
		}
		if (!finite) {
			gen.slack[i] = std::numeric_limits<double>::infinity();
			continue;
		}
		const float s = top / 127.0f;
		int8_t *block = gen.codes.data() + (i / kScreenBlock) * ScreenBlockBytes(dim);
		const size_t lane = i % kScreenBlock;
		double err = 0.0;
		for (size_t d = 0; d < dim; d++) {
			const float c = s > 0.0f ? std::clamp(std::nearbyint(e[d] / s), -127.0f, 127.0f) : 0.0f;
			block[ScreenOffset(d, lane)] = static_cast<int8_t>(c);
			err = std::max(err, std::fabs(static_cast<double>(e[d]) - static_cast<double>(s) * c));
		}
		gen.scale[i] = s;
		gen.inv_norms[i] = 1.0 / gen.norms[i];
		gen.slack[i] = err * 1.0001 + static_cast<double>(s) * accumulation;
	}
}

void Block(VectorGeneration &gen, const std::vector<float> &rows) {
	const size_t n = gen.ids.size();
	const size_t n_blocks = (n + kVectorBlock - 1) / kVectorBlock;
	gen.blocks.assign(n_blocks * gen.dim * kVectorBlock, 0.0f);
	for (size_t i = 0; i < n; i++) {
		float *block = gen.blocks.data() + (i / kVectorBlock) * gen.dim * kVectorBlock;
		const size_t lane = i % kVectorBlock;
		for (size_t d = 0; d < gen.dim; d++) {
			block[d * kVectorBlock + lane] = rows[i * gen.dim + d];
		}
	}
	gen.doc_of.reserve(n * 2);
	for (size_t i = 0; i < n; i++) {
		gen.doc_of.emplace(gen.ids[i], static_cast<int32_t>(i));
	}
	Quantize(gen, rows);
	for (size_t i = 0; i < n; i++) {
		gen.max_vf = std::max(gen.max_vf, gen.vf[i]);
		if (gen.vt[i] != kOpenEnd) {
			gen.closed_vt.push_back(gen.vt[i]);
		}
	}
	std::sort(gen.closed_vt.begin(), gen.closed_vt.end());
	gen.visibility_index = true;
}

} // namespace

std::shared_ptr<const VectorGeneration> VectorGeneration::Parse(const std::vector<std::string_view> &parts) {
	auto header = ReadPart<int64_t>(parts, 0, 4, "header");
	if (header[0] != kVectorMagic) {
		throw std::runtime_error("vector generation: bad magic (built by another anatid version?)");
	}
	if (header[1] < 0 || header[1] > INT32_MAX || header[2] <= 0 || header[2] > 65536) {
		throw std::runtime_error("vector generation: bad header counts");
	}
	const size_t n = static_cast<size_t>(header[1]);
	auto gen = std::make_shared<VectorGeneration>();
	gen->dim = static_cast<size_t>(header[2]);
	gen->ids = ReadPart<int64_t>(parts, 1, n, "ids");
	gen->vf = ReadPart<int64_t>(parts, 2, n, "valid_from");
	gen->vt = ReadPart<int64_t>(parts, 3, n, "valid_to");
	gen->norms = ReadPart<double>(parts, 4, n, "norms");
	Block(*gen, ReadPart<float>(parts, 5, n * gen->dim, "vectors"));
	return gen;
}

std::shared_ptr<const VectorGeneration> VectorGeneration::FromRows(size_t dim, const std::vector<int64_t> &ids,
                                                                   const std::vector<int64_t> &vf,
                                                                   const std::vector<int64_t> &vt,
                                                                   const std::vector<double> &norms,
                                                                   const std::vector<float> &row_major) {
	if (vf.size() != ids.size() || vt.size() != ids.size() || norms.size() != ids.size() ||
	    row_major.size() != ids.size() * dim) {
		throw std::invalid_argument("vector generation: rows of different lengths");
	}
	auto gen = std::make_shared<VectorGeneration>();
	gen->dim = dim;
	gen->ids = ids;
	gen->vf = vf;
	gen->vt = vt;
	gen->norms = norms;
	Block(*gen, row_major);
	return gen;
}

size_t VectorGeneration::MemoryBytes() const {
	return blocks.size() * sizeof(float) + codes.size() + ids.size() * 52 + doc_of.size() * 24;
}

// The hot loop. Each lane j accumulates document j's sum in dimension order, exactly
// like a scalar loop would, so no sum is reassociated; the j loop vectorizes.
// target_clones picks an AVX2 body at load time where the CPU has it (FMA stays off:
// -ffp-contract=off, a fused multiply-add would round differently from DuckDB).
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
__attribute__((target_clones("avx2", "default")))
#endif
void DotBlock(const float *block, const double *q, size_t dim, double *out) {
	double acc[kVectorBlock] = {0, 0, 0, 0, 0, 0, 0, 0};
	for (size_t d = 0; d < dim; d++) {
		const double qd = q[d];
		const float *row = block + d * kVectorBlock;
		for (size_t j = 0; j < kVectorBlock; j++) {
			acc[j] += static_cast<double>(row[j]) * qd;
		}
	}
	for (size_t j = 0; j < kVectorBlock; j++) {
		out[j] = acc[j];
	}
}

// The screen: exact int32 sums of int8 codes times int16 query pairs, one lane per
// vector (qpairs[p] packs the query's integers for dimensions 2p and 2p + 1, low half
// first; CosineTopK keeps every sum below 2^31). The integer sums make the result the
// same on every path. x86-64 CPUs with AVX2 (checked at run time: the binary keeps the
// x86-64 baseline) take intrinsics (vpmaddwd), everything else the plain loop.
namespace {

void ScreenBlockPlain(const int8_t *block, const int32_t *qpairs, size_t pairs, int32_t *out) {
	int32_t acc[kScreenBlock] = {};
	for (size_t p = 0; p < pairs; p++) {
		const int32_t q0 = static_cast<int16_t>(static_cast<uint32_t>(qpairs[p]) & 0xffffu);
		const int32_t q1 = static_cast<int16_t>(static_cast<uint32_t>(qpairs[p]) >> 16);
		const int8_t *row = block + p * 2 * kScreenBlock;
		for (size_t j = 0; j < kScreenBlock; j++) {
			acc[j] += row[2 * j] * q0 + row[2 * j + 1] * q1;
		}
	}
	for (size_t j = 0; j < kScreenBlock; j++) {
		out[j] = acc[j];
	}
}

#if ANATID_SCREEN_AVX2
static_assert(kScreenBlock == 16, "the AVX2 screen handles 16 lanes");
__attribute__((target("avx2"))) void ScreenBlockAvx2(const int8_t *block, const int32_t *qpairs, size_t pairs,
                                                     int32_t *out) {
	__m256i lo = _mm256_setzero_si256(), hi = _mm256_setzero_si256();
	for (size_t p = 0; p < pairs; p++) {
		const int8_t *row = block + p * 2 * kScreenBlock;
		const __m256i q = _mm256_set1_epi32(qpairs[p]);
		const __m256i a = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i *>(row)));
		const __m256i b = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i *>(row + 16)));
		lo = _mm256_add_epi32(lo, _mm256_madd_epi16(a, q));
		hi = _mm256_add_epi32(hi, _mm256_madd_epi16(b, q));
	}
	_mm256_storeu_si256(reinterpret_cast<__m256i *>(out), lo);
	_mm256_storeu_si256(reinterpret_cast<__m256i *>(out + 8), hi);
}
#endif

} // namespace

void ScreenBlock(const int8_t *block, const int32_t *qpairs, size_t pairs, int32_t *out) {
#if ANATID_SCREEN_AVX2
	static const bool avx2 = (__builtin_cpu_init(), __builtin_cpu_supports("avx2"));
	if (avx2) {
		ScreenBlockAvx2(block, qpairs, pairs, out);
		return;
	}
#endif
	ScreenBlockPlain(block, qpairs, pairs, out);
}

namespace {

thread_local size_t last_rescored = 0;

float Cosine(double dot, double norm, double qnorm) {
	return static_cast<float>(dot / (norm * qnorm));
}

// Scores the visible journal vectors exactly (both top-k paths end with this).
void AddJournal(const CosineInput &in, std::vector<ArmHit> &out) {
	for (const JournalVector &v : in.vectors) {
		if (!Visible(v.vf, v.vt, in.valid_at)) {
			continue;
		}
		double dot = 0.0;
		for (size_t d = 0; d < in.dim; d++) {
			dot += static_cast<double>(v.values[d]) * in.query[d];
		}
		out.push_back(ArmHit {v.id, Cosine(dot, v.norm, in.query_norm)});
	}
}

} // namespace

// The base rows the journal overrides, as row indices (sorted, distinct).
static std::vector<int32_t> DeadRows(const CosineInput &in) {
	std::vector<int32_t> rows;
	if (in.base) {
		for (int64_t id : in.touched) {
			auto it = in.base->doc_of.find(id);
			if (it != in.base->doc_of.end()) {
				rows.push_back(it->second);
			}
		}
	}
	std::sort(rows.begin(), rows.end());
	rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
	return rows;
}

int64_t CosineVisibleRows(const CosineInput &in) {
	if (in.base && in.base->visibility_index && in.valid_at >= in.base->max_vf) {
		const VectorGeneration &b = *in.base;
		int64_t n = static_cast<int64_t>(b.ids.size()) -
		            (std::upper_bound(b.closed_vt.begin(), b.closed_vt.end(), in.valid_at) - b.closed_vt.begin());
		for (int32_t d : DeadRows(in)) {
			n -= in.valid_at < b.vt[static_cast<size_t>(d)];
		}
		for (const JournalVector &v : in.vectors) {
			n += Visible(v.vf, v.vt, in.valid_at);
		}
		return n;
	}
	int64_t n = 0;
	const std::vector<uint8_t> dead = DeadBase(in);
	if (in.base) {
		for (size_t i = 0; i < in.base->ids.size(); i++) {
			n += !dead[i] && Visible(in.base->vf[i], in.base->vt[i], in.valid_at);
		}
	}
	for (const JournalVector &v : in.vectors) {
		n += Visible(v.vf, v.vt, in.valid_at);
	}
	return n;
}

std::vector<ArmHit> CosineTopKExact(const CosineInput &in) {
	std::vector<ArmHit> out;
	if (!in.query) {
		return out;
	}
	if (in.base && in.base->dim != in.dim) {
		throw std::invalid_argument("query vector has " + std::to_string(in.dim) + " dimensions, the index " +
		                            std::to_string(in.base->dim));
	}
	const std::vector<uint8_t> dead = DeadBase(in);
	if (in.base) {
		const VectorGeneration &b = *in.base;
		const size_t n = b.ids.size();
		out.reserve(std::min(n, size_t(1) << 20));
		// Keep a running threshold so most documents never reach the candidate list.
		const size_t keep = std::max<size_t>(in.depth, 1);
		std::vector<ArmHit> cand;
		cand.reserve(keep * 4);
		float floor = -std::numeric_limits<float>::infinity();
		double dots[kVectorBlock];
		const size_t block_floats = b.dim * kVectorBlock;
		for (size_t blk = 0; blk * kVectorBlock < n; blk++) {
			DotBlock(b.blocks.data() + blk * block_floats, in.query, b.dim, dots);
			const size_t first = blk * kVectorBlock;
			const size_t lanes = std::min(kVectorBlock, n - first);
			for (size_t j = 0; j < lanes; j++) {
				const size_t i = first + j;
				if (dead[i] || !Visible(b.vf[i], b.vt[i], in.valid_at)) {
					continue;
				}
				const float s = Cosine(dots[j], b.norms[i], in.query_norm);
				if (s < floor) {
					continue;
				}
				cand.push_back(ArmHit {b.ids[i], s});
				if (cand.size() >= keep * 4) {
					RankArm(cand, keep);
					floor = cand.back().score;
				}
			}
		}
		out = std::move(cand);
	}
	AddJournal(in, out);
	RankArm(out, in.depth);
	return out;
}

namespace {

// Document i's exact score, the lane of its block as DotBlock sums it.
float ExactScore(const VectorGeneration &b, size_t i, const double *q, double qnorm) {
	const float *block = b.blocks.data() + (i / kVectorBlock) * b.dim * kVectorBlock;
	const size_t lane = i % kVectorBlock;
	double dot = 0.0;
	for (size_t d = 0; d < b.dim; d++) {
		dot += static_cast<double>(block[d * kVectorBlock + lane]) * q[d];
	}
	return Cosine(dot, b.norms[i], qnorm);
}

} // namespace

size_t LastCosineRescored() {
	return last_rescored;
}

// Screen, then rescore. For a visible base vector i with screened dot S and bound E,
// the exact double dot lies in [S - E, S + E], so (rounding to float32 being monotone)
// its float32 cosine lies in [lo_i, hi_i] = [f((S-E)/den), f((S+E)/den)], den the same
// norm * qnorm the exact score divides by. If `keep` vectors have lo >= T, a vector with
// hi < T scores strictly below all of them and cannot be in the top `keep`: only
// vectors with hi >= T (the final T, the keep-th largest lo) are scored exactly.
std::vector<ArmHit> CosineTopK(const CosineInput &in) {
	last_rescored = 0;
	if (!in.query || !in.base || in.base->codes.empty() || in.base->dim != in.dim) {
		return CosineTopKExact(in); // (also raises the dimension mismatch)
	}
	const VectorGeneration &b = *in.base;
	double q1 = 0.0, qtop = 0.0;
	for (size_t d = 0; d < in.dim; d++) {
		q1 += std::fabs(in.query[d]);
		qtop = std::max(qtop, std::fabs(in.query[d]));
	}
	// The query as integers: q_d = qs * qc_d + r_d, |qc_d| <= qmax with 127 * qmax * (2 * pairs)
	// below 2^31, so no int32 sum of the screen overflows.
	const size_t pairs = ScreenPairs(in.dim);
	const double qmax = static_cast<double>(
	    std::min<int64_t>(32767, static_cast<int64_t>(INT32_MAX) / (127 * 2 * static_cast<int64_t>(pairs))));
	const double qs = qtop / qmax;
	if (!std::isfinite(q1) || !(in.query_norm > 0.0) || !std::isfinite(in.query_norm) || !(qs > 0.0) ||
	    !std::isfinite(qs) || !(qmax >= 1.0)) {
		return CosineTopKExact(in);
	}
	std::vector<int32_t> qpairs(pairs, 0);
	double r_max = 0.0;
	for (size_t d = 0; d < in.dim; d++) {
		const double c = std::clamp(std::nearbyint(in.query[d] / qs), -qmax, qmax);
		r_max = std::max(r_max, std::fabs(in.query[d] - qs * c));
		const uint32_t bits = static_cast<uint16_t>(static_cast<int16_t>(c));
		qpairs[d / 2] = static_cast<int32_t>(static_cast<uint32_t>(qpairs[d / 2]) | (bits << (16 * (d & 1))));
	}
	// max |r_d| with room for the rounding of qs * c above; times s[i]: the second term of Quantize's bound
	const double per_scale = 127.0 * static_cast<double>(in.dim) * (r_max * 1.0001 + 1e-15 * (qtop + qs)) * 1.0001;
	const std::vector<int32_t> dead = DeadRows(in); // usually few: looked up for survivors only
	const size_t n = b.ids.size();
	const size_t keep = std::max<size_t>(in.depth, 1);
	std::priority_queue<float, std::vector<float>, std::greater<float>> lows; // the keep largest lo
	float floor = -std::numeric_limits<float>::infinity();
	std::vector<std::pair<float, int32_t>> cand; // (hi, document)
	const float inf = std::numeric_limits<float>::infinity();
	int32_t sums[kScreenBlock];
	double his[kScreenBlock];
	// A cheap upper bound first: (S + E) * (1 / den) is within a few ulps of (S + E) / den,
	// so with a relative margin of 1e-9 it stays above it; below the largest float under the
	// floor, its float32 rounding is below the floor too. Survivors get the exact test.
	double reject_below = -std::numeric_limits<double>::infinity();
	const double inv_qn = 1.0 / in.query_norm;
	const size_t block_codes = ScreenBlockBytes(b.dim);
	for (size_t blk = 0; blk * kScreenBlock < n; blk++) {
		ScreenBlock(b.codes.data() + blk * block_codes, qpairs.data(), pairs, sums);
		const size_t first = blk * kScreenBlock;
		const size_t lanes = std::min(kScreenBlock, n - first);
		for (size_t j = 0; j < lanes; j++) {
			const size_t i = first + j;
			const double s = static_cast<double>(b.scale[i]) * qs * static_cast<double>(sums[j]);
			const double h = (s + b.slack[i] * q1 * 1.0001 + static_cast<double>(b.scale[i]) * per_scale +
			                  std::fabs(s) * 1e-12) *
			                 b.inv_norms[i] * inv_qn;
			his[j] = h + std::fabs(h) * 1e-9;
		}
		for (size_t j = 0; j < lanes; j++) {
			if (his[j] < reject_below) { // also false for NaN: those take the exact test
				continue;
			}
			const size_t i = first + j;
			const double den = b.norms[i] * in.query_norm;
			const double s = static_cast<double>(b.scale[i]) * qs * static_cast<double>(sums[j]);
			const double e =
			    b.slack[i] * q1 * 1.0001 + static_cast<double>(b.scale[i]) * per_scale + std::fabs(s) * 1e-12;
			float hi = static_cast<float>((s + e) / den);
			float lo = static_cast<float>((s - e) / den);
			if (!(den > 0.0) || !std::isfinite(den) || std::isnan(hi) || std::isnan(lo)) {
				hi = inf; // no bound: always rescored, never raises the floor
				lo = -inf;
			}
			if (hi < floor || !Visible(b.vf[i], b.vt[i], in.valid_at) ||
			    (!dead.empty() && std::binary_search(dead.begin(), dead.end(), static_cast<int32_t>(i)))) {
				continue;
			}
			cand.emplace_back(hi, static_cast<int32_t>(i));
			if (lows.size() < keep) {
				lows.push(lo);
			} else if (lo > lows.top()) {
				lows.pop();
				lows.push(lo);
			}
			if (lows.size() == keep && lows.top() > floor) {
				floor = lows.top();
				reject_below = static_cast<double>(std::nextafter(floor, -inf));
			}
			if (cand.size() >= 8 * keep + 1024) { // drop what the floor has overtaken
				cand.erase(std::remove_if(cand.begin(), cand.end(), [&](const auto &c) { return c.first < floor; }),
				           cand.end());
			}
		}
	}
	std::vector<ArmHit> out;
	out.reserve(cand.size() + in.vectors.size());
	for (const auto &c : cand) {
		if (c.first >= floor) {
			out.push_back(ArmHit {b.ids[c.second], ExactScore(b, c.second, in.query, in.query_norm)});
		}
	}
	last_rescored = out.size();
	AddJournal(in, out);
	RankArm(out, in.depth);
	return out;
}

} // namespace anatid
