#include "vector.hpp"

#include "hybrid_parts.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <unordered_set>

namespace anatid {

namespace {

bool Visible(int64_t vf, int64_t vt, int64_t at) {
	return vf <= at && at < vt;
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
	return blocks.size() * sizeof(float) + ids.size() * 32 + doc_of.size() * 24;
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

namespace {

std::vector<uint8_t> DeadBase(const CosineInput &in) {
	std::vector<uint8_t> dead(in.base ? in.base->ids.size() : 0, 0);
	if (in.base) {
		for (int64_t id : in.touched) {
			auto it = in.base->doc_of.find(id);
			if (it != in.base->doc_of.end()) {
				dead[static_cast<size_t>(it->second)] = 1;
			}
		}
	}
	return dead;
}

float Cosine(double dot, double norm, double qnorm) {
	return static_cast<float>(dot / (norm * qnorm));
}

} // namespace

int64_t CosineVisibleRows(const CosineInput &in) {
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

std::vector<ArmHit> CosineTopK(const CosineInput &in) {
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
	RankArm(out, in.depth);
	return out;
}

} // namespace anatid
