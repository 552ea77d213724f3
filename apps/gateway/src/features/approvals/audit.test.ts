import { describe, expect, it } from 'vitest';
import { STORE_BACKENDS, useTempStores } from '../../../../../packages/agent-core/src/store/test-support.js';
import { ApprovalAudit, type ApprovalSubject } from './audit.js';

const subject = (n: number, sessionId = 's1'): ApprovalSubject => ({
  requestId: `req-${n}`,
  sessionId,
  sessionKey: `agent:main:telegram:dm:${sessionId}`,
  platform: 'telegram',
  chatId: '42',
  tool: n % 2 ? 'tickets__delete' : 'execute_code',
  args: `{"id":${n},"token":"[redacted]"}`,
  askedBy: '42',
  askedAt: 1_000 * n,
});

describe.each(STORE_BACKENDS)('ApprovalAudit on %s (migration 48)', (backend) => {
  const temp = useTempStores(backend);

  it('records each decision and lists them newest first, filtered and paged', async () => {
    let t = 10_000;
    const audit = new ApprovalAudit((await temp.open()).sql, () => t++);
    await audit.record(subject(1), 'approved_once', 'telegram:42');
    await audit.record(subject(2), 'denied', 'telegram:42');
    await audit.record(subject(3, 's2'), 'timed_out', 'timeout');
    await audit.record(subject(4, 's2'), 'refused', 'policy');

    const all = await audit.list();
    expect(all.map((r) => [r.requestId, r.decision, r.decidedBy])).toEqual([
      ['req-4', 'refused', 'policy'],
      ['req-3', 'timed_out', 'timeout'],
      ['req-2', 'denied', 'telegram:42'],
      ['req-1', 'approved_once', 'telegram:42'],
    ]);
    expect(all[3]).toMatchObject({ ...subject(1), decidedAt: 10_000 });
    expect(typeof all[3].askedAt).toBe('number');
    expect((await audit.list({ sessionId: 's2' })).map((r) => r.requestId)).toEqual(['req-4', 'req-3']);
    expect((await audit.list({ tool: 'execute_code' })).map((r) => r.requestId)).toEqual(['req-4', 'req-2']);
    expect((await audit.list({ decision: 'denied' })).map((r) => r.requestId)).toEqual(['req-2']);
    expect((await audit.list({ limit: 2, before: all[1].decidedAt })).map((r) => r.requestId)).toEqual(['req-2', 'req-1']);
  });
});
