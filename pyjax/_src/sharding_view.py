"""Drawing a sharding with `rich`: a table of the array's blocks, each labelled with the
devices holding it (`CPU 0`), sized in proportion to the block (JAX's layout: 10 rows per unit
of `scale`, columns 2.5 times the rows per unit of width)."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np


def _block_index(size: int, s: slice) -> int:
    """Which block along an axis of `size` the slice `s` is (blocks of equal size)."""
    if s.start is None and s.stop is None:
        return 0
    return s.start // (s.stop - s.start)


def _as_slice(s: slice | int) -> slice:
    return slice(s, s + 1) if isinstance(s, int) else s


def _blocks(shape: Sequence[int], sharding: Any) -> tuple[dict, dict, dict]:
    """Per block (row, column): the ids of its devices, its height (None for 1-d arrays) and
    its width, as fractions of the array."""
    if hasattr(sharding, "devices_indices_map"):
        index_map = sharding.devices_indices_map(tuple(shape))
    else:  # held whole by its one device
        index_map = {d: (slice(None),) * len(shape) for d in sharding.device_set}
    devices: dict = {}
    heights: dict = {}
    widths: dict = {}
    for dev, slices in index_map.items():
        slices = tuple(_as_slice(s) for s in slices)
        idx = tuple(_block_index(n, s) for n, s in zip(shape, slices))
        sizes = [(s.stop - s.start) if s.stop is not None else n for n, s in zip(shape, slices)]
        if len(slices) == 2:
            heights[idx], widths[idx] = sizes[0] / shape[0], sizes[1] / shape[1]
        else:
            idx = (0, *idx)
            heights[idx], widths[idx] = None, sizes[0] / shape[0]
        devices.setdefault(idx, set()).add(dev.id)
    return devices, heights, widths


def _colors(color_map: Callable, n: int) -> Any:
    """Colours spread over the map, consecutive blocks far apart."""
    values = np.linspace(0, 1, n)
    idx = 0
    for _ in range(n):
        yield color_map(values[idx])
        idx = (idx + n // 2 + bool(n % 2 == 0)) % n


def _hex(color: Any) -> str:
    if isinstance(color, str):
        return color
    r, g, b = (int(c * 255) for c in color[:3])
    return f"#{r:02X}{g:02X}{b:02X}"


def _text_color(color: str) -> str:
    r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    return "#000000" if r * 0.299 + g * 0.587 + b * 0.114 > 186 else "#ffffff"


def draw_sharding(shape: Sequence[int], sharding: Any, *, use_color: bool, scale: float,
                  min_width: int, max_width: int, color_map: Any) -> None:
    """Print the table of `sharding`'s blocks for an array of `shape` (1 or 2 dimensions)."""
    import rich.align
    import rich.box
    import rich.console
    import rich.padding
    import rich.style
    import rich.table

    if not 1 <= len(shape) <= 2:
        raise ValueError("`visualize_sharding` only works for shapes with 1 and 2 dimensions.")
    console = rich.console.Console(width=max_width)
    use_color = use_color and console.color_system is not None
    if use_color and not color_map:
        try:
            import matplotlib as mpl
            color_map = mpl.colormaps["tab20b"]
        except ModuleNotFoundError:
            use_color = False
    base_height = int(10 * scale)
    base_width = int(base_height * (shape[1] if len(shape) == 2 else 1) / shape[0])
    kind = next(iter(sharding.device_set)).platform.upper()
    devices, heights, widths = _blocks(shape, sharding)
    rows = max(i for i, _ in devices) + 1
    cols = max(j for _, j in devices) + 1
    colors = _colors(color_map, rows * cols) if use_color else None
    table = rich.table.Table(show_header=False, show_lines=not use_color, padding=0,
                             highlight=not use_color, pad_edge=False,
                             box=None if use_color else rich.box.SQUARE)
    for i in range(rows):
        cells = []
        for j in range(cols):
            label = f"{kind} " + ",".join(str(d) for d in sorted(devices[i, j]))
            width = min(max(int(widths[i, j] * base_width * 2.5), min_width), max_width)
            height = 1 if heights[i, j] is None else int(heights[i, j] * base_height)
            left, extra = divmod(width - len(label) - 2, 2)
            top, extra_v = divmod(height - 2, 2)
            right, bottom = left + extra, top + extra_v
            bg = fg = None
            if use_color:
                bg = _hex(next(colors))
                fg = _text_color(bg)
                top, right, bottom, left = top + 1, right + 1, bottom + 1, left + 1
            cells.append(rich.padding.Padding(
                rich.align.Align(label, "center", vertical="middle"),
                (max(top, 0), max(right, 0), max(bottom, 0), max(left, 0)),
                style=rich.style.Style(bgcolor=bg, color=fg)))
        table.add_row(*cells)
    console.print(table, end="\n\n")
