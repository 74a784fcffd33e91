"""Hypothesis re-scoring: supersede the loser, promote the best-supported rival.

* support(H) = Σ weight of alive ``supports`` − Σ weight of alive ``refutes``.
* A hypothesis that lost a supporter in this revision and has no alive
  supporting evidence left becomes ``superseded`` (weight 0) when a rival under
  the same question still has alive support. The rival with the highest support
  (ties: higher weight, then higher prior, then key order) is *promoted*: its
  feedback weight is raised to :data:`PROMOTION_STEP` above every other
  hypothesis's (capped at 1.0; if another already sits at 1.0 it is lowered to
  0.95 so the winner stays strictly on top).
* A hypothesis with a disputed supporter is left alone (a dispute neither
  supersedes nor promotes); disputed supporters count 0 in support.
* With no supported rival nothing is promoted; the hypothesis stays alive and
  its weight is multiplied by :data:`NO_RIVAL_FACTOR`. A hypothesis superseded
  earlier (no alive supporter) needed such a rival too: it is alive again with its
  weight from before, the promotions made over it are undone, and it is weakened
  in the same way, so the final state does not depend on which support died first.
"""

from __future__ import annotations

from memory_core.core.beliefs import ALIVE, SUPERSEDED, BeliefView
from memory_core.core.vocabulary import DISPUTED, Rule, SUPPORTS
from memory_core.core.plan import Plan, record

PROMOTION_STEP = 0.25
NO_RIVAL_FACTOR = 0.5


def rescore(view: BeliefView, plan: Plan, newly_dead: list[str]) -> list[str]:
    """Returns the promoted hypotheses' keys."""
    dead = set(newly_dead)
    losers: dict[str, list[str]] = {}
    for key in newly_dead:
        for edge in view.out_edges(key, SUPPORTS):
            hyp = view.nodes.get(edge.dst)
            if (
                hyp is not None
                and hyp.alive
                and not view.alive_supporters(edge.dst)
                and not any(view.state(e.src) == DISPUTED for e in view.in_edges(edge.dst, SUPPORTS))
            ):
                # (a hypothesis with a disputed supporter is left alone: a dispute neither supersedes nor promotes)
                losers.setdefault(edge.dst, []).append(key)
    promoted: list[str] = []
    for question in sorted({view.nodes[h].question or "" for h in losers}):
        mine = sorted(h for h in losers if (view.nodes[h].question or "") == question)
        rivals = [
            h
            for h in view.hypotheses_of(view.nodes[mine[0]].question)
            if h not in losers and view.nodes[h].alive and view.alive_supporters(h)
        ]
        if not rivals:
            back = unsupersede(view, plan, question, mine)
            for h in mine + back:
                node = view.nodes[h]
                record(
                    view,
                    plan,
                    h,
                    Rule.WEAKENED_NO_RIVAL,
                    sorted(set(losers[h] if h in losers else [k for m in mine for k in losers[m]]) & dead),
                    "lost its support; no rival has alive support"
                    if h in losers
                    else f"no alive supporting evidence, and no rival has alive support ({', '.join(mine)} lost it)",
                    weight=round(node.weight * NO_RIVAL_FACTOR, 6),
                )
            continue
        winner = min(
            rivals, key=lambda h: (-view.support(h), -view.nodes[h].weight, -(view.nodes[h].prior or 0.0), h)
        )
        for h in mine:
            record(
                view,
                plan,
                h,
                Rule.SUPPORT_LOST,
                sorted(set(losers[h]) & dead) + [winner],
                f"no alive supporting evidence; rival {winner} still supported",
                state=SUPERSEDED,
                weight=0.0,
            )
        promote(view, plan, winner, question, mine)
        promoted.append(winner)
    return promoted


def unsupersede(view: BeliefView, plan: Plan, question: str, losers: list[str]) -> list[str]:
    """The last rival with alive support under ``question`` lost it (``losers``): a hypothesis
    superseded for lack of support (none alive now) has no supported rival left, so it is alive
    again with its weight from before (the caller then weakens it as a loser), and each rival
    promoted over it gets its weight from before that promotion back, as when its support
    returns. Returns the hypotheses brought back."""
    memory = plan.meta.memory
    back = [
        h
        for h in view.hypotheses_of(view.nodes[losers[0]].question)
        if h not in losers and view.nodes[h].state == SUPERSEDED and not view.alive_supporters(h)
    ]
    for h in back:
        weight = memory.before_death.get(h, {}).get("weight") if memory is not None else None
        record(
            view,
            plan,
            h,
            Rule.REINSTATED,
            losers,
            f"superseded while a rival had alive support; {', '.join(losers)} lost the last of it",
            state=ALIVE,
            weight=weight if weight is not None else (view.nodes[h].prior or 0.5),
        )
        undo_promotions_over(view, plan, h, memory.promotions if memory is not None else {})
    return back


def undo_promotions_over(view: BeliefView, plan: Plan, h: str, promotions: dict) -> None:
    """``h`` holds again: each rival promoted over it (``promotions``: the log's memory, hypothesis
    -> [(rival, its weight before)]) that still has the promoted weight gets its weight from
    before back (once per revision)."""
    for rival, before in promotions.get(h, []):
        r = view.nodes.get(rival)
        if r is not None and r.alive and r.weight > before and rival not in plan.keys_with(Rule.DEMOTED):
            record(
                view,
                plan,
                rival,
                Rule.DEMOTED,
                [h],
                f"promoted only because {h} had lost its support",
                weight=before,
            )


def promote(view: BeliefView, plan: Plan, winner: str, question: str, losers: list[str]) -> None:
    others = [h for h in view.hypotheses_of(view.nodes[winner].question) if h != winner]
    top = max((view.nodes[h].weight for h in others), default=0.0)
    for h in others:
        if view.nodes[h].weight >= 1.0:
            record(
                view,
                plan,
                h,
                Rule.REBALANCED,
                [winner],
                "lowered so the promoted rival stays on top",
                weight=0.95,
            )
    top = min(top, 0.95) if top >= 1.0 else top
    new = min(1.0, round(top + PROMOTION_STEP, 6))
    support = view.support(winner)
    record(
        view,
        plan,
        winner,
        Rule.PROMOTED,
        losers,
        f"best-supported rival (support {support:.2f})",
        weight=max(new, view.nodes[winner].weight),
        # a change even when its weight already stood 0.25 above every rival's (the one it
        # leads over lost its weight): it carries the revision's epoch, as explain reports it
        state=view.nodes[winner].state,
    )
