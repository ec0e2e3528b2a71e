import { ConflictError } from '@repo/errors';
import { isUniqueViolation } from '@repo/db';

/** Runs a write; when it breaks the unique index over exactly `columns`, answers 409 with `message` instead. */
export async function conflictOnDuplicate<T>(write: Promise<T>, columns: string[], message: string): Promise<T> {
  try {
    return await write;
  } catch (error) {
    if (isUniqueViolation(error, columns)) throw new ConflictError(message);
    throw error;
  }
}
