#!/usr/bin/env python3
"""Checks an image `ampc plot` (or a training binary's --plot) wrote.
Standard library only.

  check_image.py FILE WIDTH HEIGHT [TEXT...]

SVG: parses the XML; the root's width and height must be WIDTH and HEIGHT
and every TEXT (panel titles, legend entries) must be the whole content of
some <text> element. PNG: the signature and the IHDR chunk's size (the
text is not checked). Prints what it found; exit 1 on any difference.
"""
import struct
import sys
import xml.etree.ElementTree as ET


def texts_of(root):
    out = []
    for el in root.iter():
        if el.tag.endswith("}text") or el.tag == "text":
            out.append("".join(el.itertext()).strip())
    return out


def main():
    path, width, height = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    want = sys.argv[4:]
    with open(path, "rb") as f:
        data = f.read()
    bad = []
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        if data[12:16] != b"IHDR":
            print("png: no IHDR chunk")
            return 1
        w, h = struct.unpack(">II", data[16:24])
        kind = "png"
    else:
        root = ET.fromstring(data)
        if not root.tag.endswith("svg"):
            print("neither PNG nor SVG: root element %r" % root.tag)
            return 1
        w, h = int(root.get("width")), int(root.get("height"))
        texts = texts_of(root)
        bad += ["no text %r" % t for t in want if t not in texts]
        kind = "svg"
    if (w, h) != (width, height):
        bad.append("size %dx%d, expected %dx%d" % (w, h, width, height))
    print("%s %dx%d, %d bytes%s" % (kind, w, h, len(data),
                                     ", texts found: " + "; ".join(want)
                                     if kind == "svg" and not bad else ""))
    for b in bad:
        print("FAIL: " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
