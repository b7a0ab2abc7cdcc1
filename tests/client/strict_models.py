"""A Python client with strict models, generated from the node's OpenAPI document as a
node configured with the network's names serves it, run against the native node.

`tests/client/run` runs this with the virtualenv that `scripts/setup` installs from
`tests/client/requirements.txt` (pinned). It

1. starts `target/debug/ledger-node serve --memory` (or `LEDGER_NODE_BIN`) on a free
   port with `LEDGER_NODE_NAMES_ROOT=Splice` and `LEDGER_NODE_NAMES_COIN=Amulet`, and
   ingests the demo history that `ledger-node demo` writes under the same names;
2. reads `GET /api/scan/openapi.json`, checks it with `openapi-spec-validator`, and
   generates pydantic models from it with `datamodel-code-generator`, strict: unknown
   fields are an error (`extra="forbid"`), no field is coerced (strict types), and an
   optional field is not nullable unless the document says so;
3. walks `POST /api/scan/v2/updates` in `protobuf_json` page by page to the end, then the
   backfilling endpoints: `migration-info` for every migration, `updates-before` for
   every synchronizer of a migration from its latest record time back to its first
   (version-1 items with `offset`, newest first), `import-updates` page by page, and
   `status`; it also asks for the choice contexts of the history's transfer
   instructions and the price votes;
4. parses every answer into the generated model of its operation's 200 response, and
   judges every answer (status and body) with `openapi-core`, whose schema validator
   follows `discriminator` mappings (the choice contexts' `AnyValue`, the events of a
   transaction tree).

Any answer that does not parse or validate fails the run with what is wrong.
"""

from __future__ import annotations

import datetime
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from openapi_core import OpenAPI
from openapi_core.testing import MockRequest, MockResponse
from openapi_spec_validator import validate as validate_spec

ROOT = Path(__file__).resolve().parents[2]
BINARY = os.environ.get("LEDGER_NODE_BIN", str(ROOT / "target/debug/ledger-node"))
ADMIN_TOKEN = "python-client-admin-token"
UPDATES = 1000  # the first history length with a hard migration and its import updates
PAGE = 200


def network_names() -> dict[str, str]:
    """The environment with the network's names configured."""
    env = dict(os.environ)
    env.update(LEDGER_NODE_NAMES_ROOT="Splice", LEDGER_NODE_NAMES_COIN="Amulet")
    return env


def start_node() -> tuple[subprocess.Popen, str]:
    """Starts the native node under the network's names; returns it and its URL."""
    env = network_names()
    env.update(LEDGER_NODE_ADMIN_TOKEN=ADMIN_TOKEN)
    node = subprocess.Popen(
        [BINARY, "serve", "--memory", "--listen", "127.0.0.1:0", "--tick-seconds", "0"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    log = ""
    assert node.stderr is not None
    for line in node.stderr:
        log += line
        match = re.search(r"serving on (http://[^\s\"]+)", line)
        if match:
            return node, match.group(1)
    raise SystemExit(f"ledger-node exited before serving:\n{log}")


def demo_history() -> str:
    """The demo history, spelled with the network's names by `ledger-node demo`."""
    return subprocess.run(
        [BINARY, "demo", "--updates", str(UPDATES), "--seed", "1"],
        env=network_names(),
        check=True,
        capture_output=True,
        text=True,
    ).stdout


class Client:
    """Sends requests to the node, judges every answer with openapi-core and parses its
    body into the generated model of the operation's 200 response."""

    def __init__(self, base_url: str, document: dict, models) -> None:
        self.base_url = base_url
        self.models = models
        self.openapi = OpenAPI.from_dict(document)
        self.answers = 0
        self.parsed: dict[str, int] = {}

    def send(self, method: str, path: str, body=None, headers=None, query: str = ""):
        data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        request = urllib.request.Request(self.base_url + path + query, data=data, method=method)
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        if data is not None and "content-type" not in {k.lower() for k in (headers or {})}:
            request.add_header("content-type", "application/json")
        try:
            with urllib.request.urlopen(request) as response:
                status, content_type, raw = response.status, response.headers.get("content-type"), response.read()
        except urllib.error.HTTPError as error:
            status, content_type, raw = error.code, error.headers.get("content-type"), error.read()
        self.judge(method, path, query, data, headers, status, content_type, raw)
        self.raw = raw
        return status, (json.loads(raw) if raw else None)

    def judge(self, method, path, query, data, headers, status, content_type, raw) -> None:
        """openapi-core's verdict on the answer; the node's servers are the document's, so
        the request is judged as if sent to the first of them."""
        server = self.openapi.spec["servers"][0]["url"]
        request = MockRequest(
            server,
            method.lower(),
            path,
            args=dict(p.split("=", 1) for p in query.lstrip("?").split("&") if p),
            data=data,
            headers=headers or {},
            content_type="application/json",
        )
        response = MockResponse(raw, status_code=status, content_type=content_type or "application/json")
        try:
            self.openapi.validate_response(request, response)
        except Exception as error:  # openapi-core raises one class per kind of mismatch
            detail = getattr(error, "__cause__", None) or error
            raise SystemExit(
                f"{method} {path}{query} → {status}: openapi-core refuses the answer: {error!r}\n"
                f"  cause: {detail!r}\n  body: {raw[:600]!r}"
            ) from error
        self.answers += 1

    def parse(self, model: str, method: str, path: str, body=None, query: str = ""):
        """Sends the request, expects a 200, and parses the body into `model`."""
        status, answer = self.send(method, path, body, query=query)
        if status != 200:
            raise SystemExit(f"{method} {path}{query}: {status} {answer}")
        try:
            # Strict, from the JSON text: no value is coerced from another JSON type.
            parsed = getattr(self.models, model).model_validate_json(self.raw, strict=True)
        except Exception as error:
            raise SystemExit(f"{method} {path}{query}: the answer does not parse into {model}: {error}") from error
        self.parsed[model] = self.parsed.get(model, 0) + 1
        return answer, parsed


def generate_models(document: dict, directory: Path):
    """Generates the pydantic models of `document` and imports them."""
    source = directory / "openapi.json"
    source.write_text(json.dumps(document))
    target = directory / "models.py"
    subprocess.run(
        [
            str(Path(sys.executable).parent / "datamodel-codegen"),
            "--input", str(source),
            "--input-file-type", "openapi",
            "--output", str(target),
            "--output-model-type", "pydantic_v2.BaseModel",
            "--target-python-version", "3.11",
            "--extra-fields", "forbid",
            "--strict-nullable",
            "--use-annotated",
            "--field-constraints",
            "--enum-field-as-literal", "all",
            "--disable-timestamp",
            "--formatters", "builtin",
        ],
        check=True,
    )
    spec = importlib.util.spec_from_file_location("ledger_node_models", target)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # pydantic resolves the models' generics through it
    spec.loader.exec_module(module)
    return module


def after_latest(record_time: str) -> str:
    """The time a microsecond after `record_time` (as the node writes times)."""
    at = datetime.datetime.strptime(record_time, "%Y-%m-%dT%H:%M:%S.%fZ") + datetime.timedelta(microseconds=1)
    return at.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def walk(client: Client, history: str) -> None:
    scan = "/api/scan"
    # The update stream, a page at a time, to the end.
    after = None
    streamed = 0
    while True:
        body = {"page_size": PAGE, "daml_value_encoding": "protobuf_json"}
        if after is not None:
            body["after"] = after
        page, _ = client.parse("UpdateHistoryResponseV2", "POST", f"{scan}/v2/updates", body)
        items = page["transactions"]
        if not items:
            break
        streamed += len(items)
        last = items[-1]
        migration = last.get("migration_id", last.get("event", {}).get("migration_id"))
        after = {"after_migration_id": migration, "after_record_time": last["record_time"]}
    assert streamed > UPDATES // 2, f"only {streamed} updates in the stream"
    latest_migration = migration

    # Backfilling: every migration, from the latest back.
    client.parse("GetBackfillingStatusResponse", "GET", f"{scan}/v0/backfilling/status")
    migration_id = latest_migration
    backfilled = 0
    imported = 0
    while migration_id is not None:
        info, _ = client.parse("GetMigrationInfoResponse", "POST", f"{scan}/v0/backfilling/migration-info",
                               {"migration_id": migration_id})
        for synchronizer in info["record_time_range"]:
            # `before` is exclusive: start a microsecond after the latest update, then go
            # back page by page from the oldest update of each page.
            before = after_latest(synchronizer["max"])
            seen_latest = False
            while True:
                body = {"migration_id": migration_id, "synchronizer_id": synchronizer["synchronizer_id"],
                        "before": before, "count": PAGE}
                page, _ = client.parse("GetUpdatesBeforeResponse", "POST",
                                       f"{scan}/v0/backfilling/updates-before", body)
                items = page["transactions"]
                if not items:
                    break
                times = [item["record_time"] for item in items]
                assert times == sorted(times, reverse=True), f"updates-before is not newest first: {times}"
                for item in items:
                    assert "offset" in item, f"an updates-before item without offset: {json.dumps(item)[:300]}"
                backfilled += len(items)
                before = times[-1]
                seen_latest = True
                if len(items) < PAGE:
                    break
            assert seen_latest, f"updates-before answered nothing before {synchronizer}"
        after_id = ""
        while True:
            body = {"migration_id": migration_id, "after_update_id": after_id, "limit": PAGE}
            page, _ = client.parse("GetImportUpdatesResponse", "POST", f"{scan}/v0/backfilling/import-updates", body)
            items = page["transactions"]
            if not items:
                break
            for item in items:
                assert "offset" in item, f"an import-updates item without offset: {json.dumps(item)[:300]}"
            imported += len(items)
            after_id = items[-1]["update_id"]
        migration_id = info.get("previous_migration_id")
    assert backfilled == streamed, f"updates-before reached {backfilled} of the stream's {streamed} updates"
    assert imported > 0, "no import updates: the demo history has a hard migration with some"

    # Name-dependent answers: the price votes and the choice contexts (AnyValue).
    client.parse("ListAmuletPriceVotesResponse", "GET", f"{scan}/v0/amulet-price/votes")
    instructions = [
        event["contract_id"]
        for line in history.splitlines() if line.strip()
        for event in (json.loads(line).get("update", {}).get("events_by_id") or {}).values()
        if event.get("event_type") == "created_event" and event["template_id"].endswith(":AmuletTransferInstruction")
    ]
    assert instructions, "the demo history has no transfer instruction"
    contexts = 0
    for contract_id in reversed(instructions[-20:]):
        for choice in ("accept", "reject", "withdraw"):
            path = f"{scan}/registry/transfer-instruction/v2/{urllib.parse.quote(contract_id, safe='')}/choice-contexts/{choice}"
            status, answer = client.send("POST", path, {"meta": {"k": "v"}})
            if status == 200:
                client.models.ChoiceContext.model_validate_json(client.raw, strict=True)
                assert "amulet-rules" in answer["choiceContextData"]["values"] or choice != "accept", answer
                contexts += 1
    assert contexts > 0, "no choice context answered 200"
    print(f"streamed {streamed} updates, backfilled {backfilled} and {imported} import updates, "
          f"{contexts} choice contexts; {client.answers} answers judged by openapi-core; parsed {client.parsed}")


def main() -> None:
    node, base_url = start_node()
    try:
        history = demo_history()
        request = urllib.request.Request(
            base_url + "/v0/admin/ingest", data=history.encode(), method="POST",
            headers={"authorization": f"Bearer {ADMIN_TOKEN}", "content-type": "application/x-ndjson"},
        )
        with urllib.request.urlopen(request) as response:
            assert response.status == 200
        with urllib.request.urlopen(base_url + "/api/scan/openapi.json") as response:
            document = json.loads(response.read())
        validate_spec(document)
        with tempfile.TemporaryDirectory() as directory:
            models = generate_models(document, Path(directory))
            walk(Client(base_url, document, models), history)
    finally:
        node.terminate()
        node.wait(timeout=30)


if __name__ == "__main__":
    main()
