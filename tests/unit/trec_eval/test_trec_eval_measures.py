"""Measure selection, nicknames and parameter syntax (SPEC.md sections 3.1 and 5)."""

from __future__ import annotations

import pytest

from ireval_df.trec_eval._measures import (
    MEASURES,
    NICKNAMES,
    Context,
    ParamError,
    Selection,
    expand,
    parse_double,
    parse_long,
)


def _labels(*marks: str, ctx: Context | None = None) -> list[str]:
    selection = Selection.empty()
    for mark in marks:
        assert selection.mark(mark) is None
    return [o.label for o in expand(selection, ctx or Context())]


def _columns(*marks: str, ctx: Context | None = None) -> list[str]:
    selection = Selection.empty()
    for mark in marks:
        assert selection.mark(mark) is None
    return [o.column for o in expand(selection, ctx or Context())]


def test_print_order_is_the_table_order_not_the_m_order() -> None:
    assert _labels("P.5", "map", "num_ret") == ["num_ret", "map", "P_5"]


def test_integer_cutoffs_are_sorted_truncated_and_checked() -> None:
    assert _labels("ndcg_cut.10,20,23.4") == [
        "ndcg_cut_10",
        "ndcg_cut_20",
        "ndcg_cut_23",
    ]
    assert _labels("P.5,7,3") == ["P_3", "P_5", "P_7"]
    with pytest.raises(ParamError, match="Negative cutoff"):
        _labels("P.5,0")
    with pytest.raises(ParamError, match="duplicate cutoffs"):
        _labels("P.5,5.5")


def test_float_cutoffs_are_sorted_and_printed_with_two_decimals() -> None:
    labels = _labels("iprec_at_recall..10,.20,.25,.75,.50")
    assert labels == [
        f"iprec_at_recall_{x}" for x in ("0.10", "0.20", "0.25", "0.50", "0.75")
    ]
    assert _labels("Rprec_mult.5.0,0.2,0.35") == [
        "Rprec_mult_0.20",
        "Rprec_mult_0.35",
        "Rprec_mult_5.00",
    ]
    with pytest.raises(ParamError, match="duplicate cutoffs"):
        _labels("Rprec_mult.0.5,.50")


def test_parameter_strings_name_the_measure_as_typed() -> None:
    labels = _labels(
        "utility.2,-1,0,0",
        "11pt_avg..25,.5,.75",
        "ndcg.1=3,2=9,4=4.5",
        "set_F.0.5",
        "relstring.20",
        "rbp.p=0.8",
    )
    assert labels == [
        "relstring_20",
        "utility_2,-1,0,0",
        "11pt_avg_.25,.5,.75",
        "ndcg_1=3,2=9,4=4.5",
        "set_F_0.5",
        "rbp_p=0.8",
    ]


def test_parameters_become_registry_metrics() -> None:
    columns = _columns(
        "utility.2,-1,0,0",
        "ndcg.1=3,2=9,4=4.5",
        "rbp.p=0.8,2=1,x=5",
        "set_F.0.25",
        "11pt_avg..25,.5",
        ctx=Context(rel=2, collection=10),
    )
    assert columns == [
        "Utility(collection=10,rel=2,rel_ret=2)",
        "11pt(points=[0.25,0.5],rel=2)",
        "nDCG(gains={1:3,2:9,4:4.5})",
        "SetF(beta=0.5,rel=2)",
        "RBP(gains={2:1})",  # p=0.8 is the registry default
    ]


def test_first_parameters_win_and_nicknames_take_parameters_of_their_members() -> None:
    assert _labels("P.5", "P.10") == ["P_5"]
    labels = _labels("all_trec", "relstring.20")
    assert "relstring_20" in labels
    assert "relstring" not in labels


def test_judged_only_and_compat_reach_every_metric() -> None:
    columns = _columns(
        "map", "iprec_at_recall.0.5", ctx=Context(judged_only=True, compat="9")
    )
    assert columns == ["AP(judged_only=true)", "IPrec(compat=9,judged_only=true)@0.5"]


@pytest.mark.parametrize(
    "mark",
    [
        "ndcg.1",
        "ndcg.1=2,",
        "ndcg.1==2",
        "utility.1,2,3",
        "set_F.0",
        "iprec_at_recall.1.5",
        "rbp.p=1.5",
    ],
)
def test_bad_parameters_cannot_initialise_the_measure(mark: str) -> None:
    with pytest.raises(ParamError):
        _labels(mark)


def test_nicknames() -> None:
    assert len(NICKNAMES["official"]) == 12
    all_trec = set(NICKNAMES["all_trec"])
    assert {"rbp", "rbp_resid", "unj", "relstring"} <= all_trec
    assert not {"dcg", "ideal_dcg", "yaap", "map_avgjg"} & all_trec
    selection = Selection.empty()
    selection.mark("all_trec")
    assert not {"rbp", "rbp_resid", "unj"} & selection.marked("9")
    assert set(NICKNAMES["qrels_jg"]) == {
        "runid",
        "num_q",
        "map_avgjg",
        "P_avgjg",
        "Rprec_mult_avgjg",
    }


def test_every_nickname_member_is_a_measure() -> None:
    names = {m.name for m in MEASURES}
    for members in NICKNAMES.values():
        assert set(members) <= names


def test_c_number_parsing() -> None:
    assert [parse_long(s) for s in ("23.4", "-1", "x", "+7")] == [23, -1, 0, 7]
    assert [parse_double(s) for s in (".25", "1e1x", "0x8", "")] == [
        0.25,
        10.0,
        8.0,
        0.0,
    ]
