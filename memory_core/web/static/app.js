/* FALSIFY viewer: the belief graph, a revise box, the scoreboard and the log, kept
 * live: every change of the graph (from this page, another page, an agent through
 * MCP, the API) arrives as a server-sent event and plays its revision animation.
 * Native ES modules, no build step; React, ReactDOM and ForceGraph2D are the
 * vendored UMD globals graph.html loads first. */

import { ApiError, api, exposed, followChanges, postJson } from "./api.js";
import { EDGE_COLOURS, FLASH_MS, REPLAY_BEFORE_MS, VANISH_MS, effectsOf, keysOf, summary, toGraph } from "./model.js";
import { makePainter, nodeRadius, paintLinkLabel, paintPointerArea } from "./paint.js";
import { Candidates, Denied, Legend, NodeList, RevisionLog, ReviseForm, Scoreboard, SUPERSEDES_NOTE, Tooltip, UNRELATED_NOTE } from "./panels.js";
import { Timeline, stepChange } from "./timeline.js";

const { createElement: h, useState, useEffect, useRef, useMemo, useCallback } = React;
const MAX_FIT_ZOOM = 3;  // a small graph is not blown up to fill the canvas

function App() {
  const [snapshot, setSnapshot] = useState(null);
  const [ghosts, setGhosts] = useState([]);  // forgotten nodes on their way out (struck, then gone)
  const [effects, setEffects] = useState({});
  const [board, setBoard] = useState(null);
  const [boardError, setBoardError] = useState(null);
  const [log, setLog] = useState([]);
  const [status, setStatus] = useState("Loading…");
  const [statusError, setStatusError] = useState(false);
  const [busy, setBusy] = useState(false);
  const [last, setLast] = useState(null);
  const [hover, setHover] = useState(null);
  const [size, setSize] = useState({ width: 600, height: 400 });
  const [denied, setDenied] = useState(false);
  const [decide, setDecide] = useState(null);  // offline: the candidates no judge could decide
  const [timeline, setTimeline] = useState([]);  // one row per epoch of the revision log
  const [shownEpoch, setShownEpoch] = useState(null);  // null: the graph now (live); N: as it stood after epoch N
  const shownRef = useRef(null);
  const [asOf, setAsOf] = useState("");  // the scoreboard's as-of date (valid time); "" = no date
  const asOfRef = useRef("");
  const stepSeq = useRef(0);  // the latest step asked for (older answers of a fast scrub are dropped)

  const cache = useRef({}).current;
  const effectsRef = useRef(effects);
  effectsRef.current = effects;
  const snapshotRef = useRef(snapshot);
  snapshotRef.current = snapshot;
  const seenEpochs = useRef(new Set());  // revisions already animated (from the POST or the event stream)
  const wrapRef = useRef(null);
  const fgRef = useRef(null);
  const mouse = useRef({ x: 0, y: 0 });
  const fitted = useRef(false);
  const generation = useRef(0);
  const painted = useRef(new Set()).current;  // the keys drawn in the frame being painted
  /* The canvas is redrawn while the layout moves, a highlight pulses or a forgotten node is on its
   * way out; otherwise it rests (an open viewer idles instead of painting 60 frames a second).
   * A new painter when those change has force-graph draw the frame that ends them. */
  const moving = ghosts.length > 0 || Object.keys(effects).length > 0;
  const paintNode = useMemo(() => makePainter(effectsRef, painted), [effects, ghosts]);
  const graph = useMemo(() => toGraph(snapshot, cache, ghosts), [snapshot, ghosts]);

  /* drawn: the keys handed to the graph (ghosts marked), for tests and the curious */
  Object.assign(exposed, { snapshot, lastRevision: last ? last.result : null, busy, denied, shownEpoch,
    drawn: graph.nodes.map((n) => (n.__ghost ? `${n.key} (forgotten)` : n.key)), ghosts: ghosts.length, moving });
  const current = timeline.length ? timeline[timeline.length - 1].epoch : (snapshot?.current ?? snapshot?.epoch ?? 0);

  const failed = useCallback((err) => {
    if (err instanceof ApiError && err.status === 401) setDenied(true);
  }, []);
  const boardQuery = () => {
    const params = new URLSearchParams();
    if (shownRef.current != null) params.set("epoch", String(shownRef.current));
    if (asOfRef.current) params.set("as_of", asOfRef.current);
    return params.toString() ? `/api/scoreboard?${params}` : "/api/scoreboard";
  };
  const refreshBoard = useCallback(() => api(boardQuery()).then(
    (b) => { setBoard(b); setBoardError(null); },
    (err) => { failed(err); setBoardError(`Scoreboard unavailable: ${err.message}`); }), []);
  const refreshLog = useCallback(() => Promise.all([
    api("/api/log").then((entries) => setLog(Array.isArray(entries) ? entries : []), failed),
    api("/api/timeline").then((rows) => setTimeline(Array.isArray(rows) ? rows : []), failed)]), []);

  /* Show the graph as it is now, without animation (a load, an undo, a missed change). */
  const refresh = useCallback(async () => {
    if (shownRef.current != null) {  // showing the past: the timeline follows, the graph stays
      await refreshLog();
      setStatus(`The graph changed; still showing epoch ${shownRef.current} (press Now for the live graph).`);
      return;
    }
    try {
      const snap = await api("/api/graph");
      generation.current++;
      setGhosts([]);
      setEffects({});
      setSnapshot(snap);
      setStatus(`Epoch ${snap.epoch}: ${snap.nodes.length} nodes.`);
      setStatusError(false);
    } catch (err) {
      failed(err);
      setStatus(`Could not load the graph: ${err.message}`);
      setStatusError(true);
    }
    await Promise.all([refreshBoard(), refreshLog()]);
  }, []);

  useEffect(() => { refresh(); }, []);

  useEffect(() => {  // room for labels: longer links, stronger repulsion
    const fg = fgRef.current;
    if (!fg) return;
    fg.d3Force("charge").strength(-260);
    fg.d3Force("link").distance((l) => (l.implicit ? 80 : 60));
  }, []);

  useEffect(() => {
    const el = wrapRef.current;
    if (!el) return undefined;
    const ro = new ResizeObserver(() => setSize({ width: el.clientWidth, height: el.clientHeight }));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  /* Animate one revision from `before` to `after`. */
  const animate = useCallback((result, before, after, fx = effectsOf(result)) => {
    const gen = ++generation.current;
    const forgotten = keysOf(result.forgotten);
    const invalidated = keysOf(result.invalidated);
    const present = new Set((after?.nodes ?? []).map((n) => n.key));
    const leaving = before.nodes.filter((n) => forgotten.includes(n.key) && !present.has(n.key))
      .map((n) => (invalidated.includes(n.key) ? { ...n, state: "invalidated" } : n));
    setSnapshot(after);  // every node of `after` is drawn; the leaving ones only until they vanish
    setGhosts(leaving);
    setEffects(fx);
    setTimeout(() => { if (generation.current === gen) setGhosts([]); }, VANISH_MS);
    setTimeout(() => { if (generation.current === gen) setEffects({}); }, FLASH_MS);
  }, []);

  /* Play a revision once, whichever way it arrived first (this page's POST or the event stream). */
  const applyRevision = useCallback(async (result) => {
    if (result.epoch != null) {
      if (seenEpochs.current.has(result.epoch)) return;
      seenEpochs.current.add(result.epoch);
    }
    if (shownRef.current != null) {  // showing the past: the timeline follows, the graph stays
      await refreshLog();
      setStatus(`Epoch ${result.epoch ?? "?"} was recorded; still showing epoch ${shownRef.current} (press Now for the live graph).`);
      return;
    }
    const before = snapshotRef.current;
    const after = await api("/api/graph");
    setLast({ result, before, after });
    animate(result, before || after, after);
    setStatus(summary(result));
    setStatusError(false);
    await Promise.all([refreshBoard(), refreshLog()]);
  }, [animate]);

  useEffect(() => followChanges({
    onChange: (change) => {
      if (change.kind === "revise" && keysOf(change.result?.to_decide).length) return;  // nothing was recorded
      const run = change.kind === "revise" && change.result ? applyRevision(change.result) : refresh();
      run.catch(failed);
    },
    onResync: () => { refresh(); },
  }), []);

  const revise = useCallback(async (body) => {
    setBusy(true);
    setStatusError(false);
    setStatus("Revising…");
    try {
      const result = await postJson("/api/revise", body);
      const open = keysOf(result.to_decide);
      if (open.length) {  // nothing recorded: mark the candidates and let the user decide
        const start = performance.now();
        const candidates = (result.candidates || []).filter((c) => open.includes(c.key));
        setDecide({ fact: body.fact, triple: body.triple, key: body.key, candidates, marked: {}, note: "" });
        setEffects(Object.fromEntries(open.map((k) => [k, { kind: "candidate", start }])));
        setStatus(`No judge could decide offline: ${open.length} candidate(s) marked; decide below.`);
      } else {
        setDecide(null);
        shownRef.current = null;  // a revision from this page is shown live, from the graph now
        setShownEpoch(null);
        await applyRevision(result);
      }
    } catch (err) {
      failed(err);
      setStatus(`Revision failed: ${err.message}`);
      setStatusError(true);
    } finally {
      setBusy(false);
    }
  }, [applyRevision]);

  const onDecide = useCallback((cand, relation) => {
    if (!decide) return;
    if (relation === "contradicts") {
      const body = { fact: decide.fact, target: cand.key };
      if (decide.triple) body.triple = decide.triple;
      if (decide.key) body.key = decide.key;
      revise(body);
    } else if (relation === "supersedes") {
      setDecide({ ...decide, note: SUPERSEDES_NOTE });
    } else {
      const marked = { ...decide.marked, [cand.key]: "unrelated" };
      const all = decide.candidates.every((c) => marked[c.key] === "unrelated");
      setEffects((fx) => Object.fromEntries(Object.entries(fx).filter(([k]) => k !== cand.key)));
      setDecide({ ...decide, marked, note: all ? UNRELATED_NOTE : "" });
    }
  }, [decide, revise]);

  /* "none of these": the fact is recorded as new evidence, unjudged, maybe bearing on a hypothesis. */
  const onRecord = useCallback(({ kind, hypothesis, weight }) => {
    if (!decide) return;
    const body = { fact: decide.fact, record: true };
    if (decide.triple) body.triple = decide.triple;
    if (kind && hypothesis) {
      body[kind] = hypothesis;
      if (weight !== "" && !Number.isNaN(Number(weight))) body.weight = Number(weight);
    }
    revise(body);
  }, [decide, revise]);

  /* Step or scrub to an epoch (null: now): the graph as it stood after it, animated from the one shown. */
  const showEpoch = useCallback(async (epoch) => {
    const seq = ++stepSeq.current;
    try {
      const after = await api(epoch == null ? "/api/graph" : `/api/graph?epoch=${encodeURIComponent(epoch)}`);
      if (seq !== stepSeq.current) return;
      const before = snapshotRef.current;
      const live = epoch == null || after.epoch === after.current;
      shownRef.current = live ? null : after.epoch;
      setShownEpoch(shownRef.current);
      const { result, fx } = stepChange(before, after);
      animate(result, before || after, after, fx);
      setStatus(live ? `Now: epoch ${after.epoch}, ${after.nodes.length} nodes.`
        : `Epoch ${after.epoch} of ${after.current}: ${after.nodes.length} nodes, as they stood then.`);
      setStatusError(false);
    } catch (err) {
      failed(err);
      setStatus(`Could not show epoch ${epoch}: ${err.message}`);
      setStatusError(true);
    }
    await refreshBoard();
  }, [animate]);

  const replay = useCallback(() => {
    if (!last) return;
    const gen = ++generation.current;
    setEffects({});
    setGhosts([]);
    setSnapshot(last.before);
    setStatus("Replaying: before the revision…");
    setTimeout(() => {
      if (generation.current !== gen) return;
      animate(last.result, last.before, last.after);
      setStatus(summary(last.result));
    }, REPLAY_BEFORE_MS);
  }, [last, animate]);

  const hoverFromList = useCallback((node, el) => {
    if (!node) return setHover(null);
    const box = el.getBoundingClientRect();
    return setHover({ node, x: box.left - 12, y: box.top, fromList: true });
  }, []);

  const place = useCallback((hv) => (el) => {
    if (!el || !hv) return;
    const w = el.offsetWidth;
    const ht = el.offsetHeight;
    const x = hv.fromList ? hv.x - w : hv.x + 14;
    const y = hv.y + (hv.fromList ? 0 : 14);
    el.style.left = `${Math.max(4, Math.min(x, window.innerWidth - w - 4))}px`;
    el.style.top = `${Math.max(4, Math.min(y, window.innerHeight - ht - 4))}px`;
  }, []);

  return h("div", { id: "app" },
    h("header", null,
      h("h1", null, "FALSIFY"),
      h("span", { className: "tagline" }, "belief-revision memory"),
      snapshot ? h("span", { id: "epoch", className: shownEpoch == null ? "" : "history" },
        shownEpoch == null ? `epoch ${snapshot.epoch}` : `epoch ${snapshot.epoch} of ${current} (history)`) : null),
    denied ? h(Denied) : null,
    h("main", null,
      h("div", { id: "graph", ref: wrapRef, onMouseMove: (e) => { mouse.current = { x: e.clientX, y: e.clientY }; } },
        h(ForceGraph2D, {
          ref: fgRef, graphData: graph, width: size.width, height: size.height,
          nodeId: "key", nodeRelSize: 1,
          nodeVal: (n) => nodeRadius(n) ** 2,
          nodeLabel: () => "", linkLabel: () => "",
          nodeCanvasObject: paintNode, nodePointerAreaPaint: paintPointerArea,
          linkColor: (l) => EDGE_COLOURS[l.type] ?? "#999",
          linkWidth: (l) => (l.implicit ? 0.4 : l.type === "part_of" ? 0.6 : 1.4),
          linkLineDash: (l) => (l.type === "depends_on" && !l.critical ? [3, 2] : null),
          linkDirectionalArrowLength: (l) => (l.implicit ? 0 : 4), linkDirectionalArrowRelPos: 1,
          linkCanvasObjectMode: () => "after", linkCanvasObject: paintLinkLabel,
          autoPauseRedraw: !moving, cooldownTicks: 120,
          onRenderFramePre: () => painted.clear(),
          onRenderFramePost: () => { exposed.painted = [...painted].sort(); exposed.frames++; },
          onEngineStop: () => {
            const fg = fgRef.current;
            if (fitted.current || !fg) return;
            fitted.current = true;
            fg.zoomToFit(0, 60);
            if (fg.zoom() > MAX_FIT_ZOOM) fg.zoom(MAX_FIT_ZOOM, 0);
          },
          onNodeHover: (n) => setHover(n ? { node: n, x: mouse.current.x, y: mouse.current.y } : null),
        }),
        h(Legend)),
      h("aside", null,
        h(ReviseForm, { busy, onRevise: revise, onReplay: replay, canReplay: !!last, status, statusError }),
        h(Candidates, { decide, busy, onDecide, onRecord,
          hypotheses: (snapshot?.nodes || []).filter((n) => n.type === "hypothesis").map((n) => n.key) }),
        h(Scoreboard, { board, error: boardError, asOf,
          onAsOf: (value) => { asOfRef.current = value; setAsOf(value); refreshBoard(); } }),
        h(Timeline, { rows: timeline, current, shown: shownEpoch, onShow: showEpoch, busy }),
        h("section", { id: "nodes" }, h("h2", null, "Nodes"),
          h(NodeList, { nodes: graph.nodes, effects, onHover: hoverFromList })),
        h(RevisionLog, { entries: log }))),
    hover ? h(Tooltip, { hover, place }) : null);
}

ReactDOM.createRoot(document.getElementById("root")).render(h(App));
