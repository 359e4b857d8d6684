#!/usr/bin/env python3
"""The fault table: every fault of `POST /control/faults` (docs/PROTOCOL.md, 12.7)
measured over real sockets against a real `mockchat serve --clock virtual`, one fresh
server per row. Each row sets a fault, acts as a client would, and writes down what the
client observed (status line, headers and body of the upgrade, which frames arrived in
what order, the close code, a reset or an end of stream, and when on the virtual clock),
next to what the protocol document says. Then: each fault left on is cleared by
`POST /control/reset`, and bad bodies get 400 naming the field.

Usage: scripts/probes/fault-table.py [MOCKCHAT_BINARY] [--only WORD] [--expect 'ROW=TEXT']
(`make fault-table`; default binary .build/debug/mockchat). Prints a Markdown table and
exits 1 when a row's measurement is not its expectation. `--expect` replaces a row's
expectation (to see a row fail); `--only` runs the rows whose name contains WORD.

A time is the clock reading, in ms after the action, at which the client first had
it: the clock is advanced to each step in turn, so `+500 ms` means absent at +499,
present at +500. The rows are in fault_rows_*.py, the client and the clocked
server in fault_peer.py (the process itself in scripts/mockchat_server.py).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fault_peer import ROWS, Clocked  # noqa: E402
import fault_rows_link, fault_rows_connection, fault_rows_input  # noqa: E402,F401 (they register the rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binary", nargs="?", default=".build/debug/mockchat")
    parser.add_argument("--only", default="")
    parser.add_argument("--expect", action="append", default=[], help="ROW=TEXT: replaces a row's expectation")
    args = parser.parse_args()
    overrides = dict(item.split("=", 1) for item in args.expect)
    unknown = set(overrides) - {name for name, _, _ in ROWS}
    if unknown:
        parser.error(f"no row named {', '.join(sorted(unknown))}")
    print("| fault and body | measured | expected | ok |")
    print("|---|---|---|---|")
    run = failed = 0
    for name, body, function in ROWS:
        if args.only not in name:
            continue
        clock = Clocked(args.binary)
        try:
            measured, expected, *figure = function(clock)
        except Exception as error:  # a row that cannot finish is a failed row, named
            measured, expected, figure = f"the row stopped: {error!r}", "the row finishes", []
        finally:
            clock.stop()
        expected = overrides.get(name, expected)
        run += 1
        failed += measured != expected
        shown = f"{measured} ({figure[0]})" if figure else measured
        print(f"| {name}: `{body}` | {shown} | {expected} | {'ok' if measured == expected else '**no**'} |", flush=True)
    print(f"fault-table: {run - failed} of {run} rows as expected", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
