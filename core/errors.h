#pragma once

#include <stdexcept>
#include <string>

namespace shardscope {

/// A plan, profile or preset that cannot be used. `field` is a JSON-pointer-like path
/// ("parallel.tp", "model.heads"); `rule` says what the value must satisfy.
class PlanError : public std::runtime_error
{
public:
    PlanError(std::string field, std::string rule)
        : std::runtime_error(field.empty() ? rule : field + ": " + rule),
          m_field(std::move(field)), m_rule(std::move(rule))
    {
    }
    const std::string &field() const { return m_field; }
    const std::string &rule() const { return m_rule; }

private:
    std::string m_field;
    std::string m_rule;
};

} // namespace shardscope
