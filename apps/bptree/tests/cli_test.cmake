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

run_tool(0 "loaded 5000 pairs .*degree 16, height 4" load ${TREE} --degree 16 --count 5000 --seed 7 --batch 9)
run_tool(0 "entries 5000\n.*check ok" stats ${TREE} --check)
run_tool(0 "^count 5000 checksum 0x[0-9a-f]+ elapsed_ms [0-9.]+\n$" scan ${TREE} 0 0xffffffffffffffff)
set(full_scan "${last_output}")
string(REGEX REPLACE " elapsed_ms.*" "" full_scan "${full_scan}")

# The same seed gives the same tree.
run_tool(0 "loaded 5000 pairs" load ${WORK_DIR}/again.db --degree 16 --count 5000 --seed 7)
run_tool(0 "^${full_scan} elapsed_ms" scan ${WORK_DIR}/again.db 0 18446744073709551615)

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

file(REMOVE_RECURSE ${WORK_DIR})
