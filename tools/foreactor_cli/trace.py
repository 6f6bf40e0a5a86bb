"""foreactor trace: record a function's I/O system calls and draft its graph.

The recorder (tools/trace/, a ptrace tool) runs the program, and logs for
every invocation of the function the I/O system calls made inside it (see
tools/trace/recorder.cc for the log's form).  The draft module turns the
log into a draft graph (see draft.py), written as:

  OUTPUT            C++ (foreactor.hpp GraphBuilder code) to start a plugin from
  OUTPUT stem.dot   its picture, in the DOT form of foreactor_graph_write_dot()
  OUTPUT stem.json  nodes, edges and what each argument looked like
  OUTPUT stem.trace.jsonl   the recorded log (draft again with --replay)
"""

import json
import os
import subprocess

from foreactor_cli import draft as drafting
from foreactor_cli import locate


def make_parser(tool):
    parser = tool.ArgumentParser(
        prog="%s trace" % tool.TOOL,
        allow_abbrev=False,
        usage="%(prog)s --function SYMBOL [options] -- CMD [ARGS...]\n"
              "       %(prog)s --replay LOG [options]",
        description="Run CMD and record, for every invocation of the function SYMBOL (of "
                    "CMD's executable; static functions too, unless the binary is stripped), "
                    "the I/O system calls made inside it with their arguments and results. "
                    "Then write a draft foreaction graph: nodes, the loop found from repeated "
                    "calls, weak edges where invocations returned, and for every argument "
                    "whether it was constant, a function argument, the result of an earlier "
                    "call, a progression over the loop iteration, or varied (a TODO).  "
                    "Exit status: CMD's own; 1 when CMD succeeded but never called SYMBOL; "
                    "2 for a bad argument or a missing symbol.",
        epilog="Files: OUTPUT (C++), and beside it STEM.dot, STEM.json and STEM.trace.jsonl. "
               "Example: %s trace --function read_blocks --output draft.cc -- ./program input"
               % tool.TOOL)
    parser.add_argument("--function", metavar="SYMBOL",
                        help="the function to record (its name in the symbol table)")
    parser.add_argument("--output", metavar="FILE",
                        help="the draft's C++ file (default: SYMBOL_draft.cc)")
    parser.add_argument("--name", metavar="GRAPH",
                        help="the graph's name in the draft (default: from SYMBOL)")
    parser.add_argument("--replay", metavar="LOG",
                        help="draft from a recorded log (STEM.trace.jsonl) instead of running CMD")
    return parser


def read_log(path):
    """(start, invocations, end) of a recorder log: the start event, the
    invocation events in the order they began, and the exit or error event."""
    start, end, invocations = None, None, []
    with open(path) as log:
        for line in log:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            kind = event.get("event")
            if kind == "start":
                start = event
            elif kind == "invocation":
                invocations.append(event)
            elif kind in ("exit", "error"):
                end = event
    invocations.sort(key=lambda event: event.get("index", 0))
    return start, invocations, end


def output_paths(output):
    stem = output[:-3] if output.endswith(".cc") else output
    return {"cpp": output, "dot": stem + ".dot", "json": stem + ".json",
            "log": stem + ".trace.jsonl"}


def write_draft(function, invocations, paths, name):
    draft = drafting.build_draft(function, invocations, name)
    with open(paths["cpp"], "w") as out:
        out.write(drafting.to_cpp(draft))
    with open(paths["dot"], "w") as out:
        out.write(drafting.to_dot(draft))
    with open(paths["json"], "w") as out:
        json.dump(drafting.to_json(draft), out, indent=1)
        out.write("\n")
    return draft


def summary(draft, paths):
    syscalls = [node for node in draft.nodes if node.kind == "syscall"]
    weak = sum(1 for edge in draft.edges() if edge[3])
    todo = sum(1 for node in syscalls for field in node.fields.values()
               if field["kind"] in ("varies", "program")
               or field["kind"] == "progression" and field["start"] is None)
    if draft.pattern.body and not drafting.loop_condition_known(draft):
        todo += 1  # the loop's condition
    loop = ("loop over [%s]" % " ".join(draft.pattern.body)) if draft.pattern.body else "no loop"
    lines = ["%s: %d invocation(s) recorded; draft graph '%s': %d syscall node(s), %s, "
             "%d weak edge(s), %d thing(s) to fill in"
             % (draft.function, len(draft.invocations), draft.name, len(syscalls), loop, weak, todo)]
    lines += ["  note: " + note for note in draft.notes]
    lines.append("  wrote %s, %s, %s" % (paths["cpp"], paths["dot"], paths["json"]))
    return "\n".join(lines)


def main(arguments, tool):
    parser = make_parser(tool)
    options, command = tool.parse_command_line(parser, arguments)
    if options.replay is None:
        if command is None:
            parser.error("missing '--' before the command: write '%s trace --function SYMBOL "
                         "-- CMD ARGS...'" % tool.TOOL)
        if not command:
            parser.error("no command after '--': give the program to run")
        if not options.function:
            parser.error("--function SYMBOL is required: the function to record, e.g. "
                         "--function read_blocks (list candidates with 'nm -C PROGRAM')")
    elif command is not None:
        parser.error("--replay drafts from a log; do not give a command too")
    if options.name is not None and (not options.name or not all(
            c.isalnum() or c == "_" for c in options.name)):
        parser.error("--name must be letters, digits and '_', not %r" % options.name)

    if options.replay is not None:
        if not os.path.isfile(options.replay):
            parser.error("--replay %s: no such file" % options.replay)
        start, invocations, _ = read_log(options.replay)
        function = options.function or (start or {}).get("function") or "function"
        output = options.output or "%s_draft.cc" % drafting.graph_name(function)
        paths = output_paths(output)
        draft = write_draft(function, invocations, paths, options.name)
        print(summary(draft, paths))
        return 0 if invocations else 1

    output = options.output or "%s_draft.cc" % drafting.graph_name(options.function)
    paths = output_paths(output)
    directory = os.path.dirname(os.path.abspath(output))
    if not os.path.isdir(directory):
        parser.error("the directory of --output %s does not exist; create it first" % output)
    recorder = locate.find_helper(locate.TRACE_RECORDER, tool.__file__)
    if recorder is None:
        tool.fail(parser.prog, "cannot find %s; build it (cmake --build BUILD --target "
                  "foreactor-trace-recorder) or set FOREACTOR_HELPER_DIR to its directory"
                  % locate.TRACE_RECORDER, tool.EXIT_NO_LIBRARY)
    # foreactor stays off under the tracer, so that a program with a plugin
    # attached makes every call itself and the trace sees them all.
    environment = {key: value for key, value in os.environ.items() if key != "FOREACTOR"}
    completed = subprocess.run([recorder, "--function", options.function, "--output",
                                paths["log"], "--"] + command, env=environment)
    start, invocations, end = read_log(paths["log"]) if os.path.exists(paths["log"]) else (None, [], None)
    if end is None or end.get("event") == "error" or start is None:
        return locate.exit_status(completed.returncode)  # the recorder said why
    status = end["status"] if "status" in end else 128 + end.get("signal", 0)
    if not invocations:
        print("%s: %s was never called; give the program arguments that reach it"
              % (parser.prog, options.function))
        return status if status != 0 else 1
    draft = write_draft(options.function, invocations, paths, options.name)
    print(summary(draft, paths))
    return status
