import { describe, expect, it } from 'vitest';
import { classifySlackEvent } from './normalize.js';

const me = { botUserId: 'UBOT', botId: 'BBOT' };

describe('classifySlackEvent', () => {
  it('takes a file share and describes the files for a worker to fetch', () => {
    const c = classifySlackEvent(
      {
        type: 'message',
        subtype: 'file_share',
        channel: 'D1',
        channel_type: 'im',
        user: 'U1',
        ts: '1700000000.000100',
        text: 'look',
        files: [
          { id: 'F1', name: 'a.png', mimetype: 'image/png', size: 42, url_private: 'https://files.slack.com/a.png' },
          {
            id: 'F2',
            name: 'clip.webm',
            mimetype: 'audio/webm',
            subtype: 'slack_audio',
            size: 9,
            url_private: 'https://files.slack.com/c',
            url_private_download: 'https://files.slack.com/c/download',
          },
          // Slack Connect: only the id; the worker asks files.info.
          { id: 'F3', mode: 'file_access', file_access: 'check_file_info', created: 0, timestamp: 0, user: '' },
          // Hidden by the workspace's plan: nothing to fetch.
          { id: 'F4', mode: 'hidden_by_limit' },
        ],
      },
      me,
    );
    expect(c.action).toBe('take');
    if (c.action !== 'take') return;
    expect(c.message.attachments).toEqual([
      { kind: 'image', url: 'https://files.slack.com/a.png', fileId: 'F1', mimeType: 'image/png', name: 'a.png', size: 42 },
      { kind: 'audio', url: 'https://files.slack.com/c/download', fileId: 'F2', mimeType: 'audio/webm', voice: true, name: 'clip.webm', size: 9 },
      { kind: 'file', url: 'slack-file:F3', fileId: 'F3', unresolved: true },
    ]);
    expect(c.message.sentAt).toBe(1_700_000_000_000);
  });

  it('strips every form of the bot mention and decodes Slack entities', () => {
    const c = classifySlackEvent(
      { type: 'app_mention', channel: 'C1', user: 'U1', ts: '1.000001', text: '<@UBOT|herald> is 1 &lt; 2 &amp;&amp; <@UBOT>?' },
      me,
    );
    expect(c.action === 'take' && c.message.text).toBe('is 1 < 2 && ?');
  });

  it.each([
    ['message_changed', { subtype: 'message_changed' }],
    ['message_deleted', { subtype: 'message_deleted' }],
    ['channel_join', { subtype: 'channel_join' }],
    ['a bot', { bot_id: 'B9' }],
    ['our own user', { user: 'UBOT' }],
  ])('ignores %s', (_name, extra) => {
    const event = { type: 'message', channel: 'D1', channel_type: 'im', user: 'U1', ts: '1.2', text: 'x', ...extra };
    expect(classifySlackEvent(event, me).action).toBe('ignore');
  });
});
