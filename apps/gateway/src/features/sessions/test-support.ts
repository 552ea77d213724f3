/**
 * For tests: the real conversation services on a test's store, built from the default settings (or `env`).
 * Production builds them once per process (roles/services-part.ts); code that takes them requires them.
 */
import type { SessionStore } from '@herald/agent-core';
import { loadConfig } from '../../support/config/load.js';
import { openConversationServices, type ConversationServices } from './services.js';

export function testConversationServices(store: SessionStore, env: Record<string, string> = {}): ConversationServices {
  return openConversationServices(loadConfig({ env, file: null }), store);
}
