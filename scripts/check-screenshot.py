#!/usr/bin/env python3
"""Checks a report screenshot (PNG, read with the standard library only): it has the
expected size, is not blank, and shows a highlight colour: the failing step's (#fdd) by
default, or the one given as a second argument (hex, e.g. dfd for the matrix's passes).
With --whole-width, nothing may be cut off at the right: the last pixel columns must be
the page's background in every row (a table wider than the window runs into them)."""
import struct
import sys
import zlib

HIGHLIGHT = (0xFF, 0xDD, 0xDD)
BACKGROUND = (0xFF, 0xFF, 0xFF)
MARGIN = 8


def read_png(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG file"
    offset, chunks, header = 8, [], None
    while offset < len(data):
        length, kind = struct.unpack(">I4s", data[offset:offset + 8])
        body = data[offset + 8:offset + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks.append(body)
        offset += 12 + length
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0, f"unsupported PNG format {header}"
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(chunks))
    stride = width * channels
    rows, previous, position = [], bytearray(stride), 0
    for _ in range(height):
        kind = raw[position]
        line = bytearray(raw[position + 1:position + 1 + stride])
        position += 1 + stride
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                predictor = left if pa <= pb and pa <= pc else (up if pb <= pc else corner)
                line[i] = (line[i] + predictor) & 0xFF
        rows.append(bytes(line))
        previous = line
    return width, height, channels, rows


def main(path, highlight_colour=HIGHLIGHT, whole_width=False):
    width, height, channels, rows = read_png(path)
    colours, highlight, cut_rows = set(), 0, 0
    for row in rows:
        for x in range(0, len(row), channels):
            pixel = tuple(row[x:x + 3])
            colours.add(pixel)
            if pixel == highlight_colour:
                highlight += 1
        edge = row[(width - MARGIN) * channels:]
        if any(tuple(edge[x:x + 3]) != BACKGROUND for x in range(0, len(edge), channels)):
            cut_rows += 1
    print(f"{path}: {width}x{height}, {len(colours)} colours, {highlight} highlight pixels, "
          f"{cut_rows} rows drawn into the last {MARGIN} pixel columns")
    problems = []
    if (width, height) != (1400, 1400):
        problems.append(f"size {width}x{height}, expected 1400x1400")
    if len(colours) < 8:
        problems.append("the page looks blank")
    if highlight < 500:
        problems.append(f"no highlight of colour #{bytes(highlight_colour).hex()} visible")
    if whole_width and cut_rows:
        problems.append(f"cut off at the right edge in {cut_rows} rows: the page is wider than {width} px")
    for problem in problems:
        print("screenshot check failed:", problem)
    return 1 if problems else 0


if __name__ == "__main__":
    arguments = [argument for argument in sys.argv[1:] if argument != "--whole-width"]
    colour = HIGHLIGHT
    if len(arguments) > 1:
        text = arguments[1].lstrip("#")
        text = "".join(c * 2 for c in text) if len(text) == 3 else text
        colour = tuple(bytes.fromhex(text))
    sys.exit(main(arguments[0], colour, whole_width="--whole-width" in sys.argv[1:]))
