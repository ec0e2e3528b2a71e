import { ConflictError } from '@repo/errors';
import { isUniqueViolation } from '@repo/db';

/** Runs a write; when it breaks the unique index over `column`, answers 409 with `message` instead. */
export async function conflictOnDuplicate<T>(write: Promise<T>, column: string, message: string): Promise<T> {
  try {
    return await write;
  } catch (error) {
    if (isUniqueViolation(error, column)) throw new ConflictError(message);
    throw error;
  }
}
