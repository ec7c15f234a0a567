// The headline's and the step summary's rich-text line: laid out once per text and width.
#include "widgets/richtextlabel.h"

#include <QTest>
#include <QVBoxLayout>

using namespace shardscope;

class TestRichTextLabel : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // QLabel lays rich text out again for each size hint, height-for-width query and paint; a
    // change of the plan asks for all of them, every time.
    void laysOutOncePerTextAndWidth()
    {
        RichTextLabel label;
        label.resize(300, 80);
        label.setText(QStringLiteral("<b>Step 15.1 s</b> = compute 15.0 s + exposed communication "
                                     "564 us &middot; <b>17,392 tokens/s</b>"));
        label.show();
        QVERIFY(QTest::qWaitForWindowExposed(&label));
        auto round = [&label] {
            (void)label.sizeHint();
            (void)label.minimumSizeHint();
            (void)label.heightForWidth(300);
            label.repaint();
        };
        round(); // lays out for the size hint (unwrapped, then at its width) and the shown width
        const int before = label.layoutCount();
        for (int i = 0; i < 5; ++i)
            round();
        QCOMPARE(label.layoutCount(), before);
        const int settled = label.layoutCount();
        label.setText(label.text()); // the same text: nothing to do
        label.repaint();
        QCOMPARE(label.layoutCount(), settled);
    }

    // New numbers of the same height repaint the line only: the panels around it are not laid
    // out again (on a plan change that relayout went up to the main window).
    void sameHeightChangesLayOutNothingAround()
    {
        QWidget outer;
        auto *layout = new QVBoxLayout(&outer);
        auto *label = new RichTextLabel(&outer);
        layout->addWidget(label);
        layout->addStretch();
        outer.resize(400, 200);
        label->setText(QStringLiteral("<b>Step 15.073 s</b> = compute 15.072 s"));
        outer.show();
        QVERIFY(QTest::qWaitForWindowExposed(&outer));
        QCoreApplication::processEvents();
        int requests = 0;
        struct Counter : QObject
        {
            int *n;
            explicit Counter(int *count) : n(count) {}
            bool eventFilter(QObject *, QEvent *e) override
            {
                if (e->type() == QEvent::LayoutRequest)
                    ++*n;
                return false;
            }
        } counter(&requests);
        outer.installEventFilter(&counter);
        label->setText(QStringLiteral("<b>Step 14.631 s</b> = compute 14.618 s"));
        QCoreApplication::processEvents();
        QCOMPARE(requests, 0);
        // A text that needs another line does lay the panel out again.
        label->setText(QString(QStringLiteral("word ")).repeated(80));
        QCoreApplication::processEvents();
        QVERIFY(requests > 0);
        QVERIFY(label->height() >= label->heightForWidth(label->width()));
    }

    void wrapsAndKeepsTheText()
    {
        RichTextLabel label;
        const QString html = QStringLiteral("<b>Does not fit</b> on Ascend 910B2 (64.0 GiB HBM): "
                                            "94.2 GiB over. Rank 0 needs <b>158.2 GiB</b>");
        label.setText(html);
        QCOMPARE(label.text(), html);
        QVERIFY(label.plainText().startsWith(QStringLiteral("Does not fit on Ascend")));
        QVERIFY(label.hasHeightForWidth());
        QVERIFY(label.heightForWidth(120) > label.heightForWidth(1000));
        QVERIFY(label.sizeHint().width() > label.minimumSizeHint().width());
    }
};

QTEST_MAIN(TestRichTextLabel)
#include "tst_richtextlabel.moc"
