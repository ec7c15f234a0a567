// The Chinese translation is complete: no unfinished, obsolete or empty entries in the .ts, and
// lupdate over today's sources adds none (every tr() string of the GUI, teaching mode, reports
// and CLI help, and every template of the engine's explanations, is translated). The embedded .qm loads and switches languages at run time.
#include "i18n/language.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QXmlStreamReader>
#include <QtTest>

namespace {

struct TsStats
{
    int messages = 0;
    QStringList problems; ///< "context: source (why)"
    QList<QPair<QString, QString>> texts; ///< source and translation of each plain message
};

TsStats readTs(const QString &path)
{
    TsStats st;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        st.problems << QStringLiteral("cannot read %1").arg(path);
        return st;
    }
    QXmlStreamReader xml(&f);
    QString context, source;
    bool numerus = false;
    while (!xml.atEnd()) {
        xml.readNext();
        if (!xml.isStartElement())
            continue;
        const auto name = xml.name();
        if (name == QLatin1String("name")) {
            context = xml.readElementText();
        } else if (name == QLatin1String("message")) {
            ++st.messages;
            numerus = xml.attributes().value(QLatin1String("numerus")) == QLatin1String("yes");
        } else if (name == QLatin1String("source")) {
            source = xml.readElementText();
        } else if (name == QLatin1String("translation")) {
            const QString type = xml.attributes().value(QLatin1String("type")).toString();
            const QString where = context + QStringLiteral(": ") + source.left(60);
            if (!type.isEmpty()) {
                st.problems << where + QStringLiteral(" (") + type + QLatin1Char(')');
                xml.skipCurrentElement();
                continue;
            }
            if (numerus) {
                bool any = false;
                while (xml.readNextStartElement()) {
                    if (xml.name() == QLatin1String("numerusform")) {
                        if (xml.readElementText().trimmed().isEmpty())
                            st.problems << where + QStringLiteral(" (empty numerus form)");
                        any = true;
                    } else {
                        xml.skipCurrentElement();
                    }
                }
                if (!any)
                    st.problems << where + QStringLiteral(" (no numerus form)");
            } else {
                const QString text = xml.readElementText();
                if (text.trimmed().isEmpty())
                    st.problems << where + QStringLiteral(" (empty)");
                st.texts.append({source, text});
            }
        }
    }
    if (xml.hasError())
        st.problems << xml.errorString();
    return st;
}

QString tsPath()
{
    return qEnvironmentVariable("SHARDSCOPE_SOURCE_DIR") +
           QStringLiteral("/translations/shardscope_zh_CN.ts");
}

} // namespace

class TestTranslations : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void tsFileIsFinished()
    {
        const TsStats st = readTs(tsPath());
        QVERIFY(st.messages > 100);
        QVERIFY2(st.problems.isEmpty(), qPrintable(st.problems.join(QLatin1Char('\n'))));
    }

    /// A pipeline stage is a 阶段 (phase, stage), never a 级 (level, grade): "(stage 0)" must not
    /// read as "level 0".
    void pipelineStageIsAStageNotALevel()
    {
        const TsStats st = readTs(tsPath());
        QStringList wrong;
        int stages = 0;
        for (const auto &[source, text] : st.texts) {
            if (!source.contains(QLatin1String("stage"), Qt::CaseInsensitive) ||
                source.contains(QLatin1String("ZeRO stage")))
                continue;
            ++stages;
            if (text.contains(QChar(0x7EA7)) || !text.contains(QStringLiteral("阶段")))
                wrong << source.left(60) + QStringLiteral(" -> ") + text.left(40);
        }
        QVERIFY(stages > 10);
        QVERIFY2(wrong.isEmpty(), qPrintable(wrong.join(QLatin1Char('\n'))));
    }

    /// lupdate over the sources finds nothing new and nothing gone.
    void tsFileCoversTheSources()
    {
        const QString lupdate = QStringLiteral(SHARDSCOPE_LUPDATE);
        if (lupdate.isEmpty() || !QFile::exists(lupdate))
            QSKIP("lupdate not available");
        QTemporaryDir dir;
        const QString copy = dir.filePath(QStringLiteral("shardscope_zh_CN.ts"));
        QVERIFY(QFile::copy(tsPath(), copy));
        QFile::setPermissions(copy, QFile::ReadOwner | QFile::WriteOwner);
        const QString src = qEnvironmentVariable("SHARDSCOPE_SOURCE_DIR");
        QProcess p;
        p.setWorkingDirectory(src);
        p.start(lupdate,
                {QStringLiteral("-locations"), QStringLiteral("none"), QStringLiteral("widgets"),
                 QStringLiteral("report"), QStringLiteral("teaching"), QStringLiteral("app"),
                 QStringLiteral("core"), QStringLiteral("-ts"), copy});
        QVERIFY(p.waitForFinished(120000));
        QCOMPARE(p.exitCode(), 0);
        const TsStats st = readTs(copy);
        QVERIFY2(st.problems.isEmpty(),
                 qPrintable(QStringLiteral("run the update_translations target and "
                                           "translate:\n") +
                            st.problems.join(QLatin1Char('\n'))));
    }

    void switchesAtRunTime()
    {
        QVERIFY(shardscope::availableLanguages().contains(QStringLiteral("zh_CN")));
        QCOMPARE(shardscope::setLanguage(QStringLiteral("zh_CN")), QStringLiteral("zh_CN"));
        const QString fits = QCoreApplication::translate("PdfReport", "Fits");
        QVERIFY(fits != QStringLiteral("Fits"));
        QVERIFY(fits.at(0).unicode() >= 0x4E00);
        QCOMPARE(shardscope::setLanguage(QStringLiteral("en")), QStringLiteral("en"));
        QCOMPARE(QCoreApplication::translate("PdfReport", "Fits"), QStringLiteral("Fits"));
        QCOMPARE(shardscope::languageName(QStringLiteral("zh_CN")), QStringLiteral("简体中文"));
    }
};

QTEST_GUILESS_MAIN(TestTranslations)
#include "tst_translations.moc"
