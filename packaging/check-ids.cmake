# Checks that the desktop file, the metainfo (id, launchable, icon) and the icons all use one id,
# and that every PNG icon has the size its name says.
# Usage: cmake -DDIR=<packaging dir> -DID=<app id> -DSIZES="16;32;..." -P check-ids.cmake
set(desktop "${DIR}/${ID}.desktop")
set(metainfo "${DIR}/${ID}.metainfo.xml")
foreach(f IN ITEMS "${desktop}" "${metainfo}" "${DIR}/icons/${ID}.svg")
    if(NOT EXISTS "${f}")
        message(FATAL_ERROR "missing ${f}")
    endif()
endforeach()

file(STRINGS "${desktop}" icon_line REGEX "^Icon=")
if(NOT icon_line STREQUAL "Icon=${ID}")
    message(FATAL_ERROR "${desktop}: expected Icon=${ID}, found '${icon_line}'")
endif()

file(READ "${metainfo}" xml)
foreach(expected IN ITEMS
        "<id>${ID}</id>"
        "<launchable type=\"desktop-id\">${ID}.desktop</launchable>"
        "<icon type=\"stock\">${ID}</icon>")
    string(FIND "${xml}" "${expected}" pos)
    if(pos EQUAL -1)
        message(FATAL_ERROR "${metainfo}: expected ${expected}")
    endif()
endforeach()

foreach(size IN LISTS SIZES)
    set(png "${DIR}/icons/${ID}-${size}.png")
    if(NOT EXISTS "${png}")
        message(FATAL_ERROR "missing ${png}")
    endif()
    # PNG: 8-byte signature, IHDR length and type, then width and height as big-endian 32-bit.
    file(READ "${png}" ihdr OFFSET 16 LIMIT 8 HEX)
    string(SUBSTRING "${ihdr}" 0 8 w)
    string(SUBSTRING "${ihdr}" 8 8 h)
    math(EXPR w "0x${w}")
    math(EXPR h "0x${h}")
    if(NOT w EQUAL size OR NOT h EQUAL size)
        message(FATAL_ERROR "${png} is ${w}x${h}, expected ${size}x${size}")
    endif()
endforeach()
message(STATUS "${ID}: desktop file, metainfo and ${SIZES} px icons agree")
