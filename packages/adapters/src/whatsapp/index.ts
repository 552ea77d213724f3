/**
 * WhatsApp adapter (Meta's WhatsApp Business Cloud API): a signed webhook on the gateway's HTTP server shared by
 * every business number (webhook.ts), one ingress per number, Graph REST egress and media downloads.
 */
export { WhatsAppWebhook } from './webhook.js';
export { WhatsAppIngress } from './ingress.js';
export { WhatsAppEgress } from './egress.js';
export { WhatsAppFiles } from './files.js';
export { whatsappCodec } from './codec.js';
export { WindowClosedError } from './graph-errors.js';
export { WHATSAPP_WEBHOOK_PATH, WHATSAPP_DEFAULT_API_URL, type LastInbound, type ServiceWindowMemory, type WindowTemplate } from './config.js';
