/* FALSIFY viewer: the revision log as a timeline of epochs. Stepping or scrubbing to an
 * epoch shows the graph as it stood after it (GET /api/graph?epoch=N, rebuilt by the
 * server from the log); each step is animated as the revision it undoes or replays.
 * Every piece of log text is untrusted: it is rendered only as React text children. */

import { keysOf } from "./model.js";

const { createElement: h } = React;

/* What changed from one snapshot to another, as a revise() result (for the step animation)
 * and the highlight of every key: gone nodes are struck and vanish, new ones appear,
 * a changed state flashes in its new colour. */
export function stepChange(before, after) {
  const old = Object.fromEntries((before?.nodes ?? []).map((n) => [n.key, n]));
  const now = Object.fromEntries((after?.nodes ?? []).map((n) => [n.key, n]));
  const start = performance.now();
  const result = { refuted: [], superseded: [], invalidated: [], promoted: [], forgotten: [], weakened: [], disputed: [] };
  const fx = {};
  for (const key of Object.keys(old)) {
    if (!(key in now)) {
      result.forgotten.push(key);
      fx[key] = { kind: "strike", start };
    }
  }
  for (const [key, node] of Object.entries(now)) {
    const was = old[key];
    if (!was) {
      fx[key] = { kind: "new", start };
      continue;
    }
    if (was.state === node.state) continue;
    const kind = { refuted: "flash", invalidated: "strike", superseded: "dim", alive: "glow", disputed: "flash" }[node.state] ?? "flash";
    fx[key] = { kind, start };
    (result[node.state === "alive" ? "promoted" : node.state] ?? result.refuted).push(key);
  }
  return { result, fx };
}

/* An evidence node's validity in the world, when it has one, half-open as the CLI writes it:
   "[2010-01-01, 2016-12-31)" (true on its first day, no longer on its last), "[2010-01-01, …)". */
export function validity(node) {
  const from = node?.valid_from;
  const to = node?.valid_to;
  if (from == null && to == null) return "";
  return `[${from ?? "…"}, ${to ?? "…"})`;
}

const CHANGE_WORDS = { undo: "reverted", promoted: "promoted", contradicted: "refuted" };
const round = (v) => (typeof v === "number" ? Math.round(v * 1000) / 1000 : v ?? "–");

/* One change in words: a state move ("K alive→invalidated"), else what moved without one
 * ("H2 promoted, weight 0.5→0.75"; "E40 valid_to 2018-03-01→2014-01-01"). */
export function changeText(c) {
  if (c.from !== c.to) return `${c.key} ${c.from ?? "–"}→${c.to ?? "–"}`;
  const bits = [];
  if (c.rule === "promoted" || c.rule === "demoted") bits.push(c.rule);
  if (c.weight) bits.push(`weight ${round(c.weight[0])}→${round(c.weight[1])}`);
  if (c.confidence) bits.push(`confidence ${round(c.confidence[0])}→${round(c.confidence[1])}`);
  if (c.valid_to) bits.push(`valid to ${c.valid_to[0] ?? "…"}→${c.valid_to[1] ?? "…"}`);
  return `${c.key} ${bits.length ? bits.join(", ") : (CHANGE_WORDS[c.rule] ?? c.rule ?? "changed")}`;
}

/* What an epoch did: what it added, changed (every change, state or not), forgot, restored, removed. */
export function changedOf(row) {
  const parts = [];
  const added = keysOf(row.added);
  if (added.length) parts.push(`added ${added.join(", ")}`);
  const changed = (row.changes ?? []).filter((c) => c.key).map(changeText);
  if (changed.length) parts.push(`changed ${changed.join(", ")}`);
  for (const [field, word] of [["forgotten", "forgot"], ["restored", "restored"], ["removed", "removed"]]) {
    const keys = keysOf(row[field]);
    if (keys.length) parts.push(`${word} ${keys.join(", ")}`);
  }
  return parts.join("; ") || (CHANGE_WORDS[row.kind] ?? "nothing changed");
}

function title(row) {
  if (row.kind === "undo") return `undo of epoch ${row.undoes}${row.undoes_kind ? ` (${row.undoes_kind})` : ""}`;
  if (row.kind === "load") return `load${row.question ? ` of ${row.question}` : ""}`;
  return row.kind || "change";
}

export function Timeline({ rows, current, shown, onShow, busy }) {
  const at = shown ?? current;
  const step = (delta) => onShow(Math.max(0, Math.min(current, at + delta)));
  const listed = [{ epoch: 0, kind: "start", changes: [] }, ...rows].slice().reverse();
  return h("section", { id: "timeline", "data-shown": String(at), "data-current": String(current) },
    h("h2", null, "Timeline"),
    h("div", { className: "row controls" },
      h("button", { id: "epoch-back", type: "button", disabled: busy || at <= 0, onClick: () => step(-1),
        "aria-label": "one epoch back" }, "◀"),
      h("input", { id: "epoch-scrub", type: "range", min: 0, max: current, step: 1, value: at, disabled: busy,
        "aria-label": "epoch", onChange: (e) => onShow(Number(e.target.value)) }),
      h("button", { id: "epoch-forward", type: "button", disabled: busy || at >= current, onClick: () => step(1),
        "aria-label": "one epoch forward" }, "▶"),
      h("button", { id: "epoch-now", type: "button", disabled: busy || shown == null, onClick: () => onShow(null) }, "Now")),
    h("p", { id: "epoch-shown", className: shown == null ? "muted" : "history" },
      shown == null ? `Now: epoch ${current} (live)` : `Showing the graph after epoch ${shown} of ${current}`),
    h("ol", { id: "epochs" }, listed.map((row) => h("li", {
      key: row.epoch, "data-epoch": row.epoch, tabIndex: 0,
      className: `${row.epoch === at ? "active" : ""}${row.undone_at ? " undone" : ""}`,
      onClick: () => onShow(row.epoch === current ? null : row.epoch),
      onKeyDown: (e) => { if (e.key === "Enter") onShow(row.epoch === current ? null : row.epoch); },
    },
    h("span", { className: "k" }, `#${row.epoch}`), " ",
    row.kind === "start" ? "empty root" : title(row),
    row.judge ? h("span", { className: "rule" }, ` (judge ${row.judge})`) : null,
    row.undone_at ? h("span", { className: "rule" }, ` (undone at ${row.undone_at})`) : null,
    row.fact ? h("div", { className: "fact" }, row.fact) : null,
    row.kind === "start" ? null : h("div", { className: "cause" }, changedOf(row))))));
}
