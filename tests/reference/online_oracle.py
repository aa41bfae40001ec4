"""A naive, loop-by-loop oracle for the online metrics (docs/online.md).

Written from the definitions, not from the code: plain Python over lists of
dicts, one search, click and session at a time. It takes clean logs (the
checks of read_log are tested apart) whose actions have distinct times per
user, so that no tie rule is needed; the tie rules have their own unit tests.
"""

from __future__ import annotations

import datetime as dt
import statistics
import unicodedata
from collections import defaultdict
from typing import Any

GAP = dt.timedelta(minutes=30)


def norm(query: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", query).casefold().split())


def _seconds(delta: dt.timedelta) -> float:
    return delta / dt.timedelta(microseconds=1) / 1e6


class Log:
    """The derived facts of a clean log, computed one row at a time."""

    def __init__(
        self,
        searches: list[dict[str, Any]],
        results: list[dict[str, Any]],
        events: list[dict[str, Any]],
    ) -> None:
        self.searches = {s["search_id"]: dict(s) for s in searches}
        self.results = results
        self.events = [dict(e) for e in events]
        for s in self.searches.values():
            s["query_norm"] = norm(s["query"])
            s.setdefault("page", 1)
            s.setdefault("unit_id", s["user_id"])
        self._sessions()
        self._clicks()

    def _sessions(self) -> None:
        by_user: dict[str, list[tuple[dt.datetime, int, Any]]] = defaultdict(list)
        for s in self.searches.values():
            by_user[s["user_id"]].append((s["ts"], 0, s))
        for e in self.events:
            by_user[e["user_id"]].append((e["ts"], 1, e))
        session = 0
        for user, actions in by_user.items():
            actions.sort(key=lambda a: (a[0], a[1]))
            previous = None
            for ts, _, row in actions:
                if previous is None or ts - previous > GAP:
                    session += 1
                row["_session"] = (user, session)
                previous = ts
            for i, (_, kind, row) in enumerate(actions):
                later = [
                    a for a in actions[i + 1 :] if a[2]["_session"] == row["_session"]
                ]
                row["_next_ts"] = later[0][0] if later else None
                if kind == 0:
                    nxt = [a[2] for a in later if a[1] == 0]
                    row["_next_search"] = nxt[0] if nxt else None
                else:
                    row["_last_click"] = row["event_type"] == "click" and not any(
                        a[1] == 1 and a[2]["event_type"] == "click" for a in later
                    )

    def _clicks(self) -> None:
        self.clicks = []
        for e in self.events:
            if e["event_type"] != "click" or e.get("search_id") is None:
                continue
            if e.get("dwell_ms") is not None:
                dwell = e["dwell_ms"] / 1000.0
            elif e["_next_ts"] is not None:
                dwell = _seconds(e["_next_ts"] - e["ts"])
            else:
                dwell = None
            self.clicks.append({**e, "dwell": dwell})
        for s in self.searches.values():
            mine = [c for c in self.clicks if c["search_id"] == s["search_id"]]
            s["clicks"] = mine
            s["has_results"] = s["n_results"] > 0
            positions = [c["position"] for c in mine if c.get("position") is not None]
            s["top_click"] = min(positions) if positions else None
            s["first_click"] = min((c["ts"] for c in mine), default=None)
            attributed = [
                e for e in self.events if e.get("search_id") == s["search_id"]
            ]
            s["n_atc"] = sum(e["event_type"] == "add_to_cart" for e in attributed)
            s["n_purchase"] = sum(e["event_type"] == "purchase" for e in attributed)
            s["revenue"] = sum(
                e.get("value") or 0.0
                for e in attributed
                if e["event_type"] == "purchase"
            )
            s["abandoned"] = (
                s["has_results"]
                and not mine
                and s["n_atc"] == 0
                and s["n_purchase"] == 0
            )

    def reformulated(self, s: dict[str, Any], window: float) -> bool:
        nxt = s["_next_search"]
        if nxt is None or _seconds(nxt["ts"] - s["ts"]) > window:
            return False
        a, b = s["query_norm"], nxt["query_norm"]
        if a == b or not a or not b:
            return False
        return bool(set(a.split(" ")) & set(b.split(" ")))

    def sat(self, click: dict[str, Any], tau: float) -> bool:
        return (click["dwell"] is not None and click["dwell"] >= tau) or click[
            "_last_click"
        ]


def _ratio(num: float, den: float) -> float | None:
    return None if den == 0 else num / den


def oracle(
    searches: list[dict[str, Any]],
    results: list[dict[str, Any]],
    events: list[dict[str, Any]],
    *,
    tau: float = 30.0,
    window: float = 300.0,
    f: float = 0.5,
    cap: float = 1800.0,
    k: int = 2,
) -> dict[tuple[str, str], Any]:
    """Every metric per variant: {(variant, metric): value}; PositionCTR a dict."""
    log = Log(searches, results, events)
    out: dict[tuple[str, str], Any] = {}
    variants = sorted({s["variant"] for s in log.searches.values()})
    for v in variants:
        ss = [s for s in log.searches.values() if s["variant"] == v]
        shown = [s for s in ss if s["has_results"]]
        n_shown = len(shown)
        out[v, "CTR"] = _ratio(sum(bool(s["clicks"]) for s in shown), n_shown)
        out[v, f"CTR@{k}"] = _ratio(
            sum(s["top_click"] is not None and s["top_click"] <= k for s in shown),
            n_shown,
        )
        out[v, "ClicksPerSearch"] = _ratio(
            sum(len(s["clicks"]) for s in shown), n_shown
        )
        out[v, "ClickRR"] = _ratio(
            sum(1.0 / s["top_click"] for s in shown if s["top_click"] is not None),
            n_shown,
        )
        paul = 0.0
        for s in shown:
            for c in s["clicks"]:
                if c.get("position") is not None:
                    paul += f ** (c["position"] - 1)
        out[v, f"PaulScore(f={f})"] = _ratio(paul, n_shown)
        ttfc = [
            min(max(_seconds(s["first_click"] - s["ts"]), 0.0), cap)
            for s in ss
            if s["first_click"] is not None
        ]
        out[v, f"TimeToFirstClick(cap={cap})"] = (
            statistics.median(ttfc) if ttfc else None
        )
        out[v, f"TimeToFirstClick(cap={cap},stat=mean)"] = (
            sum(ttfc) / len(ttfc) if ttfc else None
        )
        clicks = [c for s in ss for c in s["clicks"]]
        dwells = [
            min(max(c["dwell"], 0.0), cap) for c in clicks if c["dwell"] is not None
        ]
        out[v, f"DwellTime(cap={cap})"] = _ratio(sum(dwells), len(dwells))
        out[v, f"SatClickRate(tau={tau})"] = _ratio(
            sum(log.sat(c, tau) for c in clicks), len(clicks)
        )
        out[v, "Abandonment"] = _ratio(sum(s["abandoned"] for s in shown), n_shown)
        good = bad = 0
        for s in shown:
            if not s["abandoned"]:
                continue
            reform = log.reformulated(s, window)
            answered = bool(s.get("serp_answer", True))
            good += answered and not reform
            bad += reform
        out[v, f"GoodAbandonment(window={window})"] = _ratio(good, n_shown)
        out[v, f"BadAbandonment(window={window})"] = _ratio(bad, n_shown)
        out[v, f"Reformulation(window={window})"] = _ratio(
            sum(log.reformulated(s, window) for s in ss), len(ss)
        )
        out[v, "ZeroResultRate"] = _ratio(sum(s["n_results"] == 0 for s in ss), len(ss))
        out[v, "AddToCartRate"] = _ratio(sum(s["n_atc"] > 0 for s in ss), len(ss))
        out[v, "ConversionRate"] = _ratio(sum(s["n_purchase"] > 0 for s in ss), len(ss))
        out[v, "RevenuePerSearch"] = _ratio(sum(s["revenue"] for s in ss), len(ss))
        out[v, "AOV"] = _ratio(
            sum(s["revenue"] for s in ss), sum(s["n_purchase"] for s in ss)
        )
        sessions: dict[Any, list[dict[str, Any]]] = defaultdict(list)
        for s in ss:
            sessions[s["_session"]].append(s)
        queries = sum(s["page"] == 1 for s in ss)
        out[v, "QueriesPerSession"] = _ratio(queries, len(sessions))
        success = 0
        for members in sessions.values():
            members.sort(key=lambda s: s["ts"])
            last = members[-1]
            failed = last["_next_search"] is None and (
                not last["has_results"] or last["abandoned"]
            )
            good_click = any(log.sat(c, tau) for s in members for c in s["clicks"])
            bought = any(s["n_purchase"] > 0 for s in members)
            success += (good_click or bought) and not failed
        out[v, f"SessionSuccess(tau={tau})"] = _ratio(success, len(sessions))
        ids = {s["search_id"] for s in ss}
        rows = [r for r in results if r["search_id"] in ids]
        clicked = {
            (c["search_id"], c["position"])
            for c in clicks
            if c.get("position") is not None
        }
        at_k = [r for r in rows if r["position"] <= k]
        out[v, f"ImpressionCTR@{k}"] = _ratio(
            sum((r["search_id"], r["position"]) in clicked for r in at_k), len(at_k)
        )
        curve: dict[int, float] = {}
        for p in sorted({r["position"] for r in rows}):
            here = [r for r in rows if r["position"] == p]
            curve[p] = sum((r["search_id"], p) in clicked for r in here) / len(here)
        out[v, "PositionCTR"] = curve
    return out


#: The metric spellings the oracle computes, for the default parameters above
def spellings(
    *,
    tau: float = 30.0,
    window: float = 300.0,
    f: float = 0.5,
    cap: float = 1800.0,
    k: int = 2,
) -> list[str]:
    return [
        "CTR",
        f"CTR@{k}",
        "ClicksPerSearch",
        "ClickRR",
        f"PaulScore(f={f})",
        f"TimeToFirstClick(cap={cap})",
        f"TimeToFirstClick(cap={cap},stat=mean)",
        f"DwellTime(cap={cap})",
        f"SatClickRate(tau={tau})",
        "Abandonment",
        f"GoodAbandonment(window={window})",
        f"BadAbandonment(window={window})",
        f"Reformulation(window={window})",
        "ZeroResultRate",
        "AddToCartRate",
        "ConversionRate",
        "RevenuePerSearch",
        "AOV",
        "QueriesPerSession",
        f"SessionSuccess(tau={tau})",
        f"ImpressionCTR@{k}",
        "PositionCTR",
    ]
