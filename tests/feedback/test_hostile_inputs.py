"""Whole hostile-but-valid inputs (`tests.hostile`): the offline analyst's run completes with
no finding and every row analysed, whatever the columns are called and hold, whatever the ids
look like, however long or short or strange the texts are, in every input format.

A finding on the offline analyst's own deliverables is a RunLens defect: each one this
generator found was fixed in the code, never filtered out of the generator.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from tests.hostile import HostileInput, hostile_inputs

from .helpers import run_offline

#: Bounded and seeded, so CI runs the same examples every time.
HOSTILE = settings(
    max_examples=30,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)


def assert_clean_run(data: HostileInput, folder: Path) -> None:
    path = data.write(folder)
    run = run_offline(
        path,
        folder / "workspace",
        f"--id-column={data.id_column}",
        f"--text-column={data.text_column}",
    )
    result = run.result
    assert result["findings"] == [], result["error_message"]
    assert run.exit_code == 0 and result["status"] == "completed", result["error_message"]
    analysis = run.analysis
    assert analysis["failed_batches"] == []
    analysed = [item["feedback_id"] for item in analysis["items"]]
    assert sorted(analysed) == sorted(row[data.id_column] for row in data.rows)


@HOSTILE
@given(data=hostile_inputs())
def test_the_offline_run_completes_on_any_valid_input(
    data: HostileInput, tmp_path_factory: pytest.TempPathFactory
) -> None:
    assert_clean_run(data, tmp_path_factory.mktemp("hostile"))


def test_the_issues_own_cases_complete(tmp_path: Path) -> None:
    """2,000 rows with a `label` column whose values are measure words, on row counts whose
    shares are half-way points (3, 11, 87 and 1,023 of 2,000), and long reviews whose
    2,000th character falls inside a word."""
    counts = {"critical": 3, "high": 11, "mixed": 87, "5": 1023, "negative": 876}
    labels = [value for value, count in counts.items() for _ in range(count)]
    words = ("the", "plot", "was", "wonderful", "but", "acting", "felt", "unbelievably", "slow")
    rows = []
    for n, label in enumerate(labels):
        if n % 400 == 0:  # a long review: 2,500 characters, cut inside a word at 2,000
            text = " ".join(words[(n + k) % len(words)] for k in range(400))[:2_500]
        else:
            text = f"Review {n}: the {words[n % len(words)]} part was {words[(n * 7) % 9]}."
        rows.append({"review id": f"R-{n:05d}", "review": text, "label": label})
    data = HostileInput("review id", "review", ["review id", "review", "label"], rows)
    assert_clean_run(data, tmp_path)
