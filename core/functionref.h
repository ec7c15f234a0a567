#pragma once
// A non-owning reference to a callable, for callbacks that run only during the call they are
// passed to (the timeline generator's repeat and block bodies): unlike std::function it never
// allocates, whatever the lambda captures. The referenced callable must outlive every call.

#include <memory>
#include <type_traits>
#include <utility>

namespace shardscope {

template <typename Signature>
class FunctionRef;

template <typename R, typename... Args>
class FunctionRef<R(Args...)>
{
public:
    template <typename F, typename = std::enable_if_t<!std::is_same_v<std::remove_cvref_t<F>, FunctionRef> &&
                                                      std::is_invocable_r_v<R, F &, Args...>>>
    FunctionRef(F &&f) noexcept // NOLINT: implicit, like std::function
        : object_(const_cast<void *>(static_cast<const void *>(std::addressof(f)))),
          call_([](void *o, Args... args) -> R {
              return (*static_cast<std::remove_reference_t<F> *>(o))(std::forward<Args>(args)...);
          })
    {
    }

    R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

private:
    void *object_;
    R (*call_)(void *, Args...);
};

} // namespace shardscope
