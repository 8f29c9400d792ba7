// anatid_hybrid_recall(kind INTEGER, a BIGINT, b BIGINT, c BIGINT, d BIGINT, len INTEGER, norm DOUBLE,
//                      postings VARCHAR, embedding FLOAT[], request BLOB)
//   -> LIST(STRUCT(memory_id BIGINT, score DOUBLE, rv BIGINT, rt BIGINT, rg BIGINT, hop INTEGER,
//                  content VARCHAR, kind VARCHAR))
//
// The lean form of anatid_hybrid_rank for the Python engine (python/anatid/native_hybrid.py):
// an aggregate over one UNION ALL of the tenant's generation rows and journal rows, so a
// recall plans one small statement instead of the ~25-CTE macro (docs/benchmarks.md has
// the costs). Rows by `kind`:
//   1 text generation    a = gen_id, b = nonce
//   2 vector generation  a = gen_id, b = nonce
//   3 text journal       a = memory_id, b = seq, c = vf, d = vt, len = doc_len, postings
//                        ("term:tf term:tf ...", src/text_journal.hpp)
//   4 vector journal     a = memory_id, b = seq, c = vf, d = vt, norm, embedding
//   5 ANN generation     a = gen_id, b = nonce, c = candidates, d = ef (python/anatid/indexes/ann.py):
//                        the vector arm searches that resident HNSW index (src/hnsw.hpp) instead
//                        of scanning a vector generation (none is needed) and scores the candidates
//                        exactly; a journalled memory's row always overrides its candidate
//   6 graph journal      postings = the entry (anatid_graph_journal, src/graph_codec.hpp), its base
//                        marker included: only with the graph block below
//   7 evidence           a = memory_id, b = episode_id (anatid_evidence), at most the block's
//                        evidence cap + 1 rows: only with the graph block
//   8 empty base         a = the tenant's indexed documents, b = its embeddings (NULL: not
//                        counted), c = the exact text scan's ceiling (NULL: none): see below
// The latest journal row (largest seq) of a memory wins, as in the macro. Text journal rows
// are kept as scanned bytes (text_journal::AppendRow) and folded through the process-wide
// text_journal::Cache under the text generation's key, so an unchanged journal is not
// parsed again. The request is
// one constant BLOB (little-endian, packed by native_hybrid.encode_request):
//   int64 valid_at_us, depth, k; double wv, wt, wg; int64 vector_ceiling (-1: none);
//   uint32 n_terms, then per term uint32 bytes + bytes (distinct, in summation order);
//   uint32 dim, double[dim] query vector, double query norm;
//   uint32 n_graph, int64[n] graph ids (best first), int32[n] hops;
//   optionally the graph block: uint32 bytes + a graph request (src/graph_codec.hpp, with its
//   ranking block's trusted, extra and first-stage lists empty), uint32 fanout, uint8 agreed
//   (1: episode neighbours only of trusted hits every arm found), double neighbour weight,
//   uint32 evidence cap (more evidence rows than that: the caller computes the neighbours),
//   and optionally uint8 seeds from the query (1: the graph request names no seed; they are
//   the fold's entities whose every name token is one of the terms that follow,
//   src/graph_seeds.hpp), uint32 n_terms, then per term uint32 bytes + bytes.
// With the graph block the function runs recall()'s whole graph stage after the first stage
// (python/anatid/verbs/graph_rank.py, with_graph_arm): the first `fanout` hits are trusted,
// the first stage is the fusion's input, and src/graph_rank.cpp ranks and fuses on the
// resident graph generation folded with the kind-6 rows; the list then starts with a status
// element (memory_id -3, score = status): 0 when fused (the fused hits follow, then one
// element per named seed gated as a hub: memory_id -4, score its share, rv its index + 1,
// content its name key);
// otherwise the first stage follows, and the caller runs the graph stage itself: 1 episode
// neighbours are needed and cannot be computed here (more evidence rows than the cap, or
// no text rows to tell which members are visible), 2 the graph generation is not resident,
// 3 the tenant has no graph generation (or more than one marker, or one without a nonce),
// 4 seeds from the query were asked for and some name key is not ASCII (graph_seeds.hpp).
// Episode neighbours (src/episode_neighbours.hpp) are computed from the kind-7 rows, a
// member being visible by the text journal's latest row, else by the text generation: every
// memory has a text document, so the text index knows every memory's validity.
// With a kind-8 row (the empty base): an arm whose generation row is absent ranks its
// journal alone, as anatid_hybrid_rank does without a base (a file that never ran
// maintain_indexes() journals every write), with the text fold cached under key (0, 0),
// which no generation has (the cache checks the scanned bytes, so tenants sharing the key
// cost a refold, never a wrong answer). Why here and not in anatid_hybrid_rank: the fold
// cache, and one small statement instead of a window over the whole journal every call.
// The row's counts guard it: a journal holding fewer documents or vectors than the
// canonical tables (rows written by plain SQL) answers the sentinel -1 with score 5, and
// the caller asks the SQL oracle. A row, not a request field: the request is the same
// constant for both statements.
// The generations must be resident (parsed by an earlier anatid_hybrid_rank call); this
// function never reads BLOBs. Answers that are not hits are one-element lists, so the
// caller's transaction is never aborted: memory_id -1 (score 1/2: the text generation
// is missing/not resident, 3/4: the vector one, 5: no generation and a journal short of
// the canonical counts) and -2 (the exact vector scan would cover `score` rows, above
// vector_ceiling).
// Content and kind come from the resident text generation for a hit it holds (with
// content, visible at valid_at) that no journal row touches, i.e. no write since the
// build: then they are the believed row's. Otherwise they are NULL and the caller reads
// anatid_memories for those ids only. So the caller feeds the text rows whenever it can.
#include "anatid_extension.hpp"
#include "anatid_graph_common.hpp"
#include "boxed_aggregate.hpp"
#include "capi_util.hpp"
#include "episode_neighbours.hpp"
#include "graph_cache.hpp"
#include "graph_codec.hpp"
#include "graph_rank.hpp"
#include "graph_seeds.hpp"
#include "hnsw_cache.hpp"
#include "hybrid.hpp"
#include "hybrid_hits.hpp"
#include "spare_buffers.hpp"
#include "text_journal.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace anatid {

namespace {

using namespace graph_binding;

enum Arg : idx_t { kKind, kA, kB, kC, kD, kLen, kNorm, kPostings, kEmb, kRequest };

struct JournalRow {
	int64_t seq = 0;
	int64_t vf = 0, vt = 0;
	bool present = false; // doc_len / norm not NULL
	int32_t len = 0;
	double norm = 0;
};

// A vector journal row as scanned; its floats are values[at, at + dim) of the state. Rows
// are kept flat and the latest per memory chosen once (LatestVectors): a fresh tenant's
// vector journal holds every embedding, and a map entry plus a float vector per row cost
// more than scoring them.
struct VectorRow {
	int64_t id, seq, vf, vt;
	double norm;
	bool present; // norm not NULL
	size_t at, dim;
};

struct State {
	State()
	    : text(SpareBuffers::Take()), vec(Spare<std::vector<VectorRow>>::Take()),
	      vec_values(Spare<std::vector<float>>::Take()) {
	}
	~State() {
		SpareBuffers::Give(std::move(text));
		Spare<std::vector<VectorRow>>::Give(std::move(vec));
		Spare<std::vector<float>>::Give(std::move(vec_values));
	}
	State(const State &) = delete;
	State &operator=(const State &) = delete;
	bool have_request = false;
	std::string request;
	bool have_text_gen = false, have_vec_gen = false;
	bool ann = false; // a kind-5 row: the vector arm ranks ANN candidates + journal, no generation
	AnnKey ann_key {0, 0};
	int64_t ann_count = 0, ann_ef = 0;
	GenerationKey text_gen {0, 0}, vec_gen {0, 0};
	bool empty_base = false;                 // a kind-8 row
	int64_t text_count = -1, vec_count = -1; // its counts (-1: not counted)
	int64_t text_ceiling = -1;               // and the exact text scan's ceiling (-1: none)
	std::string text; // the text journal rows as scanned (text_journal::AppendRow)
	std::shared_ptr<const text_journal::Fold> text_fold; // of `text`, once asked for
	std::vector<VectorRow> vec;   // every vector journal row scanned
	std::vector<float> vec_values; // their floats
	// the graph stage's rows (kinds 6 and 7)
	std::string graph; // graph journal entries as scanned (graph::AppendJournalEntry), markers excluded
	int graph_markers = 0;
	graph::CacheKey graph_key {0, 0};
	bool graph_keyed = false; // the marker carried a nonce
	std::vector<EvidenceRow> evidence;
};

using Boxed = BoxedState<State>;

State *&StateOf(duckdb_aggregate_state state) {
	return Boxed::Of(state);
}

// The latest row (largest seq) of each memory in the vector journal, by id.
std::vector<const VectorRow *> LatestVectors(const State &s) {
	std::vector<const VectorRow *> rows;
	rows.reserve(s.vec.size());
	for (const VectorRow &r : s.vec) {
		rows.push_back(&r);
	}
	std::sort(rows.begin(), rows.end(), [](const VectorRow *a, const VectorRow *b) {
		return a->id != b->id ? a->id < b->id : a->seq > b->seq;
	});
	rows.erase(std::unique(rows.begin(), rows.end(),
	                       [](const VectorRow *a, const VectorRow *b) { return a->id == b->id; }),
	           rows.end());
	return rows;
}

void Update(duckdb_function_info, duckdb_data_chunk input, duckdb_aggregate_state *states) {
	const idx_t n = duckdb_data_chunk_get_size(input);
	auto vec = [&](Arg a) { return duckdb_data_chunk_get_vector(input, a); };
	const Column kinds(vec(kKind)), as(vec(kA)), bs(vec(kB)), cs(vec(kC)), ds(vec(kD)), lens(vec(kLen)),
	    norms(vec(kNorm)), postings(vec(kPostings)), embeddings(vec(kEmb));
	const auto *emb_entries = static_cast<const duckdb_list_entry *>(duckdb_vector_get_data(vec(kEmb)));
	const Column emb_values(duckdb_list_vector_get_child(vec(kEmb)));
	for (idx_t row = 0; row < n; row++) {
		State &s = *StateOf(states[row]);
		if (!s.have_request) {
			if (!String(vec(kRequest), row, s.request)) {
				throw std::invalid_argument("anatid_hybrid_recall: request is NULL");
			}
			s.have_request = true;
		}
		int32_t kind = 0;
		int64_t a = 0;
		if (kinds.Get(row, kind) && kind == 6) {
			const char *ptr = nullptr;
			size_t len = 0;
			if (!postings.View(row, ptr, len)) {
				throw std::invalid_argument("anatid_hybrid_recall: a graph journal row (kind 6) has no entry");
			}
			const std::string_view entry(ptr, len);
			if (!IsOp(entry, graph::kOpBase)) {
				graph::AppendJournalEntry(s.graph, entry);
				continue;
			}
			const graph::JournalRow marker = graph::ParseJournalEntry(entry);
			s.graph_key = graph::CacheKey {marker.a, marker.b};
			s.graph_keyed = HasB(entry);
			s.graph_markers++;
			continue;
		}
		if (kind == 7) {
			EvidenceRow r {0, 0};
			if (!as.Get(row, r.memory_id) || !bs.Get(row, r.episode_id)) {
				throw std::invalid_argument("anatid_hybrid_recall: an evidence row (kind 7) needs a and b");
			}
			s.evidence.push_back(r);
			continue;
		}
		if (kind == 8) {
			s.empty_base = true;
			if (!as.Get(row, s.text_count)) {
				s.text_count = -1;
			}
			if (!bs.Get(row, s.vec_count)) {
				s.vec_count = -1;
			}
			if (!cs.Get(row, s.text_ceiling)) {
				s.text_ceiling = -1;
			}
			continue;
		}
		if (!kinds.Get(row, kind) || !as.Get(row, a)) {
			throw std::invalid_argument("anatid_hybrid_recall: kind and a must not be NULL");
		}
		if (kind == 1 || kind == 2) {
			GenerationKey key {a, 0};
			bs.Get(row, key.nonce);
			(kind == 1 ? s.text_gen : s.vec_gen) = key;
			(kind == 1 ? s.have_text_gen : s.have_vec_gen) = true;
			continue;
		}
		if (kind == 5) {
			s.ann = true;
			s.ann_key = AnnKey {a, 0};
			bs.Get(row, s.ann_key.nonce);
			cs.Get(row, s.ann_count);
			ds.Get(row, s.ann_ef);
			continue;
		}
		if (kind != 3 && kind != 4) {
			throw std::invalid_argument("anatid_hybrid_recall: kind must be one of 1 to 8");
		}
		JournalRow r;
		bs.Get(row, r.seq);
		cs.Get(row, r.vf);
		ds.Get(row, r.vt);
		if (kind == 3) {
			r.present = lens.Get(row, r.len);
			const char *text = nullptr;
			size_t text_len = 0;
			const bool has_postings = r.present && postings.View(row, text, text_len);
			text_journal::AppendRow(s.text, a, r.seq, r.vf, r.vt, r.present, r.len, has_postings,
			                        std::string_view(text, text_len));
		} else {
			r.present = norms.Get(row, r.norm);
			VectorRow v {a, r.seq, r.vf, r.vt, r.norm, r.present, s.vec_values.size(), 0};
			if (r.present && embeddings.Valid(row)) {
				const duckdb_list_entry e = emb_entries[row];
				for (idx_t i = e.offset; i < e.offset + e.length; i++) {
					float x = 0;
					if (!emb_values.Get(i, x)) {
						throw std::invalid_argument("anatid_hybrid_recall: NULL element in embedding");
					}
					s.vec_values.push_back(x);
				}
				v.dim = e.length;
			}
			s.vec.push_back(v);
		}
	}
}

void Combine(duckdb_function_info, duckdb_aggregate_state *source, duckdb_aggregate_state *target, idx_t count) {
	for (idx_t i = 0; i < count; i++) {
		State &src = *StateOf(source[i]);
		State &dst = *StateOf(target[i]);
		if (!dst.have_request && src.have_request) {
			dst.request = std::move(src.request);
			dst.have_request = true;
		}
		if (src.have_text_gen) {
			dst.text_gen = src.text_gen;
			dst.have_text_gen = true;
		}
		if (src.ann) {
			dst.ann = true;
			dst.ann_key = src.ann_key;
			dst.ann_count = src.ann_count;
			dst.ann_ef = src.ann_ef;
		}
		if (src.have_vec_gen) {
			dst.vec_gen = src.vec_gen;
			dst.have_vec_gen = true;
		}
		dst.graph += src.graph; // any order: the graph fold sorts rows by seq
		src.graph.clear();
		if (src.graph_markers) {
			dst.graph_key = src.graph_key;
			dst.graph_keyed = src.graph_keyed;
			dst.graph_markers += src.graph_markers;
			src.graph_markers = 0;
		}
		dst.evidence.insert(dst.evidence.end(), src.evidence.begin(), src.evidence.end());
		src.evidence.clear();
		if (src.empty_base) {
			dst.empty_base = true;
			dst.text_count = src.text_count;
			dst.vec_count = src.vec_count;
			dst.text_ceiling = src.text_ceiling;
		}
		dst.text += src.text; // any order: the fold keeps each memory's largest seq
		const size_t shift = dst.vec_values.size();
		dst.vec_values.insert(dst.vec_values.end(), src.vec_values.begin(), src.vec_values.end());
		for (VectorRow r : src.vec) {
			r.at += shift;
			dst.vec.push_back(r);
		}
		src.vec_values.clear();
		src.text.clear();
		src.vec.clear();
	}
}

// ---- the request BLOB --------------------------------------------------------------
class Reader {
public:
	explicit Reader(const std::string &s) : s_(s) {
	}
	template <class T>
	T Get() {
		if (pos_ + sizeof(T) > s_.size()) {
			throw std::invalid_argument("anatid_hybrid_recall: the request is truncated");
		}
		T v;
		std::memcpy(&v, s_.data() + pos_, sizeof(T));
		pos_ += sizeof(T);
		return v;
	}
	std::string Bytes(size_t n) {
		if (pos_ + n > s_.size()) {
			throw std::invalid_argument("anatid_hybrid_recall: the request is truncated");
		}
		std::string out = s_.substr(pos_, n);
		pos_ += n;
		return out;
	}
	bool AtEnd() const {
		return pos_ == s_.size();
	}

private:
	const std::string &s_;
	size_t pos_ = 0;
};

// The fold of the state's text journal rows, cached under the text generation's key, or
// (0, 0) without one (the empty base; then with its Generation()).
const text_journal::Fold &TextFold(State &s) {
	if (!s.text_fold) {
		s.text_fold =
		    text_journal::Cache::Instance().Get(s.text_gen.id, s.text_gen.nonce, s.text, !s.have_text_gen);
	}
	return *s.text_fold;
}

struct Sentinel {
	int64_t id;
	double score;
};

// The request's optional graph block (see the file comment).
struct GraphBlock {
	bool present = false;
	std::string request;
	size_t fanout = 0;
	bool agreed = true;
	double neighbour = 0;
	size_t evidence_cap = 0;
	bool seeds_from_query = false; // the graph request names no seed: resolve them from `terms`
	std::vector<std::string> terms;
	bool used_text = false, used_vector = false; // which first-stage arms ran (set by Answer)
	std::vector<std::string> seed_keys;          // the seeds ranked (set by GraphStage)
};

// The hits, or a sentinel (see the file comment); `block` receives the graph block.
std::vector<HybridHit> Answer(State &s, Sentinel &sentinel, GraphBlock &block) {
	sentinel = {0, 0};
	Reader r(s.request);
	const int64_t valid_at = r.Get<int64_t>();
	const int64_t depth_in = r.Get<int64_t>();
	const int64_t k = r.Get<int64_t>();
	HybridRequest req;
	req.weights.vector = r.Get<double>();
	req.weights.text = r.Get<double>();
	req.weights.graph = r.Get<double>();
	const int64_t vector_ceiling = r.Get<int64_t>();
	if (k < 1 || depth_in < 1) {
		throw std::invalid_argument("anatid_hybrid_recall: k and depth must be positive");
	}
	const size_t depth = static_cast<size_t>(std::max(depth_in, k));
	req.k = static_cast<size_t>(k);
	req.text_ceiling = INT64_MAX;
	req.vector_ceiling = INT64_MAX;
	std::vector<std::string> terms(r.Get<uint32_t>());
	for (auto &t : terms) {
		t = r.Bytes(r.Get<uint32_t>());
	}
	std::vector<double> query(r.Get<uint32_t>());
	for (auto &x : query) {
		x = r.Get<double>();
	}
	const double query_norm = r.Get<double>();
	const uint32_t n_graph = r.Get<uint32_t>();
	req.graph_ids.resize(n_graph);
	req.graph_hops.resize(n_graph);
	for (auto &id : req.graph_ids) {
		id = r.Get<int64_t>();
	}
	for (auto &hop : req.graph_hops) {
		hop = r.Get<int32_t>();
	}
	const bool empty_base = s.empty_base;
	if (empty_base && s.text_ceiling >= 0) {
		req.text_ceiling = s.text_ceiling;
	}
	if (!r.AtEnd()) {
		block.present = true;
		block.request = r.Bytes(r.Get<uint32_t>());
		block.fanout = r.Get<uint32_t>();
		block.agreed = r.Get<uint8_t>() != 0;
		block.neighbour = r.Get<double>();
		block.evidence_cap = r.Get<uint32_t>();
		if (!r.AtEnd()) {
			block.seeds_from_query = r.Get<uint8_t>() != 0;
			block.terms.resize(r.Get<uint32_t>());
			for (auto &t : block.terms) {
				t = r.Bytes(r.Get<uint32_t>());
			}
		}
	}
	if (!r.AtEnd()) {
		throw std::invalid_argument("anatid_hybrid_recall: the request has trailing bytes");
	}
	req.use_graph = n_graph > 0;

	std::shared_ptr<const TextGeneration> tbase;
	std::shared_ptr<const VectorGeneration> vbase;
	std::shared_ptr<const HnswIndex> ann; // holds the candidates' vectors while HybridRecall runs
	req.use_text = !terms.empty();
	block.used_text = req.use_text;
	if (req.use_text && !s.have_text_gen && empty_base) {
		Bm25Input &t = req.text;
		t.valid_at = valid_at;
		t.depth = depth;
		for (const auto &term : terms) {
			t.terms.emplace_back(term);
		}
		const text_journal::Fold &fold = TextFold(s); // under (0, 0): see the file comment
		if (s.text_count > static_cast<int64_t>(fold.Documents())) {
			sentinel = {-1, 5};
			return {};
		}
		// the journal's documents are the whole index, laid out once per journal state as a
		// base (text_journal.hpp); text_has_base stays false: the exact scan's ceiling applies
		tbase = fold.Generation();
		t.base = tbase.get();
	} else if (req.use_text) {
		if (!s.have_text_gen) {
			sentinel = {-1, 1};
			return {};
		}
		if (!HasGeneration(GenerationKind::kText, s.text_gen)) {
			sentinel = {-1, 2};
			return {};
		}
		try {
			tbase = TextGenerationFor(s.text_gen, {}, false);
		} catch (const std::runtime_error &) { // evicted since HasGeneration
			sentinel = {-1, 2};
			return {};
		}
		Bm25Input &t = req.text;
		t.base = tbase.get();
		req.text_has_base = true;
		t.valid_at = valid_at;
		t.depth = depth;
		for (const auto &term : terms) {
			t.terms.emplace_back(term);
		}
		TextFold(s).Fill(t); // touched, docs, and the postings of the query terms (views of t.terms)
	}
	req.use_vector = !query.empty();
	block.used_vector = req.use_vector;
	const std::vector<const VectorRow *> latest = req.use_vector ? LatestVectors(s) : std::vector<const VectorRow *>();
	if (req.use_vector && !s.ann && !s.have_vec_gen && empty_base) {
		int64_t present = 0;
		for (const VectorRow *row : latest) {
			present += row->present ? 1 : 0;
		}
		if (s.vec_count > present) {
			sentinel = {-1, 5};
			return {};
		}
	} else if (req.use_vector && !s.ann) {
		if (!s.have_vec_gen) {
			sentinel = {-1, 3};
			return {};
		}
		if (!HasGeneration(GenerationKind::kVector, s.vec_gen)) {
			sentinel = {-1, 4};
			return {};
		}
		try {
			vbase = VectorGenerationFor(s.vec_gen, {}, false);
		} catch (const std::runtime_error &) {
			sentinel = {-1, 4};
			return {};
		}
	}
	if (req.use_vector && s.ann) {
		ann = AnnCache::Instance().Get(s.ann_key);
		if (!ann) { // not resident: the caller loads it (anatid_ann_load) and asks again
			sentinel = {-1, 4};
			return {};
		}
		if (ann->Dim() != query.size()) {
			throw std::invalid_argument("anatid_hybrid_recall: the query has " + std::to_string(query.size()) +
			                            " dimensions, the ANN index " + std::to_string(ann->Dim()));
		}
	}
	if (req.use_vector) {
		CosineInput &v = req.vector;
		v.base = vbase.get();
		v.query = query.data();
		v.dim = query.size();
		v.query_norm = query_norm;
		v.valid_at = valid_at;
		v.depth = depth;
		for (const VectorRow *row : latest) {
			v.touched.push_back(row->id);
			if (!row->present) {
				continue;
			}
			if (row->dim != v.dim) {
				throw std::invalid_argument("anatid_hybrid_recall: a stored vector has " + std::to_string(row->dim) +
				                            " dimensions, the query " + std::to_string(v.dim));
			}
			v.vectors.push_back(JournalVector {row->id, row->vf, row->vt, row->norm, s.vec_values.data() + row->at});
		}
		if (ann) {
			const size_t count = static_cast<size_t>(std::max<int64_t>(s.ann_count, 1));
			for (const HnswCandidate &c : ann->Search(query.data(), count, static_cast<size_t>(std::max<int64_t>(s.ann_ef, 1)))) {
				const HnswRow &row = ann->Row(c.row);
				if (!std::binary_search(v.touched.begin(), v.touched.end(), row.id)) { // by id, from latest
					v.vectors.push_back(JournalVector {row.id, row.vf, row.vt, row.norm, ann->Vector(c.row)});
				}
			}
		}
		if (vector_ceiling >= 0) {
			const int64_t rows = CosineVisibleRows(v);
			if (rows > vector_ceiling) {
				sentinel = {-2, static_cast<double>(rows)};
				return {};
			}
		}
	}
	return HybridRecall(req);
}

// ---- the graph stage (with the graph block) -------------------------------------------
constexpr int64_t kStatusId = -3;    // the leading element: memory_id -3, score = GraphStatus
constexpr int64_t kGatedSeedId = -4; // a named seed gated as a hub: score its share, rv its index + 1
enum GraphStatus { kFused = 0, kNeedsNeighbours = 1, kGraphNotResident = 2, kNoGraphGeneration = 3, kNeedsSeeds = 4 };

// recall()'s graph stage over the first stage `first` (best first, depth hits), as
// python/anatid/verbs/graph_rank.py's with_graph_arm runs it: kFused with the fused hits
// and gated seeds in `out`, or why the caller must run it instead.
GraphStatus GraphStage(State &s, GraphBlock &block, const std::vector<HybridHit> &first,
                       std::vector<HybridHit> &out) {
	graph::ParsedRequest parsed = graph::ParseRequest(block.request);
	graph::RecallRequest &req = parsed.request;
	if (!req.rank.enabled || !parsed.has_valid_at) {
		throw std::invalid_argument("anatid_hybrid_recall: the graph block needs a ranking request with valid_at");
	}
	const size_t trusted = std::min(block.fanout, first.size());
	std::vector<int64_t> agreed; // episode neighbours: of the trusted hits every arm found (all, without the rule)
	const bool both_arms = block.used_text && block.used_vector;
	for (size_t i = 0; i < trusted && block.neighbour > 0 && !s.evidence.empty(); i++) {
		if (!block.agreed || (both_arms && first[i].rank_vector > 0 && first[i].rank_text > 0)) {
			agreed.push_back(first[i].id);
		}
	}
	std::shared_ptr<const TextGeneration> text; // held while `visible` runs
	if (!agreed.empty()) {
		if (s.evidence.size() > block.evidence_cap || !block.used_text || !s.have_text_gen) {
			return kNeedsNeighbours;
		}
		try {
			text = TextGenerationFor(s.text_gen, {}, false); // resident: the text arm just ran on it
		} catch (const std::runtime_error &) {
			return kNeedsNeighbours;
		}
		const text_journal::Fold &journal = TextFold(s);
		const int64_t at = req.valid_at_us;
		auto visible = [&](int64_t id) {
			if (journal.Touched(id)) {
				return journal.VisibleAt(id, at);
			}
			auto it = text->doc_of.find(id);
			return it != text->doc_of.end() && text->vf[size_t(it->second)] <= at && at < text->vt[size_t(it->second)];
		};
		std::unordered_map<int64_t, size_t> position; // trust 1 / r by the hit's place among the trusted
		for (size_t i = 0; i < trusted; i++) {
			position.emplace(first[i].id, i + 1);
		}
		for (const auto &pair : EpisodeNeighbours(s.evidence, agreed, visible)) {
			req.rank.extra_ids.push_back(pair.first);
			req.rank.extra_src.push_back(pair.second);
			req.rank.extra_c.push_back(block.neighbour / double(position.at(pair.second)));
		}
	}
	if (s.graph_markers != 1 || !s.graph_keyed) {
		return kNoGraphGeneration;
	}
	std::shared_ptr<const graph::Generation> base = ResidentOrParse(s.graph_key, nullptr, 0, "anatid_hybrid_recall");
	if (!base) {
		return kGraphNotResident;
	}
	auto fold = graph::JournalCache::Instance().Fold(s.graph_key, base, s.graph, req.valid_at_us);
	if (block.seeds_from_query && !graph::SeedsFromTerms(*fold, block.terms, req.seed_keys)) {
		return kNeedsSeeds;
	}
	block.seed_keys = req.seed_keys;
	std::unordered_map<int64_t, const HybridHit *> by_id;
	for (size_t i = 0; i < first.size(); i++) {
		if (i < trusted) {
			req.rank.trusted.push_back(first[i].id);
		}
		req.rank.first_ids.push_back(first[i].id);
		req.rank.first_scores.push_back(first[i].score);
		by_id.emplace(first[i].id, &first[i]);
	}
	for (const graph::RecallHit &h : graph::Rank(*fold, req)) {
		if (h.hop == graph::kHopGatedSeed) {
			out.push_back(HybridHit {kGatedSeedId, h.score, h.memory_id + 1, 0, 0, -1});
			continue;
		}
		auto it = by_id.find(h.memory_id);
		const bool graph_found = h.hop != graph::kHopNotGraph;
		out.push_back(HybridHit {h.memory_id, h.score, it == by_id.end() ? 0 : it->second->rank_vector,
		                         it == by_id.end() ? 0 : it->second->rank_text, graph_found ? 1 : 0,
		                         graph_found ? h.hop : -1});
	}
	return kFused;
}

// Content and kind of each hit from the text generation, when it can vouch for them.
struct Hydrated {
	bool ok = false;
	std::string_view content, kind;
};

std::vector<Hydrated> Hydrate(State &s, const std::vector<HybridHit> &hits,
                              std::shared_ptr<const TextGeneration> &keep) {
	std::vector<Hydrated> out(hits.size());
	if (!s.have_text_gen || s.request.size() < sizeof(int64_t) || !HasGeneration(GenerationKind::kText, s.text_gen)) {
		return out;
	}
	try {
		keep = TextGenerationFor(s.text_gen, {}, false);
	} catch (const std::runtime_error &) { // evicted since HasGeneration
		return out;
	}
	if (!keep->has_content) {
		return out;
	}
	int64_t valid_at;
	std::memcpy(&valid_at, s.request.data(), sizeof(valid_at));
	const text_journal::Fold &journal = TextFold(s);
	for (size_t h = 0; h < hits.size(); h++) {
		if (journal.Touched(hits[h].id)) {
			continue; // written since the build
		}
		const int64_t doc = keep->VouchedDoc(hits[h].id, valid_at);
		if (doc >= 0) {
			out[h] = Hydrated {true, keep->Content(static_cast<size_t>(doc)), keep->Kind(static_cast<size_t>(doc))};
		}
	}
	return out;
}

void Finalize(duckdb_function_info, duckdb_aggregate_state *source, duckdb_vector result, idx_t count,
              idx_t offset) {
	auto *entries = static_cast<duckdb_list_entry *>(duckdb_vector_get_data(result));
	idx_t total = duckdb_list_vector_get_size(result);
	for (idx_t i = 0; i < count; i++) {
		State &s = *StateOf(source[i]);
		const idx_t out = offset + i;
		if (!s.have_request) { // no rows at all: no generation, nothing journalled
			SetNull(result, out);
			entries[out] = duckdb_list_entry {total, 0};
			continue;
		}
		Sentinel sentinel;
		GraphBlock block;
		std::vector<HybridHit> hits = Answer(s, sentinel, block);
		if (sentinel.id != 0) {
			hits = {HybridHit {sentinel.id, sentinel.score, 0, 0, 0, -1}};
		} else if (block.present) {
			std::vector<HybridHit> fused;
			const GraphStatus status = GraphStage(s, block, hits, fused);
			if (status == kFused) {
				hits = std::move(fused);
			}
			hits.insert(hits.begin(), HybridHit {kStatusId, static_cast<double>(status), 0, 0, 0, -1});
		}
		std::shared_ptr<const TextGeneration> text_gen; // keeps the views below alive
		const std::vector<Hydrated> hydrated =
		    sentinel.id != 0 ? std::vector<Hydrated>(hits.size()) : Hydrate(s, hits, text_gen);
		duckdb_list_vector_reserve(result, total + hits.size());
		duckdb_list_vector_set_size(result, total + hits.size());
		duckdb_vector child = duckdb_list_vector_get_child(result);
		const HybridHitWriter writer(child);
		duckdb_vector content_vec = duckdb_struct_vector_get_child(child, 6);
		duckdb_vector kind_vec = duckdb_struct_vector_get_child(child, 7);
		for (size_t h = 0; h < hits.size(); h++) {
			const idx_t at = total + h;
			writer.Write(at, hits[h]);
			if (hits[h].id == kGatedSeedId && block.present && size_t(hits[h].rank_vector - 1) < block.seed_keys.size()) {
				const std::string &key = block.seed_keys[size_t(hits[h].rank_vector - 1)]; // for the caller's note
				duckdb_vector_assign_string_element_len(content_vec, at, key.data(), key.size());
				SetNull(kind_vec, at);
			} else if (hydrated[h].ok) {
				duckdb_vector_assign_string_element_len(content_vec, at, hydrated[h].content.data(),
				                                        hydrated[h].content.size());
				duckdb_vector_assign_string_element_len(kind_vec, at, hydrated[h].kind.data(),
				                                        hydrated[h].kind.size());
			} else {
				SetNull(content_vec, at);
				SetNull(kind_vec, at);
			}
		}
		entries[out] = duckdb_list_entry {total, hits.size()};
		total += hits.size();
	}
}

} // namespace

void RegisterAnatidHybridRecall(duckdb_connection connection) {
	std::vector<StructField> fields = HybridHitFields();
	fields.push_back({"content", Type(DUCKDB_TYPE_VARCHAR)});
	fields.push_back({"kind", Type(DUCKDB_TYPE_VARCHAR)});
	// Most arguments are NULL on most rows (see the row kinds above).
	duckdb_aggregate_function f = MakeBoxedAggregate<State, Update, Combine, Finalize>(
	    "anatid_hybrid_recall",
	    {Type(DUCKDB_TYPE_INTEGER), Type(DUCKDB_TYPE_BIGINT), Type(DUCKDB_TYPE_BIGINT), Type(DUCKDB_TYPE_BIGINT),
	     Type(DUCKDB_TYPE_BIGINT), Type(DUCKDB_TYPE_INTEGER), Type(DUCKDB_TYPE_DOUBLE), Type(DUCKDB_TYPE_VARCHAR),
	     ListOf(DUCKDB_TYPE_FLOAT), Type(DUCKDB_TYPE_BLOB)},
	    ListOfStruct(std::move(fields)));
	RegisterAggregate(connection, f, "anatid_hybrid_recall");
}

} // namespace anatid
