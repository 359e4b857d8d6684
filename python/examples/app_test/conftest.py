import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "Drivers", "python"))          # the SDK the app uses
os.environ.setdefault("MOCKCHAT", os.path.join(ROOT, ".build", "debug", "mockchat"))
