"""Trust: which Ed25519 keys may sign cards here, over which windows, and which are revoked.

:mod:`~cartograph.trust.keys` holds key material (the operator key pair, key ids, PEM and
base64url), :mod:`~cartograph.trust.store` the trust store (``keys/trust.json``),
:mod:`~cartograph.trust.revocation` the signed revocation list and
:mod:`~cartograph.trust.lifecycle` the steps that change them (init, rotate, trust a peer).
Nothing here knows what a card is: :mod:`cartograph.cards` asks the trust store whether a key
may sign at a given time.
"""
