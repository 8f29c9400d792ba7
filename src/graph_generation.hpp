// A graph generation: the immutable, serialized base of one tenant's graph recall.
//
// DuckDB-free core. A generation holds what the 2-hop recall needs from the canonical
// tables at one instant (`built_at`): the tenant's entities (own vertex numbering, name
// keys), an undirected CSR over open `relates` edges, and for every vertex the memories
// ABOUT it in recall order (memory_id descending) with each memory's kind. Writes after
// the build reach reads through the journal (graph_journal.hpp); nothing in a
// generation is ever changed, so a parsed one can be cached by its generation id.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace anatid {
namespace graph {

// Rows a build consumes, in any order (a multi-threaded DuckDB aggregate feeds them in
// nondeterministic order, so Build sorts everything and its output is deterministic).
struct BuildInput {
	std::vector<int64_t> entity_ids;
	std::vector<std::string> entity_keys; // name_key of entity_ids[i]
	std::vector<int64_t> edge_a;          // open relates edges, either direction
	std::vector<int64_t> edge_b;
	std::vector<int64_t> about_memory; // ABOUT links of trusted memories
	std::vector<int64_t> about_entity;
	std::vector<std::string> about_kind; // the memory's kind (immutable per memory_id)
};

struct GenerationHeader {
	int64_t generation_id = 0;
	int64_t tenant_id = 0;
	int64_t built_at_us = 0; // microseconds since the Unix epoch, UTC
};

class Generation {
public:
	GenerationHeader header;

	// vertex v: entity vertex_entity[v] (ascending), name key KeyOf(v)
	std::vector<int64_t> vertex_entity;
	std::vector<uint32_t> key_offsets; // size V + 1 into key_bytes
	std::string key_bytes;
	// undirected CSR, neighbours sorted ascending, no duplicates, no self loops
	std::vector<uint32_t> adj_offsets; // size V + 1
	std::vector<uint32_t> adj;
	// memories sorted by memory_id descending; about lists hold memory indexes ascending
	std::vector<int64_t> memory_ids;
	std::vector<uint16_t> memory_kind; // index into kinds
	std::vector<std::string> kinds;
	std::vector<uint32_t> about_offsets; // size V + 1
	std::vector<uint32_t> about;

	// Derived when built or parsed, never serialized.
	// memory index i is ABOUT vertices memory_about[memory_about_offsets[i] ..
	// memory_about_offsets[i + 1]) (ascending): the inverse of about, for the graph arm
	// that expands from a memory to its entities.
	std::vector<uint32_t> memory_about_offsets; // size memory_ids.size() + 1
	std::vector<uint32_t> memory_about;
	std::unordered_map<int64_t, uint32_t> entity_to_vertex;
	std::unordered_map<std::string_view, uint32_t> key_to_vertex;
	// The name keys as tokens, for seeds from a query (graph_seeds.hpp): vertex v's distinct
	// tokens are key_tokens[key_token_offsets[v] .. key_token_offsets[v + 1]) (views into
	// key_bytes, sorted), and v is listed under its rarest token only (fewest keys holding
	// it, then the smallest): a vertex is a seed only if all its tokens are query terms, so
	// looking it up under one of them finds it, and a token shared by many names (a
	// surname, "project") costs nothing unless it is the rarest of some name. Only for
	// ASCII keys: ascii_keys is false when some key is not (see graph_seeds.hpp).
	std::vector<uint32_t> key_token_offsets; // size V + 1
	std::vector<std::string_view> key_tokens;
	std::unordered_map<std::string_view, std::vector<uint32_t>> rarest_token_vertices;
	bool ascii_keys = true;

	uint32_t VertexCount() const {
		return uint32_t(vertex_entity.size());
	}
	// The index of memory_id in memory_ids (sorted descending), or -1.
	int64_t MemoryIndex(int64_t memory_id) const;
	std::string_view KeyOf(uint32_t v) const {
		return std::string_view(key_bytes).substr(key_offsets[v], key_offsets[v + 1] - key_offsets[v]);
	}
	// Approximate resident bytes (what the cache budget counts).
	size_t ByteSize() const;

	// Throws std::invalid_argument on inconsistent input (an edge or ABOUT link to an
	// unknown entity, more than 65,535 kinds, more than 2^32 - 1 rows).
	static std::shared_ptr<const Generation> Build(const GenerationHeader &header, BuildInput input);

	// The compact little-endian form stored in the file, and its inverse. Parse checks
	// the magic, format version, sizes and every offset; it throws std::invalid_argument
	// naming what is wrong rather than trusting a corrupted BLOB.
	std::string Serialize() const;
	static std::shared_ptr<const Generation> Parse(const void *data, size_t size);

private:
	void DeriveMaps();
	void DeriveMemoryAbout();
	void DeriveKeyMaps(); // key_to_vertex and the key tokens
};

} // namespace graph
} // namespace anatid
