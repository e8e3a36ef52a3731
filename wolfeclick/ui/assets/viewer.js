// WolfeClick Arena's battle viewer: runs in the browser as a gr.HTML component's js_on_load (`element` is the
// component). The server sends a battle once (wolfeclick/ui/viewer.py: escaped HTML panels per step, SVG charts,
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
               play: host.querySelector('[data-act="play"]') };
  const state = { data: null, panels: [], first: 0, turns: [], total: 0, index: 0, marks: null, marksFirst: 0,
                  playing: false, timer: null, follow: true, open: {}, token: null, items: [] };
  window.__wcTimings = window.__wcTimings || [];
  window.__wcViewers = window.__wcViewers || {};

  const visible = () => host.offsetParent !== null;
  const clampIndex = (i) => Math.max(0, Math.min(state.total - 1, i));
  const say = (text) => { ui.msg.textContent = text || ""; };

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
      const m = state.marks[key][i - state.marksFirst];
      const svg = ui.charts.querySelector(`[data-chart="${key}"] svg`);
      if (!m || !svg) continue;
      const line = svg.querySelector(".wc-mark");
      line.setAttribute("x1", m[0]); line.setAttribute("x2", m[0]);
      const d1 = svg.querySelector(".wc-dot-p1"), d2 = svg.querySelector(".wc-dot-p2");
      d1.setAttribute("cx", m[0]); d1.setAttribute("cy", m[1]);
      d2.setAttribute("cx", m[0]); d2.setAttribute("cy", m[2]);
    }
  }

  function show(i, why) {
    if (!state.total) return;
    i = clampIndex(i);
    const local = i - state.first;
    if (local < 0 || local >= state.panels.length) {  // outside the window this payload carries: ask the server
      if (state.data && state.data.id && name === "replays") { location.search = `?replay=${encodeURIComponent(state.data.id)}&step=${i}`; }
      return;
    }
    state.index = i;
    const onPage = name === "replays" && visible();  // read layout before writing the DOM (no forced reflow)
    ui.panel.innerHTML = state.panels[local];
    ui.panel.querySelectorAll("details[data-key]").forEach((d) => { if (state.open[d.dataset.key]) d.open = true; });
    ui.slider.max = String(state.total); ui.slider.value = String(i + 1);
    const decisions = state.data.decisions;
    ui.label.textContent = i >= decisions ? `End of battle · turn ${state.turns[i]}`
      : `Decision ${i + 1} of ${decisions}${state.data.finished ? "" : " so far"} · turn ${state.turns[i]}`;
    moveMarks(i);
    const old = ui.list.querySelector("li.wc-current");
    if (old) old.classList.remove("wc-current");
    const item = state.items[i - state.first];
    if (item) { item.classList.add("wc-current"); if (why !== "live") requestAnimationFrame(() => scrollListTo(item)); }
    const q = shareQuery(i);
    if (q) {
      ui.link.value = location.origin + location.pathname + q;
      if (onPage) history.replaceState(null, "", q + location.hash);
    } else if (state.data.link) ui.link.value = state.data.link;
    if (why !== "play" && why !== "live") state.follow = i === state.total - 1;
    if (state.playing && i >= state.total - 1 && state.data.finished) pause();
  }

  function scrollListTo(item) {  // in the frame after the redraw: reading layout here forces no extra reflow
    const top = item.offsetTop, list = ui.list;
    if (top < list.scrollTop || top + item.offsetHeight > list.scrollTop + list.clientHeight)
      list.scrollTop = top - list.clientHeight / 2;
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
      show(state.index + 1, "play");
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
    const number = Number(text);
    if (text === "" || !Number.isFinite(number)) { say(`“${text.slice(0, 20)}” is not a turn number: showing turn ${first}.`); show(firstOfTurn(first)); return; }
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
  host.addEventListener("toggle", (event) => {
    const d = event.target;
    if (d.tagName === "DETAILS" && d.dataset.key) state.open[d.dataset.key] = d.open;
  }, true);
  ui.slider.addEventListener("input", () => { pause(); show(Number(ui.slider.value) - 1); });
  ui.persp.addEventListener("change", () => {
    viewer.classList.toggle("wc-persp-p1", ui.persp.value === "p1");
    viewer.classList.toggle("wc-persp-p2", ui.persp.value === "p2");
  });
  ui.speed.addEventListener("change", () => { if (state.playing) { pause(); play(); } });
  ui.jump.addEventListener("keydown", (event) => { if (event.key === "Enter") { event.preventDefault(); pause(); jump(ui.jump.value); } });
  ui.jump.addEventListener("change", () => { pause(); jump(ui.jump.value); });

  document.addEventListener("keydown", (event) => {
    if (!visible() || !state.total || event.altKey || event.ctrlKey || event.metaKey) return;
    const target = event.target;
    if (target && (target.isContentEditable || /^(TEXTAREA|SELECT)$/.test(target.tagName) ||
        (target.tagName === "INPUT" && target.type !== "range"))) return;
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

  function setItems(fromStep, html) {
    // drop list items from fromStep on, then append the new ones
    const keep = Math.max(0, fromStep - state.first);
    while (state.items.length > keep) state.items.pop().remove();
    if (html.length) {
      const tmp = document.createElement("ol");
      tmp.innerHTML = html.join("");
      for (const li of [...tmp.children]) { ui.list.appendChild(li); state.items.push(li); }
    }
  }

  function receive(payload) {
    if (payload.kind === "clear") { pause(); state.total = 0; state.data = null; state.panels = []; state.items = [];
      ui.list.innerHTML = ""; ui.charts.innerHTML = ""; ui.panel.innerHTML = payload.html || ""; ui.label.textContent = "";
      say(payload.message || ""); return; }
    if (payload.kind === "message") { say(payload.message); return; }
    const fresh = payload.kind === "open" || payload.token !== state.token;
    if (fresh) {
      pause(); state.panels = []; state.items = []; ui.list.innerHTML = ""; state.first = payload.first; state.follow = true;
      say("");
    }
    state.token = payload.token; state.data = payload; state.turns = payload.turns; state.total = payload.total;
    state.panels.length = Math.max(0, payload.first - state.first);
    for (const p of payload.panels) state.panels.push(p);
    setItems(payload.first, payload.list);
    ui.charts.innerHTML = payload.charts; state.marks = payload.marks; state.marksFirst = payload.marks_first || 0;
    if (payload.kind === "open") { show(payload.start, "open"); state.follow = false; }
    else if (state.follow || fresh) show(state.total - 1, "live");
    else if (state.index >= payload.first) show(state.index, "live");
    else moveMarks(state.index);
    if (payload.kind === "live" && payload.link) ui.link.value = payload.link;
  }

  window.__wcViewers[name] = { receive, show, play, pause, state, jump };
  const pending = (window.__wcPending || {})[name];
  if (pending) { delete window.__wcPending[name]; try { receive(JSON.parse(pending)); } catch (e) { console.error(e); } }
  if (window.innerWidth < 700) document.querySelectorAll(".wc-controls-col .label-wrap.open").forEach((l) => l.click());
})();
