import { type Component, flushSync, mount, unmount } from 'svelte';
import { afterEach, describe, expect, it, vi } from 'vitest';
import ConceptCard from '../src/components/ConceptCard.svelte';
import DrillCard from '../src/components/DrillCard.svelte';
import ExamCard from '../src/components/ExamCard.svelte';
import type { ConceptCard as Concept, DrillCard as Drill, ExamCard as Exam } from '../src/lib/types';

let mounted: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (mounted) unmount(mounted);
  mounted = null;
  document.body.innerHTML = '';
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function render<P extends Record<string, any>>(component: Component<P>, props: P): HTMLElement {
  const target = document.createElement('div');
  document.body.append(target);
  mounted = mount(component, { target, props });
  flushSync();
  return target;
}

const button = (root: HTMLElement, name: string) =>
  [...root.querySelectorAll('button')].find((b) => b.textContent?.trim() === name) ?? null;

describe('ConceptCard', () => {
  const card: Concept = {
    type: 'CONCEPT',
    unitId: 'fractions',
    keyIdeas: ['One', 'Two $\\frac{1}{2}$', 'Three', 'Four'],
    workedExample: { problemLatex: 'Add $\\frac{1}{4} + \\frac{1}{4}$.', stepsLatex: ['Same denominator.'], finalAnswerLatex: '\\frac{1}{2}' },
  };

  it('shows at most three key ideas, the worked example folded, and its two buttons', () => {
    const onTryDrill = vi.fn();
    const onFollowUp = vi.fn();
    const root = render(ConceptCard, { card, onTryDrill, onFollowUp });
    expect(root.querySelector('h3')?.textContent).toBe('Key idea');
    expect(root.querySelectorAll('ul > li')).toHaveLength(3);
    expect(root.querySelector('ul .katex')).not.toBeNull();
    expect(root.querySelector('details')?.open).toBe(false);
    button(root, 'Try a Drill')!.click();
    button(root, 'Ask follow-up')!.click();
    expect(onTryDrill).toHaveBeenCalledOnce();
    expect(onFollowUp).toHaveBeenCalledOnce();
  });
});

describe('DrillCard', () => {
  const card: Drill = { type: 'DRILL', unitId: 'whole-numbers', prompt: 'Find the sum.', questionLatex: '71 + 24', drillToken: 't' };
  const handlers = () => ({ onCheck: vi.fn(), onStuck: vi.fn(), onContinue: vi.fn(), onTryAnother: vi.fn() });

  it('checks a typed answer only once something is typed, and offers I am stuck', () => {
    const h = handlers();
    const root = render(DrillCard, { card, ...h });
    expect(root.querySelector('.question .katex')).not.toBeNull();
    const check = button(root, 'Check Answer')!;
    expect(check.disabled).toBe(true);
    const input = root.querySelector('input.answer') as HTMLInputElement;
    input.value = ' 95 ';
    input.dispatchEvent(new Event('input'));
    flushSync();
    expect(check.disabled).toBe(false);
    check.click();
    expect(h.onCheck).toHaveBeenCalledWith('95', expect.any(Number));
    button(root, "I'm stuck")!.click();
    expect(h.onStuck).toHaveBeenCalledOnce();
  });

  it('after grading shows the feedback, the pill, Continue and Try another', () => {
    const h = handlers();
    const root = render(DrillCard, {
      card,
      outcome: { type: 'DRILL', answer: '94', result: 'wrong', isCorrect: false, feedbackText: 'Not quite.', correctAnswer: '95' },
      ...h,
    });
    expect(root.querySelector('.pill')?.textContent?.trim()).toBe('Incorrect');
    expect(root.textContent).toContain('The answer was 95');
    expect(button(root, 'Check Answer')).toBeNull();
    button(root, 'Continue')!.click();
    expect(h.onContinue).toHaveBeenCalledWith('incorrect');
    button(root, 'Try another')!.click();
    expect(h.onTryAnother).toHaveBeenCalledOnce();
  });

  it('an older graded card keeps its result but not its buttons', () => {
    const root = render(DrillCard, {
      card,
      active: false,
      outcome: { type: 'DRILL', answer: '95', result: 'correct', isCorrect: true, feedbackText: 'Right.' },
      ...handlers(),
    });
    expect(root.querySelector('.pill')?.textContent?.trim()).toBe('Correct');
    expect(button(root, 'Continue')).toBeNull();
  });

  it('multiple-choice drills answer by picking an option', () => {
    const h = handlers();
    const root = render(DrillCard, { card: { ...card, options: ['94', '95'] }, ...h });
    const radios = root.querySelectorAll<HTMLInputElement>('input[type=radio]');
    expect(radios).toHaveLength(2);
    radios[1]!.click();
    flushSync();
    button(root, 'Check Answer')!.click();
    expect(h.onCheck).toHaveBeenCalledWith('95', expect.any(Number));
  });
});

describe('ExamCard', () => {
  const now = new Date('2026-03-14T09:00:00Z');
  const card: Exam = {
    type: 'EXAM',
    unitId: 'whole-numbers',
    questionId: 'EX-WHN-B1',
    tier: 'bronze',
    stem: 'What is 58 + 27?',
    options: [
      { id: 'A', text: '85' },
      { id: 'B', text: '715' },
    ],
    hasMemo: true,
  };
  const handlers = () => ({ onSubmit: vi.fn(), onSupport: vi.fn(), onContinue: vi.fn() });

  it('submits the chosen option and opens the memo', () => {
    const h = handlers();
    const root = render(ExamCard, { card, now, ...h });
    expect(root.querySelector('.tier')?.textContent).toBe('Bronze');
    expect(button(root, 'Submit')!.disabled).toBe(true);
    root.querySelectorAll<HTMLInputElement>('input[type=radio]')[1]!.click();
    flushSync();
    button(root, 'Submit')!.click();
    expect(h.onSubmit).toHaveBeenCalledWith('B');
    button(root, 'View Memo')!.click();
    expect(h.onSupport).toHaveBeenCalledWith('memo');
    expect(button(root, 'Watch Video')).toBeNull();
  });

  it('a locked question shows its countdown and cannot be submitted', () => {
    const until = new Date(now.getTime() + (18 * 60 + 12) * 60_000 + 30_000).toISOString();
    const root = render(ExamCard, { card: { ...card, lockedUntil: until }, now, ...handlers() });
    expect(root.querySelector('.lock')?.textContent).toContain('Available in 18h 12m');
    expect((root.querySelector('fieldset') as HTMLFieldSetElement).disabled).toBe(true);
    expect(button(root, 'Submit')!.disabled).toBe(true);
  });

  it('a failed answer locks and offers Continue; a passed one shows Passed', () => {
    const h = handlers();
    const until = new Date(now.getTime() + 24 * 3600_000).toISOString();
    const root = render(ExamCard, {
      card,
      now,
      outcome: { type: 'EXAM', status: 'failed', selectedOption: 'B', feedbackText: 'Not this time.', lockedUntil: until },
      ...h,
    });
    expect(root.querySelector('.lock')?.textContent).toContain('Locked for now');
    expect(root.querySelector<HTMLInputElement>('input[value=B]')!.checked).toBe(true);
    expect(root.querySelector('.lock')?.textContent).toContain('Available in 24h 0m');
    expect(root.querySelector('.option.wrong')?.textContent).toContain('715');
    expect(root.querySelector('.option.wrong .mark')?.textContent).toBe('✗ your answer');
    button(root, 'Continue')!.click();
    expect(h.onContinue).toHaveBeenCalledWith('locked');
    unmount(mounted!);
    mounted = null;
    const passed = render(ExamCard, { card, now, outcome: { type: 'EXAM', status: 'passed', selectedOption: 'A' }, ...h });
    expect(passed.querySelector('.badge.passed')?.textContent).toBe('Passed');
    expect(passed.querySelector('.option.right')?.textContent).toContain('85');
    expect(passed.querySelector('.option.wrong')).toBeNull();
    button(passed, 'Continue')!.click();
    expect(h.onContinue).toHaveBeenLastCalledWith('passed');
  });
});
