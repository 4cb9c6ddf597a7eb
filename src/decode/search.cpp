#include "decode/search.h"

#include <torch/types.h>
#include <torch/utils.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <limits>
#include <mutex>
#include <numeric>
#include <string>
#include <thread>

#include "core/device.h"
#include "core/error.h"
#include "core/precision.h"
#include "core/special_ids.h"
#include "decode/search_internal.h"
#include "decode/searcher.h"

namespace nmt {
namespace detail {

std::vector<int64_t> output_limits(const Ensemble& models, const at::Tensor& src,
                                   const DecodeConfig& config) {
  TORCH_CHECK(src.dim() == 2, "search: src must be [batch, src_len], got ", src.sizes());
  // Non-pad tokens per row include the eos that terminates every source.
  const auto lengths = src.ne(kPadId).sum(1).to(at::kCPU, at::kLong).contiguous();
  std::vector<int64_t> limits(lengths.size(0));
  for (size_t i = 0; i < limits.size(); ++i) {
    limits[i] = max_output_length(models, lengths.data_ptr<int64_t>()[i] - 1, config);
  }
  return limits;
}

void advance_rows(std::vector<Hypothesis>& hypotheses, std::vector<int64_t>& rows,
                  const std::vector<int64_t>& limits, at::Tensor& ids, const at::Tensor& log_probs,
                  EnsembleState& state) {
  const auto ids_cpu = ids.to(at::kCPU).contiguous();
  const auto log_probs_cpu = log_probs.to(at::kCPU, at::kDouble).contiguous();
  std::vector<int64_t> keep, still_active;
  for (size_t i = 0; i < rows.size(); ++i) {
    auto& hypothesis = hypotheses[rows[i]];
    const int64_t token = ids_cpu.data_ptr<int64_t>()[i];
    hypothesis.log_prob += log_probs_cpu.data_ptr<double>()[i];
    if (token == kEosId) continue;
    hypothesis.tokens.push_back(token);
    if (static_cast<int64_t>(hypothesis.tokens.size()) >= limits[rows[i]]) continue;
    keep.push_back(static_cast<int64_t>(i));
    still_active.push_back(rows[i]);
  }
  if (!keep.empty() && keep.size() < rows.size()) {  // drop finished rows everywhere
    const auto index = index_tensor(keep, ids.device());
    state.select(index);
    ids = ids.index_select(0, index);
  }
  rows = std::move(still_active);
}

void force_prefixes(at::Tensor& log_probs, int64_t step,
                    const std::vector<const OutputGuide*>& guides) {
  std::vector<int64_t> rows, tokens;
  for (size_t i = 0; i < guides.size(); ++i) {
    if (guides[i] != nullptr && static_cast<int64_t>(guides[i]->prefix.size()) > step) {
      rows.push_back(static_cast<int64_t>(i));
      tokens.push_back(guides[i]->prefix[step]);
    }
  }
  if (rows.empty()) return;
  const auto row_index = index_tensor(rows, log_probs.device());
  const auto token_index = index_tensor(tokens, log_probs.device());
  const auto kept = log_probs.index({row_index, token_index});
  log_probs.index_fill_(0, row_index, -std::numeric_limits<double>::infinity());
  log_probs.index_put_({row_index, token_index}, kept);
}

std::vector<const std::vector<int64_t>*> histories(const std::vector<Hypothesis>& hypotheses,
                                                   const std::vector<int64_t>& rows) {
  std::vector<const std::vector<int64_t>*> out;
  out.reserve(rows.size());
  for (const int64_t row : rows) out.push_back(&hypotheses[size_t(row)].tokens);
  return out;
}

void guard_unforced(at::Tensor& log_probs, std::vector<const std::vector<int64_t>*> histories,
                    const std::vector<const OutputGuide*>& guides, int64_t step,
                    const DecodeConfig& config) {
  for (size_t r = 0; r < guides.size() && r < histories.size(); ++r) {
    if (guides[r] != nullptr && int64_t(guides[r]->prefix.size()) > step) histories[r] = nullptr;
  }
  guard_repetition(log_probs, histories, config);
}

std::vector<const OutputGuide*> row_guides(const std::vector<OutputGuide>& guides,
                                           const std::vector<int64_t>& rows, int64_t repeat) {
  std::vector<const OutputGuide*> result;
  if (guides.empty()) return result;
  for (const int64_t row : rows) result.insert(result.end(), repeat, &guides[row]);
  return result;
}

std::vector<std::vector<int64_t>> guide_ids(const std::vector<OutputGuide>& guides) {
  std::vector<std::vector<int64_t>> ids;
  for (const auto& guide : guides) {
    auto& own = ids.emplace_back(guide.prefix.begin(), guide.prefix.end());
    for (const auto& phrase : guide.constraints)
      own.insert(own.end(), phrase.begin(), phrase.end());
  }
  return ids;
}

at::Tensor index_tensor(const std::vector<int64_t>& index, const at::Device& device) {
  return at::tensor(at::ArrayRef<int64_t>(index), at::kLong).to(device);
}

}  // namespace detail

double gnmt_length_penalty(int64_t length, double alpha) {
  return std::pow((5.0 + static_cast<double>(length)) / 6.0, alpha);
}

int64_t OutputGuide::constraint_tokens() const {
  int64_t tokens = 0;
  for (const auto& phrase : constraints) tokens += static_cast<int64_t>(phrase.size());
  return tokens;
}

int64_t max_output_length(const Ensemble& models, int64_t src_len, const DecodeConfig& config) {
  const int64_t limit = std::min(src_len + config.max_len_offset, models.max_len() - 1);
  return std::max<int64_t>(limit, 1);
}

void check_guide(const OutputGuide& guide, int64_t output_limit, const DecodeConfig& config,
                 const std::string& what) {
  const auto limit = std::to_string(output_limit);
  if (static_cast<int64_t>(guide.prefix.size()) > output_limit) {
    throw Error(what + ": the prefix has " + std::to_string(guide.prefix.size()) +
                " target pieces, more than this output may have (" + limit +
                ": source length + decode.max_len_offset, within model.max_len); shorten it");
  }
  if (guide.constraints.empty()) return;
  if (!make_searcher(config)->keeps_constraints()) {
    throw Error(what + ": constraints need beam search; decode.search = " +
                choice_name(config.search) + " cannot keep them");
  }
  for (size_t i = 0; i < guide.constraints.size(); ++i) {
    if (guide.constraints[i].empty()) {
      throw Error(what + ": constraint " + std::to_string(i + 1) + " is empty");
    }
  }
  if (guide.constraint_tokens() > output_limit) {
    throw Error(what + ": the constraints have " + std::to_string(guide.constraint_tokens()) +
                " target pieces together, more than this output may have (" + limit +
                ": source length + decode.max_len_offset, within model.max_len); give fewer");
  }
  // Room after the prefix for the constraints it does not already hold.
  int64_t outside_prefix = 0;
  for (const auto& phrase : guide.constraints) {
    if (std::search(guide.prefix.begin(), guide.prefix.end(), phrase.begin(), phrase.end()) ==
        guide.prefix.end()) {
      outside_prefix += static_cast<int64_t>(phrase.size());
    }
  }
  const auto prefix_length = static_cast<int64_t>(guide.prefix.size());
  if (prefix_length + outside_prefix > output_limit) {
    throw Error(what + ": the prefix (" + std::to_string(prefix_length) +
                " target pieces) and the constraints it does not hold (" +
                std::to_string(outside_prefix) + ") need more than this output may have (" + limit +
                ": source length + decode.max_len_offset, within model.max_len)");
  }
}

std::vector<Hypothesis> greedy_search(const Ensemble& models, const at::Tensor& src,
                                      const DecodeConfig& config,
                                      const std::vector<OutputGuide>& guides) {
  if (src.size(0) == 0) return {};
  TORCH_CHECK(guides.empty() || static_cast<int64_t>(guides.size()) == src.size(0),
              "greedy_search: ", guides.size(), " guides for ", src.size(0), " rows");
  torch::NoGradGuard no_grad;
  const auto limits = detail::output_limits(models, src, config);
  EnsembleState state(models, src, detail::guide_ids(guides));
  std::vector<Hypothesis> hypotheses(src.size(0));
  std::vector<int64_t> rows(src.size(0));  // input row of each active row
  std::iota(rows.begin(), rows.end(), 0);
  auto tokens = at::full({src.size(0), 1}, kBosId, src.options().dtype(at::kLong));
  for (int64_t step = 0; !rows.empty(); ++step) {
    auto log_probs = state.next_log_probs(tokens);
    const auto guided =
        guides.empty() ? std::vector<const OutputGuide*>() : detail::row_guides(guides, rows);
    if (guards_repetition(config)) {
      detail::guard_unforced(log_probs, detail::histories(hypotheses, rows), guided, step, config);
    }
    if (!guides.empty()) detail::force_prefixes(log_probs, step, guided);
    auto [best, best_ids] = log_probs.max(-1, /*keepdim=*/true);  // [active, 1]
    detail::advance_rows(hypotheses, rows, limits, best_ids, best, state);
    tokens = best_ids;  // [active, 1]
  }
  for (auto& hypothesis : hypotheses) hypothesis.score = hypothesis.log_prob;
  return hypotheses;
}

std::vector<Hypothesis> greedy_search_naive(Seq2Seq& model, const at::Tensor& src,
                                            const DecodeConfig& config) {
  torch::NoGradGuard no_grad;
  detail::EvalModeGuard eval_mode(*model);
  const auto limits = detail::output_limits(Ensemble(model), src, config);
  std::vector<Hypothesis> hypotheses(src.size(0));
  for (int64_t row = 0; row < src.size(0); ++row) {
    const int64_t length = src[row].ne(kPadId).sum().item<int64_t>();
    const auto sentence = src.slice(0, row, row + 1).slice(1, 0, length);  // [1, length]
    const auto src_mask = model->make_src_mask(sentence);
    const auto memory = model->encode(sentence, src_mask);
    std::vector<int64_t> prefix = {kBosId};
    auto& hypothesis = hypotheses[row];
    while (true) {
      const auto tgt = detail::index_tensor(prefix, src.device()).unsqueeze(0);  // [1, t]
      const auto logits = std::get<0>(model->decode(tgt, memory, src_mask));     // [1, t, vocab]
      const auto log_probs = output_log_probs(logits[0][-1]);                    // [vocab]
      const int64_t token = log_probs.argmax().item<int64_t>();
      hypothesis.log_prob += log_probs[token].item<double>();
      if (token == kEosId) break;
      hypothesis.tokens.push_back(token);
      prefix.push_back(token);
      if (static_cast<int64_t>(hypothesis.tokens.size()) >= limits[row]) break;
    }
    hypothesis.score = hypothesis.log_prob;
  }
  return hypotheses;
}

std::vector<std::vector<size_t>> decode_batches(const std::vector<int64_t>& lengths,
                                                int64_t batch_tokens, int64_t rows_per_source,
                                                bool taper) {
  std::vector<size_t> order(lengths.size());
  std::iota(order.begin(), order.end(), 0);
  // Longest first: the first source of a batch is its longest.
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return lengths[a] > lengths[b]; });
  const auto cost = [&](size_t index) { return rows_per_source * (lengths[index] + 1); };
  int64_t left = 0;  // the work not in a batch yet, in tokens without padding
  for (const size_t index : order) left += cost(index);
  // Tapered: each batch takes at most a quarter of the work left, and no less than an eighth of
  // the budget, so the last batches get smaller and decoding workers that take the next batch
  // in turn finish close together (5 full batches for 2 workers left one idle for a fifth of
  // the run). One worker gains nothing from it, and loses speed to the smaller batches.
  const auto budget_for = [&](int64_t work_left) {
    if (!taper) return batch_tokens;
    return std::clamp<int64_t>(work_left / 4, std::max<int64_t>(1, batch_tokens / 8), batch_tokens);
  };
  std::vector<std::vector<size_t>> batches;
  std::vector<size_t> current;
  int64_t budget = budget_for(left);
  for (const size_t index : order) {
    if (!current.empty()) {
      const int64_t rows = (static_cast<int64_t>(current.size()) + 1) * rows_per_source;
      if (rows * (lengths[current.front()] + 1) > budget) {
        batches.push_back(std::move(current));
        current.clear();
        budget = budget_for(left);
      }
    }
    current.push_back(index);
    left -= cost(index);
  }
  if (!current.empty()) batches.push_back(std::move(current));
  return batches;
}

namespace {

/// Pads sources[indices] (+ eos) into [rows, longest + 1] on `device`.
at::Tensor collate_sources(const std::vector<std::vector<int64_t>>& sources,
                           const std::vector<size_t>& indices, const at::Device& device) {
  size_t longest = 0;
  for (const size_t i : indices) longest = std::max(longest, sources[i].size());
  auto src = at::full({static_cast<int64_t>(indices.size()), static_cast<int64_t>(longest) + 1},
                      kPadId, at::kLong);
  auto* data = src.data_ptr<int64_t>();
  for (size_t row = 0; row < indices.size(); ++row) {
    const auto& ids = sources[indices[row]];
    std::copy(ids.begin(), ids.end(), data + row * (longest + 1));
    data[row * (longest + 1) + ids.size()] = kEosId;
  }
  return src.to(device);
}

}  // namespace

std::vector<std::vector<Hypothesis>> decode_all(const Ensemble& models,
                                                const std::vector<std::vector<int64_t>>& sources,
                                                const DecodeConfig& config,
                                                const at::Device& device, StopCheck stop,
                                                int64_t workers,
                                                const std::vector<OutputGuide>& guides) {
  return decode_all(models, sources, *make_searcher(config), device, stop, workers, guides);
}

std::vector<std::vector<Hypothesis>> decode_all(const Ensemble& models,
                                                const std::vector<std::vector<int64_t>>& sources,
                                                Searcher& searcher, const at::Device& device,
                                                StopCheck stop, int64_t workers,
                                                const std::vector<OutputGuide>& guides) {
  const DecodeConfig& config = searcher.config();
  TORCH_CHECK(guides.empty() || guides.size() == sources.size(), "decode_all: ", guides.size(),
              " guides for ", sources.size(), " sources");
  const int64_t max_src = models.max_len() - 1;
  std::vector<int64_t> lengths;
  for (size_t i = 0; i < sources.size(); ++i) {
    lengths.push_back(static_cast<int64_t>(sources[i].size()));
    if (lengths.back() > max_src) {
      throw Error("source " + std::to_string(i + 1) + " has " + std::to_string(lengths.back()) +
                  " tokens; the model accepts at most " + std::to_string(max_src) +
                  " (model.max_len - 1 for eos): truncate it first");
    }
    if (!guides.empty()) {
      check_guide(guides[i], max_output_length(models, lengths.back(), config), config,
                  "source " + std::to_string(i + 1));
    }
  }
  std::vector<std::vector<Hypothesis>> results(sources.size());
  // Sources with constraints are batched apart: the constrained search gives every sentence of
  // its batch its candidates, and an unconstrained line must not depend on its neighbours.
  std::vector<std::vector<size_t>> batches;
  for (const bool constrained : {false, true}) {
    std::vector<size_t> members;
    std::vector<int64_t> member_lengths;
    for (size_t i = 0; i < sources.size(); ++i) {
      if ((!guides.empty() && !guides[i].constraints.empty()) != constrained) continue;
      members.push_back(i);
      member_lengths.push_back(lengths[i]);
    }
    // Several workers share the batches, so they taper (whatever their number: 2 and 8 workers
    // decode the same batches); one worker (the server's, CUDA's, --workers 1) gets whole ones.
    const bool taper = workers > 1 && searcher.concurrent();
    for (auto batch :
         decode_batches(member_lengths, config.batch_tokens, config.candidates(), taper)) {
      for (auto& index : batch) index = members[index];
      batches.push_back(std::move(batch));
    }
  }
  const auto decode_batch = [&](const std::vector<size_t>& batch) {
    const auto src = collate_sources(sources, batch, device);  // [rows, longest + 1]
    std::vector<OutputGuide> batch_guides;
    for (const size_t i : batch) {
      if (guides.empty()) break;
      batch_guides.push_back(guides[i]);
    }
    auto candidates = searcher.search(models, src, batch_guides);
    for (size_t row = 0; row < batch.size(); ++row)
      results[batch[row]] = std::move(candidates[row]);
  };
  workers = std::min<int64_t>(workers, static_cast<int64_t>(batches.size()));
  if (workers <= 1 || !searcher.concurrent()) {
    for (const auto& batch : batches) {
      if (stop != nullptr && stop()) break;
      decode_batch(batch);
    }
    return results;
  }
  // Each worker takes the next batch in order; a batch writes only its own sources' results.
  const int64_t threads = std::max<int64_t>(1, at::get_num_threads() / workers);
  const auto autocast = InheritedAutocast::State::current();
  std::atomic<size_t> next{0};
  std::atomic<bool> stopped{false};
  std::mutex failure_mutex;
  std::exception_ptr failure;
  const auto work = [&] {
    try {
      set_thread_intra_op_threads(threads);
      InheritedAutocast inherited(autocast);
      for (size_t i = next++; i < batches.size() && !stopped; i = next++) {
        if (stop != nullptr && stop()) {
          stopped = true;
          break;
        }
        decode_batch(batches[i]);
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      stopped = true;
    }
  };
  std::vector<std::thread> pool;
  for (int64_t w = 0; w < workers; ++w) pool.emplace_back(work);
  for (auto& thread : pool) thread.join();
  if (failure) std::rethrow_exception(failure);
  return results;
}

}  // namespace nmt
