// tree_walker: walks a directory tree the way fts-based programs do
// (openat(parent, name, O_DIRECTORY) + fdopendir + readdir, an lstat of
// every entry) and prints what the program can observe of its own
// descriptors: the number of each directory it opens, the descriptor a
// later open gets, and how many descriptors /proc/self/fd lists.  The
// walk-ahead tests run it with and without walk-ahead and compare.
//
//   tree_walker walk TREE            the walk, then the descriptor facts
//   tree_walker slow-walk TREE MS    the same, sleeping MS milliseconds after
//                                    opening each directory (a program that
//                                    works on each directory: walk-ahead keeps
//                                    pace with it)
//   tree_walker pause TREE MS        opens TREE and one subdirectory, then
//                                    sleeps MS milliseconds (a program that
//                                    stops descending), then exits
//
// With FOREACTOR_TEST_DEVICE_READ=FILE in the environment, the program
// also reads FILE's first 4 KiB with O_DIRECT right after opening TREE: a
// read that always goes to the device.  Walk-ahead starts its threads only
// once the process has read from a device since it opened the tree, so
// this lets the tests walk a tree they just made (and so is cached) as if
// it were not.  With FOREACTOR_TEST_DEVICE_READ_ON_THREAD_AT=N as well, the
// read is made instead by a second thread when the walk has opened N
// directories (the walk waits for it): from then on the process has two
// threads.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace {

unsigned long entries = 0;
unsigned long directories_opened = 0;
useconds_t pause_per_directory = 0;  // microseconds

// FOREACTOR_TEST_DEVICE_READ_ON_THREAD_AT, or 0 when not set.
unsigned long DirectoriesBeforeTheThreadsRead() {
  const char* text = std::getenv("FOREACTOR_TEST_DEVICE_READ_ON_THREAD_AT");
  return text == nullptr ? 0 : std::strtoul(text, nullptr, 10);
}

// Reads FOREACTOR_TEST_DEVICE_READ's first block from the device, if set.
void ReadFromTheDeviceIfAsked() {
  const char* path = std::getenv("FOREACTOR_TEST_DEVICE_READ");
  if (path == nullptr) return;
  const int fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
  void* block = nullptr;
  if (fd < 0 || posix_memalign(&block, 4096, 4096) != 0 || pread(fd, block, 4096, 0) < 0) {
    std::fprintf(stderr, "tree_walker: cannot read %s with O_DIRECT: %s\n", path,
                 std::strerror(errno));
    std::exit(3);
  }
  std::free(block);
  close(fd);
}

void Walk(int parent, const char* name, const std::string& path, int depth) {
  const int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    std::printf("%s: cannot open: %s\n", path.c_str(), std::strerror(errno));
    return;
  }
  std::printf("%d %d %s\n", depth, fd, path.c_str());
  static const unsigned long read_on_thread_at = DirectoriesBeforeTheThreadsRead();
  ++directories_opened;
  if (read_on_thread_at == 0 && depth == 0) ReadFromTheDeviceIfAsked();
  if (read_on_thread_at != 0 && directories_opened == read_on_thread_at) {
    std::thread(ReadFromTheDeviceIfAsked).join();
  }
  if (pause_per_directory != 0) usleep(pause_per_directory);
  DIR* stream = fdopendir(fd);
  if (stream == nullptr) {
    close(fd);
    return;
  }
  while (struct dirent* entry = readdir(stream)) {
    if (std::strcmp(entry->d_name, ".") == 0 || std::strcmp(entry->d_name, "..") == 0) continue;
    struct stat status;
    if (fstatat(fd, entry->d_name, &status, AT_SYMLINK_NOFOLLOW) != 0) continue;
    entries++;
    if (S_ISDIR(status.st_mode)) Walk(fd, entry->d_name, path + "/" + entry->d_name, depth + 1);
  }
  closedir(stream);
}

int CountOwnDescriptors() {
  DIR* listing = opendir("/proc/self/fd");
  if (listing == nullptr) return -1;
  int count = 0;
  while (struct dirent* entry = readdir(listing)) {
    if (entry->d_name[0] != '.') count++;
  }
  closedir(listing);
  return count - 1;  // the listing's own descriptor
}

}  // namespace

int main(int argc, char** argv) {
  const bool slow = argc == 4 && std::strcmp(argv[1], "slow-walk") == 0;
  if ((argc == 3 && std::strcmp(argv[1], "walk") == 0) || slow) {
    if (slow) pause_per_directory = static_cast<useconds_t>(std::atoi(argv[3])) * 1000;
    Walk(AT_FDCWD, argv[2], argv[2], 0);
    const int later = open("/dev/null", O_RDONLY);
    std::printf("entries %lu\nnext descriptor %d\nopen descriptors %d\n", entries, later,
                CountOwnDescriptors());
    return 0;
  }
  if (argc == 4 && std::strcmp(argv[1], "pause") == 0) {
    const int root = open(argv[2], O_RDONLY | O_DIRECTORY);
    ReadFromTheDeviceIfAsked();
    DIR* stream = root < 0 ? nullptr : fdopendir(root);
    if (stream == nullptr) return 1;
    while (struct dirent* entry = readdir(stream)) {
      if (entry->d_type != DT_DIR || entry->d_name[0] == '.') continue;
      const int child = openat(root, entry->d_name, O_RDONLY | O_DIRECTORY);
      if (child >= 0) close(child);
      break;
    }
    closedir(stream);
    usleep(static_cast<useconds_t>(std::atoi(argv[3])) * 1000);
    return 0;
  }
  std::fprintf(stderr,
               "usage: tree_walker walk TREE | tree_walker slow-walk TREE MS | "
               "tree_walker pause TREE MS\n");
  return 2;
}
