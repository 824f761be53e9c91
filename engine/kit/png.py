"""PNG files of a figure's pixels, written fast and again only where the pixels changed.

The PNG is written without PNG's per-row filters and at zlib level 1: for flat-coloured plots
that is both the smallest and by far the fastest of the settings measured
(``benchmarks/NOTES.md``). Its rows are compressed in bands, and only the bands whose pixels
changed are compressed again (:class:`PngWriter`). The standard library writes it (``zlib``,
``struct``): no imaging library is needed in the browser.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np

PNG_COMPRESS_LEVEL = 1       # zlib level: fastest, and plots are mostly flat colour
PNG_BAND = 16                # rows of a PNG compressed together (only changed bands again)


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _adler32_combine(first: int, second: int, second_length: int) -> int:
    """The Adler-32 checksum of two pieces of data one after the other, from each piece's own
    (as zlib's ``adler32_combine``, which Python's zlib does not offer)."""
    base = 65521
    rest = second_length % base
    low = ((first & 0xFFFF) + (second & 0xFFFF) + base - 1) % base
    high = (rest * (first & 0xFFFF) + (first >> 16) + (second >> 16) + base - rest) % base
    return low | (high << 16)


class PngWriter:
    """PNGs of successive pictures of one figure, compressing again only what changed.

    Each row is stored unfiltered (PNG filter type 0) and compressed with zlib: a plot is mostly
    long runs of one colour, which zlib finds without a filter's help. The rows are compressed in
    bands of :data:`PNG_BAND` rows, each by a fresh compressor and ending on a whole byte (a
    *sync flush*), so a band's compressed bytes depend on that band alone: a picture that differs
    from the last one in a few bands compresses those bands and reuses the others' bytes. The
    pixels are written as they are drawn, RGBA: leaving out an opaque alpha channel takes a copy
    that costs more than compressing it (it compresses to almost nothing).
    """

    def __init__(self, compress_level: int = PNG_COMPRESS_LEVEL, band: int = PNG_BAND):
        self.level, self.band = compress_level, band
        self.pixels = None           # (height, width, 4) uint8: a copy of the pixels last written
        self._rows = None            # (height, 1 + width * 4): each row's filter byte and pixels
        self._bands = []             # [(compressed bytes, Adler-32, length)] of each band

    def write(self, rgba) -> bytes | None:
        """The PNG of ``rgba``, (height, width, 4) uint8; None if it equals the last one written."""
        rgba = np.ascontiguousarray(rgba, dtype=np.uint8)
        height, width = rgba.shape[:2]
        if self.pixels is None or self.pixels.shape != rgba.shape:     # a first picture, or another size
            self.pixels = np.empty_like(rgba)
            self._rows = np.zeros((height, 1 + width * 4), dtype=np.uint8)        # filter 0 on each row
            self._bands = [None] * -(-height // self.band)
            changed = range(len(self._bands))
        else:
            changed = self._changed_bands(rgba)
        if not changed:
            return None
        for index in changed:
            rows = slice(index * self.band, (index + 1) * self.band)
            self.pixels[rows] = rgba[rows]
            self._rows[rows, 1:] = rgba[rows].reshape(-1, width * 4)
            data = self._rows[rows].data
            compressor = zlib.compressobj(self.level, zlib.DEFLATED, -15)        # raw deflate
            self._bands[index] = (compressor.compress(data) + compressor.flush(zlib.Z_SYNC_FLUSH),
                                  zlib.adler32(data), data.nbytes)
        checksum = 1                                                    # Adler-32 of nothing
        for _data, adler, length in self._bands:
            checksum = _adler32_combine(checksum, adler, length)
        stream = (b"\x78\x01" + b"".join(data for data, _a, _l in self._bands)
                  + b"\x03\x00" + struct.pack(">I", checksum))        # header, bands, last block, sum
        header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)    # 8 bits, RGBA
        return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", stream)
                + _chunk(b"IEND", b""))

    def _changed_bands(self, rgba) -> list:
        """The indices of the bands whose pixels differ from those last written (of the same size)."""
        height, width = rgba.shape[:2]
        count = len(self._bands)
        rows = np.any(rgba.view(np.uint32).reshape(height, width) != self.pixels.view(np.uint32).reshape(height, width),
                      axis=1)
        padded = np.zeros(count * self.band, dtype=bool)
        padded[:height] = rows
        return np.flatnonzero(padded.reshape(count, self.band).any(axis=1)).tolist()


def encode_png(rgba, compress_level: int = PNG_COMPRESS_LEVEL) -> bytes:
    """PNG bytes of an (height, width, 4) uint8 RGBA array."""
    return PngWriter(compress_level).write(rgba)
