// elf_symbol.h: where a function of an executable lives in a running process.
#ifndef FOREACTOR_TOOLS_TRACE_ELF_SYMBOL_H_
#define FOREACTOR_TOOLS_TRACE_ELF_SYMBOL_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace foreactor_trace {

// A function symbol of an ELF file, as the file states it.
struct FunctionSymbol {
  uint64_t file_address = 0;  // st_value: the link-time virtual address
  uint64_t size = 0;
  bool position_independent = false;  // ET_DYN: the loader adds a load bias
  uint64_t lowest_load_address = 0;   // p_vaddr of the first PT_LOAD, page aligned
};

// Looks up the function `name` in the 64-bit x86-64 ELF file at `path`:
// first in its full symbol table (.symtab, which also lists static
// functions), then in its dynamic symbol table.  Returns true and fills
// `symbol`; or false with `error` saying why, and `similar` holding up to
// eight function names that contain `name` (to suggest a spelling).
bool FindFunctionSymbol(const std::string& path, const std::string& name, FunctionSymbol* symbol,
                        std::string* error, std::vector<std::string>* similar);

// The run-time address of `symbol` in process `pid`, whose executable is
// `executable_path` (as /proc/PID/exe names it): for a position-independent
// executable, the start of its first mapping (file offset 0) in
// /proc/PID/maps minus the symbol file's lowest load address.  Returns 0 when
// the mapping cannot be found.
uint64_t RuntimeAddress(pid_t pid, const std::string& executable_path,
                        const FunctionSymbol& symbol);

}  // namespace foreactor_trace

#endif  // FOREACTOR_TOOLS_TRACE_ELF_SYMBOL_H_
