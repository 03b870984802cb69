// The cwal token editor: a Streamlit v2 component (no iframe, no build step).
// Every piece of corpus text is written with textContent / title, never as HTML.
// Python sends the current sentence {sid, tokens, spans, confidence, least, info}, the ones
// after it (data.upcoming, already leased), the label keys, the last outcome and rev (actions
// handled so far). Enter shows the next sentence at once; the answer goes out as a trigger,
// "action": {kind, sid, spans, seconds}. One action is in flight at a time: the next is sent
// when a new rev shows the server is done with it.

const S = {
  root: null, tokensBox: null, statusEl: null, infoEl: null, send: null,
  labels: [], labelsKey: "", cur: null, upcoming: [], rev: undefined,
  spans: [], pre: new Set(), anchor: null, sel: null, dragging: false, shown: 0,
  busy: false, inflight: null, queue: [], onKey: null, onUp: null, timer: null,
};

const EDITABLE = new Set(["INPUT", "TEXTAREA", "SELECT"]);
const MIN_DWELL_MS = 250;  // Enter / S this soon after a sentence appears is a bounce: ignored
const sent = new Map();  // sid -> spans of our last answers (restored if the server sends one back)

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

// Spans are [type, start, endExclusive], sorted and disjoint.
function cut(spans, a, b) {
  const out = [];
  for (const [t, s, e] of spans) {
    if (e <= a || s > b) { out.push([t, s, e]); continue; }
    if (s < a) out.push([t, s, a]);
    if (e > b + 1) out.push([t, b + 1, e]);
  }
  return out;
}

function spanKey(span) {
  return `${span[0]}\u0000${span[1]}\u0000${span[2]}`;
}

function setSpan(type, a, b) {
  const spans = cut(S.spans, a, b);
  if (type !== null) spans.push([type, a, b + 1]);
  spans.sort((x, y) => x[1] - y[1]);
  S.spans = spans;
}

function colorOf(type) {
  const label = S.labels.find((l) => l.type === type);
  return label ? label.color : "#888888";
}

function buildLegend() {
  const legend = S.root.querySelector(".cw-legend");
  legend.replaceChildren();
  for (const label of S.labels) {
    const chip = el("span", "cw-chip");
    chip.style.setProperty("--ent", label.color);
    chip.dataset.type = label.type;
    chip.append(el("kbd", null, label.key), el("span", null, label.type));
    legend.append(chip);
  }
  const clear = el("span", "cw-chip clear");
  clear.dataset.type = "";
  clear.append(el("kbd", null, "⌫"), el("span", null, "clear"));
  legend.append(clear);
  const rows = S.root.querySelector(".cw-keys-labels");
  rows.replaceChildren();
  for (const label of S.labels) {
    const row = el("tr");
    const key = el("td");
    key.append(el("kbd", null, label.key));
    row.append(key, el("td", null, `label the selected tokens ${label.type}`));
    rows.append(row);
  }
}

// "?" (or the Keys button) shows / hides the list of keys.
function toggleKeys(open) {
  const panel = S.root.querySelector(".cw-keys");
  const show = open === undefined ? panel.hidden : open;
  panel.hidden = !show;
  S.root.querySelector(".cw-keys-btn").setAttribute("aria-expanded", show ? "true" : "false");
}

// The keys act on the sentence without a click: the editor takes focus when it appears (after
// sign-in, the sidebar, the back button or a direct URL) unless the user is typing elsewhere.
function takeFocus() {
  const active = document.activeElement;
  const typing = active && active !== document.body && active.tagName !== "A" &&
    (active.tagName === "TEXTAREA" || active.isContentEditable ||
     (active.tagName === "INPUT" && active.getAttribute("role") !== "combobox"));
  if (!typing) S.root.focus({ preventScroll: true });
}

// A click on the sidebar link of the page already shown reruns it without a new editor, and the
// link keeps the focus: Enter would follow the link again instead of submitting. The editor
// takes the focus back once the click is done (another page's link removes the editor anyway).
function onNavClick(event) {
  const link = event.target instanceof Element ? event.target.closest("a") : null;
  if (!link || !link.closest('[data-testid="stSidebar"]')) return;
  setTimeout(() => { if (S.root && S.root.isConnected) takeFocus(); }, 0);
}

function buildTokens() {
  const box = S.tokensBox;
  box.replaceChildren();
  const view = S.cur;
  if (!view) {
    box.append(el("span", "cw-empty", S.empty || ""));
    return;
  }
  const conf = view.confidence;
  view.tokens.forEach((token, i) => {
    const node = el("span", "cw-tok", token);
    node.dataset.i = String(i);
    node.setAttribute("role", "option");
    if (conf && conf[i] !== null && conf[i] !== undefined) {
      const doubt = Math.max(0, Math.min(1, 1 - conf[i]));
      node.style.setProperty("--doubt", (0.75 * doubt).toFixed(3));
      node.title = `confidence ${conf[i].toFixed(2)}`;
    }
    if (view.least === i) node.classList.add("least");
    box.append(node);
  });
}

// Put a sentence on screen (null: nothing left), with its pre-filled spans.
function show(view) {
  S.cur = view;
  const own = view ? sent.get(view.sid) : undefined;
  const spans = view ? own || view.spans : [];
  S.spans = spans.map((x) => [x[0], x[1], x[2]]);
  // the model's pre-filled spans stay marked until the annotator changes them
  S.pre = new Set(view && !own ? (view.pre || []).map(spanKey) : []);
  S.sel = null;
  S.anchor = null;
  S.shown = performance.now();
  buildTokens();
  S.root.dataset.sid = view ? String(view.sid) : "";
  S.infoEl.textContent = view ? view.info || "" : "";
}

function paint() {
  const nodes = S.tokensBox.querySelectorAll(".cw-tok");
  const owner = new Array(nodes.length).fill(null);
  for (const span of S.spans) for (let p = span[1]; p < span[2]; p++) owner[p] = span;
  nodes.forEach((node, i) => {
    const span = owner[i];
    node.classList.toggle("ent", span !== null);
    node.classList.toggle("ent-start", span !== null && span[1] === i);
    node.classList.toggle("ent-end", span !== null && span[2] === i + 1);
    node.classList.toggle("pre", span !== null && S.pre.has(spanKey(span)));
    node.classList.toggle("sel", S.sel !== null && i >= S.sel[0] && i <= S.sel[1]);
    node.setAttribute("aria-selected", node.classList.contains("sel") ? "true" : "false");
    node.querySelector(".cw-badge")?.remove();
    if (span !== null) {
      node.style.setProperty("--ent", colorOf(span[0]));
      node.dataset.tag = (span[1] === i ? "B-" : "I-") + span[0];
      if (span[1] === i) node.append(el("span", "cw-badge", span[0]));
    } else {
      node.style.removeProperty("--ent");
      node.dataset.tag = "O";
    }
  });
  S.root.dataset.ready = !S.busy && S.cur ? "1" : "0";
  S.root.classList.toggle("busy", S.busy);
  for (const btn of S.root.querySelectorAll(".cw-btn:not(.cw-keys-btn)")) {
    btn.disabled = S.busy || (btn.dataset.action !== "undo" && !S.cur);
  }
}

function status(text) {
  S.statusEl.textContent = text;
}

function select(a, b) {
  S.sel = [Math.min(a, b), Math.max(a, b)];
  paint();
}

function label(type) {
  if (S.sel === null || S.busy) return;
  setSpan(type, S.sel[0], S.sel[1]);
  S.anchor = S.sel[1];
  S.sel = null;
  paint();
}

// Send one action now, or queue it behind the one the server is still handling.
function dispatch(payload) {
  if (S.inflight) {
    S.queue.push(payload);
    return;
  }
  S.inflight = payload;
  clearTimeout(S.timer);
  S.timer = setTimeout(() => status("No answer from the server yet…"), 15000);
  S.send("action", payload);
}

function act(kind) {
  if (S.busy || (kind !== "undo" && !S.cur)) return;
  if (kind !== "undo" && performance.now() - S.shown < MIN_DWELL_MS) return;
  const payload = { kind, sid: S.cur ? S.cur.sid : null };
  if (kind === "submit") {
    payload.spans = S.spans;
    payload.seconds = Math.round(performance.now() - S.shown) / 1000;
    sent.set(payload.sid, S.spans);
    if (sent.size > 8) sent.delete(sent.keys().next().value);
  }
  // after an undo the server says what the sentence holds (Annotate: the undone answer to fix;
  // Review: the labels from before the fix), not the answer this page remembers
  if (kind === "undo") {
    sent.clear();
    S.reshow = true;  // the answer may bring back the sentence on screen with other labels
  }
  const verb = { submit: "Saving", skip: "Skipping", undo: "Undoing" }[kind];
  status(payload.sid === null ? `${verb}…` : `${verb} sentence #${payload.sid}…`);
  if (kind !== "undo" && S.upcoming.length) {
    show(S.upcoming.shift());  // already leased to this annotator: shown at once
  } else {
    S.busy = true;
  }
  dispatch(payload);
  paint();
}

function moveCursor(delta, extend) {
  const n = S.cur ? S.cur.tokens.length : 0;
  if (!n) return;
  let from;
  if (S.sel !== null) from = delta > 0 ? S.sel[1] : S.sel[0];
  else if (S.anchor !== null) from = S.anchor;
  else from = delta > 0 ? -1 : n;
  const to = Math.max(0, Math.min(n - 1, from + delta));
  if (extend && S.anchor !== null) select(S.anchor, to);
  else {
    S.anchor = to;
    select(to, to);
  }
}

function insideEditableOrForeignControl(event) {
  for (const node of event.composedPath()) {
    if (node === S.root) return false;
    if (!(node instanceof Element)) continue;
    if (EDITABLE.has(node.tagName) || node.isContentEditable) return true;
    if ((node.tagName === "BUTTON" || node.tagName === "A") && event.key === "Enter") return true;
  }
  return false;
}

function onKey(event) {
  if (!S.root || !S.root.isConnected) return;
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  if (insideEditableOrForeignControl(event)) return;
  const key = event.key;
  const hit = S.labels.find((l) => l.key.toLowerCase() === key.toLowerCase());
  let handled = true;
  if (key === "Enter") {
    if (!event.repeat) act("submit");
  } else if (hit) label(hit.type);
  else if (key === "Backspace" || key === "Delete") label(null);
  else if (key === "Escape") { S.sel = null; S.anchor = null; toggleKeys(false); paint(); }
  else if (key === "?") toggleKeys();
  else if (key === "ArrowRight") moveCursor(1, event.shiftKey);
  else if (key === "ArrowLeft") moveCursor(-1, event.shiftKey);
  else if (key === "s" || key === "S") act("skip");
  else if (key === "u" || key === "U") act("undo");
  else if (key === "g" || key === "G") openGuidelines();
  else if (key === "f" || key === "F") focusFlag();
  else handled = false;
  if (handled) event.preventDefault();
}

// G and F reach the page around the editor (a v2 component shares its document): the
// guidelines expander and the flag comment box that the annotate page draws under the editor.
function openGuidelines() {
  const boxes = document.querySelectorAll('[data-testid="stExpander"] details');
  const box = [...boxes].find((d) => (d.querySelector("summary") || {}).textContent?.includes("Guidelines"));
  if (!box) return;
  box.querySelector("summary").click();
  box.scrollIntoView({ block: "nearest" });
}

function focusFlag() {
  const input = document.querySelector('input[aria-label^="Flag sentence"]');
  if (!input) return;
  input.scrollIntoView({ block: "nearest" });
  input.focus();
}

function bindOnce() {
  S.tokensBox.addEventListener("mousedown", (event) => {
    const node = event.target.closest(".cw-tok");
    if (!node || S.busy) return;
    event.preventDefault();
    S.root.focus({ preventScroll: true });
    const i = Number(node.dataset.i);
    if (event.shiftKey && S.anchor !== null) select(S.anchor, i);
    else {
      S.anchor = i;
      S.dragging = true;
      select(i, i);
    }
  });
  S.tokensBox.addEventListener("mouseover", (event) => {
    const node = event.target.closest(".cw-tok");
    if (S.dragging && node && S.anchor !== null) select(S.anchor, Number(node.dataset.i));
  });
  S.root.querySelector(".cw-legend").addEventListener("mousedown", (event) => {
    event.preventDefault();
    S.root.focus({ preventScroll: true });
  });
  S.root.querySelector(".cw-legend").addEventListener("click", (event) => {
    const chip = event.target.closest(".cw-chip");
    if (chip) label(chip.dataset.type === "" ? null : chip.dataset.type);
  });
  for (const btn of S.root.querySelectorAll(".cw-btn")) {
    btn.addEventListener("mousedown", (event) => {
      event.preventDefault();
      S.root.focus({ preventScroll: true });
    });
    if (btn.dataset.action === "keys") btn.addEventListener("click", () => toggleKeys());
    else btn.addEventListener("click", () => act(btn.dataset.action));
  }
}

// A new payload from the server: catch up with it unless actions of ours are still queued.
function receive(data, fresh) {
  const labelsKey = JSON.stringify(data.labels || []);
  if (labelsKey !== S.labelsKey) {
    S.labels = data.labels || [];
    S.labelsKey = labelsKey;
    buildLegend();
  }
  S.empty = data.empty || "";
  const advanced = data.rev !== S.rev;
  const reshow = advanced && S.reshow;
  if (advanced) S.reshow = false;
  S.rev = data.rev;
  S.root.dataset.rev = String(data.rev);
  if (advanced && S.inflight) {
    S.inflight = null;
    clearTimeout(S.timer);
    if (S.queue.length) dispatch(S.queue.shift());
  }
  const current = data.sid === null ? null : data;
  if (S.inflight) {
    // The server is behind the screen: keep going with the sentences we already hold.
  } else {
    S.busy = false;
    if (fresh || reshow || !S.cur || !current || current.sid !== S.cur.sid) show(current);
    else S.infoEl.textContent = current.info || "";
    const held = S.cur ? S.cur.sid : null;
    S.upcoming = (data.upcoming || []).filter((v) => v.sid !== held);
    status(data.message || "");
  }
  paint();
}

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  const root = parentElement.querySelector(".cw-editor");
  if (!root || !data) return undefined;
  S.send = setTriggerValue;
  const fresh = S.root !== root;
  if (fresh) {
    Object.assign(S, { root, cur: null, upcoming: [], rev: undefined, labelsKey: "" });
    Object.assign(S, { busy: false, inflight: null, queue: [] });
    S.tokensBox = root.querySelector(".cw-tokens");
    S.statusEl = root.querySelector(".cw-status");
    S.infoEl = root.querySelector(".cw-info");
    bindOnce();
  }
  receive(data, fresh);
  if (fresh) takeFocus();

  if (S.onKey) document.removeEventListener("keydown", S.onKey);
  if (S.onUp) window.removeEventListener("mouseup", S.onUp);
  S.onKey = onKey;
  S.onUp = () => { S.dragging = false; };
  document.addEventListener("keydown", S.onKey);
  window.addEventListener("mouseup", S.onUp);
  document.removeEventListener("click", onNavClick);
  document.addEventListener("click", onNavClick);
  return () => {
    document.removeEventListener("keydown", S.onKey);
    window.removeEventListener("mouseup", S.onUp);
    document.removeEventListener("click", onNavClick);
  };
}
