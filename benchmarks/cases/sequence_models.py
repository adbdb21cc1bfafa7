"""Case 8: one training step of a recurrent and of an attention model, in float32 and under
autocast (bfloat16), on one thread; milliseconds per step on a fixed random batch, after warm-up.

- LSTM language model: embedding (vocabulary 1000, width 256) -> 2-layer LSTM (hidden 256) ->
  linear to the vocabulary, cross-entropy over every position; sequence 64, batch 32.
- TransformerEncoder: 4 layers of TransformerEncoderLayer (d_model 256, 4 heads, feed-forward
  1024, dropout 0.1, batch_first), the mean over the sequence -> linear to 10 classes,
  cross-entropy; sequence 128, batch 16.

The step is the seed's loop body (zero_grad, forward and loss under autocast when asked,
backward and SGD with momentum outside it), as in case 5."""

import numpy as np

from benchmarks.cases.common import load, seconds_per_call
from benchmarks.cases.models import training_step
from benchmarks.report import Row, check

TITLE = "8. Sequence models: LSTM and Transformer training steps, one thread"

VOCAB, WIDTH = 1000, 256
LSTM_SEQUENCE, LSTM_BATCH = 64, 32
ENCODER_SEQUENCE, ENCODER_BATCH, HEADS, LAYERS = 128, 16, 4, 4
TARGET = 1.0  # at most PyTorch's time


def lstm_language_model(lib):
    nn = lib.nn

    class LanguageModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(VOCAB, WIDTH)
            self.lstm = nn.LSTM(WIDTH, WIDTH, num_layers=2)
            self.decoder = nn.Linear(WIDTH, VOCAB)

        def forward(self, tokens):  # (sequence, batch) -> (sequence * batch, vocabulary)
            out, _ = self.lstm(self.embedding(tokens))
            return self.decoder(out).reshape(-1, VOCAB)

    return LanguageModel()


def transformer_classifier(lib):
    nn = lib.nn

    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            layer = nn.TransformerEncoderLayer(WIDTH, HEADS, dim_feedforward=4 * WIDTH, batch_first=True)
            self.encoder = nn.TransformerEncoder(layer, LAYERS)
            self.head = nn.Linear(WIDTH, 10)

        def forward(self, x):  # (batch, sequence, width) -> (batch, 10)
            return self.head(self.encoder(x).mean(1))

    return Classifier()


def batches(lib):
    """A fixed random batch for each model: (input, class labels)."""
    rng = np.random.default_rng(0)
    tokens = rng.integers(0, VOCAB, (LSTM_SEQUENCE, LSTM_BATCH), dtype=np.int64)
    next_tokens = rng.integers(0, VOCAB, LSTM_SEQUENCE * LSTM_BATCH, dtype=np.int64)
    x = rng.standard_normal((ENCODER_BATCH, ENCODER_SEQUENCE, WIDTH), dtype=np.float32)
    labels = rng.integers(0, 10, ENCODER_BATCH, dtype=np.int64)
    return {"lstm": (lib.from_numpy(tokens), lib.from_numpy(next_tokens)),
            "transformer": (lib.from_numpy(x), lib.from_numpy(labels))}


MODELS = {"lstm": lstm_language_model, "transformer": transformer_classifier}


def children(quick):
    # One process per model and mode: PyTorch's CPU autocast LSTM needs oneDNN's bfloat16 LSTM,
    # which fails on CPUs without AVX-512, and that must not lose the float32 figure.
    return [{"model": name, "mode": mode, "threads": 1, "min_time": 0.0 if quick else 2.0}
            for name in MODELS for mode in ("float32", "autocast")]


def run(lib_name, params):
    lib = load(lib_name, params)
    name, mode = params["model"], params["mode"]
    x, y = batches(lib)[name]
    lib.manual_seed(0)
    step = training_step(lib, MODELS[name](lib), use_autocast=mode == "autocast")
    return {f"{name} {mode}": seconds_per_call(lambda: step(x, y), min_time=params["min_time"], warmup=2) * 1e3}


LABELS = {"lstm": f"LSTM language model, 2 x {WIDTH}, sequence {LSTM_SEQUENCE}, batch {LSTM_BATCH}",
          "transformer": f"TransformerEncoder, {LAYERS} x d_model {WIDTH}, {HEADS} heads, sequence "
                         f"{ENCODER_SEQUENCE}, batch {ENCODER_BATCH}"}


def rows(results, machine):
    out = []
    for name in MODELS:
        for mode in ("float32", "autocast"):
            row = Row(f"{LABELS[name]}, {mode}", "ms", *results[f"{name} {mode}"], kind="cost",
                      target=f"ratio <= {TARGET}")
            row.met = check(row.ratio, lambda r: r <= TARGET)
            out.append(row)
    return out
