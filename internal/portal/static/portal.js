// posgate portal: draws the charts of the dashboard as inline SVG from
// their data-chart attribute (the table inside stays for readers without
// script). posgate's own code; no library.
"use strict";
(function () {
  var NS = "http://www.w3.org/2000/svg";
  function el(name, attrs, text) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) { e.setAttribute(k, attrs[k]); }
    if (text !== undefined) { e.textContent = text; }
    return e;
  }
  function draw(fig) {
    var data;
    try { data = JSON.parse(fig.getAttribute("data-chart")); } catch (e) { return; }
    if (!data || !data.length) { return; }
    var w = 480, h = 140, pad = 18, max = 1, every = parseInt(fig.getAttribute("data-every"), 10) || 3;
    data.forEach(function (d) { if (d.count > max) { max = d.count; } });
    var svg = el("svg", { viewBox: "0 0 " + w + " " + h, role: "img", "aria-label": fig.getAttribute("data-title") || "chart" });
    var bw = (w - pad) / data.length;
    data.forEach(function (d, i) {
      var bh = Math.round((h - 2 * pad) * d.count / max);
      var x = pad + i * bw;
      var r = el("rect", { "class": "bar", x: x + 1, y: h - pad - bh, width: Math.max(bw - 2, 1), height: bh });
      r.appendChild(el("title", {}, d.label + ":00 – " + d.count));
      svg.appendChild(r);
      if (d.count > 0) { svg.appendChild(el("text", { "class": "axis", x: x + bw / 2, y: h - pad - bh - 3, "text-anchor": "middle" }, String(d.count))); }
      if (i % every === 0) { svg.appendChild(el("text", { "class": "axis", x: x + bw / 2, y: h - 5, "text-anchor": "middle" }, d.label)); }
    });
    svg.appendChild(el("text", { "class": "axis", x: 0, y: pad - 6 }, "max " + max));
    var table = fig.querySelector("table.fallback");
    if (table) { table.hidden = true; }
    fig.appendChild(svg);
  }
  document.addEventListener("DOMContentLoaded", function () {
    Array.prototype.forEach.call(document.querySelectorAll("[data-chart]"), draw);
  });
})();

// A file upload shows its progress: the form is sent by XMLHttpRequest
// (the same multipart post, CSRF field included), and the answer replaces
// the page as a normal submission would.
(function () {
  document.addEventListener("DOMContentLoaded", function () {
    Array.prototype.forEach.call(document.querySelectorAll("form[data-progress]"), function (form) {
      var bar = document.getElementById(form.getAttribute("data-progress"));
      form.addEventListener("submit", function (ev) {
        if (!window.FormData || !bar) { return; }
        ev.preventDefault();
        var xhr = new XMLHttpRequest();
        bar.hidden = false;
        bar.value = 0;
        xhr.upload.addEventListener("progress", function (e) {
          if (e.lengthComputable) { bar.value = Math.round(100 * e.loaded / e.total); }
        });
        xhr.addEventListener("load", function () {
          bar.value = 100;
          if (xhr.status >= 200 && xhr.status < 300 && xhr.responseURL && xhr.responseURL !== form.action) {
            window.location.assign(xhr.responseURL);
            return;
          }
          document.open();
          document.write(xhr.responseText);
          document.close();
        });
        xhr.addEventListener("error", function () { bar.hidden = true; form.submit(); });
        xhr.open("POST", form.action);
        xhr.send(new FormData(form));
      });
    });
  });
})();

// The carousel preview plays the slides as the customer screen does, each
// for its seconds; the form of a new slide shows it as it is typed.
(function () {
  document.addEventListener("DOMContentLoaded", function () {
    Array.prototype.forEach.call(document.querySelectorAll("[data-slides]"), function (box) {
      var slides = box.querySelectorAll(".slide");
      if (slides.length === 0) { return; }
      var i = 0;
      box.setAttribute("data-playing", "");
      function show() {
        for (var k = 0; k < slides.length; k++) { slides[k].classList.toggle("current", k === i); }
        box.setAttribute("data-current", slides[i].getAttribute("data-slide-id"));
        var secs = parseInt(slides[i].getAttribute("data-duration"), 10) || 5;
        i = (i + 1) % slides.length;
        setTimeout(show, secs * 1000);
      }
      show();
    });
    Array.prototype.forEach.call(document.querySelectorAll("form[data-preview]"), function (form) {
      var card = document.getElementById(form.getAttribute("data-preview"));
      if (!card) { return; }
      function update() {
        var src = form.querySelector("[data-preview-src]").value.trim();
        var img = card.querySelector("img");
        if (/^(https:|data:image\/)/.test(src)) { img.src = src; } else { img.removeAttribute("src"); }
        card.querySelector("b").textContent = form.querySelector("[data-preview-title]").value;
        card.querySelector("span").textContent = form.querySelector("[data-preview-text]").value;
      }
      form.addEventListener("input", update);
      update();
    });
  });
})();
