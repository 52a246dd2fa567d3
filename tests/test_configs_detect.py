"""The format of a configuration is read from its content; formats qosbound does not read are refused by name."""

from __future__ import annotations

import pytest

from qosbound.configs.detect import detect_format
from qosbound.configs.source import ConfigText, read_config
from qosbound.errors import ConfigError, UnsupportedFormat
from tests.configs_helpers import CONFIG_EXAMPLES, MALFORMED


@pytest.mark.parametrize("name, fmt", [
    ("branch-iosxe.cfg", "cisco-ios-xe"), ("wan-edge-iosxe.cfg", "cisco-ios-xe"), ("pe-iosxr.cfg", "cisco-ios-xr"),
    ("pe-junos.conf", "junos"), ("pe-junos.set", "junos-set"), ("home-htb-red.sh", "tc-script"),
    ("home-prio-tbf.sh", "tc-script"), ("home-htb-red.json", "tc-json"), ("home-prio-tbf.json", "tc-json"),
    ("leaf-openconfig.json", "openconfig"),
])
def test_every_example_is_detected(name, fmt):
    assert detect_format(read_config(CONFIG_EXAMPLES / name)).name == fmt


def test_the_extension_does_not_decide(tmp_path):
    """A Junos file named .cfg and an IOS file named .json are read as what they contain."""
    j = tmp_path / "router.cfg"
    j.write_text((CONFIG_EXAMPLES / "pe-junos.conf").read_text())
    i = tmp_path / "router.json"
    i.write_text((CONFIG_EXAMPLES / "branch-iosxe.cfg").read_text())
    assert detect_format(read_config(j)).name == "junos"
    assert detect_format(read_config(i)).name == "cisco-ios-xe"


def test_ios_version_decides_the_platform_family():
    assert detect_format(ConfigText("a", "version 15.4\npolicy-map P\n")).family == "ios"
    assert detect_format(ConfigText("a", "version 17.3\npolicy-map P\n")).family == "ios-xe"
    assert detect_format(ConfigText("a", "policy-map P\n class x\n end-policy-map\n")).family == "ios-xr"


@pytest.mark.parametrize("name, words", [
    ("nxos.cfg", "Cisco NX-OS"), ("eos.cfg", "Arista EOS"), ("sonic.json", "SONiC config_db.json"),
    ("vrp.cfg", "Huawei VRP"),
])
def test_other_vendors_are_refused_naming_the_format_and_the_file(name, words):
    with pytest.raises(UnsupportedFormat) as e:
        detect_format(read_config(MALFORMED / name))
    assert str(e.value).startswith(str(MALFORMED / name) + ": " + words)
    assert e.value.exit_code == 2


@pytest.mark.parametrize("text, words", [
    ("", "empty file"), ("hello world\nthis is not a router\n", "unknown format"),
    ('{"foo": 1}', "JSON that is neither"), ("qdisc htb 1: root refcnt 2 r2q 10\n", "tc text output"),
    ("/queue tree add name=x\n", "MikroTik"), ("set qos policy shaper X bandwidth 10mbit\n", "VyOS"),
])
def test_unread_content_is_refused(text, words):
    with pytest.raises(UnsupportedFormat, match=words):
        detect_format(ConfigText("f", text))


def test_binary_missing_and_oversized_files_are_refused(tmp_path):
    with pytest.raises(UnsupportedFormat, match="binary data"):
        read_config(MALFORMED / "binary.cfg.gz")
    with pytest.raises(ConfigError, match="file not found"):
        read_config(tmp_path / "nope.cfg")
    with pytest.raises(ConfigError, match="is a directory"):
        read_config(tmp_path)
    huge = tmp_path / "huge.cfg"
    with open(huge, "wb") as f:  # sparse: 40 MiB without writing them
        f.truncate(40 * 2**20)
    with pytest.raises(ConfigError, match="too large for a configuration file"):
        read_config(huge)


def test_latin1_banners_and_crlf_are_read():
    cfg = read_config(MALFORMED / "tolerated.cfg")
    assert "\r" not in cfg.text
    from qosbound.configs.source import decode
    assert decode("banner motd ^C caf\xe9 ^C\r\nhostname r\r\n".encode("latin-1"), "x") == \
        "banner motd ^C caf\xe9 ^C\nhostname r\n"
