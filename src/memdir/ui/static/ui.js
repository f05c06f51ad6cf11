// memdir ui: the tree opens folders in place, one folder's children fetched at a time.
// No framework and no build step; every fragment comes from this server, already escaped.
"use strict";

function bindToggles(root) {
  root.querySelectorAll("button.toggle[data-children]").forEach(function (btn) {
    if (btn.dataset.bound) return;
    btn.dataset.bound = "1";
    btn.addEventListener("click", function () { toggle(btn); });
  });
}

function toggle(btn) {
  var li = btn.parentElement;
  var open = li.querySelector(":scope > ul.tree, :scope > .loading, :scope > .error");
  if (open) {
    open.remove();
    btn.setAttribute("aria-expanded", "false");
    btn.textContent = "▸";
    return;
  }
  var wait = document.createElement("div");
  wait.className = "loading";
  wait.textContent = "loading…";
  li.appendChild(wait);
  btn.setAttribute("aria-expanded", "true");
  btn.textContent = "▾";
  fetch(btn.dataset.children, { credentials: "same-origin" })
    .then(function (r) {
      return r.text().then(function (t) { return { ok: r.ok, text: t }; });
    })
    .then(function (res) {
      wait.remove();
      if (!res.ok) {
        var err = document.createElement("div");
        err.className = "error";
        err.textContent = "could not open this folder";
        li.appendChild(err);
        return;
      }
      var box = document.createElement("template");
      box.innerHTML = res.text;
      var ul = box.content.querySelector("ul.tree");
      if (ul) { li.appendChild(ul); bindToggles(ul); }
    });
}

function markCited() {
  var first = document.querySelector(".cited");
  if (first && !location.hash) first.scrollIntoView({ block: "center" });
}

document.addEventListener("DOMContentLoaded", function () {
  bindToggles(document);
  markCited();
  document.body.dataset.ready = "1";
});
