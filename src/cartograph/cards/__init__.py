"""Capability cards: the model, the seal (sign and verify over RFC 8785 bytes), the store
codec, aliases and federation, and the verification pool."""
