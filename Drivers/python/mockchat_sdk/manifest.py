"""What this SDK declares to MockChat (docs/SPECIFICATION.md, "The manifest").

The SDK follows MockChat's value for every parameter of the rule book, implements every
feature and waives no decision, so the manifest names it and declares nothing else. An
SDK with values of its own lists them under `parameters`, and its deliberate differences
from a decision under `waivers`, each with a reason.
"""

MANIFEST = {
    "sdk": {"name": "mockchat-python-sdk", "version": "0.2.0"},
    "parameters": {},
    "waivers": [],
}
