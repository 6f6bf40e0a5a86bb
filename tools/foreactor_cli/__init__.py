"""The subcommands of the `foreactor` tool that need more than one file:
graph (draw the graphs a program builds) and trace (record a function's
system calls and draft a graph from them)."""
