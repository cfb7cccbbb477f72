// ember::Error and the checks that raise it. Every user-facing failure goes through here so
// that messages name the op, the shapes involved and what was expected.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace ember {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

namespace detail {
inline void append(std::ostringstream&) {}
template <class T, class... Rest>
void append(std::ostringstream& os, const T& first, const Rest&... rest) {
  os << first;
  append(os, rest...);
}
}  // namespace detail

// Concatenates any streamable pieces into one message.
template <class... Parts>
std::string str(const Parts&... parts) {
  std::ostringstream os;
  detail::append(os, parts...);
  return os.str();
}

}  // namespace ember

// EMBER_CHECK(cond, "op: ", pieces...) throws ember::Error with the pieces joined.
#define EMBER_CHECK(cond, ...)                                  \
  do {                                                          \
    if (!(cond)) throw ::ember::Error(::ember::str(__VA_ARGS__)); \
  } while (0)
