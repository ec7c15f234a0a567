# Runs every case listed in cases.txt through shardscope-cli and compares exit status, stdout
# and stderr with <name>.expected. With -DUPDATE=ON it rewrites the expectations instead (review
# the diff before committing it: a golden file is only as good as the hand check behind it).
#
# cases.txt: one case per line, "<name> <arguments...>", paths relative to this directory.
if(NOT CLI OR NOT DIR)
    message(FATAL_ERROR "run_golden.cmake needs -DCLI=<shardscope-cli> -DDIR=<golden dir>")
endif()
if(NOT EXISTS "${CLI}")
    message(FATAL_ERROR "no shardscope-cli at ${CLI}: build it first")
endif()
file(STRINGS "${DIR}/cases.txt" lines)
set(failures 0)
foreach(line IN LISTS lines)
    if(line MATCHES "^#" OR line STREQUAL "")
        continue()
    endif()
    separate_arguments(words UNIX_COMMAND "${line}")
    list(POP_FRONT words name)
    execute_process(COMMAND "${CLI}" ${words}
        WORKING_DIRECTORY "${DIR}"
        RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
    set(actual "exit: ${code}\n--- stdout\n${out}--- stderr\n${err}")
    set(expected_file "${DIR}/${name}.expected")
    if(UPDATE)
        file(WRITE "${expected_file}" "${actual}")
        message(STATUS "updated ${name}")
        continue()
    endif()
    if(NOT EXISTS "${expected_file}")
        message(SEND_ERROR "${name}: no ${name}.expected (run with -DUPDATE=ON and review it)")
        math(EXPR failures "${failures} + 1")
        continue()
    endif()
    file(READ "${expected_file}" expected)
    if(NOT actual STREQUAL expected)
        # Written where the test runs (the build tree), for `diff` against the expectation.
        file(WRITE "${CMAKE_CURRENT_BINARY_DIR}/golden-${name}.actual" "${actual}")
        message(SEND_ERROR "${name}: output differs from ${name}.expected; see "
                           "${CMAKE_CURRENT_BINARY_DIR}/golden-${name}.actual")
        math(EXPR failures "${failures} + 1")
    else()
        message(STATUS "${name}: ok")
    endif()
endforeach()
if(failures GREATER 0)
    message(FATAL_ERROR "${failures} golden case(s) failed")
endif()
