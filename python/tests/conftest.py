"""The package's tests use the plugin they test (loaded as the installed entry point, or
here when run from the source tree) and the debug build of this checkout by default."""

import os

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
os.environ.setdefault("MOCKCHAT", os.path.join(ROOT, ".build", "debug", "mockchat"))

pytest_plugins = ["pytester"]
