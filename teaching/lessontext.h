#pragma once

#include <QString>
#include <string_view>

namespace shardscope {

/// The translated prose of a lesson step; {key} marks a number the engine fills in.
struct StepText
{
    QString title;
    QString body;
    QString note;
};

struct ExerciseText
{
    QString title;
    QString question;
};

QString lessonTitle(std::string_view lessonId);
/// Empty title: no text for this id.
StepText lessonStepText(std::string_view stepId);
ExerciseText lessonExerciseText(std::string_view exerciseId);

} // namespace shardscope
