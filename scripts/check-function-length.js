#!/usr/bin/env node
// Issue 46: no function in apps/ or packages/ spans more than 120 lines, a nested function counted in its parent's
// lines (so only the outermost function of a nest is measured, from the line it starts on to the line it ends on).
// Biome's noExcessiveLinesPerFunction counts differently (the body only, less some lines: it passed a 129-line
// function), hence this check. Tests (`*.test.ts`, `test-support.ts`) are left out: a `describe` callback is a list
// of cases, not a function to split. Run by `npm run lint`; prints the offenders and exits 1 when there are any.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parseSync } from '@swc/core';

const MAX_LINES = 120;
const FUNCTIONS = new Set([
  'FunctionDeclaration',
  'FunctionExpression',
  'ArrowFunctionExpression',
  'ClassMethod',
  'PrivateMethod',
  'Constructor',
  'GetterProperty',
  'SetterProperty',
  'MethodProperty',
]);
const TESTS = /(\.test\.ts|\/test-support\.ts)$/;

/** 0-based line of each byte offset (swc's spans are byte offsets). */
function lineIndex(bytes) {
  const starts = [0];
  for (let i = bytes.indexOf(10); i !== -1; i = bytes.indexOf(10, i + 1)) starts.push(i + 1);
  return (offset) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
}

/** The outermost functions of one file longer than MAX_LINES, as `file:line  N lines`. */
function longFunctions(file) {
  // A leading `;` makes the module's span start at the file's first byte (swc's offsets run on across parses); a
  // shebang becomes a comment of the same length.
  const text = readFileSync(file, 'utf8').replace(/^#!/, '//');
  const ast = parseSync(`;${text}`, { syntax: 'typescript', tsx: false });
  const base = ast.span.start + 1;
  const lineOf = lineIndex(Buffer.from(text, 'utf8'));
  const found = [];
  const visit = (node) => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!node || typeof node !== 'object') return;
    if (FUNCTIONS.has(node.type) && node.span) {
      const first = lineOf(node.span.start - base);
      const lines = lineOf(node.span.end - base) - first + 1;
      if (lines > MAX_LINES) found.push(`${file}:${first + 1}  ${lines} lines`);
      return; // nested functions count in this one
    }
    for (const key in node) if (key !== 'span') visit(node[key]);
  };
  visit(ast.body);
  return found;
}

const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', 'apps', 'packages'], { encoding: 'utf8' })
  .split('\n')
  .filter((f) => /\.(ts|js)$/.test(f) && !f.endsWith('.d.ts') && !TESTS.test(f) && !f.includes('/dist/'));
const long = files.flatMap(longFunctions);
if (long.length > 0) {
  console.error(`Functions over ${MAX_LINES} lines (split them):\n${long.join('\n')}`);
  process.exit(1);
}
console.log(`check-function-length: ${files.length} files, no function over ${MAX_LINES} lines`);
