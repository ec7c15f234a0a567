#include "widgets/plandocument.h"
#include "widgets/planeditor.h"

#include "core/catalog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QSlider>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTest>
#include <QUndoStack>

using namespace shardscope;

class TestPlanEditor : public QObject
{
    Q_OBJECT

private:
    std::unique_ptr<PlanDocument> m_doc;
    std::unique_ptr<PlanEditor> m_editor;

    template <typename T>
    T *child(const char *name)
    {
        T *w = m_editor->findChild<T *>(QLatin1String(name));
        if (!w)
            qFatal("no child %s", name);
        return w;
    }
    static int indexOfData(QComboBox *combo, int value) { return combo->findData(value); }
    static bool itemEnabled(QComboBox *combo, int index)
    {
        return qobject_cast<QStandardItemModel *>(combo->model())->item(index)->isEnabled();
    }

private Q_SLOTS:
    void init()
    {
        m_doc = std::make_unique<PlanDocument>(Catalog::builtin());
        QString error;
        QVERIFY2(m_doc->loadAsUntitled(QString::fromStdString(locateDataDir()) +
                                           QStringLiteral("/cases/hcie-ai-ddp.plan.json"),
                                       &error),
                 qPrintable(error));
        m_editor = std::make_unique<PlanEditor>(m_doc.get());
        m_editor->resize(360, 900);
        m_editor->show();
    }
    void cleanup()
    {
        m_editor.reset();
        m_doc.reset();
    }

    void controlsShowThePlan()
    {
        QCOMPARE(child<QSpinBox>("layers")->value(), 32);
        QCOMPARE(child<QSpinBox>("seqLenEntry")->value(), 32768);
        QCOMPARE(child<QSlider>("seqLen")->value(), 15);
        QCOMPARE(child<QComboBox>("tp")->currentData().toInt(), 1);
        QCOMPARE(child<QLabel>("dp")->text(), QStringLiteral("8"));
        QCOMPARE(child<QComboBox>("preset")->currentData().toString(), QStringLiteral("llama2-7b"));
        QCOMPARE(child<QComboBox>("device")->currentData().toString(), QStringLiteral("ascend-910b2"));
    }

    void controlsChangeThePlan()
    {
        auto *tp = child<QComboBox>("tp");
        tp->setCurrentIndex(indexOfData(tp, 4));
        QCOMPARE(m_doc->plan().parallel.tp, 4);
        QCOMPARE(m_doc->plan().parallel.dp, 2); // dp fills the rest of the world
        QCOMPARE(child<QLabel>("dp")->text(), QStringLiteral("2"));

        child<QSpinBox>("microBatch")->setValue(2);
        QCOMPARE(m_doc->plan().training.micro_batch, 2);

        auto *sharding = child<QComboBox>("sharding");
        sharding->setCurrentIndex(indexOfData(sharding, int(Sharding::Full)));
        QVERIFY(m_doc->plan().parallel.sharding == Sharding::Full);

        auto *compute = child<QComboBox>("dtypeMaster");
        compute->setCurrentIndex(indexOfData(compute, int(DType::None)));
        QVERIFY(m_doc->plan().precision.master_weights == DType::None);

        child<QCheckBox>("sp")->setChecked(true);
        QVERIFY(m_doc->plan().parallel.sp);
        child<QCheckBox>("offloadOptimizer")->setChecked(true);
        QVERIFY(m_doc->plan().memory.offload.optimizer);

        child<QSpinBox>("nodes")->setValue(2);
        QCOMPARE(m_doc->plan().cluster.nodes, 2);
        QCOMPARE(m_doc->plan().parallel.dp, 4);

        QCOMPARE(m_doc->undoStack()->count(), 7);
        while (m_doc->undoStack()->canUndo())
            m_doc->undoStack()->undo();
        QCOMPARE(m_doc->plan().parallel.tp, 1);
        QCOMPARE(child<QComboBox>("tp")->currentData().toInt(), 1);
        QCOMPARE(child<QSpinBox>("microBatch")->value(), 1);
    }

    void sequenceSliderSnapsToPowersOfTwo()
    {
        auto *slider = child<QSlider>("seqLen");
        QCOMPARE(slider->minimum(), 9);
        QCOMPARE(slider->maximum(), 20);
        slider->setValue(12);
        QCOMPARE(m_doc->plan().training.seq_len, int64_t(4096));
        QCOMPARE(child<QSpinBox>("seqLenEntry")->value(), 4096);
        child<QSpinBox>("seqLenEntry")->setValue(6000);
        QCOMPARE(m_doc->plan().training.seq_len, int64_t(6000));
    }

    void sliderDragIsOneUndoStep()
    {
        auto *slider = child<QSlider>("modelSize");
        QCOMPARE(PlanEditor::positionForParameters(PlanEditor::parametersForPosition(300)), 300);
        // setSliderDown emits sliderPressed / sliderReleased as a mouse drag does.
        slider->setSliderDown(true);
        for (int pos : {100, 150, 200, 260})
            slider->setValue(pos);
        slider->setSliderDown(false);
        QCOMPARE(m_doc->undoStack()->count(), 1);
        QVERIFY(m_doc->plan().model.preset.empty());
        const double n = double(countParameters(m_doc->plan().model).total);
        QVERIFY2(std::abs(n / PlanEditor::parametersForPosition(260) - 1.0) < 0.15, qPrintable(QString::number(n)));
        m_doc->undoStack()->undo();
        QVERIFY(m_doc->plan().model.preset == std::string("llama2-7b"));
    }

    void impossibleChoicesAreDisabledWithTheReason()
    {
        // 8 devices: tp 1, 2, 4, 8 divide the world; all divide 32 heads.
        auto *tp = child<QComboBox>("tp");
        QCOMPARE(tp->count(), 4);
        for (int i = 0; i < tp->count(); ++i)
            QVERIFY(itemEnabled(tp, i));
        // ep needs an MoE model.
        auto *ep = child<QComboBox>("ep");
        const int ep2 = indexOfData(ep, 2);
        QVERIFY(!itemEnabled(ep, ep2));
        const QString reason = ep->itemData(ep2, Qt::ToolTipRole).toString();
        QVERIFY2(reason.contains(QStringLiteral("parallel.ep")) && reason.contains(QStringLiteral("MoE")),
                 qPrintable(reason));
        QVERIFY(ep->toolTip().contains(reason));
        // SP needs tp >= 2: the switch is disabled and says why.
        auto *sp = child<QCheckBox>("sp");
        QVERIFY(!sp->isEnabled());
        QVERIFY2(sp->toolTip().contains(QStringLiteral("parallel.sp")), qPrintable(sp->toolTip()));
        // Parameter offload needs full sharding.
        auto *off = child<QCheckBox>("offloadParams");
        QVERIFY(!off->isEnabled());
        QVERIFY(off->toolTip().contains(QStringLiteral("sharding")));
    }

    void refusedEditShowsTheReasonAndKeepsThePlan()
    {
        // 5 KV heads do not divide 32 heads.
        auto *kv = child<QSpinBox>("kvHeads");
        kv->setValue(5);
        QCOMPARE(m_doc->plan().model.kv_heads, 32);
        QCOMPARE(kv->value(), 32);
        QVERIFY2(m_editor->statusText().contains(QStringLiteral("model.kv_heads")),
                 qPrintable(m_editor->statusText()));
        QCOMPARE(m_doc->undoStack()->count(), 0);
    }
};

QTEST_MAIN(TestPlanEditor)
#include "tst_planeditor.moc"
