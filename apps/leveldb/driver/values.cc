#include "driver/values.h"

#include <cstring>

namespace leveldb_driver {

namespace {

uint64_t Fnv1a64(std::string_view bytes) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char byte : bytes) {
    hash ^= byte;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

// splitmix64: a small generator whose every state gives a good 64-bit word.
class ByteStream {
 public:
  ByteStream(uint64_t key_hash, uint32_t version)
      : state_(key_hash ^ (0x9e3779b97f4a7c15ull * (uint64_t{version} + 1))) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

 private:
  uint64_t state_;
};

void PutLittleEndian(char* out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out[i] = static_cast<char>((value >> (8 * i)) & 0xff);
}

uint64_t GetLittleEndian(const char* in, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value |= uint64_t{static_cast<unsigned char>(in[i])} << (8 * i);
  return value;
}

}  // namespace

void MakeValue(std::string_view key, uint32_t version, uint32_t length, std::string* value) {
  if (length < kValueHeaderSize) length = kValueHeaderSize;
  value->resize(length);
  char* out = value->data();
  const uint64_t hash = Fnv1a64(key);
  PutLittleEndian(out, version, 4);
  PutLittleEndian(out + 4, length, 4);
  PutLittleEndian(out + 8, hash, 8);
  ByteStream stream(hash, version);
  for (uint32_t at = kValueHeaderSize; at < length; at += 8) {
    const uint64_t word = stream.Next();
    std::memcpy(out + at, &word, length - at < 8 ? length - at : 8);
  }
}

bool CheckValue(std::string_view key, std::string_view value, uint32_t* version) {
  if (value.size() < kValueHeaderSize) return false;
  const char* in = value.data();
  const auto stored_version = static_cast<uint32_t>(GetLittleEndian(in, 4));
  const uint64_t stored_length = GetLittleEndian(in + 4, 4);
  const uint64_t hash = Fnv1a64(key);
  if (stored_length != value.size() || GetLittleEndian(in + 8, 8) != hash) return false;
  ByteStream stream(hash, stored_version);
  for (size_t at = kValueHeaderSize; at < value.size(); at += 8) {
    const uint64_t word = stream.Next();
    const size_t n = value.size() - at < 8 ? value.size() - at : 8;
    if (std::memcmp(in + at, &word, n) != 0) return false;
  }
  *version = stored_version;
  return true;
}

}  // namespace leveldb_driver
