"""foreactor graph: run a program once and write every graph it builds.

Graphs are built by plugins while the program runs, so the only way to see
them is to run it.  The program runs with foreactor on but issuing nothing
early (FOREACTOR_ENGINE=sync), and with libforeactor_graph_dump.so preloaded
in front of libforeactor.so: that library writes each graph as DOT when the
plugin finishes it (see tools/graph_dump/graph_dump.cc).
"""

import json
import os
import shutil
import subprocess

from foreactor_cli import locate

FORMATS = ("dot", "svg", "png")
INDEX = "graphs.jsonl"
DIRECTORY_VARIABLE = "FOREACTOR_GRAPH_DUMP_DIR"
DEFAULT_DIRECTORY = "foreactor-graphs"


def make_parser(tool):
    parser = tool.ArgumentParser(
        prog="%s graph" % tool.TOOL,
        allow_abbrev=False,
        usage="%(prog)s [options] -- CMD [ARGS...]",
        description="Run CMD once and write each foreaction graph it builds to DIR as NAME.dot "
                    "(and NAME.svg or NAME.png with --format, through Graphviz 'dot'); then "
                    "list the graphs: name, nodes, file.  CMD runs with foreactor on but "
                    "issuing nothing early (engine sync).  Exit status: CMD's own; 1 when "
                    "CMD succeeded but built no graph; 2 for a bad argument.",
        epilog="Graphs are built when a plugin runs its GraphBuilder::Build() (often at load "
               "time, or at the first call of the wrapped function): give CMD arguments that "
               "make it reach the function.  Example: %s graph --format png -- ./program input"
               % tool.TOOL)
    parser.add_argument("--output", metavar="DIR", default=DEFAULT_DIRECTORY,
                        help="directory for the pictures (created; default %s)" % DEFAULT_DIRECTORY)
    parser.add_argument("--format", choices=FORMATS, default="dot",
                        help="dot (default), or svg / png besides the DOT (needs Graphviz)")
    parser.add_argument("--plugin", action="append", default=[], metavar="LIB",
                        help="a plugin library to preload too (may be repeated)")
    parser.add_argument("--no-preload", action="store_true",
                        help="do not preload %s (for programs linked with it)" % tool.LIBRARY_NAME)
    return parser


def count_nodes(dot_path):
    """Nodes of a DOT file in foreactor's layout (lines '  nN [...]')."""
    count = 0
    with open(dot_path) as dot:
        for line in dot:
            words = line.split()
            if len(words) >= 2 and words[0][:1] == "n" and words[0][1:].isdigit() and words[1].startswith("["):
                count += 1
    return count


def previous_files(directory):
    """Files an earlier run listed in DIR's index (to be replaced)."""
    index = os.path.join(directory, INDEX)
    files = [index]
    if os.path.exists(index):
        for entry in read_index(directory):
            if entry.get("file"):
                stem = os.path.splitext(entry["file"])[0]
                files += [os.path.join(directory, stem + "." + kind) for kind in FORMATS]
    return files


def read_index(directory):
    entries = []
    path = os.path.join(directory, INDEX)
    if not os.path.exists(path):
        return entries
    with open(path) as index:
        for line in index:
            try:
                entries.append(json.loads(line))
            except ValueError:
                continue  # a line cut short by a crash: skip it
    return entries


def render(dot_path, output_format):
    """Converts a DOT file with Graphviz; returns the new file, or None."""
    target = os.path.splitext(dot_path)[0] + "." + output_format
    result = subprocess.run(["dot", "-T" + output_format, dot_path, "-o", target],
                            capture_output=True, text=True)
    return target if result.returncode == 0 else None


def main(arguments, tool):
    parser = make_parser(tool)
    option_arguments, command = tool.split_command(arguments)
    if command is None:
        if any(a in ("-h", "--help") for a in option_arguments):
            parser.print_help()
            return 0
        parser.error("missing '--' before the command: write '%s graph [options] -- CMD "
                     "ARGS...', e.g. '%s graph -- ./program input'" % (tool.TOOL, tool.TOOL))
    options = parser.parse_args(option_arguments)
    if not command:
        parser.error("no command after '--': give the program to run, e.g. "
                     "%s graph -- ./program ARGS" % tool.TOOL)
    shim = locate.find_helper(locate.GRAPH_DUMP_LIBRARY, tool.__file__)
    if shim is None:
        tool.fail(parser.prog, "cannot find %s; build it (cmake --build BUILD --target "
                  "foreactor_graph_dump) or set FOREACTOR_HELPER_DIR to its directory"
                  % locate.GRAPH_DUMP_LIBRARY, tool.EXIT_NO_LIBRARY)
    directory = os.path.abspath(options.output)
    if os.path.exists(directory) and not os.path.isdir(directory):
        parser.error("--output %s is a file; give a directory" % options.output)
    os.makedirs(directory, exist_ok=True)
    for stale in previous_files(directory):
        if os.path.exists(stale):
            os.remove(stale)

    preload = [shim]
    try:
        if not options.no_preload:
            library = tool.find_library()
            if library is None:
                tool.fail(parser.prog, "cannot find %s next to this tool; build it, set "
                          "FOREACTOR_LIBRARY=/path/to/%s, or use --no-preload for a program "
                          "linked with it" % (tool.LIBRARY_NAME, tool.LIBRARY_NAME),
                          tool.EXIT_NO_LIBRARY)
            preload.append(tool.preload_entry(library, "library"))
        for plugin in options.plugin:
            preload.append(tool.preload_entry(plugin, "plugin"))
    except tool.UsageError as error:
        parser.error(str(error))
    environment = dict(os.environ)
    if environment.get("LD_PRELOAD"):
        preload.append(environment["LD_PRELOAD"])
    environment.update({"LD_PRELOAD": ":".join(preload), "FOREACTOR": "1",
                        "FOREACTOR_ENGINE": "sync", DIRECTORY_VARIABLE: directory})
    try:
        status = locate.exit_status(subprocess.run(command, env=environment).returncode)
    except FileNotFoundError:
        tool.fail(parser.prog, "command not found: %s; check its name or give its path"
                  % command[0], tool.EXIT_NOT_FOUND)
    except PermissionError:
        tool.fail(parser.prog, "cannot execute %s: permission denied" % command[0],
                  tool.EXIT_CANNOT_EXECUTE)

    entries = read_index(directory)
    if not entries:
        print("%s: %s built no foreaction graph (is a plugin attached, and did the program "
              "reach the function it wraps?)" % (parser.prog, command[0]))
        return status if status != 0 else 1
    graphviz = shutil.which("dot")
    if options.format != "dot" and graphviz is None:
        print("note: Graphviz 'dot' is not installed: wrote DOT only (apt-get install graphviz "
              "for %s)" % options.format)
    rows = []
    for entry in entries:
        name = entry.get("name") or "?"
        if not entry.get("valid"):
            rows.append((name, "-", "invalid: %s" % entry.get("error")))
            continue
        dot_path = os.path.join(directory, entry.get("file") or "")
        if not entry.get("file") or not os.path.exists(dot_path):
            rows.append((name, "-", "could not be written"))
            continue
        written = dot_path
        if options.format != "dot" and graphviz is not None:
            written = render(dot_path, options.format) or dot_path
        rows.append((name, str(count_nodes(dot_path)), os.path.relpath(written)))
    width = max(len(row[0]) for row in rows + [("graph", "", "")])
    print("%-*s  %5s  %s" % (width, "graph", "nodes", "file"))
    for name, nodes, where in rows:
        print("%-*s  %5s  %s" % (width, name, nodes, where))
    return status
