// Tests of IssueRules: when a visit ahead of the frontier is certain, which
// calls are held back as uncertain, when a write at the file position finds
// the position settled, and which calls can run early at all.
#include "runtime/issue_rules.h"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "runtime/fake_engine.h"

namespace foreactor {
namespace {

foreactor_call Call(foreactor_call_type type, int fd = 3) {
  foreactor_call call{};
  call.type = type;
  call.fd = fd;
  call.length = 16;
  return call;
}

foreactor_call Pread() { return Call(FOREACTOR_CALL_PREAD); }
foreactor_call Pwrite() { return Call(FOREACTOR_CALL_PWRITE); }

// Rules for certainty alone: no engine or files to ask.
IssueRules Started(bool start_edge_weak = false) {
  IssueRules rules(nullptr, nullptr);
  rules.StartScope(start_edge_weak);
  return rules;
}

TEST(IssueRulesTest, AScopeStartsCertainUnlessItsFirstEdgeIsWeak) {
  EXPECT_FALSE(Started().Uncertain());
  IssueRules rules = Started(true);
  EXPECT_TRUE(rules.Uncertain()) << "the function may return before its first call";
  rules.ProgramMadeGraphCall();
  EXPECT_FALSE(rules.Uncertain());
}

TEST(IssueRulesTest, AWeakEdgeAheadMakesWhatFollowsUncertainUntilTheFrontierPassesIt) {
  IssueRules rules = Started();
  rules.PeekCrossed(false);
  EXPECT_FALSE(rules.Uncertain());
  rules.PeekCrossed(true);
  EXPECT_TRUE(rules.Uncertain());
  rules.FrontierCrossedWeakEdge();
  EXPECT_TRUE(rules.Uncertain()) << "the program may still return there";
  rules.ProgramMadeGraphCall();
  EXPECT_FALSE(rules.Uncertain()) << "the program went on past it";
}

TEST(IssueRulesTest, ThePeekHeadAtTheFrontierHasNoWeakEdgeAhead) {
  IssueRules rules = Started();
  rules.PeekCrossed(true);
  rules.PeekCrossed(true);
  rules.PeekAtFrontier();  // drained
  EXPECT_FALSE(rules.Uncertain());
}

TEST(IssueRulesTest, OnlyCallsWithSideEffectsAreHeldBack) {
  EXPECT_TRUE(IssueRules::HeldBack(EarlyIssue::kWhenCertain, true));
  EXPECT_FALSE(IssueRules::HeldBack(EarlyIssue::kWhenCertain, false));
  EXPECT_FALSE(IssueRules::HeldBack(EarlyIssue::kOnGuess, true));
  EXPECT_FALSE(IssueRules::HeldBack(EarlyIssue::kNever, true));
}

TEST(IssueRulesTest, AGuessAheadMakesWhatFollowsUncertainUntilTheFrontierReachesIt) {
  IssueRules rules = Started();
  EXPECT_FALSE(rules.PassedRestsOnGuess(Pwrite(), false)) << "a certain write is no guess";
  EXPECT_FALSE(rules.Uncertain());
  EXPECT_TRUE(rules.PassedRestsOnGuess(Pread(), false)) << "a pure call is issued on a guess";
  EXPECT_TRUE(rules.PassedRestsOnGuess(Pread(), false));
  EXPECT_TRUE(rules.Uncertain());
  rules.GuessReached();
  EXPECT_TRUE(rules.Uncertain()) << "one guess still ahead";
  rules.GuessReached();
  EXPECT_FALSE(rules.Uncertain());
  rules.GuessReached();
  EXPECT_FALSE(rules.Uncertain()) << "never below none";
}

TEST(IssueRulesTest, AHeldBackWriteAndACallThatNeverRunsEarlyAreGuesses) {
  IssueRules rules = Started();
  EXPECT_TRUE(rules.PassedRestsOnGuess(Pwrite(), true));
  rules.ForgetGuessesAhead();
  EXPECT_FALSE(rules.Uncertain());
  foreactor_call seek = Call(FOREACTOR_CALL_LSEEK);
  ASSERT_EQ(EarlyIssueFor(seek), EarlyIssue::kNever);
  EXPECT_TRUE(rules.PassedRestsOnGuess(seek, false));
}

TEST(IssueRulesTest, ALinkHeadIsNoGuess) {
  IssueRules rules = Started();
  foreactor_call head = Pread();
  head.link_next = 1;
  EXPECT_FALSE(rules.PassedRestsOnGuess(head, false)) << "the link asserts the pair";
  EXPECT_FALSE(rules.Uncertain());
}

TEST(IssueRulesTest, LosingTheProgramLastsUntilTheNextScope) {
  IssueRules rules = Started();
  rules.LoseTheProgram();
  EXPECT_TRUE(rules.Uncertain());
  rules.ProgramMadeGraphCall();
  rules.PeekAtFrontier();
  rules.ForgetGuessesAhead();
  EXPECT_TRUE(rules.Uncertain()) << "an exact match later does not prove it is in step";
  rules.StartScope(false);
  EXPECT_FALSE(rules.Uncertain());
}

// A file of two blocks, its position at the second.
class WriteAtPositionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/issue_rules_testXXXXXX";
    fd_ = mkstemp(pattern);
    ASSERT_GE(fd_, 0);
    path_ = pattern;
    ASSERT_EQ(ftruncate(fd_, 8192), 0);
    ASSERT_EQ(lseek(fd_, 4096, SEEK_SET), 4096);
    accesses_.Reserve(4);
  }
  void TearDown() override {
    ::close(fd_);
    unlink(path_.c_str());
  }
  foreactor_call WriteAt(int64_t offset) {
    foreactor_call call = Call(FOREACTOR_CALL_WRITE, fd_);
    call.offset = offset;
    return call;
  }

  int fd_ = -1;
  std::string path_;
  FileKindCache file_kinds_;
  PendingAccesses accesses_{&file_kinds_};
  testing::FakeEngine engine_;
  IssueRules rules_{&engine_, &file_kinds_};
};

using IssuableTest = WriteAtPositionTest;

TEST_F(WriteAtPositionTest, AWriteAtThePositionTheKernelHoldsIsSettled) {
  EXPECT_TRUE(IssueRules::WriteAtPositionSettled(WriteAt(4096), accesses_));
  EXPECT_FALSE(IssueRules::WriteAtPositionSettled(WriteAt(0), accesses_));
}

TEST_F(WriteAtPositionTest, AVisitAheadOnTheDescriptorUnsettlesThePosition) {
  foreactor_call ahead = WriteAt(4096);
  accesses_.Record(ahead);
  EXPECT_FALSE(IssueRules::WriteAtPositionSettled(WriteAt(4096), accesses_))
      << "a short or failed write ahead would move the position by other than its length";
  accesses_.ReleaseOldest();
  EXPECT_TRUE(IssueRules::WriteAtPositionSettled(WriteAt(4096), accesses_));
}

TEST_F(WriteAtPositionTest, CallsWithTheirOwnOffsetNeedNoPosition) {
  foreactor_call pwrite = Call(FOREACTOR_CALL_PWRITE, fd_);
  pwrite.offset = 0;
  accesses_.Record(WriteAt(4096));
  EXPECT_TRUE(IssueRules::WriteAtPositionSettled(pwrite, accesses_));
  foreactor_call read = Call(FOREACTOR_CALL_READ, fd_);
  read.offset = 0;
  EXPECT_TRUE(IssueRules::WriteAtPositionSettled(read, accesses_)) << "not a write";
}

TEST_F(IssuableTest, AReadOrWriteOfARegularFileIsIssuableWhereTheEngineRunsIt) {
  EXPECT_TRUE(rules_.Issuable(Call(FOREACTOR_CALL_PREAD, fd_)));
  EXPECT_TRUE(rules_.Issuable(WriteAt(4096)));
  engine_.SetSupports(FOREACTOR_CALL_PREAD, false);
  EXPECT_FALSE(rules_.Issuable(Call(FOREACTOR_CALL_PREAD, fd_)));
  EXPECT_FALSE(rules_.Issuable(Call(FOREACTOR_CALL_READ, fd_))) << "issued as a pread";
}

TEST_F(IssuableTest, APipeIsNeverReadEarly) {
  int ends[2];
  ASSERT_EQ(pipe(ends), 0);
  EXPECT_FALSE(rules_.Issuable(Call(FOREACTOR_CALL_READ, ends[0])));
  EXPECT_FALSE(rules_.Issuable(Call(FOREACTOR_CALL_WRITE, ends[1])));
  ::close(ends[0]);
  ::close(ends[1]);
}

TEST_F(IssuableTest, AWriteAtThePositionOfAFileOpenedForAppendingIsNot) {
  const int appending = ::open(path_.c_str(), O_WRONLY | O_APPEND);
  ASSERT_GE(appending, 0);
  EXPECT_FALSE(rules_.Issuable(Call(FOREACTOR_CALL_WRITE, appending)));
  EXPECT_TRUE(rules_.Issuable(Call(FOREACTOR_CALL_PWRITE, appending)));
  ::close(appending);
}

TEST_F(IssuableTest, DirectoryEntriesAreReadEarlyOnlyFromADirectory) {
  const int directory = ::open("/tmp", O_RDONLY | O_DIRECTORY);
  ASSERT_GE(directory, 0);
  EXPECT_TRUE(rules_.Issuable(Call(FOREACTOR_CALL_GETDENTS64, directory)));
  EXPECT_FALSE(rules_.Issuable(Call(FOREACTOR_CALL_GETDENTS64, fd_)));
  ::close(directory);
}

TEST_F(IssuableTest, AVectorWriteNeedsItsIovecs) {
  foreactor_call write = Call(FOREACTOR_CALL_PWRITEV, fd_);
  EXPECT_FALSE(rules_.Issuable(write)) << "no bytes to write";
  char bytes[16] = {};
  struct iovec vector = {bytes, sizeof bytes};
  write.iov = &vector;
  write.iovcnt = 1;
  EXPECT_TRUE(rules_.Issuable(write));
}

TEST_F(IssuableTest, AnOpenIsIssuableWhenTheEngineRunsOpens) {
  EXPECT_TRUE(rules_.Issuable(Call(FOREACTOR_CALL_OPEN, AT_FDCWD)));
  engine_.SetSupports(FOREACTOR_CALL_OPEN, false);
  EXPECT_FALSE(rules_.Issuable(Call(FOREACTOR_CALL_OPEN, AT_FDCWD)));
}

TEST_F(IssuableTest, DirectIoMustBeAsAlignedAsTheKernelDemands) {
  const int direct = ::open(path_.c_str(), O_RDWR | O_DIRECT);
  if (direct < 0) GTEST_SKIP() << "no O_DIRECT on this file system";
  void* aligned = nullptr;
  ASSERT_EQ(posix_memalign(&aligned, 4096, 8192), 0);
  foreactor_call read = Call(FOREACTOR_CALL_PREAD, direct);
  read.buffer = aligned;
  read.length = 4096;
  EXPECT_TRUE(rules_.DirectIoAllowed(read, true));
  EXPECT_TRUE(rules_.Issuable(read));
  read.offset = 1;
  EXPECT_FALSE(rules_.DirectIoAllowed(read, false));
  EXPECT_FALSE(rules_.Issuable(read));
  read.offset = 0;
  read.buffer = static_cast<char*>(aligned) + 1;
  EXPECT_FALSE(rules_.DirectIoAllowed(read, true));
  EXPECT_TRUE(rules_.Issuable(read)) << "a read's buffer is checked when the program makes it";
  foreactor_call write = read;
  write.type = FOREACTOR_CALL_PWRITE;
  EXPECT_FALSE(rules_.Issuable(write)) << "a write is issued only from an aligned buffer";
  EXPECT_TRUE(rules_.DirectIoAllowed(Call(FOREACTOR_CALL_PREAD, fd_), true)) << "not direct";
  free(aligned);
  ::close(direct);
}

}  // namespace
}  // namespace foreactor
