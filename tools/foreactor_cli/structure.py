"""The shape of a graph drawn in foreactor's DOT layout, for comparisons.

Both foreactor_graph_write_dot() and the trace drafts write nodes as
'  nID [shape=box|diamond|circle, label="NAME\\nTYPE"|xlabel="start"...];'
and edges as '  nA -> nB [label="CHILD[: loop K]", style=dashed];'.
`structure()` reduces such a file to what does not depend on names or on
the order nodes were added: nodes numbered in the order a walk from the
start meets them (successor first, then children in order), with their kind
and call type, and the edges between those numbers with child index, weak
flag and whether they close a loop.
"""

import re

NODE = re.compile(r'^\s*n(\d+)\s*\[(.*)\];\s*$')
EDGE = re.compile(r'^\s*n(\d+)\s*->\s*n(\d+)\s*(?:\[(.*)\])?;\s*$')


def parse_dot(text):
    """(nodes, edges): nodes {id: (kind, call type or None)} with kind one of
    start, end, syscall, branch; edges [(from, to, child or None, weak, closes_loop)]
    in file order."""
    nodes, edges = {}, []
    for line in text.splitlines():
        edge = EDGE.match(line)
        if edge:
            attributes = edge.group(3) or ""
            label = re.search(r'label="([^"]*)"', attributes)
            label = label.group(1) if label else ""
            child = re.match(r"(\d+)", label)
            edges.append((int(edge.group(1)), int(edge.group(2)),
                          int(child.group(1)) if child else None,
                          "dashed" in attributes, "loop" in label))
            continue
        node = NODE.match(line)
        if not node:
            continue
        attributes = node.group(2)
        if "shape=box" in attributes:
            label = re.search(r'label="((?:[^"\\]|\\.)*)"', attributes).group(1)
            nodes[int(node.group(1))] = ("syscall", label.split("\\n")[-1])
        elif "shape=diamond" in attributes:
            nodes[int(node.group(1))] = ("branch", None)
        else:
            nodes[int(node.group(1))] = ("end" if "peripheries=2" in attributes else "start", None)
    return nodes, edges


def structure(text, from_first_call=False):
    """The canonical shape of a DOT text: (node list, sorted edge list).
    With `from_first_call`, the shape of what is reachable from the first
    syscall node the walk from the start meets, numbered from it: a draft of
    an inner function against a graph whose scope opens earlier."""
    nodes, edges = parse_dot(text)
    outgoing = {}
    for edge in edges:
        outgoing.setdefault(edge[0], []).append(edge)
    for node_id in outgoing:
        outgoing[node_id].sort(key=lambda edge: -1 if edge[2] is None else edge[2])
    start = next(node_id for node_id, (kind, _) in nodes.items() if kind == "start")
    if from_first_call:
        start = _first_call(start, nodes, outgoing)
    number, order, stack = {}, [], [start]
    while stack:
        node_id = stack.pop()
        if node_id in number:
            continue
        number[node_id] = len(order)
        order.append(node_id)
        stack.extend(reversed([edge[1] for edge in outgoing.get(node_id, [])]))
    shape_nodes = [nodes[node_id] for node_id in order]
    shape_edges = sorted((number[a], number[b], child, weak, loop)
                         for a, b, child, weak, loop in edges if a in number and b in number)
    return shape_nodes, shape_edges


def _first_call(start, nodes, outgoing):
    """The first syscall node a depth-first walk from `start` meets, child 0
    first (`start` itself when there is none)."""
    seen, stack = set(), [start]
    while stack:
        node_id = stack.pop()
        if node_id in seen:
            continue
        seen.add(node_id)
        if nodes[node_id][0] == "syscall":
            return node_id
        stack.extend(reversed([edge[1] for edge in outgoing.get(node_id, [])]))
    return start
