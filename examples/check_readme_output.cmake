# Runs PROGRAM (with ARGS, separated by |) and fails unless README.md shows exactly what it
# printed, as a ``` block. MASK, when given, is a regular expression for a part that differs from
# machine to machine (a floating-point difference): it is replaced on both sides before comparing.
string(REPLACE "|" ";" args "${ARGS}")
execute_process(COMMAND ${PROGRAM} ${args} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} exited with ${rc}:\n${out}")
endif()
file(READ ${README} readme)
if(MASK)
  string(REGEX REPLACE "${MASK}" "<varies>" out "${out}")
  string(REGEX REPLACE "${MASK}" "<varies>" readme "${readme}")
endif()
string(FIND "${readme}" "```\n${out}```" at)
if(at EQUAL -1)
  message(FATAL_ERROR "README.md does not show what ${PROGRAM} prints; it printed:\n${out}")
endif()
