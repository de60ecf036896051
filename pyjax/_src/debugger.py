"""`jax.debug.breakpoint`: stop the program where it is called, with the caller's frames, and
enter a text debugger (`jdb`) on them.

The frames are taken when `breakpoint` is called; their traced locals become operands of a
debug callback, so inside jit the debugger opens when the program runs, with the values.  The
debugger reads commands from `stdin` (a keyword passed through `breakpoint`, the terminal when
omitted): `p`/`pp` expression, `u(p)`, `d(own)`, `l(ist)`, `w(here)`/`bt`, `c(ontinue)`,
`q(uit)`; any other line is evaluated and its repr printed.
"""
from __future__ import annotations

import cmd
import dataclasses
import inspect
import os
import pprint
import sys
import threading
import traceback
from typing import IO, Any, Callable

from pyjax._src.core.trace import Tracer
from pyjax._src.tree_util import (
    register_pytree_node_class, tree_flatten, tree_leaves, tree_unflatten)

_PYJAX_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class _CantFlatten:
    """Stands for a local that is not a pytree (flattening it failed)."""
    __repr__ = lambda self: "<cant_flatten>"  # noqa: E731


_cant_flatten = _CantFlatten()


def _flatten_dict(d: dict) -> tuple[list, Any]:
    """Leaves and structure of a frame's variables, in their own order (keys never sorted)."""
    keys, values = [], []
    for key, value in d.items():
        try:
            tree_leaves(value)
        except Exception:  # noqa: BLE001 - any object may sit in a frame
            value = _cant_flatten
        keys.append(key)
        values.append(value)
    leaves, tree = tree_flatten(values)
    return leaves, (keys, tree)


def _unflatten_dict(aux: Any, leaves: list) -> dict:
    keys, tree = aux
    return dict(zip(keys, tree_unflatten(tree, leaves)))


@register_pytree_node_class
@dataclasses.dataclass(frozen=True, slots=True)
class DebuggerFrame:
    """One Python frame as the debugger shows it; as a pytree its leaves are the locals that
    are traced values (everything else is carried as it is)."""
    filename: str
    locals: dict
    globals: dict
    code_context: Any
    source: list
    lineno: int
    offset: int | None

    def tree_flatten(self) -> tuple[list, Any]:
        local_leaves, local_aux = _flatten_dict(self.locals)
        global_leaves, global_aux = _flatten_dict(self.globals)
        leaves = local_leaves + global_leaves
        traced = [isinstance(x, Tracer) for x in leaves]
        fixed = [x for x, t in zip(leaves, traced) if not t]
        return [x for x, t in zip(leaves, traced) if t], (
            traced, fixed, local_aux, global_aux, len(local_leaves), self.filename,
            self.code_context, self.source, self.lineno, self.offset)

    @classmethod
    def tree_unflatten(cls, aux: Any, dynamic: list) -> "DebuggerFrame":
        (traced, fixed, local_aux, global_aux, n_local, filename, code_context, source,
         lineno, offset) = aux
        dyn, fix = iter(dynamic), iter(fixed)
        leaves = [next(dyn) if t else next(fix) for t in traced]
        return cls(filename, _unflatten_dict(local_aux, leaves[:n_local]),
                   _unflatten_dict(global_aux, leaves[n_local:]), code_context, source,
                   lineno, offset)

    @classmethod
    def from_frameinfo(cls, info: inspect.FrameInfo) -> "DebuggerFrame":
        """The frame's locals, and the source of its code with the index of the current line
        in it (no source when it cannot be read, e.g. code from `exec`)."""
        try:
            _, start = inspect.getsourcelines(info.frame)
            source = inspect.getsource(info.frame).split("\n")
            offset: int | None = info.lineno - max(start, 1)
            if offset >= len(source):
                source, offset = [], None
        except OSError:
            source, offset = [], None
        return cls(info.filename, info.frame.f_locals, {}, info.code_context, source,
                   info.lineno, offset)


# ---------------------------------------------------------------------------------------------
# The text debugger
# ---------------------------------------------------------------------------------------------

class CliDebugger(cmd.Cmd):
    """`jdb`: a pdb-like command loop over a list of frames (innermost first)."""
    prompt = "(jdb) "

    def __init__(self, frames: list[DebuggerFrame], thread_id: int | None,
                 stdin: IO[str] | None = None, stdout: IO[str] | None = None,
                 completekey: str = "tab"):
        super().__init__(stdin=stdin, stdout=stdout, completekey=completekey)
        self.use_rawinput = stdin is None
        self.frames, self.frame_index, self.thread_id = frames, 0, thread_id
        self.intro = "Entering jdb:"

    def _say(self, text: str) -> None:
        print(text, file=self.stdout)

    def _eval(self, expr: str) -> Any:
        frame = self.frames[self.frame_index]
        return eval(expr, {}, {**frame.globals, **frame.locals})

    def _report_error(self) -> None:
        kind, value = sys.exc_info()[:2]
        self._say("*** " + traceback.format_exception_only(kind, value)[-1].strip())

    def _show(self, expr: str, render: Callable[[Any], str]) -> None:
        try:
            self._say(render(self._eval(expr)))
        except Exception:  # noqa: BLE001 - the user's expression may raise anything
            self._report_error()

    def default(self, line: str) -> None:
        """Evaluate an expression and print its repr."""
        self._show(line, repr)

    def do_p(self, arg: str) -> None:
        """p expression
        Evaluates and prints the value of an expression
        """
        self._show(arg, repr)

    def do_pp(self, arg: str) -> None:
        """pp expression
        Evaluates and pretty-prints the value of an expression
        """
        self._show(arg, pprint.pformat)

    def _context(self, num_lines: int = 2) -> None:
        frame = self.frames[self.frame_index]
        lines = [f"> {frame.filename}({frame.lineno})"]
        for i, line in enumerate(frame.source):
            if frame.offset - 1 - num_lines <= i <= frame.offset + num_lines:
                lines.append(("->  " if i == frame.offset else "    ") + line)
        self._say("\n".join(lines))

    def do_up(self, arg: str, /) -> None:
        """u(p)
        Move up a stack frame.
        """
        if self.frame_index == len(self.frames) - 1:
            self._say("At topmost frame.")
        else:
            self.frame_index += 1
        self._context()

    def do_down(self, arg: str, /) -> None:
        """d(own)
        Move down a stack frame.
        """
        if self.frame_index == 0:
            self._say("At bottommost frame.")
        else:
            self.frame_index -= 1
        self._context()

    def do_list(self, arg: str) -> None:
        """l(ist)
        List source code for the current file.
        """
        self._context(num_lines=5)

    def do_continue(self, arg: str) -> bool:
        """c(ont(inue))
        Continue the program's execution.
        """
        return True

    def do_quit(self, arg: str) -> None:
        """q(uit)\n(exit)
        Quit the debugger. The program is given an exit command.
        """
        sys.exit(0)

    def do_where(self, arg: str) -> None:
        """w(here)
        Prints a stack trace with the most recent frame on the bottom.
        'bt' is an alias for this command.
        """
        lines = ["Traceback:"]
        for frame in reversed(self.frames):
            lines.append(f'  File "{frame.filename}", line {frame.lineno}')
            lines.append("    <no source>" if frame.offset is None
                         else "    " + frame.source[frame.offset].strip())
        self._say("\n".join(lines))

    do_u, do_d, do_l = do_up, do_down, do_list
    do_c = do_cont = do_continue
    do_q = do_EOF = do_exit = do_quit
    do_w = do_bt = do_where

    def run(self) -> None:
        while True:
            try:
                self.cmdloop()
                break
            except KeyboardInterrupt:
                print("--KeyboardInterrupt--", file=sys.stdout)


def _run_cli_debugger(frames: list[DebuggerFrame], thread_id: int | None,
                      **kwargs: Any) -> None:
    CliDebugger(frames, thread_id, **kwargs).run()


#: name -> (priority, debugger); `breakpoint` uses the highest priority unless given `backend`
_debuggers: dict[str, tuple[int, Callable[..., None]]] = {"cli": (-1, _run_cli_debugger)}
_debug_lock = threading.Lock()


def _get_debugger(backend: str | None) -> Callable[..., None]:
    if backend is not None and backend in _debuggers:
        return _debuggers[backend][1]
    return max(_debuggers.values(), key=lambda entry: entry[0])[1]


def breakpoint(*, backend: str | None = None, filter_frames: bool = True,  # noqa: A001
               num_frames: int | None = None, ordered: bool = False, token: Any = None,
               **kwargs: Any) -> Any:
    """Enter the debugger here (inside jit: when the program runs, with the values).
    `filter_frames` leaves pyjax's own frames out; `num_frames` keeps that many of the
    innermost; `ordered` orders it with other ordered debug effects; with `token` (a pytree
    of arrays) it runs once the token is computed and returns the token, to be used later.
    Other keywords go to the debugger (`stdin=`, `stdout=` for the text debugger)."""
    from pyjax._src.callback import pure_callback
    from pyjax._src.debugging import debug_callback
    from pyjax._src.primitives.extra import stop_gradient
    if token is not None and ordered:
        raise ValueError("`ordered` and `token` are mutually exclusive arguments.")
    infos = inspect.stack()[1:]
    frames = [DebuggerFrame.from_frameinfo(info) for info in infos
              if not filter_frames or not info.filename.startswith(_PYJAX_DIR)]
    if num_frames is not None:
        frames = frames[:num_frames]
    flat, frames_tree = tree_flatten(frames)

    def _breakpoint_callback(*values: Any) -> None:
        thread_id = None
        if threading.current_thread() is not threading.main_thread():
            thread_id = threading.get_ident()
        debugger = _get_debugger(backend)
        with _debug_lock:
            debugger(tree_unflatten(frames_tree, values), thread_id, **kwargs)

    if token is None:
        debug_callback(_breakpoint_callback, *flat, ordered=ordered)
        return None

    def _breakpoint_callback_wrapper(tok: Any, *values: Any) -> Any:
        _breakpoint_callback(*values)
        return tok
    token, flat = stop_gradient((token, flat))
    return pure_callback(_breakpoint_callback_wrapper, token, token, *flat)
