// Values the driver writes: derived from (key, version, length) alone, so a
// value read back can be checked without storing what was written.
//
// Layout: bytes 0..3 version, 4..7 length, 8..15 the key's 64-bit FNV-1a
// hash (all little-endian), then pseudo-random bytes from a generator seeded
// by hash and version.  A value of another key, another version, a cut or
// altered value all fail the check.
#ifndef FOREACTOR_APPS_LEVELDB_DRIVER_VALUES_H_
#define FOREACTOR_APPS_LEVELDB_DRIVER_VALUES_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace leveldb_driver {

constexpr uint32_t kValueHeaderSize = 16;

// Writes the value of `key` at `version` with `length` bytes into `value`
// (resized).  A length below kValueHeaderSize is raised to it.
void MakeValue(std::string_view key, uint32_t version, uint32_t length, std::string* value);

// Returns true when `value` is exactly MakeValue(key, v, value.size()) for
// some v, and stores v in `version`; false otherwise.
bool CheckValue(std::string_view key, std::string_view value, uint32_t* version);

}  // namespace leveldb_driver

#endif  // FOREACTOR_APPS_LEVELDB_DRIVER_VALUES_H_
