#include "cli.h"
#include "i18n/language.h"

#include <QCoreApplication>
#include <QGuiApplication>
#include <iostream>
#include <memory>

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
    const bool report = !args.empty() && args.front() == "report";
    if (report && langGiven)
        args.insert(args.end(), {"--lang", lang});

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
    return shardscope::cli::run(args, std::cout, std::cerr);
}
