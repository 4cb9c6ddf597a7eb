#pragma once

#include <cstdint>
#include <vector>

#include "data/dataset.h"

namespace nmt {

// Weighted corpora (data.train with "weight"s). Per epoch, a corpus of n kept pairs and weight w
// contributes c = round(w x n) pairs: floor(c / n) copies of each of its pairs, then c mod n
// more, drawn without repetition from it (a partial Fisher-Yates shuffle). The draws come from
// one generator for all corpora, in data.train order, seeded from (data.seed, epoch) through
// epoch_generator, so an epoch's mix is the same on every platform and after a resume. The
// batching shuffle (make_batches) then mixes the corpora.

/// data.sampling_temperature over language pairs: with n_p the pairs pair p contributes per
/// epoch under the corpus weights (parts[i] is data.train[i]), pair p's share becomes
/// n_p^(1/T) / sum_q n_q^(1/T) of the same epoch size, by scaling the weights of its corpora by
/// one factor. T = 1, or one pair: the weights stay as they are. Returns one line per pair for
/// the log ("" when nothing changed).
std::string apply_sampling_temperature(const DataConfig& data, std::vector<CorpusPart>& parts);

/// Whether any part has a weight other than 1 (else every pair is used once: no mixing).
bool mixes(const std::vector<CorpusPart>& parts);

/// The indices into the concatenated corpora that epoch `epoch` trains on, corpus by corpus
/// (copies first, then the drawn rest, in draw order).
std::vector<size_t> epoch_mix(const std::vector<CorpusPart>& parts, int64_t seed, int64_t epoch);

/// How many pairs each part contributes per epoch: round(weight x size).
std::vector<size_t> mix_counts(const std::vector<CorpusPart>& parts);

/// Throws an nmt::Error naming every corpus and its weight when the weights leave an epoch with
/// no pair at all (a training loop would have no batch to take), with the weight that would give
/// each corpus one pair.
void check_mix_not_empty(const std::vector<CorpusPart>& parts);

}  // namespace nmt
