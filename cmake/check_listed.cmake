# hbg_check_listed(PATTERN LISTED...): stops configuring when a file that
# matches PATTERN (relative to this directory) is not among LISTED. Sources
# are listed by hand so that a build never picks up a stray file; this
# makes a forgotten entry (a new test that would silently never run) an
# error naming the list to add it to, instead.
function(hbg_check_listed pattern)
  file(GLOB on_disk RELATIVE ${CMAKE_CURRENT_SOURCE_DIR} CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${pattern})
  foreach(f ${on_disk})
    if(NOT f IN_LIST ARGN)
      message(FATAL_ERROR "${CMAKE_CURRENT_SOURCE_DIR}/${f} is in no source list of ${CMAKE_CURRENT_LIST_FILE}; add it")
    endif()
  endforeach()
endfunction()

# hbg_check_programs(PATTERN NAME...): the same for one-file programs, listed
# by name (test_bind for test_bind.c).
function(hbg_check_programs pattern)
  set(files ${ARGN})
  list(TRANSFORM files APPEND .c)
  hbg_check_listed(${pattern} ${files})
endfunction()
