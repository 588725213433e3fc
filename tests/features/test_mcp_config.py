"""The server's configuration: flags and a config file only ever narrow the scope, and
misconfiguration fails at startup with a message that names the setting."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

import vectorport
from vectorport import ConfigError, parse_filter
from vectorport.embedders import HashingEmbedder
from vectorport.mcp.cli import add_parser, config_from_args
from vectorport.mcp.config import Scope, ServerConfig
from vectorport.mcp.server import tool_definitions


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="vectorport")
    add_parser(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(["mcp", *argv])


def test_flags_narrow_a_config_file(tmp_path: Path) -> None:
    path = tmp_path / "mcp.toml"
    path.write_text('[mcp]\nurl = "memory://"\nindexes = ["docs"]\nnamespace = "acme"\n'
                    'filter = { tenant = "acme" }\ntop_k = 4\n'
                    '[mcp.database_config.local]\nmin_score = 0.1\n')
    config = config_from_args(parse(["--config", str(path), "--index", "more",
                                     "--filter", '{"year": {"$gte": 2020}}']))
    assert config.url == "memory://" and config.indexes == ("docs", "more")
    assert config.top_k == 4 and config.scope.namespace == "acme"
    assert config.scope.filter == parse_filter(
        {"$and": [{"tenant": "acme"}, {"year": {"$gte": 2020}}]})
    assert "acme" not in repr(config)  # scope values stay out of logs
    with pytest.raises(ConfigError, match="two namespaces"):
        config_from_args(parse(["--config", str(path), "--namespace", "other"]))


def test_bad_settings_name_themselves(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="store URL"):
        config_from_args(parse(["--index", "docs"]))
    with pytest.raises(ConfigError, match="--filter is not valid JSON"):
        config_from_args(parse(["memory://", "--filter", "{tenant"]))
    with pytest.raises(ConfigError, match=r"--filter: .*unknown operator"):
        config_from_args(parse(["memory://", "--filter", '{"a": {"$nope": 1}}']))
    path = tmp_path / "bad.toml"
    path.write_text('[mcp]\nurl = "memory://"\nindex = ["docs"]\n')
    with pytest.raises(ConfigError, match=r"unknown key\(s\) \['index'\]"):
        config_from_args(parse(["--config", str(path)]))
    assert Scope("a").narrowed(Scope()).namespace == "a"


def test_startup_checks_against_the_store() -> None:
    store = vectorport.connect("memory://")
    store.create_index("docs", dimension=8)
    model = HashingEmbedder()
    with pytest.raises(ConfigError, match="dimension 8"):
        tool_definitions(store, ServerConfig("memory://", ("docs",)), model)
    with pytest.raises(ConfigError, match="--namespace"):
        tool_definitions(store, ServerConfig("memory://", ("docs",), database_config={
            "local": {"namespace": "x"}}), model)
    with pytest.raises(ConfigError, match="nothing to serve"):
        tool_definitions(store, ServerConfig("memory://", ()), model)
    with pytest.raises(vectorport.IndexNotFoundError):
        tool_definitions(store, ServerConfig("memory://", ("absent",)), model)
