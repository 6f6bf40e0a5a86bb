#include "elf_symbol.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace foreactor_trace {
namespace {

// A read-only mapping of a whole file, unmapped on destruction.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat status;
    if (fstat(fd, &status) == 0 && status.st_size > 0) {
      void* data =
          mmap(nullptr, static_cast<size_t>(status.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (data != MAP_FAILED) {
        data_ = static_cast<const unsigned char*>(data);
        size_ = static_cast<size_t>(status.st_size);
      }
    }
    close(fd);
  }
  ~MappedFile() {
    if (data_ != nullptr) munmap(const_cast<unsigned char*>(data_), size_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  bool valid() const { return data_ != nullptr; }
  size_t size() const { return size_; }
  // A pointer to `length` bytes at `offset`, or nullptr when out of range.
  const unsigned char* at(uint64_t offset, uint64_t length) const {
    if (offset > size_ || length > size_ - offset) return nullptr;
    return data_ + offset;
  }

 private:
  const unsigned char* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace

bool FindFunctionSymbol(const std::string& path, const std::string& name, FunctionSymbol* symbol,
                        std::string* error, std::vector<std::string>* similar) {
  MappedFile file(path);
  if (!file.valid()) {
    *error = "cannot read " + path;
    return false;
  }
  const auto* header = reinterpret_cast<const Elf64_Ehdr*>(file.at(0, sizeof(Elf64_Ehdr)));
  if (header == nullptr || memcmp(header->e_ident, ELFMAG, SELFMAG) != 0 ||
      header->e_ident[EI_CLASS] != ELFCLASS64 || header->e_machine != EM_X86_64) {
    *error = path + " is not a 64-bit x86-64 ELF executable";
    return false;
  }
  symbol->position_independent = header->e_type == ET_DYN;
  const auto* programs = reinterpret_cast<const Elf64_Phdr*>(
      file.at(header->e_phoff, uint64_t{header->e_phnum} * sizeof(Elf64_Phdr)));
  bool have_load = false;
  for (unsigned i = 0; programs != nullptr && i < header->e_phnum; ++i) {
    if (programs[i].p_type == PT_LOAD &&
        (!have_load || programs[i].p_vaddr < symbol->lowest_load_address)) {
      symbol->lowest_load_address = programs[i].p_vaddr & ~uint64_t{0xfff};
      have_load = true;
    }
  }
  const auto* sections = reinterpret_cast<const Elf64_Shdr*>(
      file.at(header->e_shoff, uint64_t{header->e_shnum} * sizeof(Elf64_Shdr)));
  if (sections == nullptr) {
    *error = path + " has no section headers";
    return false;
  }
  for (uint32_t wanted : {uint32_t{SHT_SYMTAB}, uint32_t{SHT_DYNSYM}}) {
    for (unsigned i = 0; i < header->e_shnum; ++i) {
      const Elf64_Shdr& table = sections[i];
      if (table.sh_type != wanted || table.sh_entsize != sizeof(Elf64_Sym) ||
          table.sh_link >= header->e_shnum) {
        continue;
      }
      const Elf64_Shdr& strings = sections[table.sh_link];
      const auto* names =
          reinterpret_cast<const char*>(file.at(strings.sh_offset, strings.sh_size));
      const auto* entries =
          reinterpret_cast<const Elf64_Sym*>(file.at(table.sh_offset, table.sh_size));
      if (names == nullptr || entries == nullptr) continue;
      const size_t count = table.sh_size / sizeof(Elf64_Sym);
      for (size_t k = 0; k < count; ++k) {
        const Elf64_Sym& entry = entries[k];
        if (ELF64_ST_TYPE(entry.st_info) != STT_FUNC || entry.st_value == 0 ||
            entry.st_name >= strings.sh_size) {
          continue;
        }
        const char* entry_name = names + entry.st_name;
        const size_t length = strnlen(entry_name, strings.sh_size - entry.st_name);
        const std::string_view text(entry_name, length);
        if (text == name) {
          symbol->file_address = entry.st_value;
          symbol->size = entry.st_size;
          return true;
        }
        if (!name.empty() && text.find(name) != std::string_view::npos && similar->size() < 8) {
          const std::string candidate(text);
          bool seen = false;
          for (const std::string& other : *similar) seen = seen || other == candidate;
          if (!seen) similar->push_back(candidate);
        }
      }
    }
  }
  *error = "no function named '" + name + "' in the symbol table of " + path;
  return false;
}

uint64_t RuntimeAddress(pid_t pid, const std::string& executable_path,
                        const FunctionSymbol& symbol) {
  if (!symbol.position_independent) return symbol.file_address;
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  while (std::getline(maps, line)) {
    // start-end perms offset dev inode path
    std::istringstream fields(line);
    std::string range, permissions, offset, device, inode, mapped_path;
    fields >> range >> permissions >> offset >> device >> inode;
    std::getline(fields >> std::ws, mapped_path);
    if (mapped_path != executable_path || std::stoull(offset, nullptr, 16) != 0) continue;
    const uint64_t start = std::stoull(range.substr(0, range.find('-')), nullptr, 16);
    return start - symbol.lowest_load_address + symbol.file_address;
  }
  return 0;
}

}  // namespace foreactor_trace
