// libforeactor_graph_dump.so: writes every graph a program builds as DOT.
//
// Preloaded ahead of libforeactor.so by 'foreactor graph', it interposes the
// public foreactor_graph_finish(): plugins call it through the PLT (the C++
// GraphBuilder::Build() does too), so this definition runs first.  It calls
// the real function (dlsym RTLD_NEXT) and returns its result unchanged.
// When $FOREACTOR_GRAPH_DUMP_DIR names a directory it also writes, for each
// graph finished:
//
//   DIR/NAME.dot          (NAME.2.dot, NAME.3.dot, ... for later graphs of the same name)
//   a line of DIR/graphs.jsonl: {"name":..,"file":..,"valid":true|false,"error":..,"pid":..}
//
// An invalid graph cannot be drawn (the library writes finished graphs
// only); its line carries the validation error instead of a file.
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "foreactor/foreactor.h"

namespace {

using FinishFunction = int (*)(foreactor_graph*, char*, size_t);
using WriteDotFunction = int (*)(const foreactor_graph*, FILE*);
using NameFunction = const char* (*)(const foreactor_graph*);

constexpr const char* kDirectoryVariable = "FOREACTOR_GRAPH_DUMP_DIR";

std::string JsonString(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      char escaped[8];
      snprintf(escaped, sizeof escaped, "\\u%04x", c);
      out += escaped;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

// Keeps letters, digits, '_', '-' and '.', so a graph name makes a safe file name.
std::string FileStem(const char* name) {
  std::string stem;
  for (const char* c = name; c != nullptr && *c != '\0'; ++c) {
    const bool safe = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                      (*c >= '0' && *c <= '9') || *c == '_' || *c == '-' || *c == '.';
    stem += safe ? *c : '_';
  }
  return stem.empty() ? "graph" : stem;
}

// Creates DIR/STEM.dot, or DIR/STEM.N.dot when taken.  Returns the open
// file and sets `file_name`, or nullptr.
FILE* CreateDotFile(const std::string& directory, const std::string& stem, std::string* file_name) {
  for (int number = 1; number < 10000; ++number) {
    *file_name = stem + (number == 1 ? "" : "." + std::to_string(number)) + ".dot";
    const int fd =
        open((directory + "/" + *file_name).c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) return fdopen(fd, "w");
    if (errno != EEXIST) return nullptr;
  }
  return nullptr;
}

void AppendIndexLine(const std::string& directory, const std::string& line) {
  const int fd =
      open((directory + "/graphs.jsonl").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  const std::string text = line + "\n";
  if (write(fd, text.data(), text.size()) < 0) {
    // Nothing more to do: the tool reports a graph missing from the index.
  }
  close(fd);
}

void DumpGraph(foreactor_graph* graph, bool valid, const char* error) {
  const char* directory = getenv(kDirectoryVariable);
  if (directory == nullptr || *directory == '\0') return;
  const int saved_errno = errno;
  // Looked up, not linked: this library must load even where libforeactor.so
  // is not (then no graph is ever finished and nothing here runs).
  const auto graph_name =
      reinterpret_cast<NameFunction>(dlsym(RTLD_DEFAULT, "foreactor_graph_name"));
  const auto write_dot =
      reinterpret_cast<WriteDotFunction>(dlsym(RTLD_DEFAULT, "foreactor_graph_write_dot"));
  if (graph_name == nullptr || write_dot == nullptr) return;
  const char* name = graph_name(graph);
  std::string file_name;
  bool written = false;
  if (valid) {
    if (FILE* out = CreateDotFile(directory, FileStem(name), &file_name)) {
      written = write_dot(graph, out) == 0;
      written = fclose(out) == 0 && written;
    }
  }
  std::string line = "{\"name\":" + JsonString(name != nullptr ? name : "") +
                     ",\"file\":" + (written ? JsonString(file_name) : "null") +
                     ",\"valid\":" + (valid ? "true" : "false") +
                     ",\"error\":" + (valid ? "null" : JsonString(error != nullptr ? error : "")) +
                     ",\"pid\":" + std::to_string(getpid()) + "}";
  AppendIndexLine(directory, line);
  errno = saved_errno;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int foreactor_graph_finish(foreactor_graph* graph,
                                                                             char* error,
                                                                             size_t error_size) {
  static const FinishFunction real =
      reinterpret_cast<FinishFunction>(dlsym(RTLD_NEXT, "foreactor_graph_finish"));
  if (real == nullptr) {
    static const char kMessage[] =
        "foreactor graph: libforeactor.so is not loaded after libforeactor_graph_dump.so\n";
    if (write(STDERR_FILENO, kMessage, sizeof kMessage - 1) < 0) {
      // stderr is gone: nothing to report to.
    }
    return -1;
  }
  char message[1024] = "";
  char* buffer = error != nullptr ? error : message;
  const size_t buffer_size = error != nullptr ? error_size : sizeof message;
  const int status = real(graph, buffer, buffer_size);
  if (graph != nullptr) DumpGraph(graph, status == 0, buffer_size > 0 ? buffer : "");
  return status;
}
