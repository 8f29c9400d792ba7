// anatid_text_content(ids BIGINT[], gen_id BIGINT, nonce BIGINT, touched BIGINT[], valid_at_us BIGINT)
//   -> LIST(STRUCT(content VARCHAR, kind VARCHAR))
//
// The content and kind of each memory in `ids` (same order, same length) from the tenant's
// resident text generation (gen_id, nonce), where it can vouch for them: the generation
// holds the memory with its content, the memory is valid at valid_at_us, and no text
// journal row touches it (`touched`: the memory ids of the tenant's text journal, i.e. the
// writes since the build, tombstones included). Every other element is NULL, and so is
// every element when the generation is not resident in this process: the caller reads
// anatid_memories for those ids only. A NULL gen_id (the tenant has no text generation)
// answers NULL, so the caller knows there is nothing to make resident. This is the rule anatid_hybrid_recall
// hydrates its own hits by, offered to the graph paths, whose hits (graph-only ones)
// otherwise cost a scan of anatid_memories (it has no index on memory_id; ~2.4 ms at 1M).
// Never parses a BLOB: a text recall or anatid.anatid_hybrid makes the generation resident.
#include "anatid_extension.hpp"
#include "anatid_graph_common.hpp"
#include "capi_util.hpp"
#include "hybrid.hpp"
#include "logical_types.hpp"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <vector>

namespace anatid {

namespace {

enum Arg : idx_t { kIds, kGen, kNonce, kTouched, kValidAt };

// The generation the row names, when this process holds it parsed; else null.
std::shared_ptr<const TextGeneration> Resident(duckdb_data_chunk input, idx_t row) {
	GenerationKey key {0, 0};
	if (!Scalar(duckdb_data_chunk_get_vector(input, kGen), row, key.id) ||
	    !Scalar(duckdb_data_chunk_get_vector(input, kNonce), row, key.nonce) ||
	    !HasGeneration(GenerationKind::kText, key)) {
		return nullptr;
	}
	try {
		return TextGenerationFor(key, {}, false);
	} catch (const std::runtime_error &) { // evicted since HasGeneration
		return nullptr;
	}
}

void Execute(duckdb_function_info, duckdb_data_chunk input, duckdb_vector output) {
	const idx_t n = duckdb_data_chunk_get_size(input);
	duckdb_vector ids_vec = duckdb_data_chunk_get_vector(input, kIds);
	duckdb_vector touched_vec = duckdb_data_chunk_get_vector(input, kTouched);
	duckdb_vector valid_vec = duckdb_data_chunk_get_vector(input, kValidAt);
	const auto *ids = static_cast<const int64_t *>(duckdb_vector_get_data(duckdb_list_vector_get_child(ids_vec)));
	const auto *touched_data =
	    static_cast<const int64_t *>(duckdb_vector_get_data(duckdb_list_vector_get_child(touched_vec)));
	duckdb_vector touched_child = duckdb_list_vector_get_child(touched_vec);
	auto *out_lists = static_cast<duckdb_list_entry *>(duckdb_vector_get_data(output));
	idx_t total = duckdb_list_vector_get_size(output);
	for (idx_t row = 0; row < n; row++) {
		idx_t offset = 0, length = 0;
		if (!ListSlice(ids_vec, row, offset, length) || !IsValid(duckdb_data_chunk_get_vector(input, kGen), row)) {
			SetNull(output, row);
			out_lists[row] = duckdb_list_entry {total, 0};
			continue;
		}
		int64_t valid_at = 0;
		std::shared_ptr<const TextGeneration> gen =
		    Scalar(valid_vec, row, valid_at) ? Resident(input, row) : nullptr;
		std::vector<int64_t> touched;
		idx_t t_off = 0, t_len = 0;
		if (gen && ListSlice(touched_vec, row, t_off, t_len)) {
			for (idx_t i = t_off; i < t_off + t_len; i++) {
				if (IsValid(touched_child, i)) {
					touched.push_back(touched_data[i]);
				}
			}
			std::sort(touched.begin(), touched.end());
		}
		duckdb_list_vector_reserve(output, total + length);
		duckdb_list_vector_set_size(output, total + length);
		duckdb_vector child = duckdb_list_vector_get_child(output);
		duckdb_vector content_vec = duckdb_struct_vector_get_child(child, 0);
		duckdb_vector kind_vec = duckdb_struct_vector_get_child(child, 1);
		duckdb_vector ids_child = duckdb_list_vector_get_child(ids_vec);
		for (idx_t i = 0; i < length; i++) {
			const idx_t at = total + i;
			const int64_t id = ids[offset + i];
			const int64_t doc = gen && IsValid(ids_child, offset + i) &&
			                            !std::binary_search(touched.begin(), touched.end(), id)
			                        ? gen->VouchedDoc(id, valid_at)
			                        : -1;
			if (doc < 0) {
				SetNull(child, at);
				SetNull(content_vec, at);
				SetNull(kind_vec, at);
				continue;
			}
			const std::string_view content = gen->Content(static_cast<size_t>(doc));
			const std::string_view kind = gen->Kind(static_cast<size_t>(doc));
			duckdb_vector_assign_string_element_len(content_vec, at, content.data(), content.size());
			duckdb_vector_assign_string_element_len(kind_vec, at, kind.data(), kind.size());
		}
		out_lists[row] = duckdb_list_entry {total, length};
		total += length;
	}
}

} // namespace

void RegisterAnatidTextContent(duckdb_connection connection) {
	duckdb_scalar_function f = duckdb_create_scalar_function();
	duckdb_scalar_function_set_name(f, "anatid_text_content");
	duckdb_logical_type ids = ListOf(DUCKDB_TYPE_BIGINT), big = Type(DUCKDB_TYPE_BIGINT);
	duckdb_scalar_function_add_parameter(f, ids);
	duckdb_scalar_function_add_parameter(f, big);
	duckdb_scalar_function_add_parameter(f, big);
	duckdb_scalar_function_add_parameter(f, ids);
	duckdb_scalar_function_add_parameter(f, big);
	duckdb_destroy_logical_type(&ids);
	duckdb_destroy_logical_type(&big);
	duckdb_logical_type result = ListOfStruct({{"content", Type(DUCKDB_TYPE_VARCHAR)}, {"kind", Type(DUCKDB_TYPE_VARCHAR)}});
	duckdb_scalar_function_set_return_type(f, result);
	duckdb_destroy_logical_type(&result);
	duckdb_scalar_function_set_special_handling(f); // a NULL generation means "none": NULL elements, not a NULL list
	duckdb_scalar_function_set_volatile(f);         // reads the process-wide generation cache
	duckdb_scalar_function_set_function(f, GuardScalar<Execute>);
	RegisterScalar(connection, f, "anatid_text_content");
}

} // namespace anatid
