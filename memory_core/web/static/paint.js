/* FALSIFY viewer: drawing nodes and link labels on the force-graph canvas. */

import { EDGE_COLOURS, FLASH_MS, colourOf } from "./model.js";

const RADIUS = { question: 11, hypothesis: 7, evidence: 4, conclusion: 6 };

export const nodeRadius = (node) => RADIUS[node.type] ?? 5;

function tracePath(ctx, node, r) {
  ctx.beginPath();
  if (node.type === "conclusion") {
    ctx.rect(node.x - r, node.y - r, 2 * r, 2 * r);
  } else if (node.type === "question") {
    for (let i = 0; i < 6; i++) {
      const a = Math.PI / 6 + (i * Math.PI) / 3;
      ctx[i ? "lineTo" : "moveTo"](node.x + r * Math.cos(a), node.y + r * Math.sin(a));
    }
    ctx.closePath();
  } else {
    ctx.arc(node.x, node.y, r, 0, 2 * Math.PI);
  }
}

/* A node painter reading the current revision effects from effectsRef; `painted` (a Set)
 * collects the keys drawn in the current frame. */
export function makePainter(effectsRef, painted = null) {
  return function paintNode(node, ctx, scale) {
    if (painted) painted.add(node.__ghost ? `${node.key} (forgotten)` : node.key);
    const r = nodeRadius(node);
    const now = performance.now();
    const fx = effectsRef.current[node.key];
    const t = fx ? (now - fx.start) / FLASH_MS : 1;
    const pulse = 0.5 + 0.5 * Math.sin(now / 120);
    const faded = node.state === "superseded" || node.state === "invalidated" || node.__ghost;
    ctx.save();
    if (faded) ctx.globalAlpha = 0.6;
    if (fx?.kind === "glow" && t < 1) {
      ctx.shadowColor = "#39d353";
      ctx.shadowBlur = 10 + 20 * pulse;
    }
    tracePath(ctx, node, r);
    ctx.fillStyle = fx?.kind === "flash" && t < 1 && pulse > 0.5 ? "#ff1f1f" : colourOf(node.state);
    ctx.fill();
    ctx.shadowBlur = 0;
    ctx.lineWidth = 1 / scale;
    ctx.strokeStyle = "#1d2733";
    ctx.stroke();
    if (fx && t < 1 && ["flash", "glow", "new"].includes(fx.kind)) {
      ctx.globalAlpha = 1 - t;
      ctx.lineWidth = 2.5 / scale;
      ctx.strokeStyle = fx.kind === "flash" ? "#ff1f1f" : fx.kind === "glow" ? "#39d353" : "#3a7bd5";
      tracePath(ctx, node, r + 2 + 5 * pulse);
      ctx.stroke();
    }
    if (fx?.kind === "candidate") {  // offline: a candidate the user decides on (stays until decided)
      ctx.lineWidth = 2 / scale;
      ctx.setLineDash([2 / scale, 2 / scale]);
      ctx.strokeStyle = "#e07b00";
      tracePath(ctx, node, r + 3 + 1.5 * pulse);
      ctx.stroke();
      ctx.setLineDash([]);
    }
    ctx.restore();

    const struck = node.state === "invalidated" || node.__ghost;
    const size = Math.max(11 / scale, 1.5);
    ctx.font = `${node.type === "question" ? "bold " : ""}${size}px sans-serif`;
    ctx.textAlign = "center";
    ctx.textBaseline = "top";
    ctx.fillStyle = struck ? "#7a7a7a" : "#1d2733";
    const label = String(node.key);
    const y = node.y + r + 1.5 / scale;
    ctx.fillText(label, node.x, y);
    if (struck) {
      const w = ctx.measureText(label).width;
      ctx.fillRect(node.x - w / 2 - 1 / scale, y + size * 0.5, w + 2 / scale, Math.max(1.2 / scale, size / 10));
    }
  };
}

export function paintPointerArea(node, colour, ctx) {
  ctx.fillStyle = colour;
  tracePath(ctx, node, nodeRadius(node) + 2);
  ctx.fill();
}

export function paintLinkLabel(link, ctx, scale) {
  const { source: s, target: e } = link;
  if (link.implicit || typeof s !== "object" || typeof e !== "object" || scale < 0.9) return;
  const size = 9 / scale;
  let angle = Math.atan2(e.y - s.y, e.x - s.x);
  if (angle > Math.PI / 2 || angle < -Math.PI / 2) angle += Math.PI;
  ctx.save();
  ctx.translate((s.x + e.x) / 2, (s.y + e.y) / 2);
  ctx.rotate(angle);
  ctx.font = `${size}px sans-serif`;
  ctx.textAlign = "center";
  ctx.textBaseline = "bottom";
  ctx.fillStyle = EDGE_COLOURS[link.type] ?? "#666";
  ctx.fillText(link.type.replace("_", " "), 0, -1 / scale);
  ctx.restore();
}
