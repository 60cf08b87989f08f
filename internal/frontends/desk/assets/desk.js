// agentx desk: keeps the queue live. The server sends the queue's ids in
// order, why an item left it, and the server-rendered (escaped) HTML of
// the items that joined it. Nothing else runs here: actions are plain
// form posts.
"use strict";
(function () {
  const queue = document.getElementById("queue");
  const notices = document.getElementById("notices");
  const live = document.getElementById("live");
  const count = document.getElementById("count");
  const empty = document.getElementById("empty");
  const flash = document.getElementById("flash");
  if (flash) flash.focus();
  if (!queue || !window.EventSource) return;

  function items() { return Array.from(queue.querySelectorAll("article.item")); }

  function settled(el, why) {
    const p = document.createElement("p");
    p.className = "notice";
    p.setAttribute("role", "status");
    p.textContent = el.dataset.id + " " + (why || "was settled elsewhere") + ".";
    notices.prepend(p);
    while (notices.children.length > 5) notices.lastElementChild.remove();
    el.remove();
  }

  function apply(m) {
    const want = new Set(m.ids);
    for (const el of items()) {
      if (!want.has(el.dataset.id)) settled(el, m.removed && m.removed[el.dataset.id]);
    }
    let prev = null;
    for (const id of m.ids) {
      let el = document.getElementById("item-" + id);
      if (!el && m.html && m.html[id]) {
        const t = document.createElement("template");
        t.innerHTML = m.html[id];
        el = t.content.firstElementChild;
        if (prev) prev.after(el); else empty.after(el);
      }
      if (el) prev = el;
    }
    const n = items().length;
    count.textContent = String(n);
    empty.hidden = n > 0;
  }

  const es = new EventSource("/events");
  es.addEventListener("queue", function (ev) { apply(JSON.parse(ev.data)); });
  es.onopen = function () { live.textContent = "live"; live.classList.add("on"); };
  es.onerror = function () { live.textContent = "reconnecting"; live.classList.remove("on"); };
})();
