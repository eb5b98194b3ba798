"""Shared pieces of Basalt's benchmark harness (see bench/README.md)."""
