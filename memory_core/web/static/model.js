/* FALSIFY viewer: pure helpers over the API's data (no DOM, no React). */

export const STATE_COLOURS = { alive: "#2e9d4f", refuted: "#d62828", invalidated: "#9e9e9e", superseded: "#d9a441",
  disputed: "#7b4fd6" };  // disputed: the tooltip's "Why" names the rival
export const EDGE_COLOURS = { depends_on: "#4a6fa5", supports: "#2e9d4f", refutes: "#d62828", supersedes: "#d9a441", part_of: "#c5c9d0",
  disputes: "#7b4fd6" };
export const FLASH_MS = 2500;   // how long revision highlights last
export const VANISH_MS = 1500;  // how long a forgotten node stays, struck through, before it goes
export const REPLAY_BEFORE_MS = 900;

export const colourOf = (state) => STATE_COLOURS[state] ?? "#888888";

export const keyOf = (item) => (item == null ? null : typeof item === "string" ? item : item.key ?? null);

export const keysOf = (list) => (Array.isArray(list) ? list : []).map(keyOf).filter(Boolean);

/* Which transient highlight each key gets from a revise() result. */
export function effectsOf(result) {
  const fx = {};
  const start = performance.now();
  const mark = (keys, kind) => keys.forEach((k) => { fx[k] = { kind, start }; });
  mark(keysOf([result.new_evidence]), "new");
  mark(keysOf(result.weakened), "weaken");
  mark(keysOf(result.superseded), "dim");
  mark(keysOf(result.invalidated), "strike");
  mark(keysOf(result.forgotten), "strike");
  mark(keysOf(result.refuted), "flash");
  mark(keysOf(result.promoted), "glow");
  return fx;
}

/* The status line after a revision: every list of keys the result has (a dispute, a
 * reinstatement, a restored or demoted node changed the graph too: never "nothing changed").
 * A node not reinstated because its refuter went into dispute is disputed, not kept dead: it is
 * said once, among the disputed. */
export function summary(result) {
  const disputed = new Set(keysOf(result.disputed));
  const parts = [["refuted", "refuted"], ["superseded", "superseded"], ["promoted", "promoted"],
    ["invalidated", "invalidated"], ["forgotten", "forgot"], ["weakened", "weakened"],
    ["disputed", "disputed"], ["reinstated", "reinstated"], ["restored", "restored"],
    ["demoted", "undid the promotion of"], ["not_reinstated", "kept dead"]]
    .map(([field, verb]) => [verb, keysOf(result[field]).filter((k) => field !== "not_reinstated" || !disputed.has(k))])
    .filter(([, keys]) => keys.length)
    .map(([verb, keys]) => `${verb} ${keys.join(", ")}`);
  const took = typeof result.elapsed_ms === "number" ? ` in ${Math.round(result.elapsed_ms)} ms` : "";
  return `Revised${took}${parts.length ? `: ${parts.join("; ")}` : ": nothing changed"}.`;
}

export function cause(entry) {
  const c = Array.isArray(entry.cause) ? entry.cause.join(", ") : entry.cause;
  return [c ? `because ${c}` : "", entry.detail || ""].filter(Boolean).join(": ");
}

/* Layout fields the force simulation keeps on a node object between snapshots (the graph
 * library's own bookkeeping fields start with "__"). */
const LAYOUT = new Set(["x", "y", "vx", "vy", "fx", "fy", "index"]);

/* Stable node objects (the layout keeps its positions) for a snapshot: exactly its nodes,
 * plus ghosts (forgotten nodes on their way out, struck through until their animation ends).
 * A node object takes the snapshot's fields as they are (a field the snapshot lacks, such as
 * a valid_to an earlier epoch did not have yet, is dropped). */
export function toGraph(snapshot, cache, ghosts = []) {
  const nodes = [];
  const present = new Set();
  const keep = (n, ghost) => {
    present.add(n.key);
    const obj = cache[n.key] ?? (cache[n.key] = {});
    for (const field of Object.keys(obj)) {
      if (!(field in n) && !LAYOUT.has(field) && !field.startsWith("__")) delete obj[field];  // "__": the library's
    }
    Object.assign(obj, n, { __ghost: ghost });
    nodes.push(obj);
  };
  for (const n of snapshot?.nodes ?? []) keep(n, false);
  for (const n of ghosts) if (!present.has(n.key)) keep(n, true);
  const linked = new Set();
  const links = (snapshot?.edges ?? [])
    .filter((e) => present.has(e.from) && present.has(e.to))
    .map((e) => {
      linked.add(`${e.from}\u0000${e.to}`);
      return { ...e, source: e.from, target: e.to };
    });
  /* Tie each node to its question (faint, unlabelled) so an investigation stays together. */
  for (const n of nodes) {
    if (n.question && n.question !== n.key && present.has(n.question) && !linked.has(`${n.key}\u0000${n.question}`)) {
      links.push({ type: "part_of", from: n.key, to: n.question, source: n.key, target: n.question, implicit: true });
    }
  }
  return { nodes, links };
}
