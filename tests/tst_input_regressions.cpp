// The corpora of the input fuzz targets (tests/fuzz/fuzz_import, fuzz_profile, fuzz_hfconfig)
// replayed through their properties (tests/fuzz/input_properties.h), and each finding as a row:
// the file, whether the reader accepts it and a word of the message when it does not.
#include "core/catalog.h"
#include "fuzz/input_properties.h"
#include "testdata.h"

#include <QDir>
#include <QFile>
#include <QTest>

using namespace shardscope;

namespace {

QString fuzzDir(const char *corpus)
{
    return testing::sourceDir() + QStringLiteral("/tests/fuzz/") + QLatin1String(corpus);
}

std::string read(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll().toStdString() : std::string();
}

fuzzing::InputCheck check(const QString &kind, const std::string &text)
{
    if (kind == QLatin1String("import"))
        return fuzzing::checkImportText(text);
    if (kind == QLatin1String("device"))
        return fuzzing::checkDeviceText(text);
    if (kind == QLatin1String("framework"))
        return fuzzing::checkFrameworkText(text);
    return fuzzing::checkHfConfigText(text);
}

void addFiles(const QString &kind, const QString &dir, const QStringList &filters = {})
{
    const QStringList files = QDir(dir).entryList(filters, QDir::Files, QDir::Name);
    for (const QString &f : files)
        QTest::newRow(qPrintable(kind + QLatin1Char('/') + f)) << kind << dir + QLatin1Char('/') + f;
}

} // namespace

class TestInputRegressions : public QObject
{
    Q_OBJECT

private slots:
    // Each finding: the file, whether it is accepted, a word of the refusal.
    void findings_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("file");
        QTest::addColumn<bool>("accepted");
        QTest::addColumn<QString>("word");
        // front() of an empty token list crashed bench --import.
        QTest::addRow("empty avg busbw") << "import" << "corpus-import/regress-avg-busbw-empty.txt"
                                         << false << "no nccl-tests result rows";
        QTest::addRow("nan busbw") << "import" << "corpus-import/regress-nan-busbw.txt" << false
                                   << "busbw must be a finite number";
        QTest::addRow("trace types") << "import" << "corpus-import/regress-trace-types.json" << false
                                     << "traceEvents[0].ts must be a number";
        QTest::addRow("zero efficiency") << "device" << "corpus-profile/regress-zero-efficiency.json"
                                         << false << "gemm_efficiency";
        QTest::addRow("wrong type") << "device" << "corpus-profile/regress-wrong-type.json" << false
                                    << "hbm_bytes: must be a number, not string";
        QTest::addRow("llama3") << "hfconfig" << "corpus-hfconfig/llama3-8b.json" << true << "";
        QTest::addRow("gpt2 null n_inner") << "hfconfig" << "corpus-hfconfig/gpt2-xl.json" << true << "";
        QTest::addRow("deepseek-v3") << "hfconfig" << "corpus-hfconfig/deepseek-v3.json" << true << "";
        QTest::addRow("text_config") << "hfconfig" << "corpus-hfconfig/qwen2.5-vl-7b.json" << true << "";
    }

    void findings()
    {
        QFETCH(QString, kind);
        QFETCH(QString, file);
        QFETCH(bool, accepted);
        QFETCH(QString, word);
        const std::string text = read(testing::sourceDir() + QStringLiteral("/tests/fuzz/") + file);
        QVERIFY2(!text.empty(), qPrintable(file));
        const fuzzing::InputCheck c = check(kind, text);
        QVERIFY2(c.violation.empty(), c.violation.c_str());
        QCOMPARE(c.parsed, accepted);
        if (!accepted)
            QVERIFY2(QString::fromStdString(c.error).contains(word), c.error.c_str());
    }

    // Every seed (the corpora and the shipped profiles and samples) holds the properties; the
    // shipped ones are accepted.
    void corpus_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("file");
        addFiles(QStringLiteral("import"), fuzzDir("corpus-import"));
        addFiles(QStringLiteral("device"), fuzzDir("corpus-profile"));
        addFiles(QStringLiteral("hfconfig"), fuzzDir("corpus-hfconfig"));
        const QString data = QString::fromStdString(locateDataDir());
        addFiles(QStringLiteral("device"), data + QStringLiteral("/devices"));
        addFiles(QStringLiteral("framework"), data + QStringLiteral("/frameworks"));
        addFiles(QStringLiteral("import"), testing::sourceDir() + QStringLiteral("/tests/data/runner"),
                 {QStringLiteral("*.txt"), QStringLiteral("trace.json")});
    }

    void corpus()
    {
        QFETCH(QString, kind);
        QFETCH(QString, file);
        const fuzzing::InputCheck c = check(kind, read(file));
        QVERIFY2(c.violation.empty(), c.violation.c_str());
        if (!QFileInfo(file).fileName().startsWith(QLatin1String("regress-")) &&
            !file.contains(QLatin1String("unsupported")))
            QVERIFY2(c.parsed, c.error.c_str());
    }
};

QTEST_APPLESS_MAIN(TestInputRegressions)
#include "tst_input_regressions.moc"
