"""Capability cards: model, canonical JSON, seal (keys, sign, verify), generators and store."""
