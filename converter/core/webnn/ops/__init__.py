"""Operator families of MLGraphBuilder, one mixin module per family."""
