/**
 * Slack adapter: Socket Mode or Events over HTTP ingress (@slack/bolt), Web API egress and files; one Web API
 * client per bot (@slack/web-api, client.ts) serves all three.
 */
export { createSlackIngress, type SlackIngress, type SlackIngressHealth, type SlackTransport } from './ingress.js';
export { createSlackEgress, slackEmojiName, type SlackEgress } from './egress.js';
export { slackCodec, type SlackConversation } from './codec.js';
export { SlackFiles, type SlackFilesOptions } from './files.js';
export { createSlackClient, type SlackClientOptions } from './client.js';
export { markdownToMrkdwn, escapeMrkdwn } from './format.js';
export { classifySlackEvent, type Classification, type SlackIdentity } from './normalize.js';

export { SLACK_SLASH_COMMAND, slashCommandToMessage, slashCommandText } from './slash-command.js';
export {
  SLACK_DEFAULT_API_URL,
  SLACK_EVENTS_PATH,
  SLACK_MAX_MESSAGE_LENGTH,
  SLACK_MAX_REPLICA_WAIT_MS,
  SLACK_TYPING_REFRESH_MS,
  type SlackEgressOptions,
  type SlackIngressOptions,
  type SlackWebClientTuning,
  type ThreadMemory,
} from './config.js';
