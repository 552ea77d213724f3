import { describe, expect, it } from 'vitest';
import { errorLabel } from './reasons.js';

describe('errorLabel', () => {
  it("names the error's class and its HTTP status when it has a numeric one", () => {
    expect(errorLabel(Object.assign(new TypeError('boom'), { status: 429 }))).toBe('TypeError HTTP 429');
    expect(errorLabel({ status: 503 })).toBe('error HTTP 503');
    expect(errorLabel(Object.assign(new Error('boom'), { status: '500' }))).toBe('Error');
    for (const thrown of [null, undefined, 'text', 404, []]) expect(errorLabel(thrown)).toBe('error');
  });
});
