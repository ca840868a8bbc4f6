// JUnit XML for `granary test`: the de-facto format CI systems (Jenkins, GitLab, GitHub
// actions) read test results from. One <testsuite> of <testcase>s; a failed case carries a
// <failure>, a case that could not run an <error>. Text is escaped for XML 1.0: markup
// characters become entities, control characters XML forbids are dropped and invalid UTF-8
// becomes U+FFFD, so any message or program output can go in.
//
// Pure functions; safe to call from several threads at once.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace granary::cli {

struct JunitCase {
  enum class Result { kPassed, kFailed, kError };
  std::string classname;  // dotted, like a package: "scenarios.failures"
  std::string name;
  std::string file;  // the scenario file
  double seconds = 0;
  Result result = Result::kPassed;
  std::string message;     // failure or error: one line (the `message` attribute)
  std::string details;     // failure or error: the body (one line per failed expectation)
  std::string system_out;  // what the case printed
  std::string system_err;
};

struct JunitSuite {
  std::string name;
  double seconds = 0;
  std::vector<JunitCase> cases;
};

// The document, <?xml ...?> declaration first.
std::string junit_xml(const JunitSuite& suite);

// `text` escaped for XML element content, or for an attribute value in double quotes (which
// also keeps line breaks and tabs as character references).
std::string xml_escape(std::string_view text, bool attribute);

}  // namespace granary::cli
