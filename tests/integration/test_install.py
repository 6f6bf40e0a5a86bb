"""`cmake --install` puts a usable library in place: a plugin program builds
against the installed headers and library through pkg-config and through
CMake's find_package, and runs with foreactor on."""
import os
import pathlib
import subprocess

import pytest

from conftest import build_dir

PROGRAM = r"""
#include <foreactor/foreactor.hpp>
#include <cstdio>

struct State { int calls = 0; };

int main() {
  foreactor::GraphBuilder<State> builder("installed");
  auto read = builder.Syscall("read", FOREACTOR_CALL_PREAD,
      [](State&, const foreactor::Visit&, foreactor_call& call) {
        call = foreactor::Pread(0, 1, 0);
        return FOREACTOR_READY;
      });
  builder.start().Then(read).Then(builder.end());
  foreactor::Graph<State> graph = builder.Build();
  State state;
  { foreactor::Scope scope(graph, state); }
  std::printf("valid=%d name=%s\n", graph.valid() ? 1 : 0, graph.name().c_str());
  return 0;
}
"""


@pytest.fixture(scope="module")
def prefix(tmp_path_factory) -> pathlib.Path:
    target = tmp_path_factory.mktemp("prefix")
    subprocess.run(["cmake", "--install", str(build_dir()), "--prefix", str(target)],
                   check=True, capture_output=True)
    return target


def run_installed(executable: pathlib.Path, prefix: pathlib.Path) -> str:
    env = dict(os.environ, FOREACTOR="1", LD_LIBRARY_PATH=str(prefix / "lib"))
    outcome = subprocess.run([str(executable)], env=env, capture_output=True, text=True,
                             timeout=60)
    assert outcome.returncode == 0, outcome
    return outcome.stdout


def test_installed_files(prefix):
    for relative in ("include/foreactor/foreactor.h", "include/foreactor/foreactor.hpp",
                     "lib/libforeactor.so", "lib/pkgconfig/foreactor.pc",
                     "lib/cmake/foreactor/foreactorConfig.cmake", "bin/foreactor"):
        assert (prefix / relative).exists(), relative


def test_build_through_pkg_config(prefix, tmp_path):
    source = tmp_path / "plugin.cc"
    source.write_text(PROGRAM)
    env = dict(os.environ, PKG_CONFIG_PATH=str(prefix / "lib" / "pkgconfig"))
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "foreactor"], env=env,
                           check=True, capture_output=True, text=True).stdout.split()
    include_flags = [pathlib.Path(f[2:]).resolve() for f in flags if f.startswith("-I")]
    assert (prefix / "include").resolve() in include_flags, flags
    executable = tmp_path / "plugin"
    subprocess.run(["c++", "-std=c++20", str(source), "-o", str(executable), *flags],
                   check=True, capture_output=True)
    assert run_installed(executable, prefix) == "valid=1 name=installed\n"


def test_build_through_find_package(prefix, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "plugin.cc").write_text(PROGRAM)
    (project / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.22)\nproject(consumer CXX)\n"
        "set(CMAKE_CXX_STANDARD 20)\nfind_package(foreactor REQUIRED)\n"
        "add_executable(plugin plugin.cc)\n"
        "target_link_libraries(plugin PRIVATE foreactor::foreactor)\n")
    build = tmp_path / "build"
    subprocess.run(["cmake", "-S", str(project), "-B", str(build), f"-DCMAKE_PREFIX_PATH={prefix}"],
                   check=True, capture_output=True)
    subprocess.run(["cmake", "--build", str(build)], check=True, capture_output=True)
    assert run_installed(build / "plugin", prefix) == "valid=1 name=installed\n"
