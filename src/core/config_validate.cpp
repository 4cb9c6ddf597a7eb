#include "core/config.h"

#include <algorithm>
#include <sstream>
#include <string>
#include <type_traits>

#include "core/error.h"
#include "core/languages.h"

// Range checks of the typed config (config.cpp reads and writes it).

namespace nmt {
namespace {

void check_min(const char* key, double value, double min) {
  if (value < min) {
    std::ostringstream s;
    s << key << " = " << value << " is out of range: must be >= " << min;
    throw Error(s.str());
  }
}

void check_range(const char* key, double value, double min, double max) {
  if (value < min || value > max) {
    std::ostringstream s;
    s << key << " = " << value << " is out of range: must be in [" << min << ", " << max << "]";
    throw Error(s.str());
  }
}

/// The ranges the keys of `section` declare in its fields() (core/option.h), checked in their
/// order; `prefix` names the section ("data.augment").
template <class Section>
void check_declared_ranges(const std::string& prefix, Section section) {
  section.fields([&](const char* key, auto& value, auto&&... declared) {
    using T = std::decay_t<decltype(value)>;
    if constexpr (sizeof...(declared) == 1 && std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
      const Option& option = (declared, ...);
      const std::string name = prefix + "." + key;
      if (option.max < Option::kNone) {
        check_range(name.c_str(), static_cast<double>(value), option.min, option.max);
      } else if (option.min > -Option::kNone) {
        check_min(name.c_str(), static_cast<double>(value), option.min);
      }
    }
  });
}

/// Language codes only name files, so any short file-name-safe code will do.
void check_language(const char* key, const std::string& code) {
  const bool valid =
      !code.empty() && code.size() <= 32 &&
      code.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") ==
          std::string::npos;
  if (!valid) {
    throw Error(std::string(key) + " = '" + code +
                "' is not a valid language code: use 1-32 characters from [A-Za-z0-9_-], "
                "e.g. en, pt-BR, ja");
  }
}

/// data.spm_model / spm_model_tgt agree with data.joint_vocab.
void check_spm_models(const DataConfig& data) {
  if (!data.spm_model_tgt.empty() && data.spm_model.empty()) {
    throw Error("data.spm_model_tgt = '" + data.spm_model_tgt +
                "' needs data.spm_model (the source side's model) too");
  }
  if (data.spm_model.empty()) return;
  if (data.joint_vocab && !data.spm_model_tgt.empty()) {
    throw Error("data.spm_model_tgt = '" + data.spm_model_tgt +
                "' gives the target side its own model: set data.joint_vocab = false too");
  }
  if (!data.joint_vocab && data.spm_model_tgt.empty()) {
    throw Error("data.joint_vocab = false with data.spm_model = '" + data.spm_model +
                "': give the target side's model as data.spm_model_tgt (or set "
                "data.joint_vocab = true to use one model for both)");
  }
}

}  // namespace

void ModelConfig::validate() const {
  check_declared_ranges("model", *this);
  if (d_model % n_heads != 0) {
    throw Error("model.d_model = " + std::to_string(d_model) +
                " is not divisible by model.n_heads = " + std::to_string(n_heads) +
                ": choose n_heads that divides d_model");
  }
  if (share_embeddings && src_vocab_size != tgt_vocab_size) {
    throw Error("model.share_embeddings = true needs equal vocabularies, got src_vocab_size = " +
                std::to_string(src_vocab_size) + " and tgt_vocab_size = " +
                std::to_string(tgt_vocab_size) + " (use data.joint_vocab = true)");
  }
}

void AugmentConfig::validate() const {
  check_declared_ranges("data.augment", *this);
  if (upper + title > 1.0) {
    std::ostringstream s;
    s << "data.augment.upper + data.augment.title = " << upper + title
      << " is over 1: a pair is upper-cased or title-cased, not both";
    throw Error(s.str());
  }
}

void DataConfig::validate() const {
  check_language("data.src_lang", src_lang);
  check_language("data.tgt_lang", tgt_lang);
  if (src_lang == tgt_lang) {
    throw Error("data.src_lang and data.tgt_lang are both '" + src_lang +
                "': the two sides need different codes (they name the files)");
  }
  if (train.empty()) throw Error("data.train is empty: name at least one training corpus");
  for (size_t i = 0; i < train.size(); ++i) {
    train[i].validate("data.train[" + std::to_string(i) + "]");
  }
  if (valid.empty()) throw Error("data.valid is empty: name at least one validation corpus");
  for (size_t i = 0; i < valid.size(); ++i) {
    const std::string key =
        valid.size() == 1 ? "data.valid" : "data.valid[" + std::to_string(i) + "]";
    valid[i].validate(key);
    if (valid[i].weight != 1.0) throw Error(key + ": a weight applies to data.train corpora only");
  }
  for (const auto* list : {&train, &valid}) {
    for (size_t i = 0; i < list->size(); ++i) {
      const std::string key =
          std::string(list == &train ? "data.train[" : "data.valid[") + std::to_string(i) + "]";
      if (!(*list)[i].src_lang.empty())
        check_language((key + ".src_lang").c_str(), (*list)[i].src_lang);
      if (!(*list)[i].tgt_lang.empty())
        check_language((key + ".tgt_lang").c_str(), (*list)[i].tgt_lang);
    }
  }
  check_declared_ranges("data", *this);
  check_languages(*this);
  check_spm_models(*this);
  if (subword_nbest != -1 && (subword_nbest < 2 || subword_nbest > 512)) {
    throw Error("data.subword_nbest = " + std::to_string(subword_nbest) +
                " is not valid: use -1 (sample from all segmentations) or 2..512");
  }
  augment.validate();
}

void TrainConfig::validate() const {
  if (name.empty()) throw Error("train.name is empty: give the run a name");
  if (name.size() > 255) {  // it names a directory: longer names fail deep in the file system
    throw Error("train.name is " + std::to_string(name.size()) +
                " characters long: a run directory's name has at most 255");
  }
  check_declared_ranges("train", *this);
  if (device != "auto" && device != "cpu" && device.rfind("cuda", 0) != 0) {
    throw Error("train.device = '" + device + "' is not valid: use auto, cpu, cuda or cuda:N");
  }
  if (max_epochs == 0 && max_steps == 0 && max_minutes == 0.0) {
    throw Error("train.max_epochs, train.max_steps and train.max_minutes are all 0: set a limit");
  }
  if (metric == Metric::kBleu && !valid_bleu) {
    throw Error("train.metric = 'bleu' needs train.valid_bleu = true (or use train.metric = loss)");
  }
  if (!(ema_decay >= 0.0 && ema_decay < 1.0)) {
    std::ostringstream s;
    s << "train.ema_decay = " << ema_decay
      << " is out of range: use 0 (off) or a decay in (0, 1) such as 0.999";
    throw Error(s.str());
  }
  for (const auto& corpus : monitor_splits) {
    corpus.validate("train.monitor_splits");
    if (corpus.weight != 1.0) {
      throw Error("train.monitor_splits: a weight applies to data.train corpora only");
    }
  }
}

std::filesystem::path TrainConfig::resolved_run_dir() const {
  return run_dir.empty() ? std::filesystem::path("checkpoints") / name
                         : std::filesystem::path(run_dir);
}

void DecodeConfig::validate() const {
  check_declared_ranges("decode", *this);  // then what depends on the strategy
  if (search == SearchKind::kGreedy && beam != 1) {
    throw Error("decode.beam = " + std::to_string(beam) +
                " is a beam search's width; decode.search = greedy keeps one hypothesis: use "
                "decode.beam = 1, or decode.search = beam");
  }
  if (samples()) {
    check_range("decode.sample", sample, 1, 4096);
  } else if (sample != 0) {
    throw Error("decode.sample = " + std::to_string(sample) +
                " draws are for decode.search = " + "sample or nucleus, not " +
                choice_name(search) + ": set decode.search = sample, or decode.sample = 0");
  }
  check_range("decode.nbest", nbest, 1, candidates());
  if (mbr != 0 && (mbr < 2 || mbr < nbest || mbr > candidates())) {
    const std::string limit = samples() ? "decode.sample = " + std::to_string(sample)
                                        : "decode.beam = " + std::to_string(beam);
    throw Error("decode.mbr = " + std::to_string(mbr) + " is not valid: use 0 (off) or a number " +
                "of candidates from max(2, decode.nbest = " + std::to_string(nbest) + ") to " +
                limit);
  }
}

void DecodeConfig::complete(bool search_given, bool beam_given) {
  if (!search_given && sample > 0 && !samples()) search = SearchKind::kSample;
  if (beam_given) return;
  if (search == SearchKind::kGreedy) beam = 1;
  if (search == SearchKind::kBeam) beam = std::max({beam, nbest, mbr});
}

DecodeConfig DecodeConfig::plain_search(int64_t beam_size) const {
  DecodeConfig plain = *this;
  plain.search = SearchKind::kBeam;
  plain.beam = beam_size;
  plain.nbest = 1;
  plain.mbr = 0;
  plain.sample = 0;
  return plain;
}

void Config::validate() const {
  model.validate();
  data.validate();
  train.validate();
  decode.validate();
  // Between sections: checked here, at start-up, rather than when the first long pair arrives.
  // A pair of data.max_len pieces takes data.max_len + 1 positions (source + eos, bos + target).
  if (data.max_len + 1 > model.max_len) {
    throw Error(
        "data.max_len = " + std::to_string(data.max_len) + " admits pairs of " +
        std::to_string(data.max_len + 1) +
        " positions with eos/bos, more than model.max_len = " + std::to_string(model.max_len) +
        ": lower data.max_len to at most " + std::to_string(model.max_len - 1) +
        " or raise model.max_len to at least " + std::to_string(data.max_len + 1));
  }
}

}  // namespace nmt
