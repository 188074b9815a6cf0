// Placeholder until the self-check lands: shows the view and says the file was not checked.
(function () {
  "use strict";
  var bundle = JSON.parse(document.getElementById("runlens-export").textContent);
  var view = document.getElementById("runlens-view");
  view.innerHTML = bundle.view;
  view.hidden = false;
  var check = document.getElementById("runlens-check");
  check.className = "check check-off";
  check.textContent = "This page does not check itself yet: run runlens verify FILE.html.";
})();
