// Tests of WriteBehind: which finished writes become write-back hints,
// what the engine is handed, when the program waits for hints, and the
// statistics.  The fake engine runs each hint's sync_file_range for real
// on temporary files when the test completes it.
#include "runtime/write_behind.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/test_files.h"
#include "runtime/fake_engine.h"

namespace foreactor {
namespace {

constexpr int64_t kChunk = static_cast<int64_t>(WriteBehind::kChunkBytes);
constexpr int64_t kPage = 4096;

class WriteBehindTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(temp_.ok()); }

  int Open(const std::string& name, int flags = 0) {
    const int fd = open(temp_.Path(name).c_str(), O_CREAT | O_WRONLY | flags, 0600);
    EXPECT_GE(fd, 0);
    return fd;
  }

  // The hints the engine was handed: (fd, offset, length) each.
  std::vector<std::vector<int64_t>> Hints() const {
    std::vector<std::vector<int64_t>> hints;
    for (const auto& prepared : engine_.prepared()) {
      EXPECT_EQ(prepared.operation, RequestOperation::kStartWriteBack);
      hints.push_back(
          {prepared.call.fd, prepared.call.offset, static_cast<int64_t>(prepared.call.length)});
    }
    return hints;
  }

  // Notes `pages` pages written one after the other from `first_page`.
  void WritePages(WriteBehind& write_behind, int fd, int64_t first_page, int64_t pages) {
    for (int64_t page = first_page; page < first_page + pages; ++page) {
      write_behind.NoteWrite(fd, page * kPage, kPage);
    }
  }

  testing::TempDir temp_;
  testing::FakeEngine engine_;
  FileKindCache file_kinds_;
  Statistics statistics_;
  unsigned thread_hints_ = 0;
};

TEST_F(WriteBehindTest, AFinishedChunkIsHintedAtOnceAndTheRestAtScopeEnd) {
  const int fd = Open("out");
  {
    WriteBehind write_behind(&engine_, &file_kinds_, &statistics_, &thread_hints_);
    WritePages(write_behind, fd, 0, kChunk / kPage + 3);
    EXPECT_EQ(Hints(), (std::vector<std::vector<int64_t>>{{fd, 0, kChunk}}));
    EXPECT_EQ(engine_.submit_batches().size(), 1u) << "each hint is submitted when made";
    write_behind.EndScope();
    EXPECT_EQ(Hints(),
              (std::vector<std::vector<int64_t>>{{fd, 0, kChunk}, {fd, kChunk, 3 * kPage}}));
    EXPECT_EQ(statistics_.write_behind_requests, 2u);
    EXPECT_EQ(statistics_.write_behind_bytes, static_cast<uint64_t>(kChunk + 3 * kPage));
    EXPECT_EQ(thread_hints_, 2u) << "the hints still run: the fake completes nothing by itself";
    EXPECT_TRUE(write_behind.has_hints_in_flight());
  }
  // Destroyed: it waited for both (the fake ran sync_file_range for real).
  EXPECT_EQ(thread_hints_, 0u);
  EXPECT_EQ(engine_.in_flight(), 0u);
  for (const auto& prepared : engine_.prepared()) EXPECT_EQ(prepared.result, 0);
  EXPECT_EQ(statistics_.write_behind_errors, 0u);
  close(fd);
}

TEST_F(WriteBehindTest, CompletedHintsAreReapedWithoutWaiting) {
  const int fd = Open("out");
  WriteBehind write_behind(&engine_, &file_kinds_, &statistics_, &thread_hints_);
  WritePages(write_behind, fd, 0, kChunk / kPage);
  engine_.CompleteAll();
  write_behind.EndScope();  // reaps the completed one, hints nothing more
  EXPECT_EQ(Hints().size(), 1u);
  EXPECT_FALSE(write_behind.has_hints_in_flight());
  EXPECT_EQ(thread_hints_, 0u);
  EXPECT_EQ(engine_.wait_count(), 0u);
  EXPECT_EQ(statistics_.write_behind_wait_nanoseconds, 0u);
  close(fd);
}

TEST_F(WriteBehindTest, ClosingADescriptorWaitsForItsHintsOnly) {
  const int first = Open("first");
  const int second = Open("second");
  WriteBehind write_behind(&engine_, &file_kinds_, &statistics_, &thread_hints_);
  WritePages(write_behind, first, 0, kChunk / kPage);
  WritePages(write_behind, second, 0, kChunk / kPage);  // waits for the first one's hint
  write_behind.EndScope();
  ASSERT_EQ(Hints().size(), 2u);
  write_behind.BeforeClose(first);
  EXPECT_TRUE(engine_.prepared()[0].completed) << "the hint on the closed descriptor";
  EXPECT_FALSE(engine_.prepared()[1].completed) << "the other one runs on";
  EXPECT_EQ(thread_hints_, 1u);
  write_behind.WaitAll();
  EXPECT_EQ(thread_hints_, 0u);
  close(first);
  close(second);
}

TEST_F(WriteBehindTest, AClosedDescriptorsUnstartedBytesAreNotHinted) {
  const int fd = Open("out");
  WriteBehind write_behind(&engine_, &file_kinds_, &statistics_, &thread_hints_);
  WritePages(write_behind, fd, 0, kChunk / kPage + 2);
  write_behind.BeforeClose(fd);
  write_behind.EndScope();
  EXPECT_EQ(Hints(), (std::vector<std::vector<int64_t>>{{fd, 0, kChunk}}))
      << "the two pages after the chunk are not";
  close(fd);
}

TEST_F(WriteBehindTest, OnlyRegularFilesWithoutDirectIoOrAppendingAreHinted) {
  const int append_fd = Open("append", O_APPEND);
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  WriteBehind write_behind(&engine_, &file_kinds_, &statistics_, &thread_hints_);
  WritePages(write_behind, append_fd, 0, kChunk / kPage);
  WritePages(write_behind, pipe_fds[1], 0, kChunk / kPage);
  const int direct_fd = Open("direct", O_DIRECT);
  if (direct_fd >= 0) WritePages(write_behind, direct_fd, 0, kChunk / kPage);
  write_behind.EndScope();
  EXPECT_TRUE(Hints().empty());
  EXPECT_EQ(statistics_.write_behind_requests, 0u);
  close(append_fd);
  close(pipe_fds[0]);
  close(pipe_fds[1]);
  if (direct_fd >= 0) close(direct_fd);
}

TEST_F(WriteBehindTest, FailedAndEmptyWritesNoteNothing) {
  const int fd = Open("out");
  WriteBehind write_behind(&engine_, &file_kinds_, &statistics_, &thread_hints_);
  write_behind.NoteWrite(fd, 0, -EIO);
  write_behind.NoteWrite(fd, 0, 0);
  write_behind.NoteWrite(fd, -1, kPage);  // a write at a position that was not known
  write_behind.EndScope();
  EXPECT_TRUE(Hints().empty());
  close(fd);
}

TEST_F(WriteBehindTest, AShortWriteHintsTheBytesItWrote) {
  const int fd = Open("out");
  WriteBehind write_behind(&engine_, &file_kinds_, &statistics_, &thread_hints_);
  write_behind.NoteWrite(fd, 0, 1000);              // asked for a page, wrote 1000 bytes
  write_behind.NoteWrite(fd, 1000, kChunk - 1000);  // the program wrote on from there
  write_behind.EndScope();
  EXPECT_EQ(Hints(), (std::vector<std::vector<int64_t>>{{fd, 0, kChunk}}));
  close(fd);
}

TEST_F(WriteBehindTest, SmallScatteredWritesAreLeftToTheKernel) {
  // A file updated in place, a few pages here and there, in one scope and
  // across scopes: hinting such writes would only split the file's
  // delayed allocation into more extents.
  const int fd = Open("out");
  WriteBehind write_behind(&engine_, &file_kinds_, &statistics_, &thread_hints_);
  for (int scope = 0; scope < 3; ++scope) {
    for (const int64_t offset : {537, 14655, 13283, 2711, 19356}) {
      write_behind.NoteWrite(fd, offset + scope * 100, kPage);
    }
    write_behind.EndScope();
  }
  EXPECT_TRUE(Hints().empty());
  EXPECT_EQ(statistics_.write_behind_requests, 0u);
  close(fd);
}

TEST_F(WriteBehindTest, AStreamWrittenABatchPerScopeIsHintedAcrossScopes) {
  const int fd = Open("out");
  const int64_t half = kChunk / kPage / 2;
  WriteBehind write_behind(&engine_, &file_kinds_, &statistics_, &thread_hints_);
  WritePages(write_behind, fd, 0, half);
  write_behind.EndScope();
  EXPECT_TRUE(Hints().empty()) << "half a chunk";
  file_kinds_.Clear();  // as each scope's start does
  WritePages(write_behind, fd, half, half);
  write_behind.EndScope();
  EXPECT_EQ(Hints(), (std::vector<std::vector<int64_t>>{{fd, 0, kChunk}}));
  close(fd);
}

TEST_F(WriteBehindTest, ADescriptorReusedForAnotherFileBetweenScopesContinuesNoRun) {
  const int fd = Open("first");
  const int other = Open("second");
  const int64_t half = kChunk / kPage / 2;
  WriteBehind write_behind(&engine_, &file_kinds_, &statistics_, &thread_hints_);
  WritePages(write_behind, fd, 0, half);
  write_behind.EndScope();
  // Between scopes, with no hint in flight, the program's close is not
  // watched: the number comes back naming another file.
  ASSERT_EQ(dup2(other, fd), fd);
  file_kinds_.Clear();
  WritePages(write_behind, fd, half, half);
  write_behind.EndScope();
  EXPECT_TRUE(Hints().empty());
  close(fd);
  close(other);
}

TEST_F(WriteBehindTest, AHintsErrorIsCountedAndIgnored) {
  const int fd = Open("out");
  WriteBehind write_behind(&engine_, &file_kinds_, &statistics_, &thread_hints_);
  engine_.SetResultForCall(0, -EIO);
  engine_.SetResultForCall(1, -ECANCELED);  // not executed: no error
  WritePages(write_behind, fd, 0, kChunk / kPage);
  WritePages(write_behind, fd, kChunk / kPage, 1);
  write_behind.EndScope();
  ASSERT_EQ(Hints().size(), 2u);
  write_behind.WaitAll();
  EXPECT_EQ(statistics_.write_behind_errors, 1u);
  close(fd);
}

TEST_F(WriteBehindTest, OneHintRunsAtATimeAndRangesFinishedMeanwhileWaitMerged) {
  static_assert(WriteBehind::kMaxRunningHints == 1);
  const int fd = Open("out");
  const int64_t pages = kChunk / kPage;
  WriteBehind write_behind(&engine_, &file_kinds_, &statistics_, &thread_hints_);
  WritePages(write_behind, fd, 0, pages);
  EXPECT_EQ(Hints().size(), 1u);
  WritePages(write_behind, fd, pages, 2 * pages);  // two more chunks while the first runs
  EXPECT_EQ(Hints().size(), 1u) << "they wait";
  EXPECT_GE(engine_.poll_count(), 2u) << "it looked for the running hint's completion";
  engine_.CompleteNext();
  WritePages(write_behind, fd, 3 * pages, pages);  // the next chunk finds it completed
  EXPECT_EQ(Hints(),
            (std::vector<std::vector<int64_t>>{{fd, 0, kChunk}, {fd, kChunk, 3 * kChunk}}));
  // At the scope's end every waiting range starts, whatever runs.
  WritePages(write_behind, fd, 4 * pages, pages);
  WritePages(write_behind, fd, 5 * pages, 1);
  write_behind.EndScope();
  EXPECT_EQ(Hints(),
            (std::vector<std::vector<int64_t>>{
                {fd, 0, kChunk}, {fd, kChunk, 3 * kChunk}, {fd, 4 * kChunk, kChunk + kPage}}));
  EXPECT_EQ(statistics_.write_behind_bytes, static_cast<uint64_t>(5 * kChunk + kPage));
  close(fd);
}

TEST_F(WriteBehindTest, AClosedDescriptorsWaitingRangesAreDropped) {
  const int fd = Open("out");
  const int64_t pages = kChunk / kPage;
  WriteBehind write_behind(&engine_, &file_kinds_, &statistics_, &thread_hints_);
  WritePages(write_behind, fd, 0, 2 * pages);  // the second chunk waits
  ASSERT_EQ(Hints().size(), 1u);
  write_behind.BeforeClose(fd);
  write_behind.EndScope();
  EXPECT_EQ(Hints().size(), 1u);
  close(fd);
}

TEST_F(WriteBehindTest, AnEngineThatRefusesHintsLeavesEverythingToTheKernel) {
  engine_.SetStartsWriteBack(false);
  const int fd = Open("out");
  WriteBehind write_behind(&engine_, &file_kinds_, &statistics_, &thread_hints_);
  WritePages(write_behind, fd, 0, kChunk / kPage + 1);
  write_behind.EndScope();
  EXPECT_TRUE(engine_.prepared().empty());
  EXPECT_EQ(statistics_.write_behind_requests, 0u);
  EXPECT_EQ(thread_hints_, 0u);
  close(fd);
}

TEST_F(WriteBehindTest, AnAbandonedWriteBehindNeverTouchesTheEngineAgain) {
  const int fd = Open("out");
  auto write_behind =
      std::make_unique<WriteBehind>(&engine_, &file_kinds_, &statistics_, &thread_hints_);
  WritePages(*write_behind, fd, 0, kChunk / kPage);
  write_behind->EndScope();
  ASSERT_EQ(Hints().size(), 1u);
  const size_t polls = engine_.poll_count();
  write_behind->Abandon();  // as in a forked child: the hint is the parent's
  WritePages(*write_behind, fd, 10, kChunk / kPage);
  write_behind->EndScope();
  write_behind->BeforeClose(fd);
  write_behind->WaitAll();
  write_behind.reset();  // does not wait either
  EXPECT_EQ(engine_.wait_count(), 0u);
  EXPECT_EQ(engine_.poll_count(), polls);
  EXPECT_EQ(Hints().size(), 1u);
  // The fake still holds the abandoned request, which is gone: it is
  // never completed.
  close(fd);
}

TEST_F(WriteBehindTest, TheHintedRangeIsWrittenBackForReal) {
  // With a real sync_file_range: the hint succeeds on a file with dirty
  // pages and leaves its bytes as they were.
  const int fd = Open("out");
  std::string bytes(static_cast<size_t>(kChunk + kPage), 'x');
  ASSERT_EQ(pwrite(fd, bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
  WriteBehind write_behind(&engine_, &file_kinds_, &statistics_, &thread_hints_);
  write_behind.NoteWrite(fd, 0, static_cast<int64_t>(bytes.size()));
  write_behind.EndScope();
  write_behind.WaitAll();
  ASSERT_EQ(engine_.prepared().size(), 1u);
  EXPECT_EQ(engine_.prepared()[0].result, 0);
  EXPECT_EQ(temp_.ReadAll("out"), bytes);
  close(fd);
}

}  // namespace
}  // namespace foreactor
