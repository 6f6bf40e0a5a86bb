// Tests of a process with no thread-specific data key left: foreactor keeps
// its per-thread state under a key of its own, made at the process's first
// scope.  When pthread_key_create() fails there, scopes run without
// speculation, the program's calls give their usual results, and no key's
// value changes (the runtime once set key 0, someone else's, to its state).
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "config/settings.h"
#include "foreactor/foreactor.hpp"
#include "runtime/lettered_file.h"
#include "runtime/program_calls.h"
#include "runtime/read_loop_graph.h"

namespace {

constexpr uint64_t kBlock = 4096;
constexpr uint64_t kBlocks = 16;

// The values of every key number up to PTHREAD_KEYS_MAX on this thread.
std::vector<void*> KeyValues() {
  std::vector<void*> values;
  for (pthread_key_t key = 0; key < PTHREAD_KEYS_MAX; ++key)
    values.push_back(pthread_getspecific(key));
  return values;
}

// In a process of its own: takes every key left (each set to a value of
// its own), runs one scope of the read loop, and exits 0 when every read
// returned its block, no scope speculated, and no key's value changed.
[[noreturn]] void RunScopeWithNoKeyLeft(int fd) {
  static char markers[PTHREAD_KEYS_MAX];
  pthread_key_t key;
  int taken = 0;
  while (taken < PTHREAD_KEYS_MAX && pthread_key_create(&key, nullptr) == 0) {
    pthread_setspecific(key, &markers[taken++]);
  }
  const std::vector<void*> before = KeyValues();
  auto graph = foreactor::BuildReadLoop("no_key_left");
  bool reads_right = graph.valid();
  {
    foreactor::ReadLoopState state{fd, kBlocks, kBlock};
    foreactor::Scope scope(graph, state);
    for (uint64_t block = 0; block < kBlocks; ++block) {
      std::vector<char> buffer(kBlock);
      foreactor_call call = foreactor::Pread(fd, kBlock, static_cast<int64_t>(block * kBlock));
      call.buffer = buffer.data();
      const int64_t result = foreactor::ProgramCallThroughScopes(call);
      reads_right = reads_right && result == static_cast<int64_t>(kBlock) &&
                    buffer[0] == foreactor::BlockLetter(block) &&
                    buffer[kBlock - 1] == foreactor::BlockLetter(block);
    }
  }
  foreactor_scope_outcome outcome{};
  const bool speculated = foreactor_last_scope_outcome(graph.handle(), &outcome) != 0;
  const bool keys_kept = KeyValues() == before;
  _exit(taken > 0 && reads_right && !speculated && keys_kept ? 0 : 1);
}

TEST(ThreadStateKeyTest, NoKeyLeftRunsWithoutSpeculationAndLeavesEveryKeyAlone) {
  // A process of its own, started afresh: the key is made at the first
  // scope of a process, which this test's process may have had already.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  setenv("FOREACTOR", "1", 1);
  setenv("FOREACTOR_ENGINE", "threads", 1);
  setenv("FOREACTOR_DEPTH", "4", 1);
  setenv("FOREACTOR_PAGE_CACHE", "0", 1);
  foreactor::ReloadSettingsForTesting();
  const int fd = foreactor::MakeLetteredFile(kBlocks, kBlock);
  ASSERT_GE(fd, 0);
  EXPECT_EXIT(RunScopeWithNoKeyLeft(fd), testing::ExitedWithCode(0),
              "no thread-specific data key left");
  close(fd);
}

}  // namespace
