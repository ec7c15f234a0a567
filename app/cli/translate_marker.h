#pragma once

// lupdate collects the help texts by QT_TRANSLATE_NOOP (app/ is among its sources); helpText()
// translates them at run time. For the files of shardscope-cli, which links no Qt, the marker
// is defined here as Qt defines it: it leaves the text as it is.
#ifndef QT_TRANSLATE_NOOP
#define QT_TRANSLATE_NOOP(scope, text) text
#endif
