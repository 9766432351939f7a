/**
 * The dashboard's stylesheet, served at `{path}/assets/dashboard.css`. A string in the package
 * (no copy step in the build, nothing to resolve at run time); the policy allows no inline style.
 */
export const DASHBOARD_CSS = `
:root { color-scheme: light dark; --fg: #1d232a; --muted: #6b7480; --line: #d8dde3;
  --bg: #fff; --head: #f4f6f8; --ok: #2f9e44; --bad: #e03131; --accent: #1971c2; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e9ed; --muted: #98a2ad; --line: #3a424b;
  --bg: #161a1e; --head: #20262c; --accent: #74c0fc; } }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; gap: 2rem; align-items: center; padding: .6rem 1.5rem;
  border-bottom: 1px solid var(--line); background: var(--head); }
header .brand { font-weight: 600; color: var(--fg); text-decoration: none; }
header nav a { margin-right: 1rem; }
main { padding: 1rem 1.5rem 3rem; max-width: 1200px; }
a { color: var(--accent); }
h1 { font-size: 1.4rem; margin: .4rem 0 1rem; }
h2 { font-size: 1.1rem; margin: 1.6rem 0 .6rem; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .35rem .6rem; border-bottom: 1px solid var(--line);
  vertical-align: middle; }
thead th { background: var(--head); font-weight: 600; }
td.count { text-align: right; font-variant-numeric: tabular-nums; }
tr.paused th, tr.paused td { color: var(--muted); }
.badge { display: inline-block; padding: 0 .4rem; border-radius: .6rem; font-size: .75rem;
  background: var(--muted); color: var(--bg); }
form.action { display: inline; margin: 0; }
button { font: inherit; padding: .2rem .7rem; border: 1px solid var(--line); border-radius: 4px;
  background: var(--head); color: var(--fg); cursor: pointer; }
button:hover { border-color: var(--accent); }
form.filters { display: flex; flex-wrap: wrap; gap: .8rem; align-items: end; margin-bottom: 1rem; }
form.filters label { display: flex; flex-direction: column; font-size: .8rem; color: var(--muted); }
input, select { font: inherit; padding: .2rem .4rem; }
.notice { padding: .5rem .8rem; border-left: 4px solid var(--ok); background: var(--head); }
.error { padding: .5rem .8rem; border-left: 4px solid var(--bad); background: var(--head); }
.empty, .muted, .none { color: var(--muted); }
pre { background: var(--head); padding: .6rem .8rem; overflow: auto; max-height: 24rem;
  white-space: pre-wrap; word-break: break-word; }
pre.error-text:empty { display: none; }
dl.job { display: grid; grid-template-columns: max-content 1fr; gap: .3rem 1.2rem; }
dl.job dt { color: var(--muted); }
dl.job dd { margin: 0; }
progress { width: 12rem; vertical-align: middle; }
.status { font-weight: 600; }
.status-failed .status, #job-status.failed { color: var(--bad); }
.status-completed .status { color: var(--ok); }
.actions { margin: 1rem 0; display: flex; gap: .6rem; }
ol#job-events { padding-left: 1.6rem; font-family: ui-monospace, monospace; font-size: .85rem; }
ol#job-events .kind { font-weight: 600; }
ol#job-events .event-failed .kind, ol#job-events .event-retrying .kind { color: var(--bad); }
figure.chart { margin: 0 0 1rem; }
svg#throughput { width: 100%; max-width: 600px; height: auto; border-bottom: 1px solid var(--line); }
svg#throughput rect.completed { fill: var(--ok); }
svg#throughput rect.failed { fill: var(--bad); }
figcaption { color: var(--muted); font-size: .85rem; }
.key.completed { color: var(--ok); }
.key.failed { color: var(--bad); }
.pager { margin-top: 1rem; }
`;
