#include "widgets/plandocument.h"
#include "widgets/planeditor.h"

#include "core/catalog.h"
#include "core/estimate.h"
#include "core/model.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QLineEdit>
#include <QSlider>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QStyle>
#include <QStyleOptionComboBox>
#include <QTest>
#include <QUndoStack>
#include <QWheelEvent>

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

    // ZeRO-3 at dp x cp = 1 shards nothing: the editor says so (and what it shards over).
    void shardingWithNothingToShardOverIsSaid()
    {
        auto *sharding = child<QComboBox>("sharding");
        auto *hint = child<QLabel>("shardingHint");
        auto *tp = child<QComboBox>("tp");
        QVERIFY(hint->isHidden());
        tp->setCurrentIndex(indexOfData(tp, 8)); // dp = 1
        QCOMPARE(m_doc->plan().parallel.dp, 1);
        QVERIFY(hint->isHidden()); // DDP: nothing claimed
        sharding->setCurrentIndex(indexOfData(sharding, int(Sharding::Full)));
        QVERIFY(m_doc->plan().parallel.sharding == Sharding::Full);
        QVERIFY(!hint->isHidden());
        QVERIFY2(hint->text().contains(QStringLiteral("dp x cp")), qPrintable(hint->text()));
        QVERIFY(sharding->toolTip().contains(QStringLiteral("dp x cp = 1")));
        // With context parallelism the states are sharded over cp.
        tp->setCurrentIndex(indexOfData(tp, 1));
        auto *cp = child<QComboBox>("cp");
        cp->setCurrentIndex(indexOfData(cp, 8));
        QCOMPARE(m_doc->plan().parallel.dp, 1);
        QCOMPARE(m_doc->plan().parallel.cp, 8);
        QVERIFY(hint->isHidden());
        QVERIFY(sharding->toolTip().contains(QStringLiteral("dp x cp = 8")));
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

    // A wheel notch over a control that has not got the focus scrolls the panel and leaves the
    // plan alone; once the control has the focus, the wheel changes it.
    void wheelNeedsFocus()
    {
        auto *pp = child<QComboBox>("pp");
        const int before = m_doc->plan().parallel.pp;
        // Down on a combo box picks the next item (pp 1 -> 2 was the report); up on a spin box
        // adds one.
        auto wheel = [&](QWidget *w, int delta) {
            const QPointF at(w->width() / 2.0, w->height() / 2.0);
            QWheelEvent e(at, w->mapToGlobal(at), QPoint(), QPoint(0, delta), Qt::NoButton, Qt::NoModifier,
                          Qt::NoScrollPhase, false);
            QCoreApplication::sendEvent(w, &e);
        };
        QVERIFY(!pp->hasFocus());
        wheel(pp, -120);
        QCOMPARE(m_doc->plan().parallel.pp, before);
        auto *micro = child<QSpinBox>("microBatch");
        wheel(micro, 120);
        QCOMPARE(m_doc->plan().training.micro_batch, 1);
        QCOMPARE(pp->focusPolicy(), Qt::StrongFocus);
        micro->setFocus();
        QTRY_VERIFY(micro->hasFocus());
        wheel(micro, 120);
        QCOMPARE(m_doc->plan().training.micro_batch, 2);
    }

    // The caching allocator's settings: edits of memory.allocator, which the estimate replays;
    // on the 910B torch_npu refuses expandable segments beside max_split_size_mb.
    void allocatorSettings()
    {
        m_doc->undoStack()->clear();
        // The FSDP case fits: a setting changes what is reserved, not whether it runs.
        QString error;
        QVERIFY2(m_doc->loadAsUntitled(QString::fromStdString(locateDataDir()) +
                                           QStringLiteral("/cases/hcie-ai-fsdp.plan.json"),
                                       &error),
                 qPrintable(error));
        const double before = m_doc->estimate().memory.ranks.front().reserved_bytes;
        child<QCheckBox>("expandableSegments")->setChecked(true);
        QVERIFY(m_doc->plan().memory.allocator.expandable_segments);
        const double expandable = m_doc->estimate().memory.ranks.front().reserved_bytes;
        QVERIFY2(expandable < before, qPrintable(QStringLiteral("%1 vs %2").arg(expandable).arg(before)));
        QVERIFY(expandable >= m_doc->estimate().memory.ranks.front().peak_bytes);
        child<QCheckBox>("expandableSegments")->setChecked(false);
        child<QSpinBox>("maxSplitSize")->setValue(256);
        QCOMPARE(m_doc->plan().memory.allocator.max_split_size_mb, 256.0);
        child<QDoubleSpinBox>("gcThreshold")->setValue(0.8);
        QCOMPARE(m_doc->plan().memory.allocator.garbage_collection_threshold, 0.8);
        // Refused with the reason: the plan keeps its settings.
        child<QCheckBox>("expandableSegments")->setChecked(true);
        QVERIFY(!m_doc->plan().memory.allocator.expandable_segments);
        QVERIFY(!child<QCheckBox>("expandableSegments")->isChecked());
        m_doc->undoStack()->undo();
        QCOMPARE(m_doc->plan().memory.allocator.garbage_collection_threshold, 0.0);
        QCOMPARE(child<QDoubleSpinBox>("gcThreshold")->value(), 0.0);
    }

    // HCCL buffers per group (910B): HCCL_BUFFSIZE, MindSpeed's per-group string and the
    // adaptive sizing, each undoable; the group options need framework megatron.
    void hcclGroupBuffers()
    {
        QSpinBox *size = child<QSpinBox>("hcclBufferMb");
        QLineEdit *groups = child<QLineEdit>("hcclGroupBuffer");
        QCheckBox *adaptive = child<QCheckBox>("hcclBufferAdaptive");
        QVERIFY(size->isEnabled());
        QVERIFY(!adaptive->isEnabled()); // pytorch: MindSpeed's options do not apply
        const double before = m_doc->estimate().memory.ranks.front().reserve.comm_buffers;
        QVERIFY(before > 0);
        size->setValue(100); // every communicator 2 x 100 MiB instead of the profile's 2 x 200
        QCOMPARE(m_doc->plan().memory.hccl_buffer_mb, 100);
        QCOMPARE(m_doc->estimate().memory.ranks.front().reserve.comm_buffers, before / 2);
        m_doc->undoStack()->undo();
        QCOMPARE(m_doc->plan().memory.hccl_buffer_mb, 0);
        QCOMPARE(m_doc->estimate().memory.ranks.front().reserve.comm_buffers, before);
        QComboBox *framework = child<QComboBox>("framework");
        framework->setCurrentIndex(framework->findData(QStringLiteral("megatron")));
        QVERIFY(adaptive->isEnabled());
        QVERIFY(groups->isEnabled());
        groups->setText(QStringLiteral("dp: 300; tp:50"));
        QMetaObject::invokeMethod(groups, "editingFinished");
        QCOMPARE(m_doc->plan().memory.hccl_group_buffer, (std::map<std::string, int>{{"dp", 300}, {"tp", 50}}));
        QCOMPARE(groups->text(), QStringLiteral("dp:300;tp:50"));
        m_doc->undoStack()->undo();
        QVERIFY(m_doc->plan().memory.hccl_group_buffer.empty());
        QVERIFY(groups->text().isEmpty());
        groups->setText(QStringLiteral("tensor:300")); // refused: not a MindSpeed group
        QMetaObject::invokeMethod(groups, "editingFinished");
        QVERIFY(m_doc->plan().memory.hccl_group_buffer.empty());
        // MindSpeed's swap-attention (megatron): less saved on the device, undoable.
        QCheckBox *swap = child<QCheckBox>("swapAttention");
        QVERIFY(swap->isEnabled());
        QComboBox *recompute = child<QComboBox>("recompute"); // the case checkpoints every layer:
        recompute->setCurrentIndex(recompute->findData(int(Recompute::Selective))); // not with swap
        QVERIFY(m_doc->plan().memory.recompute == Recompute::Selective);
        const double activations = m_doc->estimate().memory.ranks.front().phases[size_t(Phase::Forward)][Component::Activations];
        swap->setChecked(true);
        QVERIFY(m_doc->plan().memory.swap_attention);
        QVERIFY(m_doc->estimate().memory.ranks.front().phases[size_t(Phase::Forward)][Component::Activations] < activations);
        m_doc->undoStack()->undo();
        QVERIFY(!m_doc->plan().memory.swap_attention);
        QVERIFY(!swap->isChecked());
        adaptive->setChecked(true);
        QVERIFY(m_doc->plan().memory.hccl_buffer_adaptive);
        m_doc->undoStack()->undo();
        QVERIFY(!m_doc->plan().memory.hccl_buffer_adaptive);
        QVERIFY(!adaptive->isChecked());
    }

    // DeepSpeed ZeRO++ hpZ: offered for ZeRO-3 under deepspeed, the divisors of dp, undoable.
    void zeroHpzGroup()
    {
        QComboBox *hpz = child<QComboBox>("zeroHpzPartitionSize");
        QComboBox *framework = child<QComboBox>("framework");
        framework->setCurrentIndex(framework->findData(QStringLiteral("deepspeed")));
        QComboBox *sharding = child<QComboBox>("sharding");
        const int four = hpz->findData(4);
        QVERIFY(four > 0);
        QVERIFY(!itemEnabled(hpz, four)); // sharding none: refused with the reason
        sharding->setCurrentIndex(indexOfData(sharding, int(Sharding::Full)));
        QVERIFY(m_doc->plan().parallel.sharding == Sharding::Full);
        QVERIFY(itemEnabled(hpz, hpz->findData(4)));
        QCOMPARE(hpz->findData(3), -1); // not a divisor of dp 8
        const double params = m_doc->estimate().memory.ranks.front().phases[size_t(Phase::Backward)][Component::Parameters];
        hpz->setCurrentIndex(hpz->findData(4));
        QCOMPARE(m_doc->plan().parallel.zero_hpz_partition_size, 4);
        QVERIFY(m_doc->estimate().memory.ranks.front().phases[size_t(Phase::Backward)][Component::Parameters] > params);
        m_doc->undoStack()->undo();
        QCOMPARE(m_doc->plan().parallel.zero_hpz_partition_size, 0);
        QCOMPARE(hpz->currentData().toInt(), 0);
    }

    // Megatron's overlap options and the vocabulary padding: shown as the profile sets them,
    // undoable; the param gather needs the distributed optimizer and brings the grad reduce.
    void megatronBufferOptions()
    {
        QComboBox *framework = child<QComboBox>("framework");
        framework->setCurrentIndex(framework->findData(QStringLiteral("megatron")));
        QCOMPARE(m_doc->plan().framework, std::string("megatron"));
        QCheckBox *grads = child<QCheckBox>("overlapGradReduce");
        QCheckBox *params = child<QCheckBox>("overlapParamGather");
        QVERIFY(!grads->isChecked()); // Megatron's arguments: off
        QVERIFY(!params->isEnabled()); // sharding none: no all-gather of shards
        QComboBox *sharding = child<QComboBox>("sharding");
        sharding->setCurrentIndex(indexOfData(sharding, int(Sharding::Optimizer)));
        QVERIFY(m_doc->plan().parallel.sharding == Sharding::Optimizer);
        QVERIFY(params->isEnabled());
        params->setChecked(true);
        QVERIFY(m_doc->plan().memory.overlap_param_gather.value_or(false));
        QVERIFY(m_doc->plan().memory.overlap_grad_reduce.value_or(false));
        QVERIFY(grads->isChecked());
        grads->setChecked(false); // takes the param gather with it
        QVERIFY(!m_doc->plan().memory.overlap_param_gather.value_or(true));
        QVERIFY(!params->isChecked());
        m_doc->undoStack()->undo();
        QVERIFY(m_doc->plan().memory.overlap_param_gather.value_or(false));
        QVERIFY(params->isChecked());
        QSpinBox *pad = child<QSpinBox>("paramAndGradBufferPad");
        QVERIFY(pad->isEnabled());
        pad->setValue(512);
        QCOMPARE(m_doc->plan().memory.param_and_grad_buffer_pad, 512);
        m_doc->undoStack()->undo();
        QCOMPARE(m_doc->plan().memory.param_and_grad_buffer_pad, 0);
        QSpinBox *vocab = child<QSpinBox>("vocabDivisibleBy");
        QCOMPARE(vocab->value(), 0);
        const double before = m_doc->estimate().memory.ranks.front().phases[size_t(Phase::OptimizerStep)][Component::Parameters];
        vocab->setValue(1000); // 32000 is a multiple of 1000 (and of 128, the profile's) under tp 1
        QCOMPARE(m_doc->estimate().memory.ranks.front().phases[size_t(Phase::OptimizerStep)][Component::Parameters], before);
        vocab->setValue(1024); // 32000 -> 32768: 768 rows x 4096 more in the embedding and the head
        QCOMPARE(m_doc->plan().model.vocab_divisible_by, 1024);
        const double after = m_doc->estimate().memory.ranks.front().phases[size_t(Phase::OptimizerStep)][Component::Parameters];
        QCOMPARE(after - before, 2.0 * 768.0 * 4096.0 * 2.0);
        m_doc->undoStack()->undo();
        m_doc->undoStack()->undo();
        QCOMPARE(m_doc->plan().model.vocab_divisible_by, 0);
        QCOMPARE(vocab->value(), 0);
    }

    // The kernel choices a profile makes (SwiGLU fused or not, the flash output copied between
    // layouts): shown as the framework sets them, written on a tick, undoable, and refused with
    // the reason where the model or the attention has no such kernel.
    void kernelChoices()
    {
        auto activations = [this] {
            return m_doc->estimate().memory.ranks.front().phases[size_t(Phase::Forward)][Component::Activations];
        };
        QCheckBox *fused = child<QCheckBox>("fusedSwiglu");
        QCheckBox *copy = child<QCheckBox>("flashOutputCopy");
        QVERIFY(!fused->isChecked()); // pytorch: Hugging Face's LlamaMLP, three kernels
        QVERIFY(!copy->isChecked());
        QComboBox *framework = child<QComboBox>("framework");
        QVERIFY(framework->findData(QStringLiteral("megatron-legacy")) >= 0);
        framework->setCurrentIndex(framework->findData(QStringLiteral("megatron")));
        QVERIFY(fused->isChecked()); // Megatron-Core's --bias-swiglu-fusion
        QVERIFY(!copy->isChecked());
        QComboBox *recompute = child<QComboBox>("recompute"); // every layer's saved tensors kept
        recompute->setCurrentIndex(indexOfData(recompute, int(Recompute::None)));
        const double fusedBytes = activations();
        fused->setChecked(false);
        QCOMPARE(m_doc->plan().memory.fused_swiglu, std::optional<bool>(false));
        QVERIFY(activations() > fusedBytes);
        m_doc->undoStack()->undo();
        QVERIFY(!m_doc->plan().memory.fused_swiglu.has_value());
        QVERIFY(fused->isChecked());
        QCOMPARE(activations(), fusedBytes);
        copy->setChecked(true);
        QCOMPARE(m_doc->plan().memory.flash_output_copy, std::optional<bool>(true));
        QVERIFY(activations() > fusedBytes);
        // Eager attention has no flash kernel: the copy goes with it and cannot be ticked.
        QComboBox *attention = child<QComboBox>("attention");
        attention->setCurrentIndex(indexOfData(attention, int(Attention::Eager)));
        QVERIFY(!m_doc->plan().memory.flash_output_copy.has_value());
        QVERIFY(!copy->isChecked());
        QVERIFY(!copy->isEnabled());
        QVERIFY2(copy->toolTip().contains(QStringLiteral("memory.attention")), qPrintable(copy->toolTip()));
        m_doc->undoStack()->undo();
        QCOMPARE(m_doc->plan().memory.flash_output_copy, std::optional<bool>(true));
        QVERIFY(copy->isEnabled());
        // A GELU model has no SwiGLU to fuse.
        fused->setChecked(false);
        QComboBox *kind = child<QComboBox>("ffnKind");
        kind->setCurrentIndex(indexOfData(kind, int(FfnKind::GELU)));
        QVERIFY(!m_doc->plan().memory.fused_swiglu.has_value());
        QVERIFY(!fused->isChecked());
        QVERIFY(!fused->isEnabled());
        QVERIFY2(fused->toolTip().contains(QStringLiteral("model.ffn")), qPrintable(fused->toolTip()));
    }

    // The training method, its options and the loss head: undoable edits; the options of another
    // method are disabled; the trained count follows.
    void trainingMethod()
    {
        auto *method = child<QComboBox>("method");
        QVERIFY(!child<QSpinBox>("loraRank")->isEnabled());
        QVERIFY(child<QLabel>("trainable")->text().contains(QStringLiteral("6,738,415,616 of 6,738,415,616")));
        method->setCurrentIndex(indexOfData(method, int(TrainingMethod::LoRA)));
        QVERIFY(m_doc->plan().training.method.method == TrainingMethod::LoRA);
        QVERIFY(child<QSpinBox>("loraRank")->isEnabled());
        QVERIFY(!child<QComboBox>("quant")->isEnabled());
        QVERIFY2(child<QLabel>("trainable")->text().contains(QStringLiteral("4,194,304 of")),
                 qPrintable(child<QLabel>("trainable")->text()));
        const double fullPeak = [&] {
            Plan p = m_doc->plan();
            p.training.method.method = TrainingMethod::Full;
            return estimate(p, Catalog::builtin()).memory.peak_bytes;
        }();
        QVERIFY(m_doc->estimate().memory.peak_bytes < fullPeak);
        child<QSpinBox>("loraRank")->setValue(16);
        auto *targets = child<QComboBox>("loraTargets");
        targets->setCurrentIndex(indexOfData(targets, int(kTargetAllLinear)));
        QVERIFY(child<QLabel>("trainable")->text().contains(QStringLiteral("39,976,960 of")));
        child<QCheckBox>("savedModule_head")->setChecked(true);
        QVERIFY(m_doc->plan().training.method.lora.modules_to_save == kPartHead);
        QVERIFY(child<QLabel>("trainable")->text().contains(QStringLiteral("171,048,960 of")));
        method->setCurrentIndex(indexOfData(method, int(TrainingMethod::QLoRA)));
        QVERIFY(child<QComboBox>("quant")->isEnabled());
        method->setCurrentIndex(indexOfData(method, int(TrainingMethod::Freeze)));
        QCOMPARE(m_doc->plan().training.method.freeze.last_layers, 1); // something to train
        QVERIFY(child<QSpinBox>("freezeLayers")->isEnabled());
        QVERIFY(!child<QCheckBox>("freezePart_experts")->isEnabled()); // a dense model
        child<QCheckBox>("freezePart_norms")->setChecked(true);
        QCOMPARE(int(m_doc->plan().training.method.freeze.parts), int(kPartNorms));
        QVERIFY(!child<QCheckBox>("savedModule_head")->isEnabled());
        auto *loss = child<QComboBox>("lossHead");
        loss->setCurrentIndex(indexOfData(loss, int(LossHead::FusedLinear)));
        QVERIFY(m_doc->plan().memory.loss == LossHead::FusedLinear);

        while (m_doc->undoStack()->canUndo())
            m_doc->undoStack()->undo();
        QVERIFY(m_doc->plan().training.method.method == TrainingMethod::Full);
        QCOMPARE(method->currentData().toInt(), int(TrainingMethod::Full));
        QVERIFY(m_doc->plan().memory.loss == LossHead::Framework);
    }

    // What RoPE keeps is chosen in the memory group; a model with a learned position table has
    // none to choose, and the choice goes with the model that had one.
    void ropeChoice()
    {
        auto *rope = child<QComboBox>("rope");
        QVERIFY(rope->isEnabled());
        rope->setCurrentIndex(indexOfData(rope, int(RopeSaves::KeepsInput)));
        QVERIFY(m_doc->plan().memory.rope == RopeSaves::KeepsInput);
        child<QSpinBox>("seqLenEntry")->setValue(4096); // within the GPT's position table
        auto *preset = child<QComboBox>("preset");
        preset->setCurrentIndex(preset->findData(QStringLiteral("megatron-gpt-7b")));
        QVERIFY2(m_doc->plan().model.preset == "megatron-gpt-7b",
                 qPrintable(m_editor->statusText()));
        QVERIFY(m_doc->plan().memory.rope == RopeSaves::Framework);
        QVERIFY(!rope->isEnabled());
        m_doc->undoStack()->undo();
        QVERIFY(m_doc->plan().memory.rope == RopeSaves::KeepsInput);
        QVERIFY(rope->isEnabled());
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
        QVERIFY(slider->maximum() > 50);
        QCOMPARE(slider->maximum() + 1, int(m_editor->sizeShapes().size()));
        // setSliderDown emits sliderPressed / sliderReleased as a mouse drag does.
        slider->setSliderDown(true);
        for (int pos : {10, 15, 20, 26})
            slider->setValue(pos);
        slider->setSliderDown(false);
        QCOMPARE(m_doc->undoStack()->count(), 1);
        QVERIFY(m_doc->plan().model.preset.empty());
        QCOMPARE(countParameters(m_doc->plan().model).total, countParameters(m_editor->sizeShapes().at(26)).total);
        QCOMPARE(slider->value(), 26);
        m_doc->undoStack()->undo();
        QVERIFY(m_doc->plan().model.preset == std::string("llama2-7b"));
    }

    void sliderOffersOnlyShapesTheLayoutAccepts_data()
    {
        QTest::addColumn<int>("tp");
        for (int tp : {1, 2, 4, 8})
            QTest::addRow("tp %d", tp) << tp;
    }

    // At every tp each position of the size slider is a real-looking shape the plan accepts:
    // nothing is refused, and the handle stays where it was put, under a label with its count.
    void sliderOffersOnlyShapesTheLayoutAccepts()
    {
        QFETCH(int, tp);
        auto *tpCombo = child<QComboBox>("tp");
        tpCombo->setCurrentIndex(indexOfData(tpCombo, tp));
        QCOMPARE(m_doc->plan().parallel.tp, tp);
        auto *slider = child<QSlider>("modelSize");
        QVERIFY(slider->maximum() > 50);
        slider->setSliderDown(true);
        for (int pos = slider->minimum(); pos <= slider->maximum(); ++pos) {
            slider->setValue(pos);
            const ModelShape &m = m_doc->plan().model;
            const QString what = QStringLiteral("position %1: %2 heads, %3 kv, status \"%4\"")
                                     .arg(pos).arg(m.heads).arg(m.kv_heads).arg(m_editor->statusText());
            QVERIFY2(m_editor->statusText().isEmpty(), qPrintable(what));
            QCOMPARE(countParameters(m).total, countParameters(m_editor->sizeShapes().at(size_t(pos))).total);
            QVERIFY2(m.heads % 8 == 0 && m.head_dim == 128, qPrintable(what));
            QCOMPARE(slider->value(), pos);
        }
        slider->setSliderDown(false);
        // Released: the handle stays put and the label names the plan's count.
        QCOMPARE(slider->value(), slider->maximum());
        QCOMPARE(m_doc->undoStack()->count(), tp == 1 ? 1 : 2); // the tp change and the one drag
        auto *sizeLabel = child<QLabel>("modelSizeLabel");
        const double n = double(countParameters(m_doc->plan().model).total);
        const QString count = n >= 1e12 ? QString::number(n / 1e12, 'f', 2) : QString::number(n / 1e9, 'f', 1);
        QVERIFY2(sizeLabel->text().contains(count), qPrintable(sizeLabel->text() + QStringLiteral(" / ") + count));
    }

    // A refusal is shown below the form without moving it, and cleared by the next edit.
    void refusalMovesNothingAndClears()
    {
        auto *preset = child<QComboBox>("preset");
        auto *slider = child<QSlider>("modelSize");
        // The form as it settles (the scroll area's first layout is a pixel off) after a first
        // refusal and the edit that clears it.
        auto *schedule = child<QComboBox>("ppSchedule");
        schedule->setCurrentIndex(indexOfData(schedule, int(PpSchedule::Interleaved))); // pp = 1
        QCoreApplication::processEvents();
        child<QSpinBox>("gradAccum")->setValue(2);
        QCoreApplication::processEvents();
        const QPoint before = preset->mapTo(m_editor.get(), QPoint());
        const QPoint sliderBefore = slider->mapTo(m_editor.get(), QPoint());
        schedule->setCurrentIndex(indexOfData(schedule, int(PpSchedule::Interleaved))); // pp = 1
        QVERIFY(!m_editor->statusText().isEmpty());
        auto *status = child<QLabel>("status");
        QVERIFY(status->isVisible());
        QVERIFY(!status->text().isEmpty());
        QCoreApplication::processEvents();
        QCOMPARE(preset->mapTo(m_editor.get(), QPoint()), before);
        QCOMPARE(slider->mapTo(m_editor.get(), QPoint()), sliderBefore);
        // The next accepted edit clears it.
        child<QSpinBox>("gradAccum")->setValue(4);
        QVERIFY(m_editor->statusText().isEmpty());
        QVERIFY(status->text().isEmpty());
        QCOMPARE(preset->mapTo(m_editor.get(), QPoint()), before);
    }

    // A combo narrower than its choice ends it with an ellipsis instead of cutting it off.
    void narrowCombosElide()
    {
        auto *preset = child<QComboBox>("preset");
        const QString full = preset->currentText();
        preset->setMinimumWidth(0);
        preset->setFixedWidth(preset->fontMetrics().horizontalAdvance(full) / 2 + 40);
        QCoreApplication::processEvents();
        QStyleOptionComboBox option;
        option.initFrom(preset);
        const QRect field = preset->style()->subControlRect(QStyle::CC_ComboBox, &option,
                                                             QStyle::SC_ComboBoxEditField, preset);
        const QString elided = preset->fontMetrics().elidedText(full, Qt::ElideRight, field.width() - 2);
        QVERIFY(elided != full && elided.endsWith(QChar(0x2026)));
        const QImage shown = preset->grab().toImage();
        // The same combo holding only the elided text must look the same.
        const int index = preset->currentIndex();
        preset->setItemText(index, elided);
        const QImage expected = preset->grab().toImage();
        preset->setItemText(index, full);
        QVERIFY(shown == expected);
        QCOMPARE(preset->toolTip(), full);
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

    void pipelineScheduleNeedsStagesAndLayers()
    {
        auto *schedule = child<QComboBox>("ppSchedule");
        auto *stages = child<QComboBox>("virtualStages");
        QCOMPARE(schedule->currentData().toInt(), int(PpSchedule::OneFOneB));
        QCOMPARE(stages->currentData().toInt(), 1);
        // pp = 1: no interleaving, and the schedule and the stages say why.
        const int interleaved = indexOfData(schedule, int(PpSchedule::Interleaved));
        QVERIFY(!itemEnabled(schedule, interleaved));
        const QString why = schedule->itemData(interleaved, Qt::ToolTipRole).toString();
        QVERIFY2(why.contains(QStringLiteral("parallel.pp_schedule")), qPrintable(why));
        QVERIFY2(schedule->toolTip().contains(why), qPrintable(schedule->toolTip()));
        QVERIFY(itemEnabled(schedule, indexOfData(schedule, int(PpSchedule::GPipe))));
        QVERIFY(stages->count() > 1);
        for (int i = 0; i < stages->count(); ++i)
            QCOMPARE(itemEnabled(stages, i), stages->itemData(i).toInt() == 1);
        QVERIFY2(stages->toolTip().contains(QStringLiteral("parallel.pp_schedule")),
                 qPrintable(stages->toolTip()));
        // Forcing it anyway is refused with the reason.
        schedule->setCurrentIndex(interleaved);
        QVERIFY(m_doc->plan().parallel.pp_schedule == PpSchedule::OneFOneB);
        QCOMPARE(schedule->currentData().toInt(), int(PpSchedule::OneFOneB));
        QVERIFY2(m_editor->statusText().contains(QStringLiteral("parallel.pp_schedule")),
                 qPrintable(m_editor->statusText()));
        QCOMPARE(m_doc->undoStack()->count(), 0);

        // pp = 2 with one micro-batch: interleaving needs micro-batches divisible by pp.
        auto *pp = child<QComboBox>("pp");
        pp->setCurrentIndex(indexOfData(pp, 2));
        QCOMPARE(m_doc->plan().parallel.pp, 2);
        QVERIFY(!itemEnabled(schedule, interleaved));
        QVERIFY2(schedule->itemData(interleaved, Qt::ToolTipRole)
                     .toString()
                     .contains(QStringLiteral("training.grad_accum")),
                 qPrintable(schedule->itemData(interleaved, Qt::ToolTipRole).toString()));
        child<QSpinBox>("gradAccum")->setValue(4);
        QVERIFY(itemEnabled(schedule, interleaved));

        // 32 layers over 2 stages: 1, 2, 4, 8 or 16 chunks per stage.
        QList<int> offered;
        for (int i = 0; i < stages->count(); ++i)
            offered.append(stages->itemData(i).toInt());
        QCOMPARE(offered, (QList<int>{1, 2, 4, 8, 16}));
        for (int i = 0; i < stages->count(); ++i)
            QVERIFY(itemEnabled(stages, i));

        // Interleaved picks the fewest virtual stages; more stages stay interleaved.
        schedule->setCurrentIndex(interleaved);
        QVERIFY(m_doc->plan().parallel.pp_schedule == PpSchedule::Interleaved);
        QCOMPARE(m_doc->plan().parallel.virtual_stages, 2);
        QCOMPARE(stages->currentData().toInt(), 2);
        stages->setCurrentIndex(indexOfData(stages, 8));
        QCOMPARE(m_doc->plan().parallel.virtual_stages, 8);
        QVERIFY(m_doc->plan().parallel.pp_schedule == PpSchedule::Interleaved);
        // GPipe has no virtual stages.
        schedule->setCurrentIndex(indexOfData(schedule, int(PpSchedule::GPipe)));
        QVERIFY(m_doc->plan().parallel.pp_schedule == PpSchedule::GPipe);
        QCOMPARE(m_doc->plan().parallel.virtual_stages, 1);
        QCOMPARE(stages->currentData().toInt(), 1);
        // Choosing virtual stages turns interleaving on; one stage turns it off.
        stages->setCurrentIndex(indexOfData(stages, 4));
        QVERIFY(m_doc->plan().parallel.pp_schedule == PpSchedule::Interleaved);
        QCOMPARE(m_doc->plan().parallel.virtual_stages, 4);
        QCOMPARE(schedule->currentData().toInt(), int(PpSchedule::Interleaved));
        stages->setCurrentIndex(indexOfData(stages, 1));
        QVERIFY(m_doc->plan().parallel.pp_schedule == PpSchedule::OneFOneB);
        // Interleaved with pp = 1 is not possible.
        stages->setCurrentIndex(indexOfData(stages, 2));
        QVERIFY(!itemEnabled(pp, indexOfData(pp, 1)));
        QVERIFY(pp->itemData(indexOfData(pp, 1), Qt::ToolTipRole)
                    .toString()
                    .contains(QStringLiteral("interleaved")));

        // Undo walks back through each step, and the controls follow.
        QUndoStack *undo = m_doc->undoStack();
        QCOMPARE(undo->count(), 8);
        undo->undo(); // stages 1 -> 2 undone
        QVERIFY(m_doc->plan().parallel.pp_schedule == PpSchedule::OneFOneB);
        QCOMPARE(schedule->currentData().toInt(), int(PpSchedule::OneFOneB));
        QCOMPARE(stages->currentData().toInt(), 1);
        undo->undo();
        undo->undo();
        QVERIFY(m_doc->plan().parallel.pp_schedule == PpSchedule::GPipe);
        QCOMPARE(schedule->currentData().toInt(), int(PpSchedule::GPipe));
        undo->undo();
        QCOMPARE(m_doc->plan().parallel.virtual_stages, 8);
        QCOMPARE(stages->currentData().toInt(), 8);
        QCOMPARE(schedule->currentData().toInt(), int(PpSchedule::Interleaved));
        undo->undo();
        undo->undo();
        QVERIFY(m_doc->plan().parallel.pp_schedule == PpSchedule::OneFOneB);
        QCOMPARE(m_doc->plan().parallel.virtual_stages, 1);
        QCOMPARE(stages->currentData().toInt(), 1);
    }

    // The layer layout over the stages: a pp that does not divide the layers gets Megatron's
    // uneven first and last stages; the list per stage (MindSpeed) and the loss counted as a
    // layer are edits of their own, each undone; a list that is not one is refused.
    void stageLayoutIsOfferedWithUndo()
    {
        Plan odd = m_doc->plan();
        odd.model.layers = 31;
        QVERIFY(m_doc->apply(odd, QStringLiteral("31 layers"), EditId::ModelShape));
        auto *pp = child<QComboBox>("pp");
        auto *list = child<QLineEdit>("stageLayers");
        auto *first = child<QSpinBox>("firstStageLayers");
        auto *last = child<QSpinBox>("lastStageLayers");
        auto *loss = child<QCheckBox>("accountForLoss");
        QVERIFY(!list->isEnabled() && !first->isEnabled() && !loss->isEnabled());
        // pp 2 does not divide 31: offered all the same, as 16 + 15.
        QVERIFY(itemEnabled(pp, indexOfData(pp, 2)));
        pp->setCurrentIndex(indexOfData(pp, 2));
        QCOMPARE(m_doc->plan().parallel.pp, 2);
        QCOMPARE(m_doc->plan().parallel.first_stage_layers, 16);
        QCOMPARE(m_doc->plan().parallel.last_stage_layers, 15);
        QCOMPARE(first->value(), 16);
        QCOMPARE(last->value(), 15);
        QCOMPARE(list->text(), QStringLiteral("16, 15"));
        QVERIFY(list->isEnabled() && loss->isEnabled());

        list->setText(QStringLiteral("15, 16"));
        emit list->editingFinished();
        QCOMPARE(m_doc->plan().parallel.stage_layers, (std::vector<int>{15, 16}));
        QCOMPARE(m_doc->plan().parallel.first_stage_layers, 0);
        QCOMPARE(first->value(), 0);

        // The loss counted: 31 + 1 over 2 stages, the last building 15.
        loss->setChecked(true);
        QVERIFY(m_doc->plan().parallel.account_for_loss);
        QVERIFY(m_doc->plan().parallel.stage_layers.empty());
        QCOMPARE(list->text(), QStringLiteral("16, 15"));

        const int edits = m_doc->undoStack()->count();
        list->setText(QStringLiteral("16, x"));
        emit list->editingFinished();
        QCOMPARE(m_doc->undoStack()->count(), edits);
        QVERIFY(m_editor->statusText().contains(QStringLiteral("one per stage")));

        QUndoStack *undo = m_doc->undoStack();
        undo->undo();
        QVERIFY(!m_doc->plan().parallel.account_for_loss);
        QCOMPARE(m_doc->plan().parallel.stage_layers, (std::vector<int>{15, 16}));
        QVERIFY(!loss->isChecked());
        undo->undo();
        QCOMPARE(m_doc->plan().parallel.first_stage_layers, 16);
        QCOMPARE(list->text(), QStringLiteral("16, 15"));
        undo->undo();
        QCOMPARE(m_doc->plan().parallel.pp, 1);
        QVERIFY(!m_doc->plan().parallel.customLayout());
    }

    void mixtureOfExperts()
    {
        auto *moe = child<QCheckBox>("moe");
        auto *experts = child<QSpinBox>("moeExperts");
        auto *topK = child<QSpinBox>("moeTopK");
        auto *expertFfn = child<QSpinBox>("moeExpertFfn");
        // Dense: the expert fields are off and say so.
        QVERIFY(!moe->isChecked());
        QVERIFY(moe->isEnabled());
        QVERIFY(!experts->isEnabled() && !topK->isEnabled() && !expertFfn->isEnabled());
        QVERIFY(experts->toolTip().contains(QStringLiteral("mixture of experts")));
        // A dense model has no experts to edit: the plan and its preset stay.
        topK->setValue(3);
        QVERIFY(!m_doc->plan().model.moe.enabled());
        QCOMPARE(m_doc->plan().model.preset, std::string("llama2-7b"));
        QCOMPARE(topK->value(), 2);
        QCOMPARE(m_doc->undoStack()->count(), 0);

        moe->setChecked(true);
        const ModelShape &m = m_doc->plan().model;
        QVERIFY(m_doc->plan().model.moe.enabled());
        QCOMPARE(m.moe.experts, 8);
        QCOMPARE(m.moe.top_k, 2);
        QCOMPARE(m.moe.expert_ffn_hidden, int64_t(11008));
        // The preset's shape is edited: it is a custom shape now.
        QVERIFY(m_doc->plan().model.preset.empty());
        QCOMPARE(child<QComboBox>("preset")->currentData().toString(), QString());
        QVERIFY(experts->isEnabled() && topK->isEnabled() && expertFfn->isEnabled());

        experts->setValue(16);
        QCOMPARE(m_doc->plan().model.moe.experts, 16);
        topK->setValue(4);
        QCOMPARE(m_doc->plan().model.moe.top_k, 4);
        expertFfn->setValue(2048);
        QCOMPARE(m_doc->plan().model.moe.expert_ffn_hidden, int64_t(2048));

        // More experts per token than experts: refused with the rule.
        topK->setValue(17);
        QCOMPARE(m_doc->plan().model.moe.top_k, 4);
        QCOMPARE(topK->value(), 4);
        QVERIFY2(m_editor->statusText().contains(QStringLiteral("model.moe.top_k")),
                 qPrintable(m_editor->statusText()));

        // ep is possible now; with ep = 4 the experts cannot drop to 6, nor MoE be turned off.
        auto *ep = child<QComboBox>("ep");
        QVERIFY(itemEnabled(ep, indexOfData(ep, 4)));
        ep->setCurrentIndex(indexOfData(ep, 4));
        QCOMPARE(m_doc->plan().parallel.ep, 4);
        experts->setValue(6);
        QCOMPARE(m_doc->plan().model.moe.experts, 16);
        QVERIFY2(m_editor->statusText().contains(QStringLiteral("parallel.ep")),
                 qPrintable(m_editor->statusText()));
        QVERIFY(!moe->isEnabled());
        QVERIFY2(moe->toolTip().contains(QStringLiteral("parallel.ep")),
                 qPrintable(moe->toolTip()));

        QUndoStack *undo = m_doc->undoStack();
        QCOMPARE(undo->count(), 5);
        undo->undo();
        QVERIFY(moe->isEnabled());
        undo->undo();
        QCOMPARE(expertFfn->value(), 11008);
        undo->undo();
        QCOMPARE(topK->value(), 2);
        undo->undo();
        QCOMPARE(experts->value(), 8);
        undo->undo();
        QVERIFY(!m_doc->plan().model.moe.enabled());
        QVERIFY(!moe->isChecked());
        QVERIFY(!experts->isEnabled());
        QCOMPARE(m_doc->plan().model.preset, std::string("llama2-7b"));
        QCOMPARE(child<QComboBox>("preset")->currentData().toString(), QStringLiteral("llama2-7b"));

        // Turning MoE off again makes the model dense.
        auto *preset = child<QComboBox>("preset");
        preset->setCurrentIndex(preset->findData(QStringLiteral("mixtral-8x7b")));
        QVERIFY(moe->isChecked());
        QCOMPARE(experts->value(), 8);
        QCOMPARE(expertFfn->value(), 14336);
        moe->setChecked(false);
        QVERIFY(!m_doc->plan().model.moe.enabled());
        QVERIFY(m_doc->plan().model.preset.empty());
    }

    void ffnKind()
    {
        auto *kind = child<QComboBox>("ffnKind");
        QCOMPARE(kind->currentData().toInt(), int(FfnKind::SwiGLU));
        const int64_t swiglu = countParameters(m_doc->plan().model).total;
        kind->setCurrentIndex(indexOfData(kind, int(FfnKind::GELU)));
        QVERIFY(m_doc->plan().model.ffn == FfnKind::GELU);
        QVERIFY(m_doc->plan().model.preset.empty());
        QVERIFY(countParameters(m_doc->plan().model).total < swiglu);
        QCOMPARE(child<QComboBox>("preset")->currentData().toString(), QString());
        m_doc->undoStack()->undo();
        QVERIFY(m_doc->plan().model.ffn == FfnKind::SwiGLU);
        QCOMPARE(kind->currentData().toInt(), int(FfnKind::SwiGLU));
        QCOMPARE(m_doc->plan().model.preset, std::string("llama2-7b"));
        // A GELU preset shows as GELU. GPT-2's learned position table has 1024 rows: at the
        // plan's 32K tokens the preset is refused, naming the sequence length.
        auto *preset = child<QComboBox>("preset");
        preset->setCurrentIndex(preset->findData(QStringLiteral("gpt2-xl")));
        QCOMPARE(m_doc->plan().model.preset, std::string("llama2-7b"));
        Plan shorter = m_doc->plan();
        shorter.training.seq_len = 1024;
        QVERIFY(m_doc->apply(shorter, QStringLiteral("test")));
        preset->setCurrentIndex(preset->findData(QStringLiteral("gpt2-xl")));
        QCOMPARE(m_doc->plan().model.preset, std::string("gpt2-xl"));
        QCOMPARE(kind->currentData().toInt(), int(FfnKind::GELU));
    }

    void newControlsFollowTheDocument()
    {
        Plan p = m_doc->plan();
        p.model = *m_doc->catalog().model("mixtral-8x7b");
        p.model.preset = "mixtral-8x7b";
        p.model.ffn = FfnKind::GELU;
        p.training.grad_accum = 4;
        p.parallel.pp = 2;
        p.parallel.dp = 4;
        p.parallel.ep = 2;
        p.parallel.pp_schedule = PpSchedule::Interleaved;
        p.parallel.virtual_stages = 4;
        QVERIFY(m_doc->apply(p, QStringLiteral("test")));
        QCOMPARE(child<QComboBox>("ppSchedule")->currentData().toInt(),
                 int(PpSchedule::Interleaved));
        QCOMPARE(child<QComboBox>("virtualStages")->currentData().toInt(), 4);
        QCOMPARE(child<QComboBox>("ffnKind")->currentData().toInt(), int(FfnKind::GELU));
        QVERIFY(child<QCheckBox>("moe")->isChecked());
        QCOMPARE(child<QSpinBox>("moeExperts")->value(), 8);
        QCOMPARE(child<QSpinBox>("moeTopK")->value(), 2);
        QCOMPARE(child<QSpinBox>("moeExpertFfn")->value(), 14336);

        // A document reset (as a load does) puts them back.
        Plan dense = p;
        dense.model = *m_doc->catalog().model("llama2-7b");
        dense.model.preset = "llama2-7b";
        dense.parallel.ep = 1;
        dense.parallel.pp_schedule = PpSchedule::GPipe;
        dense.parallel.virtual_stages = 1;
        m_doc->reset(dense);
        QCOMPARE(child<QComboBox>("ppSchedule")->currentData().toInt(), int(PpSchedule::GPipe));
        QCOMPARE(child<QComboBox>("virtualStages")->currentData().toInt(), 1);
        QCOMPARE(child<QComboBox>("ffnKind")->currentData().toInt(), int(FfnKind::SwiGLU));
        QVERIFY(!child<QCheckBox>("moe")->isChecked());
        QVERIFY(!child<QSpinBox>("moeExperts")->isEnabled());
    }

    // The 2025-26 shape fields: MLA, MoE extras, etp and dropout edit the plan, one undo each;
    // a field that does not apply is disabled.
    void shapeFieldsEditThePlan()
    {
        auto *kind = child<QComboBox>("attentionKind");
        QVERIFY(!child<QSpinBox>("mlaKvLoraRank")->isEnabled());
        kind->setCurrentIndex(kind->findData(int(AttentionKind::MLA)));
        QVERIFY(m_doc->plan().model.mla_attention());
        QCOMPARE(m_doc->plan().model.head_dim, int64_t(192));
        QCOMPARE(m_doc->plan().model.kv_heads, m_doc->plan().model.heads);
        auto *kvRank = child<QSpinBox>("mlaKvLoraRank");
        QVERIFY(kvRank->isEnabled());
        QVERIFY(!child<QCheckBox>("qkNorm")->isEnabled());
        kvRank->setValue(256);
        QCOMPARE(m_doc->plan().model.mla.kv_lora_rank, int64_t(256));
        m_doc->undoStack()->undo();
        QCOMPARE(m_doc->plan().model.mla.kv_lora_rank, int64_t(512));
        m_doc->undoStack()->undo();
        QVERIFY(!m_doc->plan().model.mla_attention());
        QCOMPARE(m_doc->plan().model.preset, std::string("llama2-7b"));

        // MoE: shared experts, dense first layers, a capacity factor (which turns the
        // imbalance margin off), the dispatcher.
        child<QCheckBox>("moe")->setChecked(true);
        QVERIFY(child<QSpinBox>("moeShared")->isEnabled());
        QVERIFY(!child<QSpinBox>("moeSharedFfn")->isEnabled());
        child<QSpinBox>("moeShared")->setValue(2);
        QCOMPARE(m_doc->plan().model.moe.shared_experts, 2);
        QVERIFY(child<QSpinBox>("moeSharedFfn")->isEnabled());
        child<QSpinBox>("moeFirstDense")->setValue(1);
        QCOMPARE(m_doc->plan().model.moeLayers(), m_doc->plan().model.layers - 1);
        child<QDoubleSpinBox>("moeCapacity")->setValue(1.25);
        QCOMPARE(m_doc->plan().model.moe.capacity_factor, 1.25);
        QVERIFY(!child<QDoubleSpinBox>("moeImbalance")->isEnabled());
        auto *dispatcher = child<QComboBox>("moeDispatcher");
        dispatcher->setCurrentIndex(dispatcher->findData(int(MoeShape::Dispatcher::AllGather)));
        QVERIFY(m_doc->plan().model.moe.dispatcher == MoeShape::Dispatcher::AllGather);

        // Dropout: the lowest value is the framework profile's.
        auto *hidden = child<QDoubleSpinBox>("dropoutHidden");
        QCOMPARE(hidden->value(), hidden->minimum());
        hidden->setValue(0.1);
        QCOMPARE(m_doc->plan().training.dropout.hidden, 0.1);
        hidden->setValue(hidden->minimum());
        QVERIFY(m_doc->plan().training.dropout.hidden < 0);

        // Positions: a learned table enables its size; the sequence must fit it.
        auto *positions = child<QComboBox>("positionEmbedding");
        QVERIFY(!child<QSpinBox>("maxPositions")->isEnabled());
        Plan shorter = m_doc->plan();
        shorter.training.seq_len = 4096;
        QVERIFY(m_doc->apply(shorter, QStringLiteral("test")));
        positions->setCurrentIndex(positions->findData(int(PositionEmbedding::Learned)));
        QVERIFY(m_doc->plan().model.position_embedding == PositionEmbedding::Learned);
        QVERIFY(child<QSpinBox>("maxPositions")->isEnabled());
        QCOMPARE(m_doc->plan().model.max_positions, int64_t(4096));
    }

    // Expert tensor parallelism: "as tp" or a degree; one that cannot tile the stage is
    // offered disabled with the reason.
    void etpCombo()
    {
        Plan p = m_doc->plan();
        p.model = *m_doc->catalog().model("mixtral-8x7b");
        p.parallel.ep = 2;
        QVERIFY(m_doc->apply(p, QStringLiteral("test")));
        auto *etp = child<QComboBox>("etp");
        QCOMPARE(etp->currentData().toInt(), 0);
        QCOMPARE(etp->itemText(0), QStringLiteral("as tp"));
        etp->setCurrentIndex(etp->findData(2));
        QCOMPARE(m_doc->plan().parallel.etp, 2);
        // ep 2 x etp 8 = 16 does not divide dp x cp x tp = 8.
        auto *model = qobject_cast<QStandardItemModel *>(etp->model());
        QVERIFY(model);
        QVERIFY(!model->item(etp->findData(8))->isEnabled());
        QVERIFY(model->item(etp->findData(8))->toolTip().contains(QStringLiteral("parallel.etp")));
    }

    // Context-parallel algorithms: ring, Ulysses and the hybrid with its group; one the heads
    // cannot take is offered disabled with the engine's reason.
    void cpAlgorithmCombo()
    {
        Plan p = m_doc->plan();
        p.parallel.dp = 1;
        p.parallel.cp = 8;
        QVERIFY(m_doc->apply(p, QStringLiteral("test")));
        auto *algo = child<QComboBox>("cpAlgo");
        auto *group = child<QComboBox>("ulyssesDegree");
        QVERIFY(!group->isEnabled());
        algo->setCurrentIndex(algo->findData(int(CpAlgo::Ulysses)));
        QVERIFY(m_doc->plan().parallel.cp_algo == CpAlgo::Ulysses);
        algo->setCurrentIndex(algo->findData(int(CpAlgo::Hybrid)));
        QCOMPARE(m_doc->plan().parallel.ulysses_degree, 2);
        QVERIFY(group->isEnabled());
        QCOMPARE(group->count(), 2); // 2 and 4 (below cp 8)
        group->setCurrentIndex(group->findData(4));
        QCOMPARE(m_doc->plan().parallel.ulysses_degree, 4);
        m_doc->undoStack()->undo();
        QCOMPARE(m_doc->plan().parallel.ulysses_degree, 2);
        // Four KV heads cannot be split over a Ulysses group of 8.
        Plan gqa = m_doc->plan();
        gqa.parallel.cp_algo = CpAlgo::Ring;
        gqa.parallel.ulysses_degree = 0;
        gqa.model.kv_heads = 4;
        gqa.model.preset.clear();
        QVERIFY(m_doc->apply(gqa, QStringLiteral("test")));
        auto *model = qobject_cast<QStandardItemModel *>(algo->model());
        const QStandardItem *ulysses = model->item(algo->findData(int(CpAlgo::Ulysses)));
        QVERIFY(!ulysses->isEnabled());
        QVERIFY2(ulysses->toolTip().contains(QStringLiteral("kv_heads / tp")), qPrintable(ulysses->toolTip()));
    }

    // MindSpeed-LLM's K/V repeat before Ulysses' all-to-all: the profile's default under
    // megatron, shown with Ulysses and the hybrid only; with four KV heads over eight Ulysses
    // ranks it cannot be turned off, and the engine says why.
    void ulyssesKvRepeatBox()
    {
        Plan p = m_doc->plan();
        p.framework = "megatron";
        p.parallel.dp = 1;
        p.parallel.cp = 8;
        p.model.kv_heads = 4;
        p.model.preset.clear();
        QVERIFY(m_doc->apply(p, QStringLiteral("test")));
        auto *box = child<QCheckBox>("ulyssesKvRepeat");
        auto *algo = child<QComboBox>("cpAlgo");
        QVERIFY(!box->isEnabled());
        QVERIFY(!box->isChecked());
        QVERIFY2(box->toolTip().contains(QStringLiteral("Ulysses and hybrid")),
                 qPrintable(box->toolTip()));
        auto *model = qobject_cast<QStandardItemModel *>(algo->model());
        QVERIFY(model->item(algo->findData(int(CpAlgo::Ulysses)))->isEnabled());
        algo->setCurrentIndex(algo->findData(int(CpAlgo::Ulysses)));
        QVERIFY(m_doc->plan().parallel.cp_algo == CpAlgo::Ulysses);
        QVERIFY(box->isChecked());
        QVERIFY(!box->isEnabled());
        QVERIFY2(box->toolTip().contains(QStringLiteral("kv_heads / tp")),
                 qPrintable(box->toolTip()));
        // Eight KV heads split over eight ranks as they are: the repeat can go.
        Plan eight = m_doc->plan();
        eight.model.kv_heads = 8;
        QVERIFY(m_doc->apply(eight, QStringLiteral("test")));
        QVERIFY(box->isEnabled());
        box->setChecked(false);
        QVERIFY(m_doc->plan().parallel.ulysses_kv_repeat == std::optional<bool>(false));
        m_doc->undoStack()->undo();
        QVERIFY(!m_doc->plan().parallel.ulysses_kv_repeat.has_value());
        QVERIFY(box->isChecked());
        // As many KV heads as query heads: nothing to repeat.
        Plan mha = m_doc->plan();
        mha.model.kv_heads = mha.model.heads;
        QVERIFY(m_doc->apply(mha, QStringLiteral("test")));
        QVERIFY(!box->isEnabled());
        QVERIFY2(box->toolTip().contains(QStringLiteral("No effect")), qPrintable(box->toolTip()));
    }

    // Megatron's recompute method and layers under full recompute; MindSpeed's finer recomputes
    // otherwise.
    void recomputeOptions()
    {
        auto *recompute = child<QComboBox>("recompute");
        recompute->setCurrentIndex(recompute->findData(int(Recompute::Full)));
        auto *method = child<QComboBox>("recomputeMethod");
        QVERIFY(method->isEnabled());
        QVERIFY(!child<QCheckBox>("recomputeNorm")->isEnabled());
        method->setCurrentIndex(method->findData(int(RecomputeMethod::Block)));
        child<QSpinBox>("recomputeLayers")->setValue(8);
        QVERIFY(m_doc->plan().memory.recompute_method == RecomputeMethod::Block);
        QCOMPARE(m_doc->plan().memory.recompute_num_layers, 8);
        recompute->setCurrentIndex(recompute->findData(int(Recompute::Selective)));
        QCOMPARE(m_doc->plan().memory.recompute_num_layers, 1);
        QVERIFY(!method->isEnabled());
        child<QCheckBox>("recomputeActivation")->setChecked(true);
        QVERIFY(m_doc->plan().memory.recompute_activation_function);
        m_doc->undoStack()->undo();
        QVERIFY(!m_doc->plan().memory.recompute_activation_function);
    }

    void keyboardReachesTheNewControls()
    {
        // Every new field has a label whose buddy it is, and Tab reaches it in reading order.
        for (const char *name :
             {"ffnKind", "moeExperts", "moeTopK", "moeExpertFfn", "ppSchedule", "virtualStages",
              "attentionKind", "mlaQLoraRank", "mlaKvLoraRank", "mlaQkNope", "mlaQkRope", "mlaVHead",
              "normKind", "positionEmbedding", "maxPositions", "mtpLayers", "moeShared", "moeSharedFfn",
              "moeFirstDense", "moeLayerFreq", "moeCapacity", "moeImbalance", "moeDispatcher", "etp",
              "dropoutHidden", "dropoutAttention"}) {
            QWidget *w = child<QWidget>(name);
            bool labelled = false;
            for (QLabel *label : m_editor->findChildren<QLabel *>())
                labelled = labelled || label->buddy() == w;
            QVERIFY2(labelled, name);
        }
        // Enable the expert fields so that Tab stops on them.
        child<QCheckBox>("moe")->setChecked(true);
        const std::vector<std::vector<const char *>> chains = {
            {"headDim", "ffnKind", "ffnHidden", "vocab", "attentionKind", "qkNorm", "normKind",
             "linearBias", "positionEmbedding", "mtpLayers", "moe", "moeExperts", "moeTopK",
             "moeExpertFfn", "moeShared", "moeFirstDense", "moeLayerFreq", "moeCapacity",
             "moeImbalance", "moeRouterFp32", "moeDispatcher", "seqLen"},
            {"pp", "ppSchedule", "virtualStages", "cp"},
        };
        for (const auto &chain : chains) {
            QWidget *w = child<QWidget>(chain.front());
            for (size_t i = 1; i < chain.size(); ++i) {
                QWidget *next = child<QWidget>(chain[i]);
                QWidget *n = w->nextInFocusChain();
                // Skip what cannot take Tab focus and the inner parts of the widget (a spin box's
                // line edit).
                while (n != next && (w->isAncestorOf(n) || !(n->focusPolicy() & Qt::TabFocus) ||
                                     !n->isEnabled() || !n->isVisibleTo(m_editor.get())))
                    n = n->nextInFocusChain();
                QVERIFY2(n == next, qPrintable(QStringLiteral("after %1 Tab reaches %2, not %3")
                                                   .arg(w->objectName(), n->objectName(),
                                                        next->objectName())));
                w = next;
            }
        }
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
