"""The slow tests, in one place: what the default `python -m pytest` leaves out.

A test is slow when it takes seconds on a 2-core machine: it starts real processes (the CLI,
the UI server, workers, a browser), runs whole analyses, waits on timeouts, runs many
property-based examples or runs on PostgreSQL. `tests/conftest.py` marks `slow` every collected
test that `SLOW` or `SLOW_PATTERNS` below names; the default run deselects them (`addopts` in
pyproject.toml), `python -m pytest -m ""` runs everything and `python -m pytest -m slow` only
them. Every kind of test keeps fast cases in the default run (a store test on SQLite, the UI
server's pages and API, one browser test, a CLI run, hooks, the plugin kit, ...).

`SLOW` maps a test file (its path from the repository root) to the names of its slow tests:
a name without `[...]` stands for every parametrized case, an empty tuple for the whole file.
The list was drawn from `--durations=0` of the suite on a shared 2-core machine: a test that
took two seconds or more there, or a module fixture that did, is here. A test that becomes slow
belongs here too; one that becomes fast leaves.
"""

from __future__ import annotations

from fnmatch import fnmatchcase

SLOW: dict[str, tuple[str, ...]] = {
    "tests/cli/test_command_imports.py": (
        "test_runs_loads_nothing_it_does_not_call",
        "test_show_loads_nothing_it_does_not_call",
        "test_runs_in_a_new_home_makes_its_store_and_lists_nothing",
        "test_a_scripted_run_loads_no_provider_client_nor_web_app",
    ),
    "tests/cli/test_input_encodings_cli.py": (
        "test_an_index_recording_an_unusable_encoding_is_tampered",
        "test_encoding_forces_the_reading",
        "test_readable_inputs_complete_and_record_how_they_were_read",
        "test_validate_source_reads_the_encoding_given_or_detected",
        "test_validate_usage_errors",
    ),
    "tests/cli/test_inputs_columns_xlsx.py": (
        "test_a_cover_sheet_first_points_at_the_sheet_with_the_columns",
        "test_a_file_without_ids_gets_row_number_ids_and_a_warning",
        "test_a_workbook_first_sheet_with_numbers_and_dates",
        "test_a_workbook_sheet_by_name",
        "test_renamed_columns_are_mapped_with_options",
        "test_tab_separated_files",
        "test_the_verdict_shows_the_derived_ids_warning",
        "test_validate_source_reads_as_the_run_did_unless_told_otherwise",
    ),
    "tests/cli/test_report_citations_cli.py": (
        "test_validate_rejects_bad_citations_added_to_a_real_runs_report",
    ),
    "tests/cli/test_export_cli.py": (),
    "tests/cli/test_review_cli.py": (),
    "tests/cli/test_validate_cli.py": ("test_the_console_script_exit_codes",),
    "tests/evidence/test_properties.py": (
        "test_batch_hashes_equal_json_dumps",
        "test_columns_give_back_every_value",
        "test_every_substring_of_the_nfc_text_is_located",
        "test_row_hash_equals_dictreader_recomputation",
        "test_the_table_path_writes_the_builders_index_byte_for_byte",
        "test_write_then_load_round_trips",
    ),
    "tests/evidence/test_workbook_bounds.py": (
        "test_a_bomb_declaring_its_size_is_refused_before_inflating[one-cell-4GiB]",
    ),
    "tests/feedback/test_aggregate.py": (
        "test_pain_points_are_named_after_the_catalogue_theme",
        "test_size_is_bounded_whatever_the_input",
    ),
    "tests/feedback/test_analyst_backlog.py": (
        "test_backlog_ids_belong_to_the_theme_and_are_not_praise",
        "test_generated_items_give_a_valid_backlog",
        "test_sample_backlog_cites_only_real_ids",
    ),
    "tests/feedback/test_analyst_clause_memory.py": (
        "test_a_remembered_clause_reads_as_a_fresh_one",
        "test_a_clause_reads_as_its_tokens_and_units",
        "test_the_sentiment_is_the_earlier_codes",
    ),
    "tests/feedback/test_analyst_report.py": (
        "test_an_offline_run_on_chinese_input_completes_in_chinese",
    ),
    "tests/feedback/test_analyst_rows.py": ("test_generated_rows_hold_every_invariant",),
    "tests/feedback/test_analyst_sentiment.py": (
        "test_inference_needs_neither_scikit_learn_nor_numpy",
        "test_jieba_prints_nothing",
        "test_the_result_is_deterministic_and_row_independent",
    ),
    "tests/feedback/test_batch_protocol.py": (
        "test_a_failed_batch_is_recorded_reported_live_and_named_in_the_verdict",
        "test_any_text_goes_through_the_whole_offline_pipeline",
        "test_batch_message_round_trips_any_text",
    ),
    "tests/feedback/test_cells_as_read.py": ("test_the_report_quoting_any_cell_passes",),
    "tests/feedback/test_chart.py": (
        "test_a_linked_chart_that_is_missing_is_a_missing_file",
        "test_a_number_without_a_figure_and_a_swapped_label_are_caught",
        "test_a_tampered_breakdown_number_in_the_report_is_caught",
        "test_a_tampered_number_is_caught_at_its_line",
        "test_an_unlinked_chart_may_be_missing",
        "test_hostile_label_text_is_escaped_and_still_checked",
        "test_the_chart_is_written_linked_and_validated",
        "test_unsafe_svg_is_refused",
    ),
    "tests/feedback/test_defect_notice.py": (
        "test_a_clean_offline_run_and_a_models_findings_carry_no_defect_notice",
        "test_deliverables_edited_after_the_run_are_no_longer_the_analysts",
        "test_every_verdict_of_a_defective_offline_run_says_it_is_a_runlens_defect",
        "test_the_run_page_shows_the_defect_notice",
    ),
    "tests/feedback/test_discovery.py": (
        "test_a_hundred_thousand_rows_are_assigned",
        "test_a_short_row_with_one_rare_topical_word_joins_its_theme",
        "test_chinese_only_input",
        "test_discovery_is_deterministic",
        "test_each_domain_gets_themes_of_its_own",
        "test_empty_and_blank_texts_are_other",
        "test_generic_praise_and_complaints_do_not_make_a_theme",
        "test_junk_rows_are_never_a_theme",
    ),
    "tests/feedback/test_embedding.py": (
        "test_a_pasted_row_repeated_hundreds_of_times_is_one_theme_not_all",
        "test_both_ways_give_each_domain_its_themes[True]",
        "test_outliers_are_a_bounded_share",
        "test_without_the_encoder_discovery_falls_back_to_words",
    ),
    "tests/feedback/test_hostile_inputs.py": (),
    "tests/feedback/test_no_false_passes.py": (),
    "tests/feedback/test_offline_runs.py": (
        "test_ids_of_any_format_are_cited_and_verified",
        "test_ten_thousand_mixed_rows_complete",
        "test_the_sample_completes",
        "test_two_runs_write_byte_identical_artifacts",
    ),
    "tests/feedback/test_quotes_keep_the_point.py": (
        "test_every_quote_is_verbatim_and_every_cut_is_marked",
    ),
    "tests/feedback/test_quoting.py": ("test_the_report_marks_a_cut_outside_the_quotation_marks",),
    "tests/feedback/test_report_figures.py": (
        "test_a_breakdown_table_with_a_models_own_headers_verifies",
        "test_a_theme_share_is_compared_at_the_precision_written",
        "test_a_wrong_row_count_is_a_mismatch_at_its_line",
        "test_a_wrong_theme_row_count_in_the_table_is_a_mismatch",
        "test_an_invented_statistic_is_unsupported",
        "test_breakdown_tables_by_any_column_of_any_values_verify",
        "test_claims_outside_the_checked_sections_must_be_figures",
        "test_every_test_inputs_report_states_only_figures[generated-400]",
        "test_every_test_inputs_report_states_only_figures[markdown-characters-and-long-quotes]",
        "test_every_test_inputs_report_states_only_figures[quoted-newlines-and-commas]",
        "test_the_human_verdict_names_the_code_the_artifact_and_the_line",
        "test_the_repair_message_names_the_right_value",
        "test_the_sample_report_states_only_figures_each_tied_to_its_own",
        "test_the_tool_returns_the_figures_the_check_recomputes",
    ),
    "tests/feedback/test_sample_themes.py": ("test_themes_agree_with_the_hand_labelled_topics",),
    "tests/feedback/test_themes_pipeline.py": (),
    "tests/hardening/test_locked_store.py": (),
    "tests/hardening/test_records_and_terminal.py": (),
    "tests/hardening/test_show_missing_events.py": (),
    "tests/hardening/test_signals.py": (),
    "tests/hardening/test_store_values.py": (),
    "tests/hardening/test_tool_abandoned.py": (),
    "tests/hardening/test_workbook_bombs.py": (),
    "tests/hardening/test_workspace_clash.py": (),
    "tests/hardening/test_workspace_lock.py": (),
    "tests/kit/test_conformance_suite.py": ("test_the_first_plugin_passes_too",),
    "tests/kit/test_installed_plugin.py": (),
    "tests/kit/test_new_plugin.py": ("test_the_generated_code_is_lint_clean",),
    "tests/providers/test_hostile_runs.py": (),
    "tests/providers/test_llama_server.py": (),
    "tests/providers/test_provider_runs.py": (),
    "tests/runtime/test_cancel.py": (),
    "tests/runtime/test_hooks_hardening.py": (),
    # A 12,000-row offline run (about 15 s), then verify-source and drift on its copies.
    "tests/sourcelock/test_large.py": (),
    "tests/store/test_cli.py": (),
    "tests/store/test_concurrency.py": (),
    "tests/store/test_reviews.py": (
        "test_two_reviewers_at_once_give_a_gap_free_chain_that_verifies",
        "test_lines_appended_to_the_workspace_ledger_join_the_store",
        "test_a_run_whose_workspace_is_elsewhere_is_reviewed_in_the_store",
    ),
    "tests/store/test_migrations.py": (
        "test_two_processes_opening_a_new_store_at_once_both_succeed",
    ),
    "tests/store/test_mirror.py": (
        "test_a_cancel_in_the_store_ends_a_cli_run_cancelled",
        "test_a_cancel_in_the_store_stops_a_slow_model_within_two_seconds",
        "test_a_live_run_is_in_the_store_while_it_runs_and_equal_to_its_workspace_after",
        "test_a_run_killed_mid_way_is_settled_interrupted_in_the_store",
        "test_a_store_failing_mid_run_is_a_warning_and_the_run_completes",
        "test_the_store_follows_a_live_runs_status_plan_and_warnings",
    ),
    "tests/ui/test_api.py": (
        "test_a_run_whose_process_died_shows_interrupted",
        "test_a_running_run_is_cancelled_and_its_stream_ends_cancelled",
        "test_an_unusable_store_url_exits_2",
        "test_runs_outlive_the_server_that_started_them",
    ),
    "tests/ui/test_browser.py": (
        "test_a_report_quote_leads_to_its_row_with_the_quote_marked",
        "test_a_run_started_by_upload_reaches_completed_on_its_page_live",
        "test_clicking_the_hostile_links_does_nothing",
        "test_the_compare_page_shows_what_changed_between_two_runs",
        "test_the_failed_run_page_shows_the_verdict_and_every_finding_at_its_location",
        "test_the_hostile_artifact_views_run_nothing",
        "test_the_hostile_evidence_row_is_shown_whole_with_its_markup_marked_as_text",
        "test_the_hostile_run_pages_show_its_markup_as_text_and_run_none_of_it",
        "test_the_reader_view_shows_failed_citations_failed_with_their_reason",
        "test_the_run_page_follows_the_verdict_text_and_the_plan_live",
    ),
    "tests/ui/test_browser_rows.py": (),
    "tests/ui/test_browser_review.py": (),
    "tests/ui/test_browser_verdict.py": (),
    "tests/ui/test_export_page.py": (),
    "tests/ui/test_integrity.py": (),
    "tests/ui/test_launch_limit.py": (),
    "tests/ui/test_rows.py": (
        "test_evidence_api_gives_the_rows_columns_and_analysis",
        "test_hostile_metadata_is_escaped_on_the_evidence_and_rows_pages",
        "test_rows_api_lists_every_analysed_row_and_filters_on_the_server",
        "test_rows_api_refuses_an_unknown_filter_clearly",
        "test_runlens_runs_shows_input_duration_and_warnings",
        "test_runs_with_warnings_are_marked_in_the_list",
        "test_the_reader_view_shows_the_validated_chart_inline",
        "test_the_run_page_and_reader_view_link_the_rows",
    ),
    "tests/ui/test_session.py": (),
    "tests/ui/test_store_files.py": (),
    "tests/ui/test_reviews.py": (),
    "tests/ui/test_export.py": (),
    "tests/ui/test_verdict_api.py": (),
    "tests/validation/test_cuts.py": (
        "test_a_fitted_quote_is_always_accepted",
        "test_a_one_line_quote_is_accepted_and_on_one_line",
        "test_a_short_quote_is_a_verbatim_prefix_cut_where_quotes_may_be_cut",
        "test_any_accepted_quote_of_a_cut_text_is_accepted_in_the_text",
        "test_cut_text_ends_where_a_quote_may_end",
    ),
    "tests/validation/test_evidence_citations.py": (
        "test_a_hundred_thousand_citations_in_linear_time",
    ),
    "tests/validation/test_quotes.py": (
        "test_any_one_character_change_to_a_cited_fragment_fails",
        "test_any_strong_verbatim_fragment_cited_in_the_declared_form_passes",
    ),
    "tests/validation/test_reading.py": (
        "test_the_analysts_quote_of_any_cell_passes_where_the_row_is_written",
    ),
    "tests/validation/test_rounding.py": (
        "test_every_share_the_writer_writes_the_checker_accepts",
    ),
    "tests/validation/test_schema.py": (
        "test_the_fast_check_agrees_with_jsonschema",
        "test_a_schema_vouched_for_is_one_jsonschema_accepts",
    ),
    "tests/workers/test_executor_ids.py": (),
    "tests/workers/test_model_server.py": (
        "test_a_run_completes_and_an_identical_run_sends_identical_requests",
        "test_distinct_inputs_differ_only_in_the_first_row_and_send_distinct_requests",
        "test_latency_overlaps_and_concurrency_is_counted",
        "test_stop_cuts_a_sleeping_request_short",
        "test_the_script_prints_its_url_serves_and_stops_on_sigterm",
    ),
    "tests/workers/test_resumed_event.py": (),
    "tests/workers/test_run_to_end.py": (),
    "tests/workers/test_spread.py": (),
    "tests/workers/test_submitter.py": (),
    "tests/workers/test_worker_lifecycle.py": (),
    "tests/workers/test_workers.py": (),
}

#: Cases picked by `fnmatch` pattern over the node id (`[[]` stands for a bracket).
SLOW_PATTERNS: tuple[str, ...] = ("tests/store/*[[]postgresql*",)


#: Tests that assert how long something took (a cancellation within a second, a bomb refused
#: within seconds, a linear-time check): `scripts/test.sh` runs them untraced, after the rest
#: of the suite ran under coverage, since a tracer slows every line they time. Marked
#: `timed` (they stay in the default run unless they are slow too).
TIMED: dict[str, tuple[str, ...]] = {
    "tests/evidence/test_workbook_bounds.py": (
        "test_a_bomb_declaring_its_size_is_refused_before_inflating",
        "test_a_bomb_lying_about_its_size_stops_at_the_size_it_declares",
    ),
    "tests/feedback/test_offline_runs.py": ("test_ten_thousand_mixed_rows_complete",),
    "tests/hardening/test_hook_setsid.py": (
        "test_a_double_forked_daemon_does_not_outlive_a_hook_that_timed_out",
    ),
    "tests/hardening/test_locked_store.py": (
        "test_a_locked_sqlite_store_does_not_delay_the_end_of_a_run",
    ),
    "tests/hardening/test_signals.py": (),
    "tests/hardening/test_tool_abandoned.py": (),
    "tests/hardening/test_workbook_bombs.py": (),
    "tests/providers/test_fault_server.py": (
        "test_close_releases_a_hanging_request_at_once",
        "test_hang_outlasts_a_client_timeout",
    ),
    "tests/providers/test_hostile_responses.py": (
        "test_a_body_dripping_past_the_timeout_is_a_timeout",
        "test_an_endless_body_stops_at_16_mib_fast_and_in_bounded_memory",
        "test_an_endless_error_body_is_still_the_status_error_and_retried",
    ),
    "tests/providers/test_hostile_runs.py": (
        "test_a_gzip_bomb_fails_the_run_at_the_limit",
        "test_an_endless_body_fails_the_run_at_once_with_the_limit_named",
        "test_an_endless_body_in_a_subprocess_fails_fast_in_bounded_memory",
    ),
    "tests/providers/test_provider_runs.py": (
        "test_a_hang_past_the_timeout_is_retried_and_the_run_completes",
        "test_a_server_that_always_hangs_fails_the_run_with_a_timeout_message",
    ),
    "tests/runtime/test_hooks.py": (
        # Under a tracer the validator thread it abandons holds the run for its whole sleep.
        "test_a_hung_validator_blocks_after_its_timeout_and_does_not_hold_the_process",
    ),
    "tests/runtime/test_hooks_hardening.py": (
        # Under a tracer a cancelled Stop round's thread holds the run past the wait, as in
        # the hung-validator test above.
        "test_cancelling_the_run_kills_the_running_hook[Stop-SIGTERM]",
        "test_cancelling_the_run_kills_the_running_hook[Stop-SIGINT]",
        "test_a_background_child_does_not_outlive_a_hook_that_exited",
        "test_a_hook_flooding_both_pipes_does_not_hang",
        "test_a_large_payload_is_no_problem_whether_read_or_not",
        "test_a_stop_hook_past_its_own_timeout_blocks_and_leaves_nothing",
        "test_a_timed_out_hook_leaves_no_process_behind",
    ),
    "tests/store/test_mirror.py": (
        "test_a_cancel_in_the_store_ends_a_cli_run_cancelled",
        "test_a_cancel_in_the_store_stops_a_slow_model_within_two_seconds",
    ),
    "tests/ui/test_launch_limit.py": (
        "test_twenty_starts_at_once_start_two_runs_and_refuse_the_rest",
    ),
    "tests/validation/test_evidence_citations.py": (
        "test_a_hundred_thousand_citations_in_linear_time",
    ),
    "tests/workers/test_model_server.py": ("test_stop_cuts_a_sleeping_request_short",),
    "tests/workers/test_worker_lifecycle.py": (
        "test_sigterm_hands_the_runs_back_and_ends_the_worker_within_2s",
    ),
}


def _listed(table: dict[str, tuple[str, ...]], nodeid: str) -> bool:
    path, _, test = nodeid.partition("::")
    names = table.get(path)
    return names is not None and (not names or test in names or test.split("[", 1)[0] in names)


def is_slow(nodeid: str) -> bool:
    """Whether the test with this node id is one of the slow ones."""
    return _listed(SLOW, nodeid) or any(fnmatchcase(nodeid, p) for p in SLOW_PATTERNS)


def is_timed(nodeid: str) -> bool:
    """Whether the test with this node id asserts how long something took."""
    return _listed(TIMED, nodeid)
