# End-to-end test of the bptree tool.  Run by ctest as
#   cmake -DBPTREE=<tool> -DWORK_DIR=<dir> -P cli_test.cmake

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
set(TREE ${WORK_DIR}/tree.db)

# Runs the tool with ARGN; checks its exit status and that its standard
# output matches EXPECT (a regular expression).
function(run_tool expected_status expect)
  execute_process(COMMAND ${BPTREE} ${ARGN}
    RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL expected_status)
    message(FATAL_ERROR "bptree ${ARGN}: exit status ${status}, expected ${expected_status}\n${out}${err}")
  endif()
  if(NOT out MATCHES "${expect}")
    message(FATAL_ERROR "bptree ${ARGN}: output\n${out}\ndoes not match\n${expect}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

# The load says when it started (CLOCK_MONOTONIC ns), for a caller that times it to its end.
run_tool(0 "loaded 5000 pairs .*degree 16, height 4, .* elapsed_ms [0-9.]+ started_ns [0-9]+\n$" load ${TREE} --degree 16 --count 5000 --seed 7 --batch 9)
run_tool(0 "entries 5000\n.*check ok" stats ${TREE} --check)
run_tool(0 "^count 5000 checksum 0x[0-9a-f]+ elapsed_ms [0-9.]+ leaf_loop_ms [0-9.]+\n$" scan ${TREE} 0 0xffffffffffffffff)
set(full_scan "${last_output}")
string(REGEX REPLACE " elapsed_ms.*" "" full_scan "${full_scan}")

# The same seed gives the same tree.
run_tool(0 "loaded 5000 pairs" load ${WORK_DIR}/again.db --degree 16 --count 5000 --seed 7)
run_tool(0 "^${full_scan} elapsed_ms" scan ${WORK_DIR}/again.db 0 18446744073709551615)

# Direct I/O (O_DIRECT) reads and writes the same bytes.
run_tool(0 "loaded 5000 pairs .*degree 16, height 4" load ${WORK_DIR}/direct.db --degree 16 --count 5000 --seed 7 --batch 9 --direct)
file(SHA256 ${TREE} buffered_digest)
file(SHA256 ${WORK_DIR}/direct.db direct_digest)
if(NOT buffered_digest STREQUAL direct_digest)
  message(FATAL_ERROR "load --direct wrote another file than load")
endif()
run_tool(0 "^${full_scan} elapsed_ms" scan ${TREE} 0 0xffffffffffffffff --direct)
run_tool(0 "entries 5000\n.*check ok" stats ${WORK_DIR}/direct.db --check --direct)

# The same keys put one by one in random order: the same pairs, more leaves
# (half-full after splits), and the same scans.
run_tool(0 "inserted 5000 pairs .*degree 16, height [0-9]+, [0-9]+ leaves" insert ${WORK_DIR}/inserted.db --degree 16 --count 5000 --seed 7)
run_tool(0 "entries 5000\n.*check ok" stats ${WORK_DIR}/inserted.db --check)
run_tool(0 "^${full_scan} elapsed_ms" scan ${WORK_DIR}/inserted.db 0 0xffffffffffffffff)
run_tool(0 "^${full_scan} elapsed_ms" scan ${WORK_DIR}/inserted.db 0 0xffffffffffffffff --direct)
run_tool(0 "" scan ${TREE} 0x1000000000000000 0x9000000000000000)
set(part_scan "${last_output}")
string(REGEX REPLACE " elapsed_ms.*" "" part_scan "${part_scan}")
run_tool(0 "^${part_scan} elapsed_ms" scan ${WORK_DIR}/inserted.db 0x1000000000000000 0x9000000000000000 --direct)
run_tool(0 "inserted 5000 pairs" insert ${WORK_DIR}/inserted2.db --degree 16 --count 5000 --seed 7 --order-seed 9 --direct)
run_tool(0 "^${full_scan} elapsed_ms" scan ${WORK_DIR}/inserted2.db 0 0xffffffffffffffff)

# One pair: FNV-1a 64 over the bytes of key 42 and value 4242.
run_tool(0 "" put ${TREE} 42 4242)
run_tool(0 "^4242\n$" get ${TREE} 42)
run_tool(0 "^count 1 checksum 0x47c55725fbdd79cd " scan ${TREE} 42 42)
run_tool(0 "^count 0 checksum 0xcbf29ce484222325 " scan ${TREE} 43 41)
run_tool(0 "entries 5001\n.*check ok" stats ${TREE} --check)

# Errors.
run_tool(1 "" get ${WORK_DIR}/missing.db 1)
run_tool(2 "" load ${TREE} --degree 600 --count 1)
run_tool(2 "" scan ${TREE} 1)
run_tool(2 "" get ${TREE} -1)
run_tool(2 "" frobnicate)
run_tool(2 "" insert ${TREE} --degree 16)
run_tool(2 "" insert ${TREE} --count 10 --bogus 1)

file(REMOVE_RECURSE ${WORK_DIR})
