# hbg_write_if_changed(PATH TEXT): writes TEXT to PATH unless PATH already
# holds exactly TEXT, so an unchanged generated file keeps its time stamp
# and nothing that depends on it is rebuilt.
function(hbg_write_if_changed path text)
  if(EXISTS ${path})
    file(READ ${path} old)
  else()
    set(old "")
  endif()
  if(NOT old STREQUAL text)
    file(WRITE ${path} "${text}")
  endif()
endfunction()
