// The Mini App calculator: controls → a contract Request → POST /app/api/answer → the answer drawn.
// Words come from /app/api/init (bot/locales/*/webapp.ftl); numbers and sentences from the server's
// answer (core.answer.Answer): nothing is computed here but the bar's geometry.
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  const tg = () => (window.Telegram && window.Telegram.WebApp) || null;
  const DEBOUNCE_MS = 250;
  const SEARCH_MS = 200;
  const AXIS_MARGIN = 1.03; // as the picture (core/picture.py)
  const BAND_COLOURS = ["#1b7f3b", "#b86e00", "#c0262d"]; // fits / tight / does not fit: VERDICT_COLOURS
  let INIT = "";
  let S = {};
  let CONF = null;
  let seq = 0;
  let timer = null;
  let searchTimer = null;
  let searchSeq = 0;
  let modelId = "";
  const touched = new Set();
  const values = {};

  // Telegram puts initData in the launch URL's fragment (tgWebAppData) and in WebApp.initData.
  function initData() {
    const w = tg();
    if (w && w.initData) return w.initData;
    return new URLSearchParams(location.hash.slice(1)).get("tgWebAppData") || "";
  }

  async function api(method, path, body) {
    let r;
    try {
      r = await fetch(path, {
        method,
        headers: { "Content-Type": "application/json", "X-Telegram-Init-Data": INIT },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (e) {
      const err = new Error("network");
      err.data = null;
      throw err;
    }
    let data = null;
    try { data = await r.json(); } catch (e) { data = null; }
    if (!r.ok) {
      const err = new Error((data && data.error) || "internal");
      err.data = data || {};
      throw err;
    }
    return data;
  }

  function say(text, error) {
    const s = $("status");
    s.textContent = text || "";
    s.classList.toggle("error", !!error);
  }

  function errorText(e) {
    if (!e.data) return S["error-network"] || "network";
    if (e.message === "invalid" || e.message === "model") return e.data.message || S["error-internal"];
    return S["error-" + e.message] || e.data.message || S["error-internal"];
  }

  const el = (tag, cls, text) => {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  };
  const number = (v) => new Intl.NumberFormat(CONF ? CONF.lang : "ru").format(v);

  // --- sliders: powers of two where the field grows that way, linear otherwise. A log2 slider's
  // positions are its stops: its min, the powers of two between, its max (a model's own, as the
  // answer's `sliders` bound it: 40960 is the top stop of a 40K model).
  function sliderOf(field) { return $("s-" + field); }
  function stops(c) {
    const out = [c.min];
    for (let p = 2 ** Math.floor(Math.log2(c.min) + 1); p < c.max; p *= 2) out.push(p);
    if (c.max > c.min) out.push(c.max);
    return out;
  }
  function fromSlider(field) {
    const c = CONF.sliders[field];
    const v = Number(sliderOf(field).value);
    return c.log2 ? stops(c)[v] : v;
  }
  function showValue(field) {
    const out = sliderOf(field).parentElement.querySelector("output");
    const v = values[field];
    out.textContent = v === undefined ? "" : field === "resolution" ? `${v}×${v}` : number(v);
  }
  function position(c, v) { // the stop nearest v on the log scale; the top one for v at or past max
    const at = stops(c);
    if (v >= c.max) return at.length - 1;
    const far = (i) => Math.abs(Math.log2(at[i]) - Math.log2(Math.max(v, 1)));
    return at.reduce((best, _, i) => (far(i) < far(best) ? i : best), 0);
  }
  function setSlider(field, v) {
    const c = CONF.sliders[field];
    values[field] = v;
    sliderOf(field).value = c.log2 ? position(c, v) : v;
    showValue(field);
  }
  function bound(field) { // the input's range for CONF.sliders[field]
    const c = CONF.sliders[field];
    const input = sliderOf(field);
    input.min = c.log2 ? 0 : c.min;
    input.max = c.log2 ? stops(c).length - 1 : c.max;
    input.step = c.log2 || field !== "resolution" ? 1 : 64;
    input.dataset.max = String(c.max);
  }
  function setupSlider(field) {
    bound(field);
    sliderOf(field).addEventListener("input", () => {
      touched.add(field);
      values[field] = fromSlider(field);
      showValue(field);
      schedule();
    });
  }
  // The answer's bounds of the sliders that follow its model; a value set past them stays as set
  // (and sized so: the answer says it is beyond the model), the slider at its top.
  function rebound(sliders) {
    for (const [field, c] of Object.entries(sliders || {})) {
      const was = CONF.sliders[field];
      if (was && was.min === c.min && was.max === c.max) continue;
      CONF.sliders[field] = c;
      bound(field);
      if (values[field] !== undefined) setSlider(field, values[field]);
    }
  }

  function visible(task) {
    document.querySelectorAll(".slider[data-tasks]").forEach((node) => {
      node.hidden = !node.dataset.tasks.split(" ").includes(task);
    });
    document.querySelector('.slider[data-field="num_gpus"]').hidden = !$("gpu").value;
  }

  // --- the request the controls say
  function request() {
    const task = $("task").value;
    const r = Object.assign({}, CONF.tasks.find((t) => t.id === task).fields);
    r.model = modelId || $("model").value.trim();
    if ($("precision").value) r.precision = $("precision").value;
    document.querySelectorAll(".slider[data-tasks]").forEach((node) => {
      const field = node.dataset.field;
      if (node.hidden || !touched.has(field)) return;
      r[field] = field === "resolution" ? [values[field], values[field]] : values[field];
    });
    const gpu = $("gpu").value;
    if (gpu) {
      r.gpus = [gpu];
      r.num_gpus = values.num_gpus || 1;
    }
    return r;
  }

  function schedule(delay) {
    clearTimeout(timer);
    timer = setTimeout(refresh, delay === undefined ? DEBOUNCE_MS : delay);
  }

  async function refresh() {
    const mine = ++seq;
    const asked = request();
    $("app").classList.add("loading");
    $("result").dataset.state = "loading";
    try {
      const answer = await api("POST", "/app/api/answer", asked);
      if (mine !== seq) return;
      render(answer, asked);
      say("");
    } catch (e) {
      if (mine !== seq) return;
      $("result").dataset.state = "error";
      say(errorText(e), true);
    } finally {
      if (mine === seq) $("app").classList.remove("loading");
    }
  }

  // --- the answer drawn
  function render(a, asked) {
    const res = $("result");
    $("lead").textContent = a.lead;
    $("lead").style.borderLeft = `4px solid ${a.colour}`;
    $("lead").style.paddingLeft = "6px";
    $("need").textContent = a.need;
    const card = a.cards.find((c) => c.as_asked) || a.cards[0] || null;
    const total = a.parts.reduce((sum, p) => sum + p.bytes, 0);
    const axis = Math.max(total, card ? card.usable_bytes : 0, 1) * AXIS_MARGIN;
    const pct = (n) => `${(100 * n) / axis}%`;
    let start = 0;
    const segments = a.parts.map((p) => {
      const seg = el("div", "seg");
      seg.style.left = pct(start);
      seg.style.width = pct(p.bytes);
      seg.style.background = p.colour;
      seg.title = `${p.label}: ${p.size}`;
      seg.dataset.code = p.code;
      start += p.bytes;
      return seg;
    });
    if (card) {
      const mark = el("div", "mark");
      mark.style.left = `calc(${pct(card.usable_bytes)} - 1px)`;
      mark.title = `${card.config}: ${card.usable}`;
      segments.push(mark);
    }
    $("bar").replaceChildren(...segments);
    const bands = [];
    if (card) {
      const band = (from, to, colour, title) => {
        const span = el("span");
        span.style.left = pct(from);
        span.style.width = pct(Math.max(to - from, 0));
        span.style.background = colour;
        span.title = title;
        return span;
      };
      bands.push(band(0, card.comfortable_bytes, BAND_COLOURS[0], S["band-comfortable"]));
      bands.push(band(card.comfortable_bytes, card.tight_bytes, BAND_COLOURS[1], S["band-tight"]));
      bands.push(band(card.tight_bytes, axis, BAND_COLOURS[2], ""));
    }
    $("bands").replaceChildren(...bands);
    const key = el("span", "key");
    if (card) {
      for (const [colour, words] of [[BAND_COLOURS[0], S["band-comfortable"]], [BAND_COLOURS[1], S["band-tight"]]]) {
        const swatch = el("i");
        swatch.style.background = colour;
        key.append(swatch, el("span", "", words));
      }
    }
    $("scale").replaceChildren(
      el("span", "", card ? `${card.need} / ${card.usable} ${S.usable}` : a.parts_title), key,
    );
    $("legend").replaceChildren(...a.parts.map((p) => {
      const li = el("li");
      const swatch = el("i");
      swatch.style.background = p.colour;
      li.append(swatch, el("span", "", `${p.label}: ${p.size}`));
      return li;
    }));
    const offer = a.offer;
    $("offer").textContent = offer ? [offer.config, offer.price, offer.speed].filter(Boolean).join(" · ") : "";
    const rent = $("rent");
    rent.hidden = !(offer && offer.url);
    rent.href = offer && offer.url ? offer.url : "#";
    $("speed").textContent = a.speed || "";
    $("tight").textContent = [a.tight, a.taken].filter(Boolean).join(" ");
    $("mitigations-title").textContent = a.mitigations.length ? a.mitigations_title : "";
    $("mitigations").replaceChildren(...a.mitigations.map((m) => el("li", "", m)));
    rebound(a.sliders);
    // Sliders not moved show what the estimate assumed (the core's defaults).
    for (const field of Object.keys(CONF.sliders)) {
      if (touched.has(field) || a.request[field] === undefined || a.request[field] === null) continue;
      const v = a.request[field];
      setSlider(field, Array.isArray(v) ? v[0] : v);
    }
    res.dataset.totalBytes = String(a.total_bytes);
    res.dataset.verdict = a.verdict || "none";
    res.dataset.request = JSON.stringify(asked);
    res.dataset.state = "ready";
  }

  // --- the model search: the catalogue, or a Hugging Face id as typed
  function search() {
    const q = $("model").value.trim();
    const list = $("suggest");
    const mine = ++searchSeq;
    api("GET", `/app/api/models?task=${encodeURIComponent($("task").value)}&q=${encodeURIComponent(q)}`)
      .then((data) => {
        if (mine !== searchSeq) return; // a later search has been asked for
        list.replaceChildren(...data.models.map((m) => {
          const li = el("li", "", m.params_b ? `${m.name} · ${number(m.params_b)}B` : m.name);
          li.tabIndex = 0;
          li.dataset.id = m.id;
          li.addEventListener("mousedown", (ev) => { ev.preventDefault(); pick(m); });
          li.addEventListener("keydown", (ev) => { if (ev.key === "Enter") pick(m); });
          return li;
        }));
        list.hidden = data.models.length === 0;
      })
      .catch((e) => say(errorText(e), true));
  }
  function pick(m) {
    $("model").value = m.name;
    modelId = m.id;
    $("suggest").hidden = true;
    schedule(0);
  }

  async function relay(action, button) {
    button.disabled = true;
    try {
      await api("POST", `/app/api/${action}`, request());
      say(S[action === "lead" ? "sent-quote" : "sent-chat"]);
      const w = tg();
      if (w && w.initData && action === "lead") w.close(); // the form waits in the chat
    } catch (e) {
      say(errorText(e), true);
    } finally {
      button.disabled = false;
    }
  }

  function option(value, text) {
    const o = el("option", "", text);
    o.value = value;
    return o;
  }

  function applyStart(st) {
    const task = st.task === "training" ? (st.method || "full")
      : st.task === "image_generation" ? "image" : st.task === "video_generation" ? "video" : "inference";
    $("task").value = task;
    const model = typeof st.model === "string" ? st.model : CONF.default_models[task];
    $("model").value = model || "";
    modelId = model || "";
    if (st.precision && [...$("precision").options].some((o) => o.value === st.precision)) {
      $("precision").value = st.precision;
    }
    for (const field of Object.keys(CONF.sliders)) {
      const v = st[field];
      if (v === undefined || v === null) continue;
      touched.add(field);
      setSlider(field, Array.isArray(v) ? v[0] : v);
    }
    if (Array.isArray(st.gpus) && st.gpus.length && [...$("gpu").options].some((o) => o.value === st.gpus[0])) {
      $("gpu").value = st.gpus[0];
    }
  }

  async function start() {
    INIT = initData();
    const w = tg();
    if (w) { w.ready(); w.expand(); }
    const startParam = new URLSearchParams(location.search).get("r")
      || new URLSearchParams(INIT).get("start_param") || "";
    try {
      CONF = await api("POST", "/app/api/init", { start: startParam });
    } catch (e) {
      say(errorText(e), true);
      $("result").dataset.state = "error";
      return;
    }
    S = CONF.strings;
    document.documentElement.lang = CONF.lang;
    document.title = S.title;
    document.querySelectorAll("[data-s]").forEach((node) => { node.textContent = S[node.dataset.s] || ""; });
    $("model").placeholder = S["model-placeholder"];
    $("task").replaceChildren(...CONF.tasks.map((t) => option(t.id, t.label)));
    $("precision").replaceChildren(option("", S["card-any"]), ...CONF.precisions.map((p) => option(p.id, p.label)));
    $("gpu").replaceChildren(option("", S["card-any"]), ...CONF.gpus.map((g) => option(g.id, g.name)));
    Object.keys(CONF.sliders).forEach(setupSlider);
    setSlider("num_gpus", 1);
    applyStart(CONF.start || {});
    visible($("task").value);
    $("task").addEventListener("change", () => {
      const task = $("task").value;
      const wasDefault = Object.values(CONF.default_models).includes(modelId);
      if (wasDefault && CONF.default_models[task]) {
        modelId = CONF.default_models[task];
        $("model").value = modelId;
      }
      visible(task);
      schedule(0);
    });
    $("precision").addEventListener("change", () => schedule(0));
    $("gpu").addEventListener("change", () => { visible($("task").value); schedule(0); });
    $("model").addEventListener("input", () => {
      modelId = "";
      clearTimeout(searchTimer);
      searchTimer = setTimeout(search, SEARCH_MS);
    });
    $("model").addEventListener("focus", search);
    $("model").addEventListener("blur", () => { $("suggest").hidden = true; });
    $("model").addEventListener("change", () => { if (!modelId) schedule(0); });
    $("quote").addEventListener("click", (ev) => relay("lead", ev.currentTarget));
    $("chat").addEventListener("click", (ev) => relay("chat", ev.currentTarget));
    $("rent").addEventListener("click", (ev) => {
      const t = tg();
      if (t && t.initData && t.openLink) { ev.preventDefault(); t.openLink($("rent").href); }
    });
    $("app").classList.remove("loading");
    schedule(0);
  }

  window.addEventListener("load", () => { const w = tg(); if (w) { w.ready(); w.expand(); } });
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
