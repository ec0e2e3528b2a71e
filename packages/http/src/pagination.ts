import { z } from 'zod';

/**
 * An integer query parameter. Query values arrive as strings: anything but digits is rejected
 * (no silent `Number('1e3')`, and `''` is not 0), with pydantic's error types, and the
 * parameter is documented as an integer with its bounds and default.
 */
export function queryInteger(options: { min: number; max?: number; default: number; description?: string }) {
  const { min, max = Number.MAX_SAFE_INTEGER } = options;
  const fail = (ctx: z.RefinementCtx, message: string, type: string) => {
    ctx.addIssue({ code: 'custom', message, params: { type } });
    return z.NEVER;
  };
  return z
    .string()
    .optional()
    .transform((raw, ctx) => {
      if (raw === undefined) return options.default;
      if (!/^-?\d{1,15}$/.test(raw)) return fail(ctx, 'Input should be a valid integer', 'int_parsing');
      const value = Number(raw);
      if (value < min) return fail(ctx, `Input should be greater than or equal to ${min}`, 'greater_than_equal');
      if (value > max) return fail(ctx, `Input should be less than or equal to ${max}`, 'less_than_equal');
      return value;
    })
    .meta({
      type: 'integer',
      minimum: min,
      ...(options.max !== undefined && { maximum: options.max }),
      default: options.default,
      ...(options.description && { description: options.description }),
    } as Record<string, unknown>);
}

/** `limit` and `offset` (or `skip`) query parameters, with a default and an upper bound for `limit`. */
export function paginationQuery<const OffsetName extends 'offset' | 'skip'>(options: {
  defaultLimit: number;
  maxLimit: number;
  offsetName: OffsetName;
}): Record<'limit' | OffsetName, ReturnType<typeof queryInteger>> {
  return {
    limit: queryInteger({ min: 1, max: options.maxLimit, default: options.defaultLimit, description: 'Page size' }),
    [options.offsetName]: queryInteger({ min: 0, default: 0, description: 'Number of items to skip' }),
  } as Record<'limit' | OffsetName, ReturnType<typeof queryInteger>>;
}
