/**
 * What a worker runs each profile with: its agent (providers, prompt, iteration budget) and its tools (the
 * profile's toolsets, its MCP servers). Built once per process at start-up, so a profile whose model cannot be
 * used stops the start with the reason, as HERALD_MODEL does.
 */
import type { AgentRuntime } from './agent-runtime.js';
import type { TurnToolsFactory } from './tools.js';
import type { Profile, ProfileTable } from '../features/profiles/table.js';
import { DEFAULT_PROFILE } from '../support/config/profile-names.js';
import { ModelNotConfiguredError } from '../support/config/providers.js';

export interface ProfileRuntime {
  profile: Profile;
  agent: AgentRuntime | null;
  tools: TurnToolsFactory;
}

export class ProfileRuntimes {
  private readonly byName = new Map<string, ProfileRuntime>();

  constructor(
    private readonly table: ProfileTable,
    build: (profile: Profile) => ProfileRuntime,
  ) {
    for (const profile of table.list()) {
      try {
        this.byName.set(profile.name, build(profile));
      } catch (err) {
        // A profile's model that cannot be used is a configuration error naming the profile (main.ts: one line).
        if (err instanceof ModelNotConfiguredError && profile.name !== DEFAULT_PROFILE)
          throw new ModelNotConfiguredError(`HERALD_PROFILES: ${profile.name}: ${err.message}`);
        throw err;
      }
    }
  }

  /** The runtime of a payload's profile; absent or unknown (a profile since removed): the default profile's. */
  of(name: string | undefined): ProfileRuntime {
    const profile = this.table.get(name).name;
    const runtime = this.byName.get(profile);
    if (!runtime) throw new Error(`no runtime built for profile ${profile}`); // the constructor builds one for every profile
    return runtime;
  }
}
