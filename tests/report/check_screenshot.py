#!/usr/bin/env python3
"""check_screenshot.py SHOT.png: exit 1 unless the PNG shows something.

A blank page renders one colour; a page with the report's bar chart and
roofline has many, and a fair share of pixels that are not background.
Decodes 8-bit RGB/RGBA PNGs (what Chromium writes) with zlib only.
"""
import struct
import sys
import zlib


def pixels(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit(f"{path}: not a PNG")
    pos, idat, width = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            if depth != 8 or colour not in (2, 6):
                raise SystemExit(f"{path}: bit depth {depth}, colour type {colour} not handled")
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw, stride = zlib.decompress(idat), width * channels
    previous, rows = bytearray(stride), []
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b, c = previous[i], previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        previous = line
    return rows, channels


def main():
    rows, channels = pixels(sys.argv[1])
    colours, inked, total = set(), 0, 0
    for row in rows[::4]:
        for x in range(0, len(row), channels * 4):
            rgb = row[x:x + 3]
            colours.add(rgb)
            total += 1
            inked += rgb != b"\xff\xff\xff"
    share = inked / max(total, 1)
    print(f"{len(colours)} colours, {100 * share:.1f}% of pixels not white")
    if len(colours) < 8 or share < 0.02:
        raise SystemExit("the screenshot is blank")


if __name__ == "__main__":
    main()
