#pragma once

#include <string>
#include <vector>

#include "core/config.h"

namespace nmt {

/// Minimum Bayes risk selection over an n-best list (Kumar & Byrne 2004; Freitag et al. 2022):
/// each candidate's expected utility is the model-probability-weighted mean of its utility
/// against every candidate (itself included) as a pseudo-reference,
///   E[u](h_i) = sum_j p_j u(h_i, h_j),   p_j = softmax over the list of log_probs,
/// with u = sentence BLEU ("bleu", sacreBLEU's sentence_bleu) or chrF2 ("chrf"). Picking the
/// candidate with the highest expected utility instead of the most probable one trades a
/// little model probability for agreement with the rest of the list.
/// Returns one expected utility (0..100) per candidate; `candidates` and `log_probs` have the
/// same size (an nmt::Error otherwise), and an unknown metric is an nmt::Error.
std::vector<double> mbr_expected_utilities(const std::vector<std::string>& candidates,
                                           const std::vector<double>& log_probs, MbrMetric metric);

/// The general form: E[u](h_i) = sum_j weights_j u(h_i, references_j), for candidates drawn
/// apart from the pseudo-references (sampling: the references are the distinct samples, each
/// weighted by the fraction of draws that gave it). `references` and `weights` have the same
/// size, the weights are >= 0 and sum to 1 (within 1e-6); otherwise, or for an unknown metric,
/// an nmt::Error.
std::vector<double> mbr_expected_utilities(const std::vector<std::string>& candidates,
                                           const std::vector<std::string>& references,
                                           const std::vector<double>& weights, MbrMetric metric);

}  // namespace nmt
