// shardscope-cli, and (built with SHARDSCOPE_CLI_QT) shardscope-cli-qt, the same command line
// with what needs Qt linked in. shardscope-cli links no Qt: estimate, search and compare, which
// scripts run many times, print no translated text, and Qt Core's libraries take most of a
// process's start. It hands every other command line (the help, in the interface language;
// bench; report) to shardscope-cli-qt unchanged (cli.h).
#include "cli.h"
#include "core/catalog.h"

#ifdef SHARDSCOPE_CLI_QT
#include "i18n/language.h"

#include <QCoreApplication>
#include <QGuiApplication>
#include <memory>
#else
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#endif
#include <iostream>
#include <string>
#include <vector>

namespace {

#ifndef SHARDSCOPE_CLI_QT
/// Replaces this process with shardscope-cli-qt running this program's arguments `argv`: the
/// same streams and exit status, and the data directory this program found. Returns only on
/// failure.
int runQtProgram(char **argv, const std::vector<std::string> &args)
{
    std::vector<std::string> looked;
    const std::string program = shardscope::cli::qtProgram(&looked);
    const std::string verb = args.empty() ? std::string("help") : args.front();
    if (program.empty()) {
        std::cerr << "shardscope-cli: cannot find shardscope-cli-qt, which runs " << verb
                  << " (shardscope-cli itself runs estimate, search and compare; ";
        if (looked.empty())
            std::cerr << "/proc/self/exe does not say where shardscope-cli is";
        for (size_t i = 0; i < looked.size(); ++i)
            std::cerr << (i ? ", " : "looked for ") << looked[i];
        std::cerr << "); reinstall ShardScope\n";
        return shardscope::cli::ExitFailure;
    }
    if (const std::string data = shardscope::locateDataDir(); !data.empty())
        ::setenv("SHARDSCOPE_DATA_DIR", data.c_str(), 1);
    argv[0] = const_cast<char *>(program.c_str());
    std::cout.flush();
    ::execv(program.c_str(), argv);
    const int error = errno;
    std::cerr << "shardscope-cli: cannot run " << program << ": " << std::strerror(error) << "\n";
    return shardscope::cli::ExitFailure;
}
#endif

} // namespace

int main(int argc, char **argv)
{
    std::vector<std::string> args(argv + 1, argv + argc);

    // --lang LANG chooses the language of the help and the reports for every verb, wherever it
    // stands; without it the system locale decides. It is taken out here and the report verb
    // receives it back as its own option.
    std::string lang;
    bool langGiven = false;
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "--lang") {
            if (i + 1 >= args.size()) {
                std::cerr << "shardscope-cli: --lang needs a value (en or zh_CN)\n";
                return shardscope::cli::ExitBadInput;
            }
            lang = args[i + 1];
            args.erase(args.begin() + long(i), args.begin() + long(i) + 2);
            langGiven = true;
            break;
        }
        if (args[i].rfind("--lang=", 0) == 0) {
            lang = args[i].substr(7);
            args.erase(args.begin() + long(i));
            langGiven = true;
            break;
        }
    }
    if (langGiven && lang != "en" && lang != "zh_CN") {
        std::cerr << "shardscope-cli: --lang must be en or zh_CN, not \"" << lang << "\"\n";
        return shardscope::cli::ExitBadInput;
    }

#ifdef SHARDSCOPE_CLI_QT
    const bool report = !args.empty() && args.front() == "report";
    if (report && langGiven)
        args.insert(args.end(), {"--lang", lang});
    shardscope::cli::useInProcessReport();
    shardscope::cli::useInProcessBench();
    // The report verb draws with Qt Gui on the offscreen platform (no display needed); the other
    // verbs need only Qt Core.
    static char platformFlag[] = "-platform";
    static char platform[] = "offscreen";
    static char *qtArgv[] = {argv[0], platformFlag, platform, nullptr};
    static int qtArgc = report ? 3 : 1;
    std::unique_ptr<QCoreApplication> app;
    if (report)
        app = std::make_unique<QGuiApplication>(qtArgc, qtArgv);
    else
        app = std::make_unique<QCoreApplication>(qtArgc, qtArgv);
    shardscope::setLanguage(QString::fromStdString(lang));
#else
    // The language changes nothing these verbs print.
    if (!shardscope::cli::runsWithoutQt(args))
        return runQtProgram(argv, args);
#endif
    return shardscope::cli::run(args, std::cout, std::cerr);
}
