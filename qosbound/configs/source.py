"""Where a piece of configuration comes from (file and line), and reading a configuration file as text.

Every node of every vendor AST carries a :class:`Source`; every field of an imported port is traced back to one
(or to a labelled platform default, :mod:`qosbound.configs.values`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from qosbound.errors import ConfigError, UnsupportedFormat
from qosbound.inputs import check_input_file

__all__ = ["Source", "ConfigText", "read_config", "MAX_CONFIG_BYTES"]

#: Largest configuration file read (bytes). A full running configuration of a large router is a few MB.
MAX_CONFIG_BYTES = 32 * 2**20


@dataclass(frozen=True, order=True)
class Source:
    """A line of a configuration file (1-based)."""

    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class ConfigText:
    """A configuration file read as text: its name, the text with line endings normalised to ``\\n``."""

    file: str
    text: str

    def at(self, line: int) -> Source:
        return Source(self.file, line)

    def line_text(self, line: int) -> str:
        lines = self.text.split("\n")
        return lines[line - 1] if 0 < line <= len(lines) else ""


def decode(data: bytes, file: str) -> str:
    """UTF-8 (or Latin-1 for legacy banners) text with CRLF / CR line endings made ``\\n``; binary data refused."""
    if b"\x00" in data[:65536] or b"\x00" in data[-65536:]:
        raise UnsupportedFormat("binary data (NUL bytes), not a configuration text", file=file)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
        controls = sum(1 for ch in text[:65536] if ord(ch) < 32 and ch not in "\t\r\n\f\x03")
        if controls > 16:
            raise UnsupportedFormat("binary data (control bytes), not a configuration text", file=file) from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def read_config(path: str | Path) -> ConfigText:
    """Read one configuration file; a missing, special, binary or oversized file is refused with its name."""
    name = str(path)
    check_input_file(path, "configuration file", lambda problem: ConfigError(problem, file=name),
                     max_bytes=MAX_CONFIG_BYTES)
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise ConfigError(f"cannot read: {e.strerror}", file=name) from None
    return ConfigText(name, decode(data, name))
