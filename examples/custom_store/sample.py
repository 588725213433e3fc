"""Shared by the custom-store examples: a short text and a tiny deterministic embedder.

Any embedder works in its place: a callable ``texts -> vectors`` or an object with
``.embed(texts)``.
"""

from __future__ import annotations

import re

DIMENSION = 16
TEXT = (
    "The harbour opens at dawn. The lighthouse keeper logs every ship that passes. "
    "Fishing boats leave before the tide turns, and the cannery waits for their return. "
    "At noon the market fills with traders selling rope, nets and salt. "
    "A storm warning reaches the harbour master at four o'clock. "
    "Shipwrights haul the small boats ashore while the keeper trims the lamp. "
    "By nightfall the beam sweeps the rocks every twelve seconds."
)


def embed(texts: list[str]) -> list[list[float]]:
    """Bag of words hashed into DIMENSION buckets (stable across runs)."""
    vectors = []
    for text in texts:
        vector = [0.0] * DIMENSION
        vector[0] = 1.0
        for word in re.findall(r"\w+", text.lower()):
            vector[1 + sum(map(ord, word)) % (DIMENSION - 1)] += 1.0
        vectors.append(vector)
    return vectors
