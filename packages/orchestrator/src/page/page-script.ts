/**
 * The page's script, plain ES2020 run by the browser as it is. Results are written with textContent only
 * (never innerHTML), so nothing a tool returns can run as markup. A `?token=` in the page's address is sent
 * as the bearer token on every API call (a browser cannot add a header to its first navigation).
 */
export const PAGE_JS = String.raw`"use strict";
(function () {
  var token = new URLSearchParams(location.search).get("token");
  var headers = function (extra) {
    var h = Object.assign({}, extra || {});
    if (token) h.authorization = "Bearer " + token;
    return h;
  };
  var $ = function (id) { return document.getElementById(id); };
  var el = function (tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  };
  var fmtMb = function (mb) {
    if (mb >= 1024) return (mb / 1024).toFixed(1) + " GiB";
    if (mb >= 1) return mb.toFixed(1) + " MiB";
    return Math.round(mb * 1024) + " KiB";
  };
  var errorLine = function (error) {
    var p = el("p", "error", (error.code || "error") + ": " + (error.message || String(error)));
    if (error.hint) p.appendChild(el("span", "hint", " (" + error.hint + ")"));
    return p;
  };

  var refreshSoon = null;
  function call(server, tool, input) {
    // A call may have started its server: the health row catches up once the calls settle.
    clearTimeout(refreshSoon);
    refreshSoon = setTimeout(loadServers, 1500);
    return fetch("/api/call/" + server + "/" + tool, {
      method: "POST",
      headers: headers({ "content-type": "application/json" }),
      body: JSON.stringify(input || {}),
    }).then(function (r) { return r.json(); }).then(function (body) {
      if (body.error) throw body.error;
      return body.result;
    });
  }

  /** Server-sent events over fetch (EventSource cannot send the token), one callback per event. */
  function stream(url, init, onEvent) {
    return fetch(url, init).then(function (res) {
      if (!res.ok) return res.json().then(function (b) { throw b.error || { code: "E_HTTP", message: String(res.status) }; });
      var reader = res.body.getReader();
      var decoder = new TextDecoder();
      var buffer = "";
      function pump() {
        return reader.read().then(function (chunk) {
          if (chunk.done) return;
          buffer += decoder.decode(chunk.value, { stream: true });
          var parts = buffer.split("\n\n");
          buffer = parts.pop();
          parts.forEach(function (block) {
            var name = "message";
            var data = "";
            block.split("\n").forEach(function (line) {
              if (line.indexOf("event: ") === 0) name = line.slice(7);
              else if (line.indexOf("data: ") === 0) data += line.slice(6);
            });
            onEvent(name, data ? JSON.parse(data) : null);
          });
          return pump();
        });
      }
      return pump();
    });
  }

  // Servers' health.
  function loadServers() {
    fetch("/api/servers", { headers: headers() }).then(function (r) { return r.json(); }).then(function (body) {
      var list = $("servers");
      list.textContent = "";
      body.servers.forEach(function (s) {
        var li = el("li", s.state, s.name);
        li.dataset.state = s.state;
        li.title = s.state === "ok" ? s.url + " pid " + (s.pid || "remote") + " v" + s.version
          : s.state === "idle" ? "not running: starts on its first call" : (s.error ? s.error.message : "unhealthy");
        if (s.state !== "ok") li.appendChild(el("span", "muted", " " + s.state));
        list.appendChild(li);
      });
    }).catch(function () {});
  }

  // Diagnose: the triage loop, its steps as they end, then the label and evidence.
  $("triage-form").addEventListener("submit", function (ev) {
    ev.preventDefault();
    var button = $("triage-run");
    var steps = $("triage-steps");
    button.disabled = true;
    button.textContent = "Diagnosing…";
    steps.textContent = "";
    $("triage-verdict").hidden = true;
    var done = function () {
      button.disabled = false;
      button.textContent = "Diagnose";
      loadServers();
    };
    stream("/api/triage", {
      method: "POST",
      headers: headers({ "content-type": "application/json" }),
      body: JSON.stringify({ symptom: $("symptom").value }),
    }, function (name, data) {
      if (name === "step" && data.requested_tool) {
        var li = el("li", null, data.requested_tool + " ");
        // "answered", not a green "ok": an answer may be the failure it found (a DNS timeout); the evidence says.
        li.appendChild(el("span", data.call_ok ? "muted" : "bad-text", data.call_ok ? "answered" : (data.error_code || "failed")));
        li.appendChild(el("span", "muted", " " + data.duration_ms + " ms" + (data.attached ? " (started its server)" : "")));
        steps.appendChild(li);
      } else if (name === "result") {
        var label = $("triage-label");
        label.textContent = data.label;
        label.className = "label " + data.label;
        $("triage-reason").textContent = data.reason + " (" + data.steps + " tool call" + (data.steps === 1 ? "" : "s") + ")";
        var evidence = $("triage-evidence");
        evidence.textContent = "";
        data.evidence.forEach(function (e) {
          var li = el("li");
          li.appendChild(el("code", null, e.tool));
          li.appendChild(document.createTextNode(": " + (e.ok ? e.summary : e.error.code + " " + e.error.message)));
          evidence.appendChild(li);
        });
        $("triage-verdict").hidden = false;
      } else if (name === "error") {
        steps.appendChild(errorLine(data));
      }
    }).catch(function (e) { steps.appendChild(errorLine(e.code ? e : { code: "E_PAGE", message: String(e) })); }).then(done);
  });

  // Connectivity: connectivity_watch rounds as a timeline, one column per round.
  var watching = null;
  $("watch-toggle").addEventListener("click", function () {
    var toggle = $("watch-toggle");
    if (watching) { watching.abort(); return; }
    watching = new AbortController();
    toggle.textContent = "Stop";
    stream("/api/watch?interval_ms=2000", { headers: headers(), signal: watching.signal }, function (name, data) {
      if (name === "round") {
        ["gateway", "dns", "http"].forEach(function (probe) {
          var cells = document.querySelector('.cells[data-probe="' + probe + '"]');
          var cell = el("span", data[probe].ok ? "cell" : "cell bad");
          cell.title = "round " + data.round + ": " + data[probe].detail + " (" + data[probe].ms + " ms)";
          cells.appendChild(cell);
          while (cells.childNodes.length > 40) cells.removeChild(cells.firstChild);
        });
        var now = $("watch-now");
        now.className = data.verdict === "ok" ? "ok-text" : "bad-text";
        now.textContent = "round " + data.round + ": " + (data.verdict === "ok" ? "gateway, DNS and HTTP all fine"
          : (data.verdict === "no_gateway" ? "gateway" : data.verdict) + " failing: " + (data.verdict === "no_gateway" ? data.gateway : data[data.verdict] || data.http).detail);
      } else if (name === "error") {
        $("watch-now").replaceWith(errorLine(data));
      }
    }).catch(function (e) { if (e.name !== "AbortError") $("watch-now").textContent = String(e.message || e); })
      .then(function () { watching = null; toggle.textContent = "Watch"; });
  });

  // Disk: a bar per filesystem, then where the space under one directory went.
  function loadDisk() {
    var box = $("disk-mounts");
    call("storage", "disk_usage", {}).then(function (r) {
      box.textContent = "";
      r.mounts.forEach(function (m) {
        var row = el("div", "mount");
        row.appendChild(el("span", "name mono", m.mount)).title = m.mount;
        var pct = m.used_pct === null ? 0 : m.used_pct;
        var bar = el("div", "bar" + (pct >= 95 ? " full" : pct >= 85 ? " high" : ""));
        var fill = el("span");
        fill.style.width = pct + "%";
        bar.appendChild(fill);
        bar.title = m.used_gb + " of " + m.total_gb + " GiB used, " + m.available_gb + " GiB free (" + m.fs + ")";
        row.appendChild(bar);
        row.appendChild(el("span", "muted", pct + "% of " + m.total_gb.toFixed(1) + " GiB"));
        box.appendChild(row);
      });
    }).catch(function (e) { box.textContent = ""; box.appendChild(errorLine(e)); });
  }
  $("disk-refresh").addEventListener("click", loadDisk);

  var COLORS = ["#0969da", "#8250df", "#bf3989", "#cf222e", "#bc4c00", "#9a6700", "#1a7f37", "#1b7c83", "#57606a"];
  $("consumers-form").addEventListener("submit", function (ev) {
    ev.preventDefault();
    var box = $("consumers");
    box.textContent = "walking…";
    // depth 1: the children of the directory only, so the shares add up (no parent counted with its child).
    call("storage", "top_consumers", { path: $("consumers-path").value, depth: 1, n: 8 }).then(function (r) {
      box.textContent = "";
      var total = r.total_mb || 1;
      var shown = 0;
      var stack = el("div", "stack");
      var legend = el("div", "legend");
      var add = function (name, mb, color) {
        var part = el("span");
        part.style.width = (100 * mb / total) + "%";
        part.style.background = color;
        part.title = name + " " + fmtMb(mb);
        stack.appendChild(part);
        var sw = el("span", "swatch");
        sw.style.background = color;
        legend.appendChild(sw);
        legend.appendChild(el("span", "mono", name));
        legend.appendChild(el("span", null, fmtMb(mb) + " · " + Math.round(100 * mb / total) + "%"));
      };
      r.entries.forEach(function (e, i) {
        shown += e.size_mb;
        add(e.name + (e.type === "dir" ? "/" : ""), e.size_mb, COLORS[i % (COLORS.length - 1)]);
      });
      if (total - shown > 0.05) add("everything else", total - shown, "#d0d7de");
      box.appendChild(el("p", null, r.path + ": " + fmtMb(r.total_mb) + " in all"));
      box.appendChild(stack);
      box.appendChild(legend);
    }).catch(function (e) { box.textContent = ""; box.appendChild(errorLine(e)); });
  });

  // Ports: who listens where, with the systemd unit of each process.
  function loadPorts() {
    var rows = $("ports-rows");
    call("ports", "listening_sockets", {}).then(function (r) {
      rows.textContent = "";
      var units = {};
      r.sockets.forEach(function (s) {
        var tr = el("tr");
        [s.proto, s.local, s.port, s.process || "?", s.pid === null ? "-" : s.pid, ""].forEach(function (v, i) {
          var td = el("td", i === 1 || i === 5 ? "mono" : null, v);
          tr.appendChild(td);
        });
        if (s.pid !== null) (units[s.pid] = units[s.pid] || []).push(tr.lastChild);
        rows.appendChild(tr);
      });
      Object.keys(units).slice(0, 30).forEach(function (pid) {
        call("ports", "process_info", { pid: Number(pid) }).then(function (p) {
          var unit = (p.processes && p.processes[0] && p.processes[0].unit) || "-";
          units[pid].forEach(function (td) { td.textContent = unit; });
        }).catch(function () { units[pid].forEach(function (td) { td.textContent = "?"; }); });
      });
      if (r.sockets.length === 0) rows.appendChild(el("tr")).appendChild(el("td", "muted", "nothing is listening"));
    }).catch(function (e) { rows.textContent = ""; rows.appendChild(el("tr")).appendChild(el("td")).appendChild(errorLine(e)); });
  }
  $("ports-refresh").addEventListener("click", loadPorts);

  // Web: a TLS verdict, and webcheck's screenshots (both need OUTBOUND_ALLOW for webcheck).
  $("tls-form").addEventListener("submit", function (ev) {
    ev.preventDefault();
    var box = $("tls-verdict");
    box.textContent = "checking…";
    call("webcheck", "tls_info", { url: $("tls-url").value }).then(function (r) {
      box.textContent = "";
      var verdict = r.error ? r.error + ": " + (r.detail || "") : r.trusted ? "trusted" : "NOT trusted: " + (r.chain_error || r.name_error || "");
      box.appendChild(el("p", r.trusted ? "ok-text" : "bad-text", verdict));
      if (r.subject) box.appendChild(el("p", "muted", r.subject + " by " + r.issuer + ", " + r.expiry_days + " days left, " + r.protocol));
    }).catch(function (e) { box.textContent = ""; box.appendChild(errorLine(e)); });
  });
  function loadShots() {
    var box = $("shots");
    call("webcheck", "screenshots", {}).then(function (r) {
      box.textContent = "";
      if (r.files.length === 0) box.appendChild(el("p", "muted", "none yet: webcheck's snapshot stream saves them"));
      r.files.slice(0, 6).forEach(function (s) {
        var fig = el("figure");
        var img = el("img");
        img.alt = s.path;
        fetch("/api/screenshot?path=" + encodeURIComponent(s.path), { headers: headers() })
          .then(function (res) { return res.blob(); })
          .then(function (b) { img.src = URL.createObjectURL(b); });
        fig.appendChild(img);
        fig.appendChild(el("figcaption", null, s.taken_at));
        box.appendChild(fig);
      });
    }).catch(function (e) { box.textContent = ""; box.appendChild(errorLine(e)); });
  }
  $("shots-refresh").addEventListener("click", loadShots);

  loadServers();
  setInterval(loadServers, 10000);
  loadDisk();
  loadPorts();
  loadShots();
})();
`;
