"""com.microsoft (onnxruntime contrib) op handlers, discovered like the standard ones."""
