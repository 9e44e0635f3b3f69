// Mastery in a student's words. The mastery probability says how sure the
// tutor is that the student knows a unit, from their practice; a tier
// (bronze, silver, gold) is earned only by passing exam questions of that
// level, so a unit can be known well and still have no tier.
import type { MasteryTier } from './types';

/** Whole percent, never rounded up to 100 before it is certain. */
export function masteryPercent(probability: number): number {
  const p = Math.min(1, Math.max(0, probability));
  return p >= 1 ? 100 : Math.min(99, Math.floor(p * 100));
}

export function masteryWords(probability: number): string {
  if (probability >= 0.95) return 'Got it';
  if (probability >= 0.8) return 'Almost there';
  if (probability >= 0.5) return 'Getting there';
  if (probability >= 0.2) return 'Learning';
  return 'Just starting';
}

/** One line: what the next tier takes, or that there is none left. */
export function tierHint(tier: MasteryTier): string {
  switch (tier) {
    case 'none':
      return 'Tiers come from exam questions: pass a bronze one to earn bronze.';
    case 'bronze':
      return 'Pass a silver exam question to move up to silver.';
    case 'silver':
      return 'Pass a gold exam question to reach gold.';
    case 'gold':
      return 'Gold: you have mastered this topic.';
  }
}
