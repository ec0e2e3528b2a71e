/*
 * What a provider says of a message's authenticity (SPF, DKIM, DMARC) and content (spam,
 * viruses), in one shape whatever the provider, and what the service does with it: kept in
 * `metadata.authentication`, turned into labels an agent can filter on, or the message dropped.
 * Pure functions.
 */
import { headerText } from './mime.js';

/** One check's result, lower-cased as providers write it (`pass`, `fail`, `softfail`, `gray`, `none`, ...). */
export type Verdict = string;

export interface Verdicts {
  spf?: Verdict;
  dkim?: Verdict;
  dmarc?: Verdict;
  spam?: Verdict;
  virus?: Verdict;
  /** SpamAssassin-style score, where the provider gives one. */
  spamScore?: number;
}

/** `metadata.authentication` of a received message: the provider's verdicts as they came. */
export interface Authentication extends Omit<Verdicts, 'spamScore'> {
  provider: 'sendgrid' | 'mailgun' | 'ses';
  spam_score?: number;
}

/** SpamAssassin's default threshold: a score from here is spam. */
export const SPAM_SCORE_THRESHOLD = 5;

const FAILED = new Set(['fail', 'failed', 'softfail', 'permerror', 'reject', 'quarantine']);
const failed = (verdict: Verdict | undefined) => verdict !== undefined && FAILED.has(verdict);

/**
 * Labels for a message and whether to store it at all: a virus verdict FAIL drops it; spam (a
 * FAIL verdict, or a score at the threshold) is labelled `spam`; mail whose sender is not
 * authenticated (DMARC fails; or, without a DMARC verdict, neither SPF nor DKIM passes while at
 * least one failed) is labelled `unauthenticated`.
 */
export function judge(verdicts: Verdicts): { store: boolean; labels: string[] } {
  if (failed(verdicts.virus)) return { store: false, labels: [] };
  const labels: string[] = [];
  const spamScored = verdicts.spamScore !== undefined && verdicts.spamScore >= SPAM_SCORE_THRESHOLD;
  if (failed(verdicts.spam) || verdicts.spam === 'yes' || spamScored) labels.push('spam');
  const unauthenticated =
    verdicts.dmarc !== undefined && verdicts.dmarc !== 'none' && verdicts.dmarc !== 'gray'
      ? failed(verdicts.dmarc)
      : verdicts.spf !== 'pass' && verdicts.dkim !== 'pass' && (failed(verdicts.spf) || failed(verdicts.dkim));
  if (unauthenticated) labels.push('unauthenticated');
  return { store: true, labels };
}

export function authenticationOf(provider: Authentication['provider'], verdicts: Verdicts): Authentication {
  const { spamScore, ...checks } = verdicts;
  return {
    provider,
    ...Object.fromEntries(Object.entries(checks).filter(([, value]) => value !== undefined)),
    ...(spamScore !== undefined && { spam_score: spamScore }),
  };
}

/** Longest verdict kept: the words are short (`pass`, `softfail`, `temperror`); a field may carry anything. */
const MAX_VERDICT_LENGTH = 64;

/**
 * A verdict as providers spell it (`PASS`, `Pass`, ` softfail `): lower-cased, trimmed, as header
 * text is cleaned (no NUL or lone surrogate reaches the stored metadata) and capped; undefined when empty.
 */
export function verdict(value: string | undefined | null): Verdict | undefined {
  const normalised = headerText(value ?? '')
    .toLowerCase()
    .slice(0, MAX_VERDICT_LENGTH)
    .toWellFormed();
  return normalised ? normalised : undefined;
}

/**
 * SendGrid's `dkim` field, e.g. `{@gmail.com : pass}` or `{@a.com : pass, @b.com : fail}`: pass
 * when any signature passed, else the first result; a bare word (`none`) is taken as it is.
 */
export function sendgridDkim(field: string | undefined): Verdict | undefined {
  const results = [...(field ?? '').matchAll(/:\s*([a-z]+)/gi)].map((match) => match[1]!.toLowerCase());
  if (results.length === 0) return /^\s*[a-z]+\s*$/i.test(field ?? '') ? verdict(field) : undefined;
  return results.includes('pass') ? 'pass' : results[0];
}

/** The first word of an SPF result header or field (`pass (spfCheck: ...)` → `pass`). */
export function firstWord(value: string | undefined): Verdict | undefined {
  return verdict(/^\s*([a-z]+)/i.exec(value ?? '')?.[1]);
}

/** A numeric score field, or undefined when absent or not a number. */
export function score(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const parsed = Number(value);
  return Number.isFinite(parsed) ? parsed : undefined;
}
