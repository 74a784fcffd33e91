/* FALSIFY viewer: talking to the server (JSON API and live updates). */

/* For tests and the curious: the shown snapshot, the last revise() result, how many
 * API calls are in flight, whether the live-update stream is connected, and the node keys
 * drawn (handed to the graph; painted: in its last frame; leaving ones marked "(forgotten)"), the
 * frames the canvas has drawn, and whether something on it moves (a highlight, a node on its way out). */
export const exposed = (window.__falsify = { snapshot: null, lastRevision: null, pending: 0, live: false, denied: false,
  drawn: [], painted: [], ghosts: 0, frames: 0, moving: false });

export class ApiError extends Error {
  constructor(message, status) {
    super(message);
    this.status = status;
  }
}

export async function api(path, options) {
  exposed.pending++;
  try {
    const res = await fetch(path, { credentials: "same-origin", ...options });
    const body = await res.json().catch(() => null);
    if (!res.ok) throw new ApiError(body?.error || `${res.status} ${res.statusText}`, res.status);
    return body;
  } finally {
    exposed.pending--;
  }
}

export const postJson = (path, payload) =>
  api(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(payload) });

/* Server-sent events from /api/events: onChange(event) for every change of the graph
 * (a revision through MCP, the API, another page or the warm CLI); onResync() when the
 * stream (re)connects after changes it may have missed. Returns a function that closes it. */
export function followChanges({ onChange, onResync }) {
  let version = null;
  const source = new EventSource("/api/events");
  source.addEventListener("hello", (ev) => {
    const hello = JSON.parse(ev.data);
    if (version !== null && hello.version !== version) onResync();
    version = hello.version;
    exposed.live = true;
  });
  source.addEventListener("change", (ev) => {
    const change = JSON.parse(ev.data);
    version = change.version;
    onChange(change);
  });
  source.addEventListener("error", () => { exposed.live = false; });
  return () => { source.close(); exposed.live = false; };
}
