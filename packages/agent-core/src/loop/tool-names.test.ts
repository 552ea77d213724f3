import { describe, expect, it } from 'vitest';
import { normaliseToolName, repairToolName, similarity } from './tool-names.js';

const VALID = ['web_search', 'web_fetch', 'memory', 'session_search', 'todo'];

describe('repairToolName', () => {
  it.each([
    ['web_search', 'web_search'],
    ['WEB_SEARCH', 'web_search'],
    ['web-search', 'web_search'],
    ['web search', 'web_search'],
    ['WebSearch', 'web_search'],
    ['webSearch', 'web_search'],
    ['web_search_tool', 'web_search'],
    ['WebSearchTool', 'web_search'],
    ['memory-tool', 'memory'],
    ['web_serch', 'web_search'],
    ['sesion_search', 'session_search'],
  ])('%s → %s', (given, expected) => {
    expect(repairToolName(given, VALID)).toBe(expected);
  });

  it.each(['delete_everything', 'browser', 'x'])('%s stays unknown', (given) => {
    expect(repairToolName(given, VALID)).toBeNull();
  });

  it('prefers a valid name that really ends in _tool over stripping the suffix', () => {
    expect(repairToolName('Use-Tool', ['use', 'use_tool'])).toBe('use_tool');
  });
});

describe('helpers', () => {
  it('normalises CamelCase, acronyms, dashes and spaces', () => {
    expect(normaliseToolName('HTTPFetch')).toBe('http_fetch');
    expect(normaliseToolName('  read - File ')).toBe('read_file');
  });

  it('similarity is 1 for equal strings and falls with edits', () => {
    expect(similarity('memory', 'memory')).toBe(1);
    expect(similarity('web_serch', 'web_search')).toBeCloseTo(0.9);
    expect(similarity('abc', 'xyz')).toBe(0);
  });
});
