// sacreBLEU's ja-mecab tokenizer: MeCab (Kudo et al. 2004) with the IPA dictionary, words
// separated by spaces (-Owakati). sacreBLEU gets both from pip (mecab-python3, ipadic); nmt uses
// Debian's libmecab-dev and mecab-ipadic-utf8, the same MeCab 0.996 and IPA dictionary 2.7.0.

#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/error.h"
#include "eval/tokenizers.h"
#include "eval/unicode.h"

#if NMT_WITH_MECAB
#include <mecab.h>
#endif

namespace nmt {

#if NMT_WITH_MECAB
namespace {

/// sacreBLEU checks the dictionary this way too: the IPA dictionary has exactly this many
/// entries (pip's ipadic 1.0.0), and no user dictionary may be stacked on it. Debian's
/// mecab-ipadic-utf8 (the same IPA dictionary 2.7.0-20070801, compiled on installation) has one
/// entry more; both are accepted (docs/evaluation.md#japanese).
constexpr unsigned int kIpaDictionarySize = 392126;
constexpr unsigned int kDebianIpaDictionarySize = 392127;

/// The IPA dictionary's folder: $NMT_MECAB_DICDIR, else Debian's mecab-ipadic-utf8.
std::string ipa_dictionary_dir() {
  if (const char* dir = std::getenv("NMT_MECAB_DICDIR"); dir != nullptr && *dir != '\0') {
    return dir;
  }
  return "/var/lib/mecab/dic/ipadic-utf8";
}

struct Tagger {
  std::unique_ptr<mecab_t, void (*)(mecab_t*)> mecab{nullptr, mecab_destroy};
  std::string error;  ///< why MeCab did not start (then `mecab` is null)
  std::mutex mutex;   ///< a mecab_t parses one sentence at a time
};

/// MeCab with the IPA dictionary, started once per process; a failure is kept and reported to
/// every caller (nothing is retried).
void start_tagger(Tagger& tagger) {
  const std::string dir = ipa_dictionary_dir();
  // Arguments as an argv, so a folder with spaces stays one argument; -r /dev/null skips any
  // mecabrc (its dictionary or user dictionaries), as sacreBLEU's ipadic arguments do.
  std::vector<std::string> args = {"mecab", "-r", "/dev/null", "-d", dir, "-Owakati"};
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  tagger.mecab.reset(mecab_new(static_cast<int>(argv.size()), argv.data()));
  if (!tagger.mecab) {
    tagger.error = std::string("ja-mecab: MeCab cannot load the IPA dictionary in '") + dir +
                   "' (" + mecab_strerror(nullptr) +
                   "); install it with apt-get install mecab-ipadic-utf8, or point "
                   "NMT_MECAB_DICDIR at an IPA dictionary folder";
    return;
  }
  const mecab_dictionary_info_t* info = mecab_dictionary_info(tagger.mecab.get());
  if (info == nullptr ||
      (info->size != kIpaDictionarySize && info->size != kDebianIpaDictionarySize) ||
      info->next != nullptr) {
    const std::string size = info == nullptr ? "no" : std::to_string(info->size);
    tagger.mecab.reset();
    tagger.error = "ja-mecab: the dictionary in '" + dir + "' has " + size +
                   " entries; sacreBLEU's ja-mecab needs the IPA dictionary (" +
                   std::to_string(kIpaDictionarySize) +
                   " entries, no user dictionary): apt-get install mecab-ipadic-utf8, or point "
                   "NMT_MECAB_DICDIR at one";
  }
}

Tagger& tagger() {
  static Tagger instance;
  static const bool started = (start_tagger(instance), true);  // once, thread-safe
  (void)started;
  if (!instance.mecab) throw Error(instance.error);
  return instance;
}

}  // namespace

std::string tokenize_ja_mecab(const std::string& line) {
  Tagger& t = tagger();
  const std::string text = strip_unicode_whitespace(line);
  std::lock_guard<std::mutex> lock(t.mutex);
  const char* parsed = mecab_sparse_tostr2(t.mecab.get(), text.data(), text.size());
  if (parsed == nullptr) {
    throw Error(std::string("ja-mecab: MeCab could not parse a line: ") +
                mecab_strerror(t.mecab.get()));
  }
  return strip_unicode_whitespace(parsed);
}

std::string mecab_version() { return ::mecab_version(); }

#else

namespace {
[[noreturn]] void no_mecab() {
  throw Error(
      "the ja-mecab tokenizer needs MeCab, and this nmt was built without it: "
      "apt-get install libmecab-dev mecab-ipadic-utf8, then configure and build again");
}
}  // namespace

std::string tokenize_ja_mecab(const std::string&) { no_mecab(); }
std::string mecab_version() { no_mecab(); }

#endif

}  // namespace nmt
