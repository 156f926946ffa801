"""Export threads of a Python LangGraph checkpointer for `redcheck import`.

Reads each thread through the saver's own ``list()`` (every namespace: the
root graph's and its subgraphs') and writes a redcheck export file (JSON Lines,
docs/cli.md "Export format", version 1): every checkpoint with its parent,
metadata, channel versions and values, and its pending writes. Standard library
only; it needs nothing of LangGraph but the saver you give it.

From the command line, name a module attribute that is your saver, or a
function of no argument that returns one::

    # mysavers.py:  def source(): return SqliteSaver(sqlite3.connect("checkpoints.db", check_same_thread=False))
    python3 from_python.py --saver mysavers:source thread-1 thread-2 > threads.jsonl
    redcheck import threads.jsonl --prefix myapp

or from Python::

    from from_python import export_threads
    with open("threads.jsonl", "w", encoding="utf-8") as out:
        export_threads(saver, ["thread-1", "thread-2"], out)

Values are written so that redcheck's readers (the Go saver, ``redcheck show``,
the TypeScript saver) decode them:

* ``None`` as type ``null``, ``bytes`` as type ``bytes``;
* anything JSON can hold as type ``json``; in it, a LangChain object (a
  message...) is its serialized form ``{"lc": 1, "type": "constructor", ...}``
  (``to_json()``), which LangGraph.js's serializer revives as the same class;
  a pydantic model is its ``model_dump()``, a dataclass (an ``Interrupt``...)
  its fields, a datetime its ISO text, a set or tuple a list;
* any other value through the saver's ``serde.dumps_typed`` (its own type tag
  and bytes, e.g. ``msgpack``), kept byte for byte but readable only by a
  reader that knows that serializer.

Limits: a thread is held in memory while it is written (its checkpoints are
ordered parents first); pending writes keep their order within each task and
get the indices LangGraph gives them (0, 1, ... for regular channels, the fixed
negative index of ``__error__``, ``__scheduled__``, ``__interrupt__``,
``__resume__``), with an empty task path, which ``list()`` does not return.
Integer channel versions are written as redcheck's TypeScript ``copyFrom``
stores them (4 -> ``"000000000004.00000000"``); string versions as they are.
"""

import argparse
import base64
import dataclasses
import datetime
import importlib
import json
import sys

FORMAT = "redcheck-export"
VERSION = 1
# The fixed indices of writes to LangGraph's special channels (checkpoint.WriteIndex).
SPECIAL_INDEX = {"__error__": -1, "__scheduled__": -2, "__interrupt__": -3, "__resume__": -4}


class ExportError(Exception):
    """A thread or value that cannot be exported."""


def _plain(obj):
    """json.dumps's default: the JSON form of a LangChain object, a pydantic model, a dataclass..."""
    if hasattr(obj, "to_json") and callable(obj.to_json):
        return obj.to_json()
    if hasattr(obj, "model_dump") and callable(obj.model_dump):
        return obj.model_dump()
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    if isinstance(obj, (datetime.datetime, datetime.date, datetime.time)):
        return obj.isoformat()
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    raise TypeError(f"{type(obj).__name__} is not JSON")


def encode_value(value, serde=None):
    """The stored form of a value: {"type": tag, "data": base64 of the bytes}."""
    if value is None:
        typ, data = "null", b""
    elif isinstance(value, (bytes, bytearray)):
        typ, data = "bytes", bytes(value)
    else:
        try:
            typ = "json"
            data = json.dumps(value, default=_plain, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")
        except (TypeError, ValueError) as e:
            if serde is None:
                raise ExportError(f"a value of type {type(value).__name__} is not JSON and no serde was given: {e}") from e
            typ, data = serde.dumps_typed(value)
    return {"type": typ, "data": base64.b64encode(bytes(data)).decode("ascii")}


def _version(v):
    if isinstance(v, bool):
        raise ExportError(f"channel version {v!r} is not a version")
    if isinstance(v, int) and v >= 0:
        return f"{v:012d}.00000000"
    return str(v)


def _versions(cp):
    """A checkpoint's channel versions as strings; a checkpoint of format v < 4 is read with its parent's
    pending sends moved into "__pregel_tasks", which redcheck does not store (its readers move them again)."""
    out = {ch: _version(v) for ch, v in (cp.get("channel_versions") or {}).items()}
    if int(cp.get("v", 1)) < 4:
        out.pop("__pregel_tasks", None)
    return out


def _conf(config, key, default=None):
    return ((config or {}).get("configurable") or {}).get(key, default)


def _writes(pending):
    out, positions = [], {}
    for task, channel, value in pending or []:
        index = SPECIAL_INDEX.get(channel)
        if index is None:
            index = positions.get(task, 0)
            positions[task] = index + 1
        out.append((str(task), index, str(channel), value))
    out.sort(key=lambda w: (w[0], w[1]))
    return out


def checkpoint_lines(tuples, serde=None):
    """The export lines (dicts) of one thread's checkpoint tuples, in the format's order."""
    by_ns = {}
    for t in tuples:
        by_ns.setdefault(str(_conf(t.config, "checkpoint_ns", "") or ""), []).append(t)
    for ns in sorted(by_ns, key=lambda s: s.encode("utf-8")):
        ts = {t.checkpoint["id"]: t for t in by_ns[ns]}
        done, ordered = set(), []
        for cid in sorted(ts):  # oldest ID first, every parent before its children
            chain = []
            while cid in ts and cid not in done:
                done.add(cid)
                chain.append(cid)
                cid = _conf(ts[cid].parent_config, "checkpoint_id")
            ordered.extend(reversed(chain))
        for cid in ordered:
            yield _line(ts[cid], ns, ts, serde)


def _line(t, ns, same_ns, serde):
    cp = t.checkpoint
    parent_id = _conf(t.parent_config, "checkpoint_id") or ""
    versions = _versions(cp)
    parent = same_ns.get(parent_id)
    parent_versions = _versions(parent.checkpoint) if parent else {}
    new_versions = {ch: v for ch, v in versions.items() if parent_versions.get(ch) != v}
    values = cp.get("channel_values") or {}
    updated = cp.get("updated_channels")
    return {
        "thread_id": str(_conf(t.config, "thread_id")),
        "checkpoint_ns": ns,
        "checkpoint": {
            "v": int(cp.get("v", 1)),
            "id": cp["id"],
            "ts": str(cp.get("ts", "")),
            "parent_id": parent_id,
            "channel_versions": versions,
            "versions_seen": {node: {ch: _version(v) for ch, v in (seen or {}).items()} for node, seen in (cp.get("versions_seen") or {}).items()},
            "updated_channels": None if updated is None else list(updated),
        },
        "metadata": json.loads(json.dumps(dict(t.metadata or {}), default=_plain, allow_nan=False)),
        "new_versions": new_versions,
        "values": {ch: encode_value(values[ch], serde) for ch in new_versions if ch in values},
        "pending_writes": [
            {"task_id": task, "task_path": "", "index": index, "channel": channel, "value": encode_value(value, serde)}
            for task, index, channel, value in _writes(t.pending_writes)
        ],
    }


def export_threads(saver, thread_ids, out, now=None):
    """Write the threads of saver (every namespace) to out as a redcheck export; return the checkpoint count."""
    serde = getattr(saver, "serde", None)
    stamp = (now or datetime.datetime.now(datetime.timezone.utc)).strftime("%Y-%m-%dT%H:%M:%SZ")

    def write(obj):
        out.write(json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n")

    write({"format": FORMAT, "version": VERSION, "exported_at": stamp})
    n = 0
    for thread in thread_ids:
        tuples = list(saver.list({"configurable": {"thread_id": thread}}))
        if not tuples:
            raise ExportError(f"thread {thread!r} has no checkpoint")
        for line in checkpoint_lines(tuples, serde):
            write(line)
            n += 1
    write({"end": FORMAT, "checkpoints": n})
    return n


def main(argv=None):
    ap = argparse.ArgumentParser(description="Export threads of a Python LangGraph checkpointer for `redcheck import` (to standard output).")
    ap.add_argument("--saver", required=True, help="MODULE:NAME, a saver or a function of no argument returning one")
    ap.add_argument("threads", nargs="+", help="the thread IDs to export")
    args = ap.parse_args(argv)
    module, _, name = args.saver.partition(":")
    saver = getattr(importlib.import_module(module), name)
    if callable(saver) and not hasattr(saver, "list"):
        saver = saver()
    try:
        n = export_threads(saver, args.threads, sys.stdout)
    except ExportError as e:
        print(f"from_python: {e}", file=sys.stderr)
        return 1
    print(f"exported {len(args.threads)} threads, {n} checkpoints", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
