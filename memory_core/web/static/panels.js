/* FALSIFY viewer: the side panels and the tooltip (React components).
 * Every piece of node text is untrusted: it is rendered only as React text children. */

import { STATE_COLOURS, cause, colourOf, keysOf } from "./model.js";
import { validity } from "./timeline.js";

const { createElement: h, useState } = React;

const Swatch = ({ colour }) => h("span", { className: "swatch", style: { backgroundColor: colour } });

export function Tooltip({ hover, place }) {
  const { node } = hover;
  const sources = Array.isArray(node.sources) ? node.sources : [];
  const facts = [["state", node.state], ["confidence", node.confidence], ["weight", node.feedback_weight], ["epoch", node.epoch]]
    .filter(([, value]) => value !== null && value !== undefined)
    .map(([name, value]) => `${name} ${typeof value === "number" ? Math.round(value * 1000) / 1000 : value}`);
  return h("div", { id: "tooltip", role: "tooltip", ref: place(hover) },
    h("div", { className: "tip-head" }, h(Swatch, { colour: colourOf(node.state) }), h("strong", null, node.key), " · ", node.type),
    h("p", { className: `tip-text${node.state === "invalidated" ? " struck" : ""}` }, node.text || ""),
    h("p", { className: "tip-facts" }, facts.join(" · ")),
    validity(node) ? h("p", { className: "tip-valid" }, `valid ${validity(node)}`) : null,
    sources.length ? h("div", { className: "tip-sources" }, "Sources:",
      h("ul", null, sources.map((s, i) => h("li", { key: i }, String(s))))) : null,
    Array.isArray(node.rivals) && node.rivals.length ?
      h("p", { className: "tip-why" }, "Disputed with: ", node.rivals.map(String).join(", ")) : null,
    node.why ? h("p", { className: "tip-why" }, "Why: ", String(node.why)) : null);
}

export function Scoreboard({ board, error, asOf = "", onAsOf }) {
  const side = (name, part = {}, mark, cls) => h("div", { className: `side ${cls}` },
    h("h3", null, name, " ", mark ? h("span", { className: "mark" }, mark) : null),
    h("p", { className: "answer" }, part.answer || "—"),
    keysOf(part.nodes).length ? h("p", { className: "used" }, `from ${keysOf(part.nodes).join(", ")}`) : null);
  const marks = board?.scoreboard ?? {};
  return h("section", { id: "scoreboard", "aria-live": "polite" },
    h("h2", { id: "scoreboard-caption" }, "AI revised, not forgot"),
    onAsOf ? h("div", { className: "row as-of" },
      h("label", { htmlFor: "as-of" }, "as of"),
      h("input", { id: "as-of", type: "date", value: asOf, onChange: (e) => onAsOf(e.target.value) }),
      asOf ? h("button", { id: "as-of-clear", type: "button", onClick: () => onAsOf("") }, "any date") : null) : null,
    board?.as_of ? h("p", { className: "muted", id: "as-of-note" }, `FALSIFY answers from the beliefs valid on ${board.as_of}`) : null,
    error ? h("p", { className: "error" }, error) : null,
    board ? h("p", { className: "question" }, board.question) : null,
    board ? h("div", { className: "sides" },
      side("FALSIFY", board.falsify, marks.falsify_mark, "falsify"),
      side("Plain RAG", board.baseline, marks.baseline_mark, "baseline")) : null,
    board?.verdict ? h("p", { className: "verdict" }, board.verdict) : null);
}

export function ReviseForm({ busy, onRevise, onReplay, canReplay, status, statusError }) {
  const [fact, setFact] = useState("");
  const [triple, setTriple] = useState("");
  const [target, setTarget] = useState("");
  const [key, setKey] = useState("");
  const submit = (ev) => {
    ev.preventDefault();
    if (!fact.trim() || busy) return;
    const body = { fact };
    if (triple.trim()) body.triple = triple.trim();
    if (target.trim()) body.target = target.trim();
    if (key.trim()) body.key = key.trim();  // none: the server derives a readable key from the fact
    onRevise(body);
  };
  return h("form", { id: "revise-form", onSubmit: submit },
    h("label", { htmlFor: "fact" }, "New fact"),
    h("textarea", { id: "fact", rows: 3, value: fact, placeholder: "Paste a fact, e.g. Forensic audit: the March QA report was back-dated.",
      onChange: (e) => setFact(e.target.value) }),
    h("div", { className: "row" },
      h("input", { id: "triple", value: triple, placeholder: "triple S|P|O (optional)", "aria-label": "triple",
        onChange: (e) => setTriple(e.target.value) }),
      h("input", { id: "target", value: target, placeholder: "target key (optional)", "aria-label": "target",
        onChange: (e) => setTarget(e.target.value) })),
    h("div", { className: "row" },
      h("input", { id: "new-key", value: key, placeholder: "key for the new fact (optional; default: from its words)",
        "aria-label": "key for the new fact", onChange: (e) => setKey(e.target.value) })),
    h("div", { className: "row" },
      h("button", { id: "revise", type: "submit", disabled: busy || !fact.trim() }, busy ? "Revising…" : "Revise"),
      h("button", { id: "replay", type: "button", disabled: busy || !canReplay, onClick: onReplay }, "Replay last revision")),
    h("p", { id: "status", role: "status", className: statusError ? "error" : "" }, status));
}

export function NodeList({ nodes, effects, onHover }) {
  return h("ul", { id: "node-list" }, nodes.map((n) => {
    const fx = effects[n.key];
    return h("li", {
      key: n.key, tabIndex: 0, "data-key": n.key, "data-state": n.state, "data-type": n.type,
      "data-color": colourOf(n.state), "data-effect": fx ? fx.kind : "", "data-forgotten": n.__ghost ? "true" : null,
      className: `state-${n.state}${n.__ghost ? " forgotten" : ""}${fx ? ` fx-${fx.kind}` : ""}`,
      onMouseEnter: (e) => onHover(n, e.currentTarget),
      onFocus: (e) => onHover(n, e.currentTarget),
      onMouseLeave: () => onHover(null),
      onBlur: () => onHover(null),
    },
    h(Swatch, { colour: colourOf(n.state) }),
    h("span", { className: "k" }, n.key),
    h("span", { className: "t" }, `${n.type}, ${n.state}${validity(n) ? `, ${validity(n)}` : ""}`),
    h("span", { className: "txt" }, n.text || ""));
  }));
}

export function RevisionLog({ entries }) {
  const shown = entries.slice(-12).reverse();
  return h("section", { id: "log" },
    h("h2", null, "Revision log"),
    shown.length ? h("ol", null, shown.map((e, i) => h("li", { key: i },
      h("span", { className: "k" }, `#${e.epoch} ${e.key}`), ` ${e.from || ""} → ${e.to || ""} `,
      h("span", { className: "rule" }, e.rule ? `(${e.rule})` : ""),
      cause(e) ? h("div", { className: "cause" }, cause(e)) : null))) : h("p", { className: "muted" }, "No revisions yet."));
}

export function Legend() {
  return h("div", { id: "legend" },
    Object.keys(STATE_COLOURS).map((s) => h("span", { key: s, className: "item" }, h(Swatch, { colour: STATE_COLOURS[s] }), s)),
    h("span", { className: "item muted" }, "⬢ question · ● hypothesis / evidence · ■ conclusion · dashed = non-critical dependency"));
}

/* Shown when the server answers 401: it listens beyond loopback and needs its token. */
export function Denied() {
  return h("section", { id: "denied", role: "alert" },
    h("h2", null, "Access token required"),
    h("p", null, "This FALSIFY server listens beyond this machine, so every request needs its access token. ",
      "Open this address once with ?token=TOKEN added (the token the server was started with: its --token, ",
      "FALSIFY_TOKEN or FALSIFY_TOKEN_FILE), or ask whoever started it for the token."));
}

/* Offline, no judge could decide: gate 1's ranked candidates, marked on the graph; the user decides
 * per candidate. "contradicts" completes the revision (target = that key); "none of these" records
 * the fact as new evidence (record), optionally supporting or refuting a hypothesis with a weight. */
export const SUPERSEDES_NOTE = "supersedes means the fact is a newer value of the same claim; a caller's decision " +
  "cannot record that kind yet: choose contradicts to retire the old claim, or give the fact as a triple " +
  "(S|P|O) so the structured judge can tell a newer value from a contradiction.";
export const UNRELATED_NOTE = "Every candidate is unrelated: record the fact below (none of these), and say which " +
  "hypothesis it supports or refutes, if any.";

export function Candidates({ decide, busy, onDecide, onRecord, hypotheses }) {
  const [bears, setBears] = useState("");
  const [hypothesis, setHypothesis] = useState("");
  const [weight, setWeight] = useState("0.5");
  if (!decide) return null;
  const fmt = (v, d = 3) => (typeof v === "number" ? v.toFixed(d) : "–");
  const none = h("div", { id: "none-of-these", className: "row" },
    h("button", { id: "record", type: "button", disabled: busy || (bears !== "" && !hypothesis),
      onClick: () => onRecord({ kind: bears, hypothesis, weight }) }, "none of these: record it"),
    h("select", { id: "bears", value: bears, "aria-label": "bears on", onChange: (e) => setBears(e.target.value) },
      h("option", { value: "" }, "no hypothesis"), h("option", { value: "supports" }, "supports"),
      h("option", { value: "refutes" }, "refutes")),
    bears ? h("select", { id: "hypothesis", value: hypothesis, "aria-label": "hypothesis",
      onChange: (e) => setHypothesis(e.target.value) },
      h("option", { value: "" }, "hypothesis…"),
      (hypotheses || []).map((k) => h("option", { key: k, value: k }, k))) : null,
    bears ? h("input", { id: "weight", type: "number", min: 0, max: 1, step: 0.05, value: weight,
      "aria-label": "weight", onChange: (e) => setWeight(e.target.value) }) : null);
  return h("section", { id: "candidates", "aria-live": "polite" },
    h("h2", null, "You decide"),
    h("p", { className: "muted" }, "No judge could decide offline. Gate 1 ranked these stored claims for: ",
      h("q", null, decide.fact)),
    h("ol", null, decide.candidates.map((c) => h("li", { key: c.key, "data-key": c.key, "data-marked": decide.marked[c.key] || "" },
      h("div", null, h("span", { className: "k" }, `#${c.rank ?? "–"} ${c.key}`),
        ` distance ${fmt(c.distance)}, lexical ${fmt(c.lexical, 2)}`),
      h("p", { className: "claim" }, c.claim || ""),
      h("div", { className: "row" },
        ["contradicts", "supersedes", "unrelated"].map((rel) => h("button", {
          key: rel, type: "button", className: `decide ${rel}`, "data-relation": rel,
          disabled: busy || decide.marked[c.key] === "unrelated" && rel === "unrelated",
          onClick: () => onDecide(c, rel),
        }, rel)))))),
    none,
    decide.note ? h("p", { id: "decide-note", className: "muted" }, decide.note) : null);
}
