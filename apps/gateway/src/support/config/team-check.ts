/**
 * Cross-checks of the team settings that no single setting's schema can make: a route naming a profile that does
 * not exist, a budget for an unknown profile, an MCP server for an unknown profile, a route for an account that is
 * not configured. Each problem stops start-up with one line naming the setting.
 */
import type { SettingsValues } from './settings.js';
import { DEFAULT_ACCOUNT } from './profile-accounts.js';
import { DEFAULT_PROFILE } from './profile-names.js';
import { BUILT_IN_PERSONALITIES } from './profile-schema.js';

/** The first problem found, as one line, or null. */
export function teamConfigProblem(c: SettingsValues): string | null {
  const known = [DEFAULT_PROFILE, ...Object.keys(c.profiles)];
  const unknown = (p: string): string => `unknown profile "${p}" (known: ${known.join(', ')})`;
  if (!known.includes(c.defaultProfile)) return `HERALD_DEFAULT_PROFILE: ${unknown(c.defaultProfile)}`;
  for (const [i, r] of c.routes.entries()) {
    if (!known.includes(r.profile)) return `HERALD_ROUTES: route ${i + 1}: ${unknown(r.profile)}`;
    if (r.account !== undefined && r.account !== DEFAULT_ACCOUNT) {
      const has = c.botAccounts.some((a) => a.name === r.account && (r.platform === undefined || a.platform === r.platform));
      if (!has) return `HERALD_ROUTES: route ${i + 1}: unknown bot account "${r.account}"${r.platform ? ` on ${r.platform}` : ''} (HERALD_BOT_ACCOUNTS)`;
    }
  }
  for (const [i, b] of c.budgets.entries()) {
    if (b.profile !== undefined && !known.includes(b.profile)) return `HERALD_BUDGETS: budget ${i + 1}: ${unknown(b.profile)}`;
    if (b.scope === 'global' && b.profile !== undefined) return `HERALD_BUDGETS: budget ${i + 1}: a global budget has no profile (use scope: profile)`;
  }
  for (const s of c.mcpServers ?? []) {
    for (const p of s.profiles) if (!known.includes(p)) return `HERALD_MCP_SERVERS: ${s.name}.profiles: ${unknown(p)}`;
  }
  const personalities = ['none', ...BUILT_IN_PERSONALITIES, ...Object.keys(c.personalities)];
  const unknownPersonality = (p: string): string => `unknown personality "${p}" (known: ${personalities.join(', ')}; add your own with HERALD_PERSONALITIES)`;
  if (c.personality !== undefined && !personalities.includes(c.personality)) return `HERALD_PERSONALITY: ${unknownPersonality(c.personality)}`;
  for (const [name, p] of Object.entries(c.profiles)) {
    if (p.personality !== undefined && !personalities.includes(p.personality))
      return `HERALD_PROFILES: ${name}.personality: ${unknownPersonality(p.personality)}`;
  }
  for (const a of c.botAccounts) {
    const primary = { telegram: c.telegram.botToken, discord: c.discord.botToken, slack: c.slack.botToken, whatsapp: c.whatsapp.accessToken }[a.platform];
    const setting = a.platform === 'whatsapp' ? 'WHATSAPP_ACCESS_TOKEN' : `${a.platform.toUpperCase()}_BOT_TOKEN`;
    if (!primary) return `HERALD_BOT_ACCOUNTS: ${a.platform}:${a.name}: set ${setting} for the default account first`;
  }
  return null;
}
