#include "version_listing.h"

#include <algorithm>
#include <cstdlib>

namespace leveldb_plugin {
namespace {

// Reads decimal digits at `*pos` of `text`; false when there are none.
bool TakeNumber(std::string_view text, size_t* pos, uint64_t* value) {
  const size_t begin = *pos;
  *value = 0;
  while (*pos < text.size() && text[*pos] >= '0' && text[*pos] <= '9') {
    *value = *value * 10 + static_cast<uint64_t>(text[(*pos)++] - '0');
  }
  return *pos > begin;
}

bool TakeText(std::string_view text, size_t* pos, std::string_view expected) {
  if (text.substr(*pos, expected.size()) != expected) return false;
  *pos += expected.size();
  return true;
}

// Reads "' @ SEQUENCE : TYPE" at `*pos` (the end of an escaped key).
bool TakeKeyTail(std::string_view text, size_t* pos, uint64_t* tag) {
  uint64_t sequence, type;
  if (!TakeText(text, pos, "' @ ") || !TakeNumber(text, pos, &sequence) ||
      !TakeText(text, pos, " : ") || !TakeNumber(text, pos, &type)) {
    return false;
  }
  *tag = (sequence << 8) | type;
  return true;
}

// Undoes EscapeString(): "\xHH" of a byte that is not printable.
std::string Unescape(std::string_view escaped) {
  std::string key;
  for (size_t i = 0; i < escaped.size(); ++i) {
    if (escaped.substr(i, 2) == "\\x" && i + 4 <= escaped.size()) {
      const std::string hex(escaped.substr(i + 2, 2));
      char* end = nullptr;
      const long byte = std::strtol(hex.c_str(), &end, 16);
      if (end == hex.c_str() + 2 && (byte < ' ' || byte > '~')) {
        key.push_back(static_cast<char>(byte));
        i += 3;
        continue;
      }
    }
    key.push_back(escaped[i]);
  }
  return key;
}

// Parses " NUMBER:SIZE['SMALLEST' @ S : T .. 'LARGEST' @ S : T]".
bool ParseFileLine(std::string_view line, TableFile* file) {
  size_t pos = 1;
  if (!TakeNumber(line, &pos, &file->number) || !TakeText(line, &pos, ":") ||
      !TakeNumber(line, &pos, &file->size) || !TakeText(line, &pos, "['")) {
    return false;
  }
  // The smallest key ends at the first "' @ S : T .. '" (keys may hold
  // quotes); the largest at the last "' @ S : T]".
  const size_t smallest_begin = pos;
  for (size_t end = line.find("' @ ", pos); end != std::string_view::npos;
       end = line.find("' @ ", end + 1)) {
    size_t tail = end;
    if (!TakeKeyTail(line, &tail, &file->smallest_tag) || !TakeText(line, &tail, " .. '")) continue;
    const size_t largest_end = line.rfind("' @ ");
    size_t last = largest_end;
    if (largest_end < tail || !TakeKeyTail(line, &last, &file->largest_tag) ||
        !TakeText(line, &last, "]") || last != line.size()) {
      return false;
    }
    file->smallest_user_key = Unescape(line.substr(smallest_begin, end - smallest_begin));
    file->largest_user_key = Unescape(line.substr(tail, largest_end - tail));
    return true;
  }
  return false;
}

}  // namespace

bool VersionListing::Parse(std::string_view text) {
  int level = -1;
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    const std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    size_t pos = 0;
    uint64_t number;
    if (TakeText(line, &pos, "--- level ") && TakeNumber(line, &pos, &number) &&
        TakeText(line, &pos, " ---") && pos == line.size() && number < kLevels) {
      level = static_cast<int>(number);
      continue;
    }
    TableFile file;
    if (level < 0 || !ParseFileLine(line, &file)) return false;
    levels_[level].push_back(std::move(file));
  }
  return level == kLevels - 1;
}

void VersionListing::Candidates(const InternalKey& key, std::vector<const TableFile*>* out) const {
  const size_t first = out->size();
  for (const TableFile& file : levels_[0]) {
    if (key.user_key.compare(file.smallest_user_key) >= 0 &&
        key.user_key.compare(file.largest_user_key) <= 0) {
      out->push_back(&file);
    }
  }
  std::sort(out->begin() + static_cast<std::ptrdiff_t>(first), out->end(),
            [](const TableFile* a, const TableFile* b) { return a->number > b->number; });
  for (int level = 1; level < kLevels; ++level) {
    const std::vector<TableFile>& files = levels_[level];
    auto file = std::lower_bound(files.begin(), files.end(), key,
                                 [](const TableFile& f, const InternalKey& k) {
                                   return CompareInternalKeys({f.largest_user_key, f.largest_tag}, k) < 0;
                                 });
    if (file != files.end() && key.user_key.compare(file->smallest_user_key) >= 0) {
      out->push_back(&*file);
    }
  }
}

const TableFile* VersionListing::AnyFile() const {
  for (const std::vector<TableFile>& files : levels_) {
    if (!files.empty()) return &files.front();
  }
  return nullptr;
}

bool VersionListing::Contains(uint64_t number) const {
  for (const std::vector<TableFile>& files : levels_) {
    for (const TableFile& file : files) {
      if (file.number == number) return true;
    }
  }
  return false;
}

}  // namespace leveldb_plugin
