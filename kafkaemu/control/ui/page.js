// kafkaemu's control page, kept live: fetch this same URL every second and swap in the parts
// marked data-live that changed. The server renders everything (and escapes every name), so this
// script never builds HTML from data. No framework, nothing fetched from elsewhere.
"use strict";

(() => {
  const INTERVAL_MS = 1000;
  const live = document.getElementById("live");
  const pauseButton = document.getElementById("pause");
  const filters = document.getElementById("filters");
  const applied = new Map();   // id -> the server's HTML last shown there
  let paused = false;
  let timer = null;
  let busy = false;

  function token() {
    return new URLSearchParams(location.search).get("token");
  }

  function status(kind, text) {
    live.className = "live " + kind;
    live.textContent = text;
  }

  function scrollers(root) {
    return Array.from(root.querySelectorAll(".timeline-scroll"));
  }

  function detailsKey(el) {
    const owner = el.closest("[data-group]");
    return (owner ? owner.dataset.group : "") + "\u0000" + el.className;
  }

  function swap(here, fresh) {
    // keep a scrolled timeline where it was, or at its right end (now) when it was there,
    // and folded sections folded
    const before = scrollers(here).map((el) => ({
      left: el.scrollLeft, atEnd: el.scrollLeft + el.clientWidth >= el.scrollWidth - 8,
    }));
    const folded = new Map(Array.from(here.querySelectorAll("details"), (el) => [detailsKey(el), el.open]));
    // a copy first: adopting a node takes it out of the live childNodes list
    here.replaceChildren(...Array.from(fresh.childNodes).map((n) => document.adoptNode(n)));
    scrollers(here).forEach((el, i) => {
      const was = before[i];
      el.scrollLeft = !was || was.atEnd ? el.scrollWidth : was.left;
    });
    here.querySelectorAll("details").forEach((el) => {
      const open = folded.get(detailsKey(el));
      if (open !== undefined) el.open = open;
    });
  }

  let again = false;

  async function refresh() {
    if (paused || document.hidden) return;   // a hidden tab costs the broker nothing
    if (busy) {            // asked again while fetching: fetch once more right after
      again = true;
      return;
    }
    busy = true;
    again = false;
    clearTimeout(timer);
    try {
      const answer = await fetch(location.pathname + location.search, {cache: "no-store"});
      if (!answer.ok) throw new Error(answer.status + " " + answer.statusText);
      const doc = new DOMParser().parseFromString(await answer.text(), "text/html");
      for (const fresh of doc.querySelectorAll("[data-live]")) {
        const here = document.getElementById(fresh.id);
        if (!here || applied.get(fresh.id) === fresh.innerHTML) continue;
        applied.set(fresh.id, fresh.innerHTML);
        swap(here, fresh);
      }
      revealButtons();
      status("ok", "live · updated " + new Date().toLocaleTimeString());
    } catch (err) {
      status("error", "cannot reach kafkaemu (" + err.message + "), retrying");
    } finally {
      busy = false;
      if (!paused) timer = setTimeout(refresh, again ? 0 : INTERVAL_MS);
    }
  }

  function revealButtons() {
    document.querySelectorAll("button[data-action]").forEach((b) => { b.hidden = false; });
    document.querySelectorAll(".howto").forEach((el) => { el.hidden = true; });
  }

  async function call(method, path, body) {
    const headers = {"Content-Type": "application/json"};
    if (token()) headers.Authorization = "Bearer " + token();
    const answer = await fetch(path, {method, headers, body: JSON.stringify(body || {})});
    if (!answer.ok) {
      const text = await answer.text();
      throw new Error(answer.status + ": " + text);
    }
    return answer.json();
  }

  document.addEventListener("click", async (event) => {
    const button = event.target.closest("button[data-action]");
    if (!button) return;
    if (button.dataset.action === "log-on") {
      button.disabled = true;
      try {
        await call("PUT", "/api/requests/config", {enabled: true});
      } catch (err) {
        status("error", "could not start the request log: " + err.message);
      }
      refresh();
    }
  });

  // Filters change the URL (so a reload or a shared link keeps them) and apply at once.
  let filterTimer = null;
  function applyFilters() {
    const query = new URLSearchParams();
    for (const [name, value] of new FormData(filters)) {
      if (value !== "") query.set(name, value);
    }
    const search = query.toString();
    history.replaceState(null, "", location.pathname + (search ? "?" + search : "") + location.hash);
    refresh();
  }
  filters.addEventListener("input", () => {
    clearTimeout(filterTimer);
    filterTimer = setTimeout(applyFilters, 250);
  });
  filters.addEventListener("submit", (event) => {
    event.preventDefault();
    applyFilters();
  });

  pauseButton.hidden = false;
  pauseButton.addEventListener("click", () => {
    paused = !paused;
    pauseButton.textContent = paused ? "Resume" : "Pause";
    if (paused) {
      clearTimeout(timer);
      status("paused", "paused");
    } else {
      refresh();
    }
  });

  document.addEventListener("visibilitychange", () => {
    if (!document.hidden) refresh();
  });

  for (const el of document.querySelectorAll("[data-live]")) applied.set(el.id, el.innerHTML);
  scrollers(document).forEach((el) => { el.scrollLeft = el.scrollWidth; });
  revealButtons();
  status("ok", "live");
  timer = setTimeout(refresh, INTERVAL_MS);
})();
