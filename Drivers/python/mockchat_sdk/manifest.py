"""What this SDK declares to MockChat (docs/SPECIFICATION.md, "The manifest").

The SDK follows MockChat's value for every parameter of the rule book but the text of its
not-initialized error, implements every feature, and waives one decision, with its reason. An
SDK with values of its own lists them under `parameters`, and its deliberate differences
from a decision under `waivers`, each with a reason.
"""

from .errors import DESCRIPTIONS, NOT_INITIALIZED

MANIFEST = {
    "sdk": {"name": "mockchat-python-sdk", "version": "0.2.0"},
    "parameters": {"notInitializedDescription": DESCRIPTIONS[NOT_INITIALIZED]},
    "waivers": [
        {"rule": "connection.init-in-background-waits",
         "reason": "init() connects a saved user whatever the app state; apps call it on their foreground launch path"},
    ],
}
