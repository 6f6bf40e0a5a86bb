// HeldCompactionsEnv (apps/leveldb/driver/held_compactions_env.h): it holds
// background work until close, runs it then, refuses new files while
// closing, and a database whose level-0 tables are past LevelDB's
// compaction trigger keeps them while open and after close.  Run by
// apps/leveldb/tests/test_leveldb_driver.py with a timeout: a close that
// hangs fails the test there.
#include "driver/held_compactions_env.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "leveldb/db.h"
#include "leveldb/options.h"

namespace leveldb_driver {
namespace {

void Count(void* counter) { ++*static_cast<int*>(counter); }

TEST(HeldCompactionsEnv, HoldsScheduledWorkUntilClose) {
  HeldCompactionsEnv env(leveldb::Env::Default());
  int runs = 0;
  env.Schedule(Count, &runs);
  env.Schedule(Count, &runs);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(runs, 0);
  EXPECT_EQ(env.held(), 2u);
  env.RunHeldWorkForClose();
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(env.held(), 0u);
}

struct Rescheduling {
  HeldCompactionsEnv* env;
  int runs = 0;
};

void RunAndScheduleOnce(void* argument) {
  auto* state = static_cast<Rescheduling*>(argument);
  if (++state->runs == 1) state->env->Schedule(RunAndScheduleOnce, state);
}

TEST(HeldCompactionsEnv, RunsWorkScheduledWhileClosing) {
  HeldCompactionsEnv env(leveldb::Env::Default());
  Rescheduling state{&env};
  env.Schedule(RunAndScheduleOnce, &state);
  env.RunHeldWorkForClose();
  EXPECT_EQ(state.runs, 2);
  EXPECT_EQ(env.held(), 0u);
}

TEST(HeldCompactionsEnv, RefusesNewFilesOnceClosing) {
  const std::string directory = ::testing::TempDir() + "held_env_files";
  std::filesystem::create_directories(directory);
  HeldCompactionsEnv env(leveldb::Env::Default());
  leveldb::WritableFile* file = nullptr;
  ASSERT_TRUE(env.NewWritableFile(directory + "/before", &file).ok());
  delete file;
  env.RunHeldWorkForClose();
  EXPECT_TRUE(env.NewWritableFile(directory + "/after", &file).IsIOError());
  EXPECT_EQ(file, nullptr);
  EXPECT_TRUE(env.NewAppendableFile(directory + "/before", &file).IsIOError());
  EXPECT_FALSE(std::filesystem::exists(directory + "/after"));
}

uint64_t Level0Files(leveldb::DB* db) {
  std::string files;
  EXPECT_TRUE(db->GetProperty("leveldb.num-files-at-level0", &files));
  return std::strtoull(files.c_str(), nullptr, 10);
}

// Opens `directory` with `env` and a write buffer of `write_buffer` bytes.
HeldDatabase Open(const std::string& directory, HeldCompactionsEnv* env, size_t write_buffer) {
  leveldb::Options options;
  options.create_if_missing = true;
  options.env = env;
  options.write_buffer_size = write_buffer;
  leveldb::DB* db = nullptr;
  EXPECT_TRUE(leveldb::DB::Open(options, directory, &db).ok());
  return HeldDatabase(db, DatabaseCloser{env});
}

TEST(HeldCompactionsEnv, DatabaseKeepsItsLevel0TablesAndCloses) {
  const std::string directory = ::testing::TempDir() + "held_env_db";
  std::filesystem::remove_all(directory);
  const std::string value(1000, 'v');
  {
    // 4 MiB of updates in one memtable: close leaves them in the log.
    HeldCompactionsEnv env(leveldb::Env::Default());
    HeldDatabase db = Open(directory, &env, 64 << 20);
    for (int i = 0; i < 4000; ++i) {
      ASSERT_TRUE(
          db->Put(leveldb::WriteOptions(), "key" + std::to_string(i * 7919 % 4000), value).ok());
    }
    EXPECT_EQ(Level0Files(db.get()), 0u);
  }
  uint64_t level0 = 0;
  {
    // Log recovery with a 256 KiB write buffer writes about 16 level-0
    // tables: four are LevelDB's compaction trigger, so it schedules a
    // compaction, which the Env holds.
    HeldCompactionsEnv env(leveldb::Env::Default());
    HeldDatabase db = Open(directory, &env, 256 << 10);
    level0 = Level0Files(db.get());
    EXPECT_GE(level0, 12u);
    EXPECT_EQ(env.held(), 1u);
    std::string read;
    ASSERT_TRUE(db->Get(leveldb::ReadOptions(), "key17", &read).ok());
    EXPECT_EQ(read, value);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_EQ(Level0Files(db.get()), level0);
  }  // closes: the held compaction runs, finds it cannot write, and ends
  {
    HeldCompactionsEnv env(leveldb::Env::Default());
    HeldDatabase db = Open(directory, &env, 256 << 10);
    EXPECT_EQ(Level0Files(db.get()), level0);
  }
}

}  // namespace
}  // namespace leveldb_driver
