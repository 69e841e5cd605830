"""``depthscale store compact SRC DST``: a compact copy of a results store.

The copy keeps every run (configuration, record, status) and drops what no claim or figure reads:
the trained parameters; the per-context squared errors, which the paired floor claims read, are kept
in float16 (:func:`depthscale.sims.store.compact_store`). ``SRC`` is only read; ``DST`` must not exist.
"""

from __future__ import annotations

from ..app import emit


def register(sub) -> None:
    p = sub.add_parser("store", help="maintain a results store (compact: drop what no claim or figure reads)")
    actions = p.add_subparsers(dest="action", required=True, parser_class=type(p), help="what to do with the store")
    c = actions.add_parser("compact", help="write a compact copy of a results store")
    c.add_argument("src", help="an existing results store (only read)")
    c.add_argument("dst", help="the compact store to write: a new file in an existing directory")
    c.add_argument("--json", action="store_true", help="print one JSON object")
    c.set_defaults(func=handle_compact)


def handle_compact(args) -> int:
    from ....sims.store import compact_store

    out = compact_store(args.src, args.dst)
    dropped = ", ".join(f"{name} of {n} runs" for name, n in out["dropped"].items()) or "nothing"
    text = (
        f"{out['dst']}: {out['runs']} runs, {out['arrays']} with arrays; dropped {dropped}; "
        f"{out['bytes_before'] / 1e6:.1f} MB -> {out['bytes_after'] / 1e6:.1f} MB"
    )
    emit(out, args.json, text)
    return 0
