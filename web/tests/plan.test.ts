import { flushSync, mount, unmount } from 'svelte';
import { afterEach, describe, expect, it } from 'vitest';
import StudyPlan from '../src/components/StudyPlan.svelte';
import type { PlanStepView, StudyPlanView } from '../src/lib/types';

let mounted: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (mounted) unmount(mounted);
  mounted = null;
  document.body.innerHTML = '';
});

function render(plan: StudyPlanView): HTMLElement {
  const target = document.createElement('div');
  document.body.append(target);
  mounted = mount(StudyPlan, { target, props: { plan } });
  flushSync();
  return target;
}

const step = (stepId: string, kind: PlanStepView['kind'], status: PlanStepView['status'], asked = 0): PlanStepView => ({
  stepId,
  title: `Step ${stepId}`,
  kind,
  concept: 'fractions',
  status,
  questionsAsked: asked,
  questionsCorrect: asked,
  attempts: asked,
});

const base: StudyPlanView = {
  unitId: 'fractions',
  steps: [
    step('s1', 'explain', 'completed'),
    step('s2', 'check', 'completed', 2),
    step('s3', 'check', 'completed'),
    step('s4', 'explain', 'in_progress'),
    step('s5', 'practice', 'pending'),
  ],
  currentStepId: 's4',
  stepsCompleted: 3,
  replansUsed: 1,
  maxReplans: 3,
  replans: [{ turn: 6, reason: 'racing ahead: "Step s3" skipped' }],
  complete: false,
  extensionTurns: 0,
};

describe('StudyPlan', () => {
  it('marks each step, the current one for assistive technology, and a skipped check', () => {
    const root = render(base);
    const items = [...root.querySelectorAll('li.plan-step')];
    expect(items).toHaveLength(5);
    expect(items.map((li) => li.getAttribute('aria-current'))).toEqual([null, null, null, 'step', null]);
    expect(items[1]!.textContent).toContain('Check · Done');
    expect(items[2]!.textContent).toContain('Skipped: you already know this');
    expect(items[3]!.textContent).toContain('Learn · Doing now');
    expect(items[4]!.textContent).toContain('Practise · Coming up');
    expect(root.querySelector('[role=progressbar]')?.getAttribute('aria-valuenow')).toBe('3');
    expect(root.querySelector('[aria-live]')?.textContent).toBe('Step 4 of 5: Step s4.');
    expect(root.querySelector('.replans summary')?.textContent).toContain('Plan changed once');
    expect(root.querySelector('.replans li')?.textContent).toBe('Racing ahead: "Step s3" skipped');
    expect(root.querySelector('.plan-done')).toBeNull();
  });

  it('says when the plan is complete and what needs another look', () => {
    const done: StudyPlanView = {
      ...base,
      steps: base.steps.map((s, i) => ({ ...s, status: i === 4 ? 'blocked' : 'completed' })),
      stepsCompleted: 4,
      complete: true,
      replans: [],
    };
    delete done.currentStepId;
    const root = render(done);
    expect(root.querySelectorAll('li.plan-step[aria-current]')).toHaveLength(0);
    expect(root.querySelector('li.status-blocked')?.textContent).toContain('Needs another look');
    expect(root.querySelector('.plan-done')?.textContent).toContain('Plan complete');
    expect(root.querySelector('[aria-live]')?.textContent).toBe('Plan complete: 4 of 5 steps done.');
    expect(root.querySelector('.replans')).toBeNull();
  });
});
