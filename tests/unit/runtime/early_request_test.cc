// Tests of the early request: what an engine is asked to run for a visit
// issued early, and what its result means.
#include "runtime/early_request.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <gtest/gtest.h>

namespace foreactor {
namespace {

TEST(EarlyRequestTest, CallsAtTheFilePositionAndVectorCallsRunInTheirPositionalForm) {
  EXPECT_EQ(IssuedType(FOREACTOR_CALL_READ), FOREACTOR_CALL_PREAD);
  EXPECT_EQ(IssuedType(FOREACTOR_CALL_READV), FOREACTOR_CALL_PREAD);
  EXPECT_EQ(IssuedType(FOREACTOR_CALL_PREADV), FOREACTOR_CALL_PREAD);
  EXPECT_EQ(IssuedType(FOREACTOR_CALL_WRITE), FOREACTOR_CALL_PWRITE);
  EXPECT_EQ(IssuedType(FOREACTOR_CALL_WRITEV), FOREACTOR_CALL_PWRITE);
  EXPECT_EQ(IssuedType(FOREACTOR_CALL_PWRITEV), FOREACTOR_CALL_PWRITE);
  EXPECT_EQ(IssuedType(FOREACTOR_CALL_PREAD), FOREACTOR_CALL_PREAD);
  EXPECT_EQ(IssuedType(FOREACTOR_CALL_OPENAT), FOREACTOR_CALL_OPENAT);
  EXPECT_EQ(IssuedType(FOREACTOR_CALL_FSTAT), FOREACTOR_CALL_FSTAT);
}

TEST(EarlyRequestTest, AReadLandsInTheSlotsOwnBuffer) {
  VisitSlot slot;
  char program[64];
  slot.predicted.type = FOREACTOR_CALL_READ;
  slot.predicted.fd = 7;
  slot.predicted.buffer = program;
  slot.predicted.length = sizeof program;
  slot.predicted.offset = 4096;
  slot.predicted.link_next = 1;
  slot.request.result = 5;
  ASSERT_TRUE(PrepareEarlyRequest(slot));
  const foreactor_call& call = slot.request.call;
  EXPECT_EQ(call.type, FOREACTOR_CALL_PREAD);
  EXPECT_EQ(call.fd, 7);
  EXPECT_EQ(call.offset, 4096);
  EXPECT_EQ(call.length, sizeof program);
  ASSERT_NE(call.buffer, nullptr);
  EXPECT_EQ(call.buffer, slot.data.data()) << "never the program's buffer";
  EXPECT_EQ(call.link_next, 0) << "the runner links the pair itself";
  EXPECT_EQ(slot.request.linked_next, nullptr);
  EXPECT_EQ(slot.request.result, 0);
}

TEST(EarlyRequestTest, AVectorReadBecomesOneReadOfItsTotalLength) {
  VisitSlot slot;
  char first[3], second[5];
  struct iovec vector[2] = {{first, sizeof first}, {second, sizeof second}};
  slot.predicted.type = FOREACTOR_CALL_PREADV;
  slot.predicted.iov = vector;
  slot.predicted.iovcnt = 2;
  ASSERT_TRUE(PrepareEarlyRequest(slot));
  EXPECT_EQ(slot.request.call.length, 8u);
  EXPECT_EQ(slot.request.call.iov, nullptr);
  EXPECT_EQ(slot.request.call.iovcnt, 0);
}

TEST(EarlyRequestTest, AWriteCopiesItsBytesWhenTheRequestIsMade) {
  VisitSlot slot;
  char bytes[] = "abcd";
  slot.predicted.type = FOREACTOR_CALL_WRITE;
  slot.predicted.buffer = bytes;
  slot.predicted.length = 4;
  ASSERT_TRUE(PrepareEarlyRequest(slot));
  bytes[0] = 'X';  // the program's buffer may change afterwards
  ASSERT_EQ(slot.request.call.length, 4u);
  EXPECT_EQ(std::string(static_cast<const char*>(slot.request.call.buffer), 4), "abcd");
}

TEST(EarlyRequestTest, AVectorWriteIsGatheredIntoOneBuffer) {
  VisitSlot slot;
  char first[] = "abc", second[] = "defg";
  struct iovec vector[2] = {{first, 3}, {second, 4}};
  slot.predicted.type = FOREACTOR_CALL_WRITEV;
  slot.predicted.iov = vector;
  slot.predicted.iovcnt = 2;
  ASSERT_TRUE(PrepareEarlyRequest(slot));
  EXPECT_EQ(slot.request.call.type, FOREACTOR_CALL_PWRITE);
  ASSERT_EQ(slot.request.call.length, 7u);
  EXPECT_EQ(std::string(static_cast<const char*>(slot.request.call.buffer), 7), "abcdefg");
}

TEST(EarlyRequestTest, AWriteOfWhatALinkedReadProducesHasNoBufferYet) {
  VisitSlot slot;
  slot.predicted.type = FOREACTOR_CALL_PWRITE;
  slot.predicted.length = 16;
  ASSERT_TRUE(PrepareEarlyRequest(slot));
  EXPECT_EQ(slot.request.call.buffer, nullptr);
}

TEST(EarlyRequestTest, DirectoryReadsRecordThePositionBeforeThem) {
  const int directory = ::open("/", O_RDONLY | O_DIRECTORY);
  ASSERT_GE(directory, 0);
  char entries[256];
  ASSERT_GT(::getdents64(directory, entries, sizeof entries), 0);
  const off_t position = ::lseek(directory, 0, SEEK_CUR);
  VisitSlot slot;
  slot.predicted.type = FOREACTOR_CALL_GETDENTS64;
  slot.predicted.fd = directory;
  slot.predicted.length = 4096;
  ASSERT_TRUE(PrepareEarlyRequest(slot));
  EXPECT_EQ(slot.directory_position, position);
  ::close(directory);
  EXPECT_FALSE(PrepareEarlyRequest(slot)) << "a closed descriptor has no position";
}

TEST(EarlyRequestTest, ACancelledRequestDidNotRunAndIsNotDelivered) {
  Request request;
  request.call.type = FOREACTOR_CALL_PREAD;
  request.result = -ECANCELED;
  EXPECT_FALSE(Executed(request));
  EXPECT_FALSE(Deliverable(request));
  request.result = -EIO;
  EXPECT_TRUE(Executed(request));
  EXPECT_TRUE(Deliverable(request)) << "the program's read would fail so too";
}

TEST(EarlyRequestTest, AnEarlyOpenThatFoundNoFreeDescriptorIsNotDelivered) {
  Request request;
  request.call.type = FOREACTOR_CALL_OPENAT;
  for (int64_t result : {int64_t{-EMFILE}, int64_t{-ENFILE}}) {
    request.result = result;
    EXPECT_TRUE(Executed(request));
    EXPECT_FALSE(Deliverable(request)) << "the program's open runs with other descriptors";
  }
  request.result = -ENOENT;
  EXPECT_TRUE(Deliverable(request));
  request.result = 5;
  EXPECT_TRUE(Deliverable(request));
}

}  // namespace
}  // namespace foreactor
