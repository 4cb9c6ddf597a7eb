#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include "core/progress.h"

namespace nmt {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

/// A clock the test moves by hand.
struct FakeClock {
  std::chrono::steady_clock::time_point now{};
  void advance(std::chrono::milliseconds by) { now += by; }
};

ProgressOptions options_with(FakeClock& clock, bool terminal) {
  ProgressOptions options;
  options.is_terminal = terminal;
  options.clock = [&clock] { return clock.now; };
  options.bar_width = 10;
  return options;
}

int count_char(const std::string& text, char c) {
  return static_cast<int>(std::count(text.begin(), text.end(), c));
}

TEST(Progress, FormatDuration) {
  EXPECT_EQ(format_duration(0), "00:00");
  EXPECT_EQ(format_duration(12.7), "00:12");
  EXPECT_EQ(format_duration(61), "01:01");
  EXPECT_EQ(format_duration(3599.9), "59:59");
  EXPECT_EQ(format_duration(3600), "1:00:00");
  EXPECT_EQ(format_duration(3723), "1:02:03");
  EXPECT_EQ(format_duration(100 * 3600.0), "100:00:00");
  EXPECT_EQ(format_duration(-1), "?");
  EXPECT_EQ(format_duration(std::nan("")), "?");
  EXPECT_EQ(format_duration(std::numeric_limits<double>::infinity()), "?");
  EXPECT_EQ(format_duration(1e300), "?");
}

TEST(Progress, FormatCount) {
  EXPECT_EQ(format_count(0), "0");
  EXPECT_EQ(format_count(999), "999");
  EXPECT_EQ(format_count(1000), "1,000");
  EXPECT_EQ(format_count(2431), "2,431");
  EXPECT_EQ(format_count(1234567), "1,234,567");
  EXPECT_EQ(format_count(-1234), "-1,234");
  EXPECT_EQ(format_count(std::numeric_limits<int64_t>::min()), "-9,223,372,036,854,775,808");
}

TEST(Progress, RenderKnownTotal) {
  ProgressSnapshot s{"train", 370, 1000, 12.0, {{"loss", "4.12"}, {"lr", "3.1e-04"}}};
  s.fields.push_back({"tok/s", format_count(2431)});
  // 37% of 14 columns is 5.18 -> 5 filled; ETA 12 s * 630 / 370 = 20.4 s.
  EXPECT_EQ(render_progress(s, 14),
            "train  37% |#####---------| 370/1000 loss 4.12 lr 3.1e-04 tok/s 2,431 [00:12<00:20]");
}

TEST(Progress, RenderEdgeCases) {
  EXPECT_EQ(render_progress({"x", 0, 10, 3.0, {}}, 4), "x   0% |----| 0/10 [00:03<?]");
  EXPECT_EQ(render_progress({"x", 10, 10, 65.0, {}}, 4), "x 100% |####| 10/10 [01:05<00:00]");
  EXPECT_EQ(render_progress({"x", 12, 10, 5.0, {}}, 4), "x 100% |####| 12/10 [00:05<00:00]");
  EXPECT_EQ(render_progress({"", 5, 10, 5.0, {}}, 2), " 50% |#-| 5/10 [00:05<00:05]");
}

TEST(Progress, InitialProgressIsNotCountedInTheRate) {
  // Resumed at 600 of 1000, 100 more done in 10 s: ETA = 10 s * 300 / 100 = 30 s, not 10 * 300/700.
  ProgressSnapshot resumed{"x", 700, 1000, 10.0, {}};
  resumed.initial = 600;
  EXPECT_EQ(render_progress(resumed, 4), "x  70% |##--| 700/1000 [00:10<00:30]");
  resumed.done = 600;
  EXPECT_EQ(render_progress(resumed, 4), "x  60% |##--| 600/1000 [00:10<?]");
  ProgressSnapshot open_ended{"y", 150, 0, 10.0, {}};
  open_ended.initial = 100;
  EXPECT_EQ(render_progress(open_ended), "y 150 [00:10, 5.0/s]");
}

TEST(Progress, RenderUnknownTotalShowsRate) {
  EXPECT_EQ(render_progress({"decode", 370, 0, 10.0, {}}), "decode 370 [00:10, 37.0/s]");
  EXPECT_EQ(render_progress({"decode", 50000, 0, 10.0, {}}), "decode 50000 [00:10, 5,000/s]");
  EXPECT_EQ(render_progress({"decode", 0, 0, 0.0, {}}), "decode 0 [00:00, ?/s]");
}

TEST(Progress, NonTerminalPrintsPeriodicPlainLines) {
  FakeClock clock;
  std::ostringstream out;
  ProgressOptions options = options_with(clock, false);
  options.line_interval = seconds(30);
  ProgressBar bar("epoch 1", 100, out, options);
  for (int step = 1; step <= 100; ++step) {  // one step per second
    clock.advance(seconds(1));
    bar.update(step, {{"loss", std::to_string(step)}});
  }
  bar.finish();
  // Lines at 30 s, 60 s, 90 s, then the final one; never a carriage return.
  EXPECT_EQ(out.str(),
            "epoch 1  30% |###-------| 30/100 loss 30 [00:30<01:10]\n"
            "epoch 1  60% |######----| 60/100 loss 60 [01:00<00:40]\n"
            "epoch 1  90% |#########-| 90/100 loss 90 [01:30<00:10]\n"
            "epoch 1 100% |##########| 100/100 loss 100 [01:40<00:00]\n");
}

TEST(Progress, IntervalZeroPrintsEveryUpdate) {
  FakeClock clock;
  std::ostringstream out;
  ProgressOptions options = options_with(clock, false);
  options.line_interval = milliseconds(0);
  ProgressBar bar("p", 0, out, options);
  bar.update(1);
  bar.update(2);
  bar.finish();
  EXPECT_EQ(count_char(out.str(), '\n'), 3);
  EXPECT_EQ(count_char(out.str(), '\r'), 0);
}

TEST(Progress, StringStreamIsNotATerminal) {
  std::ostringstream out;
  ProgressOptions options;
  options.line_interval = milliseconds(0);
  {
    ProgressBar bar("p", 2, out, options);
    bar.update(1);
  }  // the destructor finishes
  EXPECT_EQ(count_char(out.str(), '\r'), 0);
  EXPECT_EQ(count_char(out.str(), '\n'), 2);
}

TEST(Progress, TerminalRedrawsInPlaceAtMostTenTimesPerSecond) {
  FakeClock clock;
  std::ostringstream out;
  ProgressBar bar("t", 1000, out, options_with(clock, true));
  for (int step = 1; step <= 999; ++step) {  // 1 ms per step: ~1 s
    clock.advance(milliseconds(1));
    bar.update(step);
  }
  const int draws = count_char(out.str(), '\r');
  EXPECT_GE(draws, 9);
  EXPECT_LE(draws, 11);
  bar.update(1000);  // completion always draws
  EXPECT_EQ(count_char(out.str(), '\r'), draws + 1);
  EXPECT_EQ(count_char(out.str(), '\n'), 0);
  bar.finish();
  const std::string text = out.str();
  EXPECT_EQ(text.back(), '\n');
  EXPECT_NE(text.find("\rt 100% |##########| 1000/1000 [00:00<00:00]\n"), std::string::npos);
}

TEST(Progress, TerminalBlanksLeftoversOfALongerLine) {
  FakeClock clock;
  std::ostringstream out;
  ProgressBar bar("t", 0, out, options_with(clock, true));
  bar.update(1, {{"note", "a long field value"}});
  clock.advance(seconds(1));
  bar.update(2);
  const std::string longer = "t 1 note a long field value [00:00, ?/s]";
  const std::string shorter = "t 2 [00:01, 2.0/s]";
  EXPECT_EQ(out.str(),
            "\r" + longer + "\r" + shorter + std::string(longer.size() - shorter.size(), ' '));
}

TEST(Progress, MessageKeepsTheBarIntact) {
  FakeClock clock;
  std::ostringstream out;
  ProgressBar bar("t", 0, out, options_with(clock, true));
  bar.update(3);
  out.str("");
  bar.message("valid bleu 12.30");
  const std::string drawn = "t 3 [00:00, ?/s]";
  EXPECT_EQ(out.str(), "\r" + std::string(drawn.size(), ' ') + "\rvalid bleu 12.30\n\r" + drawn);
  std::ostringstream plain;
  ProgressBar log_bar("t", 0, plain, options_with(clock, false));
  log_bar.message("hello");
  EXPECT_EQ(plain.str(), "hello\n");
}

TEST(Progress, BarStartsAtInitial) {
  FakeClock clock;
  std::ostringstream out;
  ProgressOptions options = options_with(clock, false);
  options.initial = 3;
  ProgressBar bar("t", 4, out, options);
  bar.finish();
  EXPECT_EQ(out.str(), "t  75% |#######---| 3/4 [00:00<?]\n");
}

TEST(Progress, FinishIsIdempotentAndStopsUpdates) {
  FakeClock clock;
  std::ostringstream out;
  ProgressBar bar("t", 4, out, options_with(clock, false));
  bar.finish();
  bar.finish();
  bar.update(2);
  EXPECT_EQ(out.str(), "t   0% |----------| 0/4 [00:00<?]\n");
}

}  // namespace
}  // namespace nmt
