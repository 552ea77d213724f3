/**
 * The console's stylesheet and script, served from memory. No build step and no framework: the pages work without
 * the script, which only keeps the queue depth on the overview live.
 */
export const CONSOLE_CSS = `
:root { color-scheme: light dark; --fg: #1b1f24; --muted: #57606a; --bg: #ffffff; --card: #f6f8fa; --line: #d0d7de;
  --accent: #0550ae; --ok: #1a7f37; --bad: #cf222e; --warn: #9a6700; font-family: system-ui, -apple-system, "Segoe UI", sans-serif; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --muted: #9da7b3; --bg: #0d1117; --card: #161b22; --line: #30363d;
  --accent: #6cb6ff; --ok: #3fb950; --bad: #ff7b72; --warn: #d29922; } }
* { box-sizing: border-box; }
body { margin: 0; color: var(--fg); background: var(--bg); line-height: 1.5; font-size: 16px; }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: 0; background: var(--bg); padding: .5rem; }
.skip:focus { left: .5rem; z-index: 10; }
.top { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1.5rem; padding: .75rem 1rem; border-bottom: 1px solid var(--line); background: var(--card); }
.brand { margin: 0; font-weight: 700; font-size: 1.1rem; } .brand span { color: var(--muted); font-weight: 400; }
.brand a { color: inherit; text-decoration: none; }
nav { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1rem; flex: 1; }
nav ul { display: flex; flex-wrap: wrap; gap: .25rem 1rem; list-style: none; margin: 0; padding: 0; }
nav a { text-decoration: none; padding: .25rem 0; display: inline-block; }
nav a[aria-current="page"] { font-weight: 700; border-bottom: 2px solid var(--accent); }
.logout { margin-left: auto; }
main { max-width: 72rem; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.5rem; margin: .5rem 0 1rem; } h2 { font-size: 1.2rem; margin: 1.5rem 0 .5rem; }
button, input, select { font: inherit; }
button { background: var(--accent); color: var(--bg); border: 0; border-radius: 6px; padding: .45rem .9rem; cursor: pointer; min-height: 2.5rem; }
button.secondary { background: transparent; color: var(--accent); border: 1px solid var(--line); }
button.danger { background: var(--bad); }
input, select { border: 1px solid var(--line); border-radius: 6px; padding: .45rem .6rem; background: var(--bg); color: var(--fg); min-height: 2.5rem; max-width: 100%; }
label { font-weight: 600; }
.field { display: flex; flex-direction: column; gap: .25rem; margin-bottom: .75rem; }
.row { display: flex; flex-wrap: wrap; gap: .5rem; align-items: flex-end; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(9rem, 1fr)); gap: .75rem; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: .75rem 1rem; }
.card h2, .card h3 { margin: 0 0 .25rem; font-size: 1rem; }
.big { font-size: 1.6rem; font-weight: 700; }
.state { font-weight: 700; } .state.ok { color: var(--ok); } .state.bad { color: var(--bad); } .state.off { color: var(--muted); }
.muted, .empty { color: var(--muted); }
.table-wrap { overflow-x: auto; max-width: 100%; border: 1px solid var(--line); border-radius: 8px; }
table { border-collapse: collapse; width: 100%; font-size: .95rem; }
caption { text-align: left; padding: .5rem .75rem; font-weight: 600; }
th, td { text-align: left; padding: .45rem .75rem; border-top: 1px solid var(--line); vertical-align: top; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.notice { padding: .6rem .9rem; border-radius: 6px; border: 1px solid var(--line); overflow-wrap: anywhere; }
.notice.ok { border-color: var(--ok); } .notice.error { border-color: var(--bad); }
mark { background: #fff8c5; color: #1b1f24; }
.transcript { display: flex; flex-direction: column; gap: .75rem; }
.msg { border: 1px solid var(--line); border-radius: 8px; padding: .5rem .9rem; background: var(--card); }
.msg.user { border-left: 4px solid var(--accent); } .msg.assistant { border-left: 4px solid var(--ok); }
.msg.tool { border-left: 4px solid var(--warn); } .msg.system { border-left: 4px solid var(--muted); }
.msg h2 { font-size: .85rem; margin: 0 0 .25rem; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
.msg .text { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; }
details { margin: .35rem 0; } summary { cursor: pointer; font-weight: 600; min-height: 1.75rem; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: var(--bg); border: 1px solid var(--line); border-radius: 6px; padding: .5rem; margin: .35rem 0; font-size: .85rem; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; margin: 0 0 1rem; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; overflow-wrap: anywhere; }
figure { margin: 0; } figcaption { font-weight: 600; margin-bottom: .5rem; }
svg.chart { width: 100%; height: auto; max-height: 18rem; }
svg.chart text { fill: var(--muted); font-size: 11px; }
.legend { display: flex; flex-wrap: wrap; gap: .25rem 1rem; list-style: none; padding: 0; margin: .5rem 0; font-size: .9rem; }
.swatch { margin-right: .35rem; vertical-align: middle; }
.login { max-width: 24rem; }
@media (max-width: 40rem) { .logout { margin-left: 0; } main { padding: .75rem; } dl.facts { grid-template-columns: 1fr; } }
`;

/**
 * Keeps the overview's queue depth, and whether the queue is paused, live (every 2 s); without it the page shows what
 * it was rendered with.
 */
export const CONSOLE_JS = `
(function () {
  var box = document.querySelector('[data-live-queue]');
  if (!box) return;
  var url = box.getAttribute('data-live-queue');
  function tick() {
    fetch(url, { credentials: 'same-origin', headers: { accept: 'application/json' } })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (data) {
        if (!data || !data.counts) return;
        Object.keys(data.counts).forEach(function (state) {
          var el = box.querySelector('[data-state="' + state + '"]');
          if (el && el.textContent !== String(data.counts[state])) el.textContent = String(data.counts[state]);
        });
        var paused = box.querySelector('[data-paused]');
        if (paused) paused.hidden = data.paused !== true;
        var at = box.querySelector('[data-updated]');
        if (at) at.textContent = new Date().toISOString().slice(11, 19) + ' UTC';
      })
      .catch(function () {})
      .then(function () { setTimeout(tick, 2000); });
  }
  setTimeout(tick, 2000);
})();
`;
