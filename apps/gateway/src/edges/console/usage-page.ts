/**
 * Usage and spend: per model and per agent profile over the chosen window, and a chart of each day's spend (and
 * tokens) by model, with the numbers in a table too. Spend is the store's `estimated_cost_usd`, counted for each
 * session's model and profile and the day it started.
 */
import type { DailyUsage, ModelUsage, ProfileUsage } from '@herald/agent-core';
import { html, type Html } from './html.js';
import { CONSOLE_PATH } from './auth.js';
import { dayRange, modelColor, swatch, usageChart } from './chart.js';
import { costHtml, priceHint, type Priced } from './costs.js';
import { count, tableWrap, usd } from './layout.js';

export const USAGE_WINDOWS = [7, 30, 90] as const;

export function usageBody(days: number, usage: { byModel: ModelUsage[]; byProfile: ProfileUsage[]; byDay: DailyUsage[] }, until: Date, priced: Priced): Html {
  const { byModel, byProfile, byDay } = usage;
  const models = byModel.map((m) => m.model);
  const to = until.toISOString().slice(0, 10);
  const from = new Date(until.getTime() - (days - 1) * 86_400_000).toISOString().slice(0, 10);
  const range = dayRange(from, to);
  const total = byModel.reduce((n, m) => n + m.costUsd, 0);
  const windows = html`<form method="get" action="${CONSOLE_PATH}/usage" class="row">
  <div class="field"><label for="days">Window</label><select id="days" name="days">${USAGE_WINDOWS.map((d) => html`<option value="${d}"${d === days ? html` selected` : ''}>last ${d} days</option>`)}</select></div>
  <div class="field"><button type="submit">Show</button></div>
</form>`;
  return html`${windows}
<p><span class="big">${usd(total)}</span> estimated spend, ${count(byModel.reduce((n, m) => n + m.sessions, 0))} sessions, last ${days} days (UTC).</p>
${priceHint(models, priced)}
<section aria-labelledby="h-models">
<h2 id="h-models">By model</h2>
${sumsTable(
  'Usage by model',
  'Model',
  byModel.map((m) => [html`${swatch(modelColor(models, m.model))}${m.model ?? 'no model'}`, m, costHtml(m.costUsd, m.model, priced)]),
)}
</section>
<section aria-labelledby="h-profiles">
<h2 id="h-profiles">By profile</h2>
${sumsTable(
  'Usage by agent profile',
  'Profile',
  byProfile.map((p) => [html`${p.profile}`, p, html`${usd(p.costUsd)}`]),
)}
</section>
<section aria-labelledby="h-daily">
<h2 id="h-daily">By day</h2>
<figure>
<figcaption>Estimated spend per day, by model</figcaption>
${usageChart(range, byDay, models, 'costUsd', 'Estimated spend per day')}
</figure>
<figure>
<figcaption>Tokens per day, by model</figcaption>
${usageChart(range, byDay, models, 'tokens', 'Tokens per day')}
</figure>
<details><summary>The numbers per day</summary>
${tableWrap(
  'Usage per day and model',
  ['Day', 'Model', 'Sessions', 'Tokens', 'Estimated cost'],
  byDay.map(
    (d) => html`<tr><th scope="row">${d.day}</th><td>${d.model ?? 'no model'}</td><td class="num">${count(d.sessions)}</td>
<td class="num">${count(d.inputTokens + d.outputTokens + d.cacheReadTokens + d.cacheWriteTokens)}</td><td class="num">${costHtml(d.costUsd, d.model, priced)}</td></tr>`,
  ),
  'No sessions in this window.',
)}
</details>
</section>`;
}

type Sums = Omit<ModelUsage, 'model'>;

/** One row per model or profile: sessions, the four token counts and the estimated cost (as its cell shows it). */
function sumsTable(caption: string, first: string, rows: Array<[Html, Sums, Html]>): Html {
  return tableWrap(
    caption,
    [first, 'Sessions', 'Input tokens', 'Output tokens', 'Cache read', 'Cache write', 'Estimated cost'],
    rows.map(
      ([name, u, cost]) => html`<tr><th scope="row">${name}</th><td class="num">${count(u.sessions)}</td><td class="num">${count(u.inputTokens)}</td>
<td class="num">${count(u.outputTokens)}</td><td class="num">${count(u.cacheReadTokens)}</td><td class="num">${count(u.cacheWriteTokens)}</td><td class="num">${cost}</td></tr>`,
    ),
    'No sessions in this window.',
  );
}
