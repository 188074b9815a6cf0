"""The analysed rows of a run (`/runs/{id}/rows`, `GET /api/runs/{id}/rows`), a row's metadata
and analysis on its evidence page, the chart inline in the reader view and the runs marked
with warnings: through a real `runlens ui` over real runs of the CLI, on hostile input."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from tests.ui.conftest import UIServer, server_env
from tests.ui.runs import SAMPLE_CSV, MadeRun, run_cli

from runlens.contracts import ArtifactContract, JsonRules
from runlens.evidence import EvidenceIndex, EvidenceItem
from runlens.evidence._stores import ItemStore, Metadata
from runlens.ui.analysed import AnalysedRows, row_fields_of, rows_page
from runlens_feedback.contracts import ANALYSIS_CONTRACT

#: Column names and values a hostile export may hold: markup, quotes, control characters
#: (no NUL), very long text, Chinese.
HOSTILE_COLUMN = '<b onmouseover="alert(1)">ch"an</b>'
LONG_VALUE = "长" * 3000
HOSTILE_VALUE = '<script>alert("x")</script>\x07 "q" 渠道'


@dataclass(frozen=True)
class Runs:
    sample: MadeRun
    hostile: MadeRun
    #: A file without an id column: its rows get derived ids, and the run a warning.
    derived: MadeRun


def hostile_csv(path: Path) -> Path:
    with SAMPLE_CSV.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["feedback_id", "text", HOSTILE_COLUMN, "备注"])
    for number, row in enumerate(rows):
        value = HOSTILE_VALUE if number == 0 else f"v{number % 3}"
        writer.writerow([row["feedback_id"], row["text"], value, LONG_VALUE if number == 1 else ""])
    path.write_text(out.getvalue(), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def runs(ui_server: UIServer, tmp_path_factory: pytest.TempPathFactory) -> Runs:
    folder = tmp_path_factory.mktemp("rows")
    sample = run_cli(ui_server.home, SAMPLE_CSV, database_url=ui_server.db_url)
    hostile = run_cli(
        ui_server.home, hostile_csv(folder / "hostile.csv"), database_url=ui_server.db_url
    )
    assert sample.status == "completed" and hostile.status == "completed", hostile.verdict
    no_ids = folder / "no_ids.csv"
    with SAMPLE_CSV.open(encoding="utf-8", newline="") as handle:
        texts = [row["text"] for row in csv.DictReader(handle)]
    no_ids.write_text("text,channel\n" + "".join(f'"{t}",app\n' for t in texts), "utf-8")
    derived = run_cli(ui_server.home, no_ids, database_url=ui_server.db_url)
    assert derived.status == "completed", derived.verdict
    return Runs(sample, hostile, derived)


@pytest.fixture
def api(ui_server: UIServer) -> Iterator[httpx.Client]:
    with ui_server.client() as client:
        yield client


def analysis_items(run: MadeRun) -> list[dict[str, object]]:
    document = json.loads((run.workspace / "artifacts/feedback_analysis.json").read_text("utf-8"))
    items: list[dict[str, object]] = document["items"]
    return items


# -- the neutral hook -------------------------------------------------------------------------


def test_row_fields_are_read_from_any_contract_by_its_declaration() -> None:
    contract = ArtifactContract(
        name="artifacts/t.json",
        schema=JsonRules(enum_fields={"tickets.urgency": ("low", "high")}),
        evidence_fields=("tickets.ticket",),
        row_fields=("tickets.urgency", "tickets.team.name"),
    )
    fields = row_fields_of(contract)
    assert fields is not None
    assert (fields.items, fields.id_path, fields.names) == (
        ("tickets",),
        ("ticket",),
        ("urgency", "team.name"),
    )
    document = {
        "tickets": [
            {"ticket": "t1", "urgency": "high", "team": {"name": "web"}},
            {"ticket": "t1", "urgency": "low"},  # the first item of a row describes it
            {"ticket": "t2", "urgency": 3},
        ]
    }
    table = AnalysedRows(fields, document)
    assert table.ids == ["t1", "t2"]
    assert table.describe("t1") == {"urgency": "high", "team.name": "web"}
    assert table.describe("t2") == {"urgency": "3", "team.name": ""}
    assert table.values("urgency") == ["low", "high", "3"]  # declared choices first
    many = {"tickets": [{"ticket": f"t{n}", "team": {"name": f"n{n}"}} for n in range(61)]}
    assert AnalysedRows(fields, many).values("team.name") is None  # too many to list
    assert row_fields_of(contract.model_copy(update={"row_fields": ("other.x",)})) is None


# -- the API ----------------------------------------------------------------------------------


def test_rows_api_lists_every_analysed_row_and_filters_on_the_server(
    api: httpx.Client, runs: Runs
) -> None:
    run_id = runs.sample.run_id
    items = analysis_items(runs.sample)
    body = api.get(f"/api/runs/{run_id}/rows", params={"limit": 500}).json()
    assert body["total"] == body["matched"] == len(items)
    assert body["fields"] == ["sentiment", "severity", "theme", "pain_point"]
    assert body["metadata_columns"] == ["channel", "created_at", "rating", "user_segment"]
    assert [row["row_id"] for row in body["rows"]] == [item["feedback_id"] for item in items]
    first = body["rows"][0]
    assert first["fields"]["sentiment"] == items[0]["sentiment"]
    assert set(first["metadata"]) == set(body["metadata_columns"])

    negative = [item for item in items if item["sentiment"] == "negative"]
    filtered = api.get(f"/api/runs/{run_id}/rows", params={"sentiment": "negative"}).json()
    assert filtered["matched"] == len(negative) > 0
    assert {row["fields"]["sentiment"] for row in filtered["rows"]} == {"negative"}

    channel = first["metadata"]["channel"]
    by_channel = api.get(
        f"/api/runs/{run_id}/rows", params={"meta.channel": channel, "sentiment": "negative"}
    ).json()
    assert by_channel["rows"] and all(
        row["metadata"]["channel"] == channel and row["fields"]["sentiment"] == "negative"
        for row in by_channel["rows"]
    )
    paged = api.get(f"/api/runs/{run_id}/rows", params={"limit": 2, "page": 2}).json()
    assert [row["row_id"] for row in paged["rows"]] == [i["feedback_id"] for i in items[2:4]]


def test_rows_api_refuses_an_unknown_filter_clearly(api: httpx.Client, runs: Runs) -> None:
    response = api.get(f"/api/runs/{runs.sample.run_id}/rows", params={"colour": "red"})
    assert response.status_code == 400
    detail = response.json()["detail"]
    assert "cannot filter by 'colour'" in detail and "meta.channel" in detail
    assert api.get("/api/runs/run_nope/rows").status_code == 404


def test_evidence_api_gives_the_rows_columns_and_analysis(api: httpx.Client, runs: Runs) -> None:
    item = analysis_items(runs.sample)[0]
    row_id = str(item["feedback_id"])
    body = api.get(f"/api/runs/{runs.sample.run_id}/evidence/{quote(row_id)}").json()
    with SAMPLE_CSV.open(encoding="utf-8", newline="") as handle:
        source = next(r for r in csv.DictReader(handle) if r["feedback_id"] == row_id)
    assert body["columns"] == {k: v for k, v in source.items() if k not in ("feedback_id", "text")}
    [analysis] = body["analysis"]
    assert analysis["artifact"] == "artifacts/feedback_analysis.json"
    assert analysis["fields"]["sentiment"] == item["sentiment"]
    assert analysis["fields"]["severity"] == item["severity"]
    assert analysis["fields"]["pain_point"] == item["pain_point"]
    assert body["citations"]


# -- the pages, on hostile input --------------------------------------------------------------


def test_hostile_metadata_is_escaped_on_the_evidence_and_rows_pages(
    api: httpx.Client, runs: Runs
) -> None:
    run_id = runs.hostile.run_id
    first = str(analysis_items(runs.hostile)[0]["feedback_id"])
    raw = api.get(f"/api/runs/{run_id}/evidence/{quote(first)}").json()
    assert raw["columns"][HOSTILE_COLUMN] == HOSTILE_VALUE  # kept exactly, control char too
    for path in (f"/runs/{run_id}/evidence/{quote(first)}", f"/runs/{run_id}/rows"):
        html = api.get(path).text
        assert "<script>alert" not in html and "<b onmouseover" not in html, path
        assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in html, path
        assert "&lt;b onmouseover=&#34;alert(1)&#34;&gt;ch&#34;an&lt;/b&gt;" in html, path
    rows = api.get(f"/runs/{run_id}/rows").text
    assert LONG_VALUE in rows and "备注" in rows
    filtered = api.get(
        f"/api/runs/{run_id}/rows", params={f"meta.{HOSTILE_COLUMN}": HOSTILE_VALUE}
    ).json()
    assert [row["row_id"] for row in filtered["rows"]] == [first]


def test_the_run_page_and_reader_view_link_the_rows(api: httpx.Client, runs: Runs) -> None:
    run_id = runs.sample.run_id
    for path in (f"/runs/{run_id}", f"/runs/{run_id}/report"):
        assert f'href="/runs/{run_id}/rows"' in api.get(path).text, path
    page = api.get(f"/runs/{run_id}/rows", params={"severity": "high"}).text
    assert 'name="severity"' in page and '<option value="high" selected>' in page
    assert '<input type="text" name="pain_point"' in page  # too many values to list
    assert api.get(f"/runs/{run_id}/rows", params={"nope": "x"}).status_code == 400


def test_the_reader_view_shows_the_validated_chart_inline(api: httpx.Client, runs: Runs) -> None:
    run_id = runs.sample.run_id
    html = api.get(f"/runs/{run_id}/report").text
    src = f"/api/runs/{run_id}/artifacts/artifacts/insight_chart.svg"
    assert f'<img class="md-figure" src="{src}"' in html
    chart = api.get(src)
    assert chart.status_code == 200
    assert chart.headers["content-type"] == "image/svg+xml"
    assert chart.headers["x-content-type-options"] == "nosniff"
    assert chart.headers["content-security-policy"].startswith("sandbox")


def test_runs_with_warnings_are_marked_in_the_list(api: httpx.Client, runs: Runs) -> None:
    warnings = api.get(f"/api/runs/{runs.derived.run_id}").json()["warnings"]
    assert any("row number" in warning for warning in warnings), warnings
    page = api.get("/", params={"q": runs.derived.run_id}).text
    assert f"⚠ {len(warnings)} warning" in page and "row number" in page
    clean = api.get("/", params={"q": runs.sample.run_id}).text
    assert "run-warnings" not in clean


def test_runlens_runs_shows_input_duration_and_warnings(ui_server: UIServer, runs: Runs) -> None:
    env = {**server_env(ui_server.home), "RUNLENS_DATABASE_URL": ui_server.db_url}
    env["COLUMNS"] = "200"

    def runs_command(*options: str) -> str:
        command = [sys.executable, "-m", "runlens", "runs", "--limit", "500", *options]
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout

    shown = runs_command()
    lines = {line.split()[0]: line for line in shown.splitlines() if line.startswith("run_")}
    derived, sample = lines[runs.derived.run_id], lines[runs.sample.run_id]
    assert "no_ids.csv" in derived and "⚠ 1" in derived
    assert "sample_feedback.csv" in sample and "⚠" not in sample
    assert re.search(r"\d+\.\d s", sample), sample  # the duration
    assert f"warning {runs.derived.run_id}: no_ids.csv has no 'feedback_id' column" in shown
    listed = runs_command("--json")
    by_id = {run["run_id"]: run for run in json.loads(listed)}
    assert by_id[runs.derived.run_id]["input_name"] == "no_ids.csv"


def test_a_row_field_must_sit_in_the_list_of_an_evidence_field() -> None:
    with pytest.raises(ValueError, match=r"row field 'notes\.x' shares its list with none"):
        ArtifactContract(
            name="artifacts/t.json", evidence_fields=("items.id",), row_fields=("notes.x",)
        )


class CountingStore(ItemStore):
    """An index's rows that count the texts and metadata read."""

    def __init__(self, items: dict[str, EvidenceItem]) -> None:
        super().__init__(items)
        self.reads = 0

    def text(self, row_id: str) -> str:
        self.reads += 1
        return super().text(row_id)

    def metadata(self, row_id: str) -> Metadata:
        self.reads += 1
        return super().metadata(row_id)


def test_a_page_reads_only_its_own_rows_from_the_index() -> None:
    count = 20_000
    items = {
        f"r{n}": EvidenceItem("0" * 64, f"text {n}", {"channel": "app" if n % 2 else "web"})
        for n in range(count)
    }
    store = CountingStore(items)
    index = EvidenceIndex(
        source="s.csv",
        source_hash="ab" * 32,
        id_column="id",
        text_column="text",
        store=store,
        columns=("id", "text", "channel"),
    )
    fields = row_fields_of(ANALYSIS_CONTRACT)
    assert fields is not None
    document = {
        "items": [
            {"feedback_id": f"r{n}", "sentiment": ("negative", "positive")[n % 2]}
            for n in range(count)
        ]
    }
    table = AnalysedRows(fields, document)
    page = rows_page(table, index, ({"sentiment": "positive"}, {}), 3, 50)
    assert (page.matched, page.pages, len(page.rows)) == (count // 2, count // 100, 50)
    assert page.rows[0].row_id == "r201" and page.rows[0].metadata == {"channel": "app"}
    assert store.reads == 2 * 50  # a text and the metadata of each row shown, nothing else
    by_column = rows_page(table, index, ({}, {"channel": "web"}), 1, 50)
    assert by_column.matched == count // 2 and by_column.rows[0].row_id == "r0"
    store.reads = 0
    rows_page(table, index, ({}, {"channel": "web"}), 2, 50)
    assert store.reads == 2 * 50  # the metadata column was read once, and kept
