// Reading the little-endian arrays that anatid.indexes writes as BLOB parts.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace anatid {

// Copies part `index` into a vector of T, checking that it holds exactly `count` items.
template <class T>
std::vector<T> ReadPart(const std::vector<std::string_view> &parts, size_t index, size_t count, const char *what) {
	if (index >= parts.size()) {
		throw std::runtime_error(std::string("generation is missing its ") + what + " part");
	}
	const std::string_view part = parts[index];
	if (part.size() != count * sizeof(T)) {
		throw std::runtime_error(std::string("generation part ") + what + " has " + std::to_string(part.size()) +
		                         " bytes, expected " + std::to_string(count * sizeof(T)));
	}
	std::vector<T> out(count);
	if (count) {
		std::memcpy(out.data(), part.data(), part.size());
	}
	return out;
}

} // namespace anatid
