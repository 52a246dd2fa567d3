"""The platform-default table (``qosbound/data/platform_defaults.yaml``): what each platform family does where a
configuration is silent, with the vendor page that says so. Each value used becomes a labelled
:class:`~qosbound.configs.values.Default` in the imported port.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from qosbound.configs.values import Default, Field, assumed
from qosbound.errors import InternalError

__all__ = ["default", "default_field", "table", "FAMILIES", "DEFAULTS_FILE"]

DEFAULTS_FILE = Path(__file__).resolve().parent.parent / "data" / "platform_defaults.yaml"

#: Platform families with a table.
FAMILIES = ("ios", "ios-xe", "ios-xr", "junos", "linux", "openconfig")


@lru_cache(maxsize=1)
def table() -> dict[str, dict[str, Any]]:
    """Every family's entries, inheritance resolved."""
    raw = yaml.safe_load(DEFAULTS_FILE.read_text(encoding="utf-8"))
    out: dict[str, dict[str, Any]] = {}

    def resolve(name: str) -> dict[str, Any]:
        if name in out:
            return out[name]
        entry = dict(raw[name])
        parent = entry.pop("inherit", None)
        merged = {**(resolve(parent) if parent else {}), **entry}
        out[name] = merged
        return merged

    for name in raw:
        resolve(name)
    return out


@lru_cache(maxsize=None)
def default(family: str, key: str) -> Default:
    """The documented default ``key`` of a platform family (falls back to ``common``); one object per key (the
    value is shared: do not modify it)."""
    t = table()
    entry = t.get(family, {}).get(key) or t["common"].get(key)
    if not isinstance(entry, dict) or "value" not in entry:
        raise InternalError(f"platform default '{key}' of '{family}' is missing from {DEFAULTS_FILE.name}")
    where = family if key in t.get(family, {}) else "common"
    return Default(platform=where, key=key, value=entry["value"], citation=entry.get("citation", ""),
                   meaning=entry.get("meaning", ""))


def default_field(family: str, key: str, value: Any = None, how: str = "") -> Field:
    """A field holding a platform default (``value`` overrides the table's value when the default is computed
    from it, e.g. a threshold picked out of a table)."""
    d = default(family, key)
    return assumed(d.value if value is None else value, d, how)
