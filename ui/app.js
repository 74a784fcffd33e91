/* FALSIFY viewer: the belief graph, a revise box and the scoreboard.
 * Plain browser JS (no build step). Every piece of node text is untrusted: it is
 * rendered only as React text children or drawn on the canvas, never as HTML. */
(function () {
  "use strict";

  var h = React.createElement;
  var useState = React.useState, useEffect = React.useEffect, useRef = React.useRef,
    useMemo = React.useMemo, useCallback = React.useCallback;

  var STATE_COLOURS = { alive: "#2e9d4f", refuted: "#d62828", invalidated: "#9e9e9e", superseded: "#d9a441" };
  var EDGE_COLOURS = { depends_on: "#4a6fa5", supports: "#2e9d4f", refutes: "#d62828", supersedes: "#d9a441", part_of: "#c5c9d0" };
  var RADIUS = { question: 11, hypothesis: 7, evidence: 4, conclusion: 6 };
  var FLASH_MS = 2500;   // how long revision highlights last
  var VANISH_MS = 1500;  // how long a forgotten node stays, struck through, before it goes
  var REPLAY_BEFORE_MS = 900;
  var MAX_FIT_ZOOM = 3;    // a small graph is not blown up to fill the canvas

  function colourOf(state) { return STATE_COLOURS[state] || "#888888"; }

  function keyOf(item) {
    if (item == null) return null;
    if (typeof item === "string") return item;
    return item.key || null;
  }

  function keysOf(list) {
    return (Array.isArray(list) ? list : []).map(keyOf).filter(Boolean);
  }

  /* For tests and the curious: the shown snapshot, the last revise() result and
   * how many API calls are in flight. */
  var exposed = window.__falsify = { snapshot: null, lastRevision: null, pending: 0 };

  function api(path, options) {
    exposed.pending++;
    return fetch(path, options).then(function (res) {
      return res.json().catch(function () { return null; }).then(function (body) {
        if (!res.ok) throw new Error((body && body.error) || res.status + " " + res.statusText);
        return body;
      });
    }).finally(function () { exposed.pending--; });
  }

  /* Which transient highlight each key gets from a revise() result. */
  function effectsOf(result) {
    var fx = {}, start = performance.now();
    function mark(keys, kind) { keys.forEach(function (k) { fx[k] = { kind: kind, start: start }; }); }
    mark(keysOf([result.new_evidence]), "new");
    mark(keysOf(result.weakened), "weaken");
    mark(keysOf(result.superseded), "dim");
    mark(keysOf(result.invalidated), "strike");
    mark(keysOf(result.forgotten), "strike");
    mark(keysOf(result.refuted), "flash");
    mark(keysOf(result.promoted), "glow");
    return fx;
  }

  function summary(result) {
    var parts = [];
    [["refuted", "refuted"], ["superseded", "superseded"], ["promoted", "promoted"],
     ["invalidated", "invalidated"], ["forgotten", "forgot"], ["weakened", "weakened"]].forEach(function (p) {
      var keys = keysOf(result[p[0]]);
      if (keys.length) parts.push(p[1] + " " + keys.join(", "));
    });
    var took = typeof result.elapsed_ms === "number" ? " in " + Math.round(result.elapsed_ms) + " ms" : "";
    return "Revised" + took + (parts.length ? ": " + parts.join("; ") : ": nothing changed") + ".";
  }

  /* ---- canvas painting -------------------------------------------------- */

  function nodeRadius(node) { return RADIUS[node.type] || 5; }

  function tracePath(ctx, node, r) {
    ctx.beginPath();
    if (node.type === "conclusion") {
      ctx.rect(node.x - r, node.y - r, 2 * r, 2 * r);
    } else if (node.type === "question") {
      for (var i = 0; i < 6; i++) {
        var a = Math.PI / 6 + i * Math.PI / 3;
        ctx[i ? "lineTo" : "moveTo"](node.x + r * Math.cos(a), node.y + r * Math.sin(a));
      }
      ctx.closePath();
    } else {
      ctx.arc(node.x, node.y, r, 0, 2 * Math.PI);
    }
  }

  function makePainter(effectsRef) {
    return function paintNode(node, ctx, scale) {
      var r = nodeRadius(node), now = performance.now();
      var fx = effectsRef.current[node.key];
      var t = fx ? (now - fx.start) / FLASH_MS : 1;
      var pulse = 0.5 + 0.5 * Math.sin(now / 120);
      ctx.save();
      if (node.state === "superseded" || node.state === "invalidated" || node.__ghost) ctx.globalAlpha = 0.6;
      if (fx && fx.kind === "glow" && t < 1) {
        ctx.shadowColor = "#39d353";
        ctx.shadowBlur = 10 + 20 * pulse;
      }
      tracePath(ctx, node, r);
      ctx.fillStyle = fx && fx.kind === "flash" && t < 1 && pulse > 0.5 ? "#ff1f1f" : colourOf(node.state);
      ctx.fill();
      ctx.shadowBlur = 0;
      ctx.lineWidth = 1 / scale;
      ctx.strokeStyle = "#1d2733";
      ctx.stroke();
      if (fx && t < 1 && (fx.kind === "flash" || fx.kind === "glow" || fx.kind === "new")) {
        ctx.globalAlpha = 1 - t;
        ctx.lineWidth = 2.5 / scale;
        ctx.strokeStyle = fx.kind === "flash" ? "#ff1f1f" : fx.kind === "glow" ? "#39d353" : "#3a7bd5";
        tracePath(ctx, node, r + 2 + 5 * pulse);
        ctx.stroke();
      }
      ctx.restore();

      var size = Math.max(11 / scale, 1.5);
      ctx.font = (node.type === "question" ? "bold " : "") + size + "px sans-serif";
      ctx.textAlign = "center";
      ctx.textBaseline = "top";
      ctx.fillStyle = node.state === "invalidated" || node.__ghost ? "#7a7a7a" : "#1d2733";
      var label = String(node.key), y = node.y + r + 1.5 / scale;
      ctx.fillText(label, node.x, y);
      if (node.state === "invalidated" || node.__ghost) {
        var w = ctx.measureText(label).width;
        ctx.fillRect(node.x - w / 2 - 1 / scale, y + size * 0.5, w + 2 / scale, Math.max(1.2 / scale, size / 10));
      }
    };
  }

  function paintPointerArea(node, colour, ctx) {
    ctx.fillStyle = colour;
    tracePath(ctx, node, nodeRadius(node) + 2);
    ctx.fill();
  }

  function paintLinkLabel(link, ctx, scale) {
    var s = link.source, e = link.target;
    if (link.implicit || typeof s !== "object" || typeof e !== "object" || scale < 0.9) return;
    var size = 9 / scale, angle = Math.atan2(e.y - s.y, e.x - s.x);
    if (angle > Math.PI / 2 || angle < -Math.PI / 2) angle += Math.PI;
    ctx.save();
    ctx.translate((s.x + e.x) / 2, (s.y + e.y) / 2);
    ctx.rotate(angle);
    ctx.font = size + "px sans-serif";
    ctx.textAlign = "center";
    ctx.textBaseline = "bottom";
    ctx.fillStyle = EDGE_COLOURS[link.type] || "#666";
    ctx.fillText(link.type.replace("_", " "), 0, -1 / scale);
    ctx.restore();
  }

  /* ---- components -------------------------------------------------------- */

  function Tooltip(props) {
    var node = props.hover.node;
    var sources = Array.isArray(node.sources) ? node.sources : [];
    var facts = [["state", node.state], ["confidence", node.confidence], ["weight", node.feedback_weight], ["epoch", node.epoch]]
      .filter(function (p) { return p[1] !== null && p[1] !== undefined; })
      .map(function (p) { return p[0] + " " + (typeof p[1] === "number" ? Math.round(p[1] * 1000) / 1000 : p[1]); });
    return h("div", { id: "tooltip", role: "tooltip", ref: props.place(props.hover) },
      h("div", { className: "tip-head" },
        h("span", { className: "swatch", style: { backgroundColor: colourOf(node.state) } }),
        h("strong", null, node.key), " · ", node.type),
      h("p", { className: "tip-text" + (node.state === "invalidated" ? " struck" : "") }, node.text || ""),
      h("p", { className: "tip-facts" }, facts.join(" · ")),
      sources.length ? h("div", { className: "tip-sources" }, "Sources:",
        h("ul", null, sources.map(function (s, i) { return h("li", { key: i }, String(s)); }))) : null,
      node.why ? h("p", { className: "tip-why" }, "Why: ", String(node.why)) : null);
  }

  function Scoreboard(props) {
    var sb = props.board, err = props.error;
    function side(name, part, mark, cls) {
      part = part || {};
      return h("div", { className: "side " + cls },
        h("h3", null, name, " ", mark ? h("span", { className: "mark" }, mark) : null),
        h("p", { className: "answer" }, part.answer || "—"),
        keysOf(part.nodes).length ? h("p", { className: "used" }, "from " + keysOf(part.nodes).join(", ")) : null);
    }
    var marks = (sb && sb.scoreboard) || {};
    return h("section", { id: "scoreboard", "aria-live": "polite" },
      h("h2", { id: "scoreboard-caption" }, "AI revised, not forgot"),
      err ? h("p", { className: "error" }, err) : null,
      sb ? h("p", { className: "question" }, sb.question) : null,
      sb ? h("div", { className: "sides" },
        side("FALSIFY", sb.falsify, marks.falsify_mark, "falsify"),
        side("Plain RAG", sb.baseline, marks.baseline_mark, "baseline")) : null,
      sb && sb.verdict ? h("p", { className: "verdict" }, sb.verdict) : null);
  }

  function ReviseForm(props) {
    var _f = useState(""), fact = _f[0], setFact = _f[1];
    var _t = useState(""), triple = _t[0], setTriple = _t[1];
    var _g = useState(""), target = _g[0], setTarget = _g[1];
    function submit(ev) {
      ev.preventDefault();
      if (!fact.trim() || props.busy) return;
      var body = { fact: fact };
      if (triple.trim()) body.triple = triple.trim();
      if (target.trim()) body.target = target.trim();
      props.onRevise(body);
    }
    return h("form", { id: "revise-form", onSubmit: submit },
      h("label", { htmlFor: "fact" }, "New fact"),
      h("textarea", { id: "fact", rows: 3, value: fact, placeholder: "Paste a fact, e.g. Forensic audit: the March QA report was back-dated.",
        onChange: function (e) { setFact(e.target.value); } }),
      h("div", { className: "row" },
        h("input", { id: "triple", value: triple, placeholder: "triple S|P|O (optional)", "aria-label": "triple",
          onChange: function (e) { setTriple(e.target.value); } }),
        h("input", { id: "target", value: target, placeholder: "target key (optional)", "aria-label": "target",
          onChange: function (e) { setTarget(e.target.value); } })),
      h("div", { className: "row" },
        h("button", { id: "revise", type: "submit", disabled: props.busy || !fact.trim() }, props.busy ? "Revising…" : "Revise"),
        h("button", { id: "replay", type: "button", disabled: props.busy || !props.canReplay, onClick: props.onReplay }, "Replay last revision")),
      h("p", { id: "status", role: "status", className: props.statusError ? "error" : "" }, props.status));
  }

  function NodeList(props) {
    return h("ul", { id: "node-list" }, props.nodes.map(function (n) {
      var fx = props.effects[n.key];
      return h("li", {
        key: n.key, tabIndex: 0, "data-key": n.key, "data-state": n.state, "data-type": n.type,
        "data-color": colourOf(n.state), "data-effect": fx ? fx.kind : "", "data-forgotten": n.__ghost ? "true" : null,
        className: "state-" + n.state + (n.__ghost ? " forgotten" : "") + (fx ? " fx-" + fx.kind : ""),
        onMouseEnter: function (e) { props.onHover(n, e.currentTarget); },
        onFocus: function (e) { props.onHover(n, e.currentTarget); },
        onMouseLeave: function () { props.onHover(null); },
        onBlur: function () { props.onHover(null); }
      },
        h("span", { className: "swatch", style: { backgroundColor: colourOf(n.state) } }),
        h("span", { className: "k" }, n.key),
        h("span", { className: "t" }, n.type + ", " + n.state),
        h("span", { className: "txt" }, n.text || ""));
    }));
  }

  function cause(entry) {
    var c = Array.isArray(entry.cause) ? entry.cause.join(", ") : entry.cause;
    return [c ? "because " + c : "", entry.detail || ""].filter(Boolean).join(": ");
  }

  function RevisionLog(props) {
    var entries = props.entries.slice(-12).reverse();
    return h("section", { id: "log" },
      h("h2", null, "Revision log"),
      entries.length ? h("ol", null, entries.map(function (e, i) {
        return h("li", { key: i },
          h("span", { className: "k" }, "#" + e.epoch + " " + e.key), " " + (e.from || "") + " → " + (e.to || "") + " ",
          h("span", { className: "rule" }, e.rule ? "(" + e.rule + ")" : ""),
          cause(e) ? h("div", { className: "cause" }, cause(e)) : null);
      })) : h("p", { className: "muted" }, "No revisions yet."));
  }

  function Legend() {
    return h("div", { id: "legend" },
      Object.keys(STATE_COLOURS).map(function (s) {
        return h("span", { key: s, className: "item" }, h("span", { className: "swatch", style: { backgroundColor: STATE_COLOURS[s] } }), s);
      }),
      h("span", { className: "item muted" }, "⬢ question · ● hypothesis / evidence · ■ conclusion · dashed = non-critical dependency"));
  }

  /* Stable node objects (the layout keeps its positions) for a snapshot. */
  function toGraph(snapshot, cache, hidden, ghosts) {  // ghosts: forgotten nodes on their way out
    var nodes = [], present = {};
    (snapshot ? snapshot.nodes : []).forEach(function (n) {
      if (hidden[n.key]) return;
      present[n.key] = true;
      var obj = cache[n.key] || (cache[n.key] = {});
      Object.assign(obj, n, { __ghost: false });
      nodes.push(obj);
    });
    (ghosts || []).forEach(function (n) {
      if (present[n.key]) return;
      present[n.key] = true;
      var obj = cache[n.key] || (cache[n.key] = {});
      Object.assign(obj, n, { __ghost: true });
      nodes.push(obj);
    });
    var linked = {};
    var links = (snapshot ? snapshot.edges : []).filter(function (e) {
      return present[e.from] && present[e.to];
    }).map(function (e) {
      linked[e.from + "\u0000" + e.to] = true;
      return Object.assign({}, e, { source: e.from, target: e.to });
    });
    /* Tie each node to its question (faint, unlabelled) so an investigation stays together. */
    nodes.forEach(function (n) {
      if (n.question && n.question !== n.key && present[n.question] && !linked[n.key + "\u0000" + n.question]) {
        links.push({ type: "part_of", from: n.key, to: n.question, source: n.key, target: n.question, implicit: true });
      }
    });
    return { nodes: nodes, links: links };
  }

  function App() {
    var _s = useState(null), snapshot = _s[0], setSnapshot = _s[1];
    var _v = useState({ ghosts: [], hidden: {} }), view = _v[0], setView = _v[1];
    var _e = useState({}), effects = _e[0], setEffects = _e[1];
    var _b = useState(null), board = _b[0], setBoard = _b[1];
    var _be = useState(null), boardError = _be[0], setBoardError = _be[1];
    var _l = useState([]), log = _l[0], setLog = _l[1];
    var _st = useState("Loading…"), status = _st[0], setStatus = _st[1];
    var _se = useState(false), statusError = _se[0], setStatusError = _se[1];
    var _bu = useState(false), busy = _bu[0], setBusy = _bu[1];
    var _lr = useState(null), last = _lr[0], setLast = _lr[1];
    var _ho = useState(null), hover = _ho[0], setHover = _ho[1];
    var _sz = useState({ width: 600, height: 400 }), size = _sz[0], setSize = _sz[1];

    var cache = useRef({}).current;
    var effectsRef = useRef(effects);
    effectsRef.current = effects;
    var wrapRef = useRef(null), fgRef = useRef(null), mouse = useRef({ x: 0, y: 0 });
    var fitted = useRef(false), generation = useRef(0);
    var paintNode = useMemo(function () { return makePainter(effectsRef); }, []);

    var graph = useMemo(function () {
      return toGraph(snapshot, cache, view.hidden, view.ghosts);
    }, [snapshot, view]);

    Object.assign(exposed, { snapshot: snapshot, lastRevision: last ? last.result : null, busy: busy });

    var refreshBoard = useCallback(function () {
      return api("/api/scoreboard").then(function (b) { setBoard(b); setBoardError(null); },
        function (err) { setBoardError("Scoreboard unavailable: " + err.message); });
    }, []);
    var refreshLog = useCallback(function () {
      return api("/api/log").then(function (entries) { setLog(Array.isArray(entries) ? entries : []); }, function () {});
    }, []);

    useEffect(function () {
      api("/api/graph").then(function (snap) {
        setSnapshot(snap);
        setStatus("Epoch " + snap.epoch + ": " + snap.nodes.length + " nodes.");
      }, function (err) { setStatus("Could not load the graph: " + err.message); setStatusError(true); });
      refreshBoard();
      refreshLog();
    }, []);

    useEffect(function () {  // room for labels: longer links, stronger repulsion
      var fg = fgRef.current;
      if (!fg) return;
      fg.d3Force("charge").strength(-260);
      fg.d3Force("link").distance(function (l) { return l.implicit ? 80 : 60; });
    }, []);

    useEffect(function () {
      var el = wrapRef.current;
      if (!el) return undefined;
      var ro = new ResizeObserver(function () { setSize({ width: el.clientWidth, height: el.clientHeight }); });
      ro.observe(el);
      return function () { ro.disconnect(); };
    }, []);

    /* Animate one revision from `before` to `after`. */
    var animate = useCallback(function (result, before, after) {
      var gen = ++generation.current;
      var forgotten = keysOf(result.forgotten);
      var invalidated = keysOf(result.invalidated);
      var ghosts = before.nodes.filter(function (n) { return forgotten.indexOf(n.key) >= 0; }).map(function (n) {
        return invalidated.indexOf(n.key) >= 0 ? Object.assign({}, n, { state: "invalidated" }) : n;
      });
      setSnapshot(after);
      setView(function (v) {
        var hidden = Object.assign({}, v.hidden);
        forgotten.forEach(function (k) { delete hidden[k]; });
        return { ghosts: ghosts, hidden: hidden };
      });
      setEffects(effectsOf(result));
      setTimeout(function () {
        if (generation.current !== gen) return;
        setView(function (v) {
          var hidden = Object.assign({}, v.hidden);
          forgotten.forEach(function (k) { hidden[k] = true; });
          return { ghosts: [], hidden: hidden };
        });
      }, VANISH_MS);
      setTimeout(function () { if (generation.current === gen) setEffects({}); }, FLASH_MS);
    }, []);

    var revise = useCallback(function (body) {
      var before = snapshot;
      setBusy(true);
      setStatusError(false);
      setStatus("Revising…");
      api("/api/revise", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) })
        .then(function (result) {
          return api("/api/graph").then(function (after) {
            setLast({ result: result, before: before, after: after });
            animate(result, before || after, after);
            setStatus(summary(result));
            return Promise.all([refreshBoard(), refreshLog()]);
          });
        })
        .catch(function (err) { setStatus("Revision failed: " + err.message); setStatusError(true); })
        .then(function () { setBusy(false); });
    }, [snapshot, animate]);

    var replay = useCallback(function () {
      if (!last) return;
      var gen = ++generation.current;
      setEffects({});
      setView(function (v) {
        var hidden = Object.assign({}, v.hidden);
        keysOf(last.result.forgotten).forEach(function (k) { delete hidden[k]; });
        return { ghosts: [], hidden: hidden };
      });
      setSnapshot(last.before);
      setStatus("Replaying: before the revision…");
      setTimeout(function () {
        if (generation.current !== gen) return;
        animate(last.result, last.before, last.after);
        setStatus(summary(last.result));
      }, REPLAY_BEFORE_MS);
    }, [last, animate]);

    var hoverFromList = useCallback(function (node, el) {
      if (!node) return setHover(null);
      var box = el.getBoundingClientRect();
      setHover({ node: node, x: box.left - 12, y: box.top, fromList: true });
    }, []);

    var place = useCallback(function (hv) {
      return function (el) {
        if (!el || !hv) return;
        var w = el.offsetWidth, ht = el.offsetHeight;
        var x = hv.fromList ? hv.x - w : hv.x + 14, y = hv.y + (hv.fromList ? 0 : 14);
        el.style.left = Math.max(4, Math.min(x, window.innerWidth - w - 4)) + "px";
        el.style.top = Math.max(4, Math.min(y, window.innerHeight - ht - 4)) + "px";
      };
    }, []);

    return h("div", { id: "app" },
      h("header", null,
        h("h1", null, "FALSIFY"),
        h("span", { className: "tagline" }, "belief-revision memory"),
        snapshot ? h("span", { id: "epoch" }, "epoch " + snapshot.epoch) : null),
      h("main", null,
        h("div", { id: "graph", ref: wrapRef,
          onMouseMove: function (e) { mouse.current = { x: e.clientX, y: e.clientY }; } },
          h(ForceGraph2D, {
            ref: fgRef, graphData: graph, width: size.width, height: size.height,
            nodeId: "key", nodeRelSize: 1,
            nodeVal: function (n) { var r = nodeRadius(n); return r * r; },
            nodeLabel: function () { return ""; }, linkLabel: function () { return ""; },
            nodeCanvasObject: paintNode, nodePointerAreaPaint: paintPointerArea,
            linkColor: function (l) { return EDGE_COLOURS[l.type] || "#999"; },
            linkWidth: function (l) { return l.implicit ? 0.4 : l.type === "part_of" ? 0.6 : 1.4; },
            linkLineDash: function (l) { return l.type === "depends_on" && !l.critical ? [3, 2] : null; },
            linkDirectionalArrowLength: function (l) { return l.implicit ? 0 : 4; }, linkDirectionalArrowRelPos: 1,
            linkCanvasObjectMode: function () { return "after"; }, linkCanvasObject: paintLinkLabel,
            autoPauseRedraw: false, cooldownTicks: 120,
            onEngineStop: function () {
              var fg = fgRef.current;
              if (fitted.current || !fg) return;
              fitted.current = true;
              fg.zoomToFit(0, 60);
              if (fg.zoom() > MAX_FIT_ZOOM) fg.zoom(MAX_FIT_ZOOM, 0);
            },
            onNodeHover: function (n) {
              setHover(n ? { node: n, x: mouse.current.x, y: mouse.current.y } : null);
            }
          }),
          h(Legend)),
        h("aside", null,
          h(ReviseForm, { busy: busy, onRevise: revise, onReplay: replay, canReplay: !!last, status: status, statusError: statusError }),
          h(Scoreboard, { board: board, error: boardError }),
          h("section", { id: "nodes" }, h("h2", null, "Nodes"),
            h(NodeList, { nodes: graph.nodes, effects: effects, onHover: hoverFromList })),
          h(RevisionLog, { entries: log }))),
      hover ? h(Tooltip, { hover: hover, place: place }) : null);
  }

  ReactDOM.createRoot(document.getElementById("root")).render(h(App));
})();
