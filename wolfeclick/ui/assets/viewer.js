// WolfeClick Arena's battle viewer: runs in the browser as a gr.HTML component's js_on_load (`element` is the
// component). The server sends a battle once (wolfeclick/ui/viewer_payload.py: escaped HTML panels per step, SVG charts,
// marker positions, a turn list) through a data component (see DATA_JS in wolfeclick/ui/components.py); every
// step, play/pause, jump, viewpoint change and chart-marker move then happens here, with no server round trip.
// Live battles feed the same viewer step by step ("live" payloads append and re-send the last step once settled).
// Nothing from a recording is ever inserted unescaped: panels and charts were escaped on the server.
(function () {
  const host = element.querySelector("[data-viewer]") || element;
  const name = host.dataset.viewer || "replays";
  const SPEEDS = [0.5, 1, 2, 4, 8];
  host.innerHTML = `
    <div class="wc-viewer wc-persp-p1" tabindex="-1">
      <div class="wc-vbar">
        <button type="button" data-act="first" title="First (Home)">«</button>
        <button type="button" data-act="prev" title="Previous decision (←); Shift+← previous turn">◀</button>
        <button type="button" data-act="play" class="wc-play" title="Play / pause (Space)">▶ Play</button>
        <button type="button" data-act="next" title="Next decision (→); Shift+→ next turn">▶</button>
        <button type="button" data-act="last" title="Last (End)">»</button>
        <label>Speed <select data-role="speed">${SPEEDS.map(s => `<option value="${s}"${s === 1 ? " selected" : ""}>${s}/s</option>`).join("")}</select></label>
        <label>View as <select data-role="persp"><option value="p1">p1</option><option value="p2">p2</option></select></label>
        <label data-role="revealrow" class="wc-reveal" hidden><input type="checkbox" data-role="reveal"> Show what the other side knew (the battle is over)</label>
        <label>Jump to turn <input data-role="jump" type="text" inputmode="numeric" size="5" placeholder="turn"></label>
      </div>
      <div class="wc-vpos"><input data-role="slider" type="range" min="1" max="1" value="1" step="1" aria-label="Decision">
        <span data-role="label" class="wc-vlabel">No battle open</span></div>
      <div data-role="msg" class="wc-vmsg" aria-live="polite"></div>
      <div class="wc-vbody">
        <div class="wc-vmain"><div data-role="panel" class="wc-panel"><div class="wc-card wc-muted">No battle to show yet.</div></div>
          <div data-role="charts" class="wc-vcharts"></div></div>
        <ol data-role="list" class="wc-turnlist" aria-label="Turns"></ol>
      </div>
      <div class="wc-vlinkrow" data-role="linkrow"><label>Link to this turn <input data-role="link" type="text" readonly></label>
        <button type="button" data-act="copy">Copy</button></div>
    </div>`;
  const $ = (role) => host.querySelector(`[data-role="${role}"]`);
  const viewer = host.querySelector(".wc-viewer");
  const ui = { panel: $("panel"), charts: $("charts"), list: $("list"), slider: $("slider"), label: $("label"),
               msg: $("msg"), link: $("link"), jump: $("jump"), speed: $("speed"), persp: $("persp"),
               reveal: $("reveal"), revealRow: $("revealrow"), play: host.querySelector('[data-act="play"]') };
  // panels, list items and chart markers are held by absolute step (sparse: a long replay arrives in windows)
  const state = { data: null, panels: [], turns: [], total: 0, index: 0, marks: null, playing: false, timer: null,
                  follow: true, open: {}, token: null, items: [], want: null, fetching: false, queued: null,
                  shown: false, analysis: null, addressTimer: 0 };
  const AHEAD = 60;  // steps kept ready on either side of the shown one; a window is fetched before they run out
  const failedSprites = new Set();  // a sprite that failed once is never asked for again (offline: text only)
  window.__wcTimings = window.__wcTimings || [];
  window.__wcViewers = window.__wcViewers || {};

  // Whether the viewer is on the page (its tab shown), kept by an observer: asking the layout (offsetParent) in a
  // key handler would force a layout before every step.
  // A viewer that comes into view (its tab chosen: "Open in Replays" shows the battle before the tab is switched)
  // names its shown step in the address at once, not at the next key.
  new IntersectionObserver((entries) => {
    for (const e of entries) {
      const was = state.shown;
      state.shown = e.isIntersecting;
      if (state.shown && !was && name === "replays" && state.total) { const q = shareQuery(state.index); if (q) addressLater(q); }
    }
  }, { root: document, rootMargin: "100000px" }).observe(host);
  const visible = () => state.shown;
  const clampIndex = (i) => Math.max(0, Math.min(state.total - 1, i));
  const say = (text) => { ui.msg.textContent = text || ""; };
  const have = (i) => state.panels[i] !== undefined;

  function firstOfTurn(turn) {
    for (let i = 0; i < state.turns.length; i++) if (state.turns[i] >= turn) return i;
    return Math.max(0, state.turns.length - 1);
  }

  function shareQuery(i) {
    if (!state.data || !state.data.id) return "";
    const turn = state.turns[i];
    let q = `?replay=${encodeURIComponent(state.data.id)}&turn=${turn}`;
    if (firstOfTurn(turn) !== i) q += `&step=${i}`;
    return q;
  }

  function moveMarks(i) {
    if (!state.marks) return;
    for (const key of Object.keys(state.marks)) {
      const m = state.marks[key][i];
      const svg = ui.charts.querySelector(`[data-chart="${key}"] svg.wc-marks`);
      if (!m || !svg) continue;
      const line = svg.querySelector(".wc-mark");
      line.setAttribute("x1", m[0]); line.setAttribute("x2", m[0]);
      const d1 = svg.querySelector(".wc-dot-p1"), d2 = svg.querySelector(".wc-dot-p2");
      d1.setAttribute("cx", m[0]); d1.setAttribute("cy", m[1]);
      d2.setAttribute("cx", m[0]); d2.setAttribute("cy", m[2]);
    }
  }

  function position(i) {  // the slider and its label: always the battle as it is now (live: ended or not)
    ui.slider.max = String(state.total); ui.slider.value = String(i + 1);
    const decisions = state.data.decisions;
    ui.label.textContent = !have(i) ? `Loading decision ${i + 1}…`
      : i >= decisions ? `End of battle · turn ${state.turns[i]}`
      : `Decision ${i + 1} of ${decisions}${state.data.finished ? "" : " so far"} · turn ${state.turns[i]}`;
  }

  // Sprites come from Showdown's server. One probe image decides whether this page can reach it: until it has
  // loaded, panels are painted with names only; if it fails (or hangs: offline) they stay text, asked for once.
  const sprites = { ok: null, probe: null };
  function probeSprites(src) {
    if (sprites.probe) return;
    const img = sprites.probe = new Image();
    const settle = (ok) => { if (sprites.ok !== null) return; sprites.ok = ok; img.onload = img.onerror = null;
      if (ok && state.total && have(state.index)) redraw(); };
    img.onload = () => settle(true); img.onerror = () => settle(false);
    setTimeout(() => settle(false), 5000);
    img.referrerPolicy = "no-referrer"; img.src = src;
  }

  function paint(html) {  // a panel, without asking again for sprites that failed (or before they are known to load)
    const t = document.createElement("template");
    t.innerHTML = html;
    t.content.querySelectorAll("img.wc-sprite").forEach((img) => {
      const src = img.getAttribute("src");
      if (sprites.ok === null) probeSprites(src);
      if (sprites.ok !== true || failedSprites.has(src)) img.remove();
    });
    patch(ui.panel, t.content);
  }

  // Consecutive steps differ in a few texts, classes and widths of a ~230-element panel: only the nodes that differ
  // are changed, so a step restyles, lays out and paints those instead of a whole new panel (replacing it whole
  // cost about 30 ms of the renderer's time per step). A <details> keeps its open state (redraw() sets it).
  function patch(into, from) {
    const old = into.childNodes, fresh = [...from.childNodes];
    fresh.forEach((node, k) => {
      const was = old[k];
      if (!was) into.appendChild(node);
      else if (was.isEqualNode(node)) return;
      else if (was.nodeName !== node.nodeName || (was.nodeType !== 1 && was.nodeType !== 3)) into.replaceChild(node, was);
      else if (was.nodeType === 3) was.data = node.data;
      else {
        for (const a of [...was.attributes]) if (!node.hasAttribute(a.name) && a.name !== "open") was.removeAttribute(a.name);
        for (const a of node.attributes) if (was.getAttribute(a.name) !== a.value) was.setAttribute(a.name, a.value);
        patch(was, node);
      }
    });
    while (old.length > fresh.length) into.lastChild.remove();
  }

  function redraw() {
    paint(state.panels[state.index]);
    ui.panel.querySelectorAll("details[data-key]").forEach((d) => {
      const open = Boolean(state.open[d.dataset.key]);
      if (d.open !== open) d.open = open;
    });
    analysisPanel();
  }

  // --- an analysed replay (wolfeclick/ui/analysis_view.py: viewer_analysis, sent with the "open" payload): its
  // turning points and mistakes marked on their turn-list lines (tooltips set as text), and a valued decision's
  // option table in its decision panel (HTML escaped on the server).
  // the chart's signs (analysis_view.SIGNS, sent with the analysis: ● turning point, ◆ mistake), coloured by class
  const AN_KINDS = ["turning", "mistake"];
  function markItem(li, step) {
    const found = state.analysis && state.analysis.marks[String(step)];
    if (!found || li.querySelector(".wc-an-mark")) return;
    for (const kind of AN_KINDS) {
      const sign = (state.analysis.signs || {})[kind] || "•";
      if (!found[kind]) continue;
      const mark = document.createElement("span");
      mark.className = `wc-an-mark wc-an-mark-${kind}`;
      mark.textContent = ` ${sign}`; mark.title = found[kind]; mark.setAttribute("aria-label", found[kind]);
      li.appendChild(mark);
    }
  }
  function analysisPanel() {
    const html = state.analysis && state.analysis.options[String(state.index)];
    if (!html) return;
    // the shown decision's table only (the card above the viewer lists none), collapsible: its open state is kept
    // across steps like the panel's other sections (open until the person closes it)
    const box = document.createElement("details");
    box.className = "wc-card wc-an-panel";
    box.dataset.key = "an-options";
    box.open = state.open["an-options"] !== false;
    box.innerHTML = `<summary class="wc-subhead">What each option was worth (${state.analysis.k} rollouts each; the analysis sees both teams)</summary>${html}`;
    ui.panel.appendChild(box);
  }

  // The analysis card's chart (Replays: wolfeclick/ui/analysis_view.py, chart_svg) has a cursor at the shown
  // decision; its marks and the lines of its lists open their decision when clicked.
  function analysisChart() {
    return name === "replays" ? document.querySelector("#wc-replays-rescores svg.wc-an-chart") : null;
  }
  function moveCursor(i) {
    const box = name === "replays" && document.querySelector("#wc-replays-rescores");
    if (box && !box.__wcWatched) {  // the card arrives beside the battle, maybe after its first step: catch up then
      box.__wcWatched = true;
      new MutationObserver(() => { if (state.total) moveCursor(state.index); }).observe(box, { childList: true, subtree: true });
    }
    const svg = analysisChart(), cursor = svg && svg.querySelector(".wc-an-cursor");
    if (!cursor) return;
    if (svg.__xs === undefined) svg.__xs = new Map((svg.dataset.xs || "").split(",").filter(Boolean)
      .map((pair) => pair.split(":").map(Number)));
    const x = svg.__xs.get(i);
    cursor.style.display = x === undefined ? "none" : "";
    if (x !== undefined) { cursor.setAttribute("x1", x); cursor.setAttribute("x2", x); }
  }
  if (name === "replays") {
    document.addEventListener("click", (event) => {
      const mark = event.target.closest && event.target.closest("#wc-replays-rescores .wc-analysis [data-index]");
      if (!mark || !state.total || !state.data) return;
      pause();
      show(Number(mark.dataset.index));
      host.scrollIntoView({ block: "nearest" });
    });
  }

  // The address bar names the shown step: a step after a quiet moment moves it at once (in the same script turn as
  // the step: read right after a key, it named the step before), and the steps that follow within 200 ms are held
  // back to the last of them, so it moves at most five times a second: Safari refuses more than 100
  // history.replaceState calls in 30 s (Play at 8/s made 240), and each call is work in the browser's own process
  // on the step's frame. The link box beside the viewer follows every step at once.
  let addressWanted = null;
  function replaceAddress(q) { if (q !== location.search) history.replaceState(null, "", q + location.hash); }
  function addressLater(q) {
    if (state.addressTimer) { addressWanted = q; return; }
    replaceAddress(q);
    const quiet = () => {
      const next = addressWanted; addressWanted = null;
      if (next === null) { state.addressTimer = 0; return; }
      replaceAddress(next); state.addressTimer = setTimeout(quiet, 200);
    };
    state.addressTimer = setTimeout(quiet, 200);
  }

  function show(i, why) {
    if (!state.total) return;
    i = clampIndex(i);
    if (!have(i)) {  // not here yet: fetch the window around it in the background; shown when it arrives
      state.want = i; position(i); fetchWindow(i); return;
    }
    state.want = null;
    state.index = i;
    person = false;
    redraw();
    position(i);
    moveMarks(i);
    const old = ui.list.querySelector("li.wc-current");
    if (old) { old.classList.remove("wc-current"); old.tabIndex = -1; }
    const item = state.items[i];
    // the shown step's line is the list's one stop in the Tab order (Enter or Space on a line opens it)
    if (item) { item.classList.add("wc-current"); item.tabIndex = 0;
      if (why !== "live") { renderNear(i); scrollListTo(item); } }
    moveCursor(i);
    const q = shareQuery(i);
    if (q) {
      ui.link.value = location.origin + location.pathname + q;
      if (name === "replays" && visible()) addressLater(q);
    } else if (state.data.link) ui.link.value = state.data.link;
    if (why !== "play" && why !== "live") state.follow = i === state.total - 1;
    if (state.playing && i >= state.total - 1 && state.data.finished) pause();
    prefetch(i);
  }

  // The turn list follows the shown step without reading layout: an observer reports (after the frame's own
  // layout) whether the current line is out of the list's view, and the list scrolls by the difference.
  const listWatch = new IntersectionObserver((entries) => {
    for (const e of entries) {
      listWatch.unobserve(e.target);
      if (!e.rootBounds || e.intersectionRatio >= 0.99) continue;
      ui.list.scrollBy(0, e.boundingClientRect.top - e.rootBounds.top - e.rootBounds.height / 2);
    }
  }, { root: ui.list, threshold: [0, 0.99] });
  function scrollListTo(item) { listWatch.disconnect(); listWatch.observe(item); }

  // The list holds a line for every step, but only the lines near the one shown (or near where the person has
  // scrolled the list) are rendered: every rendered line costs each step's layout, pre-paint and paint, in view or
  // not (a 378-line list: about 5 of a step's 18 ms). The others are display: none, and two blocks before and after
  // them (the list's ::before and ::after) stand in for their height (each line's height as last rendered, told by
  // a ResizeObserver; 23 px until then), so the scroll bar and the lines in view stay where they were (a guessed
  // height moves the lines a little when a person scrolls to lines never rendered before). The rendered lines move
  // in blocks of a third of what the list's box holds (at least 5): a step within a block changes no line's
  // rendering and no stand-in (moving them every step moved every rendered line, and doubled a step's pre-paint).
  // Three blocks are kept before the shown line's block and three from it on: the box's worth above (the follow
  // lets the line reach the box's bottom) and two thirds of it below.
  let holds = 31;  // lines the list's box holds (at 23 px a line), told by a ResizeObserver: 720 px, 220 on a phone
  const heights = new Map();  // step → its line's height, px
  let near = [0, -1], person = false;
  const sizes = new ResizeObserver((entries) => {
    for (const e of entries) heights.set(Number(e.target.dataset.step), e.borderBoxSize && e.borderBoxSize[0]
      ? e.borderBoxSize[0].blockSize : e.contentRect.height);
  });
  const lineHeight = (s) => heights.get(s) ?? 23;
  new ResizeObserver((entries) => {
    for (const e of entries) if (e.contentRect.height > 0) holds = Math.ceil(e.contentRect.height / 23);
  }).observe(ui.list);
  function placeLine(li, s) {  // a line just added: rendered if it is near, else stood in for
    const isNear = s >= near[0] && s <= near[1];
    li.classList.toggle("wc-far", !isNear);
    if (isNear) sizes.observe(li);
  }
  function pad() {
    let above = 0, below = 0;
    state.items.forEach((li, s) => { if (li && s < near[0]) above += lineHeight(s); else if (li && s > near[1]) below += lineHeight(s); });
    ui.list.style.setProperty("--wc-above", `${above}px`); ui.list.style.setProperty("--wc-below", `${below}px`);
  }
  function renderNear(center) {
    const size = Math.max(5, Math.ceil(holds / 3));
    const block = Math.floor(Math.max(0, center) / size) * size;
    const lo = Math.max(0, block - 3 * size), hi = block + 3 * size - 1;  // lines still to come there are near too
    if (lo === near[0] && hi === near[1]) return;
    const [oldLo, oldHi] = near;
    near = [lo, hi];
    for (let s = oldLo; s <= oldHi; s++) {
      const li = state.items[s];
      if (li && (s < lo || s > hi)) { li.classList.add("wc-far"); sizes.unobserve(li); }
    }
    for (let s = lo; s <= hi; s++) {
      const li = state.items[s];
      if (li && (s < oldLo || s > oldHi)) { li.classList.remove("wc-far"); sizes.observe(li); }
    }
    pad();
  }
  function forgetLines() { near = [0, -1]; heights.clear(); sizes.disconnect(); pad(); }
  // A person scrolling the list (a wheel, a touch, a press on it or a key in it since the last step; not the list's
  // own follow, nor the browser keeping the offset within a list that got shorter): the lines around the middle of
  // its box are rendered. Reading the offset here costs no layout: nothing changed since the frame that scrolled.
  for (const type of ["wheel", "touchstart", "pointerdown", "keydown"]) ui.list.addEventListener(type, () => { person = true; }, { passive: true });
  ui.list.addEventListener("scroll", () => {
    if (!person) return;
    let y = ui.list.scrollTop + ui.list.clientHeight / 2, s = 0;
    for (; s < state.items.length - 1; s++) { if (!state.items[s]) continue; y -= lineHeight(s); if (y < 0) break; }
    renderNear(s);
  }, { passive: true });

  // --- long replays: windows of steps fetched from the server in the background (no page reload) ---------------
  function apiBase() {
    const root = (window.gradio_config && window.gradio_config.root) || "";
    if (root) return root.replace(/\/$/, "") + "/";
    return location.pathname.endsWith("/") ? location.pathname : location.pathname.replace(/[^/]*$/, "");
  }

  async function callApi(endpoint, data) {  // Gradio's REST API: queue the call, then read its event stream
    const url = `${apiBase()}gradio_api/call/${endpoint}`;
    const queued = await fetch(url, { method: "POST", headers: { "Content-Type": "application/json" },
                                      body: JSON.stringify({ data }) });
    if (!queued.ok) throw new Error(`the server answered ${queued.status}`);
    const { event_id: id } = await queued.json();
    const text = await (await fetch(`${url}/${id}`)).text();
    const match = text.match(/event: complete\ndata: (.*)/);
    if (!match) throw new Error("the server sent no window");
    return JSON.parse(match[1])[0];
  }

  function prefetch(i) {
    if (name !== "replays" || !state.data || !state.data.id) return;
    const high = Math.min(state.total - 1, i + AHEAD), low = Math.max(0, i - AHEAD);
    if (!have(high)) fetchWindow(high);
    else if (!have(low)) fetchWindow(low);
  }

  function fetchWindow(at) {
    if (name !== "replays" || !state.data || !state.data.id) return;
    if (state.fetching) { state.queued = at; return; }
    state.fetching = true;
    const token = state.token, id = state.data.id;
    callApi("replay_window", [id, at, token]).then((payload) => {
      if (payload && payload.error) say(payload.error);
      else if (payload && payload.token === state.token && payload.id === id) merge(payload);
    }).catch((e) => say(`Could not fetch more of this battle: ${e.message}`)).finally(() => {
      state.fetching = false;
      const next = state.queued; state.queued = null;
      if (state.want !== null && !have(state.want)) fetchWindow(state.want);
      else if (next !== null && !have(next)) fetchWindow(next);
      else prefetch(state.index);
    });
  }

  function merge(payload) {  // a window: its panels, markers and list lines, wherever they belong
    payload.panels.forEach((p, k) => { state.panels[payload.first + k] = p; });
    addMarks(payload);
    insertItems(payload.first, payload.list);
    if (state.want !== null && have(state.want)) show(state.want, state.playing ? "play" : undefined);
  }

  function addMarks(payload) {
    state.marks = state.marks || {};
    for (const [key, values] of Object.entries(payload.marks || {})) {
      const into = state.marks[key] || (state.marks[key] = []);
      values.forEach((m, k) => { into[payload.marks_first + k] = m; });
    }
  }

  function insertItems(first, html) {  // list lines for steps first…, each before the next line already there
    if (!html.length) return;
    const tmp = document.createElement("ol");
    tmp.innerHTML = html.join("");
    const fresh = [...tmp.children];
    let next = null;
    for (let s = first + fresh.length; s < state.items.length; s++) if (state.items[s]) { next = state.items[s]; break; }
    for (let k = fresh.length - 1; k >= 0; k--) {
      const s = first + k;
      if (state.items[s]) { next = state.items[s]; continue; }
      ui.list.insertBefore(fresh[k], next);
      state.items[s] = fresh[k]; next = fresh[k];
      markItem(fresh[k], s);
      placeLine(fresh[k], s);
    }
    pad();
    if (state.index >= first && state.index < first + fresh.length && state.items[state.index])
      state.items[state.index].classList.add("wc-current");
  }

  function play() {
    if (!state.total) return;
    if (state.index >= state.total - 1 && state.data.finished) show(0, "play");
    state.playing = true; ui.play.textContent = "❚❚ Pause"; ui.play.classList.add("wc-playing");
    const interval = 1000 / Number(ui.speed.value || 1);
    const started = performance.now();
    let ticks = 0;
    const tick = () => {
      if (!state.playing) return;
      ticks += 1;
      window.__wcPlayTicks = (window.__wcPlayTicks || []);
      window.__wcPlayTicks.push(performance.now());
      if (state.want === null) show(state.index + 1, "play");  // else: the next window is on its way
      if (!state.playing) return;
      state.timer = setTimeout(tick, Math.max(0, started + (ticks + 1) * interval - performance.now()));
    };
    state.timer = setTimeout(tick, interval);
  }

  function pause() {
    state.playing = false;
    if (state.timer) clearTimeout(state.timer);
    state.timer = null;
    ui.play.textContent = "▶ Play"; ui.play.classList.remove("wc-playing");
  }

  function turnStep(direction) {
    const turn = state.turns[state.index];
    if (direction > 0) {
      for (let i = state.index + 1; i < state.total; i++) if (state.turns[i] > turn) return i;
      return state.total - 1;
    }
    const start = firstOfTurn(turn);
    if (start < state.index) return start;
    return start > 0 ? firstOfTurn(state.turns[start - 1]) : 0;
  }

  function jump(value) {
    const turns = state.turns.slice(0, state.data ? state.data.decisions : 0);
    if (!turns.length) return;
    const first = turns[0], last = turns[turns.length - 1];
    const text = String(value).trim();
    if (text === "") { say(`Type a turn number (${first}–${last}) first.`); return; }
    // decimal digits only: Number() would read "0x10" as 16 and "" as 0
    if (!/^[+-]?(\d+(\.\d*)?|\.\d+)$/.test(text)) { say(`“${text.slice(0, 20)}” is not a turn number (${first}–${last}): staying here.`); return; }
    const number = Number(text);
    const wanted = Math.trunc(number);
    let note = Number.isInteger(number) ? "" : `Turn numbers are whole: ${text.slice(0, 20)} → ${wanted}. `;
    if (wanted < first || wanted > last) {
      const target = wanted < first ? first : last;
      say(`${note}Turn ${wanted} is not in this battle (turns ${first}–${last}): showing turn ${target}.`);
      show(firstOfTurn(target)); return;
    }
    say(note.trim()); show(firstOfTurn(wanted));
  }

  function act(what) {
    if (what === "play") { state.playing ? pause() : play(); return; }
    if (what === "copy") { ui.link.select(); try { navigator.clipboard.writeText(ui.link.value); } catch (e) { /* no clipboard */ } return; }
    pause();
    if (what === "first") show(0);
    else if (what === "last") { show(state.total - 1); state.follow = true; }
    else if (what === "prev") show(state.index - 1);
    else if (what === "next") show(state.index + 1);
  }

  host.addEventListener("click", (event) => {
    const button = event.target.closest("[data-act]");
    if (button) { act(button.dataset.act); return; }
    const li = event.target.closest("li[data-step]");
    if (li) { pause(); show(Number(li.dataset.step)); }
  });
  ui.list.addEventListener("keydown", (event) => {  // a line reached with the keyboard: Enter or Space opens it
    const li = event.target.closest && event.target.closest("li[data-step]");
    if (!li || (event.key !== "Enter" && event.key !== " ") || event.altKey || event.ctrlKey || event.metaKey) return;
    event.preventDefault(); event.stopPropagation();  // Space here opens the line; it does not play
    pause(); show(Number(li.dataset.step));
    const now = state.items[state.index];
    if (now && now !== document.activeElement) now.focus({ preventScroll: true });
  });
  host.addEventListener("toggle", (event) => {
    const d = event.target;
    if (d.tagName === "DETAILS" && d.dataset.key) state.open[d.dataset.key] = d.open;
  }, true);
  ui.slider.addEventListener("input", () => { pause(); show(Number(ui.slider.value) - 1); });
  function perspective(side) {
    viewer.classList.toggle("wc-persp-p1", side === "p1");
    viewer.classList.toggle("wc-persp-p2", side === "p2");
  }
  ui.persp.addEventListener("change", () => perspective(ui.persp.value));
  // A person's own battle: the page shows it as their side sees it until it ends (the server does not even send
  // the rest); then everything may be shown, and this toggle says so.
  function secrecy() {
    const you = state.data && state.data.you;
    const keep = Boolean(you) && (state.data.secret || !ui.reveal.checked);
    ui.revealRow.hidden = !you || state.data.secret;
    viewer.classList.toggle("wc-keep-secret", keep);
    viewer.classList.toggle("wc-secret-live", Boolean(you) && Boolean(state.data.secret));  // no toggle to name yet
    viewer.classList.toggle("wc-you-p1", you === "p1");
    viewer.classList.toggle("wc-you-p2", you === "p2");
    ui.persp.disabled = keep;
    if (keep) { ui.persp.value = you; perspective(you); }
  }
  ui.reveal.addEventListener("change", secrecy);
  host.addEventListener("error", (event) => {  // a sprite that cannot load: text only, and never asked again
    const img = event.target;
    if (img && img.tagName === "IMG") { failedSprites.add(img.getAttribute("src")); img.remove(); }
  }, true);
  ui.speed.addEventListener("change", () => { if (state.playing) { pause(); play(); } });
  ui.jump.addEventListener("keydown", (event) => { if (event.key === "Enter") { event.preventDefault(); pause(); jump(ui.jump.value); } });
  ui.jump.addEventListener("change", () => { pause(); jump(ui.jump.value); });

  document.addEventListener("keydown", (event) => {
    if (!visible() || !state.total || event.altKey || event.ctrlKey || event.metaKey) return;
    const target = event.target;
    if (target && (target.isContentEditable || /^(TEXTAREA|SELECT)$/.test(target.tagName) ||
        (target.tagName === "INPUT" && (target.type !== "range" || !host.contains(target))))) return;  // another slider (side by side's) keeps its keys
    const t0 = event.timeStamp || performance.now();
    const h0 = performance.now();
    let done = true;
    if (event.key === "ArrowRight") { pause(); show(event.shiftKey ? turnStep(1) : state.index + 1); }
    else if (event.key === "ArrowLeft") { pause(); show(event.shiftKey ? turnStep(-1) : state.index - 1); }
    else if (event.key === "Home") { pause(); show(0); }
    else if (event.key === "End") { pause(); show(state.total - 1); state.follow = true; }
    else if (event.key === " " || event.key === "Spacebar") { act("play"); }
    else done = false;
    if (!done) return;
    event.preventDefault();
    const now = performance.now();
    const sync = now - t0, handler = now - h0;
    requestAnimationFrame(() => window.__wcTimings.push({ key: event.key, sync, handler, frame: performance.now() - t0 }));
  });

  function setItems(fromStep, html) {  // live: the lines from fromStep on are replaced by these
    while (state.items.length > fromStep) { const li = state.items.pop(); if (li) li.remove(); }
    if (html.length) {
      const tmp = document.createElement("ol");
      tmp.innerHTML = html.join("");
      for (const li of [...tmp.children]) { ui.list.appendChild(li); state.items.push(li); placeLine(li, state.items.length - 1); }
    }
    if (near[1] < near[0]) renderNear(0); else pad();
  }

  function receive(payload) {
    if (payload.kind === "clear") { pause(); state.total = 0; state.data = null; state.panels = []; state.items = [];
      ui.list.innerHTML = ""; forgetLines(); ui.charts.innerHTML = ""; ui.panel.innerHTML = payload.html || ""; ui.label.textContent = "";
      say(payload.message || ""); return; }
    if (payload.kind === "message") { say(payload.message); return; }
    if (payload.kind === "window") { if (payload.token === state.token) merge(payload); return; }
    const fresh = payload.kind === "open" || payload.token !== state.token;
    // the open battle sent again without a step asked for (a rescore or an analysis stored beside it, the same file
    // uploaded again): the viewer stays at the decision it shows
    const keep = payload.kind === "open" && !payload.asked && state.data && state.data.id && state.total
      && state.data.id === payload.id && payload.total > 0 ? Math.min(state.index, payload.total - 1) : null;
    if (fresh) {
      pause(); state.panels = []; state.items = []; state.marks = {}; ui.list.innerHTML = ""; forgetLines(); state.follow = true;
      state.want = null; state.queued = null; ui.reveal.checked = false;
      state.analysis = payload.analysis || null;
      say("");
    }
    state.token = payload.token; state.data = payload; state.turns = payload.turns; state.total = payload.total;
    if (payload.kind === "live") state.panels.length = Math.min(state.panels.length, payload.first);
    payload.panels.forEach((p, k) => { state.panels[payload.first + k] = p; });
    if (payload.kind === "live") setItems(payload.first, payload.list); else insertItems(payload.first, payload.list);
    ui.charts.innerHTML = payload.charts; addMarks(payload);
    secrecy();
    if (payload.kind === "open") { show(keep === null ? payload.start : keep, "open"); state.follow = false; }
    else if (state.follow || fresh) show(state.total - 1, "live");
    else if (state.index >= payload.first) show(state.index, "live");
    else { moveMarks(state.index); position(state.index); }
    // the link box names the shown step, not the newest one, when the person has stepped back (or the battle ended)
    if (payload.kind === "live" && payload.link && (state.follow || !shareQuery(state.index))) ui.link.value = payload.link;
  }

  window.__wcViewers[name] = { receive, show, play, pause, state, jump };
  const pending = (window.__wcPending || {})[name];
  if (pending) { delete window.__wcPending[name]; try { receive(JSON.parse(pending)); } catch (e) { console.error(e); } }
  if (window.innerWidth < 700) document.querySelectorAll(".wc-controls-col .label-wrap.open").forEach((l) => l.click());
})();
