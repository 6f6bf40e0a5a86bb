// Every call type, run by ExecuteNow, the io_uring engine and the thread
// pool engine, must give what the same call made directly gives: return
// value, errno, bytes, stat fields.  Also links, many requests in flight,
// many batches, cancellation, and CreateEngine.
#include "engine/engine.h"
#include "base/call_types.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <liburing.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "engine/io_uring_engine.h"
#include "engine/request_rules.h"
#include "engine/stat_conversion.h"
#include "engine/thread_pool_engine.h"
#include "test_files.h"

namespace foreactor {
namespace {

using testing::Direct;
using testing::PatternByte;
using testing::ResetRequest;
using testing::TempDir;

constexpr uint64_t kDataSize = 64 * 1024 + 100;  // not a multiple of 4 KiB

enum class Backend { kExecuteNow, kIoUring, kThreads };

std::string BackendName(const ::testing::TestParamInfo<Backend>& info) {
  switch (info.param) {
    case Backend::kExecuteNow:
      return "ExecuteNow";
    case Backend::kIoUring:
      return "IoUring";
    case Backend::kThreads:
      return "Threads";
  }
  return "Unknown";
}

std::unique_ptr<Engine> MakeEngine(Backend backend, const EngineOptions& options) {
  std::string error;
  if (backend == Backend::kIoUring) return IoUringEngine::Create(options, &error);
  if (backend == Backend::kThreads) return ThreadPoolEngine::Create(options);
  return nullptr;
}

// Runs request chains on one backend, to completion.
class Runner {
 public:
  explicit Runner(Backend backend) : backend_(backend) {
    if (backend != Backend::kExecuteNow) engine_ = MakeEngine(backend, EngineOptions{});
  }
  bool ready() const { return backend_ == Backend::kExecuteNow || engine_ != nullptr; }
  bool Supports(foreactor_call_type type) const {
    return backend_ == Backend::kExecuteNow || engine_->Supports(type);
  }
  // False when the engine refused the chain (Prepare returned false).
  bool Run(Request* head) {
    if (backend_ == Backend::kExecuteNow) {
      ExecuteNow(head);
      return true;
    }
    if (!engine_->Prepare(head)) return false;
    EXPECT_EQ(engine_->Submit(), static_cast<int>(ChainLength(head)));
    for (Request* link = head; link != nullptr; link = link->linked_next) {
      engine_->Wait(link);
      EXPECT_EQ(link->state.load(), RequestState::kCompleted);
      // An engine that runs opens early holds their descriptors out of the
      // program's table until the program gets them.
      if (link->operation == RequestOperation::kCall && IsOpen(link->call.type) &&
          engine_->Supports(link->call.type) && link->result >= 0)
        link->result = engine_->InstallEarlyDescriptor(link->result, link->call);
    }
    return true;
  }

 private:
  Backend backend_;
  std::unique_ptr<Engine> engine_;
};

class CallTypeTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    ASSERT_TRUE(dir_.WritePatternFile("data", kDataSize));
    ASSERT_EQ(symlink("data", dir_.Path("link").c_str()), 0);
    ASSERT_EQ(mkdir(dir_.Path("sub").c_str(), 0755), 0);
    runner_ = std::make_unique<Runner>(GetParam());
    ASSERT_TRUE(runner_->ready());
  }

  // Runs `call` alone; fails the test when the backend refuses it.
  int64_t RunCall(const foreactor_call& call, Request* request) {
    ResetRequest(request);
    request->call = call;
    EXPECT_TRUE(runner_->Run(request)) << "refused " << foreactor_call_type_name(call.type);
    return request->result;
  }

  int OpenData(int flags = O_RDONLY) { return open(dir_.Path("data").c_str(), flags); }

  TempDir dir_;
  std::unique_ptr<Runner> runner_;
};

foreactor_call MakeCall(foreactor_call_type type) {
  foreactor_call call;
  std::memset(&call, 0, sizeof(call));
  call.type = type;
  call.fd = -1;
  return call;
}

TEST_P(CallTypeTest, ReadAndPreadMatchDirectPread) {
  const int fd = OpenData();
  ASSERT_GE(fd, 0);
  Request request;
  for (foreactor_call_type type : {FOREACTOR_CALL_PREAD, FOREACTOR_CALL_READ}) {
    for (int64_t offset : {int64_t{0}, int64_t{4096}, int64_t{kDataSize - 100}, int64_t{kDataSize},
                           int64_t{kDataSize + 10}}) {
      SCOPED_TRACE(std::string(foreactor_call_type_name(type)) + " at " + std::to_string(offset));
      std::vector<char> early(4096, 'x');
      std::vector<char> direct(4096, 'x');
      foreactor_call call = MakeCall(type);
      call.fd = fd;
      call.buffer = early.data();
      call.length = early.size();
      call.offset = offset;
      const int64_t result = RunCall(call, &request);
      EXPECT_EQ(result, Direct(pread(fd, direct.data(), direct.size(), offset)));
      EXPECT_EQ(early, direct);
    }
  }
  // The engine never moved the file position.
  EXPECT_EQ(lseek(fd, 0, SEEK_CUR), 0);
  close(fd);

  std::vector<char> buffer(16);
  foreactor_call bad = MakeCall(FOREACTOR_CALL_PREAD);
  bad.fd = 987654;
  bad.buffer = buffer.data();
  bad.length = buffer.size();
  EXPECT_EQ(RunCall(bad, &request), -EBADF);
}

TEST_P(CallTypeTest, NegativeOffsetFailsLikePreadOrIsRefused) {
  const int fd = OpenData();
  ASSERT_GE(fd, 0);
  std::vector<char> buffer(64);
  Request request;
  request.call = MakeCall(FOREACTOR_CALL_PREAD);
  request.call.fd = fd;
  request.call.buffer = buffer.data();
  request.call.length = buffer.size();
  request.call.offset = -1;
  if (runner_->Run(&request)) {
    EXPECT_EQ(request.result, Direct(pread(fd, buffer.data(), buffer.size(), -1)));
    EXPECT_EQ(request.result, -EINVAL);
  } else {
    // io_uring would read at the current position: the engine must refuse.
    EXPECT_EQ(GetParam(), Backend::kIoUring);
    EXPECT_EQ(request.state.load(), RequestState::kIdle);
  }
  close(fd);
}

TEST_P(CallTypeTest, WriteAndPwriteMatchDirectPwrite) {
  ASSERT_TRUE(dir_.WritePatternFile("early", 1000));
  ASSERT_TRUE(dir_.WritePatternFile("direct", 1000));
  const int early_fd = open(dir_.Path("early").c_str(), O_WRONLY);
  const int direct_fd = open(dir_.Path("direct").c_str(), O_WRONLY);
  ASSERT_GE(early_fd, 0);
  ASSERT_GE(direct_fd, 0);
  Request request;
  const std::string text = "written ahead of time";
  int64_t offset = 10;
  for (foreactor_call_type type : {FOREACTOR_CALL_PWRITE, FOREACTOR_CALL_WRITE}) {
    foreactor_call call = MakeCall(type);
    call.fd = early_fd;
    call.buffer = const_cast<char*>(text.data());
    call.length = text.size();
    call.offset = offset;
    EXPECT_EQ(RunCall(call, &request), Direct(pwrite(direct_fd, text.data(), text.size(), offset)));
    offset = 995;  // the second write extends the file
  }
  EXPECT_EQ(lseek(early_fd, 0, SEEK_CUR), 0);
  close(early_fd);
  close(direct_fd);
  EXPECT_EQ(dir_.ReadAll("early"), dir_.ReadAll("direct"));
  EXPECT_EQ(dir_.ReadAll("early").size(), 995 + text.size());

  const int read_only = OpenData();
  foreactor_call call = MakeCall(FOREACTOR_CALL_PWRITE);
  call.fd = read_only;
  call.buffer = const_cast<char*>(text.data());
  call.length = text.size();
  EXPECT_EQ(RunCall(call, &request), Direct(pwrite(read_only, text.data(), text.size(), 0)));
  EXPECT_EQ(request.result, -EBADF);
  close(read_only);
}

TEST_P(CallTypeTest, ReadvAndPreadvMatchDirectPreadv) {
  const int fd = OpenData();
  ASSERT_GE(fd, 0);
  Request request;
  for (foreactor_call_type type : {FOREACTOR_CALL_PREADV, FOREACTOR_CALL_READV}) {
    for (int64_t offset : {int64_t{50}, int64_t{kDataSize - 1000}}) {
      std::vector<char> early_a(100), early_b(3000), direct_a(100), direct_b(3000);
      const struct iovec early_iov[2] = {{early_a.data(), early_a.size()},
                                         {early_b.data(), early_b.size()}};
      const struct iovec direct_iov[2] = {{direct_a.data(), direct_a.size()},
                                          {direct_b.data(), direct_b.size()}};
      foreactor_call call = MakeCall(type);
      call.fd = fd;
      call.iov = early_iov;
      call.iovcnt = 2;
      call.length = 3100;
      call.offset = offset;
      EXPECT_EQ(RunCall(call, &request), Direct(preadv(fd, direct_iov, 2, offset)));
      EXPECT_EQ(early_a, direct_a);
      EXPECT_EQ(early_b, direct_b);
    }
  }
  close(fd);
}

TEST_P(CallTypeTest, WritevAndPwritevMatchDirectPwritev) {
  ASSERT_TRUE(dir_.WritePatternFile("early", 500));
  ASSERT_TRUE(dir_.WritePatternFile("direct", 500));
  const int early_fd = open(dir_.Path("early").c_str(), O_WRONLY);
  const int direct_fd = open(dir_.Path("direct").c_str(), O_WRONLY);
  ASSERT_GE(early_fd, 0);
  ASSERT_GE(direct_fd, 0);
  char first[] = "first part ";
  char second[] = "second part";
  const struct iovec iov[2] = {{first, sizeof(first) - 1}, {second, sizeof(second) - 1}};
  Request request;
  int64_t offset = 7;
  for (foreactor_call_type type : {FOREACTOR_CALL_PWRITEV, FOREACTOR_CALL_WRITEV}) {
    foreactor_call call = MakeCall(type);
    call.fd = early_fd;
    call.iov = iov;
    call.iovcnt = 2;
    call.length = iov[0].iov_len + iov[1].iov_len;
    call.offset = offset;
    EXPECT_EQ(RunCall(call, &request), Direct(pwritev(direct_fd, iov, 2, offset)));
    offset = 490;
  }
  close(early_fd);
  close(direct_fd);
  EXPECT_EQ(dir_.ReadAll("early"), dir_.ReadAll("direct"));
}

TEST_P(CallTypeTest, OpenAndOpenatMatchDirectCalls) {
  Request request;
  const std::string data = dir_.Path("data");
  struct Case {
    const char* path;
    int flags;
  };
  const std::string missing = dir_.Path("missing");
  const std::string created = dir_.Path("created");
  const Case cases[] = {
      {data.c_str(), O_RDONLY},
      {data.c_str(), O_RDONLY | O_CLOEXEC},
      {missing.c_str(), O_RDONLY},
      {data.c_str(), O_RDONLY | O_DIRECTORY},
      {data.c_str(), O_CREAT | O_EXCL | O_WRONLY},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.path) + " flags " + std::to_string(c.flags));
    foreactor_call call = MakeCall(FOREACTOR_CALL_OPEN);
    call.path = c.path;
    call.flags = c.flags;
    call.mode = 0600;
    const int64_t early = RunCall(call, &request);
    const int64_t direct = Direct(open(c.path, c.flags, 0600));
    EXPECT_EQ(early < 0, direct < 0);
    if (early < 0 || direct < 0) {
      EXPECT_EQ(early, direct);
      continue;
    }
    struct stat early_info, direct_info;
    ASSERT_EQ(fstat(static_cast<int>(early), &early_info), 0);
    ASSERT_EQ(fstat(static_cast<int>(direct), &direct_info), 0);
    EXPECT_EQ(early_info.st_ino, direct_info.st_ino);
    EXPECT_EQ(fcntl(static_cast<int>(early), F_GETFD), fcntl(static_cast<int>(direct), F_GETFD));
    EXPECT_EQ(fcntl(static_cast<int>(early), F_GETFL), fcntl(static_cast<int>(direct), F_GETFL));
    close(static_cast<int>(early));
    close(static_cast<int>(direct));
  }

  // Creation honours the mode (and the umask) the same way.
  foreactor_call create = MakeCall(FOREACTOR_CALL_OPEN);
  create.path = created.c_str();
  create.flags = O_CREAT | O_EXCL | O_WRONLY;
  create.mode = 0640;
  const int64_t created_fd = RunCall(create, &request);
  ASSERT_GE(created_fd, 0);
  close(static_cast<int>(created_fd));
  const int direct_created = open(dir_.Path("created2").c_str(), O_CREAT | O_EXCL | O_WRONLY, 0640);
  ASSERT_GE(direct_created, 0);
  close(direct_created);
  struct stat early_info, direct_info;
  ASSERT_EQ(stat(created.c_str(), &early_info), 0);
  ASSERT_EQ(stat(dir_.Path("created2").c_str(), &direct_info), 0);
  EXPECT_EQ(early_info.st_mode, direct_info.st_mode);

  // openat relative to a directory descriptor, and with a bad one.
  const int dirfd = open(dir_.path().c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(dirfd, 0);
  foreactor_call at = MakeCall(FOREACTOR_CALL_OPENAT);
  at.fd = dirfd;
  at.path = "data";
  at.flags = O_RDONLY;
  const int64_t at_fd = RunCall(at, &request);
  ASSERT_GE(at_fd, 0);
  std::vector<char> bytes(8);
  ASSERT_EQ(pread(static_cast<int>(at_fd), bytes.data(), bytes.size(), 0), 8);
  EXPECT_EQ(bytes[5], PatternByte(5));
  close(static_cast<int>(at_fd));
  at.fd = 987654;
  EXPECT_EQ(RunCall(at, &request), Direct(openat(987654, "data", O_RDONLY)));
  at.fd = dirfd;
  at.path = "missing";
  EXPECT_EQ(RunCall(at, &request), -ENOENT);
  close(dirfd);
}

TEST_P(CallTypeTest, CloseMatchesDirectClose) {
  const int fd = OpenData();
  ASSERT_GE(fd, 0);
  Request request;
  foreactor_call call = MakeCall(FOREACTOR_CALL_CLOSE);
  call.fd = fd;
  EXPECT_EQ(RunCall(call, &request), 0);
  EXPECT_EQ(fcntl(fd, F_GETFD), -1);
  EXPECT_EQ(errno, EBADF);
  call.fd = 987654;
  EXPECT_EQ(RunCall(call, &request), Direct(close(987654)));
}

// The stat family: the statx the engine made, converted, equals the stat
// the program would have got.
TEST_P(CallTypeTest, StatFamilyMatchesDirectCalls) {
  const std::string data = dir_.Path("data");
  const std::string link = dir_.Path("link");
  const std::string missing = dir_.Path("missing");
  const int fd = OpenData();
  const int dirfd = open(dir_.path().c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(fd, 0);
  ASSERT_GE(dirfd, 0);
  Request request;

  auto expect_same = [&](foreactor_call call, int64_t direct_result, const struct stat& direct) {
    SCOPED_TRACE(std::string(foreactor_call_type_name(call.type)) + " " +
                 (call.path != nullptr ? call.path : "(no path)") + " flags " +
                 std::to_string(call.flags));
    const int64_t result = RunCall(call, &request);
    EXPECT_EQ(result, direct_result);
    if (result != 0 || direct_result != 0) return;
    struct stat converted;
    StatFromStatx(request.statx_buffer, &converted);
    EXPECT_EQ(converted.st_ino, direct.st_ino);
    EXPECT_EQ(converted.st_mode, direct.st_mode);
    EXPECT_EQ(converted.st_size, direct.st_size);
    EXPECT_EQ(0, std::memcmp(&converted, &direct, sizeof(struct stat)));
  };

  struct stat direct;
  std::memset(&direct, 0, sizeof(direct));
  foreactor_call call = MakeCall(FOREACTOR_CALL_FSTAT);
  call.fd = fd;
  int64_t direct_result = Direct(fstat(fd, &direct));
  expect_same(call, direct_result, direct);
  call.fd = 987654;
  expect_same(call, Direct(fstat(987654, &direct)), direct);

  call = MakeCall(FOREACTOR_CALL_STAT);
  for (const std::string* path : {&data, &link, &missing}) {
    call.path = path->c_str();
    direct_result = Direct(stat(path->c_str(), &direct));
    expect_same(call, direct_result, direct);
  }
  call.path = "";
  expect_same(call, Direct(stat("", &direct)), direct);

  call = MakeCall(FOREACTOR_CALL_LSTAT);
  for (const std::string* path : {&data, &link, &missing}) {
    call.path = path->c_str();
    direct_result = Direct(lstat(path->c_str(), &direct));
    expect_same(call, direct_result, direct);
  }

  call = MakeCall(FOREACTOR_CALL_FSTATAT);
  call.fd = dirfd;
  struct AtCase {
    const char* path;
    int flags;
  };
  for (const AtCase& c : {AtCase{"data", 0}, AtCase{"link", 0}, AtCase{"link", AT_SYMLINK_NOFOLLOW},
                          AtCase{"sub", 0}, AtCase{"missing", 0}, AtCase{"", AT_EMPTY_PATH},
                          AtCase{"", 0}, AtCase{"data", 0x40000000}}) {
    call.path = c.path;
    call.flags = c.flags;
    direct_result = Direct(fstatat(dirfd, c.path, &direct, c.flags));
    expect_same(call, direct_result, direct);
  }

  // statx itself: the struct statx as the direct call fills it.
  call = MakeCall(FOREACTOR_CALL_STATX);
  call.fd = dirfd;
  call.path = "link";
  call.mode = STATX_BASIC_STATS | STATX_BTIME;
  for (int flags : {0, AT_SYMLINK_NOFOLLOW}) {
    call.flags = flags;
    const int64_t result = RunCall(call, &request);
    struct statx expected;
    std::memset(&expected, 0, sizeof(expected));
    ASSERT_EQ(result, Direct(statx(dirfd, "link", flags, call.mode, &expected)));
    EXPECT_EQ(request.statx_buffer.stx_mask, expected.stx_mask);
    EXPECT_EQ(request.statx_buffer.stx_ino, expected.stx_ino);
    EXPECT_EQ(request.statx_buffer.stx_btime.tv_nsec, expected.stx_btime.tv_nsec);
    EXPECT_EQ(0, std::memcmp(&request.statx_buffer, &expected, sizeof(expected)));
  }
  call.path = "missing";
  call.flags = 0;
  struct statx ignored;
  EXPECT_EQ(RunCall(call, &request), Direct(statx(dirfd, "missing", 0, call.mode, &ignored)));
  close(fd);
  close(dirfd);
}

TEST_P(CallTypeTest, LseekMatchesDirectLseek) {
  if (!runner_->Supports(FOREACTOR_CALL_LSEEK)) GTEST_SKIP() << "not supported by this engine";
  const int early_fd = OpenData();
  const int direct_fd = OpenData();
  Request request;
  struct Case {
    int64_t offset;
    int whence;
  };
  for (const Case& c : {Case{100, SEEK_SET}, Case{50, SEEK_CUR}, Case{-10, SEEK_END},
                        Case{0, 12345}, Case{-1000000, SEEK_SET}, Case{0, SEEK_CUR}}) {
    foreactor_call call = MakeCall(FOREACTOR_CALL_LSEEK);
    call.fd = early_fd;
    call.offset = c.offset;
    call.whence = c.whence;
    EXPECT_EQ(RunCall(call, &request), Direct(lseek(direct_fd, c.offset, c.whence)));
  }
  close(early_fd);
  close(direct_fd);
}

TEST_P(CallTypeTest, Getdents64MatchesDirectGetdents64) {
  if (!runner_->Supports(FOREACTOR_CALL_GETDENTS64)) GTEST_SKIP() << "not supported by this engine";
  for (int i = 0; i < 60; ++i) {
    ASSERT_TRUE(dir_.WritePatternFile("sub/entry_with_a_long_name_" + std::to_string(i), 1));
  }
  const std::string sub = dir_.Path("sub");
  const int early_fd = open(sub.c_str(), O_RDONLY | O_DIRECTORY);
  const int direct_fd = open(sub.c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(early_fd, 0);
  ASSERT_GE(direct_fd, 0);
  Request request;
  int64_t result;
  int rounds = 0;
  do {
    std::vector<char> early(1024, 0), direct(1024, 0);
    foreactor_call call = MakeCall(FOREACTOR_CALL_GETDENTS64);
    call.fd = early_fd;
    call.buffer = early.data();
    call.length = early.size();
    result = RunCall(call, &request);
    EXPECT_EQ(result, Direct(syscall(SYS_getdents64, direct_fd, direct.data(), direct.size())));
    EXPECT_EQ(early, direct);
    ++rounds;
  } while (result > 0 && rounds < 100);
  EXPECT_GT(rounds, 2);  // the listing took several calls
  std::vector<char> tiny(8);
  foreactor_call call = MakeCall(FOREACTOR_CALL_GETDENTS64);
  call.fd = early_fd;
  call.buffer = tiny.data();
  call.length = tiny.size();
  lseek(early_fd, 0, SEEK_SET);
  lseek(direct_fd, 0, SEEK_SET);
  EXPECT_EQ(RunCall(call, &request),
            Direct(syscall(SYS_getdents64, direct_fd, tiny.data(), tiny.size())));
  EXPECT_EQ(request.result, -EINVAL);
  close(early_fd);
  close(direct_fd);
}

// A read linked to a write of the read's buffer: a copy, in order.
TEST_P(CallTypeTest, LinkedReadThenWriteCopiesInOrder) {
  const int source = OpenData();
  const int target = open(dir_.Path("copy").c_str(), O_CREAT | O_WRONLY, 0644);
  ASSERT_GE(source, 0);
  ASSERT_GE(target, 0);
  // A write run before its read would write these 'X's.
  std::vector<char> buffer(4096, 'X');
  Request read, write;
  read.call = MakeCall(FOREACTOR_CALL_PREAD);
  read.call.fd = source;
  read.call.buffer = buffer.data();
  read.call.length = buffer.size();
  read.call.offset = 8192;
  read.call.link_next = 1;
  read.linked_next = &write;
  write.call = MakeCall(FOREACTOR_CALL_PWRITE);
  write.call.fd = target;
  write.call.buffer = buffer.data();
  write.call.length = buffer.size();
  write.call.offset = 0;
  ASSERT_TRUE(runner_->Run(&read));
  EXPECT_EQ(read.result, 4096);
  EXPECT_EQ(write.result, 4096);
  const std::string copy = dir_.ReadAll("copy");
  ASSERT_EQ(copy.size(), 4096u);
  for (size_t i = 0; i < copy.size(); ++i) ASSERT_EQ(copy[i], PatternByte(8192 + i)) << i;
  close(source);
  close(target);
}

TEST_P(CallTypeTest, ShortReadCancelsTheLinkedWrite) {
  const int source = OpenData();
  const int target = open(dir_.Path("copy").c_str(), O_CREAT | O_WRONLY, 0644);
  std::vector<char> buffer(4096);
  Request read, write;
  read.call = MakeCall(FOREACTOR_CALL_PREAD);
  read.call.fd = source;
  read.call.buffer = buffer.data();
  read.call.length = buffer.size();
  read.call.offset = kDataSize - 100;
  read.call.link_next = 1;
  read.linked_next = &write;
  write.call = MakeCall(FOREACTOR_CALL_PWRITE);
  write.call.fd = target;
  write.call.buffer = buffer.data();
  write.call.length = buffer.size();
  ASSERT_TRUE(runner_->Run(&read));
  EXPECT_EQ(read.result, 100);
  EXPECT_EQ(write.result, -ECANCELED);
  EXPECT_EQ(dir_.ReadAll("copy").size(), 0u);
  close(source);
  close(target);
}

TEST_P(CallTypeTest, FailedHeadCancelsTheRestOfTheChain) {
  const int target = open(dir_.Path("copy").c_str(), O_CREAT | O_WRONLY, 0644);
  std::vector<char> buffer(64);
  Request read, write, second_write;
  read.call = MakeCall(FOREACTOR_CALL_PREAD);
  read.call.fd = 987654;
  read.call.buffer = buffer.data();
  read.call.length = buffer.size();
  read.linked_next = &write;
  write.call = MakeCall(FOREACTOR_CALL_PWRITE);
  write.call.fd = target;
  write.call.buffer = buffer.data();
  write.call.length = buffer.size();
  write.linked_next = &second_write;
  second_write.call = write.call;
  ASSERT_TRUE(runner_->Run(&read));
  EXPECT_EQ(read.result, -EBADF);
  EXPECT_EQ(write.result, -ECANCELED);
  EXPECT_EQ(second_write.result, -ECANCELED);
  EXPECT_EQ(dir_.ReadAll("copy").size(), 0u);
  close(target);
}

// A write-back hint: sync_file_range(SYNC_FILE_RANGE_WRITE) of a range, as
// the direct call returns it, leaving the file's bytes as they were.
TEST_P(CallTypeTest, StartWriteBackMatchesDirectSyncFileRange) {
  const int fd = open(dir_.Path("data").c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  const std::string text(8192, 'h');
  ASSERT_EQ(pwrite(fd, text.data(), text.size(), 4096), static_cast<ssize_t>(text.size()));
  const std::string before = dir_.ReadAll("data");
  Request request;
  ResetRequest(&request);
  request.operation = RequestOperation::kStartWriteBack;
  request.call.fd = fd;
  request.call.offset = 4096;
  request.call.length = text.size();
  ASSERT_TRUE(runner_->Run(&request));
  EXPECT_EQ(request.result, Direct(sync_file_range(fd, 4096, 8192, SYNC_FILE_RANGE_WRITE)));
  EXPECT_EQ(request.result, 0);
  EXPECT_EQ(dir_.ReadAll("data"), before);
  close(fd);

  // On a pipe the hint fails as the call does; nothing else happens.
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  ResetRequest(&request);
  request.operation = RequestOperation::kStartWriteBack;
  request.call.fd = pipe_fds[1];
  request.call.length = 4096;
  ASSERT_TRUE(runner_->Run(&request));
  EXPECT_EQ(request.result, -ESPIPE);
  close(pipe_fds[0]);
  close(pipe_fds[1]);
}

// A read-ahead hint: readahead(2) (io_uring: fadvise WILLNEED) of a range
// succeeds with 0 and changes no byte; on a closed descriptor it fails.
TEST_P(CallTypeTest, StartReadAheadHintsARangeAndFailsOnABadDescriptor) {
  const int fd = OpenData();
  ASSERT_GE(fd, 0);
  const std::string before = dir_.ReadAll("data");
  Request request;
  ResetRequest(&request);
  request.operation = RequestOperation::kStartReadAhead;
  request.call.type = FOREACTOR_CALL_PREAD;
  request.call.fd = fd;
  request.call.offset = 4096;
  request.call.length = 8192;
  ASSERT_TRUE(runner_->Run(&request));
  EXPECT_EQ(request.result, 0);
  EXPECT_EQ(dir_.ReadAll("data"), before);
  close(fd);

  ResetRequest(&request);
  request.operation = RequestOperation::kStartReadAhead;
  request.call.type = FOREACTOR_CALL_PREAD;
  request.call.fd = fd;  // closed
  request.call.length = 4096;
  ASSERT_TRUE(runner_->Run(&request));
  EXPECT_EQ(request.result, -EBADF);
}

// A read-ahead read: pread into the request's buffer, with the direct
// call's result; a failure is the call's.
TEST_P(CallTypeTest, ReadAheadMatchesDirectPread) {
  const int fd = OpenData();
  ASSERT_GE(fd, 0);
  std::vector<char> got(12288), expected(12288);
  Request request;
  ResetRequest(&request);
  request.operation = RequestOperation::kReadAhead;
  request.call.type = FOREACTOR_CALL_PREAD;
  request.call.fd = fd;
  request.call.buffer = got.data();
  request.call.length = got.size();
  request.call.offset = 4096;
  ASSERT_TRUE(runner_->Run(&request));
  EXPECT_EQ(request.result, Direct(pread(fd, expected.data(), expected.size(), 4096)));
  EXPECT_GT(request.result, 0);
  EXPECT_EQ(std::memcmp(got.data(), expected.data(), static_cast<size_t>(request.result)), 0);
  close(fd);

  ResetRequest(&request);
  request.operation = RequestOperation::kReadAhead;
  request.call.type = FOREACTOR_CALL_PREAD;
  request.call.fd = fd;  // closed
  request.call.buffer = got.data();
  request.call.length = 4096;
  ASSERT_TRUE(runner_->Run(&request));
  EXPECT_EQ(request.result, -EBADF);
}

INSTANTIATE_TEST_SUITE_P(Backends, CallTypeTest,
                         ::testing::Values(Backend::kExecuteNow, Backend::kIoUring,
                                           Backend::kThreads),
                         BackendName);

TEST(ExecuteNowTest, LeavesErrnoAlone) {
  Request request;
  request.call = MakeCall(FOREACTOR_CALL_CLOSE);
  request.call.fd = 987654;
  errno = 1234;
  ExecuteNow(&request);
  EXPECT_EQ(request.result, -EBADF);
  EXPECT_EQ(errno, 1234);
  EXPECT_EQ(request.state.load(), RequestState::kCompleted);
}

TEST(ExecuteNowTest, InvalidTypeFailsWithEinval) {
  Request request;
  request.call = MakeCall(FOREACTOR_CALL_TYPE_COUNT);
  ExecuteNow(&request);
  EXPECT_EQ(request.result, -EINVAL);
  EXPECT_EQ(request.state.load(), RequestState::kCompleted);
}

// ------------------------------------------------ queues: io_uring, threads

class QueueTest : public ::testing::TestWithParam<Backend> {
 protected:
  static constexpr int kBlocks = 256;

  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    ASSERT_TRUE(dir_.WritePatternFile("blocks", static_cast<uint64_t>(kBlocks) * 4096));
    fd_ = open(dir_.Path("blocks").c_str(), O_RDONLY);
    ASSERT_GE(fd_, 0);
    EngineOptions options;
    options.queue_size = kBlocks;
    engine_ = MakeEngine(GetParam(), options);
    ASSERT_NE(engine_, nullptr);
    buffers_.assign(kBlocks, std::vector<char>(4096));
  }
  void TearDown() override {
    engine_.reset();
    if (fd_ >= 0) close(fd_);
  }

  void SetUpRead(Request* request, int block) {
    ResetRequest(request);
    std::fill(buffers_[block].begin(), buffers_[block].end(), 0);
    request->call = MakeCall(FOREACTOR_CALL_PREAD);
    request->call.fd = fd_;
    request->call.buffer = buffers_[block].data();
    request->call.length = 4096;
    request->call.offset = int64_t{block} * 4096;
  }

  void ExpectBlock(const Request& request, int block) {
    ASSERT_EQ(request.state.load(), RequestState::kCompleted);
    ASSERT_EQ(request.result, 4096) << "block " << block;
    for (int i = 0; i < 4096; i += 511) {
      const uint64_t offset = static_cast<uint64_t>(block) * 4096 + static_cast<uint64_t>(i);
      ASSERT_EQ(buffers_[block][i], PatternByte(offset)) << "block " << block;
    }
  }

  TempDir dir_;
  int fd_ = -1;
  std::unique_ptr<Engine> engine_;
  std::vector<std::vector<char>> buffers_;
};

TEST_P(QueueTest, TwoHundredFiftySixRequestsInFlight) {
  std::vector<Request> requests(kBlocks);
  for (int block = 0; block < kBlocks; ++block) {
    SetUpRead(&requests[block], block);
    ASSERT_TRUE(engine_->Prepare(&requests[block])) << block;
    EXPECT_EQ(requests[block].state.load(), RequestState::kPrepared);
  }
  EXPECT_EQ(engine_->Submit(), kBlocks);
  for (int block = kBlocks - 1; block >= 0; --block) {
    engine_->Wait(&requests[block]);
    ExpectBlock(requests[block], block);
  }
}

TEST_P(QueueTest, ManyBatches) {
  std::vector<Request> requests(kBlocks);
  int next_block = 0;
  for (int batch = 0; batch < 300; ++batch) {
    const int size = 1 + batch % 9;
    std::vector<int> blocks;
    for (int i = 0; i < size; ++i) {
      const int block = next_block++ % kBlocks;
      SetUpRead(&requests[block], block);
      ASSERT_TRUE(engine_->Prepare(&requests[block]));
      blocks.push_back(block);
    }
    ASSERT_EQ(engine_->Submit(), size);
    // Wait in the reverse of the submission order.
    for (size_t i = blocks.size(); i-- > 0;) {
      engine_->Wait(&requests[blocks[i]]);
      ExpectBlock(requests[blocks[i]], blocks[i]);
    }
  }
  EXPECT_EQ(engine_->Submit(), 0);  // nothing left to submit
}

TEST_P(QueueTest, CancelledRequestsCompleteWithRealResultOrEcanceled) {
  std::vector<Request> requests(64);
  for (int block = 0; block < 64; ++block) {
    SetUpRead(&requests[block], block);
    ASSERT_TRUE(engine_->Prepare(&requests[block]));
  }
  ASSERT_EQ(engine_->Submit(), 64);
  for (Request& request : requests) engine_->Cancel(&request);
  for (int block = 0; block < 64; ++block) {
    engine_->Wait(&requests[block]);
    ASSERT_EQ(requests[block].state.load(), RequestState::kCompleted);
    if (requests[block].result != -ECANCELED) ExpectBlock(requests[block], block);
  }
  // The engine still works afterwards.
  SetUpRead(&requests[0], 3);
  ASSERT_TRUE(engine_->Prepare(&requests[0]));
  ASSERT_EQ(engine_->Submit(), 1);
  engine_->Wait(&requests[0]);
  ExpectBlock(requests[0], 3);
}

TEST_P(QueueTest, CancelOfAPreparedRequestCompletesIt) {
  Request request;
  SetUpRead(&request, 1);
  ASSERT_TRUE(engine_->Prepare(&request));
  engine_->Cancel(&request);
  engine_->Wait(&request);
  ASSERT_EQ(request.state.load(), RequestState::kCompleted);
  if (request.result != -ECANCELED) ExpectBlock(request, 1);
}

TEST_P(QueueTest, WaitOnAPreparedRequestSubmitsIt) {
  Request request;
  SetUpRead(&request, 7);
  ASSERT_TRUE(engine_->Prepare(&request));
  engine_->Wait(&request);
  ExpectBlock(request, 7);
}

TEST_P(QueueTest, PollRecordsCompletionsWithoutBlocking) {
  Request request;
  SetUpRead(&request, 2);
  ASSERT_TRUE(engine_->Prepare(&request));
  ASSERT_EQ(engine_->Submit(), 1);
  // Poll never blocks; the request completes after finitely many polls.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (request.state.load() != RequestState::kCompleted &&
         std::chrono::steady_clock::now() < deadline) {
    engine_->Poll();
    std::this_thread::yield();
  }
  ExpectBlock(request, 2);
}

TEST_P(QueueTest, DestructionLeavesNoRequestInFlight) {
  std::vector<Request> requests(32);
  for (int block = 0; block < 32; ++block) {
    SetUpRead(&requests[block], block);
    ASSERT_TRUE(engine_->Prepare(&requests[block]));
  }
  ASSERT_EQ(engine_->Submit(), 32);
  Request prepared_only;
  SetUpRead(&prepared_only, 40);
  ASSERT_TRUE(engine_->Prepare(&prepared_only));
  engine_.reset();
  for (int block = 0; block < 32; ++block) {
    ASSERT_EQ(requests[block].state.load(), RequestState::kCompleted) << block;
    if (requests[block].result != -ECANCELED) ExpectBlock(requests[block], block);
  }
  EXPECT_EQ(prepared_only.state.load(), RequestState::kCompleted);
  EXPECT_EQ(prepared_only.result, -ECANCELED);
}

TEST_P(QueueTest, RefusesARequestThatIsNotIdle) {
  Request request;
  SetUpRead(&request, 0);
  ASSERT_TRUE(engine_->Prepare(&request));
  EXPECT_FALSE(engine_->Prepare(&request));
  engine_->Submit();
  engine_->Wait(&request);
  ExpectBlock(request, 0);
}

INSTANTIATE_TEST_SUITE_P(Engines, QueueTest,
                         ::testing::Values(Backend::kIoUring, Backend::kThreads), BackendName);

// ------------------------------------------------------------- CreateEngine

bool IoUringWorksHere() {
  io_uring ring;
  if (io_uring_queue_init(4, &ring, 0) != 0) return false;
  io_uring_queue_exit(&ring);
  return true;
}

TEST(CreateEngineTest, IoUringWithoutFallbackWhenItWorks) {
  std::string reason = "stale";
  EngineOptions options;
  options.kind = EngineKind::kIoUring;
  std::unique_ptr<Engine> engine = CreateEngine(options, &reason);
  ASSERT_NE(engine, nullptr);
  if (IoUringWorksHere()) {
    EXPECT_STREQ(engine->name(), "io_uring");
    EXPECT_EQ(reason, "");
  } else {
    EXPECT_STREQ(engine->name(), "threads");
    EXPECT_EQ(reason.rfind("io_uring unavailable (", 0), 0u) << reason;
  }
}

TEST(CreateEngineTest, ThreadsAndSyncKinds) {
  std::string reason = "stale";
  EngineOptions options;
  options.kind = EngineKind::kThreads;
  std::unique_ptr<Engine> threads = CreateEngine(options, &reason);
  ASSERT_NE(threads, nullptr);
  EXPECT_STREQ(threads->name(), "threads");
  EXPECT_EQ(reason, "");
  for (int type = 0; type < FOREACTOR_CALL_TYPE_COUNT; ++type) {
    const auto call_type = static_cast<foreactor_call_type>(type);
    // Opens stay out: a worker shares the program's descriptor table.
    EXPECT_EQ(threads->Supports(call_type), !IsOpen(call_type)) << type;
  }

  options.kind = EngineKind::kSync;
  std::unique_ptr<Engine> sync = CreateEngine(options, nullptr);
  ASSERT_NE(sync, nullptr);
  EXPECT_STREQ(sync->name(), "sync");
  Request request;
  request.call = MakeCall(FOREACTOR_CALL_PREAD);
  for (int type = 0; type < FOREACTOR_CALL_TYPE_COUNT; ++type) {
    EXPECT_FALSE(sync->Supports(static_cast<foreactor_call_type>(type)));
  }
  EXPECT_FALSE(sync->Prepare(&request));
  EXPECT_EQ(request.state.load(), RequestState::kIdle);
  EXPECT_EQ(sync->Submit(), 0);
}

TEST(CreateEngineTest, IoUringLacksOnlyLseekAndGetdents64) {
  std::string error;
  std::unique_ptr<IoUringEngine> engine = IoUringEngine::Create(EngineOptions{}, &error);
  if (!engine) GTEST_SKIP() << "io_uring unavailable: " << error;
  for (int type = 0; type < FOREACTOR_CALL_TYPE_COUNT; ++type) {
    const bool expected = type != FOREACTOR_CALL_LSEEK && type != FOREACTOR_CALL_GETDENTS64;
    EXPECT_EQ(engine->Supports(static_cast<foreactor_call_type>(type)), expected) << type;
  }
}

}  // namespace
}  // namespace foreactor
