import { describe, expect, it } from 'vitest';
import { ScriptedProvider } from '../loop/scripted-provider.js';
import { useTempStores } from '../store/test-support.js';
import { ToolsetRegistry, UnknownToolsetError } from '../tools/toolsets.js';
import { createBuiltinTools } from './index.js';

const temp = useTempStores();
const names = (tools: { name: string }[]) => tools.map((t) => t.name);

describe('built-in toolsets', () => {
  it('core, research and full pick the documented tools', async () => {
    const deps = { store: await temp.open(), provider: new ScriptedProvider(), canAskUser: true };
    expect(names(createBuiltinTools(deps, ['core']).tools)).toEqual(['memory', 'todo', 'current_time']);
    expect(names(createBuiltinTools(deps, ['research']).tools)).toEqual(['session_search', 'web_fetch']);
    expect(names(createBuiltinTools(deps, ['core', 'research']).tools)).toHaveLength(5);
    expect(names(createBuiltinTools(deps, ['full']).tools).sort()).toEqual([
      'clarify',
      'current_time',
      'delegate_task',
      'memory',
      'session_search',
      'todo',
      'web_fetch',
    ]);
    expect(() => createBuiltinTools(deps, ['everything'])).toThrow(UnknownToolsetError);
    // send_file is core where the caller delivers files (the gateway); elsewhere it is left out, saying why.
    expect(names(createBuiltinTools({ ...deps, canSendFiles: true }, ['core']).tools)).toEqual(['memory', 'todo', 'current_time', 'send_file']);
    expect(createBuiltinTools(deps, ['core']).unavailable).toEqual([{ name: 'send_file', reason: 'needs a chat to send files to' }]);
  });

  it('leaves out tools whose needs are not met, saying why', async () => {
    const { tools, unavailable } = createBuiltinTools({}, ['full'], new ToolsetRegistry());
    expect(names(tools).sort()).toEqual(['current_time', 'web_fetch']);
    expect(unavailable).toEqual(
      expect.arrayContaining([
        { name: 'memory', reason: 'needs the session store' },
        { name: 'delegate_task', reason: 'needs a model (HERALD_MODEL)' },
        { name: 'clarify', reason: 'needs a chat to ask the user in' },
      ]),
    );
  });
});
