/** How a platform is named to users ("Discord no longer has the file"): its id when Herald does not know it. */
const DISPLAY_NAMES: Readonly<Record<string, string>> = { telegram: 'Telegram', discord: 'Discord', slack: 'Slack', whatsapp: 'WhatsApp', matrix: 'Matrix' };

export function platformDisplayName(platform: string): string {
  return DISPLAY_NAMES[platform] ?? platform;
}
