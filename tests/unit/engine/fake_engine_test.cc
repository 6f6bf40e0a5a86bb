// The runtime's FakeEngine must itself be right: deterministic completion,
// real results, scripted results, links, cancellation, and records.
#include "runtime/fake_engine.h"

#include <fcntl.h>
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "test_files.h"

namespace foreactor {
namespace {

using testing::FakeEngine;
using testing::PatternByte;
using testing::TempDir;

class FakeEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    ASSERT_TRUE(dir_.WritePatternFile("data", 10000));
    fd_ = open(dir_.Path("data").c_str(), O_RDONLY);
    ASSERT_GE(fd_, 0);
  }
  void TearDown() override { close(fd_); }

  void SetUpRead(Request* request, char* buffer, size_t length, int64_t offset) {
    std::memset(&request->call, 0, sizeof(request->call));
    request->call.type = FOREACTOR_CALL_PREAD;
    request->call.fd = fd_;
    request->call.buffer = buffer;
    request->call.length = length;
    request->call.offset = offset;
  }

  TempDir dir_;
  int fd_ = -1;
  FakeEngine engine_;
};

TEST_F(FakeEngineTest, RequestsStaySubmittedUntilAskedThenRunForReal) {
  char a[100] = {}, b[100] = {};
  Request first, second;
  SetUpRead(&first, a, sizeof(a), 0);
  SetUpRead(&second, b, sizeof(b), 5000);
  ASSERT_TRUE(engine_.Prepare(&first));
  ASSERT_TRUE(engine_.Prepare(&second));
  EXPECT_EQ(first.state.load(), RequestState::kPrepared);
  EXPECT_EQ(engine_.Submit(), 2);
  engine_.Poll();
  EXPECT_EQ(first.state.load(), RequestState::kSubmitted);
  EXPECT_EQ(second.state.load(), RequestState::kSubmitted);
  EXPECT_EQ(engine_.in_flight(), 2u);

  engine_.Wait(&second);  // out of order on purpose
  EXPECT_EQ(second.state.load(), RequestState::kCompleted);
  EXPECT_EQ(second.result, 100);
  EXPECT_EQ(b[7], PatternByte(5007));
  EXPECT_EQ(first.state.load(), RequestState::kSubmitted);

  EXPECT_TRUE(engine_.CompleteNext());
  EXPECT_EQ(first.result, 100);
  EXPECT_EQ(a[42], PatternByte(42));
  EXPECT_FALSE(engine_.CompleteNext());
  EXPECT_EQ(engine_.in_flight(), 0u);
}

TEST_F(FakeEngineTest, RecordsCallsBatchesAndCancels) {
  char buffer[16];
  Request requests[3];
  for (Request& request : requests) SetUpRead(&request, buffer, sizeof(buffer), 0);
  requests[2].call.type = FOREACTOR_CALL_STAT;
  std::string path = dir_.Path("data");
  requests[2].call.path = path.c_str();  // changed below, once the call ran
  ASSERT_TRUE(engine_.Prepare(&requests[0]));
  EXPECT_EQ(engine_.Submit(), 1);
  ASSERT_TRUE(engine_.Prepare(&requests[1]));
  ASSERT_TRUE(engine_.Prepare(&requests[2]));
  EXPECT_EQ(engine_.Submit(), 2);
  EXPECT_EQ(engine_.Submit(), 0);
  ASSERT_EQ(engine_.prepared().size(), 3u);
  EXPECT_EQ(engine_.prepared()[0].request, &requests[0]);
  EXPECT_EQ(engine_.prepared()[2].call.type, FOREACTOR_CALL_STAT);
  EXPECT_EQ(engine_.submit_batches(), (std::vector<size_t>{1, 2, 0}));

  engine_.Cancel(&requests[1]);
  EXPECT_EQ(requests[1].state.load(), RequestState::kCompleted);
  EXPECT_EQ(requests[1].result, -ECANCELED);
  EXPECT_EQ(engine_.cancel_count(), 1u);
  engine_.Cancel(&requests[1]);  // already completed: not counted again
  EXPECT_EQ(engine_.cancel_count(), 1u);
  EXPECT_EQ(engine_.CompleteAll(), 2u);
  EXPECT_EQ(requests[0].result, 16);
  EXPECT_EQ(requests[2].result, 0);
  EXPECT_EQ(requests[2].statx_buffer.stx_size, 10000u);
  path.assign(path.size(), 'z');
  EXPECT_EQ(engine_.prepared()[2].path, dir_.Path("data"));  // a copy
  EXPECT_EQ(engine_.prepared()[2].result, 0);
  EXPECT_TRUE(engine_.prepared()[1].cancelled);
}

TEST_F(FakeEngineTest, ScriptedResultsAndLinks) {
  char buffer[64];
  Request read, write, scripted;
  SetUpRead(&read, buffer, sizeof(buffer), 0);
  read.linked_next = &write;
  SetUpRead(&write, buffer, sizeof(buffer), 0);
  write.call.type = FOREACTOR_CALL_PWRITE;
  write.call.fd = 987654;
  SetUpRead(&scripted, buffer, sizeof(buffer), 0);
  engine_.SetResultForCall(0, 10);  // a short read...
  engine_.SetResultForCall(2, -EIO);
  ASSERT_TRUE(engine_.Prepare(&read));
  ASSERT_TRUE(engine_.Prepare(&scripted));
  ASSERT_EQ(engine_.Submit(), 3);
  engine_.Wait(&write);  // completes its head first
  EXPECT_EQ(read.result, 10);
  EXPECT_EQ(write.result, -ECANCELED);  // ...cancels the linked write
  engine_.Wait(&scripted);
  EXPECT_EQ(scripted.result, -EIO);
}

TEST_F(FakeEngineTest, SupportsCapacityAndSubmitFailure) {
  engine_.SupportOnly({FOREACTOR_CALL_PREAD, FOREACTOR_CALL_FSTAT});
  EXPECT_TRUE(engine_.Supports(FOREACTOR_CALL_PREAD));
  EXPECT_FALSE(engine_.Supports(FOREACTOR_CALL_GETDENTS64));
  engine_.SetSupports(FOREACTOR_CALL_GETDENTS64, true);
  EXPECT_TRUE(engine_.Supports(FOREACTOR_CALL_GETDENTS64));

  engine_.SetCapacity(2);
  char buffer[8];
  Request requests[3];
  for (Request& request : requests) SetUpRead(&request, buffer, sizeof(buffer), 0);
  EXPECT_TRUE(engine_.Prepare(&requests[0]));
  EXPECT_TRUE(engine_.Prepare(&requests[1]));
  EXPECT_FALSE(engine_.Prepare(&requests[2]));
  EXPECT_EQ(requests[2].state.load(), RequestState::kIdle);
  engine_.FailNextSubmit(-ENOMEM);
  EXPECT_EQ(engine_.Submit(), -ENOMEM);
  EXPECT_EQ(requests[0].result, -ENOMEM);
  EXPECT_EQ(requests[1].state.load(), RequestState::kCompleted);
  EXPECT_TRUE(engine_.Prepare(&requests[2]));
}

TEST_F(FakeEngineTest, ReportsProtocolErrorsOfTheCodeUnderTest) {
  char buffer[8];
  Request request;
  SetUpRead(&request, buffer, sizeof(buffer), 0);
  engine_.SetSupports(FOREACTOR_CALL_PREAD, false);
  EXPECT_NONFATAL_FAILURE(EXPECT_FALSE(engine_.Prepare(&request)), "unsupported call type");
  engine_.SetSupports(FOREACTOR_CALL_PREAD, true);
  ASSERT_TRUE(engine_.Prepare(&request));
  EXPECT_NONFATAL_FAILURE(EXPECT_FALSE(engine_.Prepare(&request)), "not idle");
  EXPECT_NONFATAL_FAILURE(engine_.Wait(&request), "never submitted");
  EXPECT_EQ(request.state.load(), RequestState::kCompleted);  // no hang either way
  Request stranger;
  EXPECT_NONFATAL_FAILURE(engine_.Wait(&stranger), "does not hold");
}

}  // namespace
}  // namespace foreactor
