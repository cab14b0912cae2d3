/** The page's HTML and CSS, served as they are (no template, no external asset). */

export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>RoadNerd</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/page.css">
<script src="/page.js" defer></script>
</head>
<body>
<header>
  <h1>RoadNerd <small>read-only laptop diagnostics</small></h1>
  <ul id="servers" aria-label="servers"></ul>
</header>
<main>
  <section id="diagnose" class="wide">
    <h2>Diagnose</h2>
    <form id="triage-form">
      <input id="symptom" name="symptom" maxlength="300" placeholder="what do you see? e.g. no internet, port 8080 in use, disk full" aria-label="symptom">
      <button id="triage-run" type="submit">Diagnose</button>
    </form>
    <ol id="triage-steps" aria-label="triage steps"></ol>
    <div id="triage-verdict" hidden>
      <p><span id="triage-label" class="label"></span> <span id="triage-reason"></span></p>
      <ul id="triage-evidence" aria-label="evidence"></ul>
    </div>
  </section>
  <section id="connectivity">
    <h2>Connectivity <button id="watch-toggle" type="button">Watch</button></h2>
    <p id="watch-now" class="muted">Gateway, DNS and HTTP, probed every 2 s while you watch.</p>
    <div id="watch-timeline" class="timeline" aria-label="connectivity timeline">
      <div class="row"><span class="rowname">gateway</span><span class="cells" data-probe="gateway"></span></div>
      <div class="row"><span class="rowname">DNS</span><span class="cells" data-probe="dns"></span></div>
      <div class="row"><span class="rowname">HTTP</span><span class="cells" data-probe="http"></span></div>
    </div>
  </section>
  <section id="disk">
    <h2>Disk <button id="disk-refresh" type="button">Refresh</button></h2>
    <div id="disk-mounts" aria-label="filesystems"></div>
    <form id="consumers-form">
      <input id="consumers-path" value="/var" aria-label="directory">
      <button type="submit">Where did the space go?</button>
    </form>
    <div id="consumers"></div>
  </section>
  <section id="ports" class="wide">
    <h2>Listening ports <button id="ports-refresh" type="button">Refresh</button></h2>
    <table>
      <thead><tr><th>proto</th><th>local</th><th>port</th><th>process</th><th>pid</th><th>unit</th></tr></thead>
      <tbody id="ports-rows"></tbody>
    </table>
  </section>
  <section id="web" class="wide">
    <h2>Web</h2>
    <form id="tls-form">
      <input id="tls-url" placeholder="https://example.com" aria-label="https URL">
      <button type="submit">Check TLS</button>
    </form>
    <div id="tls-verdict"></div>
    <h3>Screenshots <button id="shots-refresh" type="button">Refresh</button></h3>
    <div id="shots" class="shots"></div>
  </section>
</main>
<footer class="muted">Everything here is read-only. The page and its answers stay on this machine (127.0.0.1); Diagnose, Watch and Check TLS send their DNS, HTTP and TLS checks out to the network, as the tools do.</footer>
</body>
</html>
`;

export const PAGE_CSS = `
:root { --ok: #1a7f37; --bad: #cf222e; --warn: #9a6700; --idle: #8c959f; --fg: #1f2328; --muted: #656d76;
  --line: #d0d7de; --bg: #f6f8fa; --card: #fff; --accent: #0969da; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
header { padding: 12px 20px; background: var(--card); border-bottom: 1px solid var(--line); }
h1 { margin: 0 0 8px; font-size: 20px; }
h1 small { font-weight: normal; color: var(--muted); font-size: 13px; }
h2 { margin: 0 0 10px; font-size: 16px; display: flex; align-items: center; gap: 8px; }
h3 { font-size: 14px; display: flex; align-items: center; gap: 8px; }
main { display: grid; grid-template-columns: repeat(auto-fit, minmax(380px, 1fr)); gap: 14px; padding: 14px 20px; }
section { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 14px; min-width: 0; }
section.wide { grid-column: 1 / -1; }
footer { padding: 0 20px 16px; }
.muted { color: var(--muted); }
#servers { list-style: none; margin: 0; padding: 0; display: flex; flex-wrap: wrap; gap: 6px; }
#servers li { border: 1px solid var(--line); border-radius: 999px; padding: 2px 10px 2px 8px; font-size: 12px; }
#servers li::before { content: ""; display: inline-block; width: 8px; height: 8px; border-radius: 50%; margin-right: 6px; background: var(--idle); }
#servers li.ok::before { background: var(--ok); }
#servers li.error::before { background: var(--bad); }
form { display: flex; gap: 8px; margin: 6px 0; }
input { flex: 1; min-width: 0; padding: 6px 8px; border: 1px solid var(--line); border-radius: 6px; font: inherit; }
button { padding: 5px 12px; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); font: inherit; cursor: pointer; }
button[type=submit], #triage-run { background: var(--accent); color: #fff; border-color: var(--accent); }
button:disabled { opacity: .6; cursor: default; }
h2 button, h3 button { font-size: 12px; padding: 2px 8px; font-weight: normal; }
#triage-steps { padding-left: 22px; margin: 8px 0; }
#triage-steps li { margin: 2px 0; }
.ok-text { color: var(--ok); } .bad-text { color: var(--bad); }
.label { display: inline-block; padding: 2px 10px; border-radius: 6px; background: var(--fg); color: #fff; font-weight: 600; font-family: ui-monospace, monospace; }
.label.ok { background: var(--ok); } .label.unknown { background: var(--idle); }
#triage-evidence { padding-left: 18px; color: var(--muted); }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12.5px; }
.timeline .row { display: flex; align-items: center; gap: 8px; margin: 4px 0; }
.rowname { width: 60px; color: var(--muted); font-size: 12px; }
.cells { display: flex; gap: 2px; flex-wrap: nowrap; overflow: hidden; }
.cell { width: 10px; height: 18px; border-radius: 2px; background: var(--ok); }
.cell.bad { background: var(--bad); }
.bar { position: relative; height: 18px; background: var(--bg); border: 1px solid var(--line); border-radius: 4px; overflow: hidden; }
.bar > span { position: absolute; inset: 0 auto 0 0; background: var(--accent); }
.bar.full > span { background: var(--bad); } .bar.high > span { background: var(--warn); }
.mount { display: grid; grid-template-columns: 150px 1fr 130px; gap: 8px; align-items: center; margin: 4px 0; font-size: 12.5px; }
.mount .name { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.stack { display: flex; height: 26px; border-radius: 4px; overflow: hidden; border: 1px solid var(--line); margin: 8px 0; }
.stack > span { display: block; height: 100%; min-width: 2px; border-right: 1px solid #fff; }
.legend { display: grid; grid-template-columns: 14px 1fr auto; gap: 4px 8px; align-items: center; font-size: 12.5px; }
.swatch { width: 12px; height: 12px; border-radius: 2px; }
table { width: 100%; border-collapse: collapse; font-size: 12.5px; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line); }
th { color: var(--muted); font-weight: 600; }
.shots { display: flex; flex-wrap: wrap; gap: 10px; }
.shots figure { margin: 0; width: 240px; font-size: 12px; color: var(--muted); }
.shots img { width: 240px; border: 1px solid var(--line); border-radius: 4px; }
.error { color: var(--bad); }
.hint { color: var(--muted); }
`;
