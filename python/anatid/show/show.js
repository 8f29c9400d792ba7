/* anatid show: replay as_of over the recorded change instants.
   The data block lists, per frame, the keys the view as_of(frame) shows;
   a key is "current" in a frame that shows it, "past" after an earlier frame
   showed it, "future" before. Open the page with ?as_of=ISO (or #as_of=ISO)
   or ?frame=N to start at that instant. No network: everything is inline. */
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("anatid-data").textContent);
  var slider = document.getElementById("anatid-slider");
  var instant = document.getElementById("anatid-instant");
  var events = document.getElementById("anatid-events");
  var root = document.getElementById("anatid-root");
  var elements = Array.prototype.slice.call(root.querySelectorAll("[data-key]"));
  var first = {};
  data.frames.forEach(function (frame, i) {
    frame.v.forEach(function (k) { if (!(k in first)) { first[k] = i; } });
  });
  var index = {};
  data.keys.forEach(function (key, k) { index[key] = k; });

  function show(i) {
    var frame = data.frames[i];
    var here = {};
    frame.v.forEach(function (k) { here[k] = true; });
    elements.forEach(function (el) {
      var k = index[el.getAttribute("data-key")];
      var state = here[k] ? "current" : (k in first && first[k] <= i ? "past" : "future");
      el.setAttribute("data-state", state);
    });
    root.setAttribute("data-frame", String(i));
    instant.textContent = "as of " + frame.label + " UTC (" + (i + 1) + " of " + data.frames.length + ")";
    events.textContent = "";
    frame.events.forEach(function (text) {
      var li = document.createElement("li");
      li.textContent = text;
      events.appendChild(li);
    });
  }

  slider.addEventListener("input", function () { show(Number(slider.value)); });

  function wanted() {
    var params = [new URLSearchParams(location.search), new URLSearchParams(location.hash.replace(/^#/, ""))];
    for (var p = 0; p < params.length; p++) {
      var n = params[p].get("frame");
      if (n !== null && /^[0-9]+$/.test(n)) { return Math.min(Number(n), data.frames.length - 1); }
      var t = params[p].get("as_of");
      if (t !== null) {
        var ms = Date.parse(t);
        if (isNaN(ms)) { return null; }
        var pick = 0;
        data.frames.forEach(function (frame, i) { if (frame.ms <= ms) { pick = i; } });
        return pick;
      }
    }
    return null;
  }

  var start = wanted();
  slider.value = String(start === null ? data.initial : start);
  /* Move the slider the way a person would, so the same handler runs. */
  slider.dispatchEvent(new Event("input"));
})();
