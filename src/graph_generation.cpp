#include "graph_generation.hpp"
#include "graph_seeds.hpp"

#include <functional>

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <utility>

namespace anatid {
namespace graph {

namespace {

constexpr char kMagic[8] = {'A', 'N', 'A', 'T', 'G', 'R', 'P', 'H'};
constexpr uint32_t kFormatVersion = 1;

// ---- serialization helpers: raw little-endian arrays (x86-64 and arm64 are LE) ----
template <class T>
void PutPod(std::string &out, const T &value) {
	out.append(reinterpret_cast<const char *>(&value), sizeof(T));
}

template <class T>
void PutArray(std::string &out, const std::vector<T> &values) {
	PutPod<uint64_t>(out, values.size());
	if (!values.empty()) {
		out.append(reinterpret_cast<const char *>(values.data()), values.size() * sizeof(T));
	}
}

class Reader {
public:
	Reader(const void *data, size_t size) : p_(static_cast<const char *>(data)), end_(p_ + size) {
	}
	template <class T>
	T Pod(const char *what) {
		Need(sizeof(T), what);
		T value;
		std::memcpy(&value, p_, sizeof(T));
		p_ += sizeof(T);
		return value;
	}
	template <class T>
	void Array(std::vector<T> &out, const char *what) {
		const uint64_t n = Pod<uint64_t>(what);
		if (n > uint64_t(end_ - p_) / sizeof(T)) {
			throw std::invalid_argument(std::string("graph generation BLOB is truncated in ") + what);
		}
		out.resize(n);
		if (n) {
			std::memcpy(out.data(), p_, n * sizeof(T));
		}
		p_ += n * sizeof(T);
	}
	void Bytes(std::string &out, const char *what) {
		const uint64_t n = Pod<uint64_t>(what);
		Need(n, what);
		out.assign(p_, n);
		p_ += n;
	}
	bool AtEnd() const {
		return p_ == end_;
	}

private:
	void Need(size_t n, const char *what) {
		if (size_t(end_ - p_) < n) {
			throw std::invalid_argument(std::string("graph generation BLOB is truncated in ") + what);
		}
	}
	const char *p_;
	const char *end_;
};

void CheckOffsets(const std::vector<uint32_t> &offsets, size_t vertices, size_t target, const char *what) {
	if (offsets.size() != vertices + 1 || offsets.front() != 0 || offsets.back() != target) {
		throw std::invalid_argument(std::string("graph generation BLOB has inconsistent ") + what + " offsets");
	}
	for (size_t i = 0; i + 1 < offsets.size(); i++) {
		if (offsets[i] > offsets[i + 1]) {
			throw std::invalid_argument(std::string("graph generation BLOB has decreasing ") + what + " offsets");
		}
	}
}

void CheckCount(size_t n, const char *what) {
	if (n >= std::numeric_limits<uint32_t>::max()) {
		throw std::invalid_argument(std::string("too many ") + what + " for one graph generation");
	}
}

// Counting-sort CSR from (row, value) pairs; each row's values sorted and deduplicated.
void BuildCsr(uint32_t rows, const std::vector<std::pair<uint32_t, uint32_t>> &pairs, std::vector<uint32_t> &offsets,
              std::vector<uint32_t> &values) {
	std::vector<uint32_t> counts(size_t(rows) + 1, 0);
	for (const auto &p : pairs) {
		counts[p.first + 1]++;
	}
	for (uint32_t r = 0; r < rows; r++) {
		counts[r + 1] += counts[r];
	}
	std::vector<uint32_t> raw(pairs.size());
	std::vector<uint32_t> cursor(counts.begin(), counts.end() - 1);
	for (const auto &p : pairs) {
		raw[cursor[p.first]++] = p.second;
	}
	offsets.assign(size_t(rows) + 1, 0);
	values.clear();
	values.reserve(raw.size());
	for (uint32_t r = 0; r < rows; r++) {
		auto first = raw.begin() + counts[r];
		auto last = raw.begin() + counts[r + 1];
		std::sort(first, last);
		last = std::unique(first, last);
		values.insert(values.end(), first, last);
		offsets[r + 1] = uint32_t(values.size());
	}
}

} // namespace

size_t Generation::ByteSize() const {
	size_t bytes = sizeof(Generation);
	bytes += vertex_entity.size() * sizeof(int64_t) + key_offsets.size() * 4 + key_bytes.size();
	bytes += adj_offsets.size() * 4 + adj.size() * 4;
	bytes += memory_ids.size() * 8 + memory_kind.size() * 2 + about_offsets.size() * 4 + about.size() * 4;
	bytes += memory_about_offsets.size() * 4 + memory_about.size() * 4;
	for (const auto &k : kinds) {
		bytes += sizeof(std::string) + k.size();
	}
	// hash maps: roughly two nodes of (key, value, next, hash) per vertex
	bytes += vertex_entity.size() * 2 * 48;
	bytes += key_token_offsets.size() * 4 + key_tokens.size() * sizeof(std::string_view);
	bytes += rarest_token_vertices.size() * 64 + vertex_entity.size() * 4;
	return bytes;
}

int64_t Generation::MemoryIndex(int64_t memory_id) const {
	auto it = std::lower_bound(memory_ids.begin(), memory_ids.end(), memory_id, std::greater<int64_t>());
	return it != memory_ids.end() && *it == memory_id ? int64_t(it - memory_ids.begin()) : -1;
}

void Generation::DeriveMemoryAbout() {
	memory_about_offsets.assign(memory_ids.size() + 1, 0);
	for (uint32_t m : about) {
		memory_about_offsets[size_t(m) + 1]++;
	}
	for (size_t i = 0; i < memory_ids.size(); i++) {
		memory_about_offsets[i + 1] += memory_about_offsets[i];
	}
	memory_about.assign(about.size(), 0);
	std::vector<uint32_t> fill(memory_about_offsets.begin(), memory_about_offsets.end() - 1);
	for (uint32_t v = 0; v < VertexCount(); v++) { // vertices ascending: each memory's list ascends
		for (uint32_t i = about_offsets[v]; i < about_offsets[v + 1]; i++) {
			memory_about[fill[about[i]]++] = v;
		}
	}
}

void Generation::DeriveMaps() {
	DeriveMemoryAbout();
	entity_to_vertex.clear();
	entity_to_vertex.reserve(vertex_entity.size());
	for (uint32_t v = 0; v < VertexCount(); v++) {
		entity_to_vertex.emplace(vertex_entity[v], v);
	}
	DeriveKeyMaps();
}

void Generation::DeriveKeyMaps() {
	key_to_vertex.clear();
	key_to_vertex.reserve(vertex_entity.size());
	for (uint32_t v = 0; v < VertexCount(); v++) {
		key_to_vertex.emplace(KeyOf(v), v);
	}
	key_token_offsets.assign(1, 0);
	key_tokens.clear();
	rarest_token_vertices.clear();
	ascii_keys = true;
	std::unordered_map<std::string_view, uint32_t> keys_holding;
	for (uint32_t v = 0; v < VertexCount(); v++) {
		const size_t from = key_tokens.size();
		ascii_keys = AsciiKeyTokens(KeyOf(v), key_tokens) && ascii_keys;
		std::sort(key_tokens.begin() + from, key_tokens.end());
		key_tokens.erase(std::unique(key_tokens.begin() + from, key_tokens.end()), key_tokens.end());
		for (size_t t = from; t < key_tokens.size(); t++) {
			keys_holding[key_tokens[t]]++;
		}
		key_token_offsets.push_back(uint32_t(key_tokens.size()));
	}
	for (uint32_t v = 0; v < VertexCount(); v++) {
		const uint32_t from = key_token_offsets[v], to = key_token_offsets[v + 1];
		if (from == to) {
			continue; // a name without a token is never a seed
		}
		std::string_view rarest = key_tokens[from];
		for (uint32_t t = from + 1; t < to; t++) {
			if (keys_holding[key_tokens[t]] < keys_holding[rarest]) {
				rarest = key_tokens[t];
			}
		}
		rarest_token_vertices[rarest].push_back(v);
	}
}

std::shared_ptr<const Generation> Generation::Build(const GenerationHeader &header, BuildInput in) {
	if (in.entity_ids.size() != in.entity_keys.size() || in.edge_a.size() != in.edge_b.size() ||
	    in.about_memory.size() != in.about_entity.size() || in.about_memory.size() != in.about_kind.size()) {
		throw std::invalid_argument("graph build input columns differ in length");
	}
	CheckCount(in.entity_ids.size(), "entities");
	CheckCount(in.about_memory.size(), "ABOUT links");
	CheckCount(in.edge_a.size() * 2, "relates edges");
	auto g = std::make_shared<Generation>();
	g->header = header;

	// Vertices: entities by id ascending (duplicates collapse).
	std::vector<uint32_t> order(in.entity_ids.size());
	std::iota(order.begin(), order.end(), 0u);
	std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) { return in.entity_ids[x] < in.entity_ids[y]; });
	g->key_offsets.push_back(0);
	for (uint32_t i : order) {
		if (!g->vertex_entity.empty() && g->vertex_entity.back() == in.entity_ids[i]) {
			continue;
		}
		g->vertex_entity.push_back(in.entity_ids[i]);
		g->key_bytes += in.entity_keys[i];
		g->key_offsets.push_back(uint32_t(g->key_bytes.size()));
	}
	const uint32_t vertices = g->VertexCount();
	g->entity_to_vertex.reserve(vertices);
	for (uint32_t v = 0; v < vertices; v++) {
		g->entity_to_vertex.emplace(g->vertex_entity[v], v);
	}
	auto vertex_of = [&](int64_t entity, const char *what) {
		auto it = g->entity_to_vertex.find(entity);
		if (it == g->entity_to_vertex.end()) {
			throw std::invalid_argument(std::string(what) + " refers to entity " + std::to_string(entity) +
			                            ", which is not among the build's entities");
		}
		return it->second;
	};

	// Undirected adjacency.
	std::vector<std::pair<uint32_t, uint32_t>> pairs;
	pairs.reserve(in.edge_a.size() * 2);
	for (size_t i = 0; i < in.edge_a.size(); i++) {
		const uint32_t a = vertex_of(in.edge_a[i], "a relates edge");
		const uint32_t b = vertex_of(in.edge_b[i], "a relates edge");
		if (a == b) {
			continue;
		}
		pairs.emplace_back(a, b);
		pairs.emplace_back(b, a);
	}
	BuildCsr(vertices, pairs, g->adj_offsets, g->adj);

	// Memories by id descending, kinds dictionary in first-seen order of that sort.
	std::vector<uint32_t> by_memory(in.about_memory.size());
	std::iota(by_memory.begin(), by_memory.end(), 0u);
	std::sort(by_memory.begin(), by_memory.end(),
	          [&](uint32_t x, uint32_t y) { return in.about_memory[x] > in.about_memory[y]; });
	std::unordered_map<std::string, uint16_t> kind_codes;
	std::vector<uint32_t> memory_index_of_row(in.about_memory.size());
	for (uint32_t row : by_memory) {
		const int64_t id = in.about_memory[row];
		if (g->memory_ids.empty() || g->memory_ids.back() != id) {
			auto found = kind_codes.find(in.about_kind[row]);
			uint16_t code;
			if (found == kind_codes.end()) {
				if (g->kinds.size() >= std::numeric_limits<uint16_t>::max()) {
					throw std::invalid_argument("more than 65,535 memory kinds in one graph generation");
				}
				code = uint16_t(g->kinds.size());
				g->kinds.push_back(in.about_kind[row]);
				kind_codes.emplace(in.about_kind[row], code);
			} else {
				code = found->second;
			}
			g->memory_ids.push_back(id);
			g->memory_kind.push_back(code);
		}
		memory_index_of_row[row] = uint32_t(g->memory_ids.size() - 1);
	}
	pairs.clear();
	pairs.reserve(in.about_memory.size());
	for (size_t i = 0; i < in.about_memory.size(); i++) {
		pairs.emplace_back(vertex_of(in.about_entity[i], "an ABOUT link"), memory_index_of_row[i]);
	}
	BuildCsr(vertices, pairs, g->about_offsets, g->about);

	g->DeriveKeyMaps(); // entity_to_vertex is already built: the links above needed it
	g->DeriveMemoryAbout();
	return g;
}

std::string Generation::Serialize() const {
	std::string out;
	out.reserve(ByteSize());
	out.append(kMagic, sizeof(kMagic));
	PutPod<uint32_t>(out, kFormatVersion);
	PutPod<int64_t>(out, header.generation_id);
	PutPod<int64_t>(out, header.tenant_id);
	PutPod<int64_t>(out, header.built_at_us);
	PutArray(out, vertex_entity);
	PutArray(out, key_offsets);
	PutPod<uint64_t>(out, key_bytes.size());
	out += key_bytes;
	PutArray(out, adj_offsets);
	PutArray(out, adj);
	PutArray(out, memory_ids);
	PutArray(out, memory_kind);
	PutPod<uint64_t>(out, kinds.size());
	for (const auto &k : kinds) {
		PutPod<uint64_t>(out, k.size());
		out += k;
	}
	PutArray(out, about_offsets);
	PutArray(out, about);
	return out;
}

std::shared_ptr<const Generation> Generation::Parse(const void *data, size_t size) {
	if (size < sizeof(kMagic) || std::memcmp(data, kMagic, sizeof(kMagic)) != 0) {
		throw std::invalid_argument("not an anatid graph generation BLOB (bad magic)");
	}
	Reader r(static_cast<const char *>(data) + sizeof(kMagic), size - sizeof(kMagic));
	const uint32_t version = r.Pod<uint32_t>("format version");
	if (version != kFormatVersion) {
		throw std::invalid_argument("graph generation BLOB has format version " + std::to_string(version) +
		                            ", this build reads version " + std::to_string(kFormatVersion) +
		                            ": run maintain_indexes() to rebuild it");
	}
	auto g = std::make_shared<Generation>();
	g->header.generation_id = r.Pod<int64_t>("header");
	g->header.tenant_id = r.Pod<int64_t>("header");
	g->header.built_at_us = r.Pod<int64_t>("header");
	r.Array(g->vertex_entity, "vertices");
	r.Array(g->key_offsets, "name keys");
	r.Bytes(g->key_bytes, "name keys");
	r.Array(g->adj_offsets, "adjacency");
	r.Array(g->adj, "adjacency");
	r.Array(g->memory_ids, "memories");
	r.Array(g->memory_kind, "memory kinds");
	const uint64_t kind_count = r.Pod<uint64_t>("kinds");
	if (kind_count > std::numeric_limits<uint16_t>::max()) {
		throw std::invalid_argument("graph generation BLOB has too many kinds");
	}
	g->kinds.resize(kind_count);
	for (auto &k : g->kinds) {
		r.Bytes(k, "kinds");
	}
	r.Array(g->about_offsets, "ABOUT lists");
	r.Array(g->about, "ABOUT lists");
	if (!r.AtEnd()) {
		throw std::invalid_argument("graph generation BLOB has trailing bytes");
	}
	const size_t vertices = g->vertex_entity.size();
	CheckOffsets(g->key_offsets, vertices, g->key_bytes.size(), "name key");
	CheckOffsets(g->adj_offsets, vertices, g->adj.size(), "adjacency");
	CheckOffsets(g->about_offsets, vertices, g->about.size(), "ABOUT");
	for (uint32_t v : g->adj) {
		if (v >= vertices) {
			throw std::invalid_argument("graph generation BLOB has an edge to a missing vertex");
		}
	}
	if (g->memory_kind.size() != g->memory_ids.size()) {
		throw std::invalid_argument("graph generation BLOB has memories and kinds of different lengths");
	}
	for (uint16_t k : g->memory_kind) {
		if (k >= g->kinds.size()) {
			throw std::invalid_argument("graph generation BLOB has a memory with an unknown kind");
		}
	}
	for (uint32_t m : g->about) {
		if (m >= g->memory_ids.size()) {
			throw std::invalid_argument("graph generation BLOB has an ABOUT link to a missing memory");
		}
	}
	g->DeriveMaps();
	return g;
}

} // namespace graph
} // namespace anatid
