"""revmlir in one screen: parse a reversible program, invert it, run it both ways.

Run with ``python3 tools/dev.py demo``.
"""

from pathlib import Path

from xdsl.context import Context

from revmlir.interpreter import RevInterpreter
from revmlir.parsing import make_context, parse_module
from revmlir.passes.invert import RevInvertPass

HERE = Path(__file__).parent


def show(title: str, text: str) -> None:
    print(f"== {title} ==")
    print(text.rstrip())
    print()


def main() -> None:
    ctx: Context = make_context()
    path = HERE / "fibonacci.mlir"
    module = parse_module(path.read_text(), str(path), ctx)

    inverted = module.clone()
    RevInvertPass().apply(ctx, inverted)
    inverse = next(op for op in inverted.ops if getattr(op, "sym_name", None)
                   and op.sym_name.data == "rrfib.inv")
    show("the inverse program, derived by rev-invert", str(inverse))

    interp = RevInterpreter(module)
    out, n = interp.call("rrfib", 0, 10)
    print(f"rrfib(0, 10)      -> ({out}, {n})    fib(11) = {out}")
    back = interp.uncall("rrfib", out, n)
    print(f"(~rrfib)({out}, {n}) -> {back}    the inputs, restored")
    counters = interp.counters["rrfib"]
    print(
        f"@rrfib ran {counters.calls} times forward and {counters.uncalls} times "
        f"backward, executing {counters.instructions} reversible instructions"
    )


if __name__ == "__main__":
    main()
