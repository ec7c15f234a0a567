#include "manualdialog.h"

#include "qstrings.h"

#include "core/catalog.h"

#include <QDialogButtonBox>
#include <QDir>
#include <QFileInfo>
#include <QTextBrowser>
#include <QUrl>
#include <QVBoxLayout>

namespace shardscope {

ManualDialog::ManualDialog(QWidget *parent) : QDialog(parent), m_browser(new QTextBrowser(this))
{
    setObjectName(QStringLiteral("manualDialog"));
    setWindowTitle(tr("ShardScope manual and glossary"));
    m_browser->setObjectName(QStringLiteral("manual"));
    // The documents open in the desktop's viewer for Markdown (or text).
    m_browser->setOpenExternalLinks(true);
    m_browser->setHtml(html(docsDirectory()));
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_browser);
    layout->addWidget(buttons);
    resize(760, 640);
}

ManualDialog::~ManualDialog() = default;

QString ManualDialog::docsDirectory()
{
    const QString env = qEnvironmentVariable("SHARDSCOPE_DOCS_DIR");
    const QString data = qs(locateDataDir());
    const QStringList candidates{env, data.isEmpty() ? QString() : data + QStringLiteral("/../docs"),
                                 data.isEmpty() ? QString() : data + QStringLiteral("/../doc/shardscope")};
    for (const QString &dir : candidates) {
        if (!dir.isEmpty() && QFileInfo::exists(dir + QStringLiteral("/memory-model.md")))
            return QDir(dir).absolutePath();
    }
    return {};
}

QString ManualDialog::html(const QString &docsDir)
{
    auto h = [](const QString &text) { return QStringLiteral("<h3>%1</h3>").arg(text.toHtmlEscaped()); };
    auto p = [](const QString &text) { return QStringLiteral("<p>%1</p>").arg(text.toHtmlEscaped()); };
    auto term = [](const QString &name, const QString &meaning) {
        return QStringLiteral("<dt><b>%1</b></dt><dd>%2</dd>").arg(name.toHtmlEscaped(), meaning.toHtmlEscaped());
    };
    QString out;
    out += h(tr("What the window shows"));
    out += p(tr("Plan (left): the model, the sequence and batch, the training method, the dtypes, the "
                "parallel layout, the memory switches and the cluster. Every change is an undoable edit "
                "(Ctrl+Z, also while a field has the focus); a choice the engine would refuse is "
                "disabled and its tooltip gives the reason."));
    out += p(tr("Centre: what the plan is, derived from it, and whether it fits; then one stacked bar "
                "per rank against the HBM capacity and the usable line. Hover a segment for its bytes and "
                "its formula. The second tab shows one kind of rank over the allocations of a step."));
    out += p(tr("Below: the step's collectives and its time; Compare, for plans pinned side by side "
                "against a baseline; Search, for the layouts of the current model and cluster; the kernel "
                "runner, which measures the plan's kernels on this machine."));
    out += h(tr("Glossary"));
    out += QStringLiteral("<dl>");
    out += term(tr("dp, tp, pp, cp, ep"),
                tr("Data, tensor, pipeline, context (sequence) and expert parallel degrees; dp fills the "
                   "rest of the world: world = dp x tp x pp x cp."));
    out += term(tr("SP"), tr("Megatron sequence parallelism: with tp, norms and residuals are split over "
                             "the tp group too."));
    out += term(tr("DDP, ZeRO-1, ZeRO-2, ZeRO-3 / FSDP"),
                tr("Data parallelism with every state replicated; then sharded optimizer states; plus "
                   "gradients; plus parameters (gathered layer by layer). The states are sharded over "
                   "dp x cp ranks."));
    out += term(tr("Micro-batch, accumulation"),
                tr("Sequences per forward and backward; micro-batches per optimizer step and DP rank."));
    out += term(tr("Recompute"), tr("Activation checkpointing: activations are recomputed in the "
                                    "backward instead of kept (selective: the attention core; full: "
                                    "one checkpoint per layer)."));
    out += term(tr("Offload"), tr("States or activations kept in host memory and moved over PCIe."));
    out += term(tr("Runtime reserve"),
                tr("Device memory held outside the framework's allocations: the runtime context, the "
                   "collective buffers and what the caching allocator reserves beyond what is allocated."));
    out += term(tr("Usable"), tr("HBM minus the runtime reserve: what the framework can allocate."));
    out += term(tr("Peak allocated, reserved"),
                tr("The most the framework holds at one moment of a step, and what the caching "
                   "allocator has taken from the device to serve it."));
    out += term(tr("Exposed communication, bubble"),
                tr("Collective time not hidden behind compute, and the pipeline's idle time at the "
                   "start and end of a step."));
    out += term(tr("Tokens/s, MFU, HFU"),
                tr("Throughput of the whole cluster; model FLOPs per second over the devices' peak "
                   "(MFU), and the same with recomputation counted (HFU)."));
    out += term(tr("Baseline"), tr("In Compare, the pinned plan the others are measured against."));
    out += QStringLiteral("</dl>");

    out += h(tr("Documentation"));
    const std::pair<const char *, QString> docs[] = {
        {"memory-model.md", tr("the memory model: every component, its formula and its sources")},
        {"communication.md", tr("collectives, step time and the layout search")},
        {"plan-format.md", tr("plan files and the command line's output")},
        {"runner-protocol.md", tr("the kernel runner and its worker")},
    };
    out += QStringLiteral("<ul>");
    for (const auto &[file, what] : docs) {
        const QString name = QLatin1String(file);
        const QString path = docsDir.isEmpty() ? QString() : docsDir + QLatin1Char('/') + name;
        const QString link = !path.isEmpty() && QFileInfo::exists(path)
                                 ? QStringLiteral("<a href=\"%1\">%2</a>")
                                       .arg(QUrl::fromLocalFile(path).toString(QUrl::FullyEncoded), name)
                                 : name;
        out += QStringLiteral("<li>%1: %2</li>").arg(link, what.toHtmlEscaped());
    }
    out += QStringLiteral("</ul>");
    if (docsDir.isEmpty())
        out += p(tr("These files are in the docs/ folder of ShardScope's source."));
    return out;
}

} // namespace shardscope
