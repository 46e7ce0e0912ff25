#pragma once
// Checks on error messages: an error must say where (file, line or --set argument), which key,
// and what value, so the tests assert each piece is there.
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <string_view>

namespace altgrad::test_support {

// The message of the Error that `action` throws; a test failure (and "") when it throws nothing.
template <typename Error, typename Action>
std::string message_of(Action&& action) {
  try {
    action();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an exception, none was thrown";
  return {};
}

inline ::testing::AssertionResult mentions(const std::string& message, std::initializer_list<std::string_view> parts) {
  for (const auto part : parts) {
    if (message.find(part) == std::string::npos) {
      return ::testing::AssertionFailure() << "the message lacks \"" << part << "\":\n  " << message;
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace altgrad::test_support
