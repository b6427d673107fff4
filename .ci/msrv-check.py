"""Checks the workspace's rust-version against what its locked dependencies
declare: reads `cargo metadata` on stdin and fails, naming them, when any
dependency needs a newer Rust than the workspace says it builds with. Only
this machine's toolchain can be had, so the declaration is checked this way
rather than by building with that version."""
import json
import sys


def key(version):
    return tuple(int(part) for part in version.split("."))


meta = json.load(sys.stdin)
members = set(meta["workspace_members"])
ours = {p["rust_version"] for p in meta["packages"] if p["id"] in members}
if len(ours) != 1:
    sys.exit(f"workspace members declare different rust-versions: {sorted(map(str, ours))}")
ours = ours.pop()
newer = sorted(
    f"{p['name']} {p['version']} needs {p['rust_version']}"
    for p in meta["packages"]
    if p.get("rust_version") and key(p["rust_version"]) > key(ours)
)
if newer:
    sys.exit(f"rust-version {ours} is below what these dependencies declare:\n  " + "\n  ".join(newer))
print(f"rust-version {ours}: no dependency declares a newer one ({len(meta['packages'])} packages)")
