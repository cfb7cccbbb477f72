// The command-line list parser the example programs share.
#include "examples/common/cli_lists.h"

#include <gtest/gtest.h>

using namespace ember;

TEST(CliLists, SplitsTrimsAndSkipsEmptyItems) {
  EXPECT_EQ(cli::split_commas("64,128, 256 ,,\t512,"), (std::vector<std::string>{"64", "128", "256", "512"}));
  EXPECT_TRUE(cli::split_commas("").empty());
  EXPECT_TRUE(cli::split_commas(" , ").empty());
  EXPECT_EQ(cli::split_commas("a"), (std::vector<std::string>{"a"}));
}

TEST(CliLists, ParsesIntegersAndNumbers) {
  EXPECT_EQ(cli::int_list("15496, 11,-3", "--ids", "token ids"), (std::vector<int64_t>{15496, 11, -3}));
  EXPECT_EQ(cli::double_list("1e-5,0.1, 2", "--densities", "densities"), (std::vector<double>{1e-5, 0.1, 2}));
}

TEST(CliLists, BadItemsRaiseWithTheFlagAndTheExpectedForm) {
  try {
    cli::int_list("64,12x8", "--numel", "element counts such as 1048576");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--numel: '12x8' is not an integer (expected element counts"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(cli::int_list("1.5", "--x", "integers"), Error);
  EXPECT_THROW(cli::int_list("99999999999999999999", "--x", "integers"), Error);  // out of range
  EXPECT_THROW(cli::double_list("0.1,abc", "--x", "numbers"), Error);
  EXPECT_THROW(cli::double_list("1e999", "--x", "numbers"), Error);
}
