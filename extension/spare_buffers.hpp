// Byte buffers kept between reads for aggregates that copy a whole journal per call.
//
// Why: a tenant that never ran maintain_indexes() has every write in its journal, so each
// read copies megabytes of scanned rows into its aggregate state (the bytes the journal
// fold caches compare). Freshly allocated, those pages are faulted in and zeroed on every
// call: at 40,000 graph journal rows that cost more than the recall itself. A state takes
// a spare buffer (capacity kept, contents cleared) and gives it back when destroyed.
// Bounded: a few buffers per type, none kept above kMaxBytes.
#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace anatid {

// Buffer: std::string or std::vector<T> (anything with clear(), capacity() and value_type).
template <class Buffer>
class Spare {
public:
	static constexpr size_t kMaxBuffers = 4;
	static constexpr size_t kMinBytes = size_t(1) << 16; // smaller ones cost nothing to allocate
	static constexpr size_t kMaxBytes = size_t(64) << 20;  // huge ones are not worth holding

	// An empty buffer, with the capacity of one given back earlier when there is one.
	static Buffer Take() {
		Pool &pool = Instance();
		std::lock_guard<std::mutex> lock(pool.mutex);
		if (pool.spare.empty()) {
			return Buffer();
		}
		Buffer out = std::move(pool.spare.back());
		pool.spare.pop_back();
		out.clear();
		return out;
	}
	static void Give(Buffer &&buffer) {
		const size_t bytes = buffer.capacity() * sizeof(typename Buffer::value_type);
		if (bytes < kMinBytes || bytes > kMaxBytes) {
			return;
		}
		Pool &pool = Instance();
		std::lock_guard<std::mutex> lock(pool.mutex);
		if (pool.spare.size() < kMaxBuffers) {
			pool.spare.push_back(std::move(buffer));
		}
	}

private:
	struct Pool {
		std::mutex mutex;
		std::vector<Buffer> spare;
	};
	static Pool &Instance() {
		static Pool *pool = new Pool(); // never destroyed: outlives every database
		return *pool;
	}
};

using SpareBuffers = Spare<std::string>;

} // namespace anatid
