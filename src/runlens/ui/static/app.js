// RunLens pages: live runs list, live run page (server-sent events), cancel, start a run.
// Loaded as /static/app.js (the CSP allows no inline script); pages pass what it needs in
// data-* attributes. Everything shown from the server is set as text, never as HTML, except
// sections swapped in from the server's own rendering of the same page.
"use strict";

(function () {
  var EVENT_STATUS = {
    "run.created": "created",
    "run.started": "running",
    "run.validating": "validating",
    "run.completed": "completed",
    "run.failed": "failed",
    "run.cancelled": "cancelled",
    "run.interrupted": "interrupted",
  };

  function fetchPage(url) {
    return fetch(url, { headers: { Accept: "text/html" }, credentials: "same-origin" })
      .then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.text();
      })
      .then(function (html) {
        return new DOMParser().parseFromString(html, "text/html");
      });
  }

  // Replace the elements matching `selectors` with their counterparts in `fresh`.
  function swap(fresh, selectors) {
    selectors.forEach(function (selector) {
      var current = document.querySelector(selector);
      var replacement = fresh.querySelector(selector);
      if (current && replacement) current.replaceWith(document.importNode(replacement, true));
    });
  }

  function errorDetail(response) {
    return response
      .json()
      .then(function (body) {
        return body && body.detail ? String(body.detail) : "HTTP " + response.status;
      })
      .catch(function () {
        return "HTTP " + response.status;
      });
  }

  // -- the runs list: refreshed every few seconds while a listed run is live ---------------
  function followRunsList() {
    if (!document.getElementById("runs")) return;
    function schedule() {
      var current = document.getElementById("runs");
      if (current && current.dataset.live === "1") setTimeout(refresh, 3000);
    }
    function refresh() {
      fetchPage(window.location.href)
        .then(function (fresh) {
          swap(fresh, ["#runs"]);
        })
        .catch(function () {})
        .then(schedule);
    }
    schedule();
  }

  // -- one run: its events streamed live, the verdict and plan updated as they arrive -----
  // Events that put a live run in a status (the end states come with the stream's `end`,
  // once the store holds the run's final records).
  var EVENT_STATUS = {
    "run.created": "created",
    "run.started": "running",
    "run.validating": "validating",
    "repair.requested": "running",
  };

  // The banner's sentence for `status`: the error message when there is one, else the one
  // the server rendered for that status (`data-text-<status>` on the banner).
  function verdictText(verdict, status, message) {
    if (message) return String(message);
    var text = verdict.getAttribute("data-text-" + status);
    return text !== null ? text : "The run ended " + status + ".";
  }

  function setVerdict(status, message) {
    var verdict = document.getElementById("verdict");
    if (!verdict) return;
    verdict.dataset.status = status;
    verdict.className = "verdict status-" + status;
    var label = verdict.querySelector("[data-verdict-status]");
    if (label) label.textContent = status;
    var text = verdict.querySelector("[data-verdict-message]");
    if (text) text.textContent = verdictText(verdict, status, message);
  }

  function addWarning(message) {
    var verdict = document.getElementById("verdict");
    if (!verdict || typeof message !== "string" || !message) return;
    var list = verdict.querySelector("[data-verdict-warnings]");
    if (!list) {
      list = document.createElement("ul");
      list.className = "verdict-warnings";
      list.setAttribute("data-verdict-warnings", "");
      var text = verdict.querySelector("[data-verdict-message]");
      var note = verdict.querySelector(".verdict-note");
      var after = note || text;
      if (after) after.after(list);
      else verdict.appendChild(list);
    }
    var known = Array.prototype.some.call(list.children, function (item) {
      return item.textContent === message;
    });
    if (known) return;
    var item = document.createElement("li");
    item.textContent = message;
    list.appendChild(item);
  }

  function cell(text, className) {
    var td = document.createElement("td");
    td.textContent = text;
    if (className) td.className = className;
    return td;
  }

  function summary(data) {
    if (!data || typeof data !== "object" || Object.keys(data).length === 0) return "";
    var text = JSON.stringify(data);
    return text.length > 200 ? text.slice(0, 199) + "…" : text;
  }

  function when(ts) {
    if (!ts) return "";
    var date = new Date(ts);
    if (isNaN(date.getTime())) return String(ts);
    return date.toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
  }

  function addEvent(event) {
    var body = document.getElementById("events");
    if (!body || body.querySelector('[data-seq="' + Number(event.seq) + '"]')) return;
    var row = document.createElement("tr");
    row.dataset.seq = String(event.seq);
    row.className = "fresh";
    row.appendChild(cell(String(event.seq), "num"));
    row.appendChild(cell(when(event.ts), "nowrap mono"));
    row.appendChild(cell(String(event.type), "mono nowrap event-type"));
    row.appendChild(cell(summary(event.data), "mono event-data"));
    body.appendChild(row);
  }

  // Show one step's status (and why, when it failed); false when the page has no such step.
  function showStep(stepId, state) {
    var found = false;
    document.querySelectorAll("[data-step-id]").forEach(function (step) {
      if (step.dataset.stepId !== stepId) return;
      found = true;
      step.className = "step status-" + state.status;
      var badge = step.querySelector("[data-step-status]");
      if (badge) {
        badge.textContent = state.status;
        badge.className = "badge status-" + state.status;
      }
      var reason = step.querySelector("[data-step-reason]");
      if (reason) {
        reason.textContent = state.reason;
        reason.hidden = !state.reason;
      }
    });
    return found;
  }

  function followRun() {
    var run = document.getElementById("run");
    if (!run || run.dataset.live !== "1" || !window.EventSource) return;
    var status = document.getElementById("live-status");
    var url = run.dataset.eventsUrl + "?after=" + encodeURIComponent(run.dataset.lastSeq || "0");
    var source = new EventSource(url);
    var ended = false;
    // Each step's latest status from the stream: re-applied over a plan swapped in from the
    // server, which may be a moment behind the stream.
    var steps = {};
    var refreshing = false;
    var again = false;

    // Swap in the server's plan and run details (a step the page has no element for yet,
    // a new status: the duration moves on).
    function refreshSections() {
      if (refreshing) {
        again = true;
        return;
      }
      refreshing = true;
      fetchPage(run.dataset.pageUrl)
        .then(function (fresh) {
          if (ended) return;
          swap(fresh, ["#plan", ".meta"]);
          Object.keys(steps).forEach(function (stepId) {
            showStep(stepId, steps[stepId]);
          });
        })
        .catch(function () {})
        .then(function () {
          refreshing = false;
          if (again && !ended) {
            again = false;
            refreshSections();
          }
        });
    }

    source.addEventListener("run_event", function (message) {
      var event;
      try {
        event = JSON.parse(message.data);
      } catch (error) {
        return;
      }
      if (!event || typeof event !== "object") return;
      addEvent(event);
      var data = event.data && typeof event.data === "object" ? event.data : {};
      if (event.type === "plan.step.updated" && data.step_id) {
        var stepId = String(data.step_id);
        steps[stepId] = {
          status: String(data.status || "pending"),
          reason: typeof data.reason === "string" ? data.reason : "",
        };
        if (!showStep(stepId, steps[stepId])) refreshSections();
      } else if (event.type === "run.warned") {
        addWarning(data.message);
      }
      var next = EVENT_STATUS[event.type];
      var verdict = document.getElementById("verdict");
      if (next && verdict && verdict.dataset.status !== next) {
        setVerdict(next);
        refreshSections();
      }
    });
    source.addEventListener("end", function (message) {
      source.close();
      ended = true;
      var end = {};
      try {
        end = JSON.parse(message.data) || {};
      } catch (error) {
        end = {};
      }
      if (end.status) setVerdict(String(end.status), end.error_message || "");
      if (status) status.textContent = "The run has ended.";
      run.dataset.live = "0";
      // The verdict, plan, deliverables and findings as the store now has them.
      fetchPage(run.dataset.pageUrl)
        .then(function (fresh) {
          swap(fresh, ["#verdict", "#signature", "#source", "#plan", "#artifacts", "#findings", ".meta", ".actions"]);
          // The drift form is only on an ended run's page: add it after the source lock.
          var drift = fresh.querySelector("#drift");
          var source = document.getElementById("source");
          if (drift && source && !document.getElementById("drift")) {
            source.after(document.importNode(drift, true));
          }
          // So is the review panel: add it before the signature.
          var review = fresh.querySelector("#review");
          var signature = document.getElementById("signature");
          if (review && signature && !document.getElementById("review")) {
            signature.before(document.importNode(review, true));
          }
        })
        .catch(function () {
          window.location.reload();
        });
    });
    source.addEventListener("error", function () {
      if (status && source.readyState !== EventSource.CLOSED) {
        status.textContent = "Connection lost; reconnecting…";
      }
    });
    source.addEventListener("open", function () {
      if (status) status.textContent = "Following the run live…";
    });
  }

  // -- the cancel button ---------------------------------------------------------------------
  function wireCancel() {
    document.addEventListener("click", function (click) {
      var button = click.target.closest ? click.target.closest("#cancel") : null;
      if (!button) return;
      var note = document.getElementById("cancel-status");
      button.disabled = true;
      fetch(button.dataset.cancelUrl, {
        method: "POST",
        headers: { Accept: "application/json" },
        credentials: "same-origin",
      })
        .then(function (response) {
          if (response.ok) {
            button.textContent = "Cancelling…";
            if (note) note.textContent = "Cancellation requested.";
            return;
          }
          return errorDetail(response).then(function (detail) {
            button.disabled = false;
            if (note) note.textContent = "Could not cancel: " + detail;
          });
        })
        .catch(function (error) {
          button.disabled = false;
          if (note) note.textContent = "Could not cancel: " + error.message;
        });
    });
  }

  // -- the new-run form: posted with fetch, then on to the run's page ----------------------
  function wireNewRun() {
    var form = document.getElementById("new-run");
    if (!form) return;
    var plugin = form.querySelector('select[name="plugin"]');
    function showDescription() {
      document.querySelectorAll(".plugin-description").forEach(function (element) {
        element.hidden = plugin && element.dataset.plugin !== plugin.value;
      });
    }
    if (plugin) {
      plugin.addEventListener("change", showDescription);
      showDescription();
    }
    form.addEventListener("submit", function (submit) {
      submit.preventDefault();
      var status = document.getElementById("new-run-status");
      var button = form.querySelector('button[type="submit"]');
      var data = new FormData(form);
      // Options left empty are the plugin's defaults: leave them out of the request.
      ["id_column", "text_column", "encoding", "sheet"].forEach(function (name) {
        if (data.get(name) === "") data.delete(name);
      });
      if (button) button.disabled = true;
      if (status) status.textContent = "Uploading…";
      fetch(form.action, {
        method: "POST",
        body: data,
        headers: { Accept: "application/json" },
        credentials: "same-origin",
      })
        .then(function (response) {
          if (response.ok) {
            return response.json().then(function (body) {
              if (status) status.textContent = "Started " + body.run_id + "…";
              window.location.assign(body.url || "/runs/" + encodeURIComponent(body.run_id));
            });
          }
          return errorDetail(response).then(function (detail) {
            if (status) status.textContent = "Not started: " + detail;
            if (button) button.disabled = false;
          });
        })
        .catch(function (error) {
          if (status) status.textContent = "Not started: " + error.message;
          if (button) button.disabled = false;
        });
    });
  }

  // -- the verify button: POST /api/runs/{id}/verify, every check shown as text -----------
  function showChecks(result, body) {
    result.textContent = "";
    var verdict = document.createElement("p");
    verdict.className = "verify-verdict";
    verdict.dataset.verified = body.verified ? "true" : "false";
    verdict.textContent = body.verified ? "verified" : "not verified";
    result.appendChild(verdict);
    var list = document.createElement("ul");
    list.className = "verify-checks";
    (Array.isArray(body.checks) ? body.checks : []).forEach(function (check) {
      var item = document.createElement("li");
      item.className = check && check.ok ? "check-ok" : "check-bad";
      item.dataset.check = String(check && check.check);
      var mark = document.createElement("span");
      mark.textContent = check && check.ok ? "✓ " : "✕ ";
      var name = document.createElement("code");
      name.textContent = String(check && check.check);
      var detail = document.createElement("span");
      detail.textContent = check && check.detail ? String(check.detail) : "";
      item.appendChild(mark);
      item.appendChild(name);
      item.appendChild(detail);
      list.appendChild(item);
    });
    result.appendChild(list);
  }

  function wireVerify() {
    document.addEventListener("click", function (click) {
      var button = click.target.closest ? click.target.closest("#verify-run") : null;
      if (!button) return;
      var result = document.getElementById("verify-result");
      if (!result) return;
      button.disabled = true;
      result.textContent = "Verifying…";
      fetch(button.dataset.verifyUrl, {
        method: "POST",
        headers: { Accept: "application/json" },
        credentials: "same-origin",
      })
        .then(function (response) {
          if (response.ok) {
            return response.json().then(function (body) {
              showChecks(result, body || {});
            });
          }
          return errorDetail(response).then(function (detail) {
            result.textContent = "Could not verify: " + detail;
          });
        })
        .catch(function (error) {
          result.textContent = "Could not verify: " + error.message;
        })
        .then(function () {
          button.disabled = false;
        });
    });
  }

  // -- the drift form: a newer input posted with fetch, then the run page showing it -------
  // Delegated: the form of a run that ended while the page followed it is swapped in later.
  function wireDrift() {
    document.addEventListener("submit", function (submit) {
      var form = submit.target;
      if (!form || form.id !== "drift-form") return;
      submit.preventDefault();
      var status = document.getElementById("drift-status");
      var button = form.querySelector('button[type="submit"]');
      if (button) button.disabled = true;
      if (status) status.textContent = "Comparing…";
      fetch(form.action, {
        method: "POST",
        body: new FormData(form),
        headers: { Accept: "application/json" },
        credentials: "same-origin",
      })
        .then(function (response) {
          if (response.ok) {
            return response.json().then(function (body) {
              var target = new URL(String(body.page_url), window.location.href);
              if (target.origin !== window.location.origin) throw new Error("unexpected answer");
              window.location.assign(target.href);
            });
          }
          return errorDetail(response).then(function (detail) {
            if (status) status.textContent = "Not compared: " + detail;
            if (button) button.disabled = false;
          });
        })
        .catch(function (error) {
          if (status) status.textContent = "Not compared: " + error.message;
          if (button) button.disabled = false;
        });
    });
  }

  function start() {
    followRunsList();
    followRun();
    wireCancel();
    wireVerify();
    wireDrift();
    wireNewRun();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
