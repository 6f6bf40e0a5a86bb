// Tests of DirectoryQueue: depth-first order and its bounds.
#include "walk/directory_queue.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace foreactor {
namespace {

std::vector<PendingDirectory> Directories(std::initializer_list<const char*> paths) {
  std::vector<PendingDirectory> directories;
  for (const char* path : paths) {
    PendingDirectory directory;
    directory.path = path;
    directories.push_back(directory);
  }
  return directories;
}

std::vector<std::string> Drain(DirectoryQueue* queue) {
  std::vector<std::string> paths;
  PendingDirectory next;
  while (queue->PopFront(&next)) paths.push_back(next.path);
  return paths;
}

TEST(DirectoryQueueTest, FoundDirectoriesComeFirstInTheOrderFound) {
  DirectoryQueue queue(100, 1000);
  auto top = Directories({"a", "b"});
  EXPECT_EQ(queue.PushFront(&top), 0u);
  EXPECT_TRUE(top.empty());
  PendingDirectory next;
  ASSERT_TRUE(queue.PopFront(&next));
  EXPECT_EQ(next.path, "a");
  auto under_a = Directories({"a/x", "a/y"});
  queue.PushFront(&under_a);
  // Depth first: a's subdirectories before its sibling b.
  EXPECT_EQ(Drain(&queue), (std::vector<std::string>{"a/x", "a/y", "b"}));
  EXPECT_TRUE(queue.empty());
  EXPECT_EQ(queue.path_bytes(), 0u);
}

TEST(DirectoryQueueTest, TheBackIsReachedLastAndItsSubdirectoriesGoAfterIt) {
  DirectoryQueue queue(100, 1000);
  PendingDirectory last;
  EXPECT_FALSE(queue.PopBack(&last));
  auto top = Directories({"a", "b"});
  queue.PushFront(&top);
  ASSERT_TRUE(queue.PopBack(&last));
  EXPECT_EQ(last.path, "b");
  EXPECT_EQ(queue.path_bytes(), 1u);
  auto under_b = Directories({"b/x", "b/y"});
  EXPECT_EQ(queue.PushBack(&under_b), 0u);
  EXPECT_TRUE(under_b.empty());
  EXPECT_EQ(queue.path_bytes(), 7u);
  EXPECT_EQ(Drain(&queue), (std::vector<std::string>{"a", "b/x", "b/y"}));
}

TEST(DirectoryQueueTest, PushBackDropsWhatDoesNotFitTheBounds) {
  DirectoryQueue queue(3, 1000);
  auto top = Directories({"a", "b"});
  queue.PushFront(&top);
  auto more = Directories({"c", "d"});
  EXPECT_EQ(queue.PushBack(&more), 1u);
  EXPECT_EQ(Drain(&queue), (std::vector<std::string>{"a", "b", "c"}));
}

TEST(DirectoryQueueTest, ACountBoundDropsTheDirectoriesReachedLast) {
  DirectoryQueue queue(3, 1000);
  auto top = Directories({"a", "b", "c"});
  EXPECT_EQ(queue.PushFront(&top), 0u);
  auto more = Directories({"a/x", "a/y"});
  EXPECT_EQ(queue.PushFront(&more), 2u);
  EXPECT_EQ(Drain(&queue), (std::vector<std::string>{"a/x", "a/y", "a"}));
}

TEST(DirectoryQueueTest, ABytesBoundDropsTheDirectoriesReachedLast) {
  DirectoryQueue queue(100, 8);
  auto top = Directories({"abcd", "efgh"});
  EXPECT_EQ(queue.PushFront(&top), 0u);
  EXPECT_EQ(queue.path_bytes(), 8u);
  auto one_more = Directories({"i"});
  EXPECT_EQ(queue.PushFront(&one_more), 1u);
  EXPECT_EQ(queue.path_bytes(), 5u);
  EXPECT_EQ(Drain(&queue), (std::vector<std::string>{"i", "abcd"}));
}

TEST(DirectoryQueueTest, ClearEmptiesTheQueueAndItsBytes) {
  DirectoryQueue queue(100, 1000);
  auto top = Directories({"a", "b"});
  queue.PushFront(&top);
  queue.Clear();
  EXPECT_TRUE(queue.empty());
  EXPECT_EQ(queue.path_bytes(), 0u);
  PendingDirectory next;
  EXPECT_FALSE(queue.PopFront(&next));
}

}  // namespace
}  // namespace foreactor
