// Tests of ProcessHasOnlyOneThread(): true in a process that never made a
// thread (each test runs alone under ctest), false for good once an
// io_uring ring's workers were noted or a thread was made with
// pthread_create(3).
#include "base/process_threads.h"

#include <sys/single_threaded.h>

#include <thread>

#include <gtest/gtest.h>

namespace foreactor {
namespace {

TEST(ProcessThreadsTest, KernelWorkerThreadsNotedMeanNotOnlyOne) {
  // Run with the other test in one process, a thread may have been made.
  if (__libc_single_threaded) {
    EXPECT_TRUE(ProcessHasOnlyOneThread());
  }
  NoteKernelWorkerThreads();
  EXPECT_FALSE(ProcessHasOnlyOneThread());
}

TEST(ProcessThreadsTest, AThreadMadeOnceMeansNotOnlyOne) {
  std::thread([] {}).join();
  EXPECT_FALSE(ProcessHasOnlyOneThread());
}

}  // namespace
}  // namespace foreactor
