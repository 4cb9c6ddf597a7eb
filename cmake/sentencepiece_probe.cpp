// Configure-time probe (cmake/sentencepiece.cmake): LibTorch and sentencepiece in one process.
#include <sentencepiece_processor.h>
#include <torch/torch.h>

int main() {
  sentencepiece::SentencePieceProcessor processor;
  return torch::ones({2}).sum().item<float>() == 2.0f ? 0 : 1;
}
