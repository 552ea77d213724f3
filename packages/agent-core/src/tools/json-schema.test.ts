import { describe, expect, it } from 'vitest';
import { toToolParameters } from './json-schema.js';

describe('toToolParameters', () => {
  it('keeps a schema both APIs accept as it is (minus $schema)', () => {
    const schema = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { city: { type: 'string', description: 'City' }, days: { type: 'integer', minimum: 1 } },
      required: ['city'],
      additionalProperties: false,
    };
    expect(toToolParameters(schema)).toEqual({
      type: 'object',
      properties: { city: { type: 'string', description: 'City' }, days: { type: 'integer', minimum: 1 } },
      required: ['city'],
      additionalProperties: false,
    });
  });

  it('gives a tool without arguments an object schema with empty properties', () => {
    expect(toToolParameters({ type: 'object' })).toEqual({ type: 'object', properties: {} });
    expect(toToolParameters(undefined)).toEqual({ type: 'object', properties: {} });
    expect(toToolParameters('nonsense')).toEqual({ type: 'object', properties: {} });
  });

  it('drops combinators Anthropic refuses at the top level, keeps them further down', () => {
    const schema = {
      type: 'object',
      properties: { id: { anyOf: [{ type: 'string' }, { type: 'integer' }] } },
      anyOf: [{ required: ['id'] }, { required: ['name'] }],
      oneOf: [{ required: ['x'] }],
      allOf: [],
    };
    expect(toToolParameters(schema)).toEqual({ type: 'object', properties: { id: { anyOf: [{ type: 'string' }, { type: 'integer' }] } } });
  });

  it('adds items to array schemas that lack them (OpenAI: "array schema missing items"), at any depth', () => {
    const schema = {
      type: 'object',
      properties: {
        tags: { type: 'array' },
        nested: { type: 'object', properties: { ids: { type: ['array', 'null'] } } },
        typed: { type: 'array', items: { type: 'string' } },
      },
    };
    expect(toToolParameters(schema).properties).toEqual({
      tags: { type: 'array', items: {} },
      nested: { type: 'object', properties: { ids: { type: ['array', 'null'], items: {} } } },
      typed: { type: 'array', items: { type: 'string' } },
    });
  });

  it('leaves out a properties entry that is not a schema, and required names that are not strings', () => {
    const schema = { type: 'object', properties: { filePath: { type: 'string' }, type: 'object' }, required: ['filePath', 3] };
    expect(toToolParameters(schema)).toEqual({ type: 'object', properties: { filePath: { type: 'string' } }, required: ['filePath'] });
  });

  it('forces the top-level type to object and cuts hostile nesting', () => {
    expect(toToolParameters({ type: 'string' }).type).toBe('object');
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 100; i++) deep = { type: 'object', properties: { x: deep } };
    const out = JSON.stringify(toToolParameters(deep));
    expect(out.length).toBeLessThan(2_000);
  });
});
