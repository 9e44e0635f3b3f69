import { describe, expect, it } from 'vitest';
import { layout, wrap } from '../src/lib/graph';
import { hasMath, richHtml } from '../src/lib/math';
import { ApiError, describe as say } from '../src/lib/problem';
import { spokenToLatex } from '../src/lib/spoken';
import { countdown } from '../src/lib/time';

describe('spoken maths', () => {
  it.each([
    ['x squared plus three equals twelve', 'x^{2} + 3 = 12'],
    ['what is forty seven plus thirty eight', '47 + 38'],
    ['three over four times two', '\\frac{3}{4} \\times 2'],
    ['the square root of sixteen', '\\sqrt{16}'],
    ['two hundred and five minus 6', '205 - 6'],
  ])('%s → %s', (said, latex) => expect(spokenToLatex(said)).toBe(latex));

  it('finds no maths in plain words', () => {
    expect(spokenToLatex('I am stuck, can you give me a hint')).toBeNull();
    expect(spokenToLatex('I got five')).toBeNull();
  });
});

describe('countdowns', () => {
  const now = new Date('2026-01-01T00:00:00Z');
  const later = (s: number) => new Date(now.getTime() + s * 1000);
  it.each([
    [18 * 3600 + 12 * 60, '18h 12m'],
    [24 * 3600 - 60, '23h 59m'],
    [25 * 3600, '25h 0m'],
    [50 * 3600 + 59 * 60, '2d 2h'],
    [125, '2m'],
    [40, '40s'],
    [-5, '0s'],
  ])('%i s → %s', (s, text) => expect(countdown(later(s), now)).toBe(text));
});

describe('maths in text', () => {
  it('renders delimited LaTeX and escapes the rest', () => {
    const html = richHtml('<b>half</b> is $\\frac{1}{2}$');
    expect(html).toContain('&#60;b&#62;half');
    expect(html).toContain('katex');
    expect(hasMath('no maths here')).toBe(false);
    expect(hasMath('a $x$ here')).toBe(true);
  });
});

describe('errors', () => {
  it('says what a student can do', () => {
    expect(say(new ApiError(0, null))).toMatch(/Can't reach the tutor/);
    expect(say(new ApiError(401, null))).toMatch(/Sign in again/);
    const locked = new ApiError(409, {
      type: 'urn:tutorflow:problem:conflict',
      title: 'Conflict',
      status: 409,
      detail: 'this question is locked until 2026-01-02T00:00:00Z; come back to it then',
      instance: '/x',
      requestId: 'r',
    });
    expect(say(locked)).toMatch(/locked for now/);
  });
});

describe('course graph layout', () => {
  const units = [
    { unitId: 'a', title: 'A', requires: [] },
    { unitId: 'b', title: 'B', requires: ['a'] },
    { unitId: 'c', title: 'C', requires: ['a'] },
    { unitId: 'd', title: 'D', requires: ['b', 'c'] },
  ];
  it('puts each unit below its deepest prerequisite and draws every edge', () => {
    const g = layout(units);
    const layer = Object.fromEntries(g.nodes.map((n) => [n.unit.unitId, n.layer]));
    expect(layer).toEqual({ a: 0, b: 1, c: 1, d: 2 });
    expect(g.edges.map((e) => `${e.from.unit.unitId}>${e.to.unit.unitId}`).sort()).toEqual(['a>b', 'a>c', 'b>d', 'c>d']);
    const b = g.nodes.find((n) => n.unit.unitId === 'b')!;
    const c = g.nodes.find((n) => n.unit.unitId === 'c')!;
    expect(b.y).toBe(c.y);
    expect(b.x).toBeLessThan(c.x);
  });
  it('wraps long titles in at most three short lines', () => {
    expect(wrap('Whole numbers, adding and subtracting')).toEqual(['Whole numbers,', 'adding and', 'subtracting']);
    expect(wrap('Decimals')).toEqual(['Decimals']);
    const long = wrap('Inverse operations and working backwards and forwards');
    expect(long).toEqual(['Inverse', 'operations and', 'working backwards…']);
  });
});
