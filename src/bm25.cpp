#include "bm25.hpp"

#include "hybrid_parts.hpp"
#include "journal_overlay.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace anatid {

void RankArm(std::vector<ArmHit> &hits, size_t depth) {
	auto better = [](const ArmHit &a, const ArmHit &b) {
		if (a.score != b.score) {
			return a.score > b.score;
		}
		return a.id < b.id;
	};
	if (hits.size() > depth) {
		std::partial_sort(hits.begin(), hits.begin() + static_cast<std::ptrdiff_t>(depth), hits.end(), better);
		hits.resize(depth);
	} else {
		std::sort(hits.begin(), hits.end(), better);
	}
}

std::shared_ptr<const TextGeneration> TextGeneration::Parse(const std::vector<std::string_view> &parts) {
	auto header = ReadPart<int64_t>(parts, 0, 4, "header");
	if (header[0] != kTextMagic) {
		throw std::runtime_error("text generation: bad magic (built by another anatid version?)");
	}
	if (header[1] < 0 || header[2] < 0 || header[3] < 0 || header[1] > INT32_MAX || header[3] > INT32_MAX) {
		throw std::runtime_error("text generation: bad header counts");
	}
	const size_t n = static_cast<size_t>(header[1]);
	const size_t n_terms = static_cast<size_t>(header[2]);
	const size_t n_post = static_cast<size_t>(header[3]);
	auto gen = std::make_shared<TextGeneration>();
	gen->ids = ReadPart<int64_t>(parts, 1, n, "ids");
	gen->lens = ReadPart<int32_t>(parts, 2, n, "lens");
	gen->vf = ReadPart<int64_t>(parts, 3, n, "valid_from");
	gen->vt = ReadPart<int64_t>(parts, 4, n, "valid_to");
	auto offsets = ReadPart<int64_t>(parts, 5, n_terms + 1, "term offsets");
	if (parts.size() < 7) {
		throw std::runtime_error("text generation is missing its term bytes part");
	}
	gen->term_bytes.assign(parts[6].data(), parts[6].size());
	gen->term_start = ReadPart<int64_t>(parts, 7, n_terms + 1, "term starts");
	gen->post_doc = ReadPart<int32_t>(parts, 8, n_post, "posting documents");
	gen->post_tf = ReadPart<int32_t>(parts, 9, n_post, "posting frequencies");

	if (offsets[0] != 0 || static_cast<size_t>(offsets[n_terms]) != gen->term_bytes.size() ||
	    gen->term_start[0] != 0 || static_cast<size_t>(gen->term_start[n_terms]) != n_post) {
		throw std::runtime_error("text generation: term tables do not cover their parts");
	}
	gen->term_of.reserve(n_terms * 2);
	for (size_t t = 0; t < n_terms; t++) {
		if (offsets[t + 1] < offsets[t] || gen->term_start[t + 1] < gen->term_start[t]) {
			throw std::runtime_error("text generation: term tables are not monotone");
		}
		std::string_view term(gen->term_bytes.data() + offsets[t], static_cast<size_t>(offsets[t + 1] - offsets[t]));
		gen->term_of.emplace(term, static_cast<int32_t>(t));
	}
	for (int32_t d : gen->post_doc) {
		if (d < 0 || static_cast<size_t>(d) >= n) {
			throw std::runtime_error("text generation: posting points outside the documents");
		}
	}
	gen->doc_of.reserve(n * 2);
	std::vector<std::pair<int64_t, int32_t>> closed;
	for (size_t i = 0; i < n; i++) {
		gen->doc_of.emplace(gen->ids[i], static_cast<int32_t>(i));
		gen->all_len += gen->lens[i];
		gen->max_vf = std::max(gen->max_vf, gen->vf[i]);
		if (gen->vt[i] != kOpenEnd) {
			closed.emplace_back(gen->vt[i], gen->lens[i]);
		}
	}
	gen->SetClosed(std::move(closed));
	if (parts.size() > 10) {
		if (parts.size() != 14) {
			throw std::runtime_error("text generation has " + std::to_string(parts.size()) +
			                         " parts, expected 10 or 14");
		}
		auto strings = [&](size_t at, const char *what, std::vector<int64_t> &off, std::string &bytes) {
			off = ReadPart<int64_t>(parts, at, n + 1, what);
			bytes.assign(parts[at + 1].data(), parts[at + 1].size());
			if (off[0] != 0 || static_cast<size_t>(off[n]) != bytes.size()) {
				throw std::runtime_error(std::string("text generation: ") + what + " do not cover their bytes");
			}
			for (size_t i = 0; i < n; i++) {
				if (off[i + 1] < off[i]) {
					throw std::runtime_error(std::string("text generation: ") + what + " are not monotone");
				}
			}
		};
		strings(10, "content offsets", gen->content_off, gen->content_bytes);
		strings(12, "kind offsets", gen->kind_off, gen->kind_bytes);
		gen->has_content = true;
	}
	return gen;
}

std::string_view TextGeneration::Content(size_t doc) const {
	return std::string_view(content_bytes.data() + content_off[doc],
	                        static_cast<size_t>(content_off[doc + 1] - content_off[doc]));
}

void TextGeneration::SetClosed(std::vector<std::pair<int64_t, int32_t>> closed) {
	std::sort(closed.begin(), closed.end());
	visibility_index = true;
	closed_vt.clear();
	closed_vt.reserve(closed.size());
	closed_len_sum.assign(1, 0);
	for (const auto &c : closed) {
		closed_vt.push_back(c.first);
		closed_len_sum.push_back(closed_len_sum.back() + c.second);
	}
}

int64_t TextGeneration::VouchedDoc(int64_t id, int64_t valid_at) const {
	if (!has_content) {
		return -1;
	}
	auto it = doc_of.find(id);
	if (it == doc_of.end()) {
		return -1;
	}
	const size_t doc = static_cast<size_t>(it->second);
	return vf[doc] <= valid_at && valid_at < vt[doc] ? static_cast<int64_t>(doc) : -1;
}

std::string_view TextGeneration::Kind(size_t doc) const {
	return std::string_view(kind_bytes.data() + kind_off[doc], static_cast<size_t>(kind_off[doc + 1] - kind_off[doc]));
}

size_t TextGeneration::MemoryBytes() const {
	return ids.size() * (8 + 4 + 8 + 8) + term_start.size() * 8 + post_doc.size() * 8 + term_bytes.size() +
	       term_of.size() * 32 + doc_of.size() * 24 + content_bytes.size() + kind_bytes.size() +
	       (closed_vt.size() + closed_len_sum.size()) * 8 +
	       (content_off.size() + kind_off.size()) * 8;
}

double Bm25Contribution(double n, double df, int32_t tf, int32_t len, double avgdl) {
	const double idf = std::log(1.0 + ((n - df) + 0.5) / (df + 0.5));
	// CAST(CAST(tf AS DECIMAL) * 2.2 AS DOUBLE): exact tf*22 scaled by 10, correctly rounded.
	const double tf_k1 = static_cast<double>(static_cast<int64_t>(tf) * 22) / 10.0;
	// CAST(0.75 * CAST(len AS DECIMAL) AS DOUBLE): exact len*75 scaled by 100.
	const double b_len = static_cast<double>(static_cast<int64_t>(len) * 75) / 100.0;
	return (idf * tf_k1) / (static_cast<double>(tf) + 1.2 * (0.25 + b_len / avgdl));
}

namespace {

struct Stats {
	int64_t n = 0;
	int64_t sum_len = 0;
};

Stats VisibleStats(const Bm25Input &in, const std::vector<uint8_t> &dead) {
	Stats s;
	if (in.base && in.base->visibility_index && in.valid_at >= in.base->max_vf) {
		// Every base document has begun: the invisible ones are the closed ones with
		// vt <= valid_at (a prefix of closed_vt), then the dead that were still visible.
		const TextGeneration &b = *in.base;
		const size_t gone = static_cast<size_t>(
		    std::upper_bound(b.closed_vt.begin(), b.closed_vt.end(), in.valid_at) - b.closed_vt.begin());
		s.n = static_cast<int64_t>(b.ids.size() - gone);
		s.sum_len = b.all_len - b.closed_len_sum[gone];
		std::vector<int32_t> dead_docs;
		for (int64_t id : in.touched) {
			auto it = b.doc_of.find(id);
			if (it != b.doc_of.end()) {
				dead_docs.push_back(it->second);
			}
		}
		std::sort(dead_docs.begin(), dead_docs.end());
		dead_docs.erase(std::unique(dead_docs.begin(), dead_docs.end()), dead_docs.end());
		for (int32_t d : dead_docs) {
			if (in.valid_at < b.vt[static_cast<size_t>(d)]) {
				s.n--;
				s.sum_len -= b.lens[static_cast<size_t>(d)];
			}
		}
	} else if (in.base) {
		const TextGeneration &b = *in.base;
		// Start from every base document, then remove the dead and those not valid now.
		s.n = static_cast<int64_t>(b.ids.size());
		s.sum_len = b.all_len;
		for (size_t i = 0; i < b.ids.size(); i++) {
			if (dead[i] || !Visible(b.vf[i], b.vt[i], in.valid_at)) {
				s.n--;
				s.sum_len -= b.lens[i];
			}
		}
	}
	for (const JournalDoc &d : in.docs) {
		if (Visible(d.vf, d.vt, in.valid_at)) {
			s.n++;
			s.sum_len += d.len;
		}
	}
	return s;
}

} // namespace

int64_t Bm25VisibleDocs(const Bm25Input &in) {
	return VisibleStats(in, DeadBase(in)).n;
}

std::vector<ArmHit> Bm25TopK(const Bm25Input &in) {
	std::vector<ArmHit> out;
	if (in.terms.empty()) {
		return out;
	}
	const std::vector<uint8_t> dead = DeadBase(in);
	const Stats stats = VisibleStats(in, dead);
	if (stats.n == 0) {
		return out;
	}
	const double n = static_cast<double>(stats.n);
	const double avgdl = static_cast<double>(stats.sum_len) / n;

	// Journal documents visible now, by id.
	std::unordered_map<int64_t, int32_t> jlen;
	jlen.reserve(in.docs.size() * 2);
	for (const JournalDoc &d : in.docs) {
		if (Visible(d.vf, d.vt, in.valid_at)) {
			jlen.emplace(d.id, d.len);
		}
	}
	// Scores accumulate per document in the order of in.terms (the contract's summation
	// order). Base documents use a dense array; journal documents a map.
	const TextGeneration *b = in.base;
	std::vector<double> acc(b ? b->ids.size() : 0, 0.0);
	std::vector<int32_t> hit_docs;
	std::vector<uint8_t> seen(b ? b->ids.size() : 0, 0);
	std::unordered_map<int64_t, double> jacc;
	std::vector<int64_t> jorder;

	for (std::string_view term : in.terms) {
		// live postings of this term: base (not dead, visible) and journal
		int64_t t_begin = 0, t_end = 0;
		if (b) {
			auto it = b->term_of.find(term);
			if (it != b->term_of.end()) {
				t_begin = b->term_start[static_cast<size_t>(it->second)];
				t_end = b->term_start[static_cast<size_t>(it->second) + 1];
			}
		}
		int64_t df = 0;
		for (int64_t p = t_begin; p < t_end; p++) {
			const size_t d = static_cast<size_t>(b->post_doc[static_cast<size_t>(p)]);
			if (!dead[d] && Visible(b->vf[d], b->vt[d], in.valid_at)) {
				df++;
			}
		}
		for (const JournalPosting &jp : in.postings) {
			if (jp.term == term && jlen.count(jp.id)) {
				df++;
			}
		}
		if (df == 0) {
			continue;
		}
		const double dfd = static_cast<double>(df);
		for (int64_t p = t_begin; p < t_end; p++) {
			const size_t d = static_cast<size_t>(b->post_doc[static_cast<size_t>(p)]);
			if (!dead[d] && Visible(b->vf[d], b->vt[d], in.valid_at)) {
				const double c = Bm25Contribution(n, dfd, b->post_tf[static_cast<size_t>(p)], b->lens[d], avgdl);
				if (!seen[d]) {
					seen[d] = 1;
					hit_docs.push_back(static_cast<int32_t>(d));
					acc[d] = c;
				} else {
					acc[d] += c;
				}
			}
		}
		for (const JournalPosting &jp : in.postings) {
			if (jp.term != term) {
				continue;
			}
			auto len = jlen.find(jp.id);
			if (len == jlen.end()) {
				continue;
			}
			const double c = Bm25Contribution(n, dfd, jp.tf, len->second, avgdl);
			auto slot = jacc.emplace(jp.id, c);
			if (slot.second) {
				jorder.push_back(jp.id);
			} else {
				slot.first->second += c;
			}
		}
	}
	out.reserve(hit_docs.size() + jorder.size());
	for (int32_t d : hit_docs) {
		out.push_back(ArmHit {b->ids[static_cast<size_t>(d)], static_cast<float>(acc[static_cast<size_t>(d)])});
	}
	for (int64_t id : jorder) {
		out.push_back(ArmHit {id, static_cast<float>(jacc[id])});
	}
	RankArm(out, in.depth);
	return out;
}

} // namespace anatid
