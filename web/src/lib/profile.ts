// The profile form's state: what the student chose, as the form holds it,
// turned into the API's StudentProfile and back, and the API's problems
// put next to the field they name. The choices come from the API
// document's enums (api.gen.ts), so a value the API adds shows up here.
import { exampleThemeValues, languageLevelValues, tutorLanguageValues } from './api.gen';
import { ApiError, describe } from './problem';
import type { ExampleTheme, LanguageLevel, StudentProfile, TutorLanguage } from './types';

/** The form's fields, as the student edits them. */
export interface ProfileDraft {
  name: string;
  /** '' for "rather not say". */
  age: string;
  grade: string;
  languageLevel: LanguageLevel | '';
  exampleThemes: ExampleTheme[];
  language: TutorLanguage | '';
  aboutMe: string;
}

export type ProfileField = keyof ProfileDraft;

/** Errors by field; `form` for one that names no field of the form. */
export type ProfileErrors = Partial<Record<ProfileField | 'form', string>>;

// The limits the API states for each field (docs/openapi.yaml, PUT /me/profile).
export const NAME_CHARS = 40;
export const ABOUT_ME_CHARS = 300;
export const MAX_THEMES = 3;
export const AGES = range(8, 18);
export const GRADES = range(1, 12);

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

const levelWords: Partial<Record<LanguageLevel, { name: string; hint: string; order: number }>> = {
  simple: { name: 'Simple', hint: 'Short sentences, everyday words', order: 0 },
  standard: { name: 'Standard', hint: 'The usual way', order: 1 },
  advanced: { name: 'Advanced', hint: 'Proper maths words, less explaining', order: 2 },
};
const themeWords: Partial<Record<ExampleTheme, string>> = {
  sports: 'Sports',
  cooking: 'Cooking',
  games: 'Games',
  money: 'Money',
  music: 'Music',
  animals: 'Animals',
  nature: 'Nature',
  space: 'Space',
  art: 'Art',
  travel: 'Travel',
};
// Each language by its own name, as a student who reads it looks for it.
const languageWords: Partial<Record<TutorLanguage, string>> = { en: 'English', es: 'Español' };

const titled = (value: string) => value.charAt(0).toUpperCase() + value.slice(1).replace(/_/g, ' ');

export const languageLevels = [...languageLevelValues]
  .map((value) => ({ value, name: levelWords[value]?.name ?? titled(value), hint: levelWords[value]?.hint ?? '' }))
  .sort((a, b) => (levelWords[a.value]?.order ?? 9) - (levelWords[b.value]?.order ?? 9));
export const themes = exampleThemeValues.map((value) => ({ value, name: themeName(value) }));
export const languages = tutorLanguageValues.map((value) => ({ value, name: languageName(value) }));

export function languageName(language: TutorLanguage): string {
  return languageWords[language] ?? language;
}

export function themeName(theme: ExampleTheme): string {
  return themeWords[theme] ?? titled(theme);
}

/** Nothing saved yet: `{}` (or a 404) from GET /me/profile. */
export function isEmpty(profile: StudentProfile | null): boolean {
  if (!profile) return true;
  return Object.values(profile).every((v) => v === null || v === undefined || (Array.isArray(v) && v.length === 0));
}

export function draftOf(profile: StudentProfile | null): ProfileDraft {
  return {
    name: profile?.name ?? '',
    age: profile?.age != null ? String(profile.age) : '',
    grade: profile?.grade != null ? String(profile.grade) : '',
    languageLevel: profile?.languageLevel ?? '',
    exampleThemes: [...(profile?.exampleThemes ?? [])],
    language: profile?.language ?? '',
    aboutMe: profile?.aboutMe ?? '',
  };
}

/** The whole profile to PUT (the API clears what is left out). */
export function profileOf(draft: ProfileDraft): StudentProfile {
  const name = draft.name.trim();
  const aboutMe = draft.aboutMe.trim();
  return {
    name: name || null,
    age: draft.age ? Number(draft.age) : null,
    grade: draft.grade ? Number(draft.grade) : null,
    languageLevel: draft.languageLevel || null,
    exampleThemes: [...new Set(draft.exampleThemes)],
    language: draft.language || null,
    aboutMe: aboutMe || null,
  };
}

/** What the page can tell before asking the server (which has the last word). */
export function check(draft: ProfileDraft): ProfileErrors {
  const errors: ProfileErrors = {};
  const name = draft.name.trim();
  if ([...name].length > NAME_CHARS) errors.name = `Keep your name to ${NAME_CHARS} characters.`;
  else if (/[\n\r\t]/.test(name)) errors.name = 'Your name goes on one line.';
  if (new Set(draft.exampleThemes).size > MAX_THEMES) errors.exampleThemes = `Pick up to ${MAX_THEMES} themes.`;
  if ([...draft.aboutMe.trim()].length > ABOUT_ME_CHARS) {
    errors.aboutMe = `That's more than ${ABOUT_ME_CHARS} characters; make it a little shorter.`;
  }
  return errors;
}

const fields: readonly ProfileField[] = ['name', 'age', 'grade', 'languageLevel', 'exampleThemes', 'language', 'aboutMe'];

/**
 * The form field a problem's `field` names: `exampleThemes[1]` is the
 * themes, `student.name` (a new session's body) the name.
 */
export function fieldOf(field: string | undefined): ProfileField | null {
  const head = field?.replace(/^student\./, '').split(/[.[]/)[0];
  return fields.find((f) => f === head) ?? null;
}

/** A failed save as errors by field: next to the field the API names, or for the whole form. */
export function errorsOf(error: unknown): ProfileErrors {
  const message = describe(error);
  const field = error instanceof ApiError ? fieldOf(error.problem?.field) : null;
  return field ? { [field]: message } : { form: message };
}
