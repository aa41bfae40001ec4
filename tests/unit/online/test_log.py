"""read_log: files and frames, canonical columns, times, sessions, and every bad input."""

from __future__ import annotations

import datetime as dt
import unicodedata
import warnings

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ireval_df as ie
from ireval_df.errors import (
    DataError,
    FormatError,
    LogWarning,
    OptionError,
    SchemaError,
)
from ireval_df.online.log import _normalize_series, exact_key, normalize_query

T = "2024-05-01T10:"


def searches(**extra):
    base = {
        "search_id": ["s1", "s2", "s3"],
        "user_id": ["u1", "u1", "u2"],
        "ts": [T + "00:00", T + "05:00", T + "00:00"],
        "variant": ["A", "A", "B"],
        "query": ["red shoes", "red running shoes", "boots"],
        "n_results": [2, 2, 0],
    }
    base.update(extra)
    return pl.DataFrame(base)


def results(**extra):
    base = {
        "search_id": ["s1", "s1", "s2", "s2"],
        "position": [1, 2, 1, 2],
        "doc_id": ["a", "b", "c", "d"],
    }
    base.update(extra)
    return pl.DataFrame(base)


def events(**extra):
    base = {
        "event_id": ["e1", "e2"],
        "search_id": ["s1", "s2"],
        "user_id": ["u1", "u1"],
        "ts": [T + "00:10", T + "05:30"],
        "event_type": ["click", "click"],
        "position": [1, 2],
    }
    base.update(extra)
    return pl.DataFrame(base, strict=False)


def read(*args, **kwargs):
    """read_log, and the one LogWarning it gave (None without)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        log = ie.online.read_log(*args, **kwargs)
    found = [w for w in caught if issubclass(w.category, LogWarning)]
    assert len(found) <= 1, [str(w.message) for w in found]
    return log, (str(found[0].message) if found else None)


def problems(log):
    return {(i.table, i.problem): i.rows for i in log.issues}


# --- sources and columns ------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["parquet", "csv", "jsonl"])
def test_a_folder_of_files_reads_as_the_frames_do(tmp_path, fmt):
    frames = {"searches": searches(), "results": results(), "events": events()}
    for name, frame in frames.items():
        path = tmp_path / f"{name}.{fmt}"
        if fmt == "parquet":
            frame.write_parquet(path)
        elif fmt == "csv":
            frame.write_csv(path)
        else:
            frame.write_ndjson(path)
    from_files, _ = read(tmp_path)
    from_frames, _ = read(**frames)
    assert from_files.searches.equals(from_frames.searches)
    assert from_files.results.equals(from_frames.results)
    assert from_files.events.equals(from_frames.events)
    assert from_files.units is None


def test_ids_in_text_files_keep_their_leading_zeros(tmp_path):
    searches(search_id=["007", "008", "009"]).write_csv(tmp_path / "searches.csv")
    log, _ = read(tmp_path)
    assert log.searches["search_id"].to_list() == ["007", "008", "009"]


def test_a_folder_with_two_files_for_one_table_is_refused(tmp_path):
    searches().write_csv(tmp_path / "searches.csv")
    searches().write_parquet(tmp_path / "searches.parquet")
    with pytest.raises(FormatError, match="2 files for the searches table"):
        ie.online.read_log(tmp_path)


def test_a_table_given_twice_or_not_at_all(tmp_path):
    searches().write_csv(tmp_path / "searches.csv")
    with pytest.raises(OptionError, match="searches is given twice"):
        ie.online.read_log(tmp_path, searches=searches())
    with pytest.raises(SchemaError, match="needs a searches table"):
        ie.online.read_log(events=events())
    with pytest.raises(FormatError, match="does not exist"):
        ie.online.read_log(tmp_path / "nowhere")


def test_columns_map_per_table_or_for_every_table():
    renamed = searches().rename({"search_id": "qid", "user_id": "uid"})
    by_table, _ = read(
        searches=renamed, columns={"searches": {"qid": "search_id", "uid": "user_id"}}
    )
    flat, _ = read(searches=renamed, columns={"qid": "search_id"})
    assert by_table.searches.equals(flat.searches)  # 'uid' is a known spelling
    with pytest.raises(SchemaError, match="no table has such a column"):
        ie.online.read_log(searches=searches(), columns={"nope": "search_id"})
    with pytest.raises(SchemaError, match="names tables"):
        ie.online.read_log(searches=searches(), columns={"serp": {"a": "b"}})


def test_a_missing_column_names_the_table_the_column_and_the_fix():
    frame = searches().rename({"ts": "when"})
    with pytest.raises(
        SchemaError,
        match=r"(?s)searches is missing column 'ts'.*columns={'when': 'ts'}",
    ):
        ie.online.read_log(searches=frame)
    with pytest.raises(SchemaError, match="no variant column"):
        ie.online.read_log(searches=searches().drop("variant"))
    with pytest.raises(SchemaError, match="no n_results column"):
        ie.online.read_log(searches=searches().drop("n_results"))


def test_the_defaults_of_optional_columns():
    log, _ = read(searches=searches().drop("n_results"), results=results())
    row = log.searches.row(0, named=True)
    assert (row["unit_id"], row["experiment_id"], row["page"]) == ("u1", "default", 1)
    assert log.searches["n_results"].to_list() == [2, 2, 0]  # counted from results
    assert log.searches.schema["n_results"] == pl.Int32


def test_the_variant_can_come_from_the_units_table():
    units = pl.DataFrame(
        {"unit_id": ["u1", "u2"], "variant": ["A", "B"], "pre_clicks": [3, 1]}
    )
    log, _ = read(searches=searches().drop("variant"), units=units)
    assert log.searches["variant"].to_list() == ["A", "A", "B"]
    assert log.units.schema["pre_clicks"] == pl.Float64


# --- times ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "unit"),
    [
        (
            ["2024-05-01T10:00:00Z", "2024-05-01T12:00:00+02:00", "2024-05-01 10:00"],
            None,
        ),
        ([1714557600, 1714557600, 1714557600], None),  # seconds
        ([1714557600000, 1714557600000, 1714557600000], None),  # milliseconds
        ([1714557600.0, 1714557600.0, 1714557600.0], None),
        ([1714557600000000, 1714557600000000, 1714557600000000], "us"),
    ],
)
def test_times_become_naive_utc(values, unit):
    log, _ = read(searches=searches(ts=values), epoch_unit=unit)
    assert log.searches["ts"].to_list() == [dt.datetime(2024, 5, 1, 10)] * 3
    assert log.searches.schema["ts"] == pl.Datetime("us")


def test_zoned_datetimes_are_converted_to_utc():
    zoned = pl.Series([dt.datetime(2024, 5, 1, 12)] * 3).dt.replace_time_zone(
        "Europe/Berlin"
    )
    log, _ = read(searches=searches(ts=zoned))
    assert log.searches["ts"].to_list() == [dt.datetime(2024, 5, 1, 10)] * 3


def test_times_that_are_not_times_are_dropped_and_counted():
    log, message = read(searches=searches(ts=["yesterday", T + "05:00", None]))
    assert log.searches["search_id"].to_list() == ["s2"]
    assert "2 rows with a time (ts) missing, not a time" in message


def test_a_negative_epoch_is_not_a_time():
    log, message = read(searches=searches(ts=[-5, 1714557600, 1714557600]))
    assert log.searches["search_id"].to_list() == ["s2", "s3"]
    assert "1 row with a time (ts) missing, not a time, or a negative epoch" in message
    assert "ts=-5)" in message


# --- queries --------------------------------------------------------------------------------


def test_queries_are_normalised():
    frame = pl.DataFrame(
        {"q": ["  Red\tSHOES ", "Straße", "ﬁne\u00a0print", "ΣΑΣ", None]}
    )
    got = frame.select(normalize_query(pl.col("q")))["q"].to_list()
    assert got == ["red shoes", "strasse", "fine print", "σασ", None]


@given(
    st.lists(
        st.text(st.characters(max_codepoint=0x2FFFF, exclude_categories=("Cs", "Cn"))),
        min_size=1,
        max_size=5,
    )
)
def test_normalisation_equals_python(texts):
    expected = [
        " ".join(unicodedata.normalize("NFKC", t).casefold().split()) for t in texts
    ]
    got = pl.DataFrame({"q": texts}).select(normalize_query(pl.col("q")))["q"]
    assert got.to_list() == expected
    # the reader's path: ASCII rows apart, the others by the expression
    assert _normalize_series(pl.Series(texts, dtype=pl.String)).to_list() == expected


@given(st.lists(st.text(st.characters(max_codepoint=0x7F)), min_size=1, max_size=5))
def test_ascii_normalisation_equals_python(texts):
    expected = [" ".join(t.casefold().split()) for t in texts]
    assert _normalize_series(pl.Series(texts, dtype=pl.String)).to_list() == expected


# --- sessions -------------------------------------------------------------------------------


def test_a_session_ends_after_the_inactivity_gap():
    frame = searches(
        user_id=["u1"] * 3,
        variant=["A"] * 3,
        ts=[T + "00:00", T + "29:00", "2024-05-01T11:00:01"],
    )
    log, _ = read(searches=frame)
    assert log.searches["session_id"].to_list() == ["u1/1", "u1/1", "u1/2"]
    shorter, _ = read(searches=frame, session_gap="10m")
    assert shorter.searches["session_id"].to_list() == ["u1/1", "u1/2", "u1/3"]
    longer, _ = read(searches=frame, session_gap=dt.timedelta(hours=2))
    assert longer.searches["session_id"].n_unique() == 1
    with pytest.raises(OptionError, match="session_gap"):
        ie.online.read_log(searches=frame, session_gap="soon")


def test_events_keep_a_session_alive():
    # searches 40 minutes apart, a click 20 minutes after the first: one session
    frame = searches(
        user_id=["u1"] * 3,
        variant=["A"] * 3,
        ts=[T + "00:00", T + "40:00", T + "41:00"],
    )
    clicks = events(ts=[T + "20:00", T + "40:30"], search_id=["s1", "s2"])
    log, _ = read(searches=frame, results=results(), events=clicks)
    assert log.searches["session_id"].n_unique() == 1
    alone, _ = read(searches=frame)
    assert alone.searches["session_id"].to_list() == ["u1/1", "u1/2", "u1/2"]


def test_given_sessions_are_kept_and_are_per_user():
    frame = searches(session_id=["x", "x", "x"])
    log, _ = read(searches=frame)
    assert log.searches["session_id"].to_list() == ["x", "x", "x"]
    assert not log.sessions_derived
    # u1's "x" and u2's "x" are two sessions
    assert ie.online.metrics(log, "QueriesPerSession")["value"].to_list() == [2.0, 1.0]


def test_a_partly_missing_session_id_is_a_bad_row():
    log, message = read(searches=searches(session_id=["x", None, "y"]))
    assert problems(log) == {
        ("searches", "with no session_id (while others have one)"): 1
    }


# --- bad input ------------------------------------------------------------------------------


def test_null_or_repeated_search_ids_are_errors():
    with pytest.raises(DataError, match="1 null value in column 'search_id'"):
        ie.online.read_log(searches=searches(search_id=["s1", None, "s3"]))
    with pytest.raises(DataError, match="1 repeated search_id value"):
        ie.online.read_log(searches=searches(search_id=["s1", "s1", "s3"]))


def test_bad_search_rows_are_dropped_and_counted_in_one_warning():
    frame = searches(
        user_id=["u1", None, "u2"],
        variant=["A", "A", None],
        page=[0, 1, 1],
        n_results=[2, -1, 0],
    )
    with pytest.raises(DataError, match="no usable searches left"):
        read(searches=frame)
    frame = pl.concat(
        [frame, searches(search_id=["s4", "s5", "s6"], page=[1, 1, 1])],
        how="vertical_relaxed",
    )
    log, message = read(searches=frame)
    assert log.searches["search_id"].to_list() == ["s4", "s5", "s6"]
    assert problems(log) == {
        ("searches", "with no user_id"): 1,
        ("searches", "with no variant"): 1,
        ("searches", "with a page missing or below 1"): 1,
    }
    assert message.count("\n  - ") == 3
    assert "invalid='error'" in message


def test_invalid_error_raises_instead_listing_every_problem():
    frame = searches(user_id=["u1", None, "u2"], variant=["A", "A", None])
    with pytest.raises(DataError, match=r"(?s)with no user_id.*with no variant"):
        ie.online.read_log(searches=frame, invalid="error")


def test_bad_result_rows():
    rows = pl.DataFrame(
        {
            "search_id": ["s1", "s1", "s1", "s3", "s9", "s2", "s2", None],
            "position": [1, 2, 2, 1, 1, 0, 1, 1],
            "doc_id": ["a", "z", "b", "c", "d", "e", "f", "g"],
        }
    )
    log, message = read(searches=searches(), results=rows)
    assert problems(log) == {
        ("results", "with no search_id or position"): 1,
        ("results", "with a position below 1"): 1,
        ("results", "pointing at unknown searches"): 1,
        ("results", "of searches with n_results = 0"): 1,
        ("results", "repeating a (search_id, position) slot"): 1,
    }
    # of the two rows at s1's position 2, the smallest doc_id is kept
    assert log.results.sort("search_id", "position").rows() == [
        ("s1", 1, "a"),
        ("s1", 2, "b"),
        ("s2", 1, "f"),
    ]
    assert "dropped, the smallest doc_id kept" in message
    examples = {i.problem: i.example for i in log.issues}
    assert examples["repeating a (search_id, position) slot"].startswith(
        "search_id='s1', position=2, doc_id="
    )


def test_bad_event_rows():
    rows = pl.DataFrame(
        {
            "event_id": ["e1", "e1", "e2", "e3", "e4", "e5", "e6", "e7"],
            "search_id": ["s1", "s1", "s9", "s1", "s2", None, "s1", "s1"],
            "user_id": ["u1", "u1", "u1", "u1", "u1", None, None, "u1"],
            "ts": [
                T + "00:30",
                T + "00:20",
                T + "00:30",
                T + "00:40",
                T + "04:00",
                T + "00:50",
                "soon",
                T + "00:45",
            ],
            "event_type": [
                "click",
                "click",
                "click",
                "click",
                "click",
                "view",
                "click",
                None,
            ],
            "position": [1, 1, 1, 3, 1, None, 1, None],
        }
    )
    log, message = read(searches=searches(), results=results(), events=rows)
    assert problems(log) == {
        ("events", "with a time (ts) missing, not a time, or a negative epoch"): 1,
        ("events", "with no event_type"): 1,
        ("events", "pointing at unknown searches"): 1,
        ("events", "with no user_id (and no search to take it from)"): 1,
        ("events", "before their search was served"): 1,
        ("events", "clicking a position the search did not display"): 1,
        ("events", "repeating an event_id"): 1,
    }
    # the earlier of the two e1 rows is kept
    assert log.events.rows() == [
        ("e1", "s1", "u1", dt.datetime(2024, 5, 1, 10, 0, 20), "click", 1)
    ]
    assert "dropped, the earliest kept" in message


def test_a_negative_dwell_is_left_null_and_counted():
    log, message = read(
        searches=searches(), results=results(), events=events(dwell_ms=[-5, 40_000])
    )
    assert log.events["dwell_ms"].to_list() == [None, 40_000]
    assert "1 row with a negative dwell_ms, left null" in message


def test_rows_of_dropped_searches_go_with_them():
    frame = searches(variant=["A", None, "B"])
    log, message = read(searches=frame, results=results(), events=events())
    assert problems(log) == {
        ("searches", "with no variant"): 1,
        ("results", "of searches dropped above"): 2,
        ("events", "of searches dropped above"): 1,
    }


def test_a_click_naming_its_document_gets_its_position():
    clicks = events(position=[None, None], doc_id=["b", "zz"])
    log, message = read(searches=searches(), results=results(), events=clicks)
    assert log.events["position"].to_list() == [2, None]
    assert message is None


def test_a_publication_time_that_is_not_a_time_is_left_null():
    rows = results(published_at=["2024-01-01", "soon", None, "2024-02-01T00:00:00Z"])
    log, message = read(searches=searches(), results=rows)
    assert log.results["published_at"].null_count() == 2
    assert "1 row with a published_at that is not a time, left null" in message


def test_a_unit_in_two_variants_is_an_error_naming_it():
    frame = searches(variant=["A", "B", "B"])
    with pytest.raises(
        DataError,
        match=r"1 unit is seen in more than one variant: 'u1' in \['A', 'B'\]",
    ):
        ie.online.read_log(searches=frame)
    log, message = read(searches=frame, results=results(), contaminated="drop")
    assert log.searches["search_id"].to_list() == ["s3"]
    assert ("results", "of searches dropped above") in problems(log)
    assert "contaminated='drop'" in message


def test_the_units_table_can_contradict_the_searches():
    units = pl.DataFrame({"unit_id": ["u1", "u2"], "variant": ["B", "B"]})
    with pytest.raises(DataError, match="'u1' in"):
        ie.online.read_log(searches=searches(), units=units)


def test_units_need_one_row_each():
    units = pl.DataFrame({"unit_id": ["u1", "u1"], "variant": ["A", "A"]})
    with pytest.raises(DataError, match="1 repeated unit_id value"):
        ie.online.read_log(searches=searches(), units=units)


def test_the_issues_frame():
    log, _ = read(searches=searches(variant=["A", None, "B"]))
    assert log.issues_frame().rows() == [
        ("searches", "with no variant", 1, "dropped", "search_id='s2', unit_id='u1'")
    ]
    assert "issues=1" in repr(log)


def test_options_are_checked():
    with pytest.raises(OptionError, match="invalid='skip'"):
        ie.online.read_log(searches=searches(), invalid="skip")
    with pytest.raises(OptionError, match="contaminated='keep'"):
        ie.online.read_log(searches=searches(), contaminated="keep")
    with pytest.raises(SchemaError, match="must be a frame"):
        ie.online.read_log(searches=[1, 2])


@pytest.mark.parametrize("columns", [["user"], ["user", "session"]])
def test_exact_key_takes_the_ranks_when_the_hash_collides(monkeypatch, columns):
    """A first hash that joins distinct values is caught by the second one."""
    real = pl.Expr.hash

    def colliding(self, seed=0, *args, **kwargs):
        # seed 0 (the key) maps every value to one hash; seed 101 (the check) is real
        return pl.lit(0, pl.UInt64) if seed == 0 else real(self, seed, *args, **kwargs)

    monkeypatch.setattr(pl.Expr, "hash", colliding)
    frame = pl.DataFrame({"user": ["u1", "u2", "u1", "u3"], "session": ["1"] * 4})
    key = exact_key(frame.select(columns), seed=0)
    assert key.to_list() == [0, 1, 0, 2]


def test_read_part_reads_each_part_as_read_log_reads_the_whole():
    """Two parts (users u1, and u2 with u3) give the whole log's issues and sums."""
    from ireval_df.online.log import ROW_NUMBER, Whole, read_part

    log = ie.online.example_log()
    searches = log.searches.select(
        "search_id", "user_id", "ts", "variant", "query", "n_results"
    )
    searches = pl.concat(
        [searches, searches.head(1).with_columns(search_id=pl.lit("s9"), user_id=None)]
    )
    assert log.events is not None
    events = pl.concat(
        [log.events, log.events.tail(1).with_columns(search_id=pl.lit("nope"))]
    )
    tables = {"searches": searches, "results": log.results, "events": events}
    with pytest.warns(LogWarning):
        whole = ie.online.read_log(**tables)
    numbered = {t: f.with_row_index(ROW_NUMBER) for t, f in tables.items()}
    first = {"u1"}
    mine = numbered["searches"].filter(pl.col("user_id").is_in(first))
    ids = mine["search_id"].implode()
    part_a = {
        "searches": mine,
        "results": numbered["results"].filter(pl.col("search_id").is_in(ids)),
        "events": numbered["events"].filter(pl.col("search_id").is_in(ids)),
    }
    part_b = {
        t: f.join(part_a[t].select(ROW_NUMBER), on=ROW_NUMBER, how="anti")
        for t, f in numbered.items()
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a part never warns: its caller does
        logs = [read_part(p, whole=Whole())[0] for p in (part_a, part_b)]
    summed: dict[tuple[str, str], int] = {}
    for part in logs:
        for issue in part.issues:
            key = (issue.table, issue.problem)
            summed[key] = summed.get(key, 0) + issue.rows
            assert issue.row is not None  # the example's input row
    assert summed == {(i.table, i.problem): i.rows for i in whole.issues}
    tables_out = [ie.online.unit_table(p, ["CTR", "ClicksPerSearch"]) for p in logs]
    assert (
        pl.concat(tables_out)
        .sort("unit_id")
        .equals(ie.online.unit_table(whole, ["CTR", "ClicksPerSearch"]))
    )
