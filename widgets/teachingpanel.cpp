#include "teachingpanel.h"

#include "core/catalog.h"
#include "core/errors.h"
#include "plandocument.h"

#include <QButtonGroup>
#include <QRadioButton>
#include <QDockWidget>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QResizeEvent>
#include <QSplitter>
#include <QTextBrowser>
#include <QVBoxLayout>
#include <algorithm>

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
      m_answerRow(new QWidget(this)), m_choices(new QWidget(m_answerRow)),
      m_choiceGroup(new QButtonGroup(this)),
      m_answer(new QLineEdit(m_answerRow)), m_check(new QPushButton(m_answerRow)),
      m_feedback(new QLabel(this))
{
    setObjectName(QStringLiteral("TeachingPanel"));
    m_title->setWordWrap(true);
    QFont bold = m_title->font();
    bold.setBold(true);
    m_title->setFont(bold);
    m_list->setWordWrap(true);
    m_list->setMinimumHeight(m_list->fontMetrics().height() * 3);
    m_text->setOpenLinks(false);
    m_feedback->setWordWrap(true);
    m_feedback->setTextInteractionFlags(Qt::TextSelectableByMouse);

    // The choices are listed, not folded into a combo: the question speaks of "the layouts below".
    auto *choices = new QVBoxLayout(m_choices);
    choices->setContentsMargins(0, 0, 0, 0);
    choices->setSpacing(2);
    m_choiceGroup->setExclusive(true);
    auto *answer = new QVBoxLayout(m_answerRow);
    answer->setContentsMargins(0, 0, 0, 0);
    answer->addWidget(m_choices);
    auto *entry = new QHBoxLayout;
    entry->addWidget(m_answer, 1);
    entry->addStretch();
    entry->addWidget(m_check);
    answer->addLayout(entry);

    auto *nav = new QHBoxLayout;
    nav->addWidget(m_previous);
    nav->addStretch(1);
    nav->addWidget(m_next);

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_title);
    // The steps and the text share the height through a splitter whose handle can be grabbed.
    m_splitter = new QSplitter(Qt::Vertical, this);
    m_splitter->setObjectName(QStringLiteral("teachingSplitter"));
    m_splitter->setChildrenCollapsible(false);
    m_splitter->setHandleWidth(std::max(6, m_splitter->handleWidth()));
    m_splitter->addWidget(m_list);
    m_splitter->addWidget(m_text);
    m_splitter->setStretchFactor(0, 0);
    m_splitter->setStretchFactor(1, 1);
    connect(m_splitter, &QSplitter::splitterMoved, this, [this] { m_listFitted = true; });
    layout->addWidget(m_splitter, 1);
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
        if (!m_answer->isHidden()) {
            checkAnswer(m_answer->text());
        } else if (QAbstractButton *chosen = m_choiceGroup->checkedButton()) {
            checkAnswer(chosen->property("answer").toString());
        } else {
            m_feedback->setText(tr("Choose one of the answers above first."));
        }
    });
    connect(m_answer, &QLineEdit::returnPressed, m_check, &QPushButton::click);

    reload();
    retranslate();
}

TeachingPanel::~TeachingPanel() = default;

void TeachingPanel::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    layout()->activate(); // the splitter's height for this size
    fitList();
}

void TeachingPanel::fitList()
{
    if (m_listFitted || m_splitter->height() <= 0)
        return;
    int rows = 2 * m_list->frameWidth();
    for (int i = 0; i < m_list->count(); ++i)
        rows += m_list->sizeHintForRow(i);
    const int total = m_splitter->height() - m_splitter->handleWidth();
    const int list = std::clamp(rows, m_list->minimumHeight(), total / 2);
    m_splitter->setSizes({list, total - list});
}

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
    // A step puts its plan in the workbench; an exercise only once it is answered, since the
    // headline and the bars would give the answer away.
    if (index < steps) {
        const LessonStep &s = m_lesson.steps[size_t(index)];
        if (planToJson(s.plan) != planToJson(m_document->plan()))
            m_document->apply(s.plan, tr("Teaching: %1").arg(s.title));
    }
    m_feedback->clear();
    m_answer->clear();
    {
        const QSignalBlocker block(m_list);
        m_list->setCurrentRow(index);
    }
    render();
}

void TeachingPanel::setCurrentItem(int index)
{
    if (index < -1 || index >= itemCount())
        return;
    m_current = index;
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
        // Each number above its formula, both at the reading size.
        out += QStringLiteral("<p><b>%1</b></p>").arg(html(tr("The numbers and their formulas")));
        for (const Citation &c : s.citations) {
            out += QStringLiteral("<p style=\"margin-top:2px; margin-bottom:6px\"><b>%1</b><br>%2</p>")
                       .arg(html(c.text), html(c.formula));
        }
    } else {
        const Exercise &x = m_lesson.exercises[size_t(m_current - steps)];
        out += QStringLiteral("<h3>%1</h3><p>%2</p>").arg(html(x.title), html(x.question));
        out += QStringLiteral("<p><i>%1</i></p>")
                   .arg(html(tr("The workbench keeps your plan until you check an answer; then it "
                                "shows the exercise's plan, to see why.")));
        m_answerRow->setVisible(true);
        for (QAbstractButton *b : m_choiceGroup->buttons()) {
            m_choiceGroup->removeButton(b);
            delete b;
        }
        m_answer->setVisible(x.kind == Exercise::Kind::Number);
        m_choices->setVisible(x.kind != Exercise::Kind::Number);
        auto addChoice = [this](const QString &text, const QString &answer) {
            auto *b = new QRadioButton(text, m_choices);
            b->setProperty("answer", answer);
            m_choiceGroup->addButton(b);
            m_choices->layout()->addWidget(b);
        };
        if (x.kind == Exercise::Kind::Choice) {
            for (const QString &c : x.choices)
                addChoice(c, c);
            addChoice(tr("none of these"), QStringLiteral("none"));
        } else if (x.kind == Exercise::Kind::Fits) {
            addChoice(tr("yes"), QStringLiteral("yes"));
            addChoice(tr("no"), QStringLiteral("no"));
        }
    }
    m_text->setHtml(out);
}

ExerciseCheck TeachingPanel::checkAnswer(const QString &answer)
{
    const int steps = int(m_lesson.steps.size());
    if (m_current < steps || m_current >= itemCount())
        return {};
    const Exercise &x = m_lesson.exercises[size_t(m_current - steps)];
    const ExerciseCheck r = x.check(answer);
    m_feedback->setText(r.feedback);
    // Answered: the workbench shows the exercise's plan, to see why.
    if (planToJson(x.plan) != planToJson(m_document->plan()))
        m_document->apply(x.plan, tr("Teaching: %1").arg(x.title));
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
