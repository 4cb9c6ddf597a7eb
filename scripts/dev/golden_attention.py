#!/usr/bin/env python3
"""Writes tests/fixtures/attention_golden.json: a multi-head attention example computed with
NumPy straight from the definition (Vaswani et al. 2017, eq. 1 and §3.2.2), independent of
LibTorch. The C++ test loads the same parameters into nmt::MultiHeadAttention and compares.

Usage: /usr/bin/python3 scripts/dev/golden_attention.py [OUT_JSON]
"""
import json
import sys
from pathlib import Path

import numpy as np

D_MODEL, HEADS, Q_LEN, K_LEN, BATCH = 4, 2, 2, 3, 2


def deterministic(shape, phase):
    """Smooth, repeatable values in [-1, 1] (no RNG, so the file is stable)."""
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * 0.7 + phase) * 0.9).reshape(shape)


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def main():
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else \
        Path(__file__).resolve().parents[2] / "tests/fixtures/attention_golden.json"
    params = {}
    for i, name in enumerate(["fc_q", "fc_k", "fc_v", "fc_o"]):
        params[name + ".weight"] = deterministic((D_MODEL, D_MODEL), 1.0 + i)
        params[name + ".bias"] = deterministic((D_MODEL,), 5.0 + i) * 0.1
    query = deterministic((BATCH, Q_LEN, D_MODEL), 0.3)
    key = deterministic((BATCH, K_LEN, D_MODEL), 0.6)
    value = deterministic((BATCH, K_LEN, D_MODEL), 0.9)
    # Second sentence: its last key is padding.
    mask = np.ones((BATCH, 1, 1, K_LEN), dtype=bool)
    mask[1, 0, 0, K_LEN - 1] = False

    def linear(x, name):  # y = x W^T + b, as torch.nn.Linear
        return x @ params[name + ".weight"].T + params[name + ".bias"]

    head_dim = D_MODEL // HEADS

    def heads(x):  # [b, len, d] -> [b, h, len, hd]
        return x.reshape(x.shape[0], x.shape[1], HEADS, head_dim).transpose(0, 2, 1, 3)

    q, k, v = heads(linear(query, "fc_q")), heads(linear(key, "fc_k")), heads(linear(value, "fc_v"))
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(head_dim)
    scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores)
    context = (weights @ v).transpose(0, 2, 1, 3).reshape(BATCH, Q_LEN, D_MODEL)
    output = linear(context, "fc_o")

    doc = {
        "d_model": D_MODEL, "n_heads": HEADS,
        "params": {k: v.tolist() for k, v in params.items()},
        "query": query.tolist(), "key": key.tolist(), "value": value.tolist(),
        "mask": mask.tolist(), "weights": weights.tolist(), "output": output.tolist(),
    }
    out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
