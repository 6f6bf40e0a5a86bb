"""Drafts a foreaction graph from recorded invocations of one function.

Input: the invocations a trace recorded, each the list of I/O system calls
the function made (dictionaries such as {"call": "pread", "fd": 3, "count":
4096, "offset": 0, "result": 4096}) and the function's first six integer
arguments.  Output: a Draft, which holds

  - the nodes: start, end, one syscall node per position of the call
    pattern, and branch nodes where the pattern loops;
  - the edges, weak where an invocation returned right after a call whose
    edge does not lead to the end (the trace cannot tell an early return
    from a loop condition, so weak is the safe guess);
  - for each argument of each syscall node, what it looked like over the
    visits (see `describe_field`);

and renders it as C++ (foreactor.hpp GraphBuilder code), as DOT in the form
foreactor_graph_write_dot() uses, and as JSON.

The call pattern is PREFIX (BODY)* SUFFIX: the longest run of a repeated
block in any invocation is the loop body; every invocation is then matched
against the pattern and may end anywhere (an early return).  Nested loops
are drafted as one loop over the inner pattern: split them by hand.

Calls on descriptors 0, 1 and 2 (terminal, logs) are left out: foreactor
passes calls outside the graph through untouched.
"""

import json

# Recorded call name -> (C enum, C++ helper, fields in helper argument order).
CALL_TYPES = {
    "open": ("FOREACTOR_CALL_OPEN", "Open", ("path", "flags", "mode")),
    "openat": ("FOREACTOR_CALL_OPENAT", "Openat", ("dirfd", "path", "flags", "mode")),
    "close": ("FOREACTOR_CALL_CLOSE", "Close", ("fd",)),
    "read": ("FOREACTOR_CALL_READ", "Read", ("fd", "count", "position")),
    "pread": ("FOREACTOR_CALL_PREAD", "Pread", ("fd", "count", "offset")),
    "write": ("FOREACTOR_CALL_WRITE", "Write", ("fd", "data", "count", "position")),
    "pwrite": ("FOREACTOR_CALL_PWRITE", "Pwrite", ("fd", "data", "count", "offset")),
    "readv": ("FOREACTOR_CALL_READV", "Readv", ("fd", "count", "position")),
    "preadv": ("FOREACTOR_CALL_PREADV", "Preadv", ("fd", "count", "offset")),
    "writev": ("FOREACTOR_CALL_WRITEV", "Writev", ("fd", "iov", "iovcnt", "position")),
    "pwritev": ("FOREACTOR_CALL_PWRITEV", "Pwritev", ("fd", "iov", "iovcnt", "offset")),
    "lseek": ("FOREACTOR_CALL_LSEEK", "Lseek", ("fd", "offset", "whence")),
    "fstat": ("FOREACTOR_CALL_FSTAT", "Fstat", ("fd",)),
    "fstatat": ("FOREACTOR_CALL_FSTATAT", "Fstatat", ("dirfd", "path", "flags")),
    "stat": ("FOREACTOR_CALL_STAT", "Stat", ("path",)),
    "lstat": ("FOREACTOR_CALL_LSTAT", "Lstat", ("path",)),
    "statx": ("FOREACTOR_CALL_STATX", "Statx", ("dirfd", "path", "flags", "mask")),
    "getdents64": ("FOREACTOR_CALL_GETDENTS64", "Getdents64", ("fd", "count")),
}
# Short names of the call types, as foreactor_call_type_name() gives them.
TYPE_NAMES = {call: enum[len("FOREACTOR_CALL_"):].lower() for call, (enum, _, _) in CALL_TYPES.items()}
# Fields the program supplies from memory, which a trace cannot see.
OPAQUE_FIELDS = ("data", "iov")
DESCRIPTOR_FIELDS = ("fd", "dirfd")
OPENING_CALLS = ("open", "openat")
STANDARD_DESCRIPTORS = (0, 1, 2)
AT_FDCWD = -100
# A progression needs this many visits in one invocation to be believed.
PROGRESSION_MINIMUM = 3


# ---------------------------------------------------------------- pattern


def relevant_calls(calls):
    """The calls a graph could hold: known types, not on fds 0, 1, 2."""
    kept = []
    for call in calls:
        if call.get("call") not in CALL_TYPES:
            continue
        if call.get("fd") in STANDARD_DESCRIPTORS:
            continue
        kept.append(call)
    return kept


def best_repetition(tokens):
    """(start, length, repeats) of the block repeated back to back that
    covers the most tokens beyond its first copy; (len, 0, 0) when nothing
    repeats.  Ties go to the shorter block, then the earlier start."""
    best = (len(tokens), 0, 0)
    best_saving = 0
    count = len(tokens)
    for length in range(1, count // 2 + 1):
        for start in range(0, count - 2 * length + 1):
            block = tokens[start:start + length]
            repeats = 1
            while tokens[start + repeats * length:start + (repeats + 1) * length] == block:
                repeats += 1
            saving = (repeats - 1) * length
            if saving > best_saving:
                best, best_saving = (start, length, repeats), saving
    return best


class Pattern:
    """PREFIX (BODY)* SUFFIX over call type tokens."""

    def __init__(self, prefix, body, suffix):
        self.prefix, self.body, self.suffix = list(prefix), list(body), list(suffix)

    def __repr__(self):
        return "Pattern(%r, %r, %r)" % (self.prefix, self.body, self.suffix)


def pattern_of(tokens):
    """The pattern one token list suggests: its best repetition as the loop
    body (an iteration cut short at the end is not a suffix), or the whole
    list as a straight line when nothing repeats."""
    start, length, repeats = best_repetition(tokens)
    if repeats < 2:
        return Pattern(tokens, [], [])
    body = tokens[start:start + length]
    suffix = tokens[start + length * repeats:]
    if suffix == body[:len(suffix)]:
        suffix = []  # an iteration cut short: the invocation returned inside the body
    return Pattern(tokens[:start], body, suffix)


# Candidate patterns are taken from this many of the most common sequences.
CANDIDATE_LIMIT = 32


def infer_pattern(sequences):
    """The pattern of a list of token lists: of the patterns the most common
    sequences suggest, the one that the most invocations follow; ties go to
    the one that explains more calls, then to a loop."""
    counts = {}
    for tokens in sequences:
        counts[tuple(tokens)] = counts.get(tuple(tokens), 0) + 1
    common = sorted(counts, key=lambda tokens: (-counts[tokens], -len(tokens)))[:CANDIDATE_LIMIT]
    best, best_score = Pattern([], [], []), None
    for tokens in common:
        candidate = pattern_of(list(tokens))
        followed = [sequence for sequence in counts if match(candidate, list(sequence)) is not None]
        score = (sum(counts[sequence] for sequence in followed),
                 sum(counts[sequence] * len(sequence) for sequence in followed),
                 len(candidate.body) > 0)
        if best_score is None or score > best_score:
            best, best_score = candidate, score
    return best


# ------------------------------------------------------------------ graph

START, END = 0, 1


class Node:
    def __init__(self, node_id, name, kind, call=None):
        self.id, self.name, self.kind, self.call = node_id, name, kind, call
        self.next = None          # successor of start and syscall nodes: [to, weak]
        self.children = []       # of branch nodes: [to, weak, closes_loop or None]
        self.visits = []          # (invocation, iteration or None, call dict)
        self.fields = {}          # field -> description dict
        self.ended_after = 0      # invocations that returned right after this node


class Draft:
    """A drafted graph; see the module comment."""

    def __init__(self, function, name, invocations):
        self.function = function
        self.name = name
        self.invocations = invocations
        self.nodes = [Node(START, "start", "start"), Node(END, "end", "end")]
        self.pattern = None
        self.iterations = []      # loop iterations of each matched invocation
        self.iteration_argument = None
        self.notes = []

    def add(self, name, kind, call=None):
        node = Node(len(self.nodes), name, kind, call)
        self.nodes.append(node)
        return node

    def edges(self):
        """(from, to, child index or None, weak, closes_loop or None) in DOT order."""
        result = []
        for node in self.nodes:
            if node.next is not None:
                result.append((node.id, node.next[0], None, node.next[1], None))
            for index, (to, weak, loop) in enumerate(node.children):
                result.append((node.id, to, index, weak, loop))
        return result


def build_draft(function, invocations, name=None):
    """Drafts the graph of `function` from `invocations`: a list of
    {"calls": [...], "arguments": [six integers]}."""
    draft = Draft(function, name or graph_name(function), invocations)
    sequences = [relevant_calls(invocation.get("calls", [])) for invocation in invocations]
    tokens = [[call["call"] for call in calls] for calls in sequences]
    pattern = infer_pattern(tokens)
    draft.pattern = pattern

    used_names = {}

    def syscall_node(call_name):
        used_names[call_name] = used_names.get(call_name, 0) + 1
        return draft.add("%s_%d" % (call_name, used_names[call_name]), "syscall", call_name)

    prefix = [syscall_node(token) for token in pattern.prefix]
    body = [syscall_node(token) for token in pattern.body]
    suffix = [syscall_node(token) for token in pattern.suffix]
    paths = [match(pattern, calls) for calls in tokens]

    zero_iterations = any(path is not None and path[1] == 0 and path[2] > len(pattern.prefix)
                          for path in paths)
    enter = draft.add("enter_loop", "branch") if body and zero_iterations else None
    more = draft.add("more", "branch") if body else None

    # The straight chain of nodes, then the loop's branches.
    after_body = suffix[0].id if suffix else END
    chain = [draft.nodes[START]] + prefix
    for left, right in zip(chain, chain[1:]):
        left.next = [right.id, False]
    if body:
        chain[-1].next = [(enter or body[0]).id, False]
        if enter:
            enter.children = [[body[0].id, False, None], [after_body, False, None]]
        for left, right in zip(body, body[1:]):
            left.next = [right.id, False]
        body[-1].next = [more.id, False]
        more.children = [[body[0].id, False, 0], [after_body, False, None]]
    tail = suffix
    for left, right in zip(tail, tail[1:]):
        left.next = [right.id, False]
    if tail:
        tail[-1].next = [END, False]
    elif not body:
        chain[-1].next = [END, False]

    # Visits, early returns and iteration counts.
    order = prefix + body + suffix
    left_out = {}
    for index, (calls, path) in enumerate(zip(sequences, paths)):
        if path is None:
            calls_text = " ".join(call["call"] for call in calls) or "no calls"
            left_out.setdefault(calls_text, []).append(index)
            continue
        positions, iterations, consumed = path
        draft.iterations.append(iterations)
        for call, (where, iteration) in zip(calls, positions):
            node = order[where]
            node.visits.append((index, iteration if node in body else None, call))
        if positions:
            order[positions[-1][0]].ended_after += 1
        elif calls == []:
            draft.nodes[START].ended_after += 1
    for calls_text, indices in sorted(left_out.items(), key=lambda item: item[1][0]):
        shown = ", ".join(map(str, indices[:5])) + (", ..." if len(indices) > 5 else "")
        draft.notes.append("%d invocation(s) (%s) do not follow the pattern: %s; left out"
                           % (len(indices), shown, calls_text if len(calls_text) < 80
                              else calls_text[:77] + "..."))
    for node in draft.nodes:
        if node.ended_after and node.next is not None and node.next[0] != END:
            node.next[1] = True
    if body:
        draft.iteration_argument = matching_argument(
            [(invocations[i].get("arguments") or [], path[1]) for i, path in enumerate(paths)
             if path is not None])
    for node in order:
        node.fields = describe_node(node, draft, sequences, paths, order, body)
    return draft


def match(pattern, tokens):
    """How `tokens` follow `pattern`: (positions, iterations, consumed),
    where positions[i] = (index into prefix+body+suffix, iteration), or None
    when the tokens leave the pattern.  Ending early is allowed anywhere."""
    prefix, body, suffix = pattern.prefix, pattern.body, pattern.suffix
    positions = []
    at = 0
    for k, token in enumerate(prefix):
        if at == len(tokens):
            return positions, 0, at
        if tokens[at] != token:
            return None
        positions.append((k, None))
        at += 1
    iterations = 0
    base = len(prefix)
    while body and at < len(tokens):
        # Take another iteration unless the suffix matches here and the body does not.
        fits_body = tokens[at:at + len(body)] == body or (
            tokens[at:] == body[:len(tokens) - at] and tokens[at:] != suffix[:len(tokens) - at])
        if not fits_body:
            break
        for k in range(len(body)):
            if at == len(tokens):
                break
            positions.append((base + k, iterations))
            at += 1
        iterations += 1
    base = len(prefix) + len(body)
    for k, token in enumerate(suffix):
        if at == len(tokens):
            break
        if tokens[at] != token:
            return None
        positions.append((base + k, None))
        at += 1
    if at != len(tokens):
        return None
    return positions, iterations, at


def graph_name(function):
    """A graph name (letters, digits, '_') made from a symbol."""
    cleaned = "".join(c if c.isalnum() or c == "_" else "_" for c in function)
    return cleaned.strip("_") or "draft"


# -------------------------------------------------------------- arguments


def matching_argument(pairs):
    """The index of the function argument that equals the observed number in
    every (arguments, number) pair, or None.  Needs two different numbers,
    or one pair where the number is neither 0 nor 1."""
    if not pairs:
        return None
    numbers = {number for _, number in pairs}
    if len(numbers) < 2 and numbers <= {0, 1}:
        return None
    for k in range(6):
        if all(len(arguments) > k and to_signed(arguments[k]) == number
               for arguments, number in pairs):
            return k
    return None


def to_signed(value):
    value = int(value)
    return value - (1 << 64) if value >= (1 << 63) else value


def describe_field(field, visits, results_before, arguments):
    """What one argument looked like over the visits of a node.

    `visits`: [(invocation, iteration, value)].  `results_before(visit_number,
    value)` gives the node that most recently returned `value`
    by opening a file before that visit, or None.  `arguments(invocation)`:
    the function's six integer arguments.

    Returns a dict with "kind" one of: "constant" (value), "result" (node),
    "argument" (index), "progression" (start or None when it varies per
    invocation, step), "varies" (samples)."""
    values = [value for _, _, value in visits]
    samples = sorted({json.dumps(value) for value in values})[:4]
    if not visits:
        return {"kind": "varies", "samples": []}
    if field in DESCRIPTOR_FIELDS:
        nodes = {results_before(number, value) for number, (_, _, value) in enumerate(visits)}
        if len(nodes) == 1 and None not in nodes:
            return {"kind": "result", "node": nodes.pop()}
        if field == "dirfd" and set(values) == {AT_FDCWD}:
            return {"kind": "constant", "value": AT_FDCWD}
        argument = matching_argument([(arguments(invocation), value)
                                      for invocation, _, value in visits])
        if argument is not None and all(isinstance(v, int) for v in values):
            return {"kind": "argument", "index": argument}
    if len(set(map(json.dumps, values))) == 1:
        return {"kind": "constant", "value": values[0]}
    if all(isinstance(value, int) for value in values) and all(i is not None for _, i, _ in visits):
        progression = progression_of(visits)
        if progression is not None:
            return progression
    return {"kind": "varies", "samples": [json.loads(sample) for sample in samples]}


def progression_of(visits):
    """{"kind": "progression", "start", "step"} when the values of every
    invocation are start + step * iteration with one common, nonzero step;
    "start" is None unless two or more invocations agree on it.  None when
    the values do not fit, or no invocation has PROGRESSION_MINIMUM visits."""
    by_invocation = {}
    for invocation, iteration, value in visits:
        by_invocation.setdefault(invocation, []).append((iteration, value))
    if max(len(points) for points in by_invocation.values()) < PROGRESSION_MINIMUM:
        return None
    steps = set()
    for points in by_invocation.values():
        if len(points) >= 2:
            (i0, v0), (i1, v1) = points[0], points[1]
            if i1 == i0 or (v1 - v0) % (i1 - i0):
                return None
            steps.add((v1 - v0) // (i1 - i0))
    if len(steps) != 1 or 0 in steps:
        return None
    step = steps.pop()
    starts = set()
    for points in by_invocation.values():
        (i0, v0) = points[0]
        start = v0 - i0 * step
        if any(value != start + iteration * step for iteration, value in points):
            return None
        starts.add(start)
    known = len(starts) == 1 and len(by_invocation) >= 2
    return {"kind": "progression", "start": starts.pop() if known else None, "step": step}


def describe_node(node, draft, sequences, paths, order, body):
    fields = {}
    names = CALL_TYPES[node.call][2]

    # For each visit: which node opened the descriptor most recently before it.
    def results_before(visit_number, value):
        invocation, _, call = node.visits[visit_number]
        path = paths[invocation]
        calls = sequences[invocation]
        here = next(k for k, c in enumerate(calls) if c is call)
        for k in range(here - 1, -1, -1):
            earlier = calls[k]
            if earlier["call"] in OPENING_CALLS and earlier.get("result") == value:
                return order[path[0][k][0]].name
        return None

    def arguments(invocation):
        return draft.invocations[invocation].get("arguments") or []

    for field in names:
        if field in OPAQUE_FIELDS:
            fields[field] = {"kind": "program", "note": "the program's bytes: fill in"}
            continue
        visits = [(invocation, iteration, call.get(field))
                  for invocation, iteration, call in node.visits]
        fields[field] = describe_field(field, visits, results_before, arguments)
    return fields


# --------------------------------------------------------------- renderers


def dot_string(text):
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def to_dot(draft):
    """DOT in the layout foreactor_graph_write_dot() uses (node ids n0..),
    so that the same tools read both."""
    lines = ['digraph "%s" {' % dot_string(draft.name)]
    for node in draft.nodes:
        if node.kind in ("start", "end"):
            extra = ", peripheries=2" if node.kind == "end" else ""
            lines.append('  n%d [shape=circle, width=0.25, fixedsize=true, label="", xlabel="%s"%s];'
                         % (node.id, node.name, extra))
        elif node.kind == "syscall":
            lines.append('  n%d [shape=box, label="%s\\n%s"];'
                         % (node.id, dot_string(node.name), TYPE_NAMES[node.call]))
        else:
            lines.append('  n%d [shape=diamond, label="%s"];' % (node.id, dot_string(node.name)))
    for source, target, child, weak, loop in draft.edges():
        label = "" if child is None else str(child)
        if loop is not None:
            label += ("loop %d" % loop) if not label else (": loop %d" % loop)
        attributes = []
        if label:
            attributes.append('label="%s"' % label)
        if weak:
            attributes.append("style=dashed")
        lines.append("  n%d -> n%d%s;" % (source, target,
                                         " [%s]" % ", ".join(attributes) if attributes else ""))
    lines.append("}")
    return "\n".join(lines) + "\n"


def to_json(draft):
    """The draft as a JSON-ready dict: nodes with their argument findings,
    edges, iteration counts and notes."""
    return {
        "function": draft.function,
        "graph": draft.name,
        "invocations": len(draft.invocations),
        "iterations": draft.iterations,
        "iterations_argument": draft.iteration_argument,
        "nodes": [{"id": node.id, "name": node.name, "kind": node.kind,
                   "type": TYPE_NAMES.get(node.call), "visits": len(node.visits),
                   "arguments": node.fields} for node in draft.nodes],
        "edges": [{"from": source, "to": target, "child": child, "weak": weak, "loop": loop}
                  for source, target, child, weak, loop in draft.edges()],
        "notes": draft.notes,
    }


def identifier(name):
    return "".join(c if c.isalnum() else "_" for c in name)


def cpp_expression(field, description, node):
    """(C++ expression, is_todo) for one argument of a call helper."""
    kind = description["kind"]
    if kind == "constant":
        value = description["value"]
        if isinstance(value, str):
            return json.dumps(value), False
        if field == "dirfd" and value == AT_FDCWD:
            return "AT_FDCWD", False
        return str(value), False
    if kind == "argument":
        return "static_cast<int>(state.argument[%d])" % description["index"], False
    if kind == "result":
        return "static_cast<int>(state.%s_result)" % identifier(description["node"]), False
    if kind == "progression":
        start = description["start"]
        step = description["step"]
        term = "%d * static_cast<int64_t>(visit.iteration(0))" % step
        if start is None:
            return "/* TODO: start (varies per invocation, or seen once) */ 0 + %s" % term, True
        return "%d + %s" % (start, term), False
    if kind == "program":
        return "nullptr /* TODO: the bytes the program writes */", True
    samples = ", ".join(json.dumps(sample) for sample in description.get("samples", []))
    placeholder = '""' if field == "path" else "0"
    return "/* TODO: varies, e.g. %s */ %s" % (samples, placeholder), True


def to_cpp(draft):
    """C++ source of the draft: a state struct, the graph built with
    foreactor::GraphBuilder, and a comment showing how to attach it.  It
    compiles as is; nodes with an argument marked TODO answer NOT_YET (never
    issued early) until the TODOs are filled in."""
    state = "%sState" % "".join(part.capitalize() for part in draft.name.split("_") if part)
    result_nodes = sorted({description["node"] for node in draft.nodes
                           for description in node.fields.values()
                           if description.get("kind") == "result"})
    out = []
    emit = out.append
    emit("// Draft foreaction graph of %s, written by 'foreactor trace' from %d recorded"
         % (draft.function, len(draft.invocations)))
    emit("// invocation(s).  Check every TODO, then run the program with")
    emit("// 'foreactor run --check' to see that the graph follows the program.")
    emit("//")
    for line in describe_pattern(draft):
        emit("// " + line if line else "//")
    for note in draft.notes:
        emit("// NOTE: " + note)
    emit("#include <fcntl.h>")
    emit("")
    emit("#include <cstdint>")
    emit("")
    emit('#include "foreactor/foreactor.hpp"')
    emit("")
    emit("// What the callbacks read: the wrapped function's arguments (fill them in")
    emit("// where the scope is entered) and the results of earlier calls.")
    emit("struct %s {" % state)
    emit("  uint64_t argument[6] = {};  // TODO: the function's arguments, as needed")
    for name in result_nodes:
        emit("  int64_t %s_result = -1;  // saved by node %s's result callback" % (identifier(name), name))
    emit("};")
    emit("")
    emit("inline foreactor::Graph<%s> Build%sGraph() {" % (state, state[:-len("State")]))
    emit('  foreactor::GraphBuilder<%s> builder("%s");' % (state, draft.name))
    for node in draft.nodes:
        if node.kind == "syscall":
            emit_syscall(emit, node, state, result_nodes)
        elif node.kind == "branch":
            emit_branch(emit, node, draft, state)
    for node in draft.nodes:
        if node.next is not None:
            target = variable(draft.nodes[node.next[0]])
            weak = ", foreactor::kWeak" if node.next[1] else ""
            emit("  %s.Then(%s%s);" % (variable(node), target, weak))
        if node.children:
            children = []
            for to, weak, _ in node.children:
                child = variable(draft.nodes[to])
                children.append("{%s, foreactor::kWeak}" % child if weak else child)
            emit("  %s.Children({%s});" % (variable(node), ", ".join(children)))
    emit("  return builder.Build();")
    emit("}")
    emit("")
    emit("// Attach it without touching the program's source, e.g. link with")
    emit("// -Wl,--wrap=%s and define" % draft.function)
    emit("//")
    emit('//   extern "C" RETURN __wrap_%s(PARAMETERS) {' % draft.function)
    emit("//     static const foreactor::Graph<%s> graph = Build%sGraph();" % (state, state[:-len("State")]))
    emit("//     %s state;  // fill state.argument[] from PARAMETERS" % state)
    emit("//     foreactor::Scope scope(graph, state);")
    emit("//     return __real_%s(ARGUMENTS);" % draft.function)
    emit("//   }")
    return "\n".join(out) + "\n"


def describe_pattern(draft):
    pattern = draft.pattern
    lines = ["Calls seen: prefix [%s], loop body [%s], suffix [%s]."
             % (" ".join(pattern.prefix), " ".join(pattern.body), " ".join(pattern.suffix))]
    if pattern.body:
        counts = sorted(set(draft.iterations))
        shown = ", ".join(map(str, counts[:8])) + (", ..." if len(counts) > 8 else "")
        lines.append("Loop iterations per invocation: %s." % shown)
    weak = [node.name for node in draft.nodes if node.next is not None and node.next[1]]
    if weak:
        lines.append("Weak edges after %s: the function returned right after them at least once"
                     % ", ".join(weak))
        lines.append("(an early return, or a loop condition; make an edge strong when only the")
        lines.append("branch after it can end the function).")
    return lines


def variable(node):
    if node.kind == "start":
        return "builder.start()"
    if node.kind == "end":
        return "builder.end()"
    return identifier(node.name)


def emit_syscall(emit, node, state, result_nodes):
    enum, helper, names = CALL_TYPES[node.call]
    expressions, todo = [], False
    emit("  // %s: %d visit(s)." % (node.name, len(node.visits)))
    for field in names:
        description = node.fields[field]
        emit("  //   %s: %s" % (field, explain(description)))
        expression, is_todo = cpp_expression(field, description, node)
        todo = todo or is_todo
        expressions.append(expression)
    waits = [description["node"] for description in node.fields.values()
             if description["kind"] == "result"]
    emit('  auto %s = builder.Syscall(' % identifier(node.name))
    emit('      "%s", %s,' % (node.name, enum))
    emit("      [](%s& state, const foreactor::Visit& visit, foreactor_call& call) {" % state)
    emit("        (void)state;")
    emit("        (void)visit;")
    for name in sorted(set(waits)):
        emit("        if (state.%s_result < 0) return FOREACTOR_NOT_YET;" % identifier(name))
    if todo:
        emit("        // TODO: fill in the arguments marked TODO, then delete this line:")
        emit("        if (true) return FOREACTOR_NOT_YET;")
    emit("        call = foreactor::%s(%s);" % (helper, ", ".join(expressions)))
    emit("        return FOREACTOR_READY;")
    if node.name in result_nodes:
        emit("      },")
        emit("      [](%s& state, const foreactor::Visit&, int64_t result) { state.%s_result = result; });"
             % (state, identifier(node.name)))
    else:
        emit("      });")


def emit_branch(emit, node, draft, state):
    emit("  auto %s = builder.Branch(\"%s\", [](%s& state, const foreactor::Visit& visit) {"
         % (identifier(node.name), node.name, state))
    emit("    (void)state;")
    emit("    (void)visit;")
    counts = sorted(set(draft.iterations))
    seen = ", ".join(map(str, counts[:6]))
    if draft.iteration_argument is not None:
        count = "state.argument[%d]" % draft.iteration_argument
        emit("    // Iterations seen: %s; always the function's argument %d."
             % (seen, draft.iteration_argument))
    elif constant_iterations(draft) is not None:
        count = str(constant_iterations(draft))
        emit("    // Iterations seen: %s in each of %d invocations." % (seen, len(draft.iterations)))
    else:
        count = "0 /* TODO: iterations, seen %s */" % seen
        emit("    // TODO: the loop's condition.")
    if node.name == "enter_loop":
        emit("    return %s > 0 ? 0 : 1;" % count)
        emit("  });")
        return
    emit("    return visit.iteration(0) + 1 < %s ? 0 : 1;" % count)
    if not loop_condition_known(draft):
        emit("  });")
        return
    # The loop's count as well (foreactor_graph_set_loop_count): foreactor
    # can then tell a long loop of reads from a short one without asking
    # about each iteration.
    emit("  }, [](%s& state, const foreactor::Visit&) {  // the loop's count" % state)
    emit("    (void)state;")
    emit("    return static_cast<int64_t>(%s);" % count)
    emit("  });")


def constant_iterations(draft):
    """The loop's iteration count when two or more invocations all ran it
    the same number of times (at least once), else None."""
    counts = set(draft.iterations)
    if len(draft.iterations) >= 2 and len(counts) == 1 and min(counts) > 0:
        return counts.pop()
    return None


def loop_condition_known(draft):
    """Whether the draft could write the loop's condition itself."""
    return draft.iteration_argument is not None or constant_iterations(draft) is not None


def explain(description):
    kind = description["kind"]
    if kind == "constant":
        return "constant %s" % json.dumps(description["value"])
    if kind == "argument":
        return "the function's argument %d" % description["index"]
    if kind == "result":
        return "the result of %s" % description["node"]
    if kind == "progression":
        start = ("varies per invocation, or seen in one only" if description["start"] is None
                 else description["start"])
        return "start + %d * iteration (start: %s)" % (description["step"], start)
    if kind == "program":
        return description["note"]
    return "varies: fill in (seen %s)" % ", ".join(json.dumps(s) for s in description["samples"])
