"""Regenerate the control-flow fixtures used by tests/op_mappings/tflite/test_control_flow.py.

- keras_*.tflite: Keras RNN layers, which export to TFLite as WHILE loops (a counter compared
  with a constant limit, tensor lists lowered to GATHER / SLICE / CONCATENATION);
- tf_cond.tflite: `tf.cond` on a value computed from the input (an IF whose condition is
  only known at run time).

Needs TensorFlow (not needed by the tests, which only read the stored files):

    .venv/bin/python tests/op_mappings/tflite/data/make_fixtures.py
"""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

HERE = Path(__file__).resolve().parent


def main() -> None:
    import tensorflow as tf

    tf.keras.utils.set_random_seed(0)
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

    @tf.function(input_signature=[tf.TensorSpec([2, 3], tf.float32)])
    def cond(x: tf.Tensor) -> tf.Tensor:
        return tf.cond(tf.reduce_sum(x) > 0, lambda: tf.nn.relu(x) * 2.0,
                       lambda: tf.tanh(x) - 1.0)

    data = tf.lite.TFLiteConverter.from_concrete_functions(
        [cond.get_concrete_function()]).convert()
    (HERE / "tf_cond.tflite").write_bytes(data)
    print("tf_cond", len(data), "bytes")


if __name__ == "__main__":
    main()
