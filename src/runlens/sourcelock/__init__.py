"""The source lock of a run's input, and what a newer file changes (SPEC section 16).

build_source_lock(input, index)     bytes hash, rows digest, rows, columns, format,
                                    encoding and git / DVC / URI reference (`lock`)
rows_digest(pairs)                  SHA-256 of `row_id<TAB>row_hash` lines by id
compare_source(workspace, file)     identical / same-rows / rows-changed (`compare`)
find_drift(workspace, file)         every claim citing a changed row (`drift`)
"""

from runlens.sourcelock.lock import LOCK_KEYS, build_source_lock, rows_digest

__all__ = ["LOCK_KEYS", "build_source_lock", "rows_digest"]
