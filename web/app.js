// harvest web UI: filter form, paged result list, detail pane and trend chart.
// Plain browser JavaScript, no framework, no build step, no external URLs.
// Every string that comes from the API is put into the page with textContent
// or setAttribute, never with innerHTML.
(function () {
  "use strict";

  /** Results per page (the API's default; its cap is 200). */
  const PAGE_LIMIT = 20;
  /** sessionStorage key of the bearer token. */
  const TOKEN_KEY = "harvest.token";
  const SVG_NS = "http://www.w3.org/2000/svg";
  const CHART_HEIGHT = 300;
  /** Narrowest bar slot in pixels; more buckets than fit make the chart scroll. */
  const MIN_BUCKET_PX = 3;
  /** Widest bar in pixels (a few buckets would otherwise give slabs). */
  const MAX_BAR_PX = 48;
  const DEFAULT_TZ = "UTC";
  const DEFAULT_SORT = "time";
  /** "" = auto: the finest interval that lays the matching pages out in at most MAX_BUCKETS bars. */
  const DEFAULT_INTERVAL = "";
  /** Most buckets the auto interval gives (a readable bar chart on a laptop screen). */
  const MAX_BUCKETS = 120;
  /** Keyword inputs take several values separated by commas or spaces. */
  const LIST_SPLIT = /[,\uFF0C\u3001\s]+/;
  /** The media input takes several names separated by commas: a name holds spaces ("Al Jazeera"). */
  const NAME_SPLIT = /[,\uFF0C\u3001]+/;
  /**
   * One colour per drawn series, pairwise far apart (CIELAB distance above 24): Tableau's
   * ten without its grey, plus navy. Grey is kept for the folded series.
   */
  const PALETTE = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#2f3e9e",
  ];
  /** Most series drawn: beyond it the smaller ones are summed into one grey "other" series. */
  const MAX_SERIES = PALETTE.length;
  const OTHER_COLOUR = "#c8c8c8";

  /** Filter fields shared by /api/search and /api/stats: element id = API parameter. */
  const FILTERS = [
    { param: "from", kind: "text" },
    { param: "to", kind: "text" },
    { param: "tz", kind: "select", fallback: DEFAULT_TZ },
    { param: "source", kind: "select" },
    { param: "topic", kind: "multi" },
    { param: "media", kind: "list", split: NAME_SPLIT },
    { param: "outlet", kind: "list", split: NAME_SPLIT },
    { param: "keyword", kind: "list" },
    { param: "any", kind: "list" },
    { param: "text", kind: "text" },
    { param: "min_comments", kind: "text" },
    { param: "max_comments", kind: "text" },
    { param: "collapse", kind: "flag" },
    { param: "revisits", kind: "flag" },
    { param: "published_from", kind: "multi" },
  ];
  /** Fields that only one of the two calls takes (the API rejects unknown parameters). */
  const SEARCH_ONLY = [{ param: "sort", kind: "select", fallback: DEFAULT_SORT }];
  const STATS_ONLY = [
    { param: "interval", kind: "select", fallback: DEFAULT_INTERVAL },
    { param: "group_by", kind: "select" },
  ];
  /** Everything the hash keeps besides the open page; Clear sets all of it back to its default. */
  const HASH_FIELDS = FILTERS.concat(SEARCH_ONLY, STATS_ONLY);
  /** Hash key of the page shown in the detail pane. */
  const HASH_PAGE = "page";
  /** Poll interval of /api/jobs while the jobs panel is open or a job runs. */
  const JOBS_POLL_MS = 3000;
  /** How long a started job counts as busy before /api/jobs shows its run. */
  const JOB_START_GRACE_MS = 30000;
  /** Run counters shown per job (summary / progress keys), in column order. */
  const JOB_COUNTERS = ["pages", "new", "changed", "unchanged", "not_modified", "failures"];
  const NO_JOBS = "No crawl jobs configured ([[job]] in harvest.toml)";

  const $ = (id) => document.getElementById(id);

  const state = {
    cursor: null, // cursor of the page shown (null = first page)
    back: [], // cursors of the pages before it, for Prev
    nextCursor: null,
    selected: null, // id of the page in the detail pane
    seq: { search: 0, stats: 0, detail: 0 },
    frameUrl: null, // object URL shown in the iframe in token mode
    jobs: {
      seq: 0,
      timer: null, // pending poll of /api/jobs
      busy: 0, // jobs running or starting, as last rendered
      list: [], // the last answer of /api/jobs
      pending: new Map(), // job name -> {before: newest run's start, at: click time}
      openRuns: new Set(), // jobs whose run history is unfolded
      loadError: "",
      configError: "", // the server could not take up its changed harvest.toml
      actionError: null, // {job, text, conflict}: the last Run now that failed
      stopped: false, // a 401: no polling until a token is given
    },
  };

  class ApiError extends Error {
    constructor(status, param, message) {
      super(message);
      this.status = status;
      this.param = param;
    }
  }

  // ---------------------------------------------------------------- DOM helpers

  /** An element with attributes and text children (strings become text nodes). */
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    setAttrs(node, attrs);
    for (const c of children) {
      node.append(c instanceof Node ? c : document.createTextNode(c == null ? "" : String(c)));
    }
    return node;
  }

  function svg(tag, attrs, text) {
    const node = document.createElementNS(SVG_NS, tag);
    setAttrs(node, attrs);
    if (text != null) node.textContent = String(text);
    return node;
  }

  function setAttrs(node, attrs) {
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v != null) node.setAttribute(k, String(v));
    }
  }

  // --------------------------------------------------------------- form <-> params

  function splitList(text, split) {
    return text.split(split || LIST_SPLIT).map((s) => s.trim()).filter(Boolean);
  }

  /** Append the values of `fields` from the form to `params`, skipping defaults. */
  function readFields(fields, params, keepDefaults) {
    for (const f of fields) {
      const node = $(f.param);
      if (f.kind === "flag") {
        if (node.checked) params.append(f.param, "true");
      } else if (f.kind === "multi") {
        for (const o of node.selectedOptions) params.append(f.param, o.value);
      } else if (f.kind === "list") {
        for (const v of splitList(node.value, f.split)) params.append(f.param, v);
      } else {
        const v = node.value.trim();
        if (v !== "" && (keepDefaults || v !== f.fallback)) params.append(f.param, v);
      }
    }
    return params;
  }

  /** Make sure a select can show `value` (a shared URL may name an option not loaded). */
  function ensureOption(select, value) {
    if (value === "" || [...select.options].some((o) => o.value === value)) return;
    select.append(el("option", { value }, value));
  }

  /** Fill the form from `params` (fields not named get their defaults). */
  function writeFields(fields, params) {
    for (const f of fields) {
      const node = $(f.param);
      const values = params.getAll(f.param);
      if (f.kind === "flag") {
        node.checked = values.includes("true");
      } else if (f.kind === "multi") {
        values.forEach((v) => ensureOption(node, v));
        for (const o of node.options) o.selected = values.includes(o.value);
      } else if (f.kind === "list") {
        node.value = values.join(", ");
      } else if (f.kind === "select") {
        const v = values[0] || f.fallback || "";
        ensureOption(node, v);
        node.value = v;
      } else {
        node.value = values[0] || "";
      }
    }
  }

  function filterParams() {
    // tz decides the day boundaries of from/to and the bucket labels: always sent.
    return readFields(FILTERS, new URLSearchParams(), true);
  }

  function searchParams() {
    const p = readFields(SEARCH_ONLY, filterParams(), true);
    p.set("limit", String(PAGE_LIMIT));
    if (state.cursor) p.set("cursor", state.cursor);
    return p;
  }

  function statsParams() {
    return readFields(STATS_ONLY, filterParams(), true);
  }

  /** The shareable state: non-default filters, sort, chart settings, open page. */
  function hashParams() {
    const p = readFields(HASH_FIELDS, new URLSearchParams(), false);
    if (state.selected) p.set(HASH_PAGE, state.selected);
    return p;
  }

  /** The hash of what the page shows ("" when everything is at its default). */
  function currentHash() {
    const query = hashParams().toString();
    return query ? "#" + query : "";
  }

  function writeHash(push) {
    const hash = currentHash();
    if (hash === location.hash) return;
    // All defaults: no fragment at all (not a bare "#").
    const url = hash || location.pathname + location.search;
    if (push) history.pushState(null, "", url);
    else history.replaceState(null, "", url);
  }

  function readHash() {
    const params = new URLSearchParams(location.hash.replace(/^#/, ""));
    writeFields(HASH_FIELDS, params);
    return params.get(HASH_PAGE);
  }

  // ------------------------------------------------------------------------ API

  function authHeaders() {
    const token = sessionStorage.getItem(TOKEN_KEY);
    return token ? { Authorization: "Bearer " + token } : {};
  }

  /** GET an API path; JSON (or a Blob when `asBlob`), ApiError on failure. */
  async function api(path, params, asBlob) {
    const url = params && [...params].length ? path + "?" + params.toString() : path;
    const resp = await send(url, "GET");
    return asBlob ? resp.blob() : resp.json();
  }

  /** POST to an API path (no body); its JSON answer, ApiError on failure. */
  async function apiPost(path) {
    const resp = await send(path, "POST");
    return resp.json();
  }

  /** One call with the token; the response when it is 2xx, ApiError otherwise. */
  async function send(url, method) {
    const sent = sessionStorage.getItem(TOKEN_KEY);
    let resp;
    try {
      resp = await fetch(url, { method, headers: authHeaders(), credentials: "same-origin" });
    } catch (e) {
      throw new ApiError(0, null, "the server cannot be reached (" + e.message + ")");
    }
    if (resp.status === 401) {
      let why = "";
      try {
        const body = await resp.json();
        why = (body && body.error && body.error.message) || "";
      } catch (_) {
        // no JSON: the default prompt
      }
      // A call sent before a token was given (or with the one replaced since)
      // answering late does not reopen the prompt over the new token's results.
      if (sessionStorage.getItem(TOKEN_KEY) === sent) showAuth(why);
      throw new ApiError(401, null, "the server needs an access token");
    }
    if (!resp.ok) {
      let param = null;
      let message = "HTTP " + resp.status + " " + resp.statusText;
      try {
        const body = await resp.json();
        if (body && body.error) {
          param = body.error.param || null;
          message = body.error.message || message;
        }
      } catch (_) {
        // not JSON: keep the status line
      }
      throw new ApiError(resp.status, param, message);
    }
    return resp;
  }

  /** A link the API gave us, or the documented route when it is missing or foreign. */
  function apiLink(link, fallback) {
    return typeof link === "string" && link.startsWith("/api/") ? link : fallback;
  }

  // ---------------------------------------------------------------- errors, auth

  function clearError() {
    const box = $("form-error");
    box.hidden = true;
    box.textContent = "";
    for (const n of document.querySelectorAll(".invalid")) {
      n.classList.remove("invalid");
      n.removeAttribute("aria-invalid");
    }
  }

  function showError(err) {
    if (err.status === 401) return; // the token box says it
    const box = $("form-error");
    box.hidden = false;
    const line = err.param ? "Parameter “" + err.param + "”: " + err.message : err.message;
    if (!box.textContent.includes(line)) {
      box.textContent = box.textContent ? box.textContent + " · " + line : line;
    }
    box.dataset.param = err.param || "";
    const field = err.param ? $(err.param) : null;
    if (field && field.closest("form, #chart-pane")) {
      field.classList.add("invalid");
      field.setAttribute("aria-invalid", "true");
    }
  }

  /** The token prompt, with the server's reason when it gave one. */
  function showAuth(why) {
    const line = $("auth-why");
    line.textContent = why || "";
    line.hidden = !why;
    $("auth").hidden = false;
    $("token").focus();
  }

  // --------------------------------------------------------------------- facets

  async function loadFacets() {
    const [sources, topics] = await Promise.allSettled([api("/api/sources"), api("/api/topics")]);
    if (sources.status === "fulfilled") {
      const select = $("source");
      const keep = select.value;
      select.replaceChildren(el("option", { value: "" }, "all"));
      for (const s of sources.value.sources || []) {
        const years = Array.isArray(s.years) && s.years.length ? " (" + s.years.join(", ") + ")" : "";
        select.append(el("option", { value: s.name }, s.name + years));
      }
      ensureOption(select, keep);
      select.value = keep;
    }
    if (topics.status === "fulfilled") {
      const select = $("topic");
      const keep = new Set([...select.selectedOptions].map((o) => o.value));
      select.replaceChildren();
      for (const t of topics.value.topics || []) {
        const label = t.count == null ? t.name : t.name + " (" + t.count + ")";
        const o = el("option", { value: t.name }, label);
        o.selected = keep.has(t.name);
        select.append(o);
      }
    }
    for (const r of [sources, topics]) {
      if (r.status === "rejected") showError(r.reason);
    }
  }

  // -------------------------------------------------------------------- results

  /** `iso` shown in the time zone of the form: "2017-03-01 08:00 +08:00". */
  function formatTime(iso) {
    if (!iso) return "—";
    const d = new Date(iso);
    if (Number.isNaN(d.getTime())) return String(iso);
    const tz = $("tz").value || DEFAULT_TZ;
    const m = /^([+-])(\d{2}):(\d{2})$/.exec(tz);
    if (m || tz === "UTC") {
      const minutes = m ? (m[1] === "-" ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) : 0;
      const s = new Date(d.getTime() + minutes * 60000).toISOString();
      return s.slice(0, 10) + " " + s.slice(11, 16) + " " + tz;
    }
    try {
      const fmt = new Intl.DateTimeFormat("sv-SE", {
        timeZone: tz, year: "numeric", month: "2-digit", day: "2-digit",
        hour: "2-digit", minute: "2-digit", hourCycle: "h23",
      });
      return fmt.format(d) + " " + tz;
    } catch (_) {
      return String(iso);
    }
  }

  function tookText(ms) {
    return typeof ms === "number" ? (ms < 10 ? ms.toFixed(1) : Math.round(ms)) + " ms" : "";
  }

  /**
   * A hit's snippet (HTML from the server: escaped text, the query's words in <mark>) as
   * nodes, keeping only text and <mark>: nothing else of it can reach the page.
   */
  function snippetNode(html) {
    const tpl = document.createElement("template");
    tpl.innerHTML = html;
    const out = el("span", { class: "snippet" });
    for (const n of tpl.content.childNodes) {
      if (n.nodeName === "MARK") out.append(el("mark", null, n.textContent));
      else if (n.nodeType === Node.TEXT_NODE) out.append(n.textContent);
    }
    return out;
  }

  function commentsText(n) {
    return "comments: " + (n == null ? "—" : n);
  }

  function renderResults(body) {
    const list = $("results");
    const items = document.createDocumentFragment();
    for (const hit of body.hits || []) {
      const li = el("li", { tabindex: "0", "data-id": hit.id });
      if (hit.id === state.selected) li.classList.add("selected");
      const when = hit.published
        ? "published (from " + (hit.published_from || "unknown") + ")"
        : "fetched (no publish time)";
      li.append(
        el("span", { class: "title", lang: hit.language || null }, hit.title || hit.url || hit.id),
        el("span", { class: "meta" },
          el("span", { class: "source" }, hit.source),
          el("span", { class: "date", title: when }, formatTime(hit.published || hit.fetched)),
          el("span", { class: "topic" }, hit.topic || "—"),
          el("span", { class: "comments" }, commentsText(hit.comments)),
          hit.revisit ? el("span", { class: "revisit" }, "revisit") : "",
          hit.copies > 1 ? el("span", { class: "copies", title: "archived copies of this story" }, hit.copies + " copies") : "",
        ),
        hit.snippet ? snippetNode(hit.snippet) : "",
      );
      li._hit = hit;
      items.append(li);
    }
    list.replaceChildren(items);
    state.nextCursor = body.next_cursor || null;
    $("next").disabled = !state.nextCursor;
    $("prev").disabled = state.back.length === 0;
    const page = state.back.length + 1;
    const n = (body.hits || []).length;
    $("page-info").textContent = "page " + page;
    const first = (page - 1) * PAGE_LIMIT;
    $("summary").textContent = n
      ? "results " + (first + 1) + "–" + (first + n) + " (" + tookText(body.took_ms) + ")"
      : page === 1 ? "no pages match" : "no more pages";
  }

  async function runSearch() {
    const seq = ++state.seq.search;
    const params = searchParams();
    const list = $("list");
    list.dataset.status = "loading";
    list.dataset.params = params.toString();
    $("next").disabled = true;
    $("prev").disabled = true;
    try {
      const body = await api("/api/search", params);
      if (seq !== state.seq.search) return;
      renderResults(body);
      list.dataset.status = "done";
    } catch (err) {
      if (seq !== state.seq.search) return;
      list.dataset.status = "error";
      $("results").replaceChildren();
      $("summary").textContent = "search failed";
      showError(err);
    }
  }

  // --------------------------------------------------------------------- detail

  function attrRows(p) {
    const pack = p.pack || {};
    const caps = p.captures || {};
    return [
      ["title", p.title],
      ["url", p.url],
      ["source", p.source],
      ["media", p.media == null ? null : p.media + (p.media_from_host ? " (host name: the page names no media)" : "")],
      ["outlet", p.outlet],
      ["author", p.author],
      ["topic", p.topic == null ? null : p.topic + (p.topic_score == null ? "" : " (" + Number(p.topic_score).toFixed(2) + ")")],
      ["published", p.published ? formatTime(p.published) : null],
      ["published from", p.published_from],
      ["fetched", p.fetched ? formatTime(p.fetched) : null],
      ["comments", p.comments],
      ["participants", p.participants],
      ["keywords", Array.isArray(p.keywords) ? p.keywords.join(", ") : null],
      ["cluster", p.cluster],
      ["near duplicate of", p.near_duplicate_of],
      ["copies", p.copies == null ? null : p.copies],
      ["simhash", p.simhash],
      ["revisit", p.revisit == null ? null : p.revisit ? "yes" : "no"],
      ["captures", caps.count == null ? null : caps.count + " (" + formatTime(caps.first_seen) + " – " + formatTime(caps.last_seen) + ")"],
      ["language", p.language],
      ["charset", p.charset],
      ["status", p.status],
      ["digest", p.digest],
      ["record id", p.record_id],
      ["pack", pack.path == null ? null : pack.path + " @ " + pack.offset + " +" + pack.length],
    ];
  }

  function renderDetail(page, rawUrl) {
    const tbody = el("tbody");
    for (const [name, value] of attrRows(page)) {
      const td = el("td", { "data-attr": name });
      if (name === "url" && typeof value === "string" && /^https?:\/\//i.test(value)) {
        td.append(el("a", { href: value, target: "_blank", rel: "noopener noreferrer" }, value));
      } else {
        td.textContent = value == null || value === "" ? "—" : String(value);
      }
      if (name === "title" && page.language) td.setAttribute("lang", page.language);
      tbody.append(el("tr", null, el("th", { scope: "row" }, name), td));
    }
    const raw = el("a", { href: rawUrl, target: "_blank", rel: "noopener noreferrer" }, "open archived page");
    tbody.append(el("tr", null, el("th", { scope: "row" }, "raw"), el("td", null, raw)));
    const table = $("detail-attrs");
    table.replaceChildren(tbody);
    table.hidden = false;
    $("detail-empty").hidden = true;
  }

  async function showFrame(rawUrl, seq) {
    const frame = $("detail-frame");
    frame.hidden = false;
    frame.dataset.loaded = "";
    frame.onload = () => {
      if (seq === state.seq.detail) frame.dataset.loaded = "1";
    };
    if (state.frameUrl) {
      URL.revokeObjectURL(state.frameUrl);
      state.frameUrl = null;
    }
    if (!sessionStorage.getItem(TOKEN_KEY)) {
      frame.src = rawUrl;
      return;
    }
    // An iframe cannot send the Authorization header: fetch the bytes and show a
    // blob in the same sandbox (no scripts, opaque origin).
    const blob = await api(rawUrl, null, true);
    if (seq !== state.seq.detail) return;
    state.frameUrl = URL.createObjectURL(blob);
    frame.src = state.frameUrl;
  }

  async function openDetail(id, link) {
    const seq = ++state.seq.detail;
    state.selected = id;
    for (const li of $("results").children) li.classList.toggle("selected", li.dataset.id === id);
    const detail = $("detail");
    detail.dataset.status = "loading";
    detail.dataset.id = id;
    const pageUrl = apiLink(link && link.page, "/api/pages/" + encodeURIComponent(id));
    try {
      const page = await api(pageUrl);
      if (seq !== state.seq.detail) return;
      const rawUrl = apiLink(page.links && page.links.raw, pageUrl + "/raw");
      renderDetail(page, rawUrl);
      await showFrame(rawUrl, seq);
      if (seq === state.seq.detail) detail.dataset.status = "done";
    } catch (err) {
      if (seq !== state.seq.detail) return;
      detail.dataset.status = "error";
      showError(err);
    }
  }

  // ---------------------------------------------------------------------- chart

  function sum(counts) {
    return counts.reduce((a, b) => a + (b || 0), 0);
  }

  /**
   * The series to draw, each with its colour: all of them when there are at most
   * MAX_SERIES, else the MAX_SERIES - 1 with the most pages (ties: the API's order)
   * and one grey series summing the others, which names them in `folded`. The
   * series keep the API's order, so a name has one colour wherever it is drawn.
   */
  function drawnSeries(series, n) {
    if (series.length <= MAX_SERIES) {
      return series.map((s, i) => ({ name: s.name, counts: s.counts, colour: PALETTE[i] }));
    }
    const kept = new Set(series
      .map((s, i) => ({ i, pages: sum(s.counts) }))
      .sort((a, b) => b.pages - a.pages || a.i - b.i)
      .slice(0, MAX_SERIES - 1)
      .map((r) => r.i));
    const out = [];
    const counts = new Array(n).fill(0);
    const folded = [];
    series.forEach((s, i) => {
      if (kept.has(i)) {
        out.push({ name: s.name, counts: s.counts, colour: PALETTE[out.length] });
        return;
      }
      folded.push(s.name);
      for (let b = 0; b < n; b++) counts[b] += s.counts[b] || 0;
    });
    out.push({ name: "other (" + folded.length + " series)", counts, colour: OTHER_COLOUR, folded });
    return out;
  }

  /** Round tick values from 0 to at least `max`. */
  function ticks(max) {
    const raw = Math.max(1, max) / 5;
    const mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = Math.max(1, [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw));
    const out = [];
    for (let v = 0; v < max + step; v += step) out.push(v);
    if (out.length < 2) out.push(step);
    return out;
  }

  function drawChart(stats) {
    const box = $("chart");
    const buckets = stats.buckets || [];
    const n = buckets.length;
    const series = drawnSeries(stats.series || [], n);
    const totals = new Array(n).fill(0);
    for (const s of series) for (let i = 0; i < n; i++) totals[i] += s.counts[i] || 0;
    const max = totals.reduce((a, b) => Math.max(a, b), 0);
    const yTicks = ticks(max);
    const top = yTicks[yTicks.length - 1];

    const longest = buckets.reduce((a, b) => Math.max(a, String(b).length), 0);
    const margin = { top: 12, right: 12, bottom: 28 + longest * 5, left: 56 };
    const width = Math.max(box.clientWidth || 800, margin.left + margin.right + n * MIN_BUCKET_PX);
    const plotW = width - margin.left - margin.right;
    const plotH = CHART_HEIGHT - margin.top - margin.bottom;
    const slot = n ? plotW / n : plotW;
    const barW = Math.min(MAX_BAR_PX, Math.max(1, slot * 0.8));
    const y = (v) => margin.top + plotH - (v / top) * plotH;

    const root = svg("svg", {
      width, height: CHART_HEIGHT, viewBox: "0 0 " + width + " " + CHART_HEIGHT,
      role: "img", "aria-label": "pages per " + stats.interval,
    });
    const yAxis = svg("g", { class: "axis y" });
    for (const t of yTicks) {
      yAxis.append(
        svg("line", { x1: margin.left, x2: margin.left + plotW, y1: y(t), y2: y(t), "stroke-opacity": t ? 0.25 : 1 }),
        svg("text", { x: margin.left - 6, y: y(t) + 4, "text-anchor": "end" }, t),
      );
    }
    root.append(yAxis);
    root.append(svg("text", {
      class: "axis-title", transform: "translate(14 " + (margin.top + plotH / 2) + ") rotate(-90)",
      "text-anchor": "middle",
    }, "pages"));

    const bars = svg("g", { class: "bars" });
    const labelEvery = Math.max(1, Math.ceil(n / Math.max(1, Math.floor(plotW / 16))));
    const xAxis = svg("g", { class: "axis x" });
    for (let i = 0; i < n; i++) {
      const label = String(buckets[i]);
      const x = margin.left + i * slot;
      const g = svg("g", { class: "bucket", "data-bucket": label, "data-total": totals[i] });
      let acc = 0;
      for (const s of series) {
        const c = s.counts[i] || 0;
        if (c <= 0) continue;
        const rect = svg("rect", {
          class: "bar", x: x + (slot - barW) / 2, y: y(acc + c), width: barW,
          height: Math.max(0.5, y(acc) - y(acc + c)), fill: s.colour,
          "data-series": s.name, "data-count": c, "data-other": s.folded ? "1" : null,
        });
        rect.append(svg("title", null, label + " · " + s.name + ": " + c));
        g.append(rect);
        acc += c;
      }
      bars.append(g);
      if (i % labelEvery === 0) {
        const lx = x + slot / 2;
        const ly = margin.top + plotH + 12;
        xAxis.append(svg("text", {
          x: lx, y: ly, "text-anchor": "end", transform: "rotate(-45 " + lx + " " + ly + ")",
        }, label));
      }
    }
    xAxis.append(svg("line", {
      x1: margin.left, x2: margin.left + plotW, y1: margin.top + plotH, y2: margin.top + plotH,
    }));
    root.append(bars, xAxis);
    root.append(svg("text", {
      class: "axis-title", x: margin.left + plotW / 2, y: CHART_HEIGHT - 4, "text-anchor": "middle",
    }, stats.interval + " (" + stats.tz + ")"));
    box.replaceChildren(root);

    const legend = $("legend");
    legend.replaceChildren();
    for (const s of series) {
      legend.append(el("li", {
        "data-series": s.name,
        "data-other": s.folded ? "1" : null,
        title: s.folded ? s.folded.join(", ") : null,
      }, el("span", { class: "swatch", style: "background:" + s.colour }), s.name + " (" + sum(s.counts) + ")"));
    }
    $("chart-info").textContent = n + " " + stats.interval + " buckets, " + stats.total + " pages";
  }

  /**
   * Fewest buckets a span over `months` month buckets can have at a finer
   * interval: the whole months between its first and last, plus a day of each.
   */
  function minBuckets(interval, months) {
    const days = months <= 1 ? 1 : (months - 2) * 28 + 2;
    return interval === "day" ? days : Math.ceil(days / 7);
  }

  /**
   * The statistics of `params`; without an interval (auto), at the finest one
   * that lays the pages out in at most MAX_BUCKETS buckets. Without from/to the
   * API's buckets run from the first to the last one with pages, so this is the
   * span of the data. The month answer gives that span; a finer interval is
   * asked only when it can fit.
   */
  async function fetchStats(params) {
    if (params.has("interval")) return api("/api/stats", params);
    const at = (interval) => {
      const p = new URLSearchParams(params);
      p.set("interval", interval);
      return p;
    };
    const months = await api("/api/stats", at("month"));
    const n = (months.buckets || []).length;
    if (n > MAX_BUCKETS) return api("/api/stats", at("year"));
    for (const interval of ["day", "week"]) {
      if (minBuckets(interval, n) > MAX_BUCKETS) continue;
      const stats = await api("/api/stats", at(interval));
      if ((stats.buckets || []).length <= MAX_BUCKETS) return stats;
    }
    return months;
  }

  async function runStats() {
    const seq = ++state.seq.stats;
    const params = statsParams();
    const auto = !params.has("interval");
    const chart = $("chart");
    chart.dataset.status = "loading";
    chart.dataset.params = params.toString();
    chart.dataset.auto = auto ? "1" : "0";
    $("csv").href = "/api/stats.csv?" + params.toString();
    try {
      const stats = await fetchStats(params);
      if (seq !== state.seq.stats) return;
      // The call that was drawn: the CSV link gives the same buckets.
      params.set("interval", stats.interval);
      chart.dataset.params = params.toString();
      chart.dataset.interval = stats.interval;
      $("csv").href = "/api/stats.csv?" + params.toString();
      $("interval-auto").textContent = auto ? "auto (" + stats.interval + ")" : "auto";
      drawChart(stats);
      chart.dataset.status = "done";
    } catch (err) {
      if (seq !== state.seq.stats) return;
      chart.dataset.status = "error";
      chart.replaceChildren();
      $("legend").replaceChildren();
      $("chart-info").textContent = "";
      showError(err);
    }
  }

  /** In token mode a plain link would go without the header: download through fetch. */
  async function downloadCsv(event) {
    if (!sessionStorage.getItem(TOKEN_KEY)) return;
    event.preventDefault();
    const href = $("csv").getAttribute("href");
    const [path, query] = href.split("?");
    try {
      const blob = await api(path, new URLSearchParams(query || ""), true);
      const url = URL.createObjectURL(blob);
      const a = el("a", { href: url, download: "harvest-stats.csv" });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10000);
    } catch (err) {
      showError(err);
    }
  }

  // ----------------------------------------------------------------------- jobs

  /** "0 0 3 * * * (Asia/Shanghai)", or "on request" without a schedule. */
  function scheduleText(job) {
    if (!job.schedule) return "on request";
    return job.schedule + " (" + (job.timezone || "UTC") + ")";
  }

  /** Failures as a number, whether the API gives a total or counts by kind. */
  function failureTotal(f) {
    if (typeof f === "number") return f;
    if (f && typeof f === "object") return Object.values(f).reduce((a, n) => a + (Number(n) || 0), 0);
    return 0;
  }

  function failureKinds(f) {
    if (!f || typeof f !== "object") return "";
    return Object.entries(f).map(([k, n]) => k + ": " + n).join(", ");
  }

  /** Start and end of a run; the end without its date when it is the same day. */
  function spanText(started, ended) {
    const a = formatTime(started);
    if (!ended) return a + " – …";
    const b = formatTime(ended);
    return a + " – " + (a.slice(0, 10) === b.slice(0, 10) ? b.slice(11) : b);
  }

  /** Counter cells (`td[data-counter=…]`) of a summary or of live progress. */
  function counterCells(counts, live) {
    return JOB_COUNTERS.map((key) => {
      const v = counts ? counts[key] : null;
      const td = el("td", { class: "num" + (live ? " live" : ""), "data-counter": key });
      if (key === "failures") {
        const kinds = failureKinds(v);
        td.textContent = counts ? String(failureTotal(v)) : "—";
        if (kinds) td.setAttribute("title", kinds);
        if (failureTotal(v) > 0) td.classList.add("bad");
      } else {
        td.textContent = v == null ? "—" : String(v);
      }
      return td;
    });
  }

  /** True while a click on Run now has not yet shown up in /api/jobs. */
  function startPending(job) {
    const p = state.jobs.pending.get(job.name);
    if (!p) return false;
    const newest = (job.last_runs || [])[0];
    const seen = job.running || (newest && newest.started !== p.before);
    if (seen || Date.now() - p.at > JOB_START_GRACE_MS) {
      state.jobs.pending.delete(job.name);
      return false;
    }
    return true;
  }

  function runRow(run) {
    const tr = el("tr", { class: "run", "data-started": run.started, "data-status": run.status });
    tr.append(
      el("td", { class: "state" }, run.state || run.status),
      el("td", { class: "when" }, spanText(run.started, run.ended)),
      ...counterCells(run.summary || null, false),
      el("td", { class: "note" + (run.error ? " bad" : "") },
        [run.resumed ? "resumed " + run.resumed + "×" : "", run.error || ""].filter(Boolean).join(" · ")),
    );
    return tr;
  }

  /** The unfoldable history of a job: its last runs, newest first. */
  function runsRow(job) {
    const runs = job.last_runs || [];
    const details = el("details", { class: "runs", "data-job": job.name });
    details.open = state.jobs.openRuns.has(job.name);
    details.append(el("summary", null, "last " + runs.length + (runs.length === 1 ? " run" : " runs")));
    const head = el("tr", null, ...["state", "started – ended"].concat(
      JOB_COUNTERS.map((c) => c.replace("_", " ")), ["note"],
    ).map((h) => el("th", { scope: "col" }, h)));
    details.append(el("table", { class: "runs-table" }, el("thead", null, head),
      el("tbody", null, ...runs.map(runRow))));
    return el("tr", { class: "job-runs", "data-job": job.name },
      el("td", { colspan: 12 }, runs.length ? details : el("span", { class: "muted" }, "never run")));
  }

  /** The last run's status; a run marked running that is not running was interrupted. */
  function lastStatus(last) {
    if (!last) return "never";
    return last.status === "running" ? "interrupted" : last.status;
  }

  function jobRow(job) {
    const starting = !job.running && startPending(job);
    const last = (job.last_runs || [])[0] || null;
    const tr = el("tr", {
      class: "job" + (job.running ? " running" : ""),
      "data-job": job.name,
      "data-running": job.running ? "1" : "0",
      "data-state": job.running ? "running" : starting ? "starting" : lastStatus(last),
    });
    const seeds = Array.isArray(job.seeds) ? job.seeds.join("\n") : "";
    tr.append(
      el("th", { scope: "row", class: "name", title: seeds || null }, job.name),
      el("td", { class: "schedule" }, scheduleText(job)),
      el("td", { class: "next" }, job.next_run ? formatTime(job.next_run) : "—"),
    );
    let stateText;
    let counts;
    if (job.running) {
      stateText = "running";
      counts = job.progress || {};
    } else {
      stateText = starting ? "starting…" : last ? last.state || last.status : "never run";
      counts = last && !starting ? last.summary || {} : null;
    }
    const stateCell = el("td", { class: "state" }, stateText);
    if (last && last.error && !job.running) stateCell.setAttribute("title", last.error);
    tr.append(stateCell, el("td", { class: "when" }, last && !starting ? spanText(last.started, last.ended) : "—"));
    tr.append(...counterCells(counts, job.running));
    const button = el("button", { type: "button", class: "run-now", "data-job": job.name },
      job.running ? "Running…" : starting ? "Starting…" : "Run now");
    button.disabled = job.running || starting;
    tr.append(el("td", { class: "action" }, button));
    return { row: tr, busy: job.running || starting };
  }

  function renderJobsError() {
    const box = $("jobs-error");
    const action = state.jobs.actionError;
    const text = [action && action.text, state.jobs.loadError, state.jobs.configError]
      .filter(Boolean).join(" · ");
    box.textContent = text;
    box.hidden = !text;
  }

  function renderJobs(jobs) {
    state.jobs.list = jobs;
    const focused = document.activeElement && document.activeElement.matches(".run-now")
      ? document.activeElement.dataset.job : null;
    const body = document.createDocumentFragment();
    let busy = 0;
    let running = 0;
    for (const job of jobs) {
      const { row, busy: b } = jobRow(job);
      busy += b ? 1 : 0;
      running += job.running ? 1 : 0;
      body.append(row, runsRow(job));
    }
    $("jobs-list").replaceChildren(body);
    if (focused) {
      const again = [...document.querySelectorAll("#jobs-list .run-now")].find((b) => b.dataset.job === focused);
      if (again) again.focus();
    }
    $("jobs-table").hidden = jobs.length === 0;
    $("jobs-empty").hidden = jobs.length !== 0;
    $("jobs-empty").textContent = NO_JOBS;
    $("jobs").dataset.running = String(running);
    state.jobs.busy = busy;
    // "It is running already" is stale once that run is over.
    const action = state.jobs.actionError;
    if (action && action.conflict && !jobs.some((j) => j.name === action.job && j.running)) {
      state.jobs.actionError = null;
    }
    $("jobs-info").textContent = jobs.length
      ? "(" + jobs.length + (jobs.length === 1 ? " job" : " jobs") + (running ? ", " + running + " running" : "") + ")"
      : "(none)";
  }

  /** Poll only while someone looks at the panel or a job is going. */
  function scheduleJobs() {
    const jobs = state.jobs;
    clearTimeout(jobs.timer);
    jobs.timer = null;
    const wanted = !jobs.stopped && !document.hidden && ($("jobs").open || jobs.busy > 0);
    if (wanted) jobs.timer = setTimeout(loadJobs, JOBS_POLL_MS);
    $("jobs").dataset.polling = wanted ? "1" : "0";
  }

  async function loadJobs() {
    const seq = ++state.jobs.seq;
    const panel = $("jobs");
    clearTimeout(state.jobs.timer);
    state.jobs.timer = null;
    if (!panel.dataset.status) panel.dataset.status = "loading";
    try {
      const body = await api("/api/jobs");
      if (seq !== state.jobs.seq) return;
      state.jobs.loadError = "";
      // The server's harvest.toml changed but could not be taken up.
      state.jobs.configError = body.config_error ? "configuration: " + body.config_error : "";
      state.jobs.stopped = false;
      renderJobs(Array.isArray(body.jobs) ? body.jobs : []);
      panel.dataset.status = "done";
    } catch (err) {
      if (seq !== state.jobs.seq) return;
      panel.dataset.status = "error";
      state.jobs.stopped = err.status === 401;
      state.jobs.loadError = err.status === 401 ? "" : "jobs: " + err.message;
    }
    renderJobsError();
    scheduleJobs();
  }

  async function runJob(button) {
    const name = button.dataset.job;
    const job = state.jobs.list.find((j) => j.name === name);
    const newest = job && (job.last_runs || [])[0];
    button.disabled = true;
    button.textContent = "Starting…";
    state.jobs.actionError = null;
    renderJobsError();
    try {
      await apiPost("/api/jobs/" + encodeURIComponent(name) + "/run");
      state.jobs.pending.set(name, { before: newest ? newest.started : null, at: Date.now() });
    } catch (err) {
      if (err.status !== 401) {
        const why = err.status === 409 ? "it is running already" : err.message;
        state.jobs.actionError = {
          job: name,
          conflict: err.status === 409,
          text: "Run now “" + name + "”: " + why + (err.status ? " (HTTP " + err.status + ")" : ""),
        };
      }
    }
    await loadJobs();
  }

  // ------------------------------------------------------------------ wiring

  /** A new query: first page, new chart, shareable URL. */
  function runAll(push) {
    clearError();
    state.cursor = null;
    state.back = [];
    writeHash(push);
    return Promise.all([runSearch(), runStats()]);
  }

  function onResultActivate(event) {
    const li = event.target.closest("#results li");
    if (!li) return;
    if (event.type === "keydown" && event.key !== "Enter" && event.key !== " ") return;
    event.preventDefault();
    openDetail(li.dataset.id, li._hit && li._hit.links).then(() => writeHash(false));
  }

  function bind() {
    $("filters").addEventListener("submit", (e) => {
      e.preventDefault();
      state.selected = null;
      runAll(true);
    });
    // Every field the hash keeps, from the field table (the chart settings are
    // outside the form, so the form's own reset() would not reach them).
    $("clear").addEventListener("click", () => {
      writeFields(HASH_FIELDS, new URLSearchParams());
      state.selected = null;
      runAll(true);
    });
    $("results").addEventListener("click", onResultActivate);
    $("results").addEventListener("keydown", onResultActivate);
    $("next").addEventListener("click", () => {
      if (!state.nextCursor) return;
      state.back.push(state.cursor);
      state.cursor = state.nextCursor;
      runSearch();
    });
    $("prev").addEventListener("click", () => {
      if (!state.back.length) return;
      state.cursor = state.back.pop();
      runSearch();
    });
    for (const id of ["interval", "group_by"]) {
      $(id).addEventListener("change", () => {
        clearError();
        writeHash(false);
        runStats();
      });
    }
    $("csv").addEventListener("click", downloadCsv);
    $("jobs").addEventListener("toggle", () => {
      if ($("jobs").open) loadJobs();
      else scheduleJobs();
    });
    $("jobs-list").addEventListener("click", (e) => {
      const button = e.target.closest(".run-now");
      if (button && !button.disabled) runJob(button);
    });
    // `toggle` does not bubble: listen in the capture phase for the run histories.
    $("jobs-list").addEventListener("toggle", (e) => {
      const d = e.target;
      if (!d.matches || !d.matches("details.runs")) return;
      if (d.open) state.jobs.openRuns.add(d.dataset.job);
      else state.jobs.openRuns.delete(d.dataset.job);
    }, true);
    document.addEventListener("visibilitychange", () => {
      if (!document.hidden && ($("jobs").open || state.jobs.busy > 0)) loadJobs();
      else scheduleJobs();
    });
    $("auth-form").addEventListener("submit", async (e) => {
      e.preventDefault();
      sessionStorage.setItem(TOKEN_KEY, $("token").value.trim());
      $("token").value = "";
      $("auth").hidden = true;
      await loadFacets();
      readHash();
      runAll(false);
      loadJobs();
    });
    window.addEventListener("hashchange", () => {
      // Already shown (e.g. a hash typed again): nothing to load.
      if (location.hash === currentHash()) return;
      state.selected = readHash();
      runAll(false).then(() => {
        if (state.selected) openDetail(state.selected);
      });
    });
  }

  async function start() {
    bind();
    await loadFacets();
    const selected = readHash();
    state.selected = selected;
    await runAll(false);
    if (selected) openDetail(selected);
    // Once, for the count in the panel's title; then only while it is open or a job runs.
    loadJobs();
    document.body.dataset.ready = "1";
  }

  start();
})();
