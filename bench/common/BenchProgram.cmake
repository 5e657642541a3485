# tessera_bench(<name> SOURCE <file.cpp> FLAGS <tesserac flags...> MODULES <example names...>):
# compiles examples/<module>.tessera with tesserac and the flags into objects and headers, and
# builds the benchmark program <name> from the source, the objects and libtessera_rt.
function(tessera_bench name)
  cmake_parse_arguments(B "" "SOURCE" "FLAGS;MODULES" ${ARGN})
  set(dir ${CMAKE_CURRENT_BINARY_DIR})
  set(objs)
  foreach(module ${B_MODULES})
    set(src ${PROJECT_SOURCE_DIR}/examples/${module}.tessera)
    add_custom_command(OUTPUT ${dir}/${module}.o ${dir}/${module}.h
      COMMAND tesserac ${src} ${B_FLAGS} -o ${dir}/${module}.o -H ${dir}/${module}.h
      DEPENDS tesserac ${src} COMMENT "tesserac ${module} (${name})")
    list(APPEND objs ${dir}/${module}.o ${dir}/${module}.h)
  endforeach()
  add_executable(${name} ${B_SOURCE} ${objs})
  target_include_directories(${name} PRIVATE ${dir} ${PROJECT_SOURCE_DIR}/runtime/include
                             ${PROJECT_SOURCE_DIR}/bench/common)
  target_link_libraries(${name} PRIVATE tessera_runtime)
endfunction()
