// Tests of the one fork registration: handlers run in pthread_atfork's
// order, and a child counts the fork.
#include "base/fork.h"

#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include <gtest/gtest.h>

namespace foreactor {
namespace {

std::string g_trace;  // what the handlers did, in order

void FirstBefore() { g_trace += "b1 "; }
void SecondBefore() { g_trace += "b2 "; }
void FirstParent() { g_trace += "p1 "; }
void SecondParent() { g_trace += "p2 "; }
void FirstChild() { g_trace += "c1 "; }
void SecondChild() { g_trace += "c2 "; }

TEST(ForkTest, HandlersRunInAtforkOrderAndTheChildCountsTheFork) {
  ASSERT_TRUE(AddForkHandlers({&FirstBefore, &FirstParent, &FirstChild}));
  ASSERT_TRUE(AddForkHandlers({&SecondBefore, &SecondParent, &SecondChild}));
  const unsigned generation = StartCountingForks();
  g_trace.clear();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Before handlers in reverse order, child handlers in order.
    const bool ok = g_trace == "b2 b1 c1 c2 " && ForkGeneration() == generation + 1;
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child saw another order";
  EXPECT_EQ(g_trace, "b2 b1 p1 p2 ");
  EXPECT_EQ(ForkGeneration(), generation);
}

TEST(ForkTest, NoMoreThanTheFixedNumberOfHandlerSets) {
  int added = 0;
  while (added < kMaxForkHandlers + 2 && AddForkHandlers({})) ++added;
  EXPECT_LE(added, kMaxForkHandlers);
  EXPECT_FALSE(AddForkHandlers({}));
}

}  // namespace
}  // namespace foreactor
