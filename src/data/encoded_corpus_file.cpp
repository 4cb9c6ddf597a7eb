// The encoded corpus file (data/encoded_corpus.h; the format is described in docs/scaling.md):
// a 64-byte header, metadata as JSON, then the PairStore's arrays, all little-endian.
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/files.h"
#include "core/json_fields.h"
#include "core/mapped_file.h"
#include "data/encoded_corpus.h"
#include "data/line_reader.h"

namespace nmt {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr char kCorpusMagic[8] = {'N', 'M', 'T', 'P', 'A', 'I', 'R', 'S'};
constexpr uint32_t kCorpusFormat = 1;  ///< raise on any change of the layout or the metadata

struct CorpusFileHeader {
  char magic[8];
  uint32_t version;
  uint32_t id_bytes;
  uint64_t pairs;
  uint64_t ids;
  uint64_t meta_bytes;  ///< JSON, padded with spaces to a multiple of 8
  uint64_t file_bytes;
  uint32_t crc;  ///< CRC-32 of the whole file with this field 0
  uint32_t reserved;
  uint64_t reserved2;
};
static_assert(sizeof(CorpusFileHeader) == 64, "the header is 64 bytes on every platform");

/// The size a file of this header must have; 0 for sizes no real corpus has (a corrupt header).
uint64_t corpus_file_bytes(const CorpusFileHeader& h) {
  if ((h.id_bytes != 2 && h.id_bytes != 4) || h.pairs > (uint64_t(1) << 40) ||
      h.ids > (uint64_t(1) << 44) || h.meta_bytes > (uint64_t(1) << 32) || h.meta_bytes % 8 != 0) {
    return 0;
  }
  return sizeof(CorpusFileHeader) + h.meta_bytes + 8 * h.pairs + 8 * (h.pairs + 1) +
         h.ids * h.id_bytes;
}

uint32_t tokenizer_crc(const Tokenizer& tokenizer) {
  uint32_t crc = 0;
  for (const auto& proto : tokenizer.serialized())
    crc = crc32_update(crc, proto.data(), proto.size());
  return crc;
}

/// What a corpus file is made from: the files with their size and modification time, the
/// tokenizer, and the options that change what is encoded or kept.
json corpus_made_from(const DataConfig& data, const Tokenizer& tokenizer) {
  json corpora = json::array();
  for (const auto& corpus : data.train) {
    json files = json::array();
    for (const auto& file : corpus_files(data, corpus)) {
      struct stat info {};
      if (::stat(file.c_str(), &info) != 0) throw Error("file not found: '" + file.string() + "'");
      std::error_code ec;
      const fs::path canonical = fs::weakly_canonical(file, ec);
      files.push_back({{"path", (ec ? file : canonical).string()},
                       {"bytes", int64_t(info.st_size)},
                       {"mtime_ns", int64_t(info.st_mtim.tv_sec) * 1000000000 +
                                        int64_t(info.st_mtim.tv_nsec)}});
    }
    corpora.push_back({{"corpus", corpus.describe()}, {"files", files}});
  }
  const int64_t vocab = std::max(tokenizer.src_vocab_size(), tokenizer.tgt_vocab_size());
  json made = {{"data.src_lang", data.src_lang},  {"data.tgt_lang", data.tgt_lang},
               {"data.max_len", data.max_len},    {"tokenizer crc32", tokenizer_crc(tokenizer)},
               {"id bytes", id_bytes_for(vocab)}, {"corpora", corpora}};
  // Tags change the encoded pairs; a file from before they existed stays valid without them.
  if (data.lang_tag != LangTag::kNone) made["data.lang_tag"] = choice_name(data.lang_tag);
  return made;
}

/// The first difference between two made_from records, in words ("" when equal).
std::string made_from_difference(const json& was, const json& now, const std::string& where) {
  if (was == now) return "";
  if (was.is_object() && now.is_object()) {
    std::string label = where;
    if (now.contains("path") && was.value("path", json()) == now["path"]) {
      label = "file '" + now["path"].get<std::string>() + "'";
    }
    // Plain values (options, sizes) before lists: the most telling difference comes first.
    for (const bool containers : {false, true}) {
      for (const auto& item : now.items()) {
        if (item.value().is_structured() != containers) continue;
        const std::string key = label.empty() ? item.key() : label + " " + item.key();
        if (!was.contains(item.key())) return key + " is new";
        const std::string difference = made_from_difference(was[item.key()], item.value(), key);
        if (!difference.empty()) return difference;
      }
    }
    return (label.empty() ? "an entry" : label) + " has keys it no longer has";
  }
  if (was.is_array() && now.is_array() && was.size() == now.size()) {
    for (size_t i = 0; i < now.size(); ++i) {
      const std::string difference =
          made_from_difference(was[i], now[i], where + "[" + std::to_string(i) + "]");
      if (!difference.empty()) return difference;
    }
  }
  return where + " was " + was.dump() + ", now " + now.dump();
}

json stats_json(const FilterStats& s) { return fields_to_json(s); }

FilterStats stats_from_json(const json& j) { return fields_from_json<FilterStats>(j); }

/// A file that passed check_corpus_file.
struct CheckedCorpusFile {
  CorpusFileHeader header{};
  json meta;
};

/// Why `file` cannot be used as the corpus `made_from` describes ("" when it can): missing,
/// truncated, of another format, corrupt (sizes, checksum) or made from other inputs.
std::string check_corpus_file(const fs::path& file, const json& made_from, CheckedCorpusFile& out) {
  std::error_code ec;
  if (!fs::exists(file, ec)) return "there is none yet";
  const uint64_t size = fs::file_size(file, ec);
  if (ec) return "it cannot be read (" + ec.message() + ")";
  std::ifstream in(file, std::ios::binary);
  CorpusFileHeader& h = out.header;
  if (size < sizeof h || !in.read(reinterpret_cast<char*>(&h), sizeof h)) {
    return "it is truncated (" + std::to_string(size) + " bytes, less than its header)";
  }
  if (std::memcmp(h.magic, kCorpusMagic, sizeof kCorpusMagic) != 0) {
    return "it is not an nmt encoded corpus (wrong magic bytes)";
  }
  if (h.version != kCorpusFormat) {
    return "it has format version " + std::to_string(h.version) + " (this nmt writes " +
           std::to_string(kCorpusFormat) + ")";
  }
  const uint64_t expected = corpus_file_bytes(h);
  if (expected == 0 || h.file_bytes != expected) return "its header is corrupt";
  if (size != expected) {
    return "it is truncated or overlong (" + std::to_string(size) + " bytes, its header says " +
           std::to_string(expected) + ")";
  }
  CorpusFileHeader zeroed = h;
  zeroed.crc = 0;
  uint32_t crc = crc32_update(0, &zeroed, sizeof zeroed);
  std::string meta(h.meta_bytes, '\0');
  if (!in.read(meta.data(), std::streamsize(meta.size()))) return "it cannot be read";
  crc = crc32_update(crc, meta.data(), meta.size());
  // Read, not mapped: checking every byte must not count as the process's resident memory.
  std::vector<char> chunk(size_t(1) << 20);
  while (in) {
    in.read(chunk.data(), std::streamsize(chunk.size()));
    crc = crc32_update(crc, chunk.data(), size_t(in.gcount()));
  }
  if (crc != h.crc) return "its checksum does not match its content (the file is corrupt)";
  try {
    out.meta = json::parse(meta);
    const std::string difference = made_from_difference(out.meta.at("made_from"), made_from, "");
    if (!difference.empty()) return "it was made from other inputs: " + difference;
  } catch (const json::exception&) {
    return "its metadata is not what this nmt writes";
  }
  return "";
}

/// The corpus in a checked file, memory-mapped; corpus weights come from `data` (they do not
/// change the file).
TrainCorpus map_corpus_file(const fs::path& file, const CheckedCorpusFile& checked,
                            const DataConfig& data) {
  auto mapped = std::make_shared<MappedFile>(file);
  const CorpusFileHeader& h = checked.header;
  if (mapped->size() != h.file_bytes) {
    throw Error(file.string() + " changed while it was being read (another nmt prepare?)");
  }
  PairStore::Arrays a;
  a.pairs = size_t(h.pairs);
  a.ids = h.ids;
  a.id_bytes = int(h.id_bytes);
  const uint8_t* at = mapped->data() + sizeof(CorpusFileHeader) + h.meta_bytes;
  a.src_len = reinterpret_cast<const uint32_t*>(at);
  a.tgt_len = reinterpret_cast<const uint32_t*>(at + 4 * h.pairs);
  a.offsets = reinterpret_cast<const uint64_t*>(at + 8 * h.pairs);
  a.id_data = at + 8 * h.pairs + 8 * (h.pairs + 1);
  TrainCorpus corpus;
  corpus.pairs = PairStore(a, std::move(mapped));
  corpus.stats = stats_from_json(checked.meta.at("stats"));
  const json& parts = checked.meta.at("parts");
  for (size_t i = 0; i < parts.size(); ++i) {
    const json& p = parts[i];
    corpus.parts.push_back({p.at("name").get<std::string>(), p.at("begin").get<size_t>(),
                            p.at("end").get<size_t>(), data.train.at(i).weight,
                            stats_from_json(p.at("stats"))});
  }
  return corpus;
}

std::string_view bytes_of(const void* data, uint64_t size) {
  return {static_cast<const char*>(data), size_t(size)};
}

}  // namespace

void write_encoded_corpus(const fs::path& file, const TrainCorpus& corpus, const DataConfig& data,
                          const Tokenizer& tokenizer) {
  json parts = json::array();
  for (const auto& part : corpus.parts) {
    parts.push_back({{"name", part.name},
                     {"begin", part.begin},
                     {"end", part.end},
                     {"stats", stats_json(part.stats)}});
  }
  const json meta = {{"made_from", corpus_made_from(data, tokenizer)},
                     {"stats", stats_json(corpus.stats)},
                     {"parts", parts}};
  std::string meta_text = meta.dump();
  meta_text.resize((meta_text.size() + 7) / 8 * 8, ' ');  // JSON allows trailing spaces
  const PairStore::Arrays& a = corpus.pairs.arrays();
  CorpusFileHeader h{};
  std::memcpy(h.magic, kCorpusMagic, sizeof kCorpusMagic);
  h.version = kCorpusFormat;
  h.id_bytes = uint32_t(a.id_bytes);
  h.pairs = a.pairs;
  h.ids = a.ids;
  h.meta_bytes = meta_text.size();
  h.file_bytes = corpus_file_bytes(h);
  static const uint64_t kNoOffsets = 0;  // an empty store has no offsets array
  const std::vector<std::string_view> pieces = {
      bytes_of(&h, sizeof h),
      meta_text,
      bytes_of(a.src_len, 4 * a.pairs),
      bytes_of(a.tgt_len, 4 * a.pairs),
      a.offsets ? bytes_of(a.offsets, 8 * (a.pairs + 1)) : bytes_of(&kNoOffsets, 8),
      bytes_of(a.id_data, a.ids * uint64_t(a.id_bytes))};
  uint32_t crc = 0;
  for (const auto piece : pieces) crc = crc32_update(crc, piece.data(), piece.size());
  h.crc = crc;  // pieces[0] shows the header itself, so the file gets it
  write_file_atomically(file, pieces, "encoded training corpus");
}

TrainCorpus prepare_encoded_corpus(const DataConfig& data, const Tokenizer& tokenizer,
                                   const fs::path& run_dir, EncodedCorpusReport* report) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const fs::path file = encoded_corpus_file(run_dir);
  // Recorded before the corpora are read: a corpus changed meanwhile is noticed next time.
  const json made_from = corpus_made_from(data, tokenizer);
  CheckedCorpusFile checked;
  const std::string problem = check_corpus_file(file, made_from, checked);
  if (!problem.empty()) {
    {
      const TrainCorpus encoded = encode_corpora(data, data.train, tokenizer);
      std::error_code ec;
      fs::create_directories(run_dir, ec);
      write_encoded_corpus(file, encoded, data, tokenizer);
    }  // the encoded buffers are freed: training reads the mapped file, as later runs do
    const std::string again = check_corpus_file(file, made_from, checked);
    if (!again.empty()) {
      throw Error(file.string() + " was just written but cannot be used: " + again);
    }
  }
  TrainCorpus corpus = map_corpus_file(file, checked, data);
  if (report != nullptr) {
    report->file = file;
    report->built = !problem.empty();
    report->reason = problem;
    report->seconds = std::chrono::duration<double>(Clock::now() - start).count();
    report->bytes = checked.header.file_bytes;
  }
  return corpus;
}

TrainCorpus open_encoded_corpus(const DataConfig& data, const Tokenizer& tokenizer,
                                const fs::path& run_dir) {
  const fs::path file = encoded_corpus_file(run_dir);
  CheckedCorpusFile checked;
  const std::string problem = check_corpus_file(file, corpus_made_from(data, tokenizer), checked);
  if (!problem.empty()) {
    throw Error(file.string() + ", the encoded training corpus, cannot be used: " + problem +
                " (it is written by nmt prepare or by rank 0 of nmt train; train.run_dir must "
                "be on a file system every rank shares)");
  }
  return map_corpus_file(file, checked, data);
}

}  // namespace nmt
