/** Why a load failed: what the job's error_details carry. Pure. */

/** One thing wrong with a file: where (row 1-based among the data rows, column) and why. */
export interface LoadProblem {
  row: number | null;
  column: string | null;
  reason: string;
}

/** How many problems a failed load lists; `problemCount` says how many there were in all. */
export const PROBLEMS_LISTED = 10;

/**
 * A load refused for what the file holds or what the table allows (nothing was loaded): the
 * job fails with this message and these problems, and is not retried.
 */
export class LoadFailure extends Error {
  readonly problems: LoadProblem[];
  readonly problemCount: number;

  constructor(message: string, problems: LoadProblem[] = [], problemCount = problems.length) {
    super(storable(message));
    this.name = 'LoadFailure';
    this.problems = problems.slice(0, PROBLEMS_LISTED).map((problem) => ({
      ...problem,
      column: problem.column === null ? null : storable(problem.column),
      reason: storable(problem.reason),
    }));
    this.problemCount = problemCount;
  }
}

/**
 * Text of the file (a value, a key) quoted in a problem, as Postgres stores it in the job's
 * error_details: a NUL written out (jsonb refuses it, and the job's end failed until its retries
 * ran out), a lone surrogate as U+FFFD.
 */
function storable(text: string): string {
  return text.toWellFormed().replaceAll('\u0000', '\\u0000');
}

/** The failure for a file with `count` problems, of which `first` are the first few in file order. */
export function problemsFailure(first: LoadProblem[], count: number, what = 'values do not fit the table'): LoadFailure {
  const noun = count === 1 ? 'problem' : 'problems';
  return new LoadFailure(`The file has ${count} ${noun} (${what}); nothing was loaded`, first, count);
}
