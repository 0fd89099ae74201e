"""Draw the handheld's app icons (PNG, no dependencies): a white polo ball and a
mallet on arena green. Run from anywhere: ``python clients/web/shared/icons/make_icons.py``."""

from __future__ import annotations

import math
import struct
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
GREEN = (15, 74, 52)
WHITE = (255, 255, 255)
GOLD = (242, 183, 5)


def _inside(x: float, y: float, maskable: bool) -> tuple[int, int, int] | None:
    """The colour at (x, y) in the unit square, or None for transparent."""
    r = 0.5 if maskable else 0.44          # maskable: full bleed; "any": a rounded tile
    cx = cy = 0.5
    if not maskable:
        corner = 0.12
        dx = max(abs(x - cx) - (r - corner), 0.0)
        dy = max(abs(y - cy) - (r - corner), 0.0)
        if math.hypot(dx, dy) > corner:
            return None
    s = 0.8 if maskable else 1.0           # keep the drawing inside the maskable safe zone
    u, v = (x - 0.5) / s + 0.5, (y - 0.5) / s + 0.5
    # the ball
    if math.hypot(u - 0.64, v - 0.66) < 0.12:
        return WHITE
    # the mallet: a shaft from the top left, and its head
    ax, ay, bx, by = 0.24, 0.2, 0.5, 0.72
    t = max(0.0, min(1.0, ((u - ax) * (bx - ax) + (v - ay) * (by - ay)) / ((bx - ax) ** 2 + (by - ay) ** 2)))
    if math.hypot(u - (ax + t * (bx - ax)), v - (ay + t * (by - ay))) < 0.028:
        return GOLD
    if abs(v - 0.76) < 0.045 and 0.3 < u < 0.56:
        return GOLD
    return GREEN


def png(size: int, maskable: bool) -> bytes:
    n = 4                                   # supersampling per axis
    rows = bytearray()
    for py in range(size):
        rows.append(0)
        for px in range(size):
            acc = [0, 0, 0, 0]
            for sy in range(n):
                for sx in range(n):
                    c = _inside((px + (sx + 0.5) / n) / size, (py + (sy + 0.5) / n) / size, maskable)
                    if c is not None:
                        acc[0] += c[0]
                        acc[1] += c[1]
                        acc[2] += c[2]
                        acc[3] += 255
            k = n * n
            alpha = acc[3] // k
            if alpha:
                rows += bytes((acc[0] * 255 // acc[3], acc[1] * 255 // acc[3], acc[2] * 255 // acc[3], alpha))
            else:
                rows += b"\0\0\0\0"

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(bytes(rows), 9)) + chunk(b"IEND", b""))


if __name__ == "__main__":
    for size in (192, 512):
        (HERE / f"icon-{size}.png").write_bytes(png(size, maskable=False))
        (HERE / f"maskable-{size}.png").write_bytes(png(size, maskable=True))
    print("icons written to", HERE)
