/**
 * A stacked bar chart of spend per day and model, as inline SVG built from numbers only (no script, no library).
 * It is one image for sighted users (role="img" with a text summary); the same numbers are in a table beside it.
 */
import type { DailyUsage } from '@herald/agent-core';
import { escapeHtml, html, trusted, type Html } from './html.js';

const PALETTE = ['#0969da', '#1a7f37', '#bf3989', '#9a6700', '#8250df', '#cf222e', '#1b7c83', '#57606a'];
const W = 720;
const H = 240;
const PAD = { left: 56, right: 8, top: 12, bottom: 28 };

export type Metric = 'costUsd' | 'tokens';

function metricValue(u: DailyUsage, metric: Metric): number {
  return metric === 'costUsd' ? u.costUsd : u.inputTokens + u.outputTokens + u.cacheReadTokens + u.cacheWriteTokens;
}

/** Days from `from` to `to` (YYYY-MM-DD), inclusive, so quiet days show as gaps. */
export function dayRange(from: string, to: string): string[] {
  const out: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += 86_400_000) out.push(new Date(t).toISOString().slice(0, 10));
  return out;
}

export function modelColor(models: Array<string | null>, model: string | null): string {
  return PALETTE[Math.max(models.indexOf(model), 0) % PALETTE.length];
}

export function usageChart(days: string[], usage: DailyUsage[], models: Array<string | null>, metric: Metric, label: string): Html {
  const total = (day: string): number => usage.filter((u) => u.day === day).reduce((n, u) => n + metricValue(u, metric), 0);
  const max = Math.max(...days.map(total), metric === 'costUsd' ? 0.01 : 1);
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const slot = plotW / Math.max(days.length, 1);
  const barW = Math.max(2, slot * 0.7);
  const fmt = (v: number): string =>
    metric === 'costUsd' ? `$${v < 1 ? v.toFixed(3) : v.toFixed(2)}` : v >= 1000 ? `${Math.round(v / 1000)}k` : String(Math.round(v));
  const parts: string[] = [];
  for (const frac of [0, 0.5, 1]) {
    const y = PAD.top + plotH * (1 - frac);
    parts.push(`<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${y}" y2="${y}" stroke="currentColor" stroke-opacity="0.15"/>`);
    parts.push(`<text x="${PAD.left - 6}" y="${y + 4}" text-anchor="end">${escapeHtml(fmt(max * frac))}</text>`);
  }
  days.forEach((day, i) => {
    let y = PAD.top + plotH;
    const x = PAD.left + i * slot + (slot - barW) / 2;
    for (const u of usage.filter((v) => v.day === day)) {
      const h = (metricValue(u, metric) / max) * plotH;
      if (h <= 0) continue;
      y -= h;
      const title = `${day} · ${u.model ?? 'no model'}: ${fmt(metricValue(u, metric))}`;
      parts.push(
        `<rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${barW.toFixed(1)}" height="${h.toFixed(1)}" fill="${modelColor(models, u.model)}"><title>${escapeHtml(title)}</title></rect>`,
      );
    }
    if (days.length <= 14 || i % Math.ceil(days.length / 7) === 0 || i === days.length - 1) {
      parts.push(`<text x="${(x + barW / 2).toFixed(1)}" y="${H - 8}" text-anchor="middle">${escapeHtml(day.slice(5))}</text>`);
    }
  });
  const summary = `${label}: ${days.length} days, highest ${fmt(Math.max(...days.map(total), 0))} a day, ${fmt(days.reduce((n, d) => n + total(d), 0))} in all.`;
  return html`<svg class="chart" viewBox="0 0 ${W} ${H}" role="img" aria-label="${summary}" preserveAspectRatio="none">${trusted(parts.join(''))}</svg>
<ul class="legend">${models.map((m) => html`<li>${swatch(modelColor(models, m))}${m ?? 'no model'}</li>`)}</ul>`;
}

/** A colour key drawn as SVG (the page's CSP allows no inline styles). */
export function swatch(color: string): Html {
  return html`<svg class="swatch" width="12" height="12" aria-hidden="true" focusable="false"><rect width="12" height="12" rx="2" fill="${color}"/></svg>`;
}
