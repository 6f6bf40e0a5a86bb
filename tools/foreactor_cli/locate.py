"""Where the tool's helper programs are: next to the tool in a build tree
(BUILD/tools/), in PREFIX/lib*/foreactor/ once installed, or in the build
tree of a source checkout (ROOT/build/tools/, $FOREACTOR_BUILD_DIR/tools/)."""

import glob
import os

GRAPH_DUMP_LIBRARY = "libforeactor_graph_dump.so"
TRACE_RECORDER = "foreactor-trace-recorder"


def find_helper(name, tool_path):
    """Path of the helper `name` for the tool at `tool_path`, or None.
    $FOREACTOR_HELPER_DIR, when set, is looked in first."""
    tool_directory = os.path.dirname(os.path.realpath(tool_path))
    prefix = os.path.dirname(tool_directory)
    patterns = []
    explicit = os.environ.get("FOREACTOR_HELPER_DIR")
    if explicit:
        patterns.append(os.path.join(explicit, name))
    patterns += [
        os.path.join(tool_directory, name),                   # BUILD/tools
        os.path.join(prefix, "lib*", "foreactor", name),      # PREFIX/lib/foreactor
        os.path.join(prefix, "lib*", "*", "foreactor", name), # PREFIX/lib/<triplet>/foreactor
    ]
    build_directory = os.environ.get("FOREACTOR_BUILD_DIR")
    if build_directory:
        patterns.append(os.path.join(build_directory, "tools", name))
    patterns.append(os.path.join(prefix, "build", "tools", name))  # ROOT/tools -> ROOT/build
    for pattern in patterns:
        for path in sorted(glob.glob(pattern)):
            if os.path.isfile(path):
                return path
    return None


def exit_status(returncode):
    """A subprocess return code as a shell would report it (128+N for signal N)."""
    return 128 - returncode if returncode < 0 else returncode
