"""Regenerate the Keras recurrent-layer fixtures (keras_*.tflite) used by
tests/op_mappings/tflite/test_control_flow.py.

Keras RNN layers export to TFLite as WHILE loops (a counter compared with a constant limit,
tensor lists lowered to GATHER / SLICE / CONCATENATION). Needs TensorFlow (not needed by the
tests, which only read the stored files):

    .venv/bin/python tests/op_mappings/tflite/data/make_keras_rnn.py
"""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

HERE = Path(__file__).resolve().parent


def main() -> None:
    import tensorflow as tf

    tf.random.set_seed(0)
    layers = tf.keras.layers
    specs = {
        "simple_rnn": lambda: layers.SimpleRNN(6, return_sequences=True),
        "gru": lambda: layers.GRU(6, return_sequences=True),
        "lstm": lambda: layers.LSTM(6, return_sequences=True),
        "bidirectional_lstm": lambda: layers.Bidirectional(layers.LSTM(4)),
    }
    for name, make in specs.items():
        inp = tf.keras.Input((5, 3), batch_size=1)
        model = tf.keras.Model(inp, make()(inp))
        data = tf.lite.TFLiteConverter.from_keras_model(model).convert()
        (HERE / f"keras_{name}.tflite").write_bytes(data)
        print(name, len(data), "bytes")


if __name__ == "__main__":
    main()
