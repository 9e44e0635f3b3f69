// Names for the generated API types (docs/openapi.yaml → api.gen.ts).
import type { components } from './api.gen';

type S = components['schemas'];

// Cards and card states are tagged unions: the document gives each branch
// its `type` beside a `$ref`, which openapi-typescript leaves out, so the
// tag is added back here (the wire always carries it).
export type ConceptCard = S['ConceptCard'] & { type: 'CONCEPT' };
export type DrillCard = S['DrillCard'] & { type: 'DRILL' };
export type ExamCard = S['ExamCard'] & { type: 'EXAM' };
export type TutorCard = ConceptCard | DrillCard | ExamCard;
export type DrillCardState = S['DrillCardState'] & { type: 'DRILL' };
export type ExamCardState = S['ExamCardState'] & { type: 'EXAM' };
export type CardState = DrillCardState | ExamCardState;
export type TutorMessage = Omit<S['TutorMessage'], 'card' | 'cardState'> & {
  card?: TutorCard;
  cardState?: CardState;
};

/** Messages as the API sends them, with their cards' tags. */
export function tagged(messages: S['TutorMessage'][]): TutorMessage[] {
  return messages as TutorMessage[];
}
export type ClientEvent = S['ClientEvent'];
export type SnapshotLite = S['SnapshotLite'];
export type MasteryTier = S['MasteryTier'];
export type ExamTier = S['ExamTier'];
export type Mode = S['Mode'];
export type CourseSummary = S['CourseSummary'];
export type CourseDetail = S['CourseDetail'];
export type ThreadSummary = S['ThreadSummary'];
export type ThreadStateView = S['ThreadStateView'];
export type TurnResponse = S['TurnResponse'];
export type TurnDebug = S['TurnDebug'];
export type Problem = S['Problem'];
export type CourseUnit = S['CourseUnit'];
export type StudyPlanView = S['StudyPlanView'];
export type PlanStepView = S['PlanStepView'];
export type StudentProfile = S['StudentProfile'];
export type ExampleTheme = S['ExampleTheme'];
export type LanguageLevel = S['LanguageLevel'];
export type TutorLanguage = S['TutorLanguage'];
export type UnitLine = S['UnitLine'];
