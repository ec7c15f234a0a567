#include "teachingpanel.h"

#include "core/catalog.h"
#include "core/errors.h"
#include "plandocument.h"

#include <QComboBox>
#include <QDockWidget>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QTextBrowser>
#include <QVBoxLayout>

namespace shardscope {

namespace {

QString html(const QString &text)
{
    return text.toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("<br>"));
}

} // namespace

TeachingPanel::TeachingPanel(PlanDocument *document, QWidget *parent)
    : QWidget(parent), m_document(document), m_title(new QLabel(this)),
      m_list(new QListWidget(this)), m_text(new QTextBrowser(this)),
      m_previous(new QPushButton(this)), m_next(new QPushButton(this)),
      m_answerRow(new QWidget(this)), m_choices(new QComboBox(m_answerRow)),
      m_answer(new QLineEdit(m_answerRow)), m_check(new QPushButton(m_answerRow)),
      m_feedback(new QLabel(this))
{
    setObjectName(QStringLiteral("TeachingPanel"));
    m_title->setWordWrap(true);
    QFont bold = m_title->font();
    bold.setBold(true);
    m_title->setFont(bold);
    m_list->setMaximumHeight(m_list->fontMetrics().height() * 8);
    m_list->setWordWrap(true);
    m_text->setOpenLinks(false);
    m_feedback->setWordWrap(true);
    m_feedback->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto *answer = new QHBoxLayout(m_answerRow);
    answer->setContentsMargins(0, 0, 0, 0);
    answer->addWidget(m_choices, 1);
    answer->addWidget(m_answer, 1);
    answer->addWidget(m_check);

    auto *nav = new QHBoxLayout;
    nav->addWidget(m_previous);
    nav->addStretch(1);
    nav->addWidget(m_next);

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_title);
    layout->addWidget(m_list);
    layout->addWidget(m_text, 1);
    layout->addWidget(m_answerRow);
    layout->addWidget(m_feedback);
    layout->addLayout(nav);

    connect(m_list, &QListWidget::currentRowChanged, this, [this](int row) {
        if (row >= 0 && row != m_current)
            showItem(row);
    });
    connect(m_previous, &QPushButton::clicked, this, [this] { showItem(m_current - 1); });
    connect(m_next, &QPushButton::clicked, this, [this] { showItem(m_current + 1); });
    connect(m_check, &QPushButton::clicked, this, [this] {
        checkAnswer(m_answer->isVisible() ? m_answer->text() : m_choices->currentData().toString());
    });
    connect(m_answer, &QLineEdit::returnPressed, m_check, &QPushButton::click);

    reload();
    retranslate();
}

TeachingPanel::~TeachingPanel() = default;

QString TeachingPanel::title()
{
    return tr("Teaching");
}

int TeachingPanel::itemCount() const
{
    return int(m_lesson.steps.size() + m_lesson.exercises.size());
}

void TeachingPanel::reload()
{
    m_loadError.clear();
    try {
        m_lesson = Lesson::hcieAi(m_document->catalog());
    } catch (const PlanError &e) {
        m_lesson = Lesson{};
        m_loadError = QString::fromUtf8(e.what());
    }
}

void TeachingPanel::retranslate()
{
    m_previous->setText(tr("Previous"));
    m_next->setText(tr("Next"));
    m_check->setText(tr("Check"));
    m_answer->setPlaceholderText(tr("Answer in GiB"));
    m_title->setText(m_loadError.isEmpty() ? m_lesson.title : tr("The lesson cannot be loaded"));
    if (auto *dock = qobject_cast<QDockWidget *>(parentWidget()))
        dock->setWindowTitle(title());
    fillList();
    render();
}

void TeachingPanel::fillList()
{
    const QSignalBlocker block(m_list);
    m_list->clear();
    for (const LessonStep &s : m_lesson.steps)
        m_list->addItem(s.title);
    for (const Exercise &x : m_lesson.exercises)
        m_list->addItem(x.title);
    m_list->setCurrentRow(m_current);
}

void TeachingPanel::showItem(int index)
{
    if (index < 0 || index >= itemCount())
        return;
    m_current = index;
    const int steps = int(m_lesson.steps.size());
    const Plan &plan = index < steps ? m_lesson.steps[size_t(index)].plan
                                     : m_lesson.exercises[size_t(index - steps)].plan;
    const QString title = index < steps ? m_lesson.steps[size_t(index)].title
                                        : m_lesson.exercises[size_t(index - steps)].title;
    if (planToJson(plan) != planToJson(m_document->plan()))
        m_document->apply(plan, tr("Teaching: %1").arg(title));
    m_feedback->clear();
    m_answer->clear();
    {
        const QSignalBlocker block(m_list);
        m_list->setCurrentRow(index);
    }
    render();
}

void TeachingPanel::render()
{
    const int steps = int(m_lesson.steps.size());
    m_previous->setEnabled(m_current > 0);
    m_next->setEnabled(m_current + 1 < itemCount());
    m_answerRow->setVisible(false);
    if (!m_loadError.isEmpty()) {
        m_text->setHtml(html(m_loadError));
        return;
    }
    if (m_current < 0) {
        m_text->setHtml(
            QStringLiteral("<p>%1</p>")
                .arg(html(tr("A guided walkthrough of the HCIE-AI case. Each step puts its "
                             "plan in the workbench (undo returns to yours) and cites the "
                             "engine's numbers with their formulas. Choose a step to begin."))));
        return;
    }
    QString out;
    if (m_current < steps) {
        const LessonStep &s = m_lesson.steps[size_t(m_current)];
        out += QStringLiteral("<h3>%1</h3><p>%2</p>").arg(html(s.title), html(s.body));
        if (!s.note.isEmpty()) {
            out += QStringLiteral("<p><b>%1</b><br>%2</p>")
                       .arg(html(tr("Where the case's rough accounting and the engine differ")),
                            html(s.note));
        }
        out += QStringLiteral("<p><b>%1</b></p><table cellspacing=\"2\">")
                   .arg(html(tr("The numbers and their formulas")));
        for (const Citation &c : s.citations) {
            out += QStringLiteral("<tr><td><b>%1</b></td><td><small>%2</small></td></tr>")
                       .arg(html(c.text), html(c.formula));
        }
        out += QStringLiteral("</table>");
    } else {
        const Exercise &x = m_lesson.exercises[size_t(m_current - steps)];
        out += QStringLiteral("<h3>%1</h3><p>%2</p>").arg(html(x.title), html(x.question));
        m_answerRow->setVisible(true);
        m_choices->clear();
        m_answer->setVisible(x.kind == Exercise::Kind::Number);
        m_choices->setVisible(x.kind != Exercise::Kind::Number);
        if (x.kind == Exercise::Kind::Choice) {
            for (const QString &c : x.choices)
                m_choices->addItem(c, c);
            m_choices->addItem(tr("none of these"), QStringLiteral("none"));
        } else if (x.kind == Exercise::Kind::Fits) {
            m_choices->addItem(tr("yes"), QStringLiteral("yes"));
            m_choices->addItem(tr("no"), QStringLiteral("no"));
        }
    }
    m_text->setHtml(out);
}

ExerciseCheck TeachingPanel::checkAnswer(const QString &answer)
{
    const int steps = int(m_lesson.steps.size());
    if (m_current < steps || m_current >= itemCount())
        return {};
    const ExerciseCheck r = m_lesson.exercises[size_t(m_current - steps)].check(answer);
    m_feedback->setText(r.feedback);
    return r;
}

QString TeachingPanel::currentText() const
{
    return m_text->toPlainText();
}

void TeachingPanel::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::LanguageChange) {
        reload();
        retranslate();
    }
    QWidget::changeEvent(event);
}

} // namespace shardscope
