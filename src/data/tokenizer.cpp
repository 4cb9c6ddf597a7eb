#include "data/tokenizer.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <fstream>
#include <limits>
#include <mutex>
#include <regex>
#include <thread>
#include <unordered_map>

#include "core/error.h"
#include "core/files.h"
#include "core/languages.h"
#include "core/special_ids.h"

namespace nmt {
namespace {

namespace fs = std::filesystem;
using Processor = sentencepiece::SentencePieceProcessor;

/// Feeds sentences from memory, so training needs no temporary input file.
class VectorIterator : public sentencepiece::SentenceIterator {
 public:
  explicit VectorIterator(std::vector<const std::vector<std::string>*> corpora)
      : corpora_(std::move(corpora)) {
    skip_exhausted();
  }
  bool done() const override { return corpus_ >= corpora_.size(); }
  void Next() override {
    ++line_;
    skip_exhausted();
  }
  const std::string& value() const override { return (*corpora_[corpus_])[line_]; }
  sentencepiece::util::Status status() const override { return {}; }

 private:
  void skip_exhausted() {
    while (corpus_ < corpora_.size() && line_ >= corpora_[corpus_]->size()) {
      ++corpus_;
      line_ = 0;
    }
  }
  std::vector<const std::vector<std::string>*> corpora_;
  size_t corpus_ = 0;
  size_t line_ = 0;
};

/// Trainer arguments. Special ids are fixed (core/special_ids.h) so batches and masks never need
/// a tokenizer. Threads: spm_train_threads (the count changes the model, so it follows the data).
std::unordered_map<std::string, std::string> trainer_args(const DataConfig& data, int64_t threads,
                                                          const std::vector<std::string>& symbols) {
  std::string user_symbols;
  for (const auto& symbol : symbols) user_symbols += (user_symbols.empty() ? "" : ",") + symbol;
  auto args = std::unordered_map<std::string, std::string>{
      {"model_type", choice_name(data.vocab_type)},
      {"vocab_size", std::to_string(data.vocab_size)},
      {"character_coverage", std::to_string(data.character_coverage)},
      {"normalization_rule_name", choice_name(data.normalization)},
      {"pad_id", std::to_string(kPadId)},
      {"pad_piece", "<pad>"},
      {"unk_id", std::to_string(kUnkId)},
      {"unk_piece", "<unk>"},
      {"bos_id", std::to_string(kBosId)},
      {"bos_piece", "<s>"},
      {"eos_id", std::to_string(kEosId)},
      {"eos_piece", "</s>"},
      // Small corpora cannot always fill data.vocab_size; take what they support.
      {"hard_vocab_limit", "false"},
      {"num_threads", std::to_string(threads)},
      {"minloglevel", "2"},  // the trainer logs every EM step at INFO
  };
  // Language tags (data.lang_tag): one piece each, never split, never merged with text.
  if (!user_symbols.empty()) args["user_defined_symbols"] = user_symbols;
  return args;
}

/// SentencePiece's reason, in nmt's keys where it names its own command-line flags: a vocabulary
/// smaller than the characters it must keep (Chinese and Japanese corpora have thousands).
std::string explain_failure(const std::string& reason, const DataConfig& data) {
  static const std::regex too_small(
      R"(Vocabulary size is smaller than required_chars\. \d+ vs (\d+))");
  std::smatch match;
  if (!std::regex_search(reason, match, too_small)) return reason;
  char coverage[32];
  std::snprintf(coverage, sizeof coverage, "%g", data.character_coverage);
  return "the corpus has " + match[1].str() + " characters and special pieces that " +
         "data.character_coverage=" + coverage + " keeps, more than data.vocab_size allows: set " +
         "data.vocab_size to at least " + match[1].str() + " (\"auto\" sizes it above the " +
         "alphabet), or lower data.character_coverage (0.9995 is usual for Chinese and Japanese: " +
         "the rarest characters become <unk>)";
}

/// Trains one model on the given corpora and returns its serialized proto.
std::string train_model(const DataConfig& data,
                        std::vector<const std::vector<std::string>*> corpora,
                        const std::string& what, const std::vector<std::string>& symbols) {
  size_t lines = 0;
  for (const auto* corpus : corpora) lines += corpus->size();
  if (lines == 0) throw Error("cannot train the " + what + " SentencePiece model: no sentences");
  VectorIterator iterator(std::move(corpora));
  std::string proto;
  const auto status = sentencepiece::SentencePieceTrainer::Train(
      trainer_args(data, spm_train_threads(lines), symbols), &iterator, &proto);
  if (!status.ok()) {
    throw Error("training the " + what +
                " SentencePiece model (data.vocab_type=" + choice_name(data.vocab_type) +
                ", data.vocab_size=" + std::to_string(data.vocab_size) +
                ") failed: " + explain_failure(status.ToString(), data));
  }
  return proto;
}

void write_file(const fs::path& file, const std::string& bytes) {
  write_file_atomically(file, bytes, "tokenizer model");
}

/// Rejects models whose special ids differ from core/special_ids.h (e.g. one trained elsewhere).
void check_special_ids(const Processor& sp, const std::string& origin) {
  if (sp.pad_id() != kPadId || sp.unk_id() != kUnkId || sp.bos_id() != kBosId ||
      sp.eos_id() != kEosId) {
    throw Error("SentencePiece model " + origin + " has special ids pad=" +
                std::to_string(sp.pad_id()) + " unk=" + std::to_string(sp.unk_id()) +
                " bos=" + std::to_string(sp.bos_id()) + " eos=" + std::to_string(sp.eos_id()) +
                "; nmt needs pad=0 unk=1 bos=2 eos=3: train one with nmt prepare, or with "
                "spm_train --pad_id=0 --unk_id=1 --bos_id=2 --eos_id=3 --pad_piece='<pad>' "
                "--unk_piece='<unk>' --bos_piece='<s>' --eos_piece='</s>' (plus your "
                "--input, --model_prefix, --vocab_size, --model_type)");
  }
}

std::shared_ptr<Processor> load_file(const fs::path& file) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) {
    throw Error("SentencePiece model file not found: '" + file.string() + "'");
  }
  auto sp = std::make_shared<Processor>();
  const auto status = sp->Load(file.string());
  if (!status.ok()) {
    throw Error("cannot load SentencePiece model '" + file.string() +
                "' (corrupt or not a model file): " + status.ToString());
  }
  check_special_ids(*sp, "'" + file.string() + "'");
  return sp;
}

std::shared_ptr<Processor> load_proto(const std::string& proto, const std::string& origin) {
  auto sp = std::make_shared<Processor>();
  const auto status = sp->LoadFromSerializedProto(proto);
  if (!status.ok()) {
    throw Error("cannot load SentencePiece model " + origin + " (corrupt): " + status.ToString());
  }
  check_special_ids(*sp, origin);
  return sp;
}

std::vector<int64_t> encode(const Processor& sp, const std::string& text) {
  std::vector<int> ids;
  const auto status = sp.Encode(text, &ids);
  if (!status.ok()) throw Error("SentencePiece cannot encode '" + text + "': " + status.ToString());
  return {ids.begin(), ids.end()};
}

std::vector<int64_t> sample(const Processor& sp, const std::string& text, int64_t nbest,
                            double alpha) {
  std::vector<int> ids;
  const auto status =
      sp.SampleEncode(text, static_cast<int>(nbest), static_cast<float>(alpha), &ids);
  if (!status.ok()) {
    throw Error("SentencePiece cannot sample a segmentation of '" + text +
                "' (data.subword_nbest = " + std::to_string(nbest) + "): " + status.ToString());
  }
  return {ids.begin(), ids.end()};
}

/// Skips pad/bos/eos (model output carries them); an id outside the vocabulary is an error.
std::string decode(const Processor& sp, const std::vector<int64_t>& ids) {
  std::vector<int> kept;
  kept.reserve(ids.size());
  for (const int64_t id : ids) {
    if (id == kPadId || id == kBosId || id == kEosId) continue;
    if (id < 0 || id >= sp.GetPieceSize()) {
      throw Error("token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                  std::to_string(sp.GetPieceSize()) + ")");
    }
    kept.push_back(static_cast<int>(id));
  }
  std::string text;
  const auto status = sp.Decode(kept, &text);
  if (!status.ok()) throw Error("SentencePiece cannot decode ids: " + status.ToString());
  return text;
}

}  // namespace

int64_t spm_train_threads(size_t sentences) {
  constexpr size_t kSentencesPerThread = 100000;
  constexpr size_t kMaxThreads = 16;
  return int64_t(std::clamp<size_t>(sentences / kSentencesPerThread, 1, kMaxThreads));
}

namespace {
int64_t piece_id(const Processor& sp, const std::string& piece) {
  const int id = sp.PieceToId(piece);
  return id >= 0 && id < sp.GetPieceSize() && sp.IdToPiece(id) == piece ? id : -1;
}
}  // namespace

int64_t Tokenizer::src_piece_id(const std::string& piece) const { return piece_id(*src_, piece); }
int64_t Tokenizer::tgt_piece_id(const std::string& piece) const { return piece_id(*tgt_, piece); }

std::string Tokenizer::src_piece(int64_t id) const {
  if (id < 0 || id >= src_->GetPieceSize()) {
    throw Error("token id " + std::to_string(id) + " is outside the source vocabulary [0, " +
                std::to_string(src_->GetPieceSize()) + ")");
  }
  return src_->IdToPiece(static_cast<int>(id));
}

std::string Tokenizer::tgt_piece(int64_t id) const { return tgt_pieces({id}).front(); }

std::string Tokenizer::fingerprint() const {
  std::string all;
  for (const auto& proto : serialized()) all += proto;
  char text[32];
  std::snprintf(text, sizeof text, "%016llx",
                static_cast<unsigned long long>(nmt::fingerprint(all)));
  return text;
}

Tokenizer::Tokenizer() = default;
Tokenizer::Tokenizer(const Tokenizer&) = default;
Tokenizer& Tokenizer::operator=(const Tokenizer&) = default;
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

void Tokenizer::set_word_casing(WordCasing casing) {
  word_casing_ = std::make_shared<const WordCasing>(std::move(casing));
}

std::vector<fs::path> Tokenizer::model_files(const DataConfig& data, const fs::path& dir) {
  if (data.joint_vocab) return {dir / "spm.model"};
  return {dir / ("spm." + data.src_lang + ".model"), dir / ("spm." + data.tgt_lang + ".model")};
}

Tokenizer Tokenizer::train(const DataConfig& data, const std::vector<std::string>& src_sentences,
                           const std::vector<std::string>& tgt_sentences, const fs::path& out_dir) {
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) throw Error("cannot create '" + out_dir.string() + "': " + ec.message());
  const auto files = model_files(data, out_dir);
  std::vector<std::string> protos;
  // The language tags go where data.lang_tag puts them: the source side's model or the target's.
  const auto tags = tag_pieces(data);
  const std::vector<std::string> none;
  const bool on_source = data.lang_tag == LangTag::kSource;
  if (data.joint_vocab) {
    protos.push_back(train_model(data, {&src_sentences, &tgt_sentences}, "joint", tags));
  } else {
    protos.push_back(train_model(data, {&src_sentences}, data.src_lang, on_source ? tags : none));
    protos.push_back(train_model(data, {&tgt_sentences}, data.tgt_lang, on_source ? none : tags));
  }
  for (size_t i = 0; i < files.size(); ++i) write_file(files[i], protos[i]);
  return from_serialized(protos);
}

Tokenizer Tokenizer::load(const std::vector<fs::path>& model_files) {
  if (model_files.empty() || model_files.size() > 2) {
    throw Error("Tokenizer::load needs one model file (joint) or two (source, target), got " +
                std::to_string(model_files.size()));
  }
  Tokenizer tokenizer;
  tokenizer.src_ = load_file(model_files.front());
  tokenizer.tgt_ = model_files.size() == 1 ? tokenizer.src_ : load_file(model_files.back());
  return tokenizer;
}

Tokenizer Tokenizer::reuse(const DataConfig& data, const fs::path& out_dir) {
  std::vector<fs::path> sources{data.spm_model};
  if (!data.spm_model_tgt.empty()) sources.emplace_back(data.spm_model_tgt);
  Tokenizer tokenizer = load(sources);
  const auto files = model_files(data, out_dir);
  if (files.size() != sources.size()) {
    throw Error("data.joint_vocab does not match data.spm_model/spm_model_tgt (" +
                std::to_string(sources.size()) + " model(s) given)");
  }
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) throw Error("cannot create '" + out_dir.string() + "': " + ec.message());
  for (size_t i = 0; i < files.size(); ++i) {
    std::ifstream in(sources[i], std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) throw Error("cannot read '" + sources[i].string() + "'");
    write_file(files[i], bytes);
  }
  return tokenizer;
}

void Tokenizer::save(const std::vector<fs::path>& files) const {
  const auto protos = serialized();
  if (files.size() != protos.size()) {
    throw Error("a " + std::string(joint() ? "joint" : "two-model") + " tokenizer needs " +
                std::to_string(protos.size()) + " model file(s), got " +
                std::to_string(files.size()));
  }
  for (size_t i = 0; i < files.size(); ++i) write_file(files[i], protos[i]);
}

Tokenizer Tokenizer::from_serialized(const std::vector<std::string>& protos) {
  if (protos.empty() || protos.size() > 2) {
    throw Error("a tokenizer needs one serialized model (joint) or two (source, target), got " +
                std::to_string(protos.size()));
  }
  Tokenizer tokenizer;
  tokenizer.src_ = load_proto(protos.front(), protos.size() == 1 ? "(joint)" : "(source)");
  tokenizer.tgt_ = protos.size() == 1 ? tokenizer.src_ : load_proto(protos.back(), "(target)");
  return tokenizer;
}

std::vector<int64_t> Tokenizer::encode_src(const std::string& text) const {
  return encode(*src_, text);
}

std::vector<int64_t> Tokenizer::encode_tgt(const std::string& text) const {
  return encode(*tgt_, text);
}

std::vector<int64_t> Tokenizer::sample_src(const std::string& text, int64_t nbest,
                                           double alpha) const {
  return sample(*src_, text, nbest, alpha);
}

std::vector<int64_t> Tokenizer::sample_tgt(const std::string& text, int64_t nbest,
                                           double alpha) const {
  return sample(*tgt_, text, nbest, alpha);
}

void Tokenizer::with_sampling_seed(uint32_t seed, const std::function<void()>& work) {
  // SentencePiece seeds a thread's generator from this global at the thread's first draw, and
  // treats the largest value as "random": one seeding at a time, and never that value.
  static std::mutex seeding;
  std::lock_guard<std::mutex> lock(seeding);
  if (seed == std::numeric_limits<uint32_t>::max()) seed -= 1;
  sentencepiece::SetRandomGeneratorSeed(seed);
  std::exception_ptr failure;
  std::thread worker([&] {
    try {
      work();
    } catch (...) {
      failure = std::current_exception();
    }
  });
  worker.join();
  if (failure) std::rethrow_exception(failure);
}

std::vector<std::string> Tokenizer::src_pieces(const std::string& text) const {
  std::vector<std::string> pieces;
  const auto status = src_->Encode(text, &pieces);
  if (!status.ok()) throw Error("SentencePiece cannot encode '" + text + "': " + status.ToString());
  return pieces;
}

std::vector<std::string> Tokenizer::tgt_pieces(const std::vector<int64_t>& ids) const {
  std::vector<std::string> pieces;
  pieces.reserve(ids.size());
  for (const int64_t id : ids) {
    if (id < 0 || id >= tgt_->GetPieceSize()) {
      throw Error("token id " + std::to_string(id) + " is outside the target vocabulary [0, " +
                  std::to_string(tgt_->GetPieceSize()) + ")");
    }
    pieces.push_back(tgt_->IdToPiece(static_cast<int>(id)));
  }
  return pieces;
}

std::string Tokenizer::decode_tgt(const std::vector<int64_t>& ids) const {
  return decode(*tgt_, ids);
}

std::string Tokenizer::decode_src(const std::vector<int64_t>& ids) const {
  return decode(*src_, ids);
}

int64_t Tokenizer::src_vocab_size() const { return src_->GetPieceSize(); }
int64_t Tokenizer::tgt_vocab_size() const { return tgt_->GetPieceSize(); }
bool Tokenizer::joint() const { return src_ == tgt_; }

std::vector<std::string> Tokenizer::serialized() const {
  if (joint()) return {src_->serialized_model_proto()};
  return {src_->serialized_model_proto(), tgt_->serialized_model_proto()};
}

}  // namespace nmt
