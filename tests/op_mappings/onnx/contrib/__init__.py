"""Tests of the com.microsoft (onnxruntime contrib) op handlers."""
